"""``Storage``: the flat buffer that a tensor and all of its views share.

Note [Shared version counter]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Every in-place kernel bumps ``version`` of the storage it writes; a tensor's
``_version`` reads it. Views share their base's storage, so a write through any of them
is seen by all, as PyTorch's views share one ``VariableVersion``. Autograd will compare
the version a saved tensor had with the one it has when the backward pass reads it.

Note [Storage buffer]
~~~~~~~~~~~~~~~~~~~~~
A storage keeps the numpy array it was made from as ``buffer``: a flat array, or -- for a
tensor that wraps a fresh kernel result (``Tensor._from_array``) -- that C-contiguous
result in its own shape, so wrapping a result costs no reshape. ``data`` is always the
flat (one-dimensional) view of the buffer, made on first read. Replacing the buffer
(``data = ...``, as ``resize_`` does when it grows a storage) gives the storage a new
``buffer`` object: the tensors' cached numpy views check it (Note [Cached numpy view] in
_tensor.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..vocabulary import ArgumentValueError
from ._messages import STORAGE_NOT_1D

if TYPE_CHECKING:
    import numpy.typing as npt

__all__ = ["Storage"]


class Storage:
    """A one-dimensional buffer of ``size`` elements (``data`` is None on the meta device)."""

    __slots__ = ("buffer", "_flat", "size", "version")

    def __init__(self, data: npt.NDArray[Any] | None, size: int) -> None:
        if data is not None and data.ndim != 1:
            raise ArgumentValueError(STORAGE_NOT_1D.format(ndim=data.ndim))
        self.buffer = data
        self._flat = data
        self.size = size
        self.version = 0

    @property
    def data(self) -> npt.NDArray[Any] | None:
        """The elements as a flat numpy array (None on the meta device)."""
        flat = self._flat
        if flat is None and self.buffer is not None:
            flat = self._flat = self.buffer.reshape(-1)
        return flat

    @data.setter
    def data(self, value: npt.NDArray[Any] | None) -> None:
        if value is not None and value.ndim != 1:
            raise ArgumentValueError(STORAGE_NOT_1D.format(ndim=value.ndim))
        self.buffer = value
        self._flat = value

    def __repr__(self) -> str:
        kind = "meta" if self.buffer is None else str(self.buffer.dtype)
        return f"<Storage of {self.size} {kind} elements, version {self.version}>"
