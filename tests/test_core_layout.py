"""Element-wise results in PyTorch's layout (Note [Element-wise results in torch's layout]
in typedops/core/kernels/_common.py): the kernels' strides, memory and values, their
Meta twins, and the in-place and out= forms, which keep their tensors' layouts. The
strides themselves are checked against torch in test_core_layout_compat.py."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, cast

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from typedops import MemoryFormat, ScalarType, Tensor, core, ops
from typedops.tensor import elementwise_strides

CL = MemoryFormat.channels_last

_OPS: dict[str, Callable[[Tensor, Tensor], Tensor]] = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b, "div": lambda a, b: a / b,
    "add alpha": lambda a, b: core.add(a, b, alpha=2), "maximum": lambda a, b: core.maximum(a, b),
    "le": lambda a, b: a <= b, "where": lambda a, b: core.where(a > 0, a, b), "exp": lambda a, b: a.exp(),
    "relu": lambda a, b: a.relu(), "neg": lambda a, b: -a, "abs": lambda a, b: abs(a), "pow": lambda a, b: a**2,
    "mul 2": lambda a, b: a * 2, "add 0.5": lambda a, b: a + 0.5, "rsub": lambda a, b: 1 - a,
    "gt 0": lambda a, b: a > 0, "sqrt": lambda a, b: a.sqrt(),
    "threshold_backward": lambda a, b: ops.core.threshold_backward.default(a, b, 0),
    "floor_divide 3": lambda a, b: a // 3, "remainder 3": lambda a, b: a % 3,
}  # fmt: skip
_UNARY: frozenset[str] = frozenset({"exp", "relu", "neg", "abs", "pow", "sqrt"})
_NUMBER: Final = ((), ())  # a wrapped number's shape and strides


def _numpy_op(name: str, a: Any, b: Any) -> Any:
    """The values ``_OPS[name]`` computes, on arrays."""
    table: dict[str, Callable[[], Any]] = {
        "add": lambda: a + b, "sub": lambda: a - b, "mul": lambda: a * b, "div": lambda: a / b,
        "add alpha": lambda: a + 2 * b, "maximum": lambda: np.maximum(a, b), "le": lambda: a <= b,
        "where": lambda: cast(Any, np.where(a > 0, a, b)), "exp": lambda: np.exp(a), "relu": lambda: np.maximum(a, 0),
        "neg": lambda: -a, "abs": lambda: np.abs(a), "pow": lambda: a**2, "mul 2": lambda: a * 2,
        "add 0.5": lambda: a + 0.5, "rsub": lambda: 1 - a, "gt 0": lambda: a > 0, "sqrt": lambda: np.sqrt(a),
        "floor_divide 3": lambda: a // 3, "remainder 3": lambda: a % 3,
        "threshold_backward": lambda: a * (b > 0),
    }  # fmt: skip
    return table[name]()


def test_channels_last_results_stay_channels_last() -> None:
    # The cases: every element-wise op of a channels-last tensor (with itself, a
    # number or a broadcast operand) keeps the layout, as in PyTorch.
    x = core.randn([2, 3, 4, 5]).contiguous(memory_format=CL)
    assert x.stride() == (60, 1, 15, 3)
    plain = x.contiguous()
    bias = core.randn([5])
    for name, op in _OPS.items():
        for other in (x, bias):
            result = op(x, other)
            assert result.stride() == (60, 1, 15, 3), name
            with np.errstate(invalid="ignore"):
                np.testing.assert_allclose(result.numpy(), _numpy_op(name, plain.numpy(), other.numpy()), rtol=1e-6)


def test_the_first_operand_wins_where_numpy_would_take_c_order() -> None:
    # numpy lays F + C out in C order; PyTorch (and so typedops) in the first operand's.
    f = core.transpose(core.arange(12.0).view([4, 3]), 0, 1)
    c = f.contiguous()
    assert (f + c).stride() == (1, 3) and (c + f).stride() == (4, 1)
    assert (f + c).tolist() == (c + c).tolist() == (c + f).tolist()


def test_a_result_owns_its_memory_and_its_views_read_it() -> None:
    a = core.permute(core.arange(24.0).view([2, 3, 4]), [2, 0, 1])
    for result in (a + a, a.exp(), a * 2, core.where(a > 3, a, a)):
        assert result.stride() == a.stride() == (1, 12, 4)
        assert not np.shares_memory(result.numpy(), a.numpy())
        assert result.storage.size == 24 and result.storage_offset() == 0
        back = core.permute(result, [1, 2, 0])  # a view through the storage: row-major again
        assert back.is_contiguous() and back.numpy().tolist() == core.permute(result, [1, 2, 0]).contiguous().tolist()
        ops.core.add_.Scalar(result, 1.0)  # an in-place write is seen by the result and its views
        assert back.numpy().tolist() == core.permute(result, [1, 2, 0]).tolist()


def test_in_place_and_out_forms_keep_their_tensors_layouts() -> None:
    x = core.randn([2, 3, 4, 5]).contiguous(memory_format=CL)
    y = core.randn([2, 3, 4, 5])
    # (through the ops: other tests' libraries may install their own Tensor.add_)
    writes: list[Callable[[], Tensor]] = [
        lambda: ops.core.add_.Tensor(x, y), lambda: ops.core.mul_.Scalar(x, 2), lambda: ops.core.exp_.default(x),
        lambda: ops.core.div_.Tensor(x, y), lambda: ops.core.sub_.Scalar(x, 1),
    ]  # fmt: skip
    for in_place in writes:
        assert in_place() is x and x.stride() == (60, 1, 15, 3)
    out = core.empty([2, 3, 4, 5])
    assert core.add(x, x, out=out) is out and out.stride() == (60, 20, 5, 1)
    out = core.empty([2, 3, 4, 5]).contiguous(memory_format=CL)
    assert core.exp(y, out=out) is out and out.stride() == (60, 1, 15, 3)
    np.testing.assert_allclose(out.numpy(), np.exp(y.numpy()), rtol=1e-6)
    # An out= tensor of another shape is resized and takes the out-of-place layout.
    outs: list[tuple[Callable[[Tensor], Tensor], Tensor, tuple[int, ...]]] = [
        (lambda o: core.exp(x, out=o), x.exp(), (60, 1, 15, 3)),
        (lambda o: core.add(y, x, out=o), y + x, (60, 20, 5, 1)),  # y first: its layout
        (lambda o: core.div(x, y, out=o), x / y, (60, 1, 15, 3)),
    ]  # fmt: skip
    for write, expected, strides in outs:
        resized = core.empty([3])
        assert write(resized) is resized and resized.stride() == expected.stride() == strides
        assert resized.tolist() == expected.tolist()


@st.composite
def _permuted(draw: st.DrawFn, shape: tuple[int, ...], dtype: ScalarType) -> Tensor:
    """``shape``'s values in a permuted layout, maybe sliced with step 2 in the last dim."""
    order = draw(st.permutations(range(len(shape))))
    sliced: bool = draw(st.booleans())
    step = 2 if shape and sliced else 1
    sizes = [shape[d] * (step if d == len(shape) - 1 else 1) for d in order]
    values = Tensor.from_numpy(np.arange(int(np.prod(sizes))) % 5 - 2.0).view(sizes).to(dtype)
    t = core.permute(values, [order.index(d) for d in range(len(shape))])
    return t if step == 1 else core.slice(t, -1, 0, None, 2)


@settings(max_examples=120, deadline=None)
@given(data=st.data(), name=st.sampled_from(sorted(_OPS)),
       dtypes=st.sampled_from([(ScalarType.float32,) * 2, (ScalarType.float64, ScalarType.float32),
                               (ScalarType.int64,) * 2, (ScalarType.float16,) * 2]))  # fmt: skip
def test_every_path_and_the_meta_kernels_give_the_computed_strides(
    data: st.DataObject, name: str, dtypes: tuple[ScalarType, ScalarType]
) -> None:
    # The fast path (one floating dtype), the planned paths (two dtypes, integers, float16
    # with a number) and the Meta kernels all lay the result out by elementwise_strides.
    shape = tuple(data.draw(st.lists(st.integers(1, 3), max_size=4)))
    other_shape = tuple(1 if data.draw(st.booleans()) else n for n in shape[data.draw(st.integers(0, len(shape))):])
    a = data.draw(_permuted(shape, dtypes[0]))
    b = data.draw(_permuted(other_shape, dtypes[1]))
    result = _OPS[name](a, b)
    inputs = [(t.shape, t.stride()) for t in ([a] if name in _UNARY else [a > 0, a, b] if name == "where" else [a, b])]
    if name in ("mul 2", "add 0.5", "gt 0", "rsub", "floor_divide 3", "remainder 3"):  # a tensor and a wrapped number (rsub: the number first)
        inputs = [_NUMBER, inputs[0]] if name == "rsub" else [inputs[0], _NUMBER]
    expected = elementwise_strides(result.shape, inputs)
    assert result.stride() == expected
    assert _OPS[name](_meta(a), _meta(b)).stride() == expected
    with np.errstate(invalid="ignore", divide="ignore"):
        reference = _numpy_op(name, a.numpy().astype(np.float64), b.numpy().astype(np.float64))
    np.testing.assert_allclose(result.numpy().astype(np.float64), reference, rtol=1e-2)


def _meta(t: Tensor) -> Tensor:
    """A meta tensor of ``t``'s shape and strides."""
    from typedops.tensor import empty_tensor, make_view

    base = empty_tensor([t.storage.size], t.dtype, core.empty([0], device="meta").device)
    return make_view(base, t.shape, t.stride(), t.storage_offset())


@settings(max_examples=150, deadline=None)
@given(
    shapes=st.lists(st.integers(0, 3), max_size=4).flatmap(
        lambda shape: st.tuples(st.just(tuple(shape)), st.lists(st.booleans(), min_size=len(shape), max_size=len(shape)),
                                st.integers(0, len(shape)))  # fmt: skip
    ),
    name=st.sampled_from(["add", "sub", "mul", "div", "le", "relu", "mul 2", "gt 0", "threshold_backward"]),
    swap=st.booleans(),
)
def test_contiguous_operands_give_numpy_a_c_contiguous_result(
    shapes: tuple[tuple[int, ...], list[bool], int], name: str, swap: bool
) -> None:
    # What the hot paths rely on without testing it (Note [Element-wise results in torch's
    # layout]): numpy's result of C-contiguous operands, broadcast or not, is C-contiguous,
    # so the tensor that owns it may have contiguous strides.
    from typedops.tensor import array_of, contiguous_strides

    shape, ones, size = shapes
    other = tuple(1 if one else n for one, n in zip(ones[len(shape) - size :], shape[len(shape) - size :]))
    a = Tensor.from_numpy(np.arange(float(int(np.prod(shape)))).reshape(shape).astype(np.float32))
    b = Tensor.from_numpy(np.arange(float(int(np.prod(other)))).reshape(other).astype(np.float32))
    a, b = (b, a) if swap else (a, b)
    result = _OPS[name](a, b)
    assert array_of(result).flags.c_contiguous
    if result.numel():
        assert result.stride() == contiguous_strides(result.shape)
    with np.errstate(invalid="ignore", divide="ignore"):
        np.testing.assert_array_equal(result.numpy(), _numpy_op(name, a.numpy(), b.numpy()))


def test_an_expanded_number_leaves_the_layout_to_the_other_operand() -> None:
    # Strides all 0 (mean's gradient, an expanded number) never order two dims: the
    # contiguous shortcut takes them, and a permuted operand still decides.
    expanded = core.scalar_tensor(0.5).expand([2, 3, 4])
    contiguous = core.arange(24.0).view([2, 3, 4])
    permuted = core.permute(core.arange(24.0).view([4, 2, 3]), [1, 2, 0])
    for other in (contiguous, permuted):
        for result in (expanded * other, other * expanded, expanded + other):
            assert result.stride() == other.stride()
            assert result.tolist() == (other * 0.5).tolist() or result.tolist() == (other + 0.5).tolist()
    assert (expanded * expanded).stride() == (12, 4, 1)
