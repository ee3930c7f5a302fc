"""``Storage``: the flat buffer that a tensor and all of its views share.

Note [Shared version counter]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Every in-place kernel bumps ``version`` of the storage it writes; a tensor's
``_version`` reads it. Views share their base's storage, so a write through any of them
is seen by all, as PyTorch's views share one ``VariableVersion``. Autograd will compare
the version a saved tensor had with the one it has when the backward pass reads it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy.typing as npt

__all__ = ["Storage"]


class Storage:
    """A one-dimensional buffer of ``size`` elements (``data`` is None on the meta device)."""

    __slots__ = ("data", "size", "version")

    def __init__(self, data: npt.NDArray[Any] | None, size: int) -> None:
        if data is not None and data.ndim != 1:
            raise ValueError(f"a storage buffer is one-dimensional, not {data.ndim}-dimensional")
        self.data = data
        self.size = size
        self.version = 0

    def __repr__(self) -> str:
        kind = "meta" if self.data is None else str(self.data.dtype)
        return f"<Storage of {self.size} {kind} elements, version {self.version}>"
