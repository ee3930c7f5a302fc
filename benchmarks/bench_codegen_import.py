"""Import time of generated op libraries (issue 6), each in a fresh interpreter.

- the generated library (pre-built schema objects, typed API, methods) vs the same ops registered from
  schema strings (parsed, kernels' signatures checked) at import: >= 3x faster;
- a selective build of a few ops vs the full library: >= 5x faster (10 ops of the core yaml);
- ``import typedops`` vs ``import numpy``: <= 1.3x.

Library costs are shown net of ``import typedops`` plus the kernels module (both variants
pay that). Uses the core yaml typedops/core/native_functions.yaml (``--demo``: the demo yaml
tests/data/demo_ops.yaml), generated into a temporary directory under namespace
``benchcore``: importing ``typedops.core.kernels`` imports ``typedops.core``, which has
already claimed ``core`` (the base cost includes it, so both variants are measured net).
The strings variant is what a user would write by hand: ``Library.define`` with schema
strings and ``Library.impl`` with its default signature check. It registers only; the
generated library also binds its typed API and Tensor methods, so the ratio understates it.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from benchmarks._harness import Report, Timing, samples

ROOT = Path(__file__).resolve().parent.parent
CORE = ROOT / "typedops" / "core" / "native_functions.yaml"
DEMO = ROOT / "tests" / "data" / "demo_ops.yaml"


def _time_import(code: str, path: Path, repeat: int = 7) -> Timing:
    """Wall times of fresh interpreters running ``code``."""
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, env={"PYTHONPATH": f"{path}:{ROOT}"})
        runs.append(time.perf_counter() - start)
    return samples(runs)


def _time_import_after(setup: str, module: str, path: Path, repeat: int = 9) -> Timing:
    """Times to import ``module`` in a fresh interpreter that has already run ``setup``:
    timed inside the interpreter, so start-up noise does not swamp a few milliseconds."""
    code = (
        f"import time\n{setup}\nstart = time.perf_counter()\nimport {module}\n"
        "print(time.perf_counter() - start)\n"
    )
    runs = []
    for _ in range(repeat):
        result = subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, capture_output=True, text=True,
                                env={"PYTHONPATH": f"{path}:{ROOT}"})  # fmt: skip
        runs.append(float(result.stdout))
    return samples(runs)


def _strings_module(entries: Sequence[object], namespace: str) -> str:
    from typedops.codegen._model import OpEntry

    lines = ["import typedops", "from typedops import Library"]
    modules: dict[str, str] = {}
    body = [f"LIB = Library({namespace!r}, 'DEF')"]
    for entry in entries:
        assert isinstance(entry, OpEntry)
        schema = str(entry.schema).split("::", 1)[1]
        body.append(f"h = LIB.define({schema!r})")
        for kernel in entry.kernels:
            alias = modules.setdefault(kernel.ref.module, f"_m{len(modules)}")
            keyed = ", with_keys=True" if kernel.with_keys else ""
            body.append(f"LIB.impl(h, {alias}.{kernel.ref.attribute}, {kernel.key.name!r}{keyed})")
    lines += [f"import {m} as {a}" for m, a in modules.items()]
    return "\n".join(lines + body) + "\n"


def run() -> Report:
    from typedops.codegen import generate, write_files
    from typedops.codegen._model import Options
    from typedops.codegen._validate import load_entries

    yaml_path, namespace, kernels = CORE, "benchcore", "typedops.core.kernels"
    if not CORE.exists() or "--demo" in sys.argv:
        yaml_path, namespace, kernels = DEMO, "benchdemo", "tests.data.demo_kernels"
    report = Report(
        title=f"importing generated op libraries ({yaml_path.name}), fresh interpreter",
        unit="ms",
        baseline="generated library (net)",
        target="strings >= 3x generated; full >= 5x selective(10); import typedops <= 1.3x import numpy",
    )
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        # A copy without the derivatives.yaml beside the core's: its autograd kernels are
        # the core namespace's; this measures importing registration, API and methods.
        copied = out / yaml_path.name
        copied.write_text(yaml_path.read_text())
        yaml_path = copied
        write_files(generate(yaml_path, out / "gen_full", namespace=namespace, kernels=kernels, stubs=out / "stubs"))
        options = Options(namespace, kernels, yaml_path.name, "")
        entries = [e for e in load_entries(yaml_path, options, CORE) if e.defines]
        (out / "by_strings.py").write_text(_strings_module(entries, namespace))
        chosen = out / "ops.yaml"
        chosen.write_text("".join(f"- {e.schema.full_name}\n" for e in entries[:10]))
        write_files(generate(yaml_path, out / "gen_sel", namespace=namespace, kernels=kernels, ops_list=chosen, stubs=out / "stubs"))
        setup = f"import typedops, {kernels}"
        full = _time_import_after(setup, "gen_full", out)
        strings = _time_import_after(setup, "by_strings", out)
        selective = _time_import_after(setup, "gen_sel", out)
    report.add("generated library (net)", full, f"{len(entries)} ops")
    report.add("schema strings at import (net)", strings, "target >= 3x")
    report.add(f"selective build, {min(10, len(entries))} ops (net)", selective, "full should be >= 5x this")
    python = _time_import("pass", ROOT).median
    report.add("import typedops (net of python)", _time_import("import typedops", ROOT).shifted(-python))
    report.add("import numpy (net of python)", _time_import("import numpy", ROOT).shifted(-python), "typedops <= 1.3x this")
    return report


if __name__ == "__main__":
    print(run().render())
