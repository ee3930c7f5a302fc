"""typedops.trace against torch.jit.trace (``make compat``): what a traced program records
and how it replays, on the cases where torch's tracer has the behaviour."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import typedops.core  # noqa: F401 -- loads the core library: Tensor's operators
from typedops import Tensor, trace

pytestmark = pytest.mark.compat
torch = pytest.importorskip("torch", reason="compares with PyTorch; needs the compat extra: make compat")


def _ours(values: list[Any], dtype: Any) -> Tensor:
    return Tensor.from_numpy(np.array(values, dtype=dtype))


def test_detach_is_recorded_as_an_op_as_torchs_tracer_records_aten_detach() -> None:
    theirs = torch.jit.trace(lambda a: a.detach() * 2, torch.tensor([1.0, 2.0]))
    assert "aten::detach" in str(theirs.graph)
    ours = trace(lambda a: a.detach() * 2, _ours([1.0, 2.0], np.float32))
    assert "core::detach" in ours.ops()
    new = [10.0, 20.0]
    assert ours(_ours(new, np.float32)).tolist() == theirs(torch.tensor(new)).tolist()


@pytest.mark.parametrize(
    ("values", "ours_dtype", "theirs_dtype"),
    [([1, 2], np.int64, "int64"), ([True, False], np.bool_, "bool"), ([1.0, 2.0], np.float16, "float16")],
)
def test_a_python_number_promotes_in_the_program_as_in_torchs_traced_function(
    values: list[Any], ours_dtype: Any, theirs_dtype: str, tmp_path: Any
) -> None:
    import typedops

    def fn(a: Any) -> Any:
        return a * 2.5

    theirs = torch.jit.trace(fn, torch.tensor(values, dtype=getattr(torch, theirs_dtype)))
    expected = theirs(torch.tensor(values, dtype=getattr(torch, theirs_dtype)))
    program = trace(fn, _ours(values, ours_dtype))
    program.save(tmp_path / "scaled.program")
    runs = [program(_ours(values, ours_dtype))]
    runs += [typedops.load(tmp_path / "scaled.program", flavor=flavor).run(_ours(values, ours_dtype))
             for flavor in ("dispatch", "static")]  # fmt: skip
    for got in runs:
        assert got.dtype.name == str(expected.dtype).removeprefix("torch.")
        assert got.tolist() == expected.tolist()
