"""float16 tensors with a scalar operand (Note [Half products with a scalar] in
typedops/core/kernels/_pointwise.py): mul and div compute in float32, add, sub and the
comparisons convert the scalar to float16 first, as PyTorch does."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from typedops import ScalarType, Tensor, core
from typedops.tensor import CPU, wrapped_scalar

F16 = ScalarType.float16


def _from(values: list[float]) -> Tensor:
    """A float16 tensor of ``values`` (each rounded to float16)."""
    result = core.zeros([len(values)], dtype=F16)
    result.numpy()[...] = np.asarray(values, dtype=np.float16)
    return result


def test_a_product_with_a_large_scalar_is_computed_in_float32() -> None:
    zeros, ones = _from([0.0, -0.0]), _from([1.0, 2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's overflow in a cast is not a warning here either
        assert (zeros * 2**62).tolist() == [0.0, -0.0]  # was nan: 0 * float16(2**62), which is inf
        assert (ones * 2**62).tolist() == [math.inf, math.inf]
        assert (zeros / 1e-10).tolist() == [0.0, -0.0] and (ones / 1e-10).tolist() == [math.inf, math.inf]
        assert (ones / 2**62).tolist() == [0.0, 0.0]
    three = _from([3.0])
    assert (three * 0.1).tolist() == [0.300048828125]  # float16(3 * float32(0.1)), rounded once
    assert core.mul(three, core.full([], 0.1, dtype=ScalarType.float64)).tolist() == [0.300048828125]
    assert core.div(three, core.full([1], 10, dtype=ScalarType.int32)).tolist() == [0.300048828125]
    assert (three.mul_(wrapped_scalar(0.1, CPU)) is three) and three.tolist() == [0.300048828125]
    out = core.zeros([1], dtype=F16)
    assert core.div(_from([3.0]), wrapped_scalar(10.0, CPU), out=out) is out and out.tolist() == [0.300048828125]


def test_float16_operands_and_other_dtypes_compute_as_before() -> None:
    three = _from([3.0])
    assert (three * _from([0.1])).tolist() == [0.2998046875]  # float16 * float16: both rounded first
    assert (three + 0.1).tolist() == [3.099609375]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numpy warns of its cast of 70000 to float16
        assert (three - 70000).tolist() == [-math.inf]
    assert (core.full([1], 3.0) * 0.1).tolist() == [np.float32(3) * np.float32(0.1)]
    assert (core.full([1], 3.0, dtype=ScalarType.float64) / 10).tolist() == [0.3]


# -- against torch

_OPS: dict[str, tuple[Callable[[Any, Any], Any], Callable[[Any, Any], Any]]] = {
    "t + s": (lambda t, s: t + s, lambda t, s: t + s),
    "t - s": (lambda t, s: t - s, lambda t, s: t - s),
    "s - t": (lambda t, s: s - t, lambda t, s: s - t),
    "t * s": (lambda t, s: t * s, lambda t, s: t * s),
    "s * t": (lambda t, s: s * t, lambda t, s: s * t),
    "t / s": (lambda t, s: t / s, lambda t, s: t / s),
    "t == s": (lambda t, s: t == s, lambda t, s: t == s),
    "t > s": (lambda t, s: t > s, lambda t, s: t > s),
    "mul by a 0-dim float64": (
        lambda t, s: core.mul(t, core.full([], s, dtype=ScalarType.float64)),
        lambda t, s: t * _torch().tensor(s, dtype=_torch().float64),
    ),
    "div by a 0-dim float32": (
        lambda t, s: core.div(t, core.full([], s, dtype=ScalarType.float32)),
        lambda t, s: t / _torch().tensor(s, dtype=_torch().float32),
    ),
}

_SCALARS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True, width=64),
    st.floats(min_value=-1e6, max_value=1e6),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.integers(min_value=-100000, max_value=100000),
)
_HALVES = st.lists(st.floats(width=16, allow_nan=True, allow_infinity=True), min_size=1, max_size=6)


def _torch() -> Any:
    return pytest.importorskip("torch", reason="compares with PyTorch; needs the compat extra: make compat")


@pytest.mark.compat
@pytest.mark.parametrize("name", list(_OPS))
@given(values=_HALVES, scalar=_SCALARS)
@settings(max_examples=150, deadline=None)
def test_float16_with_a_scalar_is_what_torch_computes(name: str, values: list[float], scalar: float | int) -> None:
    torch = _torch()
    ours_fn, theirs_fn = _OPS[name]
    if name.startswith("div by"):
        assume(math.isfinite(scalar) and abs(scalar) < 3e38)  # full() refuses what float32 cannot hold
    theirs = theirs_fn(torch.tensor(np.asarray(values, dtype=np.float16)), scalar)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numpy's overflow warnings (PyTorch gives none)
        ours = ours_fn(_from(values), scalar)
    expected, got = theirs.numpy(), ours.numpy()
    assert got.dtype == expected.dtype
    assert np.array_equal(got, expected, equal_nan=True), (values, scalar, got, expected)
    if got.dtype != np.bool_:
        same = np.isnan(got) | (np.signbit(got) == np.signbit(expected))
        assert same.all(), (values, scalar, got, expected)
