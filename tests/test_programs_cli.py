"""``typedops program show`` and ``run``, and ``typedops codegen --ops-from`` (issue 16), in
process; tests/test_installed.py runs them from the installed wheel."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

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


def test_check_data_checks_the_crc_of_the_tensor_data(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Note [Which CRCs are checked]: without --check-data a bit flipped inside the
    # elements runs as a changed element.
    weights = tensor([2.0, 4.0])
    path = tmp_path / "w.program"
    trace(lambda a: core.mul(a, weights), tensor([1.0, 1.0])).save(path)
    data = bytearray(path.read_bytes())
    data[data.index(np.array([2.0, 4.0], "<f4").tobytes())] ^= 1
    path.write_bytes(bytes(data))
    np.savez(tmp_path / "in.npz", a=np.array([1.0, 1.0], np.float32))
    assert main(["program", "run", str(path), "--inputs", str(tmp_path / "in.npz")]) == 0
    assert capsys.readouterr().out != "output0: Tensor(float32[2]) [2.0, 4.0]\n"
    damaged = (f"typedops program: error: {path.as_posix()!r} is not a typedops program that can be loaded: "
               "the entry 'tensors.bin' fails its CRC check (the file is damaged)\n")  # fmt: skip
    assert main(["program", "run", str(path), "--inputs", str(tmp_path / "in.npz"), "--check-data"]) == 2
    assert capsys.readouterr().err == damaged
    assert main(["program", "show", str(path), "--check-data"]) == 2
    assert capsys.readouterr().err == damaged


def test_codegen_builds_only_what_the_programs_need(saved: Path, tmp_path: Path) -> None:
    out = tmp_path / "build"
    yaml = ROOT / "typedops" / "core" / "native_functions.yaml"
    assert main(["codegen", str(yaml), "--out", str(out), "--namespace", "core", "--ops-from", str(saved)]) == 0
    names = sorted(line[2:].partition("(")[0] for line in (out / "__init__.py").read_text().splitlines()
                   if line.startswith("# core::"))  # fmt: skip
    assert names == ["core::add.Scalar", "core::add.Tensor", "core::max.dim", "core::mul.Tensor"]  # add.Scalar calls add.Tensor
    assert f"--ops-from {saved.as_posix()}" in (out / "__init__.py").read_text().replace("\\\n#     ", "")


_MODULE = """\
from typedops import Library, core

lib = Library("cli_import", "DEF")
lib.define("triple(Tensor x) -> Tensor")
lib.impl("triple", lambda x: core.mul(x, 3), "CompositeExplicitAutograd", check=False)
"""


def test_run_imports_the_modules_that_register_the_programs_ops(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path, inputs = tmp_path / "t.program", tmp_path / "in.npz"
    with Library("cli_import", "DEF") as lib:  # the program is traced against the op, which then goes away
        triple = lib.define("triple(Tensor x) -> Tensor")
        lib.impl("triple", lambda x: core.mul(x, 3), "CompositeExplicitAutograd", check=False)
        trace(lambda x: core.add(triple(x), 1.0), tensor([1.0, 2.0])).save(path)
    np.savez(inputs, x=np.array([2.0, -1.0], np.float32))
    run = ["program", "run", str(path), "--inputs", str(inputs)]
    assert main(run) == 2
    assert "the program calls cli_import::triple, which is not registered" in capsys.readouterr().err
    assert main([*run, "--import", "no_such_module_of_ops"]) == 2
    assert capsys.readouterr().err == (
        "typedops program: error: cannot import module 'no_such_module_of_ops' (--import): "
        "ModuleNotFoundError: No module named 'no_such_module_of_ops'\n"
    )
    (tmp_path / "cli_import_ops.py").write_text(_MODULE)
    (tmp_path / "cli_import_more.py").write_text("import cli_import_ops\nLOADED = True\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        assert main([*run, "--import", "cli_import_more", "--import", "cli_import_ops"]) == 0
        assert capsys.readouterr().out == "output0: Tensor(float32[2]) [7.0, -2.0]\n"
    finally:
        ops = sys.modules.pop("cli_import_ops", None)
        sys.modules.pop("cli_import_more", None)
        if ops is not None:
            ops.lib.remove()


def test_codegen_compiles_each_program_once(saved: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--ops-from loads each program (which compiles it) and runs what it loaded."""
    from typedops.programs import CompiledProgram

    made: list[object] = []
    init = CompiledProgram.__init__

    def counting(self: CompiledProgram, *args: Any, **kwargs: Any) -> None:
        made.append(self)
        init(self, *args, **kwargs)

    monkeypatch.setattr(CompiledProgram, "__init__", counting)
    yaml = ROOT / "typedops" / "core" / "native_functions.yaml"
    out = tmp_path / "build"
    assert main(["codegen", str(yaml), "--out", str(out), "--namespace", "core", "--ops-from", str(saved), str(saved)]) == 0
    assert len(made) == 2
