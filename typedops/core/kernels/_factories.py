"""Factory functions and conversions: ``empty``, ``zeros``, ``ones``, ``full``, ``randn``,
``arange``, ``scalar_tensor``, ``zeros_like``, ``_to_copy`` and ``to``.

Note [Factories pick their backend]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
A factory has no tensor argument, so its call's key set holds only ``BackendSelect``.
Its BackendSelect kernel (registered ``with_keys``) reads ``device``, and redispatches
with ``{BackendSelect, <backend>}``: a redispatch continues below the highest key, so
the call lands on the CPU or Meta kernel. The dispatcher passes ``device`` through as
the caller wrote it, so it may be a ``str`` (``device="meta"``): ``device_of`` parses it.
Each BackendSelect kernel here does only that, and says so (``selects_backend_by_device``):
unboxed calls then skip it and reach the backend's kernel directly (Note [Factories in
one hop] in dispatch/_entry.py), so a kernel here must never do more than redispatch.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final, Optional

from ...vocabulary import Device, Layout, MemoryFormat, Scalar, ScalarType, TensorError, UnsupportedError
from ...tensor import dense_strides_like, is_non_overlapping_and_dense
from ...tensor import CPU, NO_DATA, Tensor, backend_key_for_device, empty_tensor, numpy_dtype, zeros_float32
from ...dispatch import DispatchKey, DispatchKeySet, selects_backend_by_device
from ._common import as_stored, call_op, data, default_dtype_for, device_of, meta_like, np_dtype, scalar_overflow
from ._messages import (
    NEGATIVE_STRIDES,
    STRIDES_LENGTH,
    ARANGE_NOT_REAL,
    ARANGE_STEP_SIGN,
    ARANGE_NAN_STEP,
    ARANGE_RANGE,
    ARANGE_ZERO_STEP,
    EMPTY_PRESERVE_FORMAT,
    META_COPY,
    ONLY_STRIDED,
    RANDN_DTYPE,
)

_CPU: Final = CPU  # the tensor layer's: results on it take the cheap key-bits path
_numpy_zeros: Any = None  # numpy.zeros, bound on first use (imports stay numpy-free)
_numpy_float32: Any = None  # numpy's float32 dtype, bound with it (the default dtype)
_FLOAT32: Final = ScalarType.float32
_from_array: Final = Tensor._from_array

if TYPE_CHECKING:
    import numpy as np

_RNG: list[np.random.Generator] = []


def manual_seed(seed: int) -> None:
    """Seed the generator ``randn`` draws from."""
    import numpy as np

    _RNG[:] = [np.random.default_rng(seed)]


def _rng() -> np.random.Generator:
    if not _RNG:
        import numpy as np

        _RNG.append(np.random.default_rng())
    return _RNG[0]


_NO_DEVICE: list[DispatchKeySet] = []  # _backend(None), made once


def _backend(device: Optional[Device]) -> DispatchKeySet:
    """Where a factory continues: BackendSelect's own bit (cleared by the redispatch)
    plus the backend of ``device`` (see Note [Factories pick their backend])."""
    if device is None and _NO_DEVICE:
        return _NO_DEVICE[0]
    keys = DispatchKeySet((DispatchKey.BackendSelect, backend_key_for_device(device_of(device))))
    if device is None:
        _NO_DEVICE.append(keys)
    return keys


def _check_layout(layout: Optional[Layout]) -> None:
    if layout is not None and layout is not Layout.strided:
        raise UnsupportedError(ONLY_STRIDED.format(layout=layout.name))


def _make(
    size: Sequence[int], dtype: Optional[ScalarType], layout: Optional[Layout], device: Optional[Device],
    fill: Any = None, memory_format: MemoryFormat = MemoryFormat.contiguous_format,
) -> Tensor:  # fmt: skip
    _check_layout(layout)
    result = empty_tensor(size, ScalarType.float32 if dtype is None else dtype, device_of(device), memory_format)
    if fill is not None and not result.is_meta:
        data(result)[...] = fill
    return result


# -- empty ----------------------------------------------------------------------------------
@selects_backend_by_device  # Note [Factories in one hop] in dispatch/_entry.py
def empty_backend_select(
    keys: DispatchKeySet, size: Sequence[int], *, dtype: Optional[ScalarType], layout: Optional[Layout],
    device: Optional[Device], pin_memory: Optional[bool], memory_format: Optional[MemoryFormat],
) -> Tensor:  # fmt: skip
    result: Tensor = call_op("empty", "memory_format").redispatch(
        _backend(device), size, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory,
        memory_format=memory_format,
    )  # fmt: skip
    return result


def empty_kernel(
    size: Sequence[int], *, dtype: Optional[ScalarType], layout: Optional[Layout],
    device: Optional[Device], pin_memory: Optional[bool], memory_format: Optional[MemoryFormat],
) -> Tensor:  # fmt: skip
    """CPU and Meta: the device argument already says which (meta tensors get no buffer)."""
    fmt = MemoryFormat.contiguous_format if memory_format is None else memory_format
    if fmt is MemoryFormat.preserve_format:
        raise TensorError(EMPTY_PRESERVE_FORMAT)
    return _make(size, dtype, layout, device, memory_format=fmt)


# -- empty_strided -------------------------------------------------------------------------
@selects_backend_by_device  # Note [Factories in one hop] in dispatch/_entry.py
def empty_strided_backend_select(
    keys: DispatchKeySet, size: Sequence[int], stride: Sequence[int], *, dtype: Optional[ScalarType],
    layout: Optional[Layout], device: Optional[Device], pin_memory: Optional[bool],
) -> Tensor:  # fmt: skip
    result: Tensor = call_op("empty_strided").redispatch(
        _backend(device), size, stride, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory
    )
    return result


def empty_strided_kernel(
    size: Sequence[int], stride: Sequence[int], *, dtype: Optional[ScalarType], layout: Optional[Layout],
    device: Optional[Device], pin_memory: Optional[bool],
) -> Tensor:  # fmt: skip
    """CPU and Meta: a new tensor with exactly these strides. Strides that fill their
    elements densely (any order of dims: a transposed or channels-last layout) own a buffer
    of ``numel`` elements; others (gaps, or a stride of 0) are a view of a buffer spanning
    them, as ``as_strided`` of one."""
    _check_layout(layout)
    if len(stride) != len(size):
        raise TensorError(STRIDES_LENGTH.format(strides=len(stride), sizes=len(size)))
    if any(s < 0 for s in stride):
        raise TensorError(NEGATIVE_STRIDES.format(strides=list(stride)))
    chosen = ScalarType.float32 if dtype is None else dtype
    if is_non_overlapping_and_dense(tuple(size), tuple(stride)):
        return empty_tensor(size, chosen, device_of(device), dense_strides=stride)
    span = 0 if 0 in size else 1 + sum((n - 1) * s for n, s in zip(size, stride))
    base = empty_tensor([span], chosen, device_of(device))
    result: Tensor = call_op("as_strided")(base, list(size), list(stride), None)
    return result


def preserved_strides(self: Tensor) -> tuple[int, ...]:
    """The strides ``preserve_format`` gives a new tensor like ``self``, as PyTorch's
    ``empty_like``: a non-overlapping and dense tensor's own, stride for stride; any
    other's dims keep their order, laid out densely."""
    strides = self.stride()
    return strides if is_non_overlapping_and_dense(self.shape, strides) else dense_strides_like(self.shape, strides)


# -- zeros / ones / full -------------------------------------------------------------------
@selects_backend_by_device  # Note [Factories in one hop] in dispatch/_entry.py
def zeros_backend_select(
    keys: DispatchKeySet, size: Sequence[int], *, dtype: Optional[ScalarType], layout: Optional[Layout],
    device: Optional[Device], pin_memory: Optional[bool],
) -> Tensor:  # fmt: skip
    result: Tensor = call_op("zeros").redispatch(
        _backend(device), size, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory
    )
    return result


def zeros_cpu(
    size: Sequence[int], *, dtype: Optional[ScalarType], layout: Optional[Layout],
    device: Optional[Device], pin_memory: Optional[bool],
) -> Tensor:  # fmt: skip
    if dtype is None and layout is None and device is None:
        try:
            return zeros_float32(size)  # the defaults: Note [Zeros in one frame] in tensor/_zeros.py
        except (ValueError, TypeError, MemoryError):
            pass  # as below: the checked path reports it
    if layout is None and (device is None or type(device) is Device):
        # The fast path: numpy's zeros becomes the storage. numpy refuses what empty_tensor
        # refuses (a negative size, a non-integer), and the checked path then says so in
        # PyTorch's words.
        global _numpy_zeros, _numpy_float32
        if _numpy_zeros is None:
            import numpy

            _numpy_zeros, _numpy_float32 = numpy.zeros, numpy.dtype("float32")
        chosen = _FLOAT32 if dtype is None else dtype
        try:
            array = _numpy_zeros(size, _numpy_float32 if dtype is None else np_dtype(dtype))
        except (ValueError, TypeError, MemoryError):  # MemoryError: the checked path raises OutOfMemoryError
            pass
        else:
            return _from_array(array, chosen, _CPU if device is None else device_of(device))
    return _make(size, dtype, layout, device, fill=0)


@selects_backend_by_device  # Note [Factories in one hop] in dispatch/_entry.py
def ones_backend_select(
    keys: DispatchKeySet, size: Sequence[int], *, dtype: Optional[ScalarType], layout: Optional[Layout],
    device: Optional[Device], pin_memory: Optional[bool],
) -> Tensor:  # fmt: skip
    result: Tensor = call_op("ones").redispatch(
        _backend(device), size, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory
    )
    return result


def ones_cpu(
    size: Sequence[int], *, dtype: Optional[ScalarType], layout: Optional[Layout],
    device: Optional[Device], pin_memory: Optional[bool],
) -> Tensor:  # fmt: skip
    return _make(size, dtype, layout, device, fill=1)


def factory_meta(
    size: Sequence[int], *, dtype: Optional[ScalarType], layout: Optional[Layout],
    device: Optional[Device], pin_memory: Optional[bool],
) -> Tensor:  # fmt: skip
    """The Meta kernel of ``zeros``, ``ones`` and ``randn``: the shape and dtype, no data."""
    _check_layout(layout)
    return meta_like(size, ScalarType.float32 if dtype is None else dtype)


@selects_backend_by_device  # Note [Factories in one hop] in dispatch/_entry.py
def full_backend_select(
    keys: DispatchKeySet, size: Sequence[int], fill_value: Scalar, *, dtype: Optional[ScalarType],
    layout: Optional[Layout], device: Optional[Device], pin_memory: Optional[bool],
) -> Tensor:  # fmt: skip
    result: Tensor = call_op("full").redispatch(
        _backend(device), size, fill_value, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory
    )
    return result


def full_cpu(
    size: Sequence[int], fill_value: Scalar, *, dtype: Optional[ScalarType],
    layout: Optional[Layout], device: Optional[Device], pin_memory: Optional[bool],
) -> Tensor:  # fmt: skip
    chosen = _fill_dtype(fill_value, dtype)
    return _make(size, chosen, layout, device, fill=as_stored(fill_value, chosen))


def full_meta(
    size: Sequence[int], fill_value: Scalar, *, dtype: Optional[ScalarType],
    layout: Optional[Layout], device: Optional[Device], pin_memory: Optional[bool],
) -> Tensor:  # fmt: skip
    _check_layout(layout)
    return meta_like(size, _fill_dtype(fill_value, dtype))


def _fill_dtype(fill_value: Scalar, dtype: Optional[ScalarType]) -> ScalarType:
    """``full``'s dtype, once ``fill_value`` is known to fit it (Note [Scalars in a
    tensor's dtype] in _common.py)."""
    chosen = default_dtype_for(fill_value) if dtype is None else dtype
    error = scalar_overflow(fill_value, chosen, "fill_value")
    if error is not None:
        raise error
    return chosen


@selects_backend_by_device  # Note [Factories in one hop] in dispatch/_entry.py
def scalar_tensor_backend_select(
    keys: DispatchKeySet, s: Scalar, *, dtype: Optional[ScalarType], layout: Optional[Layout],
    device: Optional[Device], pin_memory: Optional[bool],
) -> Tensor:  # fmt: skip
    result: Tensor = call_op("scalar_tensor").redispatch(
        _backend(device), s, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory
    )
    return result


def scalar_tensor_kernel(
    s: Scalar, *, dtype: Optional[ScalarType], layout: Optional[Layout],
    device: Optional[Device], pin_memory: Optional[bool],
) -> Tensor:  # fmt: skip
    """CPU and Meta: a 0-dim tensor (float32 unless ``dtype`` says otherwise, as in PyTorch)."""
    return _make((), dtype, layout, device, fill=s)


# -- randn -----------------------------------------------------------------------------------
@selects_backend_by_device  # Note [Factories in one hop] in dispatch/_entry.py
def randn_backend_select(
    keys: DispatchKeySet, size: Sequence[int], *, dtype: Optional[ScalarType], layout: Optional[Layout],
    device: Optional[Device], pin_memory: Optional[bool],
) -> Tensor:  # fmt: skip
    result: Tensor = call_op("randn").redispatch(
        _backend(device), size, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory
    )
    return result


def _check_randn(dtype: Optional[ScalarType]) -> ScalarType:
    chosen = ScalarType.float32 if dtype is None else dtype
    if not (chosen.is_floating_point or chosen.is_complex):
        raise TensorError(RANDN_DTYPE.format(dtype=chosen.name))
    return chosen


def randn_cpu(
    size: Sequence[int], *, dtype: Optional[ScalarType], layout: Optional[Layout],
    device: Optional[Device], pin_memory: Optional[bool],
) -> Tensor:  # fmt: skip
    chosen = _check_randn(dtype)
    result = _make(size, chosen, layout, device)  # the size checks first: numpy's are bare errors
    if result.numel():
        data(result)[...] = _rng().standard_normal(result.shape)
    return result


def randn_meta(
    size: Sequence[int], *, dtype: Optional[ScalarType], layout: Optional[Layout],
    device: Optional[Device], pin_memory: Optional[bool],
) -> Tensor:  # fmt: skip
    return factory_meta(size, dtype=_check_randn(dtype), layout=layout, device=device, pin_memory=pin_memory)


# -- arange ----------------------------------------------------------------------------------
def arange_composite(
    end: Scalar, *, dtype: Optional[ScalarType], layout: Optional[Layout],
    device: Optional[Device], pin_memory: Optional[bool],
) -> Tensor:  # fmt: skip
    result: Tensor = call_op("arange", "start_step")(
        0, end, 1, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory
    )
    return result


@selects_backend_by_device  # Note [Factories in one hop] in dispatch/_entry.py
def arange_backend_select(
    keys: DispatchKeySet, start: Scalar, end: Scalar, step: Scalar, *, dtype: Optional[ScalarType],
    layout: Optional[Layout], device: Optional[Device], pin_memory: Optional[bool],
) -> Tensor:  # fmt: skip
    result: Tensor = call_op("arange", "start_step").redispatch(
        _backend(device), start, end, step, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory
    )
    return result


def _plan_arange(start: Scalar, end: Scalar, step: Scalar, dtype: Optional[ScalarType]) -> tuple[int, ScalarType]:
    for name, value in (("start", start), ("end", end), ("step", step)):
        if isinstance(value, complex):
            raise TensorError(ARANGE_NOT_REAL.format(name=name, value=value))
    lo, hi, by = float(start.real), float(end.real), float(step.real)
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise TensorError(ARANGE_RANGE.format(start=start, end=end))
    if math.isnan(by):
        raise TensorError(ARANGE_NAN_STEP)
    if by == 0:
        raise TensorError(ARANGE_ZERO_STEP)
    if (hi - lo) * by < 0:
        raise TensorError(ARANGE_STEP_SIGN)
    if dtype is None:
        floats = any(isinstance(v, float) for v in (start, end, step))
        dtype = ScalarType.float32 if floats else ScalarType.int64
    return max(0, math.ceil((hi - lo) / by)), dtype


def arange_cpu(
    start: Scalar, end: Scalar, step: Scalar, *, dtype: Optional[ScalarType], layout: Optional[Layout],
    device: Optional[Device], pin_memory: Optional[bool],
) -> Tensor:  # fmt: skip
    import numpy as np

    count, chosen = _plan_arange(start, end, step, dtype)
    steps: Any = np.arange(count, dtype=np.float64 if chosen.is_floating_point else np.int64)
    values = start.real + steps * step.real
    return _make((count,), chosen, layout, device, fill=values)


def arange_meta(
    start: Scalar, end: Scalar, step: Scalar, *, dtype: Optional[ScalarType], layout: Optional[Layout],
    device: Optional[Device], pin_memory: Optional[bool],
) -> Tensor:  # fmt: skip
    _check_layout(layout)
    count, chosen = _plan_arange(start, end, step, dtype)
    return meta_like((count,), chosen)


# -- like and conversions ------------------------------------------------------------------
def empty_like_composite(
    self: Tensor, *, dtype: Optional[ScalarType], layout: Optional[Layout], device: Optional[Device],
    pin_memory: Optional[bool], memory_format: Optional[MemoryFormat],
) -> Tensor:  # fmt: skip
    """A new tensor of ``self``'s shape (and, unless given, dtype, device and layout:
    ``preserve_format`` keeps its strides, ``preserved_strides``), through ``empty`` or
    ``empty_strided``."""
    fmt = MemoryFormat.preserve_format if memory_format is None else memory_format
    if fmt is MemoryFormat.preserve_format:
        strided: Tensor = call_op("empty_strided")(
            list(self.shape), list(preserved_strides(self)), dtype=self.dtype if dtype is None else dtype,
            layout=layout, device=self.device if device is None else device_of(device), pin_memory=pin_memory,
        )  # fmt: skip
        return strided
    result: Tensor = call_op("empty", "memory_format")(
        list(self.shape), dtype=self.dtype if dtype is None else dtype, layout=layout,
        device=self.device if device is None else device_of(device), pin_memory=pin_memory, memory_format=fmt,
    )  # fmt: skip
    return result


def _new(factory: str, overload: str, self: Tensor, size: Sequence[int], *values: Scalar, dtype: Optional[ScalarType],
         layout: Optional[Layout], device: Optional[Device], pin_memory: Optional[bool]) -> Tensor:  # fmt: skip
    """``x.new_zeros(size)`` and its kin: the factory, with ``x``'s dtype and device unless given."""
    result: Tensor = call_op(factory, overload)(
        list(size), *values, dtype=self.dtype if dtype is None else dtype, layout=layout,
        device=self.device if device is None else device_of(device), pin_memory=pin_memory,
    )  # fmt: skip
    return result


def new_zeros_composite(
    self: Tensor, size: Sequence[int], *, dtype: Optional[ScalarType], layout: Optional[Layout],
    device: Optional[Device], pin_memory: Optional[bool],
) -> Tensor:  # fmt: skip
    return _new("zeros", "", self, size, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory)


def new_ones_composite(
    self: Tensor, size: Sequence[int], *, dtype: Optional[ScalarType], layout: Optional[Layout],
    device: Optional[Device], pin_memory: Optional[bool],
) -> Tensor:  # fmt: skip
    return _new("ones", "", self, size, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory)


def new_empty_composite(
    self: Tensor, size: Sequence[int], *, dtype: Optional[ScalarType], layout: Optional[Layout],
    device: Optional[Device], pin_memory: Optional[bool],
) -> Tensor:  # fmt: skip
    return _new("empty", "memory_format", self, size, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory)


def new_full_composite(
    self: Tensor, size: Sequence[int], fill_value: Scalar, *, dtype: Optional[ScalarType], layout: Optional[Layout],
    device: Optional[Device], pin_memory: Optional[bool],
) -> Tensor:  # fmt: skip
    return _new("full", "", self, size, fill_value, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory)


def zeros_like_composite(
    self: Tensor, *, dtype: Optional[ScalarType], layout: Optional[Layout], device: Optional[Device],
    pin_memory: Optional[bool], memory_format: Optional[MemoryFormat],
) -> Tensor:  # fmt: skip
    result = empty_like_composite(
        self, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory, memory_format=memory_format
    )
    zeroed: Tensor = call_op("zero_")(result)
    return zeroed


def full_like_composite(
    self: Tensor, fill_value: Scalar, *, dtype: Optional[ScalarType], layout: Optional[Layout],
    device: Optional[Device], pin_memory: Optional[bool], memory_format: Optional[MemoryFormat],
) -> Tensor:  # fmt: skip
    """``empty_like`` filled with ``fill_value`` (converted to the dtype as ``fill_`` converts it)."""
    result = empty_like_composite(
        self, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory, memory_format=memory_format
    )
    filled: Tensor = call_op("fill_", "Scalar")(result, fill_value)
    return filled


def ones_like_composite(
    self: Tensor, *, dtype: Optional[ScalarType], layout: Optional[Layout], device: Optional[Device],
    pin_memory: Optional[bool], memory_format: Optional[MemoryFormat],
) -> Tensor:  # fmt: skip
    return full_like_composite(
        self, 1, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory, memory_format=memory_format
    )


def _plan_to_copy(
    self: Tensor, dtype: Optional[ScalarType], layout: Optional[Layout], device: Optional[Device],
    memory_format: Optional[MemoryFormat],
) -> tuple[ScalarType, Device, MemoryFormat]:  # fmt: skip
    _check_layout(layout)
    fmt = MemoryFormat.preserve_format if memory_format is None else memory_format
    return (self.dtype if dtype is None else dtype), device_of(device, self.device), fmt


def _copy_target(self: Tensor, dtype: ScalarType, device: Device, fmt: MemoryFormat) -> Tensor:
    if fmt is MemoryFormat.preserve_format:  # self's strides, as empty_like's (preserved_strides)
        return empty_tensor(self.shape, dtype, device, dense_strides=preserved_strides(self))
    return empty_tensor(self.shape, dtype, device, fmt)


def to_copy_cpu(
    self: Tensor, *, dtype: Optional[ScalarType], layout: Optional[Layout], device: Optional[Device],
    pin_memory: Optional[bool], non_blocking: bool, memory_format: Optional[MemoryFormat],
) -> Tensor:  # fmt: skip
    chosen, dev, fmt = _plan_to_copy(self, dtype, layout, device, memory_format)
    result = _copy_target(self, chosen, dev, fmt)
    if not result.is_meta:
        data(result)[...] = data(self).astype(numpy_dtype(chosen))
    return result


def to_copy_meta(
    self: Tensor, *, dtype: Optional[ScalarType], layout: Optional[Layout], device: Optional[Device],
    pin_memory: Optional[bool], non_blocking: bool, memory_format: Optional[MemoryFormat],
) -> Tensor:  # fmt: skip
    chosen, dev, fmt = _plan_to_copy(self, dtype, layout, device, memory_format)
    if dev.type != "meta":
        raise UnsupportedError(META_COPY.format(no_data=NO_DATA))
    return _copy_target(self, chosen, dev, fmt)


def to_dtype_composite(
    self: Tensor, dtype: ScalarType, non_blocking: bool, copy: bool, memory_format: Optional[MemoryFormat]
) -> Tensor:
    """``self`` itself when nothing changes and no copy is asked for, else ``_to_copy``."""
    keeps_layout = memory_format in (None, MemoryFormat.preserve_format) or self.is_contiguous(memory_format=memory_format)
    if dtype is self.dtype and not copy and keeps_layout:
        return self
    result: Tensor = call_op("_to_copy")(
        self, dtype=dtype, layout=None, device=None, pin_memory=None, non_blocking=non_blocking,
        memory_format=memory_format,
    )  # fmt: skip
    return result

