"""``typedops program show FILE`` (issue 16), in process; tests/test_installed.py runs it
from the installed wheel."""

from __future__ import annotations

from pathlib import Path

import pytest

from typedops import Library, core, tensor
from typedops.cli import main
from typedops.tracing import trace

LISTING = """\
program(x: Tensor(float32[2])):
  %0: Tensor = cli_show::twice(x, 2)
  %1: Tensor = core::add.Tensor(%0, tensor([2.0, 3.0], shape=[2], dtype=float32), alpha=1)
  return %1
"""


def test_show_prints_the_listing_without_the_ops_registered(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "p.program"
    with Library("cli_show", "DEF") as lib:
        twice = lib.define("twice(Tensor x, int n=2) -> Tensor")
        lib.impl("twice", lambda x, n: core.mul(x, n), "CompositeExplicitAutograd", check=False)
        trace(lambda x: core.add(twice(x), tensor([2.0, 3.0])), tensor([1.0, 2.0])).save(path)
    assert main(["program", "show", str(path)]) == 0  # cli_show::twice is gone: show needs only the file
    assert capsys.readouterr().out == LISTING


def test_show_names_what_is_wrong(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["program", "show", str(tmp_path / "missing.program")]) == 2
    assert capsys.readouterr().err == (
        f"typedops program: error: cannot read {(tmp_path / 'missing.program').as_posix()}: No such file or directory\n"
    )
    bad = tmp_path / "bad.program"
    bad.write_bytes(b"PK\x05\x06" + bytes(18))
    assert main(["program", "show", str(bad)]) == 2
    assert capsys.readouterr().err == (
        f"typedops program: error: {bad.as_posix()!r} is not a typedops program that can be loaded: "
        "the entry 'program.json' is missing\n"
    )
