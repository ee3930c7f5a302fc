"""PyTorch's own native_functions.yaml, as torch 2.13 ships it, generates with
``--schemas-only``, imports, and its stubs pass ``mypy --strict`` (issue 11; ``make compat``).

Generation and import run in a child process (the ~2,600 ops stay out of this one, and its
peak memory is its own), and mypy in another; both have time limits, so the test is
bounded. Their times and memory are printed for docs/codegen.md, never asserted.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Final

import pytest

from tests.corpus import native_functions_yaml

pytestmark = pytest.mark.compat

pytest.importorskip("torch", reason="generates PyTorch's own yaml; needs the compat extra: make compat")

ROOT: Final = Path(__file__).resolve().parent.parent
NATIVE_FUNCTION_COUNT: Final = 2584
LIMIT_SECONDS: Final = 900

_CHILD: Final = textwrap.dedent("""\
    import json, sys, time
    from pathlib import Path
    from typedops.codegen import generate, write_files

    def peak_mb():  # this process's high-water mark (ru_maxrss would count the parent's, before exec)
        with open("/proc/self/status") as status:
            return next(int(l.split()[1]) for l in status if l.startswith("VmHWM:")) / 1024

    yaml, out = Path(sys.argv[1]), Path(sys.argv[2])
    rss_before = peak_mb()
    start = time.perf_counter()
    files = generate(yaml, out / "aten_ops", namespace="aten", stubs=out / "stubs", schemas_only=True)
    write_files(files)
    generated = time.perf_counter()
    rss_generated = peak_mb()
    sys.path.insert(0, str(out))
    import aten_ops
    imported = time.perf_counter()
    import typedops
    from typedops.dispatch import dispatcher
    print(json.dumps({
        "generate_s": generated - start,
        "import_s": imported - generated,
        "peak_rss_before_mb": rss_before,
        "peak_rss_after_generate_mb": rss_generated,
        "peak_rss_after_import_mb": peak_mb(),
        "ops": sum(1 for h in dispatcher.all_ops() if h.schema.namespace == "aten"),
        "functions": len(aten_ops.__all__),
        "sizes": {str(p.relative_to(out)): len(t) for p, t in files.items()},
        "where_method": typedops.Tensor.where is aten_ops._method_where,
    }))
""")


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, object]]:
    yaml = native_functions_yaml()
    assert yaml is not None, "torch is installed but torchgen's native_functions.yaml is missing"
    out = tmp_path_factory.mktemp("aten")
    child = subprocess.run(
        [sys.executable, "-c", _CHILD, str(yaml), str(out)],
        capture_output=True, text=True, timeout=LIMIT_SECONDS, cwd=ROOT, check=False,
    )  # fmt: skip
    assert child.returncode == 0, child.stderr[-4000:]
    figures: dict[str, object] = json.loads(child.stdout.splitlines()[-1])
    print(f"\nPyTorch's native_functions.yaml: {figures}")
    return out, figures


def test_every_op_of_pytorchs_yaml_generates_and_registers(generated: tuple[Path, dict[str, object]]) -> None:
    _, figures = generated
    assert figures["ops"] == NATIVE_FUNCTION_COUNT
    assert figures["where_method"] is True  # where.self and where.ScalarOther: self moved
    assert isinstance(figures["functions"], int) and figures["functions"] > 1000


def test_the_stubs_of_pytorchs_yaml_pass_mypy_strict(generated: tuple[Path, dict[str, object]]) -> None:
    out, _ = generated
    config = out / "mypy.ini"
    config.write_text(f"[mypy]\nstrict = True\nmypy_path = {out / 'stubs'}\n")
    checked = [str(out / "stubs" / "typedops_namespaces.pyi"), str(out / "aten_ops" / "__init__.pyi")]
    start = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(config), "--no-incremental", *checked],
        capture_output=True, text=True, timeout=LIMIT_SECONDS, cwd=ROOT, check=False,
    )  # fmt: skip
    print(f"\nmypy --strict on the two stubs: {time.perf_counter() - start:.1f} s")
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert result.stdout.startswith("Success: no issues found in 2 source files")
