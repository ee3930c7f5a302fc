"""Expectations in tests/static/ and the type checkers' reports, compared line by line.

Each line of a file in tests/static/ states in trailing comments what each checker must
report on it; a line without a comment for a checker must get nothing from it:

- mypy: ``# E: message  [code]`` (an error), ``# N: message`` (a note);
- pyright: ``# P: message  [rule]`` (an error: the first line of pyright's message),
  ``# PI: message`` (information, e.g. from ``reveal_type``).

Used by tests/test_static_typing.py (the checkout) and tests/test_installed.py (the
installed wheel, from a folder outside the checkout).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

__all__ = ["STATIC", "expected", "run_mypy", "run_pyright", "disagreement", "Reports", "PYRIGHT_CORPUS_CONFIG"]

STATIC = Path(__file__).parent / "static"
# A report: (line, kind, message); kinds are "error", "note" (mypy), "information" (pyright).
Reports = set[tuple[int, str, str]]

_MARKERS = {"mypy": {"E": "error", "N": "note"}, "pyright": {"P": "error", "PI": "information"}}
_FIRST = re.compile(r"\s#\s*(?:E|N|P|PI): ")
_EXPECTATION = re.compile(r"#\s*(E|N|P|PI): (.*?)(?=\s+#\s*(?:E|N|P|PI): |$)")
_MYPY_LINE = re.compile(r"^(?P<file>[^:]+):(?P<line>\d+): (?P<kind>error|note): (?P<message>.*)$")


def expected(path: Path, checker: str) -> Reports:
    """What ``checker`` ("mypy" or "pyright") must report on ``path``."""
    markers = _MARKERS[checker]
    found = set()
    for number, line in enumerate(path.read_text().splitlines(), 1):
        start = _FIRST.search(line)
        if start is None:
            continue
        for marker, message in _EXPECTATION.findall(line[start.start() :].lstrip()):
            if marker in markers:
                found.add((number, markers[marker], message.strip()))
    return found


def run_mypy(
    files: list[Path], *, cwd: Path, work: Path, config: str, python: str | None = None, cache: Path | None = None
) -> dict[Path, Reports]:
    """mypy on ``files``, run from ``cwd`` with the config text ``config`` (written, with
    the cache unless ``cache`` names another, into ``work``): the reports per file.
    ``python`` is the interpreter whose installed packages mypy reads (default: the one
    running the tests)."""
    (work / "mypy.ini").write_text(config)
    cache = cache or work / "cache"
    command = [sys.executable, "-m", "mypy", "--config-file", str(work / "mypy.ini"), "--cache-dir", str(cache),
               "--hide-error-context", "--no-error-summary", "--no-pretty", "--show-error-codes"]  # fmt: skip
    if python is not None:
        command += ["--python-executable", python]
    result = subprocess.run([*command, *map(str, files)], cwd=cwd, capture_output=True, text=True)
    assert result.returncode in (0, 1) and not result.stderr, result.stderr or result.stdout
    reports: dict[Path, Reports] = {path.resolve(): set() for path in files}
    for line in result.stdout.splitlines():
        match = _MYPY_LINE.match(line)
        assert match, f"unexpected mypy output line: {line}"
        path = (cwd / match["file"]).resolve()
        if path in reports:
            reports[path].add((int(match["line"]), match["kind"], match["message"].strip()))
    return reports


# The corpus is lines of calls whose results are often unused: pyright's strict mode,
# without the two rules that would flag exactly that.
PYRIGHT_CORPUS_CONFIG: dict[str, object] = {
    "typeCheckingMode": "strict",
    "pythonVersion": "3.10",
    "reportUnusedExpression": False,
    "reportUnusedVariable": False,
}


def run_pyright(
    files: list[Path], *, cwd: Path, work: Path, config: dict[str, object], python: str | None = None
) -> dict[Path, Reports]:
    """pyright on ``files``, run from ``cwd`` with ``config`` (a pyrightconfig.json written
    into ``work``; relative paths in it are relative to ``work``). ``python`` is the
    interpreter whose installed packages pyright reads (default: the one running the tests)."""
    (work / "pyrightconfig.json").write_text(json.dumps(config))
    pyright = Path(sys.executable).parent / "pyright"
    command = [str(pyright), "--outputjson", "-p", str(work / "pyrightconfig.json"),
               "--pythonpath", python or sys.executable, *map(str, files)]  # fmt: skip
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    assert result.returncode in (0, 1), result.stderr or result.stdout
    reports: dict[Path, Reports] = {path.resolve(): set() for path in files}
    for diagnostic in json.loads(result.stdout)["generalDiagnostics"]:
        path = Path(diagnostic["file"]).resolve()
        if path not in reports:
            continue
        message = diagnostic["message"].splitlines()[0].strip()
        if "rule" in diagnostic:
            message += f"  [{diagnostic['rule']}]"
        reports[path].add((diagnostic["range"]["start"]["line"] + 1, diagnostic["severity"], message))
    return reports


def disagreement(checker: str, path: Path, expect: Reports, reported: Reports) -> str:
    """An empty string when ``reported`` is ``expect``; otherwise what differs."""
    missing, unexpected = sorted(expect - reported), sorted(reported - expect)
    if not missing and not unexpected:
        return ""
    return (
        f"{checker} disagrees with the expectations in {path.name}:\n"
        + "".join(f"  missing    line {n}: {k}: {m}\n" for n, k, m in missing)
        + "".join(f"  unexpected line {n}: {k}: {m}\n" for n, k, m in unexpected)
    )
