"""The tensor (issue 6): storage, strides, views, the version counter, memory formats
and meta tensors. Op kernels are tested in test_core_kernels.py; here only the tensor
and the helpers kernels build on."""

from __future__ import annotations

import math
import subprocess
import sys
from typing import Final

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from typedops import Device, DispatchKey, DispatchKeySet, MemoryFormat, ScalarType, Tensor, core, tensor
from typedops.tensor import Storage
from typedops.tensor import (
    broadcast_shapes,
    contiguous_strides,
    dense_strides_like,
    elementwise_strides,
    infer_size,
    is_non_overlapping_and_dense,
    is_channels_last_strides,
    strides_for_format,
    suggest_memory_format,
    view_strides,
    wrap_dim,
)
from typedops.tensor import (
    array_of,
    bump_version,
    empty_meta,
    empty_tensor,
    make_view,
    resize_,
    view_with,
    wrapped_scalar,
)

CL = MemoryFormat.channels_last
CL3 = MemoryFormat.channels_last_3d
CPU = Device("cpu")


def test_tensor_factory_and_basic_properties() -> None:
    t = tensor([[1, 2, 3], [4, 5, 6]])
    assert (t.shape, t.stride(), t.storage_offset(), t.dtype) == ((2, 3), (3, 1), 0, ScalarType.int64)
    assert (t.ndim, t.dim(), t.numel(), t.size(), t.size(-1), t.stride(0)) == (2, 2, 6, (2, 3), 3, 3)
    assert t.device == CPU and not t.is_meta and not t.requires_grad
    assert t.keys == DispatchKeySet([DispatchKey.CPU, DispatchKey.ADInplaceOrView])
    assert t.key_bits == int(t.keys)
    assert tensor(2.5).dtype is ScalarType.float32 and tensor(2.5).item() == 2.5
    assert tensor([True]).dtype is ScalarType.bool
    assert tensor(np.array([1.0], dtype=np.float64)).dtype is ScalarType.float64
    assert repr(t) == "tensor([[1, 2, 3], [4, 5, 6]], dtype=int64)"


def test_constructor_keeps_its_old_form() -> None:
    t = Tensor(np.array([[1.0, 2.0]], dtype=np.float32), dtype=ScalarType.float32, shape=(1, 2), device=CPU)
    assert t.tolist() == [[1.0, 2.0]] and t.stride() == (2, 1)
    m = Tensor(None, dtype=ScalarType.int32, shape=(3,), device=Device("meta"))
    assert m.is_meta and m.keys == DispatchKeySet([DispatchKey.Meta, DispatchKey.ADInplaceOrView])
    with pytest.raises(ValueError, match=r"^a meta tensor has no data, and every other tensor has data$"):
        Tensor(None, dtype=ScalarType.int32, shape=(3,), device=CPU)


def test_from_numpy_shares_memory_and_strides() -> None:
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = Tensor.from_numpy(a.T)
    assert t.shape == (4, 3) and t.stride() == (1, 4) and not t.is_contiguous()
    t.numpy()[0, 1] = 100.0
    assert a[1, 0] == 100.0
    assert Tensor.from_numpy(a[:, 1::2]).stride() == (4, 2)
    with pytest.raises(ValueError) as info:
        Tensor.from_numpy(a[::-1])
    assert str(info.value) == (
        "the numpy array has strides (-16, 4) (bytes) that are negative or not a multiple of its "
        "item size; pass a copy (array.copy())"
    )
    with pytest.raises(TypeError, match=r"^numpy dtype 'float128' has no typedops dtype; use one of "):
        Tensor.from_numpy(np.zeros(1, dtype=np.longdouble))


def test_views_share_storage_offset_and_version() -> None:
    base = tensor([[0, 1, 2], [3, 4, 5]])
    row = make_view(base, (3,), (1,), 3)
    col = make_view(base, (2,), (3,), 1)
    assert row.tolist() == [3, 4, 5] and col.tolist() == [1, 4]
    assert row.storage is base.storage is col.storage
    row.numpy()[1] = 40
    assert base.tolist() == [[0, 1, 2], [3, 40, 5]] and col.tolist() == [1, 40]
    assert base._version == 0
    bump_version(row)
    assert base._version == col._version == row._version == 1
    assert tensor([1])._version == 0  # a separate storage has its own counter


def test_view_with_is_make_view_at_the_inputs_offset() -> None:
    base = tensor([[0, 1, 2], [3, 4, 5]])
    row = make_view(base, (3,), (1,), 3)
    viewed = view_with(row, (3, 1), (1, 1))
    assert (viewed.shape, viewed.stride(), viewed.storage_offset()) == ((3, 1), (1, 1), 3)
    assert viewed.storage is base.storage and viewed.tolist() == [[3], [4], [5]]
    assert viewed.keys == row.keys and viewed.grad_fn is None
    # It sets a Tensor's fields itself, as make_view does: every slot must be set (a
    # field added to Tensor and not set here would raise AttributeError when read).
    owned = Tensor._from_array(np.zeros((2, 2), np.float32), ScalarType.float32)  # no storage yet
    for made in (viewed, view_with(owned, (4,), (1,)), make_view(owned, [4], [1], 0)):
        assert [name for name in Tensor.__slots__ if name != "__dict__" and not hasattr(made, name)] == []
    assert owned.storage is view_with(owned, (4,), (1,)).storage


def test_channels_last_strides_from_the_issue() -> None:
    shape = (1, 64, 5, 4)
    assert strides_for_format(shape, CL) == (1280, 1, 256, 64)
    x = empty_tensor(shape, ScalarType.float32, CPU, CL)
    assert x.stride() == (1280, 1, 256, 64)
    assert not x.is_contiguous()
    assert x.is_contiguous(memory_format=CL) and x.is_contiguous(MemoryFormat.channels_last)
    assert not x.is_contiguous(memory_format=CL3)
    y = empty_tensor(shape, ScalarType.float32, CPU)
    assert y.is_contiguous() and not y.is_contiguous(memory_format=CL)
    assert strides_for_format((2, 3, 4, 5, 6), CL3) == (360, 1, 90, 18, 3)


@pytest.mark.parametrize(
    ("shape", "strides", "contiguous", "channels_last"),
    [
        ((2, 3, 1, 1), (3, 1, 1, 1), True, True),  # size-1 dims never break either layout
        ((1, 1, 4, 4), (16, 16, 4, 1), True, True),
        ((2, 3, 4, 5), (60, 1, 15, 3), False, True),
        ((2, 3, 4, 5), (60, 20, 5, 1), True, False),
        ((0, 3, 2, 2), (12, 4, 2, 1), True, False),
        ((2, 3), (1, 2), False, False),
    ],
)
def test_is_contiguous_rules_match_pytorch(
    shape: tuple[int, ...], strides: tuple[int, ...], contiguous: bool, channels_last: bool
) -> None:
    t = make_view(empty_tensor((200,), ScalarType.float32, CPU), shape, strides, 0)
    assert t.is_contiguous() is contiguous
    assert t.is_contiguous(memory_format=CL) is channels_last
    assert is_channels_last_strides(shape, strides, CL) is channels_last


def test_memory_format_errors() -> None:
    with pytest.raises(RuntimeError) as info:
        strides_for_format((2, 3), CL)
    assert str(info.value) == "required rank 4 tensor to use channels_last format, but the shape [2, 3] has rank 2"
    with pytest.raises(ValueError, match=r"^is_contiguous\(\) takes a layout; preserve_format is not one$"):
        tensor([1]).is_contiguous(memory_format=MemoryFormat.preserve_format)
    assert suggest_memory_format((2, 3, 4, 5), (60, 1, 15, 3)) is CL
    assert suggest_memory_format((2, 3, 1, 1), (3, 1, 1, 1)) is MemoryFormat.contiguous_format


def test_preserve_format_keeps_dense_strides_and_the_order_of_others() -> None:
    # As PyTorch's empty_like: a permutation of a dense layout is kept stride for stride;
    # a sliced tensor's dims keep their order, laid out densely (values checked by
    # tests/test_tensor_compat.py against torch).
    assert is_non_overlapping_and_dense((4, 2, 3), (1, 12, 4)) and is_non_overlapping_and_dense((0, 5), (7, 3))
    assert not is_non_overlapping_and_dense((4, 2), (2, 8)) and not is_non_overlapping_and_dense((2, 2), (1, 1))
    assert dense_strides_like((4, 2, 2), (2, 24, 8)) == (1, 8, 4)
    assert dense_strides_like((2, 1, 1), (2, 4, 2)) == (1, 2, 1)
    permuted = core.arange(24.0).view([2, 3, 4]).permute([2, 0, 1])
    copy = permuted.clone()
    assert copy.stride() == (1, 12, 4) and copy.tolist() == permuted.tolist()
    assert permuted.clone(memory_format=MemoryFormat.contiguous_format).stride() == (6, 3, 1)
    sliced = core.slice(permuted, 0, 0, None, 2)
    assert sliced.clone().stride() == (1, 6, 2) and sliced.clone().tolist() == sliced.tolist()


def test_elementwise_strides_follow_torchs_tensor_iterator() -> None:
    # Note [Element-wise result strides] (each case checked against torch by hand; the
    # random ones by tests/test_core_layout_compat.py).
    cl = (60, 1, 15, 3)  # channels-last strides of (2, 3, 4, 5)
    assert elementwise_strides((2, 3, 4, 5), [((2, 3, 4, 5), cl)]) == cl
    assert elementwise_strides((2, 3, 4, 5), [((2, 3, 4, 5), cl), ((), ())]) == cl  # x * 2
    assert elementwise_strides((2, 3, 4, 5), [((2, 3, 4, 5), cl), ((5,), (1,))]) == cl  # broadcast
    # Where the inputs disagree the first wins (numpy's C order would win instead).
    assert elementwise_strides((3, 4), [((3, 4), (1, 3)), ((3, 4), (4, 1))]) == (1, 3)
    assert elementwise_strides((3, 4), [((3, 4), (4, 1)), ((3, 4), (1, 3))]) == (4, 1)
    # A broadcast dim leaves the comparison to the next input.
    assert elementwise_strides((3, 4), [((3, 1), (1, 1)), ((3, 4), (1, 3))]) == (1, 3)
    # Same shape: all contiguous is row-major, even when also channels-last ...
    assert elementwise_strides((2, 1, 4, 5), [((2, 1, 4, 5), (20, 1, 5, 1))]) == (20, 20, 5, 1)
    # ... and the same dense strides are kept stride for stride, size-1 dims included.
    assert elementwise_strides((4, 1, 3), [((4, 1, 3), (1, 7, 4))] * 2) == (1, 7, 4)
    # Otherwise sorted: equal strides put the larger dim outside; sliced inputs laid out densely.
    assert elementwise_strides((2, 1, 3), [((2, 1, 3), (3, 1, 1)), ((3,), (1,))]) == (3, 1, 1)
    assert elementwise_strides((4, 3), [((4, 3), (1, 8))]) == (1, 4)
    assert elementwise_strides((3, 4), []) == (4, 1) and elementwise_strides((5,), [((5,), (2,))]) == (1,)
    # Not row-major: each stride the product of the sizes inside, a size 0 included.
    assert elementwise_strides((2, 0, 3), [((2, 0, 3), (6, 1, 2)), ((3,), (1,))]) == (0, 1, 0)


def test_meta_tensors_have_no_data() -> None:
    m = tensor([[1.0, 2.0]], device="meta")
    assert m.is_meta and m.shape == (1, 2) and m.dtype is ScalarType.float32 and m.stride() == (2, 1)
    assert m.device == Device("meta")
    assert repr(m) == "tensor(..., shape=(1, 2), dtype=float32, device='meta')"
    with pytest.raises(RuntimeError) as info:
        m.numpy()
    assert str(info.value) == "a meta tensor has no data; move it to a real device, or read .shape/.dtype"
    with pytest.raises(RuntimeError):
        m.tolist()
    big = empty_meta((10**6, 10**6), ScalarType.float64)  # no memory is allocated
    assert big.numel() == 10**12 and big.storage.data is None


def test_resize_grows_storage_and_keeps_views_in_step() -> None:
    t = tensor([1.0, 2.0])
    storage = t.storage
    resize_(t, (2, 2))
    assert t.shape == (2, 2) and t.stride() == (2, 1) and t.storage is storage and storage.size == 4
    assert t.numpy().reshape(-1)[:2].tolist() == [1.0, 2.0]
    resize_(t, (1,))
    assert t.tolist() == [1.0] and storage.size == 4  # shrinking keeps the buffer


def test_wrapped_scalars_keep_the_exact_value() -> None:
    w = wrapped_scalar(0.1, CPU)
    assert w.is_wrapped_number and w.dtype is ScalarType.float64 and w.item() == 0.1 and w.shape == ()
    assert wrapped_scalar(3, Device("meta")).is_meta
    assert not tensor(1).is_wrapped_number


def _wrapped_fields(w: Tensor) -> tuple[object, ...]:
    """Everything a wrapped number is: its slots, its dict, its array's bytes and dtype."""
    array = array_of(w)
    return (w.shape, w.stride(), w.storage_offset(), w.dtype, w.device, w.key_bits, w.grad_fn, w._storage,
            w.__dict__, type(array), array.dtype, array.shape, array.tobytes(), array.flags.c_contiguous)  # fmt: skip


@given(st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats() | st.complex_numbers())
def test_wrapped_scalar_fast_path_makes_what_the_general_path_makes(value: complex) -> None:
    """Note [Wrapped numbers on the fast path]: an exact bool/int/float/complex on the layer's
    CPU device (the table lookup) gives the tensor an equal Device object (isinstance tests)
    gives, bit for bit; so does a subclass (numpy.float64 is a float)."""
    from typedops.tensor import CPU as LAYER_CPU
    from typedops.tensor._tensor import _wrapped_scalar_any  # pyright: ignore[reportPrivateUsage] -- the path pinned

    fast = wrapped_scalar(value, LAYER_CPU)
    assert fast.is_wrapped_number and fast.device is LAYER_CPU
    assert _wrapped_fields(fast) == _wrapped_fields(wrapped_scalar(value, Device("cpu")))
    assert _wrapped_fields(fast) == _wrapped_fields(_wrapped_scalar_any(value, LAYER_CPU))
    if type(value) is float:
        assert _wrapped_fields(fast) == _wrapped_fields(wrapped_scalar(np.float64(value), LAYER_CPU))
    expected = {bool: np.bool_, int: np.int64, float: np.float64, complex: np.complex128}[type(value)]
    assert array_of(fast).dtype == expected and array_of(fast).tobytes() == np.array(value, dtype=expected).tobytes()


@pytest.mark.parametrize("device", ["layer cpu", "cpu", "meta"])
@pytest.mark.parametrize("value", [2**63, -(2**63) - 1])
def test_wrapped_scalar_refuses_an_int_beyond_int64_on_every_path(value: int, device: str) -> None:
    from typedops.tensor import CPU as LAYER_CPU
    from typedops.vocabulary import ArgumentOverflowError

    with pytest.raises(ArgumentOverflowError) as info:
        wrapped_scalar(value, LAYER_CPU if device == "layer cpu" else Device(device))
    assert str(info.value) == (
        "a Python int of 64 bits beside a tensor (an operand of a + 2, a Scalar argument) is outside "
        "int64's range (-2**63 to 2**63 - 1), the dtype it is held in; pass an int within that range, or a float"
    )


@pytest.mark.parametrize("dtype", [t for t in ScalarType if t is not ScalarType.bfloat16])
def test_numpy_dtype_is_one_object_per_dtype(dtype: ScalarType) -> None:
    from typedops.tensor import numpy_dtype

    found = numpy_dtype(dtype)
    assert found is numpy_dtype(dtype) and found == np.dtype(dtype.name) and isinstance(found, np.dtype)


def test_numpy_dtype_refuses_bfloat16_every_time() -> None:
    from typedops.tensor import numpy_dtype
    from typedops.vocabulary import ArgumentError

    for _ in range(2):  # the table never caches a refusal
        with pytest.raises(ArgumentError, match="^dtype bfloat16 has no numpy storage yet$"):
            numpy_dtype(ScalarType.bfloat16)


def test_stride_helpers() -> None:
    assert contiguous_strides((2, 0, 3)) == (3, 3, 1)
    assert broadcast_shapes((3, 1), (4,)) == (3, 4)
    assert infer_size((-1, 3), 6) == (2, 3)
    assert view_strides((2, 3), (3, 1), (6,)) == (1,)
    assert view_strides((2, 3), (1, 2), (6,)) is None
    assert view_strides((4, 1, 3), (3, 3, 1), (2, 2, 3)) == (6, 3, 1)
    assert wrap_dim(-1, 0) == 0
    with pytest.raises(RuntimeError, match=r"^only one dimension can be inferred$"):
        infer_size((-1, -1), 4)
    with pytest.raises(IndexError) as info:
        wrap_dim(3, 3)
    assert str(info.value) == "Dimension out of range (expected to be in range of [-3, 2], but got 3)"


@given(st.lists(st.integers(-2, 4), max_size=4), st.integers(0, 40))
def test_infer_size_fills_one_minus_one_or_refuses(shape: list[int], numel: int) -> None:
    """The shortcut for shapes without -1 (infer_size) agrees with the rule: a shape is
    returned as a tuple when its one -1 (or none) can be filled to hold numel elements,
    else the call raises; (-2, -2) must not pass for 4 elements, nor (-1, 0) for 0."""
    inferred = [i for i, n in enumerate(shape) if n == -1]
    known = math.prod(n for n in shape if n != -1)
    fits = (
        all(n >= -1 for n in shape)
        and len(inferred) <= 1
        and (known == numel if not inferred else known != 0 and numel % known == 0)
    )
    if not fits:
        with pytest.raises(RuntimeError):
            infer_size(shape, numel)
        return
    result = infer_size(shape, numel)
    assert type(result) is tuple and math.prod(result) == numel
    assert [n for i, n in enumerate(result) if i not in inferred] == [n for n in shape if n != -1]


def test_storage_is_flat() -> None:
    with pytest.raises(ValueError, match=r"^a storage buffer is one-dimensional, not 2-dimensional$"):
        Storage(np.zeros((2, 2)), 4)


def test_import_does_not_load_numpy() -> None:
    code = "import sys, typedops, typedops.core.kernels; print('numpy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# -- Note [Cached numpy view] and Note [Wrap and unwrap] --------------------------------------
def test_the_numpy_view_is_cached_and_numpy_hands_out_a_new_array_object() -> None:
    t = tensor([1.0, 2.0, 3.0])
    assert array_of(t) is array_of(t)
    first, second = t.numpy(), t.numpy()
    assert first is not second and np.shares_memory(first, second)
    first.shape = (3, 1)  # reshaping what numpy() returned cannot corrupt the cache
    assert t.numpy().shape == (3,) and array_of(t).shape == (3,)


def test_writes_through_views_show_in_every_cached_view() -> None:
    base = tensor([[1.0, 2.0], [3.0, 4.0]])
    col = make_view(base, (2,), (2,), 1)
    assert array_of(base).tolist() == [[1.0, 2.0], [3.0, 4.0]] and array_of(col).tolist() == [2.0, 4.0]
    array_of(col)[...] = 0.0
    assert base.tolist() == [[1.0, 0.0], [3.0, 0.0]]
    array_of(base)[1, 1] = 9.0
    assert col.tolist() == [0.0, 9.0]


def test_resize_invalidates_the_cached_views_of_the_tensor_and_of_its_views() -> None:
    t = tensor([1.0, 2.0])
    view = make_view(t, (1,), (1,), 1)
    old_t, old_view = array_of(t), array_of(view)
    resize_(t, (2, 2))  # grows: the storage gets a new buffer
    assert array_of(t) is not old_t and array_of(t).shape == (2, 2)
    assert array_of(view) is not old_view
    array_of(t)[0, 1] = 7.0
    assert view.tolist() == [7.0]  # the view reads the new buffer, not the old one
    assert old_view.tolist() == [2.0]  # the old array is not the tensor's any more
    resize_(t, (3,))  # shrinks within the buffer: only t's geometry changes
    assert array_of(t).shape == (3,) and t.tolist() == [1.0, 7.0, 0.0]


def test_from_array_wraps_without_copying_and_array_of_unwraps() -> None:
    array = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = Tensor._from_array(array, ScalarType.float32, CPU)
    assert array_of(t) is array and t.shape == (2, 3) and t.stride() == (3, 1)
    assert t.storage_offset() == 0 and t.storage.size == 6 and t._version == 0
    assert t.keys == DispatchKeySet((DispatchKey.CPU, DispatchKey.ADInplaceOrView))
    assert t.storage.data is not None and np.shares_memory(t.storage.data, array)
    assert t.storage.data.shape == (6,)  # the flat view is made on first read
    view = make_view(t, (3,), (1,), 3)
    assert view.tolist() == [3.0, 4.0, 5.0] and view.storage is t.storage


def test_key_bits_are_the_same_whichever_device_object_names_the_device() -> None:
    # The constructors take a shortcut for the tensor layer's own CPU device object;
    # any other Device("cpu"), or another device, takes the table: the same bits.
    from typedops.tensor import CPU as LAYER_CPU, DEVICE_KEY_BITS

    array = np.zeros(2, dtype=np.float32)
    cpu_bits = DispatchKeySet((DispatchKey.CPU, DispatchKey.ADInplaceOrView))
    for device in (LAYER_CPU, Device("cpu"), Device.parse("cpu")):
        t = Tensor._from_array(array, ScalarType.float32, device)
        assert t.keys == cpu_bits and t.key_bits == DEVICE_KEY_BITS["cpu"]
        assert make_view(t, (1,), (1,), 1).keys == cpu_bits
    meta = Tensor._from_array(array, ScalarType.float32, Device("meta"))
    assert meta.keys == DispatchKeySet((DispatchKey.Meta, DispatchKey.ADInplaceOrView))
    assert make_view(meta, (1,), (1,), 1).keys == meta.keys


def test_parsing_a_device_type_gives_its_canonical_device() -> None:
    """Note [Canonical devices] in typedops/vocabulary/_dtypes.py: the CPU device parsed
    from text or from an equal Device is the tensor layer's own, so the constructors'
    ``device is CPU`` shortcut applies; an indexed device is a device of its own."""
    from typedops.tensor import CPU as LAYER_CPU

    assert Device.parse("cpu") is LAYER_CPU and Device.parse(Device("cpu")) is LAYER_CPU
    assert Device.parse("meta") is Device.parse(Device("meta")) is Device.parse("meta")
    assert Device.parse("privateuseone") is Device.parse("privateuseone")
    indexed = Device("cpu", 0)
    assert Device.parse(indexed) is indexed and Device.parse("cpu:0") == indexed and str(Device.parse("cpu:0")) == "cpu:0"
    assert Device.parse("cpu:0") is not LAYER_CPU


def test_array_of_a_meta_tensor_raises() -> None:
    with pytest.raises(RuntimeError) as info:
        array_of(empty_meta((2,), ScalarType.float32))
    assert str(info.value) == "a meta tensor has no data; move it to a real device, or read .shape/.dtype"


def test_plain_tensors_default_the_functionality_fields_without_a_dict() -> None:
    t = tensor([1.0])
    assert t.grad is None and t.grad_fn is None and t._autograd_meta is None
    assert t._batch_level is None and t._batch_value is None
    assert not t.requires_grad and not t.is_wrapped_number
    assert not hasattr(t, "__dict__") or t.__dict__ == {}
    t.grad = tensor([2.0])
    assert t.grad.tolist() == [2.0] and tensor([1.0]).grad is None
    assert Tensor(None, dtype=ScalarType.float32, shape=(1,), device=Device("meta"), requires_grad=True).requires_grad


def test_grad_fn_is_a_slot_every_constructor_sets() -> None:
    """grad_fn is a slot (the one functionality field that is): plain tensors, views and
    wrapped arrays read None, and a recorded op's result gets its node without a dict."""
    from typedops import core

    t = tensor([1.0, 2.0])
    made = [t, make_view(t, (1,), (1,), 1), Tensor._from_array(np.ones(2, np.float32), ScalarType.float32)]
    assert all(m.grad_fn is None for m in made) and "grad_fn" in Tensor.__slots__
    result = core.mul(tensor([1.0, 2.0], requires_grad=True), t)
    assert result.grad_fn is not None and result.grad_fn.name() == "MulBackward0"
    assert not hasattr(result, "__dict__") or result.__dict__ == {}

def test_empty_views_and_offsets_get_their_own_arrays() -> None:
    t = tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    empty = make_view(t, (0, 3), (3, 1), 6)
    assert array_of(empty).shape == (0, 3)
    strided = make_view(t, (2,), (3,), 2)
    assert strided.tolist() == [3.0, 6.0]


def test_truth_of_tensors() -> None:
    assert bool(tensor([1.0])) and not bool(tensor(0))
    with pytest.raises(RuntimeError) as info:
        bool(tensor([1.0, 2.0]))
    assert str(info.value) == (
        "Boolean value of Tensor with more than one value is ambiguous; compare .tolist(), or "
        "reduce the tensor to one element first"
    )


def test_copies_rebuild_the_cached_view_over_their_own_storage() -> None:
    import copy
    import pickle

    base = tensor([[1.0, 2.0], [3.0, 4.0]])
    col = make_view(base, (2,), (2,), 1)
    array_of(col)  # cached
    for clone in (copy.deepcopy(col), pickle.loads(pickle.dumps(col))):
        assert clone.tolist() == [2.0, 4.0] and clone.storage is not base.storage
        clone.storage.data[1] = 9.0  # type: ignore[index]
        assert clone.tolist() == [9.0, 4.0] and col.tolist() == [2.0, 4.0]
    shallow = copy.copy(col)
    assert shallow.storage is col.storage and shallow.tolist() == [2.0, 4.0]


def test_a_wrapped_array_gets_its_storage_when_first_needed() -> None:
    t = Tensor._from_array(np.array([1.0, 2.0], dtype=np.float32), ScalarType.float32, CPU)
    def has_storage(x: Tensor) -> bool:
        return x._storage is not None

    assert not has_storage(t) and t._version == 0 and not t.is_meta
    view = make_view(t, (1,), (1,), 1)  # a view needs the storage: made now, and shared
    assert has_storage(t) and view.storage is t.storage and t.storage.size == 2
    u = Tensor._from_array(np.array([1.0], dtype=np.float32), ScalarType.float32, CPU)
    bump_version(u)
    assert u._version == 1 and u.storage.version == 1
    w = Tensor._from_array(np.array([1.0, 2.0], dtype=np.float32), ScalarType.float32, CPU)
    resize_(w, (3,))
    assert w.tolist() == [1.0, 2.0, 0.0] and w.storage.size == 3


def _slot_state(t: Tensor) -> dict[str, object]:
    """Every slot of ``t`` (a missing one as "unset"), the array by its dtype, shape, flags and bytes."""
    state: dict[str, object] = {}
    for name in Tensor.__slots__:
        value = getattr(t, name, "unset") if name != "__dict__" else getattr(t, "__dict__", {})
        if isinstance(value, np.ndarray):
            value = (value.dtype, value.shape, value.flags.c_contiguous, value.flags.writeable, value.tobytes())
        state[name] = value
    return state


_SIZES = st.lists(st.integers(0, 5), max_size=3)


@given(_SIZES | _SIZES.map(tuple))
def test_zeros_float32_makes_what_from_array_makes_of_numpys_zeros(size: list[int] | tuple[int, ...]) -> None:
    """Note [Zeros in one frame]: the same tensor, slot for slot, as wrapping numpy's zeros;
    a shape of exact ints, and an array of its own."""
    from typedops.tensor import CPU as LAYER_CPU, zeros_float32

    made = zeros_float32(size)
    expected = Tensor._from_array(np.zeros(size, np.float32), ScalarType.float32)
    assert _slot_state(made) == _slot_state(expected)
    assert made._dtype is ScalarType.float32 and made._device is LAYER_CPU
    assert all(type(n) is int for n in made.shape + made.stride())
    again = zeros_float32(size)
    assert not np.shares_memory(array_of(made), array_of(again))


@pytest.mark.parametrize("size", [[-1], (-2,), [2, -1], [2.5], [True], [np.int64(3)], [2**70], [2**62]])
def test_zeros_float32_raises_what_numpy_raises_and_takes_what_it_takes(size: list[object]) -> None:
    from typedops.tensor import zeros_float32

    try:
        expected = Tensor._from_array(np.zeros(size, np.float32), ScalarType.float32)  # type: ignore[arg-type]
    except (ValueError, TypeError) as error:
        with pytest.raises(type(error)) as info:
            zeros_float32(size)  # type: ignore[arg-type]
        assert str(info.value) == str(error)
    else:
        made = zeros_float32(size)  # type: ignore[arg-type]
        assert _slot_state(made) == _slot_state(expected) and all(type(n) is int for n in made.shape)


def test_a_wrapped_arrays_storage_keeps_its_cached_view() -> None:
    # _from_array stores no _array_buffer: storage_of sets it with the storage, so the
    # cached view stays valid (no rebuild) and an in-place write through a view shows.
    array = np.array([1.0, 2.0], dtype=np.float32)
    t = Tensor._from_array(array, ScalarType.float32, CPU)
    assert t.storage.buffer is array and array_of(t) is array
    view = make_view(t, (1,), (1,), 1)
    array_of(view)[0] = 5.0
    assert array_of(t) is array and t.tolist() == [1.0, 5.0]


@given(
    st.floats(-1e6, 1e6, width=32) | st.integers(-(2**31), 2**31 - 1) | st.booleans(),
    st.sampled_from([ScalarType.float32, ScalarType.float64, ScalarType.int64, ScalarType.bool]),
    st.sampled_from(["layer cpu", "cpu", "meta"]),
)
def test_from_array0_makes_what_from_array_makes_of_a_0_dim_array(value: float, dtype: ScalarType, where: str) -> None:
    """The 0-dim constructor a full reduction uses (no shape read, no strides lookup)."""
    from typedops.tensor import CPU as LAYER_CPU, numpy_dtype

    device = LAYER_CPU if where == "layer cpu" else Device(where)

    def fields(x: Tensor) -> tuple[object, ...]:
        return (x.shape, x.stride(), x.storage_offset(), x.dtype, x.device, x.key_bits, x.grad_fn,
                x._storage, x.requires_grad, x.is_wrapped_number)  # fmt: skip

    a, b = np.array(value, dtype=numpy_dtype(dtype)), np.array(value, dtype=numpy_dtype(dtype))
    zero, one = Tensor._from_array0(a, dtype, device), Tensor._from_array(b, dtype, device)
    assert fields(zero) == fields(one) and array_of(zero) is a and zero.shape == () == zero.stride()
    assert not hasattr(zero, "__dict__") or zero.__dict__ == {}
    assert zero.storage.buffer is a and array_of(zero) is a and zero._version == 0


# -- issue 11: overflow raises instead of wrapping ------------------------------------------------
@pytest.mark.parametrize("value", [2**63, -(2**63) - 1, 2**70])
def test_an_int_beyond_int64_raises_instead_of_wrapping(value: int) -> None:
    from typedops.vocabulary import TensorError

    with pytest.raises(TensorError) as info:
        tensor([value])
    assert str(info.value) == (
        f"Overflow when unpacking long: {value} does not fit in int64; pass a float tensor "
        "(dtype=float64) or a value between -2**63 and 2**63 - 1"
    )
    assert tensor([2**63 - 1]).tolist() == [2**63 - 1] and tensor([-(2**63)]).tolist() == [-(2**63)]


def test_an_int_too_long_to_print_raises_the_overflow_error() -> None:
    from typedops.vocabulary import TensorError

    with pytest.raises(TensorError) as info:  # it was a ValueError from str() of 5,001 digits
        tensor([1, 10**5000])
    assert str(info.value) == (
        "Overflow when unpacking long: an int of 16610 bits does not fit in int64; pass a float tensor "
        "(dtype=float64) or a value between -2**63 and 2**63 - 1"
    )


@pytest.mark.parametrize("device", ["cpu", "meta"])
def test_a_number_operand_beyond_int64_raises_the_argument_overflow_error(device: str) -> None:
    """``a + 10**400``: the operand becomes a wrapped number before any op's entry sees it
    (Note [Tensor operators]), so its error is the tensor layer's."""
    import typedops.core  # noqa: F401 -- installs the operators
    from typedops.vocabulary import ArgumentOverflowError

    a = tensor([1.0, 2.0], device=device)
    for value in (10**400, -(2**63) - 1):
        with pytest.raises(ArgumentOverflowError) as info:
            a + value  # noqa: B018 -- the operator under test
        assert str(info.value) == (
            f"a Python int of {value.bit_length()} bits beside a tensor (an operand of a + 2, a Scalar "
            "argument) is outside int64's range (-2**63 to 2**63 - 1), the dtype it is held in; pass an "
            "int within that range, or a float"
        )
        assert isinstance(info.value, OverflowError)
    assert (a * (2**63 - 1)).shape == (2,)


_TOO_BIG: Final = "Storage size calculation overflowed with sizes={size}: a tensor holds at most 2**63 - 1 bytes (its elements times their size)"


@pytest.mark.parametrize("size", [[2**64], [2**62, 4], [2**63 - 1, 2], [2**61]])
def test_a_meta_tensor_too_large_to_count_raises(size: list[int]) -> None:
    import typedops.core as core
    from typedops.vocabulary import TensorError

    message = _TOO_BIG.format(size=size)
    with pytest.raises(TensorError) as info:
        empty_tensor(size, ScalarType.float32, Device("meta"))
    assert str(info.value) == message
    if max(size) < 2**63:  # a size beyond int64 is refused as core::zeros's argument first
        with pytest.raises(TensorError) as info:
            core.zeros(size, device="meta")
        assert str(info.value) == message


@pytest.mark.parametrize("factory", ["zeros", "ones", "empty"])
@pytest.mark.parametrize("size", [[2**62], [2**61], [2**60, 8]])
def test_a_cpu_tensor_whose_bytes_overflow_int64_raises_as_torch(factory: str, size: list[int]) -> None:
    # numpy refuses such a size with a bare ValueError ("array is too big"); PyTorch counts
    # the bytes (elements times 4 for float32) and raises before allocating, as here.
    import typedops.core as core
    from typedops.vocabulary import TensorError

    with pytest.raises(TensorError) as info:
        getattr(core, factory)(size)
    assert str(info.value) == _TOO_BIG.format(size=size)
    assert isinstance(info.value, RuntimeError)


@pytest.mark.parametrize("factory", ["zeros", "ones", "empty", "randn"])
@pytest.mark.parametrize("size", [[2**62], [2**60, 8]])
def test_randn_counts_the_bytes_before_drawing_too(factory: str, size: list[int]) -> None:
    import typedops.core as core
    from typedops.vocabulary import TensorError

    with pytest.raises(TensorError, match="^Storage size calculation overflowed"):
        getattr(core, factory)(size)


_EMPTY_TOO_BIG: Final = (
    "a CPU tensor of shape {shape} has no elements, but its non-zero sizes times the element "
    "size ({nbytes} bytes) exceed 2**63 - 1, more than numpy, which holds typedops' CPU data, "
    "can index (PyTorch allows it); use device='meta' for shape-only work, or smaller sizes"
)


@pytest.mark.parametrize("factory", ["zeros", "ones", "empty", "randn"])
@pytest.mark.parametrize("size", [[2**62, 0], [0, 2**62], [2**31, 0, 2**31]])
def test_an_empty_cpu_tensor_numpy_cannot_index_is_refused_in_our_words(factory: str, size: list[int]) -> None:
    # numpy multiplies the non-zero sizes by the element size and refuses more than int64
    # with a bare ValueError; PyTorch makes the (empty) tensor. Meta tensors can be made.
    import typedops.core as core
    from typedops.vocabulary import UnsupportedError

    nbytes = 4 * int(np.prod([n or 1 for n in size], dtype=object))
    with pytest.raises(UnsupportedError) as info:
        getattr(core, factory)(size)
    assert str(info.value) == _EMPTY_TOO_BIG.format(shape=size, nbytes=nbytes)
    assert isinstance(info.value, NotImplementedError)
    assert getattr(core, factory)(size, device="meta").shape == tuple(size)
    expanded = core.zeros([1, 0]).expand([2**62, 0])  # a view of a tensor numpy holds: made, but its data...
    assert expanded.shape == (2**62, 0)
    with pytest.raises(UnsupportedError, match=r"^a CPU tensor of shape \[4611686018427387904, 0\] has no elements"):
        expanded + 1  # ... cannot be read as an array


def test_tensor_keeps_the_dtype_of_numpy_data_and_of_tensors() -> None:
    assert tensor(np.zeros(2, np.float16)).dtype is ScalarType.float16
    assert tensor(np.zeros(2, np.int32)).dtype is ScalarType.int32
    assert tensor(np.zeros(2, np.uint8)).dtype is ScalarType.uint8
    assert tensor(np.float64(1.5)).dtype is ScalarType.float64
    assert tensor(tensor([1, 2], dtype=ScalarType.int8)).dtype is ScalarType.int8
    assert tensor(np.zeros(2, np.uint16)).dtype is ScalarType.int64  # no uint16 in typedops: its kind's default
    assert tensor([1.5]).dtype is ScalarType.float32 and tensor(7).dtype is ScalarType.int64
