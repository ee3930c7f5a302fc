"""Element-wise kernels: arithmetic with broadcasting and ``alpha``, unary math,
comparisons and ``where``, each with its in-place and ``out=`` forms.

A CPU kernel and its Meta twin share one ``_plan_*`` function that checks the arguments
and computes the result's shape and dtype, so the two cannot disagree.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Any, Final

from ...vocabulary import Scalar, ScalarType, TensorError, UnsupportedError
from ...tensor import Tensor, broadcast_shapes, cached_contiguous_strides, check_write, numpy_dtype, wrapped_scalar
from ._messages import (
    ALPHA_COMPLEX_FOR_REAL,
    ALPHA_FLOAT_FOR_INT,
    BOOL_NEGATION,
    BOOL_SUBTRACTION,
    NEGATIVE_INT_POWER,
    NOT_FOR_COMPLEX,
    ORDER_COMPLEX,
    RELU_DTYPE,
    WHERE_CONDITION_DTYPE,
)
from ._common import (
    FULL_FLOATING,
    NUMPY_FLOATING,
    SCALAR_BOUNDS,
    as_stored,
    binary_fast,
    fast_binary_kernel,
    call_op,
    category,
    data,
    elementwise_meta,
    elementwise_result,
    finish_inplace,
    check_inplace_shape,
    fresh,
    result_type,
    scalar_overflow,
    write_out,
)

Shape = tuple[int, ...]
_BOOL: Final = ScalarType.bool
_cached_strides: Final = cached_contiguous_strides
_from_array: Final = Tensor._from_array
_UINT8: Final = ScalarType.uint8

# -- add / mul / div ------------------------------------------------------------------------
def _plan_add(self: Tensor, other: Tensor, alpha: Scalar) -> tuple[Shape, ScalarType]:
    dtype = result_type(self, other)
    if not (dtype.is_floating_point or dtype.is_complex) and isinstance(alpha, (float, complex)):
        raise TensorError(ALPHA_FLOAT_FOR_INT)
    if alpha != 1 or type(alpha) is complex:  # an int the dtype holds passes with no call: sub's -1, most alphas
        bounds = SCALAR_BOUNDS[dtype._value_]
        if not (type(alpha) is int and (bounds is None or bounds[0] <= alpha <= bounds[1])):
            _check_alpha(alpha, dtype)
    return broadcast_shapes(self.shape, other.shape), dtype


def _check_alpha(alpha: Scalar, dtype: ScalarType) -> None:
    """PyTorch converts ``alpha`` to the dtype the addition computes in: Note [Scalars in a
    tensor's dtype] in _common.py (a real ``alpha`` of 1 is never checked: it leaves ``b`` as
    it is). A complex alpha is refused for real tensors first, as PyTorch refuses it."""
    if isinstance(alpha, complex) and not dtype.is_complex:
        raise TensorError(ALPHA_COMPLEX_FOR_REAL)
    error = scalar_overflow(alpha, dtype, "alpha")
    if error is not None:
        raise error


def _cast(t: Tensor, dtype: ScalarType) -> Any:
    """``t``'s values in ``dtype``: its own array when it already has it (no copy)."""
    return data(t) if t.dtype is dtype else data(t).astype(numpy_dtype(dtype))


def _add_values(self: Tensor, other: Tensor, alpha: Scalar, dtype: ScalarType) -> Any:
    a = _cast(self, dtype)
    b = _cast(other, dtype)
    if alpha == 1:
        return a + b
    if dtype is _BOOL:
        return a | (b & bool(alpha))
    return a + b * (as_stored(alpha, dtype) if dtype is _UINT8 else alpha)


# Note [Subtraction's fast path]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# ``sub`` is ``add`` with ``alpha`` negated, which the planned path computes as ``a + b * -1``.
# ``a - b`` is the same value bit for bit: for floating dtypes IEEE subtraction is the
# addition of the negation, and negation is exact (signed zeros and infinities included;
# NaN where the other is NaN); integers wrap alike, unsigned ones too; complex parts are
# floats. So ``sub_cpu`` runs the element-wise fast path with numpy's ``-`` for ``alpha``
# 1, as ``add_cpu`` does with ``+``; a bool operand, which numpy and PyTorch refuse, goes
# to the plan first (the kernel's bool gate), which raises PyTorch's error. ``add`` with ``alpha=-1`` (``sub_``
# and ``sub.out`` are still add's composites) takes the same path for floating dtypes.


# Note [Element-wise fast path]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# The common call -- two tensors of one dtype, no alpha -- skips the plan
# (``binary_fast``): numpy broadcasts and computes in that dtype (``+``, ``*``: the same
# dtype; comparisons: bool), and its fresh result becomes the result's storage. Shapes
# that do not broadcast make numpy raise ValueError; the kernel then runs the plan, which
# raises PyTorch's error. Every other call takes the planned path, which gives the same
# values.
# The operators as module constants: one global load on the hot path instead of two loads.
# ``ADD``, ``MUL`` (and ``NEG``, ``neg_cpu``'s) are also their ops' array rules (Note
# [Array rules] in _arrays.py).
ADD: Final[Callable[[Any, Any], Any]] = operator.add
_SUB: Final[Callable[[Any, Any], Any]] = operator.sub
MUL: Final[Callable[[Any, Any], Any]] = operator.mul
NEG: Final[Callable[[Any], Any]] = operator.neg
_DIV: Final[Callable[[Any, Any], Any]] = operator.truediv  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType] -- untyped in typeshed


def _add_planned(self: Tensor, other: Tensor, *, alpha: Scalar) -> Tensor:
    """``add`` where the fast path does not apply (``add_cpu`` tried it when ``alpha`` is 1)."""
    if type(alpha) is int and alpha == -1 and self._dtype in NUMPY_FLOATING:
        # sub's composite (add with alpha=-1): Note [Subtraction's fast path].
        result = binary_fast(self, other, _SUB)
        if result is not None:
            return result
    _shape, dtype = _plan_add(self, other, alpha)
    return elementwise_result(_add_values(self, other, alpha, dtype), dtype, self._device, self, other)


# The fast path runs in the kernel's own frame: Note [One fast path, three signatures].
add_cpu: Final = fast_binary_kernel("add_cpu", ADD, _add_planned, alpha=True)


def add_meta(self: Tensor, other: Tensor, *, alpha: Scalar) -> Tensor:
    return elementwise_meta(*_plan_add(self, other, alpha), self, other)


# operator's in-place functions, typed once here: typeshed leaves them untyped.
_IADD: Final[Callable[[Any, Any], Any]] = operator.iadd  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType] -- untyped in typeshed
_IMUL: Final[Callable[[Any, Any], Any]] = operator.imul  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType] -- untyped in typeshed


def _inplace_fast(self: Tensor, other: Tensor, iop: Callable[[Any, Any], Any]) -> bool:
    """``self op= other`` for two tensors of one dtype, written by numpy straight into
    ``self`` (``iop`` is ``operator.iadd``/``imul``: an ndarray's ``a += b`` is the ufunc
    with ``out=a``); False when the call needs the plan: other dtypes, or a broadcast
    shape that is not ``self``'s (numpy then refuses with ValueError and writes nothing).
    numpy would copy first when the operands overlap; PyTorch refuses a partial overlap
    (Note [Writes that overlap their inputs] in tensor/_overlap.py: a stride of 0 or a
    shared storage is where to look)."""
    if self._storage is not None and (0 in self._strides or other._storage is self._storage):
        check_write(self, other)
    if self._dtype is not other._dtype or (self.is_wrapped_number and other.is_wrapped_number):
        return False
    try:
        iop(data(self), data(other))
    except ValueError:
        return False
    return True  # the version bump is ADInplaceOrView's (Note [ADInplaceOrView])


def add__cpu(self: Tensor, other: Tensor, *, alpha: Scalar) -> Tensor:
    if type(alpha) is int and alpha == 1 and _inplace_fast(self, other, _IADD):
        return self
    check_write(self, other)  # done already when the fast path ran, but not for another alpha
    shape, dtype = _plan_add(self, other, alpha)
    check_inplace_shape(self, shape)
    return finish_inplace(self, _add_values(self, other, alpha, dtype), dtype)


def add__meta(self: Tensor, other: Tensor, *, alpha: Scalar) -> Tensor:
    check_write(self, other)
    shape, dtype = _plan_add(self, other, alpha)
    check_inplace_shape(self, shape)
    return finish_inplace(self, None, dtype)


def add_out_cpu(self: Tensor, other: Tensor, *, alpha: Scalar, out: Tensor) -> Tensor:
    shape, dtype = _plan_add(self, other, alpha)
    return write_out(out, _add_values(self, other, alpha, dtype), shape, dtype, self, other)


def add_out_meta(self: Tensor, other: Tensor, *, alpha: Scalar, out: Tensor) -> Tensor:
    shape, dtype = _plan_add(self, other, alpha)
    return write_out(out, None, shape, dtype, self, other)


def _negated(alpha: Scalar) -> Scalar:
    if isinstance(alpha, bool):
        raise TensorError(BOOL_SUBTRACTION)
    return -alpha


def _check_sub(self: Tensor, other: Tensor) -> None:
    if self.dtype is ScalarType.bool or other.dtype is ScalarType.bool:
        _negated(True)


def _sub_planned(self: Tensor, other: Tensor, *, alpha: Scalar) -> Tensor:
    """``sub`` where its fast path does not apply: ``add``'s plan with ``-alpha`` (bools
    refused first, as PyTorch refuses them; numpy's own refusal sends them here)."""
    _check_sub(self, other)
    return _add_planned(self, other, alpha=_negated(alpha))


# Its own kernel, not add's through a second dispatch (~0.8 us a call): ``a - b`` of one
# dtype is numpy's subtraction, bit for bit ``a + b * -1`` (Note [Subtraction's fast path]).
sub_cpu: Final = fast_binary_kernel("sub_cpu", _SUB, _sub_planned, alpha=True, refuse_bools=True)


def sub_meta(self: Tensor, other: Tensor, *, alpha: Scalar) -> Tensor:
    _check_sub(self, other)
    return elementwise_meta(*_plan_add(self, other, _negated(alpha)), self, other)


def sub__composite(self: Tensor, other: Tensor, *, alpha: Scalar) -> Tensor:
    _check_sub(self, other)
    result: Tensor = call_op("add_", "Tensor")(self, other, alpha=_negated(alpha))
    return result


def sub_out_composite(self: Tensor, other: Tensor, *, alpha: Scalar, out: Tensor) -> Tensor:
    _check_sub(self, other)
    result: Tensor = call_op("add", "out")(self, other, alpha=_negated(alpha), out=out)
    return result


def _plan_mul(self: Tensor, other: Tensor) -> tuple[Shape, ScalarType]:
    return broadcast_shapes(self.shape, other.shape), result_type(self, other)


# Note [Half products with a scalar]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# PyTorch multiplies and divides a float16 tensor by a one-element operand of another
# dtype (a Python number, a 0-dim tensor) in float32, its "opmath" type: the tensor's
# values widened, the operand's own value converted to float32 once, the result rounded
# to float16. Converting the operand to float16 first, as numpy does with a Python
# number, gives other values: ``zeros * 2**62`` is nan there (0 * inf) and 0 in PyTorch,
# ``3 * 0.1`` rounds twice. So ``mul`` and ``div`` with such an operand compute in
# float32 (``_in_float32``), in every form (functional, in-place, ``out=``); the float16
# fast paths take only float16 operands (FULL_FLOATING in _common.py), and float32 and
# float64 keep theirs untouched. PyTorch's ``add`` and ``sub``, and comparisons, convert
# the operand to float16 first (tests/test_core_half.py checks each against torch).
# Only ``other`` counts, as in PyTorch: a number on the left of ``/`` (``2 / a``) is not
# such an operand. (bfloat16 has no numpy dtype here, so no kernel computes in it.)
_F16: Final = ScalarType.float16


def _opmath(other: Tensor) -> bool:
    """Whether float16 ``mul``/``div`` computes in float32 with ``other`` (one element, not float16)."""
    return other._dtype is not _F16 and math.prod(other._shape) == 1


def _in_float32(op: Callable[[Any, Any], Any], self: Tensor, other: Tensor) -> Any:
    """``op`` of ``self`` (as float16) and ``other``'s own value, in float32, rounded to
    float16: Note [Half products with a scalar]."""
    import numpy as np

    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        a = _cast(self, _F16).astype(np.float32)
        return op(a, _cast(other, ScalarType.float32)).astype(np.float16)


def _mul_values(self: Tensor, other: Tensor, dtype: ScalarType) -> Any:
    if dtype is _F16 and _opmath(other):
        return _in_float32(MUL, self, other)
    return _cast(self, dtype) * _cast(other, dtype)


def _mul_by_mask(values: Tensor, mask: Tensor) -> Any:
    """A floating tensor times a bool tensor (relu's gradient, ``grad * (result > 0)``):
    the floating dtype wins, and numpy's product of the two arrays is in that dtype, with
    the values of the planned path (which casts the mask to it first). None when the
    shapes do not broadcast (the plan raises the error)."""
    try:
        return data(values) * data(mask)
    except ValueError:
        return None


def _mul_planned(self: Tensor, other: Tensor) -> Tensor:
    """``mul`` where the fast path (tried by ``mul_cpu``) does not apply."""
    product, dtype = None, self._dtype
    if other._dtype is _BOOL and dtype in NUMPY_FLOATING and not self.is_wrapped_number:
        product = _mul_by_mask(self, other)
    elif dtype is _BOOL and other._dtype in NUMPY_FLOATING and not other.is_wrapped_number:
        product, dtype = _mul_by_mask(other, self), other._dtype
    if product is None:
        _, dtype = _plan_mul(self, other)
        product = _mul_values(self, other, dtype)
    return elementwise_result(product, dtype, self._device, self, other)


mul_cpu: Final = fast_binary_kernel("mul_cpu", MUL, _mul_planned, half_scalars=False)


def mul_meta(self: Tensor, other: Tensor) -> Tensor:
    return elementwise_meta(*_plan_mul(self, other), self, other)


def mul__cpu(self: Tensor, other: Tensor) -> Tensor:
    if _inplace_fast(self, other, _IMUL):
        return self
    shape, dtype = _plan_mul(self, other)
    check_inplace_shape(self, shape)
    return finish_inplace(self, _mul_values(self, other, dtype), dtype)


def mul__meta(self: Tensor, other: Tensor) -> Tensor:
    check_write(self, other)
    shape, dtype = _plan_mul(self, other)
    check_inplace_shape(self, shape)
    return finish_inplace(self, None, dtype)


def mul_out_cpu(self: Tensor, other: Tensor, *, out: Tensor) -> Tensor:
    shape, dtype = _plan_mul(self, other)
    return write_out(out, _mul_values(self, other, dtype), shape, dtype, self, other)


def mul_out_meta(self: Tensor, other: Tensor, *, out: Tensor) -> Tensor:
    shape, dtype = _plan_mul(self, other)
    return write_out(out, None, shape, dtype, self, other)


def _plan_div(self: Tensor, other: Tensor) -> tuple[Shape, ScalarType]:
    """True division: integral and bool operands give the default float dtype."""
    dtype = result_type(self, other)
    if not (dtype.is_floating_point or dtype.is_complex):
        dtype = ScalarType.float32
    return broadcast_shapes(self.shape, other.shape), dtype


def _div_values(self: Tensor, other: Tensor, dtype: ScalarType) -> Any:
    import numpy as np

    if dtype is _F16 and _opmath(other):
        return _in_float32(_DIV, self, other)
    with np.errstate(divide="ignore", invalid="ignore"):
        return _cast(self, dtype) / _cast(other, dtype)


def _true_divide(a: Any, b: Any) -> Any:
    """``a / b`` as _div_values computes it. A finite nonzero number as ``b`` cannot
    divide by zero or make an invalid value, so numpy's slow ``errstate`` is skipped."""
    if type(b) is float or type(b) is int:
        if b and b - b == 0:  # nonzero and finite (inf - inf and nan - nan are nan)
            return a / b
    import numpy as np

    with np.errstate(divide="ignore", invalid="ignore"):
        return a / b


def div_cpu(self: Tensor, other: Tensor) -> Tensor:
    dtype = self._dtype  # true division keeps a floating dtype: the fast path applies
    if dtype in FULL_FLOATING or (dtype is _F16 and other._dtype is _F16):  # Note [Half products with a scalar]
        result = binary_fast(self, other, _true_divide)
        if result is not None:
            return result
    _, dtype = _plan_div(self, other)
    return elementwise_result(_div_values(self, other, dtype), dtype, self._device, self, other)


def div_meta(self: Tensor, other: Tensor) -> Tensor:
    return elementwise_meta(*_plan_div(self, other), self, other)


def div__cpu(self: Tensor, other: Tensor) -> Tensor:
    check_write(self, other)
    shape, dtype = _plan_div(self, other)
    check_inplace_shape(self, shape)
    return finish_inplace(self, _div_values(self, other, dtype), dtype)


def div__meta(self: Tensor, other: Tensor) -> Tensor:
    check_write(self, other)
    shape, dtype = _plan_div(self, other)
    check_inplace_shape(self, shape)
    return finish_inplace(self, None, dtype)


def div_out_cpu(self: Tensor, other: Tensor, *, out: Tensor) -> Tensor:
    shape, dtype = _plan_div(self, other)
    return write_out(out, _div_values(self, other, dtype), shape, dtype, self, other)


def div_out_meta(self: Tensor, other: Tensor, *, out: Tensor) -> Tensor:
    shape, dtype = _plan_div(self, other)
    return write_out(out, None, shape, dtype, self, other)


# -- pow, maximum, minimum -----------------------------------------------------------------
def _plan_pow(self: Tensor, exponent: Scalar) -> tuple[Shape, ScalarType]:
    dtype = result_type(self, wrapped_scalar(exponent, self.device))
    if category(dtype) <= 1 and isinstance(exponent, int) and exponent < 0:
        raise TensorError(NEGATIVE_INT_POWER)
    if category(dtype) <= 1:  # an integer exponent the dtype cannot hold (uint8 ** 300), as torch
        error = scalar_overflow(exponent, dtype, "exponent")
        if error is not None:
            raise error
    return self.shape, dtype


def pow_cpu(self: Tensor, exponent: Scalar) -> Tensor:
    import numpy as np

    _, dtype = _plan_pow(self, exponent)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        return elementwise_result(_cast(self, dtype) ** exponent, dtype, self._device, self)


def pow_meta(self: Tensor, exponent: Scalar) -> Tensor:
    return elementwise_meta(*_plan_pow(self, exponent), self)


def _plan_extremum(self: Tensor, other: Tensor, name: str) -> tuple[Shape, ScalarType]:
    dtype = result_type(self, other)
    if dtype.is_complex:
        raise TensorError(NOT_FOR_COMPLEX.format(name=name))
    return broadcast_shapes(self.shape, other.shape), dtype


def maximum_cpu(self: Tensor, other: Tensor) -> Tensor:
    import numpy as np

    _, dtype = _plan_extremum(self, other, "maximum")
    return elementwise_result(np.maximum(_cast(self, dtype), _cast(other, dtype)), dtype, self._device, self, other)


def maximum_meta(self: Tensor, other: Tensor) -> Tensor:
    return elementwise_meta(*_plan_extremum(self, other, "maximum"), self, other)


def minimum_cpu(self: Tensor, other: Tensor) -> Tensor:
    import numpy as np

    _, dtype = _plan_extremum(self, other, "minimum")
    return elementwise_result(np.minimum(_cast(self, dtype), _cast(other, dtype)), dtype, self._device, self, other)


def minimum_meta(self: Tensor, other: Tensor) -> Tensor:
    return elementwise_meta(*_plan_extremum(self, other, "minimum"), self, other)


# -- unary ------------------------------------------------------------------------------------
def _check_neg(self: Tensor) -> ScalarType:
    if self.dtype is ScalarType.bool:
        raise TensorError(BOOL_NEGATION)
    return self.dtype


def neg_cpu(self: Tensor) -> Tensor:
    dtype = _check_neg(self)
    return elementwise_result(NEG(data(self)), dtype, self._device, self)


def neg_meta(self: Tensor) -> Tensor:
    return elementwise_meta(self.shape, _check_neg(self), self)


def abs_cpu(self: Tensor) -> Tensor:
    import numpy as np

    dtype = {ScalarType.complex64: ScalarType.float32, ScalarType.complex128: ScalarType.float64}.get(self.dtype, self.dtype)
    return elementwise_result(np.abs(data(self)), dtype, self._device, self)


def abs_meta(self: Tensor) -> Tensor:
    dtype = {ScalarType.complex64: ScalarType.float32, ScalarType.complex128: ScalarType.float64}.get(self.dtype, self.dtype)
    return elementwise_meta(self.shape, dtype, self)


_NO_RELU: Final = frozenset({ScalarType.bool, ScalarType.complex64, ScalarType.complex128})


def _check_relu(self: Tensor) -> ScalarType:
    dtype = self._dtype
    if dtype in _NO_RELU:
        raise TensorError(RELU_DTYPE.format(dtype=dtype.name))
    return dtype


# Note [Typed zeros]
# ~~~~~~~~~~~~~~~~~~
# numpy converts a Python number operand on every call (for 32x64 float32, ``maximum(a,
# 0)`` costs about 0.3 us more than ``maximum(a, float32(0))``). relu and its gradient
# compare with zero, so they pass a zero of the tensor's own numpy type, made once per
# dtype: a Python int is weak in numpy's promotion (it takes the array's type), so the
# typed zero gives the same dtype and the same values. bfloat16, which numpy cannot store,
# keeps the Python 0.
_maximum: Any = None  # numpy.maximum, bound with the zeros (imports stay numpy-free)
_ZEROS: Final[list[Any]] = []  # a zero of each dtype's numpy type, by ScalarType code


def _zeros() -> list[Any]:
    global _maximum
    import numpy

    _maximum = numpy.maximum
    table: list[Any] = [0] * (max(t.value for t in ScalarType) + 1)
    for t in ScalarType:
        if t is not ScalarType.bfloat16:
            table[t.value] = numpy_dtype(t).type(0)
    _ZEROS[:] = table
    return _ZEROS


def relu_maximum() -> Any:
    """``numpy.maximum``, as relu_cpu calls it (its array rule: Note [Array rules] in _arrays.py)."""
    if _maximum is None:
        _zeros()
    return _maximum


def typed_zero(dtype: ScalarType) -> Any:
    """The zero relu_cpu compares ``dtype``'s elements with (Note [Typed zeros])."""
    return (_ZEROS or _zeros())[dtype._value_]


def relu_cpu(self: Tensor) -> Tensor:
    dtype = self._dtype
    if dtype in _NO_RELU:
        raise TensorError(RELU_DTYPE.format(dtype=dtype.name))
    zero = (_ZEROS or _zeros())[dtype._value_]  # Note [Typed zeros]
    array = self._array  # array_of in line (Note [Cached numpy view])
    if array is None or (self._storage is not None and self._array_buffer is not self._storage.buffer):
        array = self._fresh_array()
    result = _maximum(array, zero)
    if result.ndim > 1:  # Note [Element-wise results in torch's layout]: C-contiguous for a contiguous self
        if self._strides != _cached_strides(self._shape):
            return elementwise_result(result, dtype, self._device, self)
        return _from_array(result, dtype, self._device)
    return fresh(result, dtype, self._device)


def relu_meta(self: Tensor) -> Tensor:
    return elementwise_meta(self.shape, _check_relu(self), self)


# relu's gradient in one op (PyTorch's derivatives.yaml has relu's formula call it): the
# gradient where ``self > threshold``, else 0. Computed as a product by the mask in the
# result's dtype (numpy's where is slower, and so is a product by a bool array): the
# values relu's former formula ``grad * (result > 0)`` gave -- for non-finite values
# they differ from PyTorch's (docs/autograd.md, What differs from PyTorch).
def threshold_backward_cpu(grad_output: Tensor, self: Tensor, threshold: Scalar) -> Tensor:
    dtype = grad_output._dtype
    if dtype is self._dtype and dtype in NUMPY_FLOATING:  # relu's case: no promotion to plan
        grad = data(grad_output)
        if type(threshold) is int and threshold == 0:  # relu's threshold: Note [Typed zeros]
            threshold = (_ZEROS or _zeros())[dtype._value_]
        try:
            values = grad * (data(self) > threshold).astype(grad.dtype)
        except ValueError:  # shapes that do not broadcast: the plan raises the error
            pass
        else:  # relu's backward: the fast path's strides tests in line (Note [Element-wise results in torch's layout])
            if values.ndim > 1:  # of contiguous operands: a C-contiguous array of dtype's numpy dtype
                if (grad_output._strides != _cached_strides(grad_output._shape)
                        or self._strides != _cached_strides(self._shape) or not values.size):  # fmt: skip
                    return elementwise_result(values, dtype, grad_output._device, grad_output, self)
                return _from_array(values, dtype, grad_output._device)
            return fresh(values, dtype, grad_output._device)
    _, dtype = _plan_extremum(grad_output, self, "threshold_backward")
    grad = _cast(grad_output, dtype)
    values = grad * (data(self) > threshold).astype(grad.dtype)
    return elementwise_result(values, dtype, grad_output._device, grad_output, self)


def threshold_backward_meta(grad_output: Tensor, self: Tensor, threshold: Scalar) -> Tensor:
    return elementwise_meta(*_plan_extremum(grad_output, self, "threshold_backward"), grad_output, self)


def _check_fill(self: Tensor, value: Scalar) -> None:
    error = scalar_overflow(value, self.dtype, "value")  # Note [Scalars in a tensor's dtype]
    if error is not None:
        raise error


def fill__cpu(self: Tensor, value: Scalar) -> Tensor:
    _check_fill(self, value)
    return finish_inplace(self, as_stored(value, self.dtype), self.dtype)


def fill__meta(self: Tensor, value: Scalar) -> Tensor:
    _check_fill(self, value)
    return finish_inplace(self, None, self.dtype)


def zero__composite(self: Tensor) -> Tensor:
    result: Tensor = call_op("fill_", "Scalar")(self, 0)
    return result


# -- comparisons and where ---------------------------------------------------------------
def _plan_compare(self: Tensor, other: Tensor) -> tuple[Shape, ScalarType]:
    return broadcast_shapes(self.shape, other.shape), result_type(self, other)


_UFUNCS: Final = {"eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal",
                  "gt": "greater", "ge": "greater_equal"}  # fmt: skip


# Complex numbers have no order: ``lt``/``le``/``gt``/``ge`` refuse them (numpy would
# compare them lexicographically), as PyTorch's CPU kernels do, with a NotImplementedError.
_COMPLEX: Final = frozenset(t for t in ScalarType if t.is_complex)


def _make_compare(name: str) -> tuple[Callable[[Tensor, Tensor], Tensor], Callable[[Tensor, Tensor], Tensor]]:
    compare = getattr(operator, name)
    ordered = name not in ("eq", "ne")

    def cpu(self: Tensor, other: Tensor) -> Tensor:
        if ordered and (self._dtype in _COMPLEX or other._dtype in _COMPLEX):
            raise UnsupportedError(ORDER_COMPLEX.format(name=name, dtype=result_type(self, other).name))
        result = binary_fast(self, other, compare, ScalarType.bool)
        if result is not None:
            return result
        import numpy as np

        _, dtype = _plan_compare(self, other)
        ufunc = getattr(np, _UFUNCS[name])
        return elementwise_result(ufunc(_cast(self, dtype), _cast(other, dtype)), ScalarType.bool, self._device, self, other)

    def meta(self: Tensor, other: Tensor) -> Tensor:
        shape, _ = _plan_compare(self, other)
        return elementwise_meta(shape, ScalarType.bool, self, other)

    cpu.__name__ = cpu.__qualname__ = f"{name}_cpu"
    meta.__name__ = meta.__qualname__ = f"{name}_meta"
    return cpu, meta


eq_cpu, eq_meta = _make_compare("eq")
ne_cpu, ne_meta = _make_compare("ne")
lt_cpu, lt_meta = _make_compare("lt")
le_cpu, le_meta = _make_compare("le")
gt_cpu, gt_meta = _make_compare("gt")
ge_cpu, ge_meta = _make_compare("ge")


def _plan_where(condition: Tensor, self: Tensor, other: Tensor) -> tuple[Shape, ScalarType]:
    if condition.dtype is not ScalarType.bool:
        raise TensorError(WHERE_CONDITION_DTYPE.format(dtype=condition.dtype.name))
    shape = broadcast_shapes(condition.shape, broadcast_shapes(self.shape, other.shape))
    return shape, result_type(self, other)


def where_cpu(condition: Tensor, self: Tensor, other: Tensor) -> Tensor:
    import numpy as np

    _, dtype = _plan_where(condition, self, other)
    return elementwise_result(np.where(data(condition), _cast(self, dtype), _cast(other, dtype)), dtype,
                              self._device, condition, self, other)  # fmt: skip


def where_meta(condition: Tensor, self: Tensor, other: Tensor) -> Tensor:
    return elementwise_meta(*_plan_where(condition, self, other), condition, self, other)
