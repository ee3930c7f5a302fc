"""Array rules: the numpy call a CPU kernel's fast path makes, for array-level program runs.

Note [Array rules]
~~~~~~~~~~~~~~~~~~
A straight-line static run of a program (Note [Array-level runs] in
typedops/programs/_arrays.py) may skip the tensors between its calls and call numpy
directly on arrays. It may do so only where that is provably the kernel's own
computation, so the rule of each op is defined here, beside its kernel, from the
kernel's own callables -- the same objects the kernel's fast path calls, not copies:

- ``matmul``, ``mm``: ``numpy.ndarray.dot`` (``_dot`` of Note [2-D products by dot]),
  which both kernels call for two 2-D float32 or float64 tensors of one dtype whose
  strides are C-contiguous (or transposed). The rule takes two 2-D arrays with elements
  and declines anything else (``ArrayRuleDeclined``): a tensor with no elements may fail
  the kernel's stride test (a size-0 dimension's stride is 1), and then the kernel calls
  ``matmul`` instead. The result is dot's new C-contiguous array, which the kernels wrap
  as it is;
- ``add.Tensor`` (``alpha`` the integer 1), ``mul.Tensor``: ``operator.add``,
  ``operator.mul``, the operators ``fast_binary_kernel`` compiles into ``add_cpu`` and
  ``mul_cpu`` (Note [Element-wise fast path] in _pointwise.py), taken by the kernels for
  two tensors of one dtype that are not both wrapped numbers;
- ``relu``: ``numpy.maximum`` with the dtype's typed zero (Note [Typed zeros]), as
  ``relu_cpu`` calls it;
- ``neg``: ``operator.neg``, which ``neg_cpu`` calls.

Those kernels wrap a result as ``fresh`` and the fast path do: a numpy scalar (from 0-dim
operands) becomes a 0-dim array, and a result of more than one dimension that is not
C-contiguous is copied (``finish_array``; with one dtype throughout, no cast is left).
So every tensor these kernels return has C-contiguous strides, and an array run whose
inputs have them too sees the arrays the kernels see, calls the same function on them
and gets the same bits.

A rule's ``in_place`` form writes into its first operand when the program no longer
needs it (Note [In-place into dead values] in typedops/programs/_planning.py):
``operator.iadd``/``imul`` (``add_``/``mul_``'s fast path: numpy refuses with ValueError,
writing nothing, when the broadcast shape is not the operand's) and ``maximum(a, 0,
out=a)``. An element-wise operation computes each element alone, so it gives the same
values written into the operand as into a new array.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from ...vocabulary import ScalarType
from . import _pointwise, _reduce

__all__ = ["ArrayRule", "ArrayRuleDeclined", "array_rule", "finish_array", "ARRAY_DTYPES"]

# The dtypes array rules take: the floating dtypes of Note [2-D products by dot].
ARRAY_DTYPES: Final = frozenset({ScalarType.float32, ScalarType.float64})


class ArrayRuleDeclined(Exception):
    """A rule's operands are not a case its kernel computes by the rule's call."""


@dataclass(frozen=True)
class ArrayRule:
    """How an op's CPU kernel computes on arrays: ``function(*operands, *extra)``."""

    function: Callable[..., Any]
    operands: int  # the op's leading tensor arguments, the rule's arrays
    extra: tuple[Any, ...] = ()  # further arguments of ``function`` (relu's typed zero)
    finish: bool = True  # the result goes through ``finish_array`` (dot's never needs it)
    in_place: Callable[..., Any] | None = None  # the same values written into the first operand
    in_place_refuses: bool = False  # ``in_place`` raises ValueError when it cannot write them there


def finish_array(result: Any) -> Any:
    """A kernel's numpy result as the array its new tensor owns: what ``fresh`` and the
    element-wise fast path make of it for a result already of the tensor's dtype."""
    import numpy as np

    if type(result) is not np.ndarray:
        result = np.asarray(result)
    if result.ndim > 1 and not result.flags.c_contiguous:
        result = result.copy()
    return result


def matrix_product(a: Any, b: Any) -> Any:
    """``matmul_cpu``'s and ``mm_cpu``'s dot of two 2-D arrays with elements."""
    if a.ndim != 2 or b.ndim != 2 or not a.size or not b.size:
        raise ArrayRuleDeclined("not two 2-D arrays with elements")
    return _reduce.dot_function()(a, b)


_IADD: Final[Callable[[Any, Any], Any]] = operator.iadd  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType] -- untyped in typeshed
_IMUL: Final[Callable[[Any, Any], Any]] = operator.imul  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType] -- untyped in typeshed


def array_rule(name: str, dtype: ScalarType) -> ArrayRule | None:
    """The array rule of core op ``name`` (``"core::add.Tensor"``) for operands of ``dtype``,
    or None (Note [Array rules]). ``add.Tensor``'s rule holds for ``alpha`` the integer 1
    only: the caller checks it."""
    if dtype not in ARRAY_DTYPES:
        return None
    if name in ("core::matmul", "core::mm"):
        return ArrayRule(matrix_product, 2, finish=False)
    if name == "core::add.Tensor":
        return ArrayRule(_pointwise.ADD, 2, in_place=_IADD, in_place_refuses=True)
    if name == "core::mul.Tensor":
        return ArrayRule(_pointwise.MUL, 2, in_place=_IMUL, in_place_refuses=True)
    if name == "core::relu":
        maximum: Any = _pointwise.relu_maximum()

        def relu_into(a: Any, zero: Any) -> Any:
            return maximum(a, zero, out=a)

        return ArrayRule(maximum, 1, (_pointwise.typed_zero(dtype),), in_place=relu_into)
    if name == "core::neg":
        return ArrayRule(_pointwise.NEG, 1)
    return None
