"""Reverse-mode autograd: the user surface, routing by keys, versions, errors, the engine."""

from __future__ import annotations

import asyncio
import gc
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import typedops
from typedops import DispatchKey, ScalarType, Tensor, core, tensor
from typedops.dispatch import DispatchKeySet
from typedops.autograd import AutogradError, enable_grad, grad, is_grad_enabled, no_grad, set_grad_enabled

F64 = ScalarType.float64


def t(data: Any, requires_grad: bool = True) -> Tensor:
    return tensor(data, dtype=F64, requires_grad=requires_grad)


# -- requires_grad is the Autograd key ----------------------------------------------------------


def state(x: Tensor) -> tuple[bool, bool, bool]:
    return DispatchKey.AutogradCPU in x.keys, x.requires_grad, x.is_leaf


def test_only_tensors_that_require_grad_carry_the_autograd_key() -> None:
    x = tensor([1.0, 2.0])
    assert state(x) == (False, False, True)
    x.requires_grad_()
    assert state(x) == (True, True, True)
    y = x * 2
    assert state(y) == (True, True, False)
    assert y.grad_fn.name() == "MulBackward0"
    x.requires_grad = False
    assert DispatchKey.AutogradCPU not in x.keys


def test_requires_grad_is_refused_for_integers_and_non_leaves() -> None:
    with pytest.raises(RuntimeError, match="only Tensors of floating point and complex dtype can require gradients"):
        tensor([1, 2]).requires_grad_()
    y = t([1.0]) * 2
    with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf variables"):
        y.requires_grad = False


def test_plain_calls_record_nothing() -> None:
    y = core.mul(tensor([1.0]), tensor([2.0]))
    assert y.grad_fn is None and not y.requires_grad


def test_repr_shows_grad_fn_and_requires_grad() -> None:
    x = t([1.0])
    assert repr(x) == "tensor([1.0], dtype=float64, requires_grad=True)"
    assert repr(x * 2) == "tensor([2.0], dtype=float64, grad_fn=<MulBackward0>)"


# -- backward and grad ------------------------------------------------------------------------


def test_backward_accumulates_into_leaves() -> None:
    x, w = t([1.0, 2.0, 3.0]), t([0.5, -1.0, 2.0])
    (x * w).sum().backward()
    assert x.grad is not None and w.grad is not None
    assert x.grad.tolist() == [0.5, -1.0, 2.0] and w.grad.tolist() == [1.0, 2.0, 3.0]
    (x * w).sum().backward()
    assert x.grad.tolist() == [1.0, -2.0, 4.0]


def test_accumulating_keeps_the_grad_setters_check_for_a_gradient_of_another_dtype() -> None:
    x = tensor([1.0, 2.0], requires_grad=True)  # float32
    x.backward(tensor([1.0, 1.0]))
    old = x.grad
    x.backward(tensor([0.5, 0.5]))  # a new tensor each time: the old .grad is left as it was
    assert x.grad is not None and x.grad.tolist() == [1.5, 1.5] and old is not None and old.tolist() == [1.0, 1.0]
    with pytest.raises(RuntimeError, match="attempting to assign a gradient of dtype 'float64' to a tensor of dtype 'float32'"):
        x.backward(tensor([1.0, 1.0], dtype=ScalarType.float64))
    assert x.grad.tolist() == [1.5, 1.5]


def test_next_functions_name_the_graph() -> None:
    x = t([1.0, 2.0])
    y = (x * x).sum()
    mul, _ = y.grad_fn.next_functions[0]
    assert mul.name() == "MulBackward0"
    assert [(n.name(), i) for n, i in mul.next_functions] == [("AccumulateGrad", 0), ("AccumulateGrad", 0)]


def test_a_shared_input_gets_the_sum_of_its_gradients() -> None:
    x = t([3.0])
    y = x * x + x
    y.backward(tensor([1.0], dtype=F64))
    assert x.grad is not None and x.grad.tolist() == [7.0]


def test_broadcasting_gradients_are_summed_back() -> None:
    x, b = t([[1.0, 2.0], [3.0, 4.0]]), t([10.0, 20.0])
    (x + b).sum().backward()
    assert b.grad is not None and b.grad.tolist() == [2.0, 2.0]


def test_grad_returns_gradients_without_touching_dot_grad() -> None:
    x, w = t([1.0, 2.0]), t([3.0, 4.0])
    (gx,) = grad((x * w).sum(), [x])
    assert gx is not None and gx.tolist() == [3.0, 4.0] and x.grad is None and w.grad is None


def test_grad_of_an_unused_input() -> None:
    x, z = t([1.0]), t([2.0])
    with pytest.raises(RuntimeError, match="^The differentiated Tensor at index 1 appears to not have been used in the graph"):
        grad((x * 2).sum(), [x, z])
    assert grad((x * 2).sum(), [x, z], allow_unused=True)[1] is None


def test_second_derivatives_with_create_graph() -> None:
    x = t([2.0])
    y = x * x * x
    (g,) = grad(y.sum(), [x], create_graph=True)
    assert g is not None and g.tolist() == [12.0] and g.requires_grad
    (gg,) = grad(g.sum(), [x])
    assert gg is not None and gg.tolist() == [12.0]


def test_hooks_and_retain_grad() -> None:
    x = t([1.0, 2.0])
    y = x * 3
    y.retain_grad()
    seen: list[list[float]] = []
    def doubling(g: Tensor) -> Tensor:
        seen.append(g.tolist())
        return g * 2

    handle = y.register_hook(doubling)
    x.register_hook(lambda g: g + 1)
    y.sum().backward()
    assert seen == [[1.0, 1.0]]
    # retain_grad keeps the gradient after the tensor's other hooks ran, as in PyTorch
    assert y.grad is not None and y.grad.tolist() == [2.0, 2.0]
    assert x.grad is not None and x.grad.tolist() == [7.0, 7.0]
    handle.remove()


def test_detach_shares_data_and_drops_history() -> None:
    x = t([1.0, 2.0])
    d = (x * 2).detach()
    assert not d.requires_grad and d.grad_fn is None and d.tolist() == [2.0, 4.0]


def test_detach_is_the_op_and_keeps_the_storage_and_version_counter() -> None:
    """Note [detach is an op]: the method and ``core.detach`` make the same view."""
    x = t([1.0, 2.0])
    y = x * 2
    for d in (y.detach(), core.detach(y)):
        assert d.keys == DispatchKeySet([DispatchKey.CPU, DispatchKey.ADInplaceOrView])
        assert not d.requires_grad and d.grad_fn is None and d.is_leaf
        assert d.storage is y.storage and d.stride() == y.stride() and d.storage_offset() == y.storage_offset()
        before = y._version
        d.add_(tensor(1.0, dtype=d.dtype))
        assert y._version == d._version == before + 1
    with typedops.no_grad():
        assert not x.detach().requires_grad
    y.sum().backward()  # y's history is untouched by the detached writes (mul saved x, not y)
    assert x.grad is not None and x.grad.tolist() == [2.0, 2.0]


def test_multi_output_op_with_a_non_differentiable_output() -> None:
    x = t([[1.0, 5.0], [7.0, 2.0]])
    values, indices = core.max(x, 1)
    assert values.requires_grad and not indices.requires_grad
    values.sum().backward()
    assert x.grad is not None and x.grad.tolist() == [[0.0, 1.0], [1.0, 0.0]]


def test_composite_ops_record_their_parts() -> None:
    x = t([1.0, 2.0, 3.0, 4.0])
    y = core.mean(core.sub(x, 1.0 * x * x))
    y.backward()
    assert x.grad is not None and np.allclose(x.grad.tolist(), [(1 - 2 * v) / 4 for v in [1, 2, 3, 4]])


# -- grad mode ---------------------------------------------------------------------------------


def test_no_grad_and_enable_grad() -> None:
    x = t([1.0])
    modes = []
    with no_grad():
        modes.append((is_grad_enabled(), (x * 2).requires_grad))
        with enable_grad():
            modes.append((is_grad_enabled(), (x * 2).requires_grad))
    modes.append((is_grad_enabled(), (x * 2).requires_grad))
    assert modes == [(False, False), (True, True), (True, True)]


def test_grad_mode_decorators() -> None:
    @no_grad()
    def f(v: Tensor) -> Tensor:
        return v * 2

    @set_grad_enabled(False)
    def g(v: Tensor) -> Tensor:
        return v * 2

    x = t([1.0])
    assert not f(x).requires_grad and not g(x).requires_grad and (x * 2).requires_grad


def test_set_grad_enabled_as_a_block() -> None:
    x = t([1.0])
    with set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert (x * 2).requires_grad


def test_grad_mode_is_per_asyncio_task() -> None:
    async def inside_no_grad(event: asyncio.Event, seen: list[bool]) -> None:
        with no_grad():
            event.set()
            await asyncio.sleep(0.01)
            seen.append(is_grad_enabled())

    async def other(event: asyncio.Event, seen: list[bool]) -> None:
        await event.wait()
        seen.append(is_grad_enabled())

    async def main() -> list[bool]:
        event = asyncio.Event()
        seen: list[bool] = []
        await asyncio.gather(inside_no_grad(event, seen), other(event, seen))
        return seen

    assert asyncio.run(main()) == [True, False]


# -- errors ------------------------------------------------------------------------------------


def test_implicit_gradient_only_for_scalars() -> None:
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        (t([1.0, 2.0]) * 2).backward()


def test_backward_of_a_tensor_without_history() -> None:
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad and does not have a grad_fn"):
        tensor([1.0]).sum().backward()


def test_second_backward_through_a_freed_graph() -> None:
    x = t([1.0, 2.0])
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time") as info:
        y.backward()
    assert "MulBackward0" in str(info.value) and "retain_graph=True" in str(info.value)


def test_retain_graph_allows_a_second_backward() -> None:
    x = t([1.0, 2.0])
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad is not None and x.grad.tolist() == [4.0, 8.0]


def test_in_place_on_a_leaf_that_requires_grad() -> None:
    x = t([1.0])
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place operation"):
        x.add_(tensor([1.0], dtype=F64))
    with no_grad():
        x.add_(tensor([1.0], dtype=F64))
    assert x.tolist() == [2.0]


def test_saved_tensor_modified_in_place() -> None:
    x = t([1.0, 2.0])
    a = x * 1
    y = core.sin(a)
    a.mul_(tensor([2.0, 2.0], dtype=F64))
    with pytest.raises(RuntimeError) as info:
        y.sum().backward()
    assert str(info.value).startswith(
        "one of the variables needed for gradient computation has been modified by an inplace "
        "operation: [float64 tensor of shape [2]], which is an input of SinBackward0, is at version 1; "
        "expected version 0 instead. "
    )


def test_saved_output_modified_in_place_names_its_output() -> None:
    x = t([1.0, 2.0])
    y = core.exp(x * 1)
    y.mul_(tensor([2.0, 2.0], dtype=F64))
    with pytest.raises(RuntimeError) as info:
        y.sum().backward()
    assert str(info.value).startswith(
        "one of the variables needed for gradient computation has been modified by an inplace "
        "operation: [float64 tensor of shape [2]], which is output 0 of ExpBackward0, is at version 1; "
        "expected version 0 instead. "
    )


@pytest.mark.parametrize("name", ["exp", "tanh", "sigmoid", "sqrt", "rsqrt", "reciprocal", "relu"])
def test_a_saved_output_makes_no_reference_cycle(name: str) -> None:
    # Note [Saved outputs without a cycle]: a graph dropped without a backward is freed by
    # reference counting, not left to the garbage collector.
    x = t([1.0, 2.0])
    gc.collect()
    gc.disable()
    try:
        y = getattr(core, name)(x * 1)
        assert y.grad_fn is not None
        del y
        assert gc.collect() == 0
    finally:
        gc.enable()


def test_a_saved_output_is_differentiated_through_its_node_under_create_graph() -> None:
    # d2/dx2 exp(x) = exp(x), d2/dx2 sigmoid(x) = s(1 - s)(1 - 2s): the formulas read the
    # saved output, which under create_graph carries its node again.
    x = t([0.5, -1.0])
    s = 1 / (1 + np.exp(-np.array([0.5, -1.0])))
    for op, expected in ((core.exp, np.exp([0.5, -1.0])), (core.sigmoid, s * (1 - s) * (1 - 2 * s))):
        (g,) = grad(op(x).sum(), [x], create_graph=True)
        assert g is not None
        (gg,) = grad(g.sum(), [x])
        assert gg is not None
        np.testing.assert_allclose(gg.numpy(), expected)


def _recorded_nodes() -> list[Any]:
    x, w = t([[1.0, -2.0], [3.0, 4.0]]), t([0.5, 2.0])
    a = x * w  # two inputs requiring grad, saved tensors
    b = core.relu(a)  # a saved output
    values, _ = core.max(b, 1)  # two outputs, one differentiable
    v = core.select(a, 0, 0)  # a view
    c = a * 1
    c.add_(tensor(1.0, dtype=F64))  # in place on a non-leaf
    return [a.grad_fn, b.grad_fn, values.grad_fn, v.grad_fn, c.grad_fn]


def test_a_node_made_by_a_generated_kernel_has_every_field_of_node() -> None:
    # Note [Nodes made by generated kernels]: the kernel, not __init__, sets Node's fields
    from typedops.autograd import Node

    fields = [f for f in Node.__slots__ if f != "__weakref__"]
    nodes = _recorded_nodes()
    fresh = Node()  # made after them
    for node in nodes:
        for f in fields:
            assert hasattr(node, f), (node, f)
        assert type(node.out_meta) is tuple and node.pre_hooks is None and node.retains is None
        assert not node.released and node.seq < fresh.seq
    assert [n.seq for n in nodes] == sorted(n.seq for n in nodes)  # recording order
    assert [len(n.out_meta) for n in nodes] == [1, 1, 2, 1, 1]


def test_with_autograd_adds_the_autograd_key_of_the_tensors_device() -> None:
    from typedops.autograd import WITH_AUTOGRAD
    from typedops.tensor import AUTOGRAD_BIT_FOR_DEVICE

    for device in ("cpu", "meta"):
        x = tensor([1.0], device=device)
        assert WITH_AUTOGRAD[x.key_bits] == x.key_bits | AUTOGRAD_BIT_FOR_DEVICE[device]
        y = tensor([1.0], device=device, requires_grad=True) * 2  # recorded: the kernel adds the key
        assert y.requires_grad and y.key_bits == x.key_bits | AUTOGRAD_BIT_FOR_DEVICE[device]
    assert WITH_AUTOGRAD[0] == 1 << DispatchKey.AutogradOther  # no backend bit


def test_below_autograd_keys_are_the_masked_key_set_and_bounded() -> None:
    from typedops.autograd import BELOW_AUTOGRAD, BELOW_AUTOGRAD_MASK

    keys = t([1.0]).keys
    assert BELOW_AUTOGRAD[keys] == int(keys) & BELOW_AUTOGRAD_MASK
    for bits in range(5000):
        assert BELOW_AUTOGRAD[bits << 3] == (bits << 3) & BELOW_AUTOGRAD_MASK
    assert len(BELOW_AUTOGRAD) <= 4096


def test_in_place_on_a_non_leaf_records() -> None:
    x = t([1.0, 2.0])
    y = x * 2
    y.mul_(y.detach() + 1)
    y.sum().backward()
    assert x.grad is not None and x.grad.tolist() == [6.0, 10.0]
    assert y.grad_fn.name() == "MulBackward0"


def test_out_variant_is_not_differentiable() -> None:
    with pytest.raises(RuntimeError, match="functions with out=... arguments don't support automatic differentiation"):
        core.add(t([1.0]), t([1.0]), out=tensor([0.0], dtype=F64))


def test_op_without_autograd_rule_raises_at_backward() -> None:
    @typedops.op("agtest::double_it")
    def double_it(x: Tensor) -> Tensor:
        return x * 2

    y = double_it(t([1.0]))
    assert y.requires_grad and y.grad_fn.name() == "NotImplemented"
    with pytest.raises(RuntimeError, match="the derivative for 'agtest::double_it' is not implemented"):
        y.sum().backward()
    double_it.library.remove()


def test_versions_bump_once_per_in_place_op_including_custom_ops() -> None:
    @typedops.op("agtest::fill_ones", mutates_args=["x"])
    def fill_ones(x: Tensor) -> None:
        x.numpy()[...] = 1

    x = tensor([0.0, 0.0])
    view = core.select(x, 0, 0)
    fill_ones(x)
    assert x._version == 1 and view._version == 1
    x.add_(tensor([1.0]))
    assert x._version == 2
    fill_ones.library.remove()


# -- invariants ---------------------------------------------------------------------------------


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(-10, 10), min_size=1, max_size=6), st.floats(-3, 3))
def test_gradient_of_a_product_is_the_other_factor(values: list[float], c: float) -> None:
    x = t(values)
    w = t([c] * len(values))
    (gx, gw) = grad((x * w).sum(), [x, w])
    assert gx is not None and gw is not None
    assert gx.tolist() == [c] * len(values) and gw.tolist() == values


def test_set_grad_enabled_called_alone_changes_the_mode_of_this_context() -> None:
    import contextvars

    def body() -> tuple[bool, bool]:
        set_grad_enabled(False)
        off = is_grad_enabled()
        set_grad_enabled(True)
        return off, is_grad_enabled()

    assert contextvars.copy_context().run(body) == (False, True)
    assert is_grad_enabled()


def test_views_of_a_tensor_that_requires_grad_are_recorded_and_share_its_version() -> None:
    x = t([[1.0, 2.0], [3.0, 4.0]])
    v = core.transpose(x, 0, 1)
    assert v.grad_fn.name() == "TransposeBackward0" and v.storage is x.storage
    with no_grad():
        w = core.transpose(x, 0, 1)
    assert not w.requires_grad and w.grad_fn is None
    core.select(v, 0, 1).sum().backward()
    assert x.grad is not None and x.grad.tolist() == [[0.0, 1.0], [0.0, 1.0]]  # column 1 of x


@settings(max_examples=25, deadline=None)
@given(
    st.lists(st.integers(1, 3), min_size=1, max_size=3),
    st.lists(st.booleans(), min_size=3, max_size=3),
    st.integers(0, 2),
)
def test_broadcast_gradients_count_the_copies(shape: list[int], keep: list[bool], lead: int) -> None:
    """d/dy sum(x + y) is, per element of y, how many times broadcasting copied it."""
    small = [n if k else 1 for n, k in zip(shape, keep)]
    x = t(np.zeros([2] * lead + shape))
    y = t(np.zeros(small))
    (gy,) = grad(core.add(x, y).sum(), [y])
    assert gy is not None and tuple(gy.shape) == tuple(small)
    copies = np.prod([2] * lead + shape) / np.prod(small)
    assert np.all(gy.numpy() == copies)


def test_grad_mode_is_per_thread() -> None:
    import threading

    seen: list[bool] = []
    with no_grad():
        worker = threading.Thread(target=lambda: seen.append(is_grad_enabled()))
        worker.start()
        worker.join()
        seen.append(is_grad_enabled())
    assert seen == [True, False]


# -- backward(inputs=...), grad() and hooks against PyTorch's behaviour -------------------------


def test_backward_with_inputs_accumulates_into_those_only() -> None:
    x, w = t([1.0, 2.0]), t([3.0, 4.0])
    h = x * w
    y = (h * h).sum()
    y.backward(inputs=[x], retain_graph=True)
    assert x.grad is not None and x.grad.tolist() == [18.0, 64.0] and w.grad is None
    y.backward(inputs=[h], retain_graph=True)  # a non-leaf gets its .grad too, as in PyTorch
    assert h.grad is not None and h.grad.tolist() == [6.0, 16.0] and x.grad.tolist() == [18.0, 64.0]
    y.backward(inputs=x, retain_graph=True)  # one tensor
    assert x.grad.tolist() == [36.0, 128.0]
    x.grad = None
    y.backward(inputs=[x, x], retain_graph=True)  # each input once
    assert _values(x.grad) == [18.0, 64.0]
    z = t([1.0])
    y.backward(inputs=[z], retain_graph=True)  # not used: its .grad stays None, no error
    assert z.grad is None


def _values(g: Tensor | None) -> Any:
    return None if g is None else g.tolist()


def test_backward_with_inputs_runs_the_leaf_hooks_and_retain_grad() -> None:
    x = t([1.0, 2.0])
    h = x * 3
    h.retain_grad()
    x.register_hook(lambda g: g * 10)
    h.sum().backward(inputs=[x])
    assert x.grad is not None and x.grad.tolist() == [30.0, 30.0]
    assert h.grad is not None and h.grad.tolist() == [1.0, 1.0] and h.retains_grad and not x.retains_grad


def test_backward_and_grad_refuse_empty_inputs() -> None:
    y = (t([1.0]) * 2).sum()
    with pytest.raises(AutogradError) as info:
        y.backward(inputs=[], retain_graph=True)
    assert str(info.value) == "`inputs` argument to `backward()` cannot be empty. Pass the tensors to differentiate, or None"
    with pytest.raises(AutogradError, match=r"^`inputs` argument to `grad\(\)` cannot be empty"):
        grad(y, [])


def test_inputs_must_require_grad() -> None:
    y = (t([1.0]) * 2).sum()
    with pytest.raises(AutogradError) as info:
        y.backward(inputs=[tensor([1.0])])
    assert str(info.value) == (
        "One of the differentiated Tensors does not require grad (input 0). Set requires_grad=True on it "
        "before computing the outputs"
    )


def test_grad_materializes_unused_inputs_as_zeros() -> None:
    x, z = t([1.0]), t([2.0, 3.0])
    gx, gz = grad((x * 2).sum(), [x, z], materialize_grads=True)
    assert gx is not None and gx.tolist() == [2.0]
    assert gz is not None and gz.tolist() == [0.0, 0.0] and gz.dtype is F64
    with pytest.raises(ValueError) as info:
        grad((x * 2).sum(), [z], allow_unused=False, materialize_grads=True)
    assert str(info.value) == (
        "Expected allow_unused to be True or not passed when materialize_grads=True, but got: "
        "allow_unused=False. Drop allow_unused=False"
    )


def test_a_hook_may_not_change_the_shape_or_dtype() -> None:
    x = t([1.0, 2.0])
    x.register_hook(lambda g: g.sum())
    with pytest.raises(AutogradError) as info:
        (x * 2).sum().backward()
    assert str(info.value) == (
        "hook '<lambda>' has changed the size of value (was [2] got []): a hook must return None or a "
        "gradient of the same shape and dtype as the one it was given"
    )

    def to_float32(g: Tensor) -> Tensor:
        return g.to(ScalarType.float32)

    y = x * 3
    y.register_hook(to_float32)
    with pytest.raises(AutogradError, match=r"^hook 'to_float32' has changed the type of value \(was float64 got float32\)"):
        y.sum().backward()


def test_an_assigned_grad_must_fit_the_tensor() -> None:
    x = t([1.0, 2.0])
    x.grad = tensor([0.5, 0.5], dtype=F64)
    assert _values(x.grad) == [0.5, 0.5]
    with pytest.raises(RuntimeError) as info:
        x.grad = tensor([1.0, 2.0, 3.0], dtype=F64)
    assert str(info.value) == (
        "attempting to assign a gradient of size '[3]' to a tensor of size '[2]'. Please ensure that the "
        "gradient and the tensor have the same size"
    )
    with pytest.raises(RuntimeError, match="^attempting to assign a gradient of dtype 'float32' to a tensor of dtype 'float64'"):
        x.grad = tensor([1.0, 2.0])
    with pytest.raises(TypeError, match="^assigned grad expected to be a Tensor or None but got grad of type int$"):
        x.grad = 3  # type: ignore[assignment]
    assert _values(x.grad) == [0.5, 0.5]
    x.grad = None
    assert x.grad is None


# Note [Stealing a gradient]: a leaf's first .grad is a tensor nothing else sees.


def test_leaves_given_one_gradient_get_their_own_contiguous_copies() -> None:
    a = tensor([1.0, 2.0], requires_grad=True)
    b = tensor([3.0, 4.0], requires_grad=True)
    (a + b).sum().backward()  # add's backward hands the same (expanded) gradient to both
    assert a.grad is not None and b.grad is not None
    assert a.grad is not b.grad and a.grad.is_contiguous() and a.grad.stride() == (1,)
    a.grad.zero_()
    assert b.grad.tolist() == [1.0, 1.0]


def test_a_gradient_given_to_backward_or_kept_by_a_hook_is_copied_into_grad() -> None:
    given_gradient = tensor([1.0, 1.0])
    x = tensor([1.0, 2.0], requires_grad=True)
    x.backward(given_gradient)
    assert x.grad is not None and x.grad is not given_gradient
    given_gradient.zero_()
    assert x.grad.tolist() == [1.0, 1.0]
    kept: list[Tensor] = []
    y = tensor([[1.0, 2.0]], requires_grad=True)
    y.register_hook(lambda g: kept.append(g))
    (y @ tensor([[3.0], [4.0]])).sum().backward()
    kept[0].zero_()
    assert y.grad is not None and y.grad.tolist() == [[3.0, 4.0]]


def test_a_fresh_gradient_becomes_grad_without_a_copy() -> None:
    w = tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    x = tensor([[1.0, 1.0]])
    loss = (x @ w).sum()
    with typedops.profile() as prof:
        loss.backward()
    assert "core::clone" not in prof.counts()
    assert w.grad is not None and w.grad.tolist() == [[1.0, 1.0], [1.0, 1.0]]


# Note [Gradient layout contract]: a leaf's first .grad has the leaf's layout.


def test_a_permuted_leaf_gets_a_gradient_of_its_strides() -> None:
    x = core.permute(core.arange(24.0).view([2, 3, 4]), [2, 0, 1]).detach().requires_grad_()
    (x * x).sum().backward()  # mul's result, and so its gradient, keeps x's layout: stolen
    assert x.grad is not None and x.grad.stride() == x.stride() == (1, 12, 4)
    assert x.grad.tolist() == (x.detach() * 2).tolist()
    y = core.permute(core.arange(24.0).view([2, 3, 4]), [2, 0, 1]).detach().requires_grad_()
    y.sum().backward()  # sum's gradient is expanded (strides 0): copied into y's strides
    assert y.grad is not None and y.grad.stride() == (1, 12, 4) and y.grad.tolist() == core.ones([4, 2, 3]).tolist()
    z = core.slice(core.arange(8.0), 0, 0, None, 2).detach().requires_grad_()  # not dense: contiguous
    (z * z).sum().backward()
    assert z.grad is not None and z.grad.stride() == (1,) and z.grad.tolist() == [0.0, 4.0, 8.0, 12.0]
    w = core.transpose(core.arange(6.0).view([2, 3]), 0, 1).detach().requires_grad_()
    (w * w).sum().backward(create_graph=True)  # under create_graph: a recorded copy in w's strides
    assert w.grad is not None and w.grad.stride() == (1, 3) and w.grad.grad_fn is not None


def test_a_retained_gradient_is_a_copy() -> None:
    a = tensor([1.0, 2.0], requires_grad=True)
    b = a + 1.0  # add's backward hands b's gradient on to a unchanged
    b.retain_grad()
    (b * 3.0).sum().backward()
    assert b.grad is not None and b.grad.tolist() == [3.0, 3.0]
    b.grad.zero_()
    assert a.grad is not None and a.grad.tolist() == [3.0, 3.0]
