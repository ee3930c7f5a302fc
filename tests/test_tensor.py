"""The tensor (issue 6): storage, strides, views, the version counter, memory formats
and meta tensors. Op kernels are tested in test_core_kernels.py; here only the tensor
and the helpers kernels build on."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from typedops import Device, DispatchKey, DispatchKeySet, MemoryFormat, ScalarType, Tensor, tensor
from typedops.tensor import Storage
from typedops.tensor import (
    broadcast_shapes,
    contiguous_strides,
    infer_size,
    is_channels_last_strides,
    strides_for_format,
    suggest_memory_format,
    view_strides,
    wrap_dim,
)
from typedops.tensor import (
    bump_version,
    empty_meta,
    empty_tensor,
    make_view,
    resize_,
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
    assert t.keys == DispatchKeySet([DispatchKey.CPU, DispatchKey.AutogradCPU])
    assert t.key_bits == int(t.keys)
    assert tensor(2.5).dtype is ScalarType.float32 and tensor(2.5).item() == 2.5
    assert tensor([True]).dtype is ScalarType.bool
    assert tensor(np.array([1.0], dtype=np.float64)).dtype is ScalarType.float64
    assert repr(t) == "tensor([[1, 2, 3], [4, 5, 6]], dtype=int64)"


def test_constructor_keeps_its_old_form() -> None:
    t = Tensor(np.array([[1.0, 2.0]], dtype=np.float32), dtype=ScalarType.float32, shape=(1, 2), device=CPU)
    assert t.tolist() == [[1.0, 2.0]] and t.stride() == (2, 1)
    m = Tensor(None, dtype=ScalarType.int32, shape=(3,), device=Device("meta"))
    assert m.is_meta and m.keys == DispatchKeySet([DispatchKey.Meta, DispatchKey.AutogradMeta])
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


def test_storage_is_flat() -> None:
    with pytest.raises(ValueError, match=r"^a storage buffer is one-dimensional, not 2-dimensional$"):
        Storage(np.zeros((2, 2)), 4)


def test_import_does_not_load_numpy() -> None:
    code = "import sys, typedops, typedops.core.kernels; print('numpy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
