"""``Tensor``: an n-dimensional array over numpy that carries its dispatch keys.

This is the first, thin tensor: data, dtype, shape, device and keys. The core op
library grows it (strides, views, memory formats). The dispatcher never imports this
module: it reads ``.keys`` from whatever tensor-typed arguments a schema names.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

from ._dtypes import Device, ScalarType
from .dispatch._keys import DispatchKey, DispatchKeySet, autograd_key_for

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


def keys_for_device(device: Device) -> DispatchKeySet:
    """The keys a tensor on ``device`` carries: its backend and that backend's autograd key."""
    backend = _BACKEND_FOR_DEVICE[device.type]
    return DispatchKeySet((backend, autograd_key_for(backend)))


class Tensor:
    """An n-dimensional array with a dtype, a device and a dispatch key set.

    A ``meta`` tensor has a shape and a dtype but no data: kernels for the Meta key
    compute result shapes and dtypes without touching elements.
    """

    # key_bits is the dispatcher's view of the tensor: the bit mask of its keys (see
    # Note [Key priority] in dispatch/_keys.py); .keys shows it as a DispatchKeySet.
    __slots__ = ("_data", "_dtype", "_shape", "_device", "key_bits", "requires_grad")

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
        self._data = data
        self._dtype = dtype
        self._shape = shape
        self._device = device
        self.key_bits: int = int(keys_for_device(device))
        self.requires_grad = requires_grad

    @classmethod
    def from_numpy(cls, array: npt.NDArray[Any]) -> Tensor:
        """A CPU tensor sharing ``array``'s memory."""
        dtype = _FROM_NUMPY_NAME.get(array.dtype.name)
        if dtype is None:
            known = ", ".join(sorted(_FROM_NUMPY_NAME))
            raise TypeError(f"numpy dtype {array.dtype.name!r} has no typedops dtype; use one of {known}")
        return cls(array, dtype=dtype, shape=tuple(array.shape), device=Device("cpu"))

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

    def numel(self) -> int:
        n = 1
        for size in self._shape:
            n *= size
        return n

    @property
    def is_meta(self) -> bool:
        return self._data is None

    def numpy(self) -> npt.NDArray[Any]:
        """The data as a numpy array (shared, not copied). Meta tensors have none."""
        if self._data is None:
            raise RuntimeError(
                "a meta tensor has no data; move it to a real device, or read .shape/.dtype"
            )
        return self._data

    def tolist(self) -> Any:
        return self.numpy().tolist()

    def __repr__(self) -> str:
        if self._data is None:
            return f"tensor(..., shape={self._shape}, dtype={self._dtype.name}, device='meta')"
        body = repr(self._data.tolist())
        return f"tensor({body}, dtype={self._dtype.name})"


def numpy_dtype(dtype: ScalarType) -> np.dtype[Any]:
    """The numpy dtype that stores ``dtype`` (bfloat16 has none)."""
    import numpy as np

    name = _NUMPY_NAMES.get(dtype)
    if name is None:
        raise TypeError(f"dtype {dtype.name} has no numpy storage yet")
    return np.dtype(name)


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
    array = np.array(array, dtype=numpy_dtype(dtype), copy=True)
    shape = tuple(int(s) for s in array.shape)
    if dev.type == "meta":
        return Tensor(None, dtype=dtype, shape=shape, device=dev)
    return Tensor(array, dtype=dtype, shape=shape, device=dev)


def empty_meta(shape: Sequence[int], dtype: ScalarType) -> Tensor:
    """A meta tensor of the given shape and dtype."""
    return Tensor(None, dtype=dtype, shape=tuple(shape), device=Device("meta"))
