"""Array rules (Note [Array rules] in typedops/core/kernels/_arrays.py): each rule computes,
on arrays, exactly what its CPU kernel computes on tensors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from typedops import Tensor, tensor
from typedops.core import kernels
from typedops.core.kernels import ArrayRuleDeclined, array_rule, finish_array
from typedops.vocabulary import ScalarType

_KERNELS: dict[str, Any] = {
    "core::matmul": kernels.matmul_cpu,
    "core::mm": kernels.mm_cpu,
    "core::add.Tensor": lambda a, b: kernels.add_cpu(a, b, alpha=1),
    "core::mul.Tensor": kernels.mul_cpu,
    "core::relu": kernels.relu_cpu,
    "core::neg": kernels.neg_cpu,
}


def _tensor(values: Any, dtype: ScalarType) -> Tensor:
    return tensor(np.asarray(values).tolist(), dtype=dtype)


@settings(max_examples=80, deadline=None)
@given(st.sampled_from(sorted(_KERNELS)), st.sampled_from([ScalarType.float32, ScalarType.float64]),
       st.integers(1, 5), st.integers(1, 5), st.integers(1, 5), st.booleans(), st.integers(0, 2**16))  # fmt: skip
def test_each_rule_computes_what_its_kernel_computes(name: str, dtype: ScalarType, n: int, m: int, k: int,
                                                     row: bool, seed: int) -> None:  # fmt: skip
    rng = np.random.default_rng(seed)
    rule = array_rule(name, dtype)
    assert rule is not None
    a = _tensor(rng.standard_normal((n, k)), dtype)
    if rule.operands == 1:
        operands = [a]
    elif name in ("core::matmul", "core::mm"):
        operands = [a, _tensor(rng.standard_normal((k, m)), dtype)]
    else:  # a row that broadcasts, or the same shape
        operands = [a, _tensor(rng.standard_normal(k if row else (n, k)), dtype)]
    expected = _KERNELS[name](*operands)
    arrays = [np.asarray(t.numpy()) for t in operands]
    got = rule.function(*arrays, *rule.extra)
    if rule.finish:
        got = finish_array(got)
    assert got.dtype == np.asarray(expected.numpy()).dtype and got.shape == tuple(expected.shape)
    assert got.tobytes() == np.asarray(expected.numpy()).tobytes() and got.flags.c_contiguous
    if rule.in_place is not None:
        target = arrays[0].copy()
        written = rule.in_place(target, *arrays[1:], *rule.extra)
        assert written is target and target.tobytes() == np.asarray(expected.numpy()).tobytes()


def test_the_rules_are_the_kernels_own_callables() -> None:
    from typedops.core.kernels import _pointwise, _reduce  # pyright: ignore[reportPrivateUsage]

    f32 = ScalarType.float32
    assert array_rule("core::add.Tensor", f32).function is _pointwise.ADD  # type: ignore[union-attr]
    assert array_rule("core::mul.Tensor", f32).function is _pointwise.MUL  # type: ignore[union-attr]
    assert array_rule("core::neg", f32).function is _pointwise.NEG  # type: ignore[union-attr]
    assert array_rule("core::relu", f32).function is _pointwise.relu_maximum()  # type: ignore[union-attr]
    assert array_rule("core::relu", f32).extra == (_pointwise.typed_zero(f32),)  # type: ignore[union-attr]
    assert _reduce.dot_function() is np.ndarray.dot


def test_matrix_products_decline_what_the_kernels_compute_otherwise() -> None:
    rule = array_rule("core::matmul", ScalarType.float32)
    assert rule is not None
    for a, b in [(np.ones(3, np.float32), np.ones((3, 2), np.float32)),
                 (np.ones((0, 3), np.float32), np.ones((3, 2), np.float32)),
                 (np.ones((2, 2, 3), np.float32), np.ones((3, 2), np.float32))]:  # fmt: skip
        with pytest.raises(ArrayRuleDeclined):
            rule.function(a, b)
    assert array_rule("core::matmul", ScalarType.int64) is None
    assert array_rule("core::exp", ScalarType.float32) is None


def test_finish_array_makes_what_fresh_makes() -> None:
    assert type(finish_array(np.float32(2.0))) is np.ndarray and finish_array(np.float32(2.0)).shape == ()
    assert finish_array(np.ones((2, 3), np.float32).T).flags.c_contiguous
    one = np.ones(4)
    assert finish_array(one) is one
