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
from typing import TYPE_CHECKING, Any, Final

from ..tensor import Tensor, array_of, wrap_array
from ..vocabulary import ScalarType
from ._grad_mode import is_grad_enabled
from ._graph import Node, edge_of, set_history

if TYPE_CHECKING:
    import numpy.typing as npt

__all__ = ["linear_map", "LinearMapBackward", "conj", "real"]


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


# Note [Complex helpers]
# ~~~~~~~~~~~~~~~~~~~~~~
# Complex gradients follow PyTorch's convention (Note [Complex gradients] in _engine.py),
# whose formulas conjugate (``grad * conj(other)`` for ``mul``), and a complex gradient
# reaching a real input keeps its real part. The core ops have neither ``conj`` nor
# ``real``, so these two are computed in numpy under a recorded node, as ``linear_map`` is:
# ``conj``'s backward is ``conj`` of the gradient; ``real``'s is the (real) gradient as a
# complex tensor. For a real tensor ``conj`` is the tensor itself, so real formulas pay a
# call and a dtype test.


class ConjBackward0(Node):
    __slots__ = ()
    _name = "ConjBackward0"

    def apply(self, grads: list[Tensor | None]) -> Sequence[Tensor | None]:
        g = grads[0]
        assert g is not None
        return (conj(g),)


class RealBackward0(Node):
    __slots__ = ("dtype",)
    _name = "RealBackward0"

    def __init__(self, dtype: ScalarType) -> None:
        super().__init__()
        self.dtype = dtype

    def apply(self, grads: list[Tensor | None]) -> Sequence[Tensor | None]:
        g = grads[0]
        assert g is not None
        return (g.to(self.dtype),)


def _recorded(result: Tensor, x: Tensor, node: Node) -> Tensor:
    if x.requires_grad and is_grad_enabled():
        node.next_edges = (edge_of(x),)
        set_history(result, node)
    return result


_COMPLEX: Final = frozenset({ScalarType.complex64, ScalarType.complex128})


def conj(x: Tensor) -> Tensor:
    """The complex conjugate of ``x`` (``x`` itself when it is real): Note [Complex helpers]."""
    if x._dtype not in _COMPLEX:  # every formula's common case: a set test, before the import
        return x
    import numpy as np

    return _recorded(wrap_array(np.conj(array_of(x)), x.dtype, x.device), x, ConjBackward0())


def real(x: Tensor, dtype: ScalarType) -> Tensor:
    """The real part of complex ``x``, as ``dtype`` (a real dtype): Note [Complex helpers]."""
    import numpy as np

    return _recorded(wrap_array(np.real(array_of(x)), dtype, x.device), x, RealBackward0(x.dtype))
