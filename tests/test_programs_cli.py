"""``typedops program show`` and ``run``, and ``typedops codegen --ops-from`` (issue 16), in
process; tests/test_installed.py runs them from the installed wheel."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from typedops import Library, Tensor, core, tensor, trace
from typedops.cli import main

ROOT = Path(__file__).resolve().parent.parent
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


@pytest.fixture
def saved(tmp_path: Path) -> Path:
    def f(a: Tensor, b: Tensor) -> tuple[Tensor, Tensor]:
        return core.add(core.mul(a, b), 3), core.max(a, 0)[1]

    path = tmp_path / "f.program"
    trace(f, tensor([1.0, 2.0]), tensor([3.0, 4.0])).save(path)
    return path


def test_run_prints_the_outputs(saved: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    np.savez(tmp_path / "in.npz", a=np.array([1.0, 5.0], np.float32), b=np.array([2.0, 0.5], np.float32))
    assert main(["program", "run", str(saved), "--inputs", str(tmp_path / "in.npz"), "--flavor", "static"]) == 0
    assert capsys.readouterr().out == "output0: Tensor(float32[2]) [5.0, 5.5]\noutput1: Tensor(int64[]) 1\n"


def test_run_refuses_inputs_that_do_not_fit(saved: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    np.savez(tmp_path / "in.npz", a=np.array([1.0, 5.0], np.float32), c=np.array([2.0]))
    assert main(["program", "run", str(saved), "--inputs", str(tmp_path / "in.npz")]) == 2
    assert capsys.readouterr().err == (
        f"typedops program: error: the inputs {tmp_path / 'in.npz'} do not fit the program: it takes the tensor "
        "inputs a, b, the file has a, c; name the arrays after the inputs (numpy.savez(path, x=...)) or give them "
        "in order (numpy.savez(path, a, b))\n"
    )
    (tmp_path / "bad.npz").write_bytes(b"not a zip")
    assert main(["program", "run", str(saved), "--inputs", str(tmp_path / "bad.npz")]) == 2
    assert capsys.readouterr().err.startswith(f"typedops program: error: cannot read the inputs {tmp_path / 'bad.npz'}: ")
    assert main(["program", "run", str(tmp_path / "none.program"), "--inputs", str(tmp_path / "bad.npz")]) == 2
    assert "No such file or directory" in capsys.readouterr().err


def test_codegen_builds_only_what_the_programs_need(saved: Path, tmp_path: Path) -> None:
    out = tmp_path / "build"
    yaml = ROOT / "typedops" / "core" / "native_functions.yaml"
    assert main(["codegen", str(yaml), "--out", str(out), "--namespace", "core", "--ops-from", str(saved)]) == 0
    names = sorted(line[2:].partition("(")[0] for line in (out / "__init__.py").read_text().splitlines()
                   if line.startswith("# core::"))  # fmt: skip
    assert names == ["core::add.Scalar", "core::add.Tensor", "core::max.dim", "core::mul.Tensor"]  # add.Scalar calls add.Tensor
    assert f"--ops-from {saved.as_posix()}" in (out / "__init__.py").read_text().replace("\\\n#     ", "")
