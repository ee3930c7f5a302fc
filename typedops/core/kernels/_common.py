"""What the core kernels share: calling other core ops, type promotion, out= handling.

Note [Nested op calls]
~~~~~~~~~~~~~~~~~~~~~~
A kernel that needs another core op calls it through the dispatcher (``call_op``), never
by calling that op's kernel function, so tracing, autograd and selective build see the
nested call. Handles are looked up on first use and cached; ``clear_op_cache()`` forgets
them when the core library is registered again (tests that register it themselves).
"""

from __future__ import annotations

import linecache
from collections.abc import Callable, Sequence
from typing import Any, Final, Protocol

from ...vocabulary import Device, Scalar, ScalarType, TensorError
from ...tensor import (
    CPU,
    Storage,
    Tensor,
    adopt_geometry,
    array_of,
    cached_contiguous_strides,
    check_write,
    contiguous_strides_cached,
    elementwise_strides,
    empty_meta,
    empty_tensor,
    make_view,
    numpy_dtype,
    resize_,
    wrap_array,
)
from ...dispatch import OperatorHandle, dispatcher
from ._messages import CANNOT_CAST_RESULT, OUT_SHAPE_MISMATCH, SCALAR_NOT_REAL, SCALAR_OVERFLOW

__all__ = [
    "NUMPY_FLOATING",
    "FULL_FLOATING",
    "SCALAR_BOUNDS",
    "scalar_overflow",
    "as_stored",
    "call_op",
    "clear_op_cache",
    "promote_types",
    "result_type",
    "can_cast",
    "check_out",
    "write_out",
    "finish_inplace",
    "check_inplace_shape",
    "meta_like",
    "data",
    "wrap",
    "fresh",
    "elementwise_result",
    "elementwise_meta",
    "binary_fast",
    "product_fast",
    "fast_binary_kernel",
    "np_dtype",
    "device_of",
    "default_dtype_for",
]

_OPS: dict[tuple[str, str], OperatorHandle] = {}


def call_op(name: str, overload: str = "") -> OperatorHandle:
    """The handle of core op ``name.overload`` (see Note [Nested op calls])."""
    handle = _OPS.get((name, overload))
    if handle is None:
        handle = _OPS[(name, overload)] = dispatcher.find_schema_or_throw(f"core::{name}", overload)
    return handle


def clear_op_cache() -> None:
    _OPS.clear()


# -- type promotion ------------------------------------------------------------------------
_BOOL, _INT, _FLOAT, _COMPLEX = range(4)
_INTS: Final = (ScalarType.uint8, ScalarType.int8, ScalarType.int16, ScalarType.int32, ScalarType.int64)
_FLOATS: Final = (ScalarType.float16, ScalarType.bfloat16, ScalarType.float32, ScalarType.float64)


def category(dtype: ScalarType) -> int:
    if dtype is ScalarType.bool:
        return _BOOL
    if dtype.is_complex:
        return _COMPLEX
    if dtype.is_floating_point:
        return _FLOAT
    return _INT


def promote_types(a: ScalarType, b: ScalarType) -> ScalarType:
    """The smallest dtype both ``a`` and ``b`` convert to, by PyTorch's table."""
    if a is b:
        return a
    ca, cb = category(a), category(b)
    if ca != cb:
        low, high = (a, b) if ca < cb else (b, a)
        if high.is_complex and low is ScalarType.float64:
            return ScalarType.complex128
        return high
    if ca == _INT:
        if ScalarType.uint8 in (a, b):
            other = b if a is ScalarType.uint8 else a
            return ScalarType.int16 if other is ScalarType.int8 else other
        return max(a, b, key=_INTS.index)
    if ca == _FLOAT:
        if {a, b} == {ScalarType.float16, ScalarType.bfloat16}:
            return ScalarType.float32
        return max(a, b, key=_FLOATS.index)
    return ScalarType.complex128  # two different complex dtypes


def _combine(higher: ScalarType | None, lower: ScalarType | None) -> ScalarType | None:
    """Fold a lower-priority group's dtype into a higher one's (PyTorch's combine_categories)."""
    if higher is None or lower is None:
        return lower if higher is None else higher
    if higher.is_complex:
        return higher
    if lower.is_complex:
        if higher.is_floating_point:
            return ScalarType.complex128 if higher is ScalarType.float64 else ScalarType.complex64
        return lower
    if higher.is_floating_point:
        return higher
    if higher is ScalarType.bool or lower.is_floating_point:
        return promote_types(higher, lower)
    return higher


# A wrapped Python number promotes as the default dtype of its kind.
_WRAPPED_AS: Final = {ScalarType.float64: ScalarType.float32, ScalarType.complex128: ScalarType.complex64}


def result_type(*tensors: Tensor) -> ScalarType:
    """The dtype of an element-wise op on ``tensors``: dimensioned tensors outrank 0-dim
    ones, which outrank wrapped Python numbers, unless a lower group has a higher category
    (``int64 tensor + 2.5`` is float32, ``float16 tensor + 2.5`` stays float16)."""
    groups: list[ScalarType | None] = [None, None, None]
    for t in tensors:
        rank = 2 if t.is_wrapped_number else (1 if t.ndim == 0 else 0)
        dtype = _WRAPPED_AS.get(t.dtype, t.dtype) if t.is_wrapped_number else t.dtype
        current = groups[rank]
        groups[rank] = dtype if current is None else promote_types(current, dtype)
    result = _combine(groups[0], _combine(groups[1], groups[2]))
    assert result is not None, "result_type needs at least one tensor"
    return result


def can_cast(src: ScalarType, dst: ScalarType) -> bool:
    """PyTorch's in-place rule: no complex -> real, float -> integral, or non-bool -> bool."""
    return not (
        (src.is_complex and not dst.is_complex)
        or (src.is_floating_point and category(dst) in (_INT, _BOOL))
        or (src is not ScalarType.bool and dst is ScalarType.bool)
    )


def check_cast(src: ScalarType, dst: ScalarType) -> None:
    if not can_cast(src, dst):
        raise TensorError(CANNOT_CAST_RESULT.format(src=src.name, dst=dst.name))


def default_dtype_for(value: Scalar) -> ScalarType:
    """The dtype a Python number gets on its own (``full``, ``arange``, ``scalar_tensor``)."""
    if isinstance(value, bool):
        return ScalarType.bool
    if isinstance(value, int):
        return ScalarType.int64
    if isinstance(value, float):
        return ScalarType.float32
    return ScalarType.complex64


# -- results -------------------------------------------------------------------------------
# ``t``'s elements as a numpy array sharing its memory: the cached view (Note [Wrap and
# unwrap] in _tensor.py). Kernels must not reshape it in place.
data: Final = array_of

_ndarray: Any = None  # numpy.ndarray, bound on first use (``import typedops`` skips numpy)
# numpy dtypes by ScalarType code (a list index costs less than numpy_dtype's dict lookup).
_NUMPY_BY_CODE: list[Any] = []


def _as_array(value: Any) -> Any:  # pyright: ignore[reportUnusedFunction] -- _FAST_PATH calls it
    """``value`` as an ndarray: a numpy scalar (from 0-dim operands) becomes a 0-dim array.
    Binds ``_ndarray`` on the first call, so ``type(x) is _ndarray`` holds from then on."""
    global _ndarray
    import numpy as np

    _ndarray = np.ndarray
    return value if type(value) is np.ndarray else np.asarray(value)


def _numpy_by_code() -> list[Any]:
    global _ndarray
    import numpy as np

    _ndarray = np.ndarray
    table: list[Any] = [None] * (max(t.value for t in ScalarType) + 1)
    for t in ScalarType:
        if t is not ScalarType.bfloat16:
            table[t.value] = numpy_dtype(t)
    _NUMPY_BY_CODE[:] = table
    return _NUMPY_BY_CODE


def np_dtype(dtype: ScalarType) -> Any:
    """``numpy_dtype(dtype)`` by a list index (bfloat16 raises numpy_dtype's error)."""
    found = (_NUMPY_BY_CODE or _numpy_by_code())[dtype._value_]
    return found if found is not None else numpy_dtype(dtype)


def fresh(array: Any, dtype: ScalarType, device: Device) -> Tensor:
    """A new tensor that owns ``array``, a value the kernel has just computed and nobody
    else holds (a ufunc's result, a numpy scalar): no copy when it is already a
    C-contiguous array of ``dtype``'s numpy dtype, else one conversion. Never pass an
    input's array or a view of one: the result would share its memory (use ``wrap``)."""
    target = (_NUMPY_BY_CODE or _numpy_by_code())[dtype._value_]
    if type(array) is not _ndarray or array.dtype is not target:
        import numpy as np

        array = np.asarray(array, dtype=target if target is not None else numpy_dtype(dtype))
    if array.ndim > 1 and not array.flags.c_contiguous:
        array = array.copy()
    return _from_array(array, dtype, device)


_from_array: Final = Tensor._from_array
_META: Final = Device.parse("meta")
_cached_strides: Final = cached_contiguous_strides  # pyright: ignore[reportUnusedVariable] -- _FAST_PATH reads it


# Note [Element-wise results in torch's layout]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# An out-of-place element-wise kernel hands numpy's result to ``elementwise_result`` with
# its tensor inputs in argument order, which gives it the strides PyTorch gives it (Note
# [Element-wise result strides] in tensor/_strides.py). The common call is decided by two
# cheap tests: when every input has exactly the contiguous strides of its shape (or, off
# the hot paths, only zero strides: an expanded number, which never orders two dims) and
# the result has elements, PyTorch's result is contiguous, and so is numpy's: its ufuncs lay
# out the result of C-contiguous operands (broadcast or not) in C order, which the hot
# paths (the fast path, ``relu_cpu``) rely on without testing it (tests/test_core_layout.py
# checks it); ``elementwise_result`` still copies a result that is not. (Merely
# contiguous inputs, whose size-1 dims may have other strides, and empty results with
# broadcasting can sort otherwise.) Any other call computes the strides: numpy's ufuncs
# (order 'K') mostly lay the result out in the same order, and it is then wrapped over
# its own memory (``ravel('K')`` is the storage); else it is copied once into the
# computed layout. 0-dim and 1-dim results are always contiguous. The element-wise fast
# path (Note [One fast path, three signatures]), ``relu_cpu`` and ``threshold_backward``'s
# same-dtype path run the two tests in line.
def elementwise_result(array: Any, dtype: ScalarType, device: Device, *inputs: Tensor) -> Tensor:
    """``fresh(array, dtype, device)`` laid out as PyTorch lays out an element-wise op's
    result on ``inputs`` (its tensor arguments in order): Note [Element-wise results in
    torch's layout]."""
    target = (_NUMPY_BY_CODE or _numpy_by_code())[dtype._value_]
    if type(array) is not _ndarray or array.dtype is not target:
        import numpy as np

        array = np.asarray(array, dtype=target if target is not None else numpy_dtype(dtype))
    if array.ndim > 1:  # fresh's work in line, after the two tests
        for t in inputs:
            strides = t._strides
            if strides != _cached_strides(t._shape) and any(strides) and strides != contiguous_strides_cached(t._shape):
                break  # (strides all 0, an expanded number such as mean's gradient, decide nothing)
        else:
            if array.size:
                return _from_array(array if array.flags.c_contiguous else array.copy(), dtype, device)
        return _laid_out(array, elementwise_strides(array.shape, [(t._shape, t._strides) for t in inputs]), dtype, device)
    return _from_array(array, dtype, device)


def _laid_out(array: Any, strides: tuple[int, ...], dtype: ScalarType, device: Device) -> Tensor:
    """A new tensor of ``strides`` (dense) holding ``array``, a fresh result of ``dtype``'s
    numpy dtype: ``array`` itself when its layout is that one, else one copy."""
    shape = array.shape
    if strides == contiguous_strides_cached(shape):
        return fresh(array, dtype, device)
    import numpy as np

    itemsize = array.itemsize
    same = all(n == 1 or s == t * itemsize for n, s, t in zip(shape, array.strides, strides))
    flat = array.ravel("K") if same else None
    if flat is None or flat.base is None:  # another layout (or a copy: ravel found no view)
        flat = np.empty(array.size, array.dtype)
        if flat.size:
            view = np.ndarray(shape, array.dtype, flat, 0, tuple(t * itemsize for t in strides))
            view[...] = array
            array = view
    t = Tensor._from_parts(Storage(flat, flat.size), shape, strides, 0, dtype, device)
    if flat.size:  # the cached view (Note [Cached numpy view] in tensor/_tensor.py)
        t._array, t._array_buffer = array, flat
    return t


def elementwise_meta(shape: Sequence[int], dtype: ScalarType, *inputs: Tensor) -> Tensor:
    """The Meta twin of ``elementwise_result``: an empty meta tensor with its strides."""
    strides = elementwise_strides(shape, [(t._shape, t._strides) for t in inputs])
    return empty_tensor(shape, dtype, _META, dense_strides=strides)


# The floating dtypes numpy computes in natively (the kernels' fast paths apply to them).
NUMPY_FLOATING: Final = frozenset({ScalarType.float16, ScalarType.float32, ScalarType.float64})
# Those whose product and quotient with a scalar numpy computes as PyTorch does: not
# float16 (Note [Half products with a scalar] in _pointwise.py).
FULL_FLOATING: Final = frozenset({ScalarType.float32, ScalarType.float64})
# The dtypes of wrapped bools, ints and floats (wrapped_scalar's exact storage).
_WEAK_INTO_FLOATING: Final = frozenset({ScalarType.bool, ScalarType.int64, ScalarType.float64})


# Note [One fast path, three signatures]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# The element-wise fast path (Note [Element-wise fast path] in _pointwise.py) is the hot
# path of every small element-wise op, where a Python call costs a few percent: a kernel
# that calls ``binary_fast`` pays a frame for it (~30 ns of a ~1 us ``add``). So the
# path is written once, as the source text below, and compiled into each function that
# runs it in its own frame: ``binary_fast`` (None when the call needs the kernel's plan),
# its twin ``product_fast`` for ``matmul`` (whose result of two or more dims is
# C-contiguous, where an element-wise one takes PyTorch's layout), and the kernels
# ``fast_binary_kernel`` makes (``add_cpu``, ``mul_cpu``: the plan is
# their ``planned`` function, called with the kernel's arguments). The text is this
# module's own constant, never user input; the compiled functions read this module's
# globals (``_ndarray`` is bound on first use).
#
# With one dtype every group of ``result_type`` has that dtype, so only a wrapped number
# (promoting as the default of its kind) could change it, and it does only when *both*
# operands are wrapped numbers. A floating tensor with a wrapped bool, int or float
# (``a + 2.5``) keeps the tensor's dtype too: PyTorch computes in the tensor's dtype, and
# so does numpy with the number as a Python scalar. A wrapped number is 0-dim: the shape
# slots are tested first (is_wrapped_number is a class default, slower to read; see Note
# [Tensor fields with class defaults]). The body is ``array_of`` and ``fresh`` inlined.
_FAST_PATH: Final = """\
def _make(op, planned):
    def {name}({params}){returns}:
{gate}        dtype = self._dtype
        if dtype is not other._dtype:
            if not (dtype in {floating} and other._dtype in _WEAK_INTO_FLOATING and other.is_wrapped_number):
                return {fallback}
            if self.is_wrapped_number:
                return {fallback}
            b = array_of(other).item()
        else:
            if not self._shape and not other._shape and self.is_wrapped_number and other.is_wrapped_number:
                return {fallback}
            b = other._array
            if b is None or (other._storage is not None and other._array_buffer is not other._storage.buffer):
                b = other._fresh_array()
        a = self._array
        if a is None or (self._storage is not None and self._array_buffer is not self._storage.buffer):
            a = self._fresh_array()
        try:
            result = op(a, b)
        except ValueError:
            return {fallback}
        ndim = result.ndim  # a numpy scalar (0-dim operands' result) has one too
        if ndim > 1:
{wide}        elif not ndim and type(result) is not _ndarray:
            result = _as_array(result)
        return _from_array(result, {result_dtype}, self._device)
    return {name}
"""
# What the fast path does with a result of two or more dims: an element-wise op's takes
# PyTorch's layout (Note [Element-wise results in torch's layout]; the two tests inline:
# numpy's result of C-contiguous operands is C-contiguous, so it is not tested), a matrix
# product's is C-contiguous.
_ELEMENTWISE_WIDE: Final = (
    "            if (self._strides != _cached_strides(self._shape) or other._strides != _cached_strides(other._shape)\n"
    "                    or not result.size):\n"
    "                return elementwise_result(result, {result_dtype}, self._device, self, other)\n"
)
_PRODUCT_WIDE: Final = "            if not result.flags.c_contiguous:\n                result = result.copy()\n"
_ONE: Final = 1  # `alpha is _ONE`: CPython's small ints are one object each (else the == test)
_ALPHA_GATE: Final = (
    "        if not (alpha is _ONE or (type(alpha) is int and alpha == 1)):\n"
    "            return planned(self, other, alpha=alpha)\n"
)
# ``sub``'s: a bool operand (a tensor, or a wrapped bool: ``x - True``) goes to the plan,
# which refuses it as PyTorch does (numpy would compute ``x - True``).
_BOOL_GATE: Final = (
    "        if self._dtype is _BOOL_TYPE or other._dtype is _BOOL_TYPE:\n"
    "            return planned(self, other, alpha=alpha)\n"
)
_BOOL_TYPE: Final = ScalarType.bool  # pyright: ignore[reportUnusedVariable] -- _BOOL_GATE reads it


def _compile_fast_path(name: str, op: Any, planned: Any, *, params: str, returns: str, gate: str,
                       fallback: str, result_dtype: str, floating: str = "NUMPY_FLOATING",
                       wide: str = _ELEMENTWISE_WIDE) -> Any:  # fmt: skip
    """One function running the fast path (Note [One fast path, three signatures]); a
    tensor of a dtype in ``floating`` (this module's global) takes a wrapped number."""
    source = _FAST_PATH.format(name=name, params=params, returns=returns, gate=gate, fallback=fallback,
                               result_dtype=result_dtype, floating=floating,
                               wide=wide.format(result_dtype=result_dtype))  # fmt: skip
    filename = f"<fast path: {name}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)  # tracebacks show the lines
    namespace: dict[str, Any] = {}
    exec(compile(source, filename, "exec"), globals(), namespace)
    function = namespace["_make"](op, planned)
    function.__qualname__ = name
    return function


class _BinaryFast(Protocol):
    def __call__(
        self, self_: Tensor, other: Tensor, op: Callable[[Any, Any], Any], result_dtype: ScalarType | None = None, /
    ) -> Tensor | None: ...


binary_fast: Final[_BinaryFast] = _compile_fast_path(
    "binary_fast", None, None,
    params="self: Tensor, other: Tensor, op: Callable[[Any, Any], Any], result_dtype: ScalarType | None = None",
    returns=" -> Tensor | None", gate="", fallback="None",
    result_dtype="dtype if result_dtype is None else result_dtype",
)  # fmt: skip
binary_fast.__doc__ = """``op(self, other)`` for two tensors of one dtype, its result of ``result_dtype``
(default: that dtype) laid out as PyTorch lays out an element-wise result; None when the
call needs the kernel's plan (other dtypes, or shapes that do not broadcast). See Note
[One fast path, three signatures]."""
product_fast: Final[_BinaryFast] = _compile_fast_path(
    "product_fast", None, None,
    params="self: Tensor, other: Tensor, op: Callable[[Any, Any], Any], result_dtype: ScalarType | None = None",
    returns=" -> Tensor | None", gate="", fallback="None",
    result_dtype="dtype if result_dtype is None else result_dtype", wide=_PRODUCT_WIDE,
)  # fmt: skip
product_fast.__doc__ = """``binary_fast`` for ``matmul`` (not element-wise): its result is C-contiguous."""


def fast_binary_kernel(
    name: str, op: Callable[[Any, Any], Any], planned: Callable[..., Tensor], *, alpha: bool = False,
    half_scalars: bool = True, refuse_bools: bool = False,
) -> Callable[..., Tensor]:  # fmt: skip
    """The CPU kernel ``name``: ``op(self, other)`` by the fast path, else ``planned``
    with the kernel's arguments. With ``alpha`` the kernel takes ``*, alpha`` (``add``)
    and runs the fast path only for ``alpha == 1``; without ``half_scalars`` a float16
    tensor with a wrapped number takes the plan (``mul``: Note [Half products with a
    scalar] in _pointwise.py); with ``refuse_bools`` (and ``alpha``) a bool operand takes
    the plan (``sub``). See Note [One fast path, three signatures]."""
    kernel: Callable[..., Tensor] = _compile_fast_path(
        name, op, planned,
        params="self: Tensor, other: Tensor, *, alpha: Scalar" if alpha else "self: Tensor, other: Tensor",
        returns=" -> Tensor", gate=(_ALPHA_GATE if alpha else "") + (_BOOL_GATE if refuse_bools else ""),
        fallback="planned(self, other, alpha=alpha)" if alpha else "planned(self, other)", result_dtype="dtype",
        floating="NUMPY_FLOATING" if half_scalars else "FULL_FLOATING",
    )  # fmt: skip
    kernel.__module__ = planned.__module__
    return kernel


def wrap(array: Any, dtype: ScalarType, device: Device | None = None) -> Tensor:
    """A new tensor with ``array``'s values cast to ``dtype``."""
    import numpy as np

    arr = np.asarray(array)
    return wrap_array(arr, dtype) if device is None else wrap_array(arr, dtype, device)


def meta_like(shape: Sequence[int], dtype: ScalarType) -> Tensor:
    return empty_meta(shape, dtype)


def device_of(device: Device | str | None, default: Device = CPU) -> Device:
    """The dispatcher passes a ``Device`` argument through as given: it may be a str."""
    return default if device is None else Device.parse(device)


def check_out(out: Tensor, shape: Sequence[int], dtype: ScalarType) -> None:
    """Resize ``out`` to ``shape`` if it differs and check ``dtype`` can be written into it."""
    check_cast(dtype, out.dtype)
    if tuple(out.shape) != tuple(shape):
        resize_(out, shape)


def write_out(out: Tensor, values: Any, shape: Sequence[int], dtype: ScalarType, *inputs: Tensor) -> Tensor:
    """Write ``values`` (of result ``dtype``) into ``out`` (resized to ``shape``); return it.
    An ``out`` that must be resized takes the layout of the out-of-place result on
    ``inputs``, the op's tensor arguments (PyTorch restrides it so; one of the right shape
    keeps its own: Note [Element-wise result strides] in tensor/_strides.py). With
    ``inputs``, an ``out`` overlapping itself or part of one is refused first (Note [Writes
    that overlap their inputs] in tensor/_overlap.py); a reduction passes none, as
    PyTorch's check nothing."""
    if inputs:
        check_write(out, *inputs)
    strides = None
    if inputs and tuple(out.shape) != tuple(shape):
        strides = elementwise_strides(shape, [(t._shape, t._strides) for t in inputs])
    check_out(out, shape, dtype)
    if strides is not None and strides != out._strides:
        adopt_geometry(out, make_view(out, shape, strides, out._offset))
    if not out.is_meta:
        import numpy as np

        data(out)[...] = np.asarray(values, dtype=numpy_dtype(dtype)).astype(numpy_dtype(out.dtype))
    return out


# Note [Scalars in a tensor's dtype]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# PyTorch converts a Scalar that meets a dtype (add's alpha, full's and fill_'s value) with
# a checked conversion, and a value the dtype cannot hold raises ("value cannot be
# converted to type float without overflow"): a finite float beyond a floating dtype's
# largest value, a number beyond an integer dtype's range (or a non-finite float), a
# complex number with an imaginary part for a real dtype. numpy would give inf with a
# RuntimeWarning, wrap silently, or raise a bare OverflowError. Non-finite floats convert
# to floating dtypes, and bools hold any number. An unsigned dtype takes a negative number
# down to minus its largest, wrapping as C's conversion does: uint8 - uint8 is
# ``a + b * 255`` in uint8 arithmetic, ``full(..., -1, dtype=uint8)`` is 255.
_F32_MAX: Final = 3.4028234663852886e38
_BOUNDS: Final = {  # what a dtype holds (each part, for complex64); the others: everything
    ScalarType.float16: (-65504.0, 65504.0),
    ScalarType.bfloat16: (-3.3895313892515355e38, 3.3895313892515355e38),
    ScalarType.float32: (-_F32_MAX, _F32_MAX),
    ScalarType.complex64: (-_F32_MAX, _F32_MAX),
    ScalarType.int8: (-(2**7), 2**7 - 1),
    ScalarType.int16: (-(2**15), 2**15 - 1),
    ScalarType.int32: (-(2**31), 2**31 - 1),
    ScalarType.int64: (-(2**63), 2**63 - 1),
    ScalarType.uint8: (-(2**8 - 1), 2**8 - 1),  # negatives wrap
}
# By ScalarType code: a list index, where a dict lookup would hash the enum member in Python.
SCALAR_BOUNDS: Final[list[tuple[float, float] | None]] = [None] * (max(t._value_ for t in ScalarType) + 1)
for _dtype, _bounds in _BOUNDS.items():
    SCALAR_BOUNDS[_dtype._value_] = _bounds
_INF: Final = float("inf")


def scalar_overflow(value: Scalar, dtype: ScalarType, what: str) -> TensorError | None:
    """The error of converting ``value`` (the argument ``what``: "alpha", "fill_value") to
    ``dtype``, or None when it converts: Note [Scalars in a tensor's dtype]."""
    if isinstance(value, complex) and not dtype.is_complex:
        if value.imag:
            return TensorError(SCALAR_NOT_REAL.format(dtype=dtype.name, what=what))
        value = value.real
    bounds = SCALAR_BOUNDS[dtype._value_]
    if bounds is None:
        return None
    low, high = bounds
    if isinstance(value, complex):
        overflows = high < abs(value.real) < _INF or high < abs(value.imag) < _INF
    elif isinstance(value, float) and (dtype.is_floating_point or dtype.is_complex):
        overflows = high < abs(value) < _INF
    else:  # an int, or a float for an integer dtype (which must be finite)
        overflows = not low <= value <= high
    return TensorError(SCALAR_OVERFLOW.format(dtype=dtype.name, what=what, low=low, high=high)) if overflows else None


def as_stored(value: Scalar, dtype: ScalarType) -> Scalar:
    """``value`` as numpy stores it in ``dtype`` once ``scalar_overflow`` passed it: a
    negative int wrapped for uint8, a complex number's real part for a real dtype (Note
    [Scalars in a tensor's dtype])."""
    if dtype is ScalarType.uint8 and isinstance(value, int) and value < 0:
        return value + 2**8
    if isinstance(value, complex) and not dtype.is_complex:
        return value.real
    return value


def check_inplace_shape(self: Tensor, shape: tuple[int, ...]) -> None:
    """Refuse an in-place op whose broadcast ``shape`` is not ``self``'s (it would resize it)."""
    if shape != self.shape:
        raise TensorError(OUT_SHAPE_MISMATCH.format(shape=list(self.shape), broadcast=list(shape)))


def finish_inplace(self: Tensor, values: Any, dtype: ScalarType) -> Tensor:
    """Write ``values`` of result ``dtype`` into ``self`` after the in-place cast check.
    An in-place kernel refuses a write that overlaps itself or part of an input before it
    computes anything (``check_write``: Note [Writes that overlap their inputs] in
    tensor/_overlap.py)."""
    check_cast(dtype, self.dtype)
    if not self.is_meta:
        import numpy as np

        data(self)[...] = np.asarray(values).astype(numpy_dtype(self.dtype))
    return self
