"""Element-wise results' strides against torch (make compat): unary, binary and scalar ops
on permuted, channels-last, sliced and broadcast operands give torch's layout and values
(Note [Element-wise result strides] in typedops/tensor/_strides.py), so do resized out=
tensors; their meta kernels give the same strides, and the gradients of such leaves
torch's layout (Note [Gradient layout contract] in typedops/autograd/_engine.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from typedops import FakeTensorMode, MemoryFormat, Tensor, core

pytestmark = pytest.mark.compat
torch = pytest.importorskip("torch", reason="compares with PyTorch; needs the compat extra: make compat")

Pair = tuple[Tensor, Any]


@st.composite
def _layouts(draw: st.DrawFn, shape: tuple[int, ...]) -> Pair:
    """The same values in both libraries, laid out alike: a permutation of a row-major
    tensor, maybe sliced with step 2 in its last dim, maybe with another stride for one
    size-1 dim (strides that do not move any element)."""
    order = draw(st.permutations(range(len(shape))))
    step = draw(st.sampled_from([1, 2])) if shape and shape[-1] > 0 else 1
    sizes = [shape[d] * (step if d == len(shape) - 1 else 1) for d in order]
    values = np.random.default_rng(draw(st.integers(0, 2**16))).standard_normal(int(np.prod(sizes)))
    values = values.astype(np.float32)
    inverse = [order.index(d) for d in range(len(shape))]
    ours = Tensor.from_numpy(values.copy()).view(sizes).permute(inverse)
    theirs = torch.from_numpy(values.copy()).view(sizes).permute(inverse)
    if step == 2:
        ours, theirs = core.slice(ours, -1, 0, None, 2), theirs[..., ::2]
    ones = [d for d, n in enumerate(shape) if n == 1]
    restride: bool = draw(st.booleans())
    if ones and restride:
        strides = list(ours.stride())
        strides[draw(st.sampled_from(ones))] = draw(st.sampled_from([1, 5]))
        ours = ours.as_strided(list(shape), strides, ours.storage_offset())
        theirs = theirs.as_strided(shape, strides, theirs.storage_offset())
    assert ours.stride() == theirs.stride()
    return ours, theirs


@st.composite
def _operands(draw: st.DrawFn, smallest: int = 0) -> tuple[Pair, Pair]:
    """Two operands that broadcast: the second's shape a suffix of the first's with some
    dims 1, in either order; sizes from ``smallest`` to 3."""
    shape = tuple(draw(st.lists(st.integers(smallest, 3), min_size=0, max_size=4)))
    size = draw(st.integers(0, len(shape)))
    other = tuple(1 if draw(st.booleans()) else n for n in shape[len(shape) - size:])
    first, second = draw(_layouts(shape)), draw(_layouts(other))
    return (second, first) if draw(st.booleans()) else (first, second)


_BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b, "div": lambda a, b: a / b,
    "add alpha": lambda a, b: a.add(b, alpha=2), "maximum": lambda a, b: a.maximum(b),
    "eq": lambda a, b: a == b, "lt": lambda a, b: a < b,
    "where": lambda a, b: core.where(a > 0, a, b) if isinstance(a, Tensor) else torch.where(a > 0, a, b),
}  # fmt: skip
_UNARY: dict[str, Callable[[Any], Any]] = {
    "exp": lambda a: a.exp(), "relu": lambda a: a.relu(), "neg": lambda a: -a, "abs": lambda a: abs(a),
    "sigmoid": lambda a: a.sigmoid(), "tanh": lambda a: a.tanh(), "pow": lambda a: a**2,
    "mul 2": lambda a: a * 2, "add 1.5": lambda a: a + 1.5, "sub 1": lambda a: a - 1, "div 4": lambda a: a / 4,
    "rsub": lambda a: 1 - a, "gt 0": lambda a: a > 0, "eq 0": lambda a: a == 0,
}  # fmt: skip


def _same(ours: Tensor, theirs: Any, tolerance: float = 1e-6, *, size_one_strides: bool = True) -> None:
    assert ours.shape == tuple(theirs.shape)
    if size_one_strides:
        assert ours.stride() == theirs.stride()
    else:
        assert [s for n, s in zip(ours.shape, ours.stride()) if n != 1] == [
            s for n, s in zip(ours.shape, theirs.stride()) if n != 1
        ]
    np.testing.assert_allclose(ours.numpy(), theirs.detach().numpy(), rtol=tolerance, atol=tolerance)


@settings(max_examples=150, deadline=None)
@given(operands=_operands(), name=st.sampled_from(sorted(_BINARY)))
def test_binary_results_have_torchs_strides(operands: tuple[Pair, Pair], name: str) -> None:
    (a, ta), (b, tb) = operands
    op = _BINARY[name]
    _same(op(a, b), op(ta, tb))
    with FakeTensorMode() as fake:  # the Meta kernels give the same strides
        assert op(fake.from_tensor(a), fake.from_tensor(b)).stride() == op(ta, tb).stride()


@settings(max_examples=150, deadline=None)
@given(data=st.data(), name=st.sampled_from(sorted(_UNARY)))
def test_unary_and_scalar_results_have_torchs_strides(data: st.DataObject, name: str) -> None:
    shape = tuple(data.draw(st.lists(st.integers(0, 3), min_size=0, max_size=4)))
    a, ta = data.draw(_layouts(shape))
    op = _UNARY[name]
    _same(op(a), op(ta))
    with FakeTensorMode() as fake:
        assert op(fake.from_tensor(a)).stride() == op(ta).stride()


_OUTS: dict[str, tuple[Callable[..., Any], Callable[..., Any]]] = {
    "add": (core.add, torch.add), "mul": (core.mul, torch.mul), "div": (core.div, torch.div),
}  # fmt: skip


@settings(max_examples=80, deadline=None)
@given(operands=_operands(), name=st.sampled_from(sorted(_OUTS)), unary=st.booleans())
def test_a_resized_out_takes_torchs_layout(operands: tuple[Pair, Pair], name: str, unary: bool) -> None:
    # An out= tensor of another shape is resized and restrided as the out-of-place result.
    (a, ta), (b, tb) = operands
    out, their_out = core.empty([0]), torch.empty(0)
    if unary:
        core.exp(a, out=out)
        torch.exp(ta, out=their_out)
    else:
        ours, theirs = _OUTS[name]
        ours(a, b, out=out)
        theirs(ta, tb, out=their_out)
    _same(out, their_out)


def test_the_channels_last_cases_of_the_issue() -> None:
    x = core.randn([2, 3, 4, 5]).contiguous(memory_format=MemoryFormat.channels_last)
    tx = torch.from_numpy(x.numpy()).as_strided((2, 3, 4, 5), x.stride())
    ops: list[Callable[[Any], Any]] = [lambda t: t + t, lambda t: t * 2, lambda t: t.exp(), lambda t: t.relu()]
    for op in ops:
        _same(op(x), op(tx))
        assert op(x).is_contiguous(memory_format=MemoryFormat.channels_last)


@settings(max_examples=60, deadline=None)
@given(operands=_operands(1), name=st.sampled_from(["add", "mul", "div", "where", "exp", "relu", "mul 2", "pow"]))
def test_gradients_of_permuted_leaves_have_torchs_strides(operands: tuple[Pair, Pair], name: str) -> None:
    # A leaf's .grad takes the leaf's strides when it is non-overlapping and dense, else
    # is contiguous, whatever layout the gradient computed in. (Not empty leaves, whose
    # gradients' layouts follow the exact backward formulas.)
    (a, ta), (b, tb) = operands
    a, b = a.detach().requires_grad_(), b.detach().requires_grad_()
    ta, tb = ta.detach().requires_grad_(), tb.detach().requires_grad_()
    if name in _BINARY:
        ours, theirs = _BINARY[name](a, b), _BINARY[name](ta, tb)
    else:
        ours, theirs = _UNARY[name](a), _UNARY[name](ta)
    ours.sum().backward()
    theirs.sum().backward()
    for leaf, their_leaf in ((a, ta), (b, tb)):
        if their_leaf.grad is None:
            assert leaf.grad is None
            continue
        assert leaf.grad is not None
        # Float32 gradients summed in other orders; the strides of size-1 dims come from
        # the reductions of broadcast gradients (sum_to_size), whose layouts differ.
        _same(leaf.grad, their_leaf.grad, 1e-4, size_one_strides=False)
