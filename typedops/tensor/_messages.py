"""The tensor layer's messages, in one place (``Final`` format strings, mypy's
``message_registry`` is the model): each named for what went wrong, formatted only when
the error is raised. Texts PyTorch users know (shape and dimension errors) keep
PyTorch's wording."""

from __future__ import annotations

from typing import Final

# -- data ----------------------------------------------------------------------------------------
NO_DATA: Final = "a meta tensor has no data; move it to a real device, or read .shape/.dtype"
DATA_IFF_NOT_META: Final = "a meta tensor has no data, and every other tensor has data"
DATA_SHAPE_MISMATCH: Final = "data of shape {data_shape} given for a tensor of shape {shape}"
STORAGE_NOT_1D: Final = "a storage buffer is one-dimensional, not {ndim}-dimensional"
NO_NUMPY_STORAGE: Final = "dtype {dtype} has no numpy storage yet"
UNKNOWN_NUMPY_DTYPE: Final = "numpy dtype {name!r} has no typedops dtype"
UNKNOWN_NUMPY_DTYPE_USE: Final = "numpy dtype {name!r} has no typedops dtype; use one of {known}"
BAD_NUMPY_STRIDES: Final = (
    "the numpy array has strides {strides} (bytes) that are negative or not a multiple of its "
    "item size; pass a copy (array.copy())"
)
NOT_RECTANGULAR: Final = (
    "tensor(): the nested sequences are not rectangular: every sequence at one depth must have "
    "the same length, as in [[1, 2], [3, 4]]"
)
DTYPE_NOT_SCALAR_TYPE: Final = "tensor(): dtype must be a typedops ScalarType, got {got}; {fix}"
DTYPE_FIX_NAMED: Final = "pass dtype=ScalarType.{name}"
DTYPE_FIX_ANY: Final = "pass one of ScalarType's members, e.g. dtype=ScalarType.float32"
OUT_OF_MEMORY: Final = (
    "not enough memory for a tensor of shape {size} and dtype {dtype} ({nbytes} bytes); make a "
    "smaller tensor, or one on device='meta' to work with its shape only"
)
READ_ONLY_WRITE: Final = (
    "{op} writes into a tensor whose memory is read-only (Tensor.from_numpy shares the memory of a "
    "read-only numpy array); pass a writable array (array.copy(), or array.setflags(write=True) "
    "if you own its memory), or call the out-of-place op"
)
NOT_TENSOR_DATA: Final = (
    "cannot make a tensor from {kind_name} data (numpy kind {kind!r}); "
    "pass numbers, nested sequences of numbers or a numeric numpy array"
)

# -- values of one-element tensors ---------------------------------------------------------------
NOT_A_SCALAR: Final = "a Tensor with {numel} elements cannot be converted to Scalar"
AMBIGUOUS_BOOL: Final = (
    "Boolean value of Tensor with more than one value is ambiguous; compare .tolist(), or "
    "reduce the tensor to one element first"
)
AMBIGUOUS_BOOL_EMPTY: Final = (
    "Boolean value of Tensor with no values is ambiguous; test t.numel() (or reduce the tensor "
    "to one element first)"
)
NOT_ONE_ELEMENT: Final = (
    "only one element tensors can be converted to Python scalars; this one has {numel} elements: "
    "reduce it first (t.sum(), t.max()) or read them all with t.tolist()"
)
NOT_AN_INDEX: Final = (
    "only integer tensors of a single element can be converted to an index; this one is "
    "{dtype} with {numel} elements: convert it with t.to(int64) or read it with int(t)"
)
COMPLEX_TO_REAL: Final = (
    "value cannot be converted to type {type} without overflow: the complex value {value} has a "
    "nonzero imaginary part; convert it with complex(t)"
)
NOT_AN_INTEGER: Final = "cannot convert float {value} to integer: {fix}"
NAN_TO_INTEGER_FIX: Final = "test it with t != t first"
INF_TO_INTEGER_FIX: Final = "clamp it to a finite range first"
NUMPY_REQUIRES_GRAD: Final = (
    "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."
)

# -- shapes, strides and layouts -----------------------------------------------------------------
NEGATIVE_DIMENSION: Final = "Trying to create tensor with negative dimension {n}: {size}"
FORMAT_NEEDS_RANK: Final = "required rank {rank} tensor to use {format} format, but the shape {shape} has rank {ndim}"
PRESERVE_IS_NO_LAYOUT: Final = (
    "preserve_format names no layout of its own; resolve it with suggest_memory_format first"
)
IS_CONTIGUOUS_PRESERVE: Final = "is_contiguous() takes a layout; preserve_format is not one"
SIZES_DO_NOT_BROADCAST: Final = (
    "The size of tensor a ({sa}) must match the size of tensor b ({sb}) at non-singleton dimension {i}"
)
TWO_INFERRED_DIMENSIONS: Final = "only one dimension can be inferred"
INVALID_SHAPE_DIMENSION: Final = "invalid shape dimension {size} at index {index} of shape {shape}"
AMBIGUOUS_INFERRED_DIMENSION: Final = (
    "cannot reshape tensor of 0 elements into shape {shape} because the unspecified dimension size -1 "
    "can be any value and is ambiguous; give that dimension's size instead of -1"
)
SHAPE_INVALID_FOR_SIZE: Final = "shape '{shape}' is invalid for input of size {numel}"
DIMENSION_OUT_OF_RANGE: Final = (
    "Dimension out of range (expected to be in range of [{low}, {high}], but got {dim})"
)
NO_AUTOGRAD: Final = "Tensor.{name}() needs the autograd layer: import typedops (or typedops.autograd) first"
REQUIRES_GRAD_DTYPE: Final = "only Tensors of floating point and complex dtype can require gradients (got {dtype}); convert first, e.g. x.to(float32)"
NON_LEAF_REQUIRES_GRAD: Final = (
    "you can only change requires_grad flags of leaf variables. If you want to use a computed "
    "variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach()."
)
SIZE_OVERFLOW: Final = "Storage size calculation overflowed with sizes={size}: a tensor holds at most 2**63 - 1 bytes (its elements times their size)"
INT_OVERFLOW: Final = (
    "Overflow when unpacking long: {value} does not fit in int64; pass a float tensor "
    "(dtype=float64) or a value between -2**63 and 2**63 - 1"
)
OPERAND_OVERFLOW: Final = (
    "a Python int of {bits} bits beside a tensor (an operand of a + 2, a Scalar argument) "
    "is outside int64's range (-2**63 to 2**63 - 1), the dtype it is held in; pass an int "
    "within that range, or a float"
)
GRAD_NOT_TENSOR: Final = "assigned grad expected to be a Tensor or None but got grad of type {type}"
GRAD_MISMATCH: Final = (
    "attempting to assign a gradient of {what} '{got}' to a tensor of {what} '{expected}'. Please "
    "ensure that the gradient and the tensor have the same {what}"
)
INTERNAL_OVERLAP: Final = (
    "unsupported operation: more than one element of the written-to tensor refers to a single "
    "memory location. Please clone() the tensor before performing the operation."
)
PARTIAL_OVERLAP: Final = (
    "unsupported operation: some elements of the input tensor and the written-to tensor refer to a "
    "single memory location. Please clone() the tensor before performing the operation."
)
EMPTY_TOO_BIG_FOR_NUMPY: Final = (
    "a CPU tensor of shape {shape} has no elements, but its non-zero sizes times the element "
    "size ({nbytes} bytes) exceed 2**63 - 1, more than numpy, which holds typedops' CPU data, "
    "can index (PyTorch allows it); use device='meta' for shape-only work, or smaller sizes"
)
LEN_OF_SCALAR: Final = "len() of a 0-d tensor: it has no dims; x.item() gives its value"
ITERATE_SCALAR: Final = "iteration over a 0-d tensor: it has no dims; x.item() gives its value"
MT_NEEDS_MATRICES: Final = (
    "tensor.mT is only supported on matrices or batches of matrices. Got {ndim}-D tensor; "
    "x.T reverses the dims of any tensor"
)

# -- indexing (_indexing.py) ----------------------------------------------------------------
INDEX_OUT_OF_RANGE: Final = "index {index} is out of bounds for dimension {dim} with size {size}"
TOO_MANY_INDICES: Final = "too many indices for tensor of dimension {ndim}"
INDEX_ZERO_DIM: Final = "invalid index of a 0-dim tensor: it has no dims; x.item() gives its value"
TWO_ELLIPSES: Final = "an index can only have a single ellipsis ('...')"
SLICE_STEP: Final = "step must be greater than zero (x[::-1] has no view; torch refuses it too)"
SLICE_BOUND: Final = "slice indices must be integers or None or have an __index__ method, not {kind}"
INDEX_TYPE: Final = (
    "only integers, slices (`:`), ellipsis (`...`), None and bools are valid indices (got {kind})"
)
INDEX_VALUE_TYPE: Final = "can't assign a {kind} to a Tensor: assign a tensor or a number"
