"""Op calls are checked by mypy: run mypy --strict on tests/static/ and compare messages.

Each line of a file in tests/static/ states what mypy must say about it in trailing
comments: ``# E: message  [code]`` for an error, ``# N: message`` for a note; lines
without such comments must produce nothing. The comparison is exact, line by line.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

STATIC = Path(__file__).parent / "static"
ROOT = STATIC.parent.parent
# Generated typing-only modules (typedops.ops.<ns>, Tensor methods), as in mypy.ini.
MYPY_PATH = f"{ROOT / 'stubs'}:{ROOT / 'tests' / 'data' / 'stubs'}"
_FIRST = re.compile(r"\s#\s*[EN]: ")
_EXPECTATION = re.compile(r"#\s*([EN]): (.*?)(?=\s+#\s*[EN]: |$)")
_REPORTED = re.compile(r"^(?P<file>[^:]+):(?P<line>\d+): (?P<kind>error|note): (?P<message>.*)$")


def _expected(path: Path) -> set[tuple[int, str, str]]:
    found = set()
    for number, line in enumerate(path.read_text().splitlines(), 1):
        start = _FIRST.search(line)
        if start is None:
            continue
        for kind, message in _EXPECTATION.findall(line[start.start() :].lstrip()):
            found.add((number, "error" if kind == "E" else "note", message.strip()))
    return found


def _reported(path: Path, tmp_path: Path) -> set[tuple[int, str, str]]:
    api = pytest.importorskip("mypy.api")
    config = tmp_path / "mypy.ini"
    config.write_text(
        f"[mypy]\nstrict = True\npython_version = 3.10\nshow_error_codes = True\nmypy_path = {MYPY_PATH}\n"
    )
    stdout, stderr, _ = api.run(
        ["--config-file", str(config), "--cache-dir", str(tmp_path / "cache"),
         "--hide-error-context", "--no-error-summary", "--no-pretty", str(path)]
    )
    assert not stderr, stderr
    reported = set()
    for line in stdout.splitlines():
        match = _REPORTED.match(line)
        assert match, f"unexpected mypy output line: {line}"
        if Path(match["file"]).resolve() == path.resolve():
            reported.add((int(match["line"]), match["kind"], match["message"].strip()))
    return reported


@pytest.mark.parametrize("path", sorted(STATIC.glob("*.py")), ids=lambda p: p.name)
def test_mypy_reports_exactly_the_expected_messages(path: Path, tmp_path: Path) -> None:
    expected = _expected(path)
    reported = _reported(path, tmp_path)
    missing = sorted(expected - reported)
    unexpected = sorted(reported - expected)
    assert not missing and not unexpected, (
        "mypy disagrees with the expectations:\n"
        + "".join(f"  missing    line {n}: {k}: {m}\n" for n, k, m in missing)
        + "".join(f"  unexpected line {n}: {k}: {m}\n" for n, k, m in unexpected)
    )
