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
static kernel.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from typing_extensions import assert_never

from ..boxing import default_value, mismatch
from ..schema import (
    Argument,
    BaseType,
    FunctionSchema,
    ListType,
    OptionalType,
    Type,
    TypeVar,
    is_backward_compatible_with,
    is_subtype,
    parse_schema,
)
from ..tracing import Call, Constant, ConstantInput, InputRef, ListOf, Program, ResultRef, TensorConstant, Value
from . import _messages as msg

__all__ = ["fit_call", "check_values"]


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


# -- checking the values ------------------------------------------------------------------------
def check_values(program: Program, index: int, args: tuple[Value, ...], schema: FunctionSchema,
                 returns: list[tuple[Type, ...]]) -> None:  # fmt: skip
    """Raise ``IncompatibleProgramError`` for the first value of call ``index`` that refers
    to nothing earlier or does not fit its argument's type; ``returns`` holds the return
    types of the calls before it."""
    for argument, value in zip(schema.arguments, args):
        problem = _reference_problem(program, value, index, returns) or _type_problem(
            program, argument.type, value, returns
        )
        if problem is not None:
            raise msg.IncompatibleProgramError(msg.BAD_VALUE.format(
                index=index, op=schema.full_name, argument=argument.name, problem=problem))  # fmt: skip


def reference_problem(program: Program, value: Value, before: int, returns: list[tuple[Type, ...]]) -> str | None:
    """Why ``value`` does not refer to an input or to a result of a call before ``before``."""
    return _reference_problem(program, value, before, returns)


def _reference_problem(program: Program, value: Value, before: int, returns: list[tuple[Type, ...]]) -> str | None:
    if isinstance(value, InputRef):
        if 0 <= value.index < len(program.inputs):
            return None
        return f"refers to input {value.index}, which does not exist"
    if isinstance(value, ResultRef):
        if not 0 <= value.call < before:
            return f"refers to %{value.call}, which is not an earlier call"
        if not 0 <= value.output < len(returns[value.call]):
            return f"refers to result {value.output} of %{value.call}, which has {len(returns[value.call])}"
        return None
    if isinstance(value, (Constant, TensorConstant)):
        return None
    match value:
        case ListOf():
            for item in value.items:
                problem = _reference_problem(program, item, before, returns)
                if problem is not None:
                    return problem
            return None
        case _:
            assert_never(value)


def _accepts_tensor(type_: Type) -> bool:
    if isinstance(type_, OptionalType):
        return _accepts_tensor(type_.elem)
    return isinstance(type_, TypeVar) or (isinstance(type_, BaseType) and type_.name in ("Tensor", "Any"))


def _type_problem(program: Program, expected: Type, value: Value, returns: list[tuple[Type, ...]]) -> str | None:
    if isinstance(value, InputRef):
        spec = program.inputs[value.index]
        if isinstance(spec, ConstantInput):
            return _type_problem(program, expected, spec.value, returns)
        return None if _accepts_tensor(expected) else f"expected {expected}, got the tensor input {spec.name!r}"
    if isinstance(value, ResultRef):
        produced = returns[value.call][value.output]
        if is_subtype(produced, expected) or (_accepts_tensor(produced) and _accepts_tensor(expected)):
            return None
        return f"expected {expected}, got a result of type {produced}"
    if isinstance(value, Constant):
        return mismatch(expected, value.value)
    if isinstance(value, TensorConstant):
        return None if _accepts_tensor(expected) else f"expected {expected}, got a tensor constant"
    match value:
        case ListOf():
            inner = expected.elem if isinstance(expected, OptionalType) else expected
            if not isinstance(inner, ListType):
                return None if _accepts_any(inner) else f"expected {expected}, got a list"
            for position, item in enumerate(value.items):
                problem = _type_problem(program, inner.elem, item, returns)
                if problem is not None:
                    return f"element {position}: {problem}"
            return None
        case _:
            assert_never(value)


def _accepts_any(type_: Type) -> bool:
    return isinstance(type_, TypeVar) or (isinstance(type_, BaseType) and type_.name == "Any")
