"""Whether a program's values fit the arguments they are passed to: the one checker that
``Program.check`` and ``typedops.programs.compile_program`` (which every load goes
through) both use.

Note [Checking a program's values]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
A value fits its argument when it refers to something that exists before it (an input,
a result of an *earlier* call that has that many results) and its type fits the
argument's: a constant by value (``boxing.mismatch``, so an ``int`` holds an int64 at
most), a tensor input or a tensor constant where a tensor is taken, a list element by
element, an earlier call's result by its return type -- a subtype, or both tensor-like
(``Tensor`` where ``Tensor?`` is taken). The return types of the earlier calls are given
by the caller, once per call (``returns``): the registered schema's, or the recorded
text parsed once per distinct text; a return type of None is unknown and fits anything.

``ArgumentFacts`` holds, per schema, what the check reads of it -- each argument's name,
type and whether it takes a tensor; each return's type and whether it is tensor-like --
made once per schema object (a load checks the same few ops again and again), so the
common values (an earlier tensor result, a tensor input or constant passed as a tensor)
are checked with a few comparisons, and only the rest walk the types.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from typing_extensions import assert_never

from ..vocabulary import BoundedCache
from ..schema import BaseType, FunctionSchema, ListType, OptionalType, Type, TypeVar, is_subtype
from ..boxing import mismatch
from ._values import Constant, ConstantInput, Input, InputRef, ListOf, ResultRef, TensorConstant, TensorInput, Value

__all__ = ["ArgumentFacts", "argument_facts", "argument_problems", "reference_problem", "accepts_tensor"]

Returns = Sequence[Sequence[Type | None]]  # per earlier call, the type of each of its results


def accepts_tensor(type_: Type) -> bool:
    """Whether a tensor may be passed as ``type_`` (``Tensor``, ``Tensor?``, a type variable, ``Any``)."""
    if isinstance(type_, OptionalType):
        return accepts_tensor(type_.elem)
    return isinstance(type_, TypeVar) or (isinstance(type_, BaseType) and type_.name in ("Tensor", "Any"))


def _accepts_any(type_: Type) -> bool:
    return isinstance(type_, TypeVar) or (isinstance(type_, BaseType) and type_.name == "Any")


@dataclass(frozen=True, slots=True)
class ArgumentFacts:
    """What checking values against ``schema`` reads of it (Note [Checking a program's values])."""

    names: tuple[str, ...]
    types: tuple[Type, ...]
    tensors: tuple[bool, ...]  # per argument: it takes a tensor
    writes: tuple[bool, ...]  # per argument: the op writes it (``Tensor(a!)``)
    returns: tuple[Type, ...]
    tensor_returns: tuple[bool, ...]  # per return: it is tensor-like


_FACTS: Final = BoundedCache[int, ArgumentFacts](4096, "argument facts of schemas")


def argument_facts(schema: FunctionSchema) -> ArgumentFacts:
    """The ``ArgumentFacts`` of ``schema``, made once per schema object."""
    found = _FACTS.get(id(schema))
    if found is not None:
        return found
    arguments = schema.arguments
    returns = tuple(r.type for r in schema.returns)
    facts = ArgumentFacts(
        tuple(a.name for a in arguments), tuple(a.type for a in arguments),
        tuple(accepts_tensor(a.type) for a in arguments), tuple(a.is_write for a in arguments),
        returns, tuple(accepts_tensor(t) for t in returns),
    )  # fmt: skip
    return _FACTS.put(id(schema), facts, keep=schema)


def argument_problems(inputs: Sequence[Input], index: int, args: Sequence[Value], facts: ArgumentFacts,
                      returns: Returns, tensor_returns: Sequence[Sequence[bool]]) -> list[tuple[str, str]]:  # fmt: skip
    """``(argument name, problem)`` for each value of call ``index`` of a program with
    ``inputs`` that does not fit (``args`` has one value per argument of ``facts``); ``returns`` and
    ``tensor_returns`` describe the results of the calls before it."""
    found: list[tuple[str, str]] = []
    for position, value in enumerate(args):
        kind = type(value)
        if facts.tensors[position]:  # the common values, checked in a few comparisons
            if kind is ResultRef:
                assert isinstance(value, ResultRef)
                call, output = value.call, value.output
                if 0 <= call < index and 0 <= output < len(tensor_returns[call]) and tensor_returns[call][output]:
                    continue
            elif kind is TensorConstant or (kind is InputRef and _is_tensor_input(inputs, value)):
                continue
        problem = reference_problem(inputs, value, index, returns) or _type_problem(
            inputs, facts.types[position], value, returns
        )
        if problem is not None:
            found.append((facts.names[position], problem))
    return found


def _is_tensor_input(inputs: Sequence[Input], value: Value) -> bool:
    assert isinstance(value, InputRef)
    return 0 <= value.index < len(inputs) and isinstance(inputs[value.index], TensorInput)


def reference_problem(inputs: Sequence[Input], value: Value, before: int, returns: Returns) -> str | None:
    """Why ``value`` does not refer to an input or to a result of a call before ``before``
    (None when it does)."""
    if isinstance(value, InputRef):
        if 0 <= value.index < len(inputs):
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
    if isinstance(value, ListOf):  # pyright: ignore[reportUnnecessaryIsInstance] -- a new variant reaches assert_never
        for item in value.items:
            problem = reference_problem(inputs, item, before, returns)
            if problem is not None:
                return problem
        return None
    assert_never(value)


def _type_problem(inputs: Sequence[Input], expected: Type, value: Value, returns: Returns) -> str | None:
    """Why ``value`` (whose references exist) cannot be passed as ``expected``."""
    if isinstance(value, InputRef):
        spec = inputs[value.index]
        if isinstance(spec, ConstantInput):
            return _type_problem(inputs, expected, spec.value, returns)
        return None if accepts_tensor(expected) else f"expected {expected}, got the tensor input {spec.name!r}"
    if isinstance(value, ResultRef):
        produced = returns[value.call][value.output]
        if produced is None or is_subtype(produced, expected) or (accepts_tensor(produced) and accepts_tensor(expected)):
            return None
        return f"expected {expected}, got a result of type {produced}"
    if isinstance(value, Constant):
        return mismatch(expected, value.value)
    if isinstance(value, TensorConstant):
        return None if accepts_tensor(expected) else f"expected {expected}, got a tensor constant"
    if isinstance(value, ListOf):  # pyright: ignore[reportUnnecessaryIsInstance] -- a new variant reaches assert_never
        inner = expected.elem if isinstance(expected, OptionalType) else expected
        if not isinstance(inner, ListType):
            return None if _accepts_any(inner) else f"expected {expected}, got a list"
        for position, item in enumerate(value.items):
            problem = _type_problem(inputs, inner.elem, item, returns)
            if problem is not None:
                return f"element {position}: {problem}"
        return None
    assert_never(value)
