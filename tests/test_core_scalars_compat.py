"""The .Scalar overloads (typedops/core/kernels/_scalars.py) against torch: a Python number as a
tensor operand of sub, div, the comparisons, the in-place arithmetic and where (make compat)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import typedops
from typedops import core

pytestmark = pytest.mark.compat
torch = pytest.importorskip("torch", reason="compares with PyTorch; needs the compat extra: make compat")

_DTYPES = ("bool", "int64", "int32", "float32", "float64")
_PYTHON_NUMBERS = st.one_of(
    st.booleans(), st.integers(-5, 5), st.floats(-4, 4, allow_nan=False).map(lambda v: round(v, 2)),
    st.sampled_from((1j, 0.5 - 2j)),
)
# numpy's real scalars, which torch takes as the Python numbers they hold (Note [Numbers that
# are not Python's] in typedops/boxing/_ivalue.py); its complex ones torch takes as their
# real part, with a warning, and they are left out.
_NUMPY_NUMBERS = st.one_of(
    st.booleans().map(np.bool_), st.integers(-5, 5).map(np.int64), st.integers(-5, 5).map(np.int32),
    st.floats(-4, 4, allow_nan=False).map(lambda v: np.float32(round(v, 2))),
    st.floats(-4, 4, allow_nan=False).map(lambda v: np.float64(round(v, 2))),
)
_NUMBERS = st.one_of(_PYTHON_NUMBERS, _NUMPY_NUMBERS)
_VALUES = st.lists(st.integers(-3, 3), min_size=1, max_size=4)

_FUNCTIONS = ("add", "sub", "mul", "div", "eq", "ne", "lt", "le", "gt", "ge")
_INPLACE = ("add_", "sub_", "mul_", "div_")


def _pair(values: list[int], dtype: str) -> tuple[typedops.Tensor, Any]:
    theirs = torch.tensor(values).to(getattr(torch, dtype))
    return typedops.tensor(theirs.tolist(), dtype=typedops.ScalarType[dtype]), theirs


def _same(ours: Any, theirs: Any) -> None:
    if isinstance(theirs, Exception):
        assert isinstance(ours, typedops.TypedopsError), (ours, theirs)
        assert isinstance(ours, type(theirs)), (ours, theirs)
        return
    assert not isinstance(ours, Exception), (ours, theirs)
    assert ours.dtype.name == str(theirs.dtype).removeprefix("torch.")
    assert ours.tolist() == pytest.approx(theirs.tolist(), rel=1e-6, abs=1e-6, nan_ok=True)


def _run(call: Any) -> Any:
    try:
        return call()
    except Exception as error:  # noqa: BLE001 -- compared with torch's outcome
        return error


@settings(max_examples=150, deadline=None)
@given(name=st.sampled_from(_FUNCTIONS), dtype=st.sampled_from(_DTYPES), values=_VALUES, number=_NUMBERS,
       form=st.sampled_from(("function", "method", "ops")))  # fmt: skip
def test_a_number_as_other_works_as_in_torch(name: str, dtype: str, values: list[int], number: Any, form: str) -> None:
    ours_x, theirs_x = _pair(values, dtype)
    if form == "function":
        ours = _run(lambda: getattr(core, name)(ours_x, number))
    elif form == "method":
        ours = _run(lambda: getattr(ours_x, name)(number))
    else:
        ours = _run(lambda: getattr(typedops.ops.core, name)(ours_x, number))
    _same(ours, _run(lambda: getattr(torch, name)(theirs_x, number)))


@settings(max_examples=100, deadline=None)
@given(name=st.sampled_from(_INPLACE), dtype=st.sampled_from(_DTYPES), values=_VALUES, number=_NUMBERS)
def test_in_place_with_a_number_works_as_in_torch(name: str, dtype: str, values: list[int], number: Any) -> None:
    ours_x, theirs_x = _pair(values, dtype)
    ours = _run(lambda: getattr(ours_x, name)(number))
    theirs = _run(lambda: getattr(theirs_x, name)(number))
    _same(ours, theirs)
    if not isinstance(theirs, Exception):
        assert ours is ours_x
        _same(ours_x, theirs_x)


@settings(max_examples=100, deadline=None)
@given(dtype=st.sampled_from(_DTYPES), values=_VALUES, a=_NUMBERS, b=_NUMBERS,
       where=st.sampled_from(("self", "other", "both", "method")))  # fmt: skip
def test_where_with_numbers_works_as_in_torch(dtype: str, values: list[int], a: Any, b: Any, where: str) -> None:
    ours_x, theirs_x = _pair(values, dtype)
    ours_c, theirs_c = core.gt(ours_x, 0), theirs_x > 0
    if where == "self":
        ours, theirs = _run(lambda: core.where(ours_c, a, ours_x)), _run(lambda: torch.where(theirs_c, a, theirs_x))
    elif where == "other":
        ours, theirs = _run(lambda: core.where(ours_c, ours_x, b)), _run(lambda: torch.where(theirs_c, theirs_x, b))
    elif where == "both":
        ours, theirs = _run(lambda: core.where(ours_c, a, b)), _run(lambda: torch.where(theirs_c, a, b))
    else:
        ours, theirs = _run(lambda: ours_x.where(ours_c, b)), _run(lambda: theirs_x.where(theirs_c, b))
    _same(ours, theirs)


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(("add", "sub", "mul", "div")), values=_VALUES, number=_NUMBERS.filter(lambda v: isinstance(v, int | float) and not isinstance(v, bool) and v != 0))
def test_gradients_through_a_number_operand_equal_torchs(name: str, values: list[int], number: Any) -> None:
    floats = [float(v) for v in values]
    ours_x = typedops.tensor(floats, requires_grad=True)
    theirs_x = torch.tensor(floats, requires_grad=True)
    core.sum(getattr(ours_x, name)(number)).backward()
    getattr(theirs_x, name)(number).sum().backward()
    assert ours_x.grad is not None
    assert ours_x.grad.tolist() == pytest.approx(theirs_x.grad.tolist())


def test_gradient_through_where_with_a_number_equals_torchs() -> None:
    ours_x = typedops.tensor([-1.0, 2.0, 3.0], requires_grad=True)
    theirs_x = torch.tensor([-1.0, 2.0, 3.0], requires_grad=True)
    core.sum(core.where(core.gt(ours_x, 0), ours_x, 0.0)).backward()
    torch.where(theirs_x > 0, theirs_x, 0.0).sum().backward()
    assert ours_x.grad is not None
    assert ours_x.grad.tolist() == theirs_x.grad.tolist()


_SELF_FUNCTIONS = ("add", "sub", "mul", "div", "floor_divide", "eq", "lt", "maximum")


@settings(max_examples=150, deadline=None)
@given(name=st.sampled_from(_SELF_FUNCTIONS), dtype=st.sampled_from(_DTYPES), values=_VALUES, number=_NUMBERS)
def test_a_number_as_self_works_where_torch_takes_one(name: str, dtype: str, values: list[int], number: Any) -> None:
    # Note [Numbers as self]: add, sub, mul, div and floor_divide take a number as self, as
    # torch's Python functions do (a wrapped number: the tensor's dtype wins); the others
    # refuse it, as torch's do.
    # (a complex number over a zero is nan+infj on both sides, which approx cannot compare)
    assume(not (isinstance(number, complex) and name == "div" and 0 in values))
    ours_x, theirs_x = _pair(values, dtype)
    _same(_run(lambda: getattr(core, name)(number, ours_x)), _run(lambda: getattr(torch, name)(number, theirs_x)))


_OUT_FUNCTIONS = ("add", "sub", "mul", "div")


@settings(max_examples=150, deadline=None)
@given(name=st.sampled_from(_OUT_FUNCTIONS), dtype=st.sampled_from(_DTYPES), values=_VALUES, number=_NUMBERS,
       side=st.sampled_from(("self", "other", "other by name")), out_dtype=st.sampled_from(_DTYPES))  # fmt: skip
def test_a_number_beside_out_works_as_in_torch(
    name: str, dtype: str, values: list[int], number: Any, side: str, out_dtype: str
) -> None:
    # Note [Numbers as self]: a number in either tensor position of these functions, with
    # out= (there is no .Scalar_out overload: the number is wrapped for .out).
    assume(not (isinstance(number, complex) and name == "div" and 0 in values))
    ours_x, theirs_x = _pair(values, dtype)
    ours_out, theirs_out = _pair([0] * len(values), out_dtype)
    if side == "self":
        ours = _run(lambda: getattr(core, name)(number, ours_x, out=ours_out))
        theirs = _run(lambda: getattr(torch, name)(number, theirs_x, out=theirs_out))
    elif side == "other":
        ours = _run(lambda: getattr(core, name)(ours_x, number, out=ours_out))
        theirs = _run(lambda: getattr(torch, name)(theirs_x, number, out=theirs_out))
    else:
        ours = _run(lambda: getattr(core, name)(ours_x, other=number, out=ours_out))
        theirs = _run(lambda: getattr(torch, name)(theirs_x, other=number, out=theirs_out))
    _same(ours, theirs)
    if not isinstance(theirs, Exception):
        assert ours is ours_out


@settings(max_examples=100, deadline=None)
@given(name=st.sampled_from(_OUT_FUNCTIONS + ("floor_divide",)), a=_NUMBERS, b=_NUMBERS,
       out_dtype=st.sampled_from((None, *_DTYPES)))  # fmt: skip
def test_two_numbers_work_as_in_torch(name: str, a: Any, b: Any, out_dtype: str | None) -> None:
    # Note [Numbers as self]: both wrapped, the first on the CPU: torch.add(1, 2) is tensor(3)
    assume(not (name in ("div", "floor_divide") and b == 0))
    if out_dtype is None:
        ours = _run(lambda: getattr(core, name)(a, b))
        theirs = _run(lambda: getattr(torch, name)(a, b))
    else:
        ours_out = typedops.tensor(0, dtype=typedops.ScalarType[out_dtype])
        theirs_out = torch.tensor(0, dtype=getattr(torch, out_dtype))
        ours = _run(lambda: getattr(core, name)(a, b, out=ours_out))
        theirs = _run(lambda: getattr(torch, name)(a, b, out=theirs_out))
    _same(ours, theirs)
