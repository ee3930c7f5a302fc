"""``zeros_float32``: a tensor of zeros in the default dtype, numpy's array and the tensor
made in one call.

Note [Zeros in one frame]
~~~~~~~~~~~~~~~~~~~~~~~~~
``zeros(size)`` with every keyword left at its default (float32 on the CPU) is the
common factory call. Its CPU kernel used to call ``numpy.zeros`` and then
``Tensor._from_array``; here both are one function, with ``_from_array``'s stores inline
(as ``wrapped_scalar`` does for ``_from_array0``): one frame less, ~15 ns. A size of one
exact int, the usual vector, goes further: numpy is given the int (it reads a list more
slowly), and the shape ``(n,)`` and strides ``(1,)`` are known without asking the array
for its shape (a new tuple each time) and looking its strides up by it: ~20 ns more, the
test that picks this path paid. Measured on CPython 3.11 with the thread CPU clock,
against a ~370 ns call in all (numpy's own zeros is ~100 ns of it). The
tensor is the one ``_from_array(numpy.zeros(size, float32), float32)`` makes, slot for
slot (tests/test_tensor.py checks). numpy is bound on the first call (importing typedops
imports no numpy).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from ..vocabulary import ScalarType
from ._tensor import _CONTIGUOUS, _CPU, _CPU_KEY_BITS, Tensor, _new_tensor, contiguous_strides_cached

__all__ = ["zeros_float32"]

_FLOAT32: Final = ScalarType.float32
# Bound here: CPython 3.11 compiles ``_CONTIGUOUS.get(shape)`` on an imported name as an
# attribute load and a call, not as a method call, ~30 ns slower (measured).
_cached_strides: Final = _CONTIGUOUS.get
_ONE_DIM_STRIDES: Final = (1,)  # contiguous_strides((n,)) for every n, 0 and 1 included
_np_zeros: Any = None  # numpy.zeros, bound on first use
_np_float32: Any = None  # numpy's float32 dtype, bound with it


def zeros_float32(size: Sequence[int]) -> Tensor:
    """A new contiguous float32 CPU tensor of zeros of shape ``size`` (Note [Zeros in one
    frame]). Raises what ``numpy.zeros`` raises for a size it refuses (a negative or
    non-integer one, one too large for memory); the caller reports it in its own words."""
    global _np_zeros, _np_float32
    if _np_zeros is None:
        import numpy

        _np_zeros, _np_float32 = numpy.zeros, numpy.dtype("float32")
    kind = type(size)  # tested apart: `type(size) is list` would narrow size to list[Unknown] for pyright
    if (kind is list or kind is tuple) and len(size) == 1 and type(n := size[0]) is int:
        array = _np_zeros(n, _np_float32)  # one dimension: Note [Zeros in one frame]
        shape: tuple[int, ...] = (n,)
        strides: tuple[int, ...] = _ONE_DIM_STRIDES
    else:
        array = _np_zeros(size, _np_float32)
        shape = array.shape
        known = _cached_strides(shape)  # not `or`: a 0-dim tensor's strides () are falsy
        strides = known if known is not None else contiguous_strides_cached(shape)
    t = _new_tensor(Tensor)  # Tensor._from_array(array, float32), inline
    t._storage = None
    t._shape = shape
    t._strides = strides
    t._offset = 0
    t._dtype = _FLOAT32
    t._device = _CPU
    t.key_bits = _CPU_KEY_BITS
    t.grad_fn = None
    t._array = array  # _array_buffer is set with the storage: Note [Storage made on demand]
    return t
