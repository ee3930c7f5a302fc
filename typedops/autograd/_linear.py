"""``linear_map``: a fixed sparse linear map of a tensor's elements, recorded so that it can
be differentiated again.

Note [Differentiable storage maps]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Some gradients move values between geometries through storage positions: ``as_strided``'s
(a scatter-add into the storage the result viewed, then the input's positions read back),
and the ``CopySlices``/``AsStridedBackward0`` nodes of in-place ops on views (Note
[In-place on views] in _graph.py). The core ops have no gather or scatter to write them
with, so they are computed in numpy -- but as ``linear_map(x, rows, cols, weights,
shape)``: ``out.flat[rows[k]] += weights[k] * x.flat[cols[k]]``, a linear map given by its
nonzero entries. When ``x`` requires grad and grad mode is on (a backward pass with
``create_graph=True``), the result gets a ``LinearMapBackward`` node whose backward is the
transposed map (rows and columns swapped), itself a ``linear_map`` and so recorded in its
turn: derivatives of any order flow through these gradients.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..tensor import Tensor, array_of, wrap_array
from ._grad_mode import is_grad_enabled
from ._graph import Node, edge_of, set_history

if TYPE_CHECKING:
    import numpy.typing as npt

__all__ = ["linear_map", "LinearMapBackward"]


class LinearMapBackward(Node):
    """The node of a ``linear_map``: its backward is the transposed map."""

    __slots__ = ("rows", "cols", "weights", "in_shape")
    _name = "LinearMapBackward"

    def __init__(self, rows: Any, cols: Any, weights: Any, in_shape: tuple[int, ...]) -> None:
        super().__init__()
        self.rows, self.cols, self.weights, self.in_shape = rows, cols, weights, in_shape

    def apply(self, grads: list[Tensor | None]) -> Sequence[Tensor | None]:
        g = grads[0]
        assert g is not None
        return (linear_map(g, self.cols, self.rows, self.weights, self.in_shape),)


def linear_map(x: Tensor, rows: Any, cols: Any, weights: Any, shape: Sequence[int]) -> Tensor:
    """``out`` of ``shape`` with ``out.flat[rows[k]] += weights[k] * x.flat[cols[k]]`` (``weights``
    None: all ones): Note [Differentiable storage maps]."""
    import numpy as np

    shape = tuple(int(n) for n in shape)
    values: npt.NDArray[Any] = array_of(x).ravel()[cols]
    if weights is not None:
        values = values * weights
    size = int(np.prod(shape, dtype=np.int64))
    flat: npt.NDArray[Any]
    if values.dtype.kind == "c":
        flat = np.bincount(rows, np.real(values), size) + 1j * np.bincount(rows, np.imag(values), size)
    else:
        flat = np.bincount(rows, values, size)
    result = wrap_array(np.reshape(flat, shape), x.dtype, x.device)
    if x.requires_grad and is_grad_enabled():
        node = LinearMapBackward(rows, cols, weights, tuple(x.shape))
        node.next_edges = (edge_of(x),)
        set_history(result, node)
    return result
