"""The tracing package's errors and messages, in one place."""

from __future__ import annotations

from typing import Final

from ..vocabulary import TypedopsError

__all__ = ["TraceError", "ProgramError"]


class TraceError(TypedopsError, TypeError):
    """A value ``typedops.trace`` cannot record: neither a tensor nor a constant."""


class ProgramError(TypedopsError, ValueError):
    """A program that does not fit the ops registered now, or a run given the wrong inputs.
    ``problems`` lists one line per problem."""

    def __init__(self, message: str, problems: list[str] | None = None) -> None:
        self.problems = problems or []
        super().__init__(message)


CONSTANTS: Final = "None, bool, int, float, complex, str, a dtype, layout, memory format or device, or a list of these"
NOT_A_CONSTANT: Final = (
    "cannot trace {op}: argument {arg!r} is a {kind}, neither a tensor nor a constant ({constants}); "
    "pass a tensor, or convert the value (int(...), float(...)) before the call"
)
BAD_INPUT: Final = (
    "cannot trace with input {name!r}: a {kind} is neither a tensor nor a constant ({constants})"
)
TENSOR_IN_INPUT: Final = (
    "cannot trace with input {name!r}: a {kind} holding a tensor is not an input a program takes "
    "(its inputs are tensors and constants, and a constant holds no tensor); pass each tensor as an "
    "input of its own"
)
BAD_OUTPUT: Final = (
    "the traced function returned {what}: a traced function returns a tensor, a constant, None, "
    "or a flat tuple or list of tensors and constants"
)
NOT_TRACING: Final = "typedops.trace takes a function to call, not a {kind}"
CHECK_FAILED: Final = "the program does not fit the registered ops:\n  {problems}"
WRONG_INPUT_COUNT: Final = "the program takes {expected} input(s) ({names}), got {got}"
UNKNOWN_INPUT: Final = "the program has no input {name!r}; its inputs are {names}"
TWICE: Final = "input {name!r} was given twice (by position and by name)"
NOT_A_TENSOR_INPUT: Final = "input {name!r} must be a Tensor, got {kind}"
SPECIALIZED: Final = (
    "input {name!r} was {traced} when the program was traced, and the program is specialized "
    "to that value (Python code used it as a constant); got {got}. Trace again with {name}={got}"
)
CANNOT_SAVE: Final = "cannot save the program: {problem}"
# An input's name in a program file (the writer refuses what the reader refuses, in its words).
BAD_INPUT_NAME: Final = (
    "{name!r} is not an input name: expected a Python identifier that is not a keyword, of at most {limit} characters"
)
DUPLICATE_INPUT: Final = "a second input named {name!r}"
SAVED_INPUT: Final = "inputs[{index}].name: {problem}"
NOT_SAVABLE: Final = (
    "a constant of type {kind} is not one a program holds (None, bool, int, float, complex, str, "
    "a dtype, layout, memory format or device)"
)
NO_SUCH_VERSION: Final = "there is no program format version {version} to write (versions 1 to 4 are)"
WRAPPED_NEEDS_4: Final = (
    "format version {version} cannot hold a wrapped number (a Python number an op took as a tensor); "
    "write version 4"
)
SAVED_REFERENCE: Final = "{where} refers to {what}, which the program does not have before it"
NO_STORAGE: Final = "a tensor constant of dtype {dtype} has elements, and {dtype} has no storage to write them from"
DATA_LENGTH: Final = (
    "a tensor constant holds {size} byte(s) for shape {shape} of {dtype}, whose elements take {expected}"
)
