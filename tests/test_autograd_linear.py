"""linear_map, conj and real: numpy computations under recorded nodes, differentiable to any order."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from typedops import ScalarType, core, tensor
from typedops.autograd import conj, gradcheck, gradgradcheck, linear_map, no_grad, real

F64, C128 = ScalarType.float64, ScalarType.complex128


@settings(max_examples=40, deadline=None)
@given(
    n_in=st.integers(1, 5),
    n_out=st.integers(1, 5),
    entries=st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4), st.floats(-2, 2)), max_size=12),
    seed=st.integers(0, 2**16),
)
def test_a_linear_map_is_its_matrix_and_its_backward_the_transpose(
    n_in: int, n_out: int, entries: list[tuple[int, int, float]], seed: int
) -> None:
    rows = np.array([r % n_out for r, _, _ in entries], dtype=np.int64)
    cols = np.array([c % n_in for _, c, _ in entries], dtype=np.int64)
    weights = np.array([w for _, _, w in entries], dtype=np.float64)
    matrix = np.zeros((n_out, n_in))
    np.add.at(matrix, (rows, cols), weights)
    values = np.random.default_rng(seed).uniform(-1, 1, n_in)
    x = tensor(values, dtype=F64, requires_grad=True)
    out = linear_map(x, rows, cols, weights, (n_out,))
    np.testing.assert_allclose(out.detach().numpy(), matrix @ values, atol=1e-12)
    v = np.random.default_rng(seed + 1).uniform(-1, 1, n_out)
    out.backward(tensor(v, dtype=F64))
    assert x.grad is not None
    np.testing.assert_allclose(x.grad.numpy(), matrix.T @ v, atol=1e-12)
    assert gradgradcheck(lambda a: linear_map(a, rows, cols, weights, (n_out,)) ** 2, (x,))


def test_nothing_is_recorded_under_no_grad_or_without_requires_grad() -> None:
    x = tensor([1.0, 2.0], dtype=F64, requires_grad=True)
    index = np.arange(2)
    with no_grad():
        assert not linear_map(x, index, index, None, (2,)).requires_grad
    assert not linear_map(x.detach(), index, index, None, (2,)).requires_grad
    assert linear_map(x, index, index, None, (2,)).grad_fn.name() == "LinearMapBackward"


def test_conj_and_real_are_differentiable() -> None:
    z = tensor([1 + 2j, -0.5 + 1j], dtype=C128, requires_grad=True)
    assert conj(z).grad_fn.name() == "ConjBackward0" and conj(z).tolist() == [1 - 2j, -0.5 - 1j]
    plain = tensor([1.0], dtype=F64)
    assert conj(plain) is plain  # a real tensor is its own conjugate
    assert gradcheck(lambda a: conj(a) * a * a, (z,)) and gradgradcheck(lambda a: conj(a) * a * a, (z,))
    assert gradcheck(lambda a: core.exp(real(a * a, F64)), (z,))
    assert gradgradcheck(lambda a: core.exp(real(a * a, F64)), (z,))
