"""Op calls are checked statically: mypy --strict on tests/static/ against the checkout,
and pyright (strict) likewise, compared line by line with the expectations in the files
(see tests/static_checks.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.static_checks import PYRIGHT_CORPUS_CONFIG, STATIC, Reports, disagreement, expected, run_mypy, run_pyright

ROOT = STATIC.parent.parent
FILES = sorted(STATIC.glob("*.py"))
# The generated typing-only module of the demo library (typedops.ops.demo, its methods).
MYPY_CONFIG = (
    "[mypy]\nstrict = True\npython_version = 3.10\nshow_error_codes = True\n"
    f"mypy_path = {ROOT / 'tests' / 'data' / 'stubs'}\n"
)


@pytest.fixture(scope="module")
def mypy_reports(tmp_path_factory: pytest.TempPathFactory) -> dict[Path, Reports]:
    pytest.importorskip("mypy")
    return run_mypy(FILES, cwd=ROOT, work=tmp_path_factory.mktemp("mypy"), config=MYPY_CONFIG)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_mypy_reports_exactly_the_expected_messages(path: Path, mypy_reports: dict[Path, Reports]) -> None:
    problem = disagreement("mypy", path, expected(path, "mypy"), mypy_reports[path.resolve()])
    assert not problem, problem


@pytest.fixture(scope="module")
def pyright_reports(tmp_path_factory: pytest.TempPathFactory) -> dict[Path, Reports]:
    config = {**PYRIGHT_CORPUS_CONFIG, "extraPaths": [str(ROOT)], "stubPath": str(ROOT / "tests" / "data" / "stubs")}
    return run_pyright(FILES, cwd=ROOT, work=tmp_path_factory.mktemp("pyright"), config=config)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_pyright_reports_exactly_the_expected_messages(path: Path, pyright_reports: dict[Path, Reports]) -> None:
    problem = disagreement("pyright", path, expected(path, "pyright"), pyright_reports[path.resolve()])
    assert not problem, problem
