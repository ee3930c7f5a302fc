"""Op calls are checked statically: mypy --strict on tests/static/ against the checkout,
and pyright (strict) likewise, compared line by line with the expectations in the files
(see tests/static_checks.py). And the package itself stays pyright-strict throughout."""

from __future__ import annotations

import re
import tokenize
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


# The package passes pyright's strict mode as it passes mypy --strict: no module opts out
# with a file-level comment (`# pyright: standard`, `basic`, a rule switched off), and
# every per-line suppression names its rules and gives its reason after ` -- `.
_PYRIGHT_DIRECTIVE = re.compile(r"#\s*pyright:\s*(?P<rest>.*)")
_REASONED_IGNORE = re.compile(r"ignore\[[A-Za-z]+(, [A-Za-z]+)*\] -- \S")


def _pyright_comment_problems(roots: list[Path]) -> list[str]:
    problems: list[str] = []
    for path in sorted(p for root in roots for p in root.rglob("*") if p.suffix in (".py", ".pyi")):
        with tokenize.open(path) as source:  # comments only: generated source in strings is not ours
            comments = [t for t in tokenize.generate_tokens(source.readline) if t.type == tokenize.COMMENT]
        for token in comments:
            found = _PYRIGHT_DIRECTIVE.match(token.string)
            if found is not None and not _REASONED_IGNORE.match(found["rest"]):
                where = f"{path.relative_to(roots[0].parent).as_posix()}:{token.start[0]}"
                problems.append(f"{where}: {token.string}")
    return problems


def test_the_package_is_pyright_strict_and_every_suppression_says_why() -> None:
    assert _pyright_comment_problems([ROOT / "typedops", ROOT / "typedops_namespaces"]) == []


def test_the_suppression_checker_sees_opt_outs_and_bare_ignores(tmp_path: Path) -> None:
    package = tmp_path / "typedops"
    package.mkdir()
    (package / "m.py").write_text(
        "# pyright: standard\n"
        "# pyright: reportUnknownMemberType=false\n"
        "x = 1  # pyright: ignore\n"
        "y = 1  # pyright: ignore[reportUnknownVariableType]\n"
        "z = 1  # pyright: ignore[reportUnknownVariableType] -- a reason\n"
        "s = '# pyright: standard'\n"
    )
    (package / "m.pyi").write_text("def f() -> int: ...  # pyright: ignore[reportGeneralTypeIssues,reportX]\n")
    assert _pyright_comment_problems([package]) == [
        "typedops/m.py:1: # pyright: standard",
        "typedops/m.py:2: # pyright: reportUnknownMemberType=false",
        "typedops/m.py:3: # pyright: ignore",
        "typedops/m.py:4: # pyright: ignore[reportUnknownVariableType]",
        "typedops/m.pyi:1: # pyright: ignore[reportGeneralTypeIssues,reportX]",
    ]
