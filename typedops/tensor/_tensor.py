"""``Tensor``: a strided view of a shared storage that carries its dispatch keys.

A tensor is a ``Storage`` (a flat numpy buffer, or none on the meta device) seen through
a shape, element strides and a storage offset, as in PyTorch. Views share the storage
and its version counter (Note [Shared version counter] in _storage.py). Ops are not
methods here: the code generator installs them. What lives here is what kernels need
to build and inspect tensors: allocation, views, resizing and the version counter.

The dispatcher never imports this module: it reads ``.key_bits`` from whatever
tensor-typed arguments a schema names. numpy is imported only inside functions, so
``import typedops`` stays fast.
"""

# Checked by pyright in standard mode, not strict yet: what it narrows from Any, yaml or
# numpy values is partially unknown to it (issue 12; mypy --strict checks it in full).
# pyright: standard

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final, overload

from ._storage import Storage
from ._strides import (
    contiguous_strides,
    is_channels_last_strides,
    is_contiguous_strides,
    numel_of,
    strides_for_format,
    wrap_dim,
)
from ..vocabulary import Device, DispatchKey, DispatchKeySet, MemoryFormat, ScalarType, autograd_key_for

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["Tensor", "tensor"]

_BACKEND_FOR_DEVICE: Final = {
    "cpu": DispatchKey.CPU,
    "meta": DispatchKey.Meta,
    "privateuseone": DispatchKey.PrivateUse1,
}

_NUMPY_NAMES: Final = {
    ScalarType.uint8: "uint8", ScalarType.int8: "int8", ScalarType.int16: "int16",
    ScalarType.int32: "int32", ScalarType.int64: "int64", ScalarType.float16: "float16",
    ScalarType.float32: "float32", ScalarType.float64: "float64",
    ScalarType.complex64: "complex64", ScalarType.complex128: "complex128",
    ScalarType.bool: "bool",
}  # fmt: skip
_FROM_NUMPY_NAME: Final = {v: k for k, v in _NUMPY_NAMES.items()}

NO_DATA: Final = "a meta tensor has no data; move it to a real device, or read .shape/.dtype"
_META: Final = Device("meta")
_CPU: Final = Device("cpu")


def keys_for_device(device: Device) -> DispatchKeySet:
    """The keys a tensor on ``device`` carries: its backend and that backend's autograd key."""
    backend = _BACKEND_FOR_DEVICE[device.type]
    return DispatchKeySet((backend, autograd_key_for(backend)))


def backend_key_for_device(device: Device) -> DispatchKey:
    """The backend key that serves ``device`` (``cpu`` -> ``CPU``, ``meta`` -> ``Meta``)."""
    return _BACKEND_FOR_DEVICE[device.type]


if TYPE_CHECKING:
    # The generated core methods (x.add(y), x.where(c, y)) for the type checker only; at
    # run time typedops.core installs them. See Note [Typing what core installs] in
    # typedops/codegen/_stubs.py.
    from ._methods import TensorMethods as _TensorMethods
else:
    _TensorMethods = object


class Tensor(_TensorMethods):
    """An n-dimensional strided view of a storage, with a dtype, a device and dispatch keys.

    ``Tensor(array, dtype=..., shape=..., device=...)`` wraps a numpy array (or None on
    the meta device); ``Tensor.from_numpy`` shares an array's memory. Kernels make views
    with ``make_view`` and new tensors with ``empty_tensor``.
    """

    # key_bits is the dispatcher's view of the tensor: the bit mask of its keys (see
    # Note [Key priority] in vocabulary/_keys.py); .keys shows it as a DispatchKeySet.
    __slots__ = (
        "_storage", "_shape", "_strides", "_offset", "_dtype", "_device",
        "key_bits", "requires_grad", "is_wrapped_number",
    )  # fmt: skip

    def __init__(
        self,
        data: npt.NDArray[Any] | None,
        *,
        dtype: ScalarType,
        shape: tuple[int, ...],
        device: Device,
        requires_grad: bool = False,
    ) -> None:
        if (data is None) != (device.type == "meta"):
            raise ValueError("a meta tensor has no data, and every other tensor has data")
        numel = numel_of(shape)
        if data is not None:
            if tuple(data.shape) != tuple(shape):
                raise ValueError(f"data of shape {tuple(data.shape)} given for a tensor of shape {shape}")
            data = data.reshape(-1) if data.flags.c_contiguous else data.copy().reshape(-1)
        self._init(Storage(data, numel), shape, contiguous_strides(shape), 0, dtype, device)
        self.requires_grad = requires_grad

    def _init(
        self,
        storage: Storage,
        shape: tuple[int, ...],
        strides: tuple[int, ...],
        offset: int,
        dtype: ScalarType,
        device: Device,
    ) -> None:
        self._storage = storage
        self._shape = shape
        self._strides = strides
        self._offset = offset
        self._dtype = dtype
        self._device = device
        self.key_bits: int = int(keys_for_device(device))
        self.requires_grad = False
        self.is_wrapped_number = False

    @classmethod
    def _from_parts(
        cls,
        storage: Storage,
        shape: tuple[int, ...],
        strides: tuple[int, ...],
        offset: int,
        dtype: ScalarType,
        device: Device,
    ) -> Tensor:
        t = cls.__new__(cls)
        t._init(storage, shape, strides, offset, dtype, device)
        return t

    @classmethod
    def from_numpy(cls, array: npt.NDArray[Any]) -> Tensor:
        """A CPU tensor sharing ``array``'s memory (and its strides)."""
        import numpy as np

        dtype = _FROM_NUMPY_NAME.get(array.dtype.name)
        if dtype is None:
            known = ", ".join(sorted(_FROM_NUMPY_NAME))
            raise TypeError(f"numpy dtype {array.dtype.name!r} has no typedops dtype; use one of {known}")
        itemsize = array.itemsize
        if any(s < 0 or s % itemsize for s in array.strides):
            raise ValueError(
                f"the numpy array has strides {array.strides} (bytes) that are negative or not a "
                "multiple of its item size; pass a copy (array.copy())"
            )
        shape = tuple(int(n) for n in array.shape)
        strides = tuple(int(s) // itemsize for s in array.strides)
        span = 0 if 0 in shape else 1 + sum((n - 1) * s for n, s in zip(shape, strides))
        flat = np.lib.stride_tricks.as_strided(array, shape=(span,), strides=(itemsize,))
        return cls._from_parts(Storage(flat, span), shape, strides, 0, dtype, _CPU)

    # -- what the dispatcher and users read -----------------------------------------------
    @property
    def keys(self) -> DispatchKeySet:
        """The dispatch keys this tensor contributes to every call it is passed to."""
        return DispatchKeySet.from_bits(self.key_bits)

    @property
    def dtype(self) -> ScalarType:
        return self._dtype

    @property
    def shape(self) -> tuple[int, ...]:
        return self._shape

    @property
    def device(self) -> Device:
        return self._device

    @property
    def ndim(self) -> int:
        return len(self._shape)

    def dim(self) -> int:
        return len(self._shape)

    def numel(self) -> int:
        return numel_of(self._shape)

    @property
    def is_meta(self) -> bool:
        return self._storage.data is None

    # -- layout -------------------------------------------------------------------------
    @overload
    def size(self, dim: None = None) -> tuple[int, ...]: ...
    @overload
    def size(self, dim: int) -> int: ...
    def size(self, dim: int | None = None) -> tuple[int, ...] | int:
        """The shape, or the size of one dimension."""
        return self._shape if dim is None else self._shape[wrap_dim(dim, self.ndim)]

    @overload
    def stride(self, dim: None = None) -> tuple[int, ...]: ...
    @overload
    def stride(self, dim: int) -> int: ...
    def stride(self, dim: int | None = None) -> tuple[int, ...] | int:
        """The strides in elements, or the stride of one dimension."""
        return self._strides if dim is None else self._strides[wrap_dim(dim, self.ndim)]

    def storage_offset(self) -> int:
        return self._offset

    @property
    def storage(self) -> Storage:
        """The storage this tensor views (shared with every view of it)."""
        return self._storage

    def is_contiguous(self, memory_format: MemoryFormat = MemoryFormat.contiguous_format) -> bool:
        """Whether the elements are dense in ``memory_format``'s order (size-1 dims ignored)."""
        if memory_format is MemoryFormat.contiguous_format:
            return is_contiguous_strides(self._shape, self._strides)
        if memory_format is MemoryFormat.preserve_format:
            raise ValueError("is_contiguous() takes a layout; preserve_format is not one")
        return is_channels_last_strides(self._shape, self._strides, memory_format)

    @property
    def _version(self) -> int:
        """Bumped by every in-place op on this tensor or any view of its storage."""
        return self._storage.version

    # -- data ---------------------------------------------------------------------------
    def numpy(self) -> npt.NDArray[Any]:
        """The elements as a numpy array sharing this tensor's memory (writes show through)."""
        data = self._storage.data
        if data is None:
            raise RuntimeError(NO_DATA)
        import numpy as np

        itemsize = data.itemsize
        return np.lib.stride_tricks.as_strided(
            data[self._offset :], shape=self._shape, strides=tuple(s * itemsize for s in self._strides)
        )

    def tolist(self) -> Any:
        return self.numpy().tolist()

    def item(self) -> Any:
        """The one element of a one-element tensor, as a Python number."""
        if self.numel() != 1:
            raise RuntimeError(f"a Tensor with {self.numel()} elements cannot be converted to Scalar")
        return self.numpy().reshape(()).item()

    def __repr__(self) -> str:
        if self._storage.data is None:
            return f"tensor(..., shape={self._shape}, dtype={self._dtype.name}, device='meta')"
        return f"tensor({self.numpy().tolist()!r}, dtype={self._dtype.name})"


# -- helpers for kernels -------------------------------------------------------------------
def numpy_dtype(dtype: ScalarType) -> np.dtype[Any]:
    """The numpy dtype that stores ``dtype`` (bfloat16 has none)."""
    import numpy as np

    name = _NUMPY_NAMES.get(dtype)
    if name is None:
        raise TypeError(f"dtype {dtype.name} has no numpy storage yet")
    return np.dtype(name)


def scalar_type_of(array: npt.NDArray[Any]) -> ScalarType:
    """The ScalarType that stores numpy ``array``'s dtype."""
    dtype = _FROM_NUMPY_NAME.get(array.dtype.name)
    if dtype is None:
        raise TypeError(f"numpy dtype {array.dtype.name!r} has no typedops dtype")
    return dtype


def empty_tensor(
    shape: Sequence[int],
    dtype: ScalarType,
    device: Device,
    memory_format: MemoryFormat = MemoryFormat.contiguous_format,
) -> Tensor:
    """A new tensor with uninitialized (zeroed, on CPU) data laid out in ``memory_format``."""
    size = tuple(int(n) for n in shape)
    for n in size:
        if n < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {n}: {list(size)}")
    strides = strides_for_format(size, memory_format)
    numel = numel_of(size)
    data = None
    if device.type != "meta":
        import numpy as np

        data = np.zeros(numel, dtype=numpy_dtype(dtype))
    return Tensor._from_parts(Storage(data, numel), size, strides, 0, dtype, device)


def empty_meta(shape: Sequence[int], dtype: ScalarType) -> Tensor:
    """A meta tensor of the given shape and dtype."""
    return empty_tensor(shape, dtype, _META)


def wrap_array(array: npt.NDArray[Any], dtype: ScalarType | None = None, device: Device = _CPU) -> Tensor:
    """A new contiguous tensor holding ``array``'s values (cast to ``dtype`` if given)."""
    import numpy as np

    target = numpy_dtype(dtype) if dtype is not None else array.dtype
    flat = np.array(array, dtype=target, order="C", copy=True).reshape(-1)
    shape = tuple(int(n) for n in np.shape(array))
    chosen = dtype if dtype is not None else scalar_type_of(flat)
    return Tensor._from_parts(Storage(flat, flat.size), shape, contiguous_strides(shape), 0, chosen, device)


def make_view(self: Tensor, shape: Sequence[int], strides: Sequence[int], offset: int) -> Tensor:
    """A view of ``self``'s storage with its own shape, strides and storage offset."""
    view = Tensor._from_parts(
        self._storage, tuple(shape), tuple(strides), offset, self._dtype, self._device
    )
    view.requires_grad = self.requires_grad
    return view


def bump_version(self: Tensor) -> None:
    """Record an in-place write to ``self`` (seen by every view: Note [Shared version counter])."""
    self._storage.version += 1


def resize_(self: Tensor, shape: Sequence[int]) -> None:
    """Give ``self`` a new contiguous shape, growing its storage if it is too small."""
    size = tuple(int(n) for n in shape)
    if size == self._shape:
        return
    numel = numel_of(size)
    needed = self._offset + numel
    storage = self._storage
    if needed > storage.size:
        if storage.data is not None:
            import numpy as np

            grown = np.zeros(needed, dtype=storage.data.dtype)
            grown[: storage.size] = storage.data
            storage.data = grown
        storage.size = needed
    self._shape = size
    self._strides = contiguous_strides(size)


def wrapped_scalar(value: complex, device: Device) -> Tensor:
    """A 0-dim tensor for a Python number passed as ``Scalar``, marked as a *wrapped
    number*: it holds the exact value (float64, complex128 or int64) but takes part in
    type promotion as the default dtype of its kind (float32, complex64), as in PyTorch."""
    if isinstance(value, bool):
        dtype = ScalarType.bool
    elif isinstance(value, int):
        dtype = ScalarType.int64
    elif isinstance(value, float):
        dtype = ScalarType.float64
    else:
        dtype = ScalarType.complex128
    if device.type == "meta":
        t = empty_meta((), dtype)
    else:
        import numpy as np

        t = wrap_array(np.array(value), dtype, device)
    t.is_wrapped_number = True
    return t


def tensor(
    data: Any,
    *,
    dtype: ScalarType | None = None,
    device: str | Device = "cpu",
) -> Tensor:
    """A tensor from nested sequences, a number, a numpy array or another tensor's data.

    ``dtype`` defaults to int64 for integers, bool for bools, float32 for floats and
    complex64 for complex numbers, as in PyTorch. On ``device="meta"`` only the shape
    and dtype are kept.
    """
    import numpy as np

    dev = Device.parse(device)
    if isinstance(data, Tensor):
        data = data.numpy()
    array = np.asarray(data)
    if dtype is None:
        kind = array.dtype.kind
        inferred = {"b": ScalarType.bool, "i": ScalarType.int64, "u": ScalarType.int64,
                    "f": ScalarType.float32, "c": ScalarType.complex64}.get(kind)  # fmt: skip
        if inferred is None:
            raise TypeError(
                f"cannot make a tensor from {type(data).__name__} data (numpy kind {kind!r}); "
                "pass numbers, nested sequences of numbers or a numeric numpy array"
            )
        if kind in "fc" and array.dtype.itemsize > (4 if kind == "f" else 8) and isinstance(data, np.ndarray):
            inferred = _FROM_NUMPY_NAME[array.dtype.name]  # numpy arrays keep their precision
        dtype = inferred
    shape = tuple(int(s) for s in array.shape)
    if dev.type == "meta":
        return empty_tensor(shape, dtype, dev)
    return wrap_array(array, dtype, dev)
