"""The boxed world: the stack, and generated wrappers between the calling conventions."""

from ._shape import ArgShape, CallShape, TensorUse, call_shape, shape_and_defaults, tensor_use
from ._source import GeneratedSourceError, check_identifier
from ._stack import Stack, drop, last, peek, pop, push
from ._values import default_value, python_name
from ._wrappers import BoxedReturnError, boxing_source, make_boxing, make_unboxing, unboxing_source

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
    # shapes and values
    "CallShape",
    "ArgShape",
    "TensorUse",
    "call_shape",
    "shape_and_defaults",
    "tensor_use",
    "default_value",
    "python_name",
    "check_identifier",
]
