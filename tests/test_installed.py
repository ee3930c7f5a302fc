"""The wheel as a user gets it: built from the checkout, installed (not editable) into a
fresh environment, and type-checked from a project folder outside the checkout.

Nothing is downloaded: the wheel is built with the test venv's setuptools (no build
isolation), installed with ``--no-index``, and the new environment reuses the test venv's
copies of typedops' dependencies (linked into its site-packages). The project folder
holds the corpus of tests/static/ with the files it imports (the demo library generated
from a user yaml, the tests' own ``@op``/``Library`` ops, and the stubs of both), so the
expectations there apply unchanged.

The module is skipped only where the build cannot run at all (no setuptools>=77, which
the dev extra installs, or no mypy); every check inside it is then unavailable.
"""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.static_checks import PYRIGHT_CORPUS_CONFIG, STATIC, Reports, disagreement, expected, run_mypy, run_pyright

ROOT = STATIC.parent.parent
CORPUS = sorted(p.name for p in STATIC.glob("*.py"))
# What the corpus imports besides typedops: the demo library generated from a user yaml.
PROJECT_FILES = ["tests/__init__.py", "tests/data/__init__.py", "tests/data/demo_kernels.py",
                 "tests/data/demo_ops.yaml", "tests/data/demo_generated", "tests/data/stubs", "tests/data/user_ops.py"]  # fmt: skip
DEPENDENCIES = ["numpy", "PyYAML", "typing_extensions"]
PACKAGES = ["typedops", "typedops_namespaces"]  # what pyproject's packages.find includes
# Corpus files that need no project stubs: checked again without them, as a project
# without its own ops sees typedops (the shipped typedops_namespaces, not a stub of it).
BARE = ["core_calls.py", "op_calls.py"]
_IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc")


@dataclass(frozen=True)
class Installed:
    python: Path  # the new environment's interpreter
    site: Path  # its site-packages, where the wheel was installed
    project: Path  # the project folder outside the checkout
    work: Path  # scratch space for the checkers' configs and caches


def _setuptools_builds_wheels() -> bool:
    try:
        major = int(importlib.metadata.version("setuptools").split(".")[0])
    except importlib.metadata.PackageNotFoundError:
        return False
    return major >= 77


def _run(*command: str | Path, cwd: Path | None = None) -> str:
    result = subprocess.run([str(c) for c in command], cwd=cwd, capture_output=True, text=True)
    assert result.returncode == 0, f"{' '.join(map(str, command))} failed:\n{result.stdout}\n{result.stderr}"
    return result.stdout


def _build_wheel(tmp: Path) -> Path:
    """The wheel of a copy of the checkout's package (the build writes into its source)."""
    found = sorted(p.parent.name for p in ROOT.glob("typedops*/__init__.py"))  # packages.find: typedops*
    assert found == sorted(PACKAGES), f"top-level packages {found}: update PACKAGES"
    source = tmp / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    for package in PACKAGES:
        shutil.copytree(ROOT / package, source / package, ignore=_IGNORE)
    _run(sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation", "--no-index",
         "--wheel-dir", tmp / "dist", source)  # fmt: skip
    (wheel,) = (tmp / "dist").glob("typedops-*.whl")
    return wheel


def _link_dependencies(site: Path) -> None:
    """The test venv's installed dependencies, linked into ``site`` (top-level entries only,
    so nothing else of the test venv -- its editable typedops above all -- is visible)."""
    for name in DEPENDENCIES:
        dist = importlib.metadata.distribution(name)
        for top in sorted({Path(str(f)).parts[0] for f in dist.files or []} - {"..", "__pycache__"}):
            target = Path(str(dist.locate_file(top)))
            if target.exists():
                (site / top).symlink_to(target, target_is_directory=target.is_dir())


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    if not _setuptools_builds_wheels():
        pytest.skip("building the wheel needs setuptools>=77 in this venv (the dev extra installs it)")
    pytest.importorskip("mypy")
    tmp = tmp_path_factory.mktemp("installed")
    wheel = _build_wheel(tmp)
    env = tmp / "env"
    _run(sys.executable, "-m", "venv", "--without-pip", env)
    python = env / "bin" / "python"
    site = Path(_run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])").strip())
    _link_dependencies(site)
    _run(sys.executable, "-m", "pip", "--python", python, "install", "--quiet", "--no-deps", "--no-index", wheel)
    project = tmp / "project"
    for name in PROJECT_FILES:
        copy = shutil.copytree if (ROOT / name).is_dir() else shutil.copy2
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        copy(ROOT / name, project / name)
    (project / "tests" / "static").mkdir()
    for name in CORPUS:
        shutil.copy2(STATIC / name, project / "tests" / "static" / name)
    (project / "bare").mkdir()
    for name in BARE:
        shutil.copy2(STATIC / name, project / "bare" / name)
    work = tmp / "work"
    work.mkdir()
    return Installed(python, site, project, work)


def test_the_wheel_ships_what_typing_needs(installed: Installed) -> None:
    package = installed.site / "typedops"
    for name in ["py.typed", "core/native_functions.yaml", "core/_generated/__init__.pyi",
                 "dispatch/_ops_typing.pyi", "tensor/_methods.pyi"]:  # fmt: skip
        assert (package / name).is_file(), f"the wheel lacks typedops/{name}"
    for name in ["__init__.py", "py.typed"]:  # the hook a project's stubs replace
        assert (installed.site / "typedops_namespaces" / name).is_file(), f"the wheel lacks typedops_namespaces/{name}"
    found = _run(installed.python, "-c", "import typedops; print(typedops.__file__)", cwd=installed.project)
    assert Path(found.strip()).resolve() == (package / "__init__.py").resolve()


def test_the_installed_generator_reproduces_the_demo_library(installed: Installed) -> None:
    # The generator reads the core yaml from the installed package; the demo library was
    # generated with the checkout's generator, so the two must agree. The console script,
    # as the README runs it: the kernels module is imported from the project's folder.
    command = ["codegen", "tests/data/demo_ops.yaml", "--out", "tests/data/demo_generated",
               "--namespace", "demo", "--kernels", "tests.data.demo_kernels", "--stubs", "tests/data/stubs"]  # fmt: skip
    _run(installed.python.parent / "typedops", *command, "--check", cwd=installed.project)


def test_the_installed_generator_extends_core_ops_from_its_yaml(installed: Installed) -> None:
    yaml = installed.work / "extend.yaml"
    yaml.write_text("- func: core::add.Tensor\n  dispatch:\n    PrivateUse1: mykernels.add\n")
    (installed.work / "mykernels.py").write_text(
        "from typedops import Scalar, Tensor\n\n"
        "def add(self: Tensor, other: Tensor, *, alpha: Scalar = 1) -> Tensor:\n    return self\n"
    )
    out = _run(installed.python, "-m", "typedops.cli", "codegen", yaml, "--out", installed.work / "extend",
               "--namespace", "mine", cwd=installed.work)  # fmt: skip
    assert "wrote" in out


def test_the_installed_stubgen_reproduces_the_stubs_of_the_tests_ops(installed: Installed) -> None:
    # The installed console script, run from the project: its modules import from there.
    typedops = installed.python.parent / "typedops"
    _run(typedops, "stubgen", "tests.data.user_ops", "--out", "tests/data/stubs", "--check", cwd=installed.project)


def test_the_installed_command_shows_a_saved_program(installed: Installed) -> None:
    # Saved by the installed package; shown by its console script in another process,
    # where the @op the program calls is not registered (show needs only the file).
    path = installed.work / "saved.program"
    script = (
        "import typedops\nfrom typedops import Tensor, core, op, tensor\n\n"
        "@op('installed::scale')\ndef scale(x: Tensor, k: float) -> Tensor:\n    return core.mul(x, k)\n\n"
        f"typedops.trace(lambda x: scale(x, 2.0).sum(), tensor([1.0, 2.0])).save({str(path)!r})\n"
        f"assert typedops.load({str(path)!r})(tensor([3.0, 4.0])).item() == 14.0\n"
    )
    _run(installed.python, "-c", script, cwd=installed.work)
    shown = _run(installed.python.parent / "typedops", "program", "show", path, cwd=installed.work)
    assert shown == (
        "program(x: Tensor(float32[2])):\n"
        "  %0: Tensor = installed::scale(x, 2.0)\n"
        "  %1: Tensor = core::sum(%0, dtype=None)\n"
        "  return %1\n"
    )


@pytest.fixture(scope="module")
def mypy_reports(installed: Installed) -> dict[Path, Reports]:
    files = [installed.project / "tests" / "static" / name for name in CORPUS]
    config = "[mypy]\nstrict = True\npython_version = 3.10\nshow_error_codes = True\nmypy_path = tests/data/stubs\n"
    work = installed.work / "mypy"
    work.mkdir()
    return run_mypy(files, cwd=installed.project, work=work, config=config, python=str(installed.python),
                    cache=installed.work / "mypy-cache")  # fmt: skip


@pytest.mark.parametrize("name", CORPUS)
def test_mypy_on_the_installed_wheel(name: str, installed: Installed, mypy_reports: dict[Path, Reports]) -> None:
    path = installed.project / "tests" / "static" / name
    problem = disagreement("mypy", path, expected(path, "mypy"), mypy_reports[path.resolve()])
    assert not problem, problem


@pytest.fixture(scope="module")
def pyright_reports(installed: Installed) -> dict[Path, Reports]:
    files = [installed.project / "tests" / "static" / name for name in CORPUS]
    project = installed.project
    config = {**PYRIGHT_CORPUS_CONFIG, "extraPaths": [str(project)], "stubPath": str(project / "tests" / "data" / "stubs")}
    work = installed.work / "pyright"
    work.mkdir()
    return run_pyright(files, cwd=project, work=work, config=config, python=str(installed.python))


@pytest.mark.parametrize("name", CORPUS)
def test_pyright_on_the_installed_wheel(name: str, installed: Installed, pyright_reports: dict[Path, Reports]) -> None:
    path = installed.project / "tests" / "static" / name
    problem = disagreement("pyright", path, expected(path, "pyright"), pyright_reports[path.resolve()])
    assert not problem, problem


@pytest.fixture(scope="module")
def bare_reports(installed: Installed) -> dict[tuple[str, Path], Reports]:
    folder = installed.project / "bare"
    files = [folder / name for name in BARE]
    work = installed.work / "bare"
    work.mkdir()
    config = "[mypy]\nstrict = True\npython_version = 3.10\nshow_error_codes = True\n"
    mypy = run_mypy(files, cwd=folder, work=work, config=config, python=str(installed.python),
                    cache=installed.work / "mypy-cache")  # shared: typedops is analysed once  # fmt: skip
    pyright = run_pyright(files, cwd=folder, work=work, config=PYRIGHT_CORPUS_CONFIG, python=str(installed.python))
    return {**{("mypy", p): r for p, r in mypy.items()}, **{("pyright", p): r for p, r in pyright.items()}}


@pytest.mark.parametrize("checker", ["mypy", "pyright"])
@pytest.mark.parametrize("name", BARE)
def test_without_project_stubs(name: str, checker: str, installed: Installed,
                               bare_reports: dict[tuple[str, Path], Reports]) -> None:  # fmt: skip
    path = installed.project / "bare" / name
    problem = disagreement(checker, path, expected(path, checker), bare_reports[checker, path.resolve()])
    assert not problem, problem


def test_the_environment_is_not_the_checkout(installed: Installed) -> None:
    # A guard for the guard: the checkout's package must not be importable there.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    result = subprocess.run([str(installed.python), "-c", "import tests.static_checks"],
                            cwd=installed.work, capture_output=True, text=True, env=env)  # fmt: skip
    assert result.returncode == 1 and "ModuleNotFoundError" in result.stderr


def test_the_editable_install_is_visible_to_checkers_from_another_folder(tmp_path: Path) -> None:
    # README, Type checking: `make` installs the checkout in setuptools' compat editable
    # mode (a .pth file), which mypy and pyright follow; the default mode's import hook is
    # invisible to them ("Cannot find implementation or library stub").
    import typedops

    if not Path(typedops.__file__).resolve().is_relative_to(ROOT):
        pytest.skip("typedops is not installed from this checkout")
    (tmp_path / "use.py").write_text("from typedops import Tensor, core\n\nx: Tensor = core.neg(core.zeros([1]))\n")
    # Finding the package is what is tested: skip analysing it (seconds), not resolving it.
    mypy = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--follow-imports=skip", "--no-incremental",
                           "use.py"], cwd=tmp_path, capture_output=True, text=True)  # fmt: skip
    assert mypy.returncode == 0, mypy.stdout
    pyright = subprocess.run([str(Path(sys.executable).parent / "pyright"), "--pythonpath", sys.executable, "use.py"],
                             cwd=tmp_path, capture_output=True, text=True)  # fmt: skip
    assert pyright.returncode == 0, pyright.stdout


def test_the_installed_command_runs_a_saved_program(installed: Installed) -> None:
    # Saved by the installed package in one process, run by its `typedops` script in others.
    script = (
        "import numpy as np\n"
        "import typedops\n"
        "from typedops import core, tensor\n"
        "def f(a, b):\n"
        "    values, indices = core.max(a, 0, True)\n"
        "    return core.sub(core.mul(a, b), b), values, indices\n"
        "typedops.trace(f, tensor([1, 2]), tensor([3, 4])).save('f.program')\n"
        "np.savez('inputs.npz', a=np.array([5, -1]), b=np.array([2, 3]))\n"
    )
    (installed.work / "save_program.py").write_text(script)
    _run(installed.python, "save_program.py", cwd=installed.work)
    command = installed.python.parent / "typedops"
    for flavor in ("dispatch", "static"):
        out = _run(command, "program", "run", "f.program", "--inputs", "inputs.npz", "--flavor", flavor,
                   cwd=installed.work)  # fmt: skip
        assert out == "output0: Tensor(int64[2]) [8, -6]\noutput1: Tensor(int64[1]) [5]\noutput2: Tensor(int64[1]) [0]\n"
    out = _run(command, "program", "run", "f.program", "--inputs", "inputs.npz", "--out", "outputs.npz", cwd=installed.work)
    assert out == "wrote 3 output(s) to outputs.npz\n"
    check = "import numpy as np; d = np.load('outputs.npz'); print([d[k].tolist() for k in d.files])"
    assert _run(installed.python, "-c", check, cwd=installed.work) == "[[8, -6], [5], [0]]\n"
