"""x[index] and x[index] = value (typedops/tensor/_indexing.py, Note [Basic indexing]): views
made by the core view ops, writes through fill_ and copy_, and torch's errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import typedops
from typedops import core, tensor, vmap
from typedops.vocabulary import ArgumentError, ArgumentValueError, DimensionError, TensorError, UnsupportedError


def _x() -> typedops.Tensor:
    return tensor(np.arange(60, dtype=np.float32).reshape(3, 4, 5).tolist())


def _items() -> st.SearchStrategy[Any]:
    slices = st.builds(slice, st.none() | st.integers(-6, 6), st.none() | st.integers(-6, 6), st.none() | st.integers(1, 3))
    return st.one_of(st.integers(-3, 2), slices, st.none(), st.just(Ellipsis))


@settings(max_examples=200, deadline=None)
@given(items=st.lists(_items(), max_size=4))
def test_a_basic_index_gives_numpys_elements_as_a_view(items: list[Any]) -> None:
    index = tuple(items)
    x = _x()
    expected: Any
    try:
        expected = np.arange(60, dtype=np.float32).reshape(3, 4, 5)[index]
    except IndexError:
        with pytest.raises((DimensionError, IndexError)):
            x[index]
        return
    got = x[index]
    assert got.shape == np.shape(expected) and got.tolist() == np.asarray(expected).tolist()
    if got.numel():  # a view: writes reach x
        got.fill_(-1.0)
        assert (x == -1.0).sum().item() == got.numel()


def test_integers_select_slices_slice_and_none_unsqueezes() -> None:
    x = _x()
    assert x[1].shape == (4, 5) and x[1, 2].shape == (5,) and x[1, 2, 3].item() == 33.0
    assert x[-1, -1, -1].item() == 59.0 and x[np.int64(2), 0, 0].item() == 40.0 and x[tensor(1), 0, 0].item() == 20.0
    assert x[:, 1:3, ::2].shape == (3, 2, 3) and x[:, 1:3, ::2].stride() == (20, 5, 2)
    assert x[None, ..., None].shape == (1, 3, 4, 5, 1) and x[..., 0].shape == (3, 4)
    assert x[True].shape == (1, 3, 4, 5) and x[False].shape == (0, 3, 4, 5)  # bools: 0-dim masks (copies)
    assert x[True, True].shape == (1, 3, 4, 5) and x[True, 0, False].shape == (0, 4, 5)
    assert x[10:].shape == (0, 4, 5) and x[:, -100:100].shape == (3, 4, 5)
    whole = x[...]
    assert whole is not x and whole.shape == x.shape
    whole[0, 0, 0] = -1.0
    assert x[0, 0, 0].item() == -1.0
    scalar = tensor(2.5)
    assert scalar[()].item() == 2.5 and scalar[None].shape == (1,) and scalar[...].shape == ()


@pytest.mark.parametrize(
    ("index", "error", "message"),
    [
        (5, DimensionError, "index 5 is out of bounds for dimension 0 with size 3"),
        ((0, -5), DimensionError, "index -5 is out of bounds for dimension 1 with size 4"),
        ((0, 0, 0, 0), DimensionError, "too many indices for tensor of dimension 3"),
        ((Ellipsis, Ellipsis), DimensionError, "an index can only have a single ellipsis ('...')"),
        (slice(None, None, 0), ArgumentValueError, "step must be greater than zero (x[::-1] has no view; torch refuses it too)"),
        (slice(None, None, -1), ArgumentValueError, "step must be greater than zero (x[::-1] has no view; torch refuses it too)"),
        (1.5, DimensionError, "only integers, slices (`:`), ellipsis (`...`), None and bools are valid indices (got float)"),
        ("a", ArgumentError, "only integers, slices (`:`), ellipsis (`...`), None and bools are valid indices (got str)"),
        (np.True_, DimensionError,
         "only integers, slices (`:`), ellipsis (`...`), None and bools are valid indices (got numpy.bool)"),
        (slice(1.5, None), ArgumentError, "slice indices must be integers or None or have an __index__ method, not float"),
        ([0, 5], DimensionError, "index 5 is out of bounds for dimension 0 with size 3 (an index tensor's positions "
                                 "run from -3 to 3 - 1)"),
        ((0, tensor([0.5])), DimensionError, "tensors used as indices must be long, int, byte or bool tensors, got float32"),
    ],
)  # fmt: skip
def test_bad_indices_raise_torchs_errors(index: Any, error: type[Exception], message: str) -> None:
    with pytest.raises(error) as info:
        _x()[index]
    assert str(info.value) == message


def test_a_0_dim_tensor_has_no_dims_to_index() -> None:
    with pytest.raises(DimensionError) as info:
        tensor(1.0)[0]
    assert str(info.value) == "invalid index of a 0-dim tensor: it has no dims; x.item() gives its value"


def test_assignment_fills_or_copies_into_the_view_and_bumps_the_version() -> None:
    x = tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    version = x._version
    x[0] = 9
    x[1, 1:] = tensor([7.0, 8.0])
    x[:, 0] = tensor(0.5)  # broadcast
    x[..., -1] = x[..., 0]
    numpy_number: Any = np.float32(2.5)
    x[0, 1] = numpy_number
    assert x.tolist() == [[0.5, 2.5, 0.5], [0.5, 7.0, 0.5]] and x._version > version
    with pytest.raises(ArgumentError) as info:
        x[0] = "a"  # type: ignore[assignment]
    assert str(info.value) == "can't assign a str to a Tensor: assign a tensor or a number"
    assert x.tolist() == [[0.5, 2.5, 0.5], [0.5, 7.0, 0.5]]


def test_gradients_flow_through_reads_and_writes() -> None:
    w = tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    (w[1, :] * tensor([2.0, 3.0])).sum().backward()
    assert w.grad is not None and w.grad.tolist() == [[0.0, 0.0], [2.0, 3.0]]
    v = tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = v * 1
    y[0] = 0  # the overwritten elements get no gradient
    y.sum().backward()
    assert v.grad is not None and v.grad.tolist() == [[0.0, 0.0], [1.0, 1.0]]


def test_vmap_of_indexing_equals_the_per_sample_loop() -> None:
    x = _x()
    def per_sample(s: typedops.Tensor) -> typedops.Tensor:
        return s[1:, None, -1] * 2

    got: typedops.Tensor = vmap(per_sample)(x)
    assert got.tolist() == [(x.select(0, i)[1:, None, -1] * 2).tolist() for i in range(3)]
    assert core.stack([s[0] for s in x]).tolist() == x[:, 0].tolist()


def test_tensors_and_lists_pick_copies_as_numpys_advanced_indexing() -> None:
    # Note [Advanced indexing] in typedops/core/kernels/_index.py
    values = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    x = _x()
    for ours, theirs in [
        (x[x > 30], values[values > 30]), (x[[0, 2]], values[[0, 2]]), (x[:, [1, 3]], values[:, [1, 3]]),
        (x[[0, 1], [1, 2]], values[[0, 1], [1, 2]]), (x[[0, 1], :, [1, 2]], values[[0, 1], :, [1, 2]]),
        (x[np.array([2, 0])], values[np.array([2, 0])]), (x[tensor([True, False, True])], values[[True, False, True]]),
        (x[1:, [0, 0, 1]], values[1:, [0, 0, 1]]),
    ]:  # fmt: skip
        assert ours.shape == theirs.shape and ours.tolist() == theirs.tolist()
    picked = x[[0]]
    picked.fill_(-1.0)
    assert x[0, 0, 0].item() == 0.0  # a copy, not a view


def test_advanced_assignment_writes_through_index_put() -> None:
    x = _x()
    x[x > 50] = 0
    x[[0, 2], 1] = tensor(-1)  # an int64 value, converted to x's dtype
    assert (x > 50).sum().item() == 0 and x[0, 1].tolist() == [-1.0] * 5 and x[2, 1].tolist() == [-1.0] * 5
    with pytest.raises(TensorError) as info:
        x[[0, 1], [1, 2]] = tensor([3.0, 4.0])  # (2,) does not broadcast to (2, 5)
    assert str(info.value) == (
        "shape mismatch: value tensor of shape [2] cannot be broadcast to indexing result of shape [2, 5]"
    )


def test_gradients_flow_through_advanced_indexing() -> None:
    w = tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    (w[w > 1.5] * 2).sum().backward()
    assert w.grad is not None and w.grad.tolist() == [[0.0, 2.0], [2.0, 2.0]]
    v = tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    (v[[0, 0, 1]]).sum().backward()  # a row picked twice gets both gradients
    assert v.grad is not None and v.grad.tolist() == [[2.0, 2.0], [1.0, 1.0]]
    u = tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = u * 1
    y[[0]] = 5.0
    y.sum().backward()
    assert u.grad is not None and u.grad.tolist() == [[0.0, 0.0], [1.0, 1.0]]


def test_a_mask_on_meta_tensors_is_refused_an_integer_index_is_not() -> None:
    m = core.zeros([2, 3], device="meta")
    assert m[:, tensor([[0, 1]], device="meta")].shape == (2, 1, 2)
    with pytest.raises(UnsupportedError) as info:
        m[m > 0]
    assert str(info.value).startswith("indexing with a bool mask gives a shape that depends on the mask's values")


def test_an_out_of_place_write_carries_the_values_history() -> None:
    # Note [In-place on views]: x[0] = w * 2 into an x without grad does not reach w yet;
    # index_put, out of place, does
    w = tensor(1.5, requires_grad=True)
    u = tensor([1.0, 2.0], requires_grad=True)
    x = core.index_put(core.zeros([2]), [tensor([0])], (w * 2).unsqueeze(0))
    (x * u).sum().backward()
    assert w.grad is not None and w.grad.item() == 2.0 and u.grad is not None and u.grad.tolist() == [3.0, 0.0]


def test_a_whole_view_is_a_view_op_that_saves_nothing() -> None:
    a = tensor([0.0, 1.0, 2.0], requires_grad=True)
    y = a * 1
    y[:] = y.exp()  # the view of all of y: no saved input for the write to invalidate
    y.sum().backward()
    assert a.grad is not None and np.allclose(a.grad.tolist(), np.exp([0.0, 1.0, 2.0]))
    x = _x()
    got: typedops.Tensor = vmap(lambda r: r[...] * 2)(x)
    assert got.tolist() == (x * 2).tolist()
    program = typedops.trace(lambda t: t[...] + 0, core.ones([2, 3]))
    assert "core::view" in program.ops()
    wide = tensor([[9.0, 9.0, 9.0], [0.0, 1.0, 2.0], [3.0, 4.0, 5.0]])
    assert program(wide[1:]).tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]


def test_an_assigned_tensor_is_fitted_to_the_view_as_torchs_copy_to() -> None:
    x = tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    x[1, 1] = tensor([5.5])  # a leading dim of size 1 dropped
    x[:, 0] = tensor([[7.0, 8.0]])
    assert x.tolist() == [[7.0, 2.0, 3.0], [8.0, 5.5, 6.0]]
    x[:] = x[0]  # expanded: read before written
    assert x.tolist() == [[7.0, 2.0, 3.0], [7.0, 2.0, 3.0]]
    scalar = tensor(1.0)
    scalar[...] = tensor([3.0])
    assert scalar.item() == 3.0
