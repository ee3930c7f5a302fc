"""The program zoo (issue 16, write-up 004's test plan): each zoo function traced, run in
both flavors and compared with eager execution -- exactly for integer results, within a
float tolerance otherwise."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.data.program_zoo import EXACT, ZOO, inputs_for
from typedops import Tensor, trace
from typedops.programs import compile_program

ROOT = Path(__file__).resolve().parent.parent
# The zoo programs that Note [Lowered runs] does not apply to (a list argument, a fresh
# tensor constant): they keep the instruction loop.
NOT_LOWERED = frozenset({"attention", "integer_statistics", "lists", "statistics", "views_and_inplace"})


def _arrays(result: Any) -> list[Any]:
    values = result if isinstance(result, (tuple, list)) else (result,)
    return [np.asarray(v.numpy()) if isinstance(v, Tensor) else v for v in values]


def assert_matches(name: str, got: Any, expected: Any) -> None:
    assert type(got) is type(expected)
    got_arrays, expected_arrays = _arrays(got), _arrays(expected)
    assert len(got_arrays) == len(expected_arrays)
    for a, b in zip(got_arrays, expected_arrays):
        assert a.dtype == b.dtype and a.shape == b.shape
        if name in EXACT or a.dtype.kind in "biu":
            assert np.array_equal(a, b), (a, b)
        else:
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", sorted(ZOO))
@pytest.mark.parametrize("flavor", ["dispatch", "static"])
def test_a_zoo_program_runs_like_eager(name: str, flavor: str) -> None:
    fn = ZOO[name]
    program = trace(fn, *inputs_for(name, 0))
    compiled = compile_program(program, "static" if flavor == "static" else "dispatch")
    for seed in (1, 2):
        assert_matches(name, compiled.run(*inputs_for(name, seed)), fn(*inputs_for(name, seed)))


@pytest.mark.parametrize("name", sorted(ZOO))
@pytest.mark.parametrize("flavor", ["dispatch", "static"])
def test_a_straightened_zoo_program_gives_exactly_the_loops_results(name: str, flavor: str) -> None:
    # Note [Straight-line runs]: the same calls on the same values, so the same bits.
    program = trace(ZOO[name], *inputs_for(name, 0))
    looped = compile_program(program, "static" if flavor == "static" else "dispatch")
    straight = compile_program(program, "static" if flavor == "static" else "dispatch")
    lowered = straight.straighten()
    assert lowered == (name not in NOT_LOWERED), name
    for seed in (1, 2):
        got, expected = straight.run(*inputs_for(name, seed)), looped.run(*inputs_for(name, seed))
        assert type(got) is type(expected)
        for a, b in zip(_arrays(got), _arrays(expected), strict=True):
            assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
        assert_matches(name, got, ZOO[name](*inputs_for(name, seed)))


def test_the_zoo_covers_the_test_plan() -> None:
    ops = {name: set(trace(fn, *inputs_for(name, 0)).ops()) for name, fn in ZOO.items()}
    assert {"core::matmul", "core::relu"} <= ops["mlp"]
    assert {"core::rsqrt", "core::exp", "zoo::gelu"} <= ops["attention"]
    assert {"core::sum", "core::amax", "core::argmax", "core::max.dim"} <= ops["statistics"]
    assert {"core::select.int", "core::mul_.Tensor", "core::add_.Tensor", "core::expand"} <= ops["views_and_inplace"]
    assert {"core::cat", "core::stack"} <= ops["lists"]
    assert "core::max.dim" in ops["tuples"]
    assert "zoo::scale_shift" in ops["integer_statistics"]


_RUNNER = """
import sys
from pathlib import Path

import numpy as np

import tests.data.program_zoo  # noqa: F401 -- registers the zoo's @op ops, as an app would
import typedops
from typedops.programs import outputs_of, read_inputs, write_outputs

folder = Path(sys.argv[1])
for path in sorted(folder.glob("*.program")):
    for flavor in ("dispatch", "static"):
        loaded = typedops.load(path, flavor=flavor)
        inputs = read_inputs(loaded.program, path.with_suffix(".npz"))
        write_outputs(outputs_of(loaded.run(*inputs)), folder / f"{path.stem}.{flavor}.out.npz")
        loaded.straighten()  # Note [Straight-line runs]
        write_outputs(outputs_of(loaded.run(*inputs)), folder / f"{path.stem}.{flavor}.straight.out.npz")
"""


def test_zoo_programs_saved_and_loaded_in_a_fresh_process_run_like_eager(tmp_path: Path) -> None:
    for name, fn in ZOO.items():
        trace(fn, *inputs_for(name, 0)).save(tmp_path / f"{name}.program")
        np.savez(tmp_path / f"{name}.npz", *[np.asarray(t.numpy()) for t in inputs_for(name, 1)])
    result = subprocess.run([sys.executable, "-c", _RUNNER, str(tmp_path)], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    for name, fn in ZOO.items():
        expected = fn(*inputs_for(name, 1))
        expected_list = list(expected) if isinstance(expected, tuple) else [expected]
        for run in ("dispatch", "static", "dispatch.straight", "static.straight"):
            with np.load(tmp_path / f"{name}.{run}.out.npz") as archive:
                got = [Tensor.from_numpy(archive[f"output{i}"].copy()) for i in range(len(archive.files))]
            assert_matches(name, got, expected_list)
