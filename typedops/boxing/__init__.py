"""The boxed world: the stack, and generated wrappers between the calling conventions."""

from ._convert import Conversion, SequenceKind, broadcast, conversions_for, to_list, to_tuple
from ._ivalue import Tag, canonical, dtype_of_python_type, is_number, is_overflow, mismatch, plain_number, python_number, tag_of, type_name
from ._shape import (
    ArgCheck, ArgShape, CallShape, CheckKind, TensorUse, call_shape, positional_names, shape_and_defaults, tensor_use,
)  # fmt: skip
from ._source import GeneratedSourceError, check_identifier, install, live_generated_files, renamed
from ._stack import Stack, drop, last, peek, pop, push
from ._values import default_value, python_name
from ._wrappers import (
    BoxedReturnError,
    bad_returns,
    boxing_source,
    make_boxing,
    make_unboxing,
    unboxing_source,
    wrong_tuple,
)

__all__ = [
    # the stack
    "Stack",
    "push",
    "pop",
    "peek",
    "last",
    "drop",
    # wrappers
    "make_unboxing",
    "make_boxing",
    "unboxing_source",
    "boxing_source",
    "BoxedReturnError",
    "GeneratedSourceError",
    "install",
    "renamed",
    "live_generated_files",
    # what generated wrappers call
    "conversions_for",
    "Conversion",
    "SequenceKind",
    "to_list",
    "broadcast",
    "to_tuple",
    "bad_returns",
    "wrong_tuple",
    # values
    "Tag",
    "tag_of",
    "mismatch",
    "plain_number",
    "is_number",
    "python_number",
    "is_overflow",
    "canonical",
    "dtype_of_python_type",
    "type_name",
    # shapes and values
    "CallShape",
    "ArgShape",
    "ArgCheck",
    "CheckKind",
    "TensorUse",
    "call_shape",
    "shape_and_defaults",
    "positional_names",
    "tensor_use",
    "default_value",
    "python_name",
    "check_identifier",
]
