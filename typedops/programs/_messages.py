"""The programs package's errors and messages, in one place (``Final`` format strings,
mypy's ``message_registry`` is the model), formatted only when the error is raised."""

from __future__ import annotations

from typing import Final

from ..vocabulary import ArgumentValueError
from ..tracing import ProgramError

__all__ = ["IncompatibleProgramError", "ProgramError", "ArgumentValueError"]


class IncompatibleProgramError(ProgramError):
    """A program whose calls do not fit the ops registered now: an op missing, a schema
    changed incompatibly, or a call from a newer library that this one cannot make."""


# -- loading: compatibility (Note [Calls against changed schemas] in _compat.py) -----------
NO_SUCH_OP: Final = (
    "cannot load the program: call %{index} calls {op}, which is not registered; "
    "import the library that defines it before loading"
)
INCOMPATIBLE: Final = (
    "cannot load the program: call %{index} ({op}) was saved against\n    {saved}\n"
    "and the registered schema\n    {current}\nis not backward compatible with it "
    "(is_backward_compatible_with is false); trace and save the program again against this library"
)
NEWER_CALL: Final = (
    "cannot load the program: call %{index} ({op}) was saved by a newer library, against\n    {saved}\n"
    "and passes {argument}={value}, which the registered schema\n    {current}\nhas no argument for; "
    "run it with a library that has {argument!r}, or save it with {argument} left at its default"
)
WRONG_ARITY: Final = (
    "cannot load the program: call %{index} ({op}) has {got} argument(s) for its saved schema of {expected}"
)
BAD_REFERENCE: Final = "cannot load the program: {where} {problem}"
BAD_VALUE: Final = "cannot load the program: call %{index} ({op}), argument {argument!r}: {problem}"
UNKNOWN_FLAVOR: Final = "unknown program flavor {flavor!r}; choose 'dispatch' (the default) or 'static'"

# -- running --------------------------------------------------------------------------------
WRONG_INPUT_COUNT: Final = "the compiled program takes {expected} input(s) ({names}) by position, got {got}"
NOT_A_TENSOR_INPUT: Final = "the compiled program's input {name!r} must be a Tensor, got {kind}"
SPECIALIZED: Final = (
    "input {name!r} was {traced!r} when the program was traced, and the program is specialized "
    "to that value; got {got!r}. Trace and save it again with {name}={got!r}"
)

# -- typedops program run ---------------------------------------------------------------------
BAD_INPUTS_FILE: Final = "cannot read the inputs {path}: {error} (write them with numpy.savez)"
INPUTS_DO_NOT_FIT: Final = (
    "the inputs {path} do not fit the program: it takes the tensor inputs {expected}, the file has {got}; "
    "name the arrays after the inputs (numpy.savez(path, x=...)) or give them in order (numpy.savez(path, a, b))"
)
BAD_INPUT_ARRAY: Final = "the input {name!r} in {path} is not a tensor typedops can hold: {error}"
