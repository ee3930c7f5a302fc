"""Regenerating the core library after a kernel is renamed (Note [Regenerating the core
library] in typedops/codegen/_bootstrap.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import typedops
from typedops.codegen._bootstrap import core_kernels_alone

PACKAGE = Path(typedops.__file__).resolve().parent


def test_make_codegen_regenerates_after_a_kernel_is_renamed(tmp_path: Path) -> None:
    # A copy of the package whose kernel threshold_backward_cpu is renamed in the kernels
    # and the yaml, while its generated library still names the old kernel.
    copy = tmp_path / "typedops"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    for path in [*sorted((copy / "core" / "kernels").glob("*.py")), copy / "core" / "native_functions.yaml"]:
        path.write_text(path.read_text().replace("threshold_backward_cpu", "threshold_bwd_cpu"))
    stale = (copy / "core" / "_generated" / "__init__.py").read_text()
    assert "threshold_backward_cpu" in stale and "threshold_bwd_cpu" not in stale
    env = {**os.environ, "PYTHONPATH": str(tmp_path), "PYTHONDONTWRITEBYTECODE": "1"}
    command = [sys.executable, "-m", "typedops.cli", "codegen", "typedops/core/native_functions.yaml",
               "--out", "typedops/core/_generated", "--namespace", "core", "--bundled"]  # fmt: skip
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    fresh = (copy / "core" / "_generated" / "__init__.py").read_text()
    assert "threshold_bwd_cpu" in fresh and "threshold_backward_cpu" not in fresh
    check = "import typedops; from typedops import core, tensor; print(typedops.__file__, core.threshold_backward(tensor([2.0, -1.0]), tensor([1.0, -1.0]), 0.0).tolist())"  # noqa: E501
    ran = subprocess.run([sys.executable, "-c", check], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.split() == [str(copy / "__init__.py"), "[2.0,", "-0.0]"]


def test_a_process_with_the_core_library_keeps_it() -> None:
    from typedops import core

    before = sys.modules["typedops.core"]
    with core_kernels_alone("typedops.core.kernels"):
        assert sys.modules["typedops.core"] is before
    assert sys.modules["typedops.core"] is before is core


def test_the_core_library_imported_after_generation_has_its_kernels(tmp_path: Path) -> None:
    # In a fresh process: generate the bundled core library (kernels imported under the
    # bare package; nothing written), then import typedops.core: its kernels are its attribute.
    script = (
        "from pathlib import Path\n"
        "from typedops.codegen import generate\n"
        "from typedops.codegen._generate import DEFAULT_CORE_YAML, PACKAGE\n"
        f"generate(DEFAULT_CORE_YAML, Path({str(tmp_path / 'out')!r}), namespace='core', bundled=PACKAGE)\n"
        "import typedops.core\n"
        "print(typedops.core.kernels.__name__, typedops.core.relu(typedops.tensor([-1.0, 2.0])).tolist())\n"
    )
    ran = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.split() == ["typedops.core.kernels", "[0.0,", "2.0]"]
