"""Fitting a saved program's calls to the schemas registered now.

Note [Calls against changed schemas]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Each call of a program keeps the schema text it was traced against and one value per
argument of that schema. At load, each call is fitted to the op registered now:

- the same text: the values are used as they are (no schema is parsed: the common case
  costs one string comparison);
- an older schema the registered one is backward compatible with
  (``is_backward_compatible_with(saved, current)``, Note [Backward compatibility] in
  typedops/schema/_compat.py): the values are placed **by name** into the current
  schema's arguments, and each argument the program does not know gets its default.
  Placing by name, not by position, is what keeps an ``out=`` overload working after it
  gains a defaulted argument before ``out`` (the case of pytorch/pytorch#63540, where the
  mobile runtime first pushed the new default after ``out``);
- a newer schema (the program was saved by a newer library, and the saved schema is
  backward compatible with the registered one): the call fits when every argument the
  registered schema lacks is passed at its default; those are dropped;
- anything else is refused, naming the call, the op and both schemas.

Then every value is checked against the type of its argument -- constants by value,
tensor inputs and tensor constants against tensor types, an earlier call's result by its
return type (of the schema registered now) -- so neither flavor runs a call that the
dispatcher would refuse for its types, and a file cannot smuggle a wrong value into a
static kernel. The checker is tracing's, the one ``Program.check`` uses (Note [Checking
a program's values] in typedops/tracing/_checking.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final, cast

from ..vocabulary import BoundedCache
from ..boxing import default_value
from ..schema import Argument, FunctionSchema, is_backward_compatible_with, parse_schema
from ..tracing import Call, Constant, ListOf, Value
from . import _messages as msg

__all__ = ["fit_call", "schema_text"]


def fit_call(index: int, call: Call, current: FunctionSchema, current_text: str,
             saved: FunctionSchema | None = None) -> tuple[Value, ...]:  # fmt: skip
    """The values of ``call`` as the registered schema ``current`` takes them (Note [Calls
    against changed schemas]); ``saved`` is the call's schema text parsed, if the caller
    has it. Raises ``IncompatibleProgramError`` when the call cannot be made."""
    if saved is None and call.schema == current_text:
        if len(call.args) != len(current.arguments):
            raise msg.IncompatibleProgramError(msg.WRONG_ARITY.format(
                index=index, op=call.full_name, got=len(call.args), expected=len(current.arguments)))  # fmt: skip
        return call.args
    if saved is None:
        saved = parse_schema(call.schema)
    if len(call.args) != len(saved.arguments):
        raise msg.IncompatibleProgramError(msg.WRONG_ARITY.format(
            index=index, op=call.full_name, got=len(call.args), expected=len(saved.arguments)))  # fmt: skip
    given = {a.name: v for a, v in zip(saved.arguments, call.args)}
    if is_backward_compatible_with(saved, current):
        return tuple(given[a.name] if a.name in given else _default(a) for a in current.arguments)
    if is_backward_compatible_with(current, saved):
        known = {a.name for a in current.arguments}
        for argument in saved.arguments:
            if argument.name not in known and not _is_default(given[argument.name], argument):
                raise msg.IncompatibleProgramError(msg.NEWER_CALL.format(
                    index=index, op=call.full_name, saved=call.schema, current=current_text,
                    argument=argument.name, value=_shown(given[argument.name]),
                ))  # fmt: skip
        return tuple(given[a.name] for a in current.arguments)
    raise msg.IncompatibleProgramError(
        msg.INCOMPATIBLE.format(index=index, op=call.full_name, saved=call.schema, current=current_text)
    )


def _as_value(python: Any) -> Value:
    if isinstance(python, (list, tuple)):
        items: Sequence[object] = cast("Sequence[object]", python)
        return ListOf(tuple(_as_value(v) for v in items))
    return Constant(python)


def _default(argument: Argument) -> Value:
    return _as_value(default_value(argument))


def _is_default(value: Value, argument: Argument) -> bool:
    return argument.has_default and value == _default(argument)


def _shown(value: Value) -> str:
    if isinstance(value, Constant):
        return repr(value.value)
    if isinstance(value, ListOf):
        return "[" + ", ".join(_shown(v) for v in value.items) + "]"
    return type(value).__name__


# The text of each registered schema compared against, by id (the schema kept alive by
# the entry): printing a schema costs several microseconds, and each load compares one
# per op of the file.
_TEXTS: Final = BoundedCache[int, str](4096, "registered schema texts")


def schema_text(schema: FunctionSchema) -> str:
    """``str(schema)``, printed once per schema object."""
    text = _TEXTS.get(id(schema))
    return text if text is not None else _TEXTS.put(id(schema), str(schema), keep=schema)
