"""The boxing layer's messages, in one place (``Final`` format strings, mypy's
``message_registry`` is the model): each named for what went wrong, formatted only when
the error is raised."""

from __future__ import annotations

from typing import Final

# -- conversions and call shapes ---------------------------------------------------------------
BAD_CONVERSION_KIND: Final = "a Conversion converts to a SequenceKind, not {kind!r}"
BAD_CONVERSION_SIZE: Final = "a Conversion's size is None or a whole number >= 0, not {size!r}"
VARARG_OPERATOR: Final = (
    "{op} takes or returns '...'; typedops operators need a fixed argument and return list"
)

# -- generated source --------------------------------------------------------------------------
NOT_AN_IDENTIFIER: Final = (
    "{what} {name!r} cannot be used in generated code: it must be an ASCII identifier and not a Python keyword"
)
SOURCE_DOES_NOT_COMPILE: Final = (
    "typedops generated code that does not compile ({msg}, line {line}); "
    "please report this with the source below:\n{source}"
)

# -- stacks ------------------------------------------------------------------------------------
STACK_PEEK: Final = "peek({i}, {n}) on a stack of {size} values"
STACK_LAST: Final = "last({n}) on a stack of {size} values"
STACK_DROP: Final = "drop({n}) on a stack of {size} values"

# -- kernels' returns --------------------------------------------------------------------------
BOXED_WRONG_RETURNS: Final = (
    "boxed kernel of {op} left {count} value(s) on the stack, but its schema returns {expected}; "
    "a boxed kernel pops its arguments and pushes its returns"
)
KERNEL_WRONG_TUPLE: Final = "kernel of {op} returned {count} values, but its schema returns {expected}"
PYTHON_NAME_CLASH: Final = (
    "arguments '{first}' and '{second}' of {op} would both be the Python parameter '{name}' (a Python "
    "keyword gets a trailing '_'); rename one"
)
