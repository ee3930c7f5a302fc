"""The core kernels' messages, in one place (``Final`` format strings, mypy's
``message_registry`` is the model): each named for what went wrong, formatted only when
the error is raised. Most keep PyTorch's wording, which users search for."""

from __future__ import annotations

from typing import Final

# -- dtypes and results --------------------------------------------------------------------------
CANNOT_CAST_RESULT: Final = "result type {src} can't be cast to the desired output type {dst}"
OUT_SHAPE_MISMATCH: Final = "output with shape {shape} doesn't match the broadcast shape {broadcast}"
META_COPY: Final = "Cannot copy out of meta tensor; {no_data}"

# -- factories -----------------------------------------------------------------------------------
ONLY_STRIDED: Final = "only the strided layout is supported, not {layout}"
EMPTY_PRESERVE_FORMAT: Final = "preserve memory format is unsupported by empty(); use contiguous_format"
NEGATIVE_STRIDES: Final = "empty_strided: negative strides are not supported, got strides {strides}"
RANDN_DTYPE: Final = "randn needs a floating-point or complex dtype, not {dtype}"
ARANGE_NOT_REAL: Final = "arange: {name} must be a real number, not {value!r}"
ARANGE_ZERO_STEP: Final = "step must be nonzero"
ARANGE_RANGE: Final = "unsupported range: {start} -> {end}"
ARANGE_NAN_STEP: Final = "arange: step must be a number, not nan"
ARANGE_STEP_SIGN: Final = "upper bound and larger bound inconsistent with step sign"

# -- pointwise -----------------------------------------------------------------------------------
ALPHA_FLOAT_FOR_INT: Final = "For integral input tensors, argument alpha must not be a floating point number."
ALPHA_COMPLEX_FOR_REAL: Final = "For non-complex input tensors, argument alpha must not be a complex number."
SCALAR_OVERFLOW: Final = (
    "value cannot be converted to type {dtype} without overflow: {what} must lie within "
    "{low} to {high}; pass a smaller {what}, or a wider dtype"
)
SCALAR_NOT_REAL: Final = (
    "value cannot be converted to type {dtype} without overflow: {what} has an imaginary "
    "part; pass a real {what}, or a complex dtype"
)
BOOL_SUBTRACTION: Final = (
    "Subtraction, the `-` operator, with a bool tensor is not supported. "
    "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead."
)
BOOL_NEGATION: Final = (
    "Negation, the `-` operator, on a bool tensor is not supported. "
    "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead."
)
NEGATIVE_INT_POWER: Final = "Integers to negative integer powers are not allowed."
NOT_FOR_COMPLEX: Final = "{name} not implemented for complex tensors."
NOT_FOR_DTYPE: Final = "{name} is not implemented for {dtype} tensors; convert them first, e.g. x.to(float32)"
INTEGER_DIVISION_BY_ZERO: Final = (
    "ZeroDivisionError: {name} of integers by zero; test the divisor first (core.where), or "
    "divide floating tensors (x.to(float32)), where it gives inf or nan"
)
ORDER_COMPLEX: Final = "{name} is not implemented for {dtype}: complex numbers have no order; compare their .real or .abs() instead"
RELU_DTYPE: Final = "relu is not implemented for {dtype} tensors"
WHERE_CONDITION_DTYPE: Final = (
    "where expected condition to be a boolean tensor, but got a tensor with dtype {dtype}"
)

# -- reductions and matrix products --------------------------------------------------------------
DIM_REPEATED: Final = "dim {dim} appears multiple times in the list of dims"
MEAN_DTYPE: Final = (
    "mean(): could not infer output dtype. Input dtype must be either a floating point or "
    "complex dtype. Got: {dtype}"
)
EMPTY_REDUCTION_DIM: Final = "{name}(): Expected reduction dim {dim} to have non-zero size."
EMPTY_FULL_REDUCTION: Final = (
    "{name}(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
    "reduction dim with the 'dim' argument."
)
SUM_OUT_DTYPE: Final = (
    "Expected out tensor to have dtype {dtype}, but got {out} instead: pass an out tensor of "
    "dtype {dtype}, or leave dtype out to sum in the out tensor's dtype"
)
OPERAND_DTYPES_DIFFER: Final = "expected both operands to have the same dtype, but got: {a} != {b}"
MATMUL_SCALAR: Final = "both arguments to matmul need to be at least 1D, but they are {a}D and {b}D"
MATMUL_SHAPES: Final = "mat1 and mat2 shapes cannot be multiplied ({a} and {b})"
NOT_A_MATRIX: Final = "{name} must be a matrix, but it is {ndim}-D"

# -- views and joins -----------------------------------------------------------------------------
STRIDES_LENGTH: Final = "mismatch in length of strides and shape: {strides} strides for {sizes} sizes"
AS_STRIDED_NEGATIVE: Final = (
    "as_strided: sizes, strides and the storage offset must be non-negative, got size={size}, "
    "stride={stride}, storage_offset={offset}"
)
STORAGE_TOO_SMALL: Final = (
    "setStorage: sizes {size}, strides {stride}, storage offset {offset} need {needed} elements, "
    "but the storage holds {held}"
)
NOT_VIEWABLE: Final = (
    "view size is not compatible with input tensor's size and stride (at least one dimension "
    "spans across two contiguous subspaces). Use .reshape(...) instead."
)
PERMUTE_RANK: Final = (
    "permute(): number of dims don't match in permute: the tensor has {ndim} dimensions but dims has {count}"
)
PERMUTE_DUPLICATE: Final = "permute(): duplicate dims are not allowed (dims={dims})"
SELECT_SCALAR: Final = "select() cannot be applied to a 0-dim tensor."
SELECT_OUT_OF_RANGE: Final = "select(): index {index} out of range for tensor of size {size} at dimension {dim}"
SLICE_SCALAR: Final = "slice() cannot be applied to a 0-dim tensor."
SLICE_STEP: Final = "slice step must be positive"
EXPAND_TOO_FEW: Final = (
    "expand: the number of sizes provided ({count}) must be greater or equal to the number of "
    "dimensions in the tensor ({ndim})"
)
EXPAND_NEW_MINUS_ONE: Final = "expand: -1 is not allowed in a leading, non-existing dimension {dim}"
EXPAND_NEGATIVE: Final = (
    "expand: the size {target} at dimension {dim} is negative; give a size of at least 0, or -1 "
    "to keep the tensor's size there"
)
EXPAND_MISMATCH: Final = (
    "The expanded size of the tensor ({target}) must match the existing size ({have}) at "
    "non-singleton dimension {dim}.  Target sizes: {size}.  Tensor sizes: {shape}"
)
T_RANK: Final = "t() expects a tensor with <= 2 dimensions, but self is {ndim}D"
FLATTEN_ORDER: Final = "flatten() has invalid args: start_dim cannot come after end_dim"
CONTIGUOUS_PRESERVE_FORMAT: Final = "preserve memory format is unsupported by the contiguous operator"
CAT_EMPTY: Final = "cat(): expected a non-empty list of Tensors"
CAT_SCALAR: Final = "zero-dimensional tensor (at position 0) cannot be concatenated"
CAT_RANKS: Final = "Tensors must have same number of dimensions: got {a} and {b}"
CAT_SIZES: Final = (
    "Sizes of tensors must match except in dimension {dim}. Expected size {expected} but got "
    "size {got} for tensor number {index} in the list."
)
STACK_EMPTY: Final = "stack expects a non-empty TensorList"
STACK_SIZES: Final = "stack expects each tensor to be equal size, but got {first} at entry 0 and {shape} at entry {index}"
GEOMETRY_NOT_INTS: Final = (
    "{op}(): {argument} must be ints, got {values}: a call that skips the argument checks "
    "(redispatch) must pass what they would (ints, not floats or bools)"
)
BITWISE_DTYPE: Final = (
    "{name} is not implemented for {dtype} tensors: it takes bool and integer tensors; convert "
    "first, e.g. x.to(int64), or compare (x != 0) for a mask"
)
POW_BOOL: Final = "\"pow\" not implemented for 'Bool': convert first, e.g. x.to(int64)"
CLAMP_NO_BOUNDS: Final = "torch.clamp: At least one of 'min' or 'max' must not be None; pass min=, max= or both"
CLAMP_COMPLEX: Final = "clamp is not supported for complex types; clamp the real and imaginary parts apart"
SOFTMAX_DTYPE: Final = "{name} is not implemented for {dtype} tensors; convert first (x.float()) or pass dtype=float32"
EYE_NEGATIVE: Final = "{name} must be greater or equal to 0, got {n}"
CLAMP_BOOL: Final = "clamp is not implemented for bool tensors; compare instead, e.g. x & True or x | False"
LINSPACE_BOOL: Final = "linspace is not implemented for bool; make it in another dtype and compare, e.g. != 0"
LINSPACE_NEGATIVE: Final = "number of steps must be non-negative"
LINSPACE_NOT_REAL: Final = "linspace: {name} must be a real number, not {value!r}"

# -- advanced indexing (_index.py) ----------------------------------------------------------
INDEX_DTYPE: Final = "tensors used as indices must be long, int, byte or bool tensors, got {dtype}"
INDEX_TOO_MANY: Final = "too many indices for tensor of dimension {ndim} (got {count})"
INDEX_BOOL_SHAPE: Final = (
    "The shape of the mask {shape} at index {dim} does not match the shape of the indexed tensor {self_shape} "
    "at index {dim}"
)
INDEX_OUT_OF_BOUNDS: Final = (
    "index {index} is out of bounds for dimension {dim} with size {size} (an index tensor's positions run from "
    "-{size} to {size} - 1)"
)
INDEX_MASK_ON_META: Final = (
    "indexing with a bool mask gives a shape that depends on the mask's values, which a meta (or fake) "
    "tensor does not hold; index a CPU tensor, or use core.where(mask, x, other)"
)
INDEX_PUT_SHAPE: Final = (
    "shape mismatch: value tensor of shape {values} cannot be broadcast to indexing result of shape {shape}"
)
INDEX_PUT_DTYPE: Final = (
    "Index put requires the source and destination dtypes match, got {self} for the destination and {values} "
    "for the source; convert the values first, e.g. values.to(x.dtype)"
)

# -- masked_fill (_masked.py) ---------------------------------------------------------------
MASKED_FILL_MASK: Final = "masked_fill only supports boolean masks, but got mask with dtype {dtype}; pass mask != 0"
MASKED_FILL_VALUE: Final = (
    "masked_fill only supports a 0-dimensional value tensor, but got tensor with {ndim} dimension(s); "
    "use core.where(mask, values, x) for a tensor of values"
)
FLIP_DUPLICATES: Final = "dim {dim} appears multiple times in the list of dims; name each dim once"
