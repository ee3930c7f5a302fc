"""``Program``: what ``typedops.trace`` records -- inputs, op calls and outputs.

It prints one op call a line, runs (each call looked up by name and made boxed), lists
its ops (the input of a selective build) and checks itself against the schemas
registered now. See Note [Programs are data] in _values.py.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO, Any, cast

from typing_extensions import assert_never

from ..vocabulary import Device
from ..schema import ListType, OptionalType, Type, TypeVar, is_subtype, parse_schema, BaseType, FunctionSchema
from ..boxing import mismatch
from ..tensor import Tensor, empty_tensor, numpy_dtype, wrap_array
from ..dispatch import OperatorHandle, dispatcher
from . import _messages as msg
from ._saving import write_program
from ._values import (
    Call,
    Constant,
    ConstantInput,
    Input,
    InputRef,
    ListOf,
    OutputKind,
    ResultRef,
    TensorConstant,
    TensorInput,
    Value,
    format_constant,
    format_value,
)

__all__ = ["Program"]


@dataclass(frozen=True, slots=True)
class Program:
    """A traced function: ``inputs``, the op ``calls`` in order, and the ``outputs``."""

    inputs: tuple[Input, ...]
    calls: tuple[Call, ...]
    outputs: tuple[Value, ...]
    output_kind: OutputKind

    # -- reading -------------------------------------------------------------------------
    @property
    def input_names(self) -> tuple[str, ...]:
        return tuple(i.name for i in self.inputs)

    def ops(self) -> list[str]:
        """The full names of the ops the program calls, sorted (an op list for
        ``typedops codegen --ops``: a selective build of exactly these)."""
        return sorted({call.full_name for call in self.calls})

    def __str__(self) -> str:
        names = self.input_names
        lines = [f"program({', '.join(_format_input(i) for i in self.inputs)}):"]
        for index, call in enumerate(self.calls):
            lines.append("  " + _format_call(index, call, names))
        lines.append("  return " + _format_outputs(self, names))
        return "\n".join(lines)

    # -- saving --------------------------------------------------------------------------
    def save(self, file: str | os.PathLike[str] | IO[bytes]) -> None:
        """Write the program to ``file`` (a path, or a binary file open for writing) as a
        zip of JSON and ``.npy`` data -- no pickle, no code (Note [The program file
        format] in _saving.py); ``typedops.load(file)`` reads it back."""
        write_program(self, file)

    # -- checking ------------------------------------------------------------------------
    def check(self) -> None:
        """Raise ``ProgramError`` listing every call whose op is missing, whose schema
        changed since tracing, or whose values do not fit its argument types (arity,
        references to earlier results, value types); return None when all fit."""
        problems: list[str] = []
        for index, call in enumerate(self.calls):
            problems += [f"call %{index} ({call.full_name}): {p}" for p in _call_problems(self, index, call)]
        for position, value in enumerate(self.outputs):
            problem = _reference_problem(self, value, len(self.calls))
            if problem is not None:
                problems.append(f"output {position}: {problem}")
        if problems:
            raise msg.ProgramError(msg.CHECK_FAILED.format(problems="\n  ".join(problems)), problems)

    # -- running -------------------------------------------------------------------------
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Run the program on new inputs (by position, or by name): each call is made
        boxed through the dispatcher, so every functionality (profiling, modes, fake
        tensors, autograd) applies as it does to the traced function."""
        values = _bind(self, args, kwargs)
        results: list[list[Any]] = []
        for call in self.calls:
            handle = _handle(call)
            stack = [_evaluate(v, values, results) for v in call.args]
            handle.call_boxed(stack)
            results.append(stack)
        outputs = [_evaluate(v, values, results) for v in self.outputs]
        return self.output_kind.pack(outputs)


def _handle(call: Call) -> OperatorHandle:
    return dispatcher.find_schema_or_throw(call.op, call.overload)


# -- running ----------------------------------------------------------------------------------
def _bind(program: Program, args: Sequence[Any], kwargs: dict[str, Any]) -> list[Any]:
    inputs = program.inputs
    names = program.input_names
    if len(args) > len(inputs):
        raise msg.ProgramError(msg.WRONG_INPUT_COUNT.format(expected=len(inputs), names=", ".join(names), got=len(args)))
    given: dict[str, Any] = dict(zip(names, args))
    for name, value in kwargs.items():
        if name not in names:
            raise msg.ProgramError(msg.UNKNOWN_INPUT.format(name=name, names=", ".join(names)))
        if name in given:
            raise msg.ProgramError(msg.TWICE.format(name=name))
        given[name] = value
    if len(given) != len(inputs):
        raise msg.ProgramError(
            msg.WRONG_INPUT_COUNT.format(expected=len(inputs), names=", ".join(names), got=len(given))
        )
    values: list[Any] = []
    for spec in inputs:
        value = given[spec.name]
        if isinstance(spec, TensorInput):
            if not isinstance(value, Tensor):
                raise msg.ProgramError(msg.NOT_A_TENSOR_INPUT.format(name=spec.name, kind=type(value).__name__))
        elif isinstance(spec, ConstantInput):  # pyright: ignore[reportUnnecessaryIsInstance] -- a new variant reaches assert_never
            traced = _evaluate(spec.value, [], [])
            if not _same_constant(value, traced):
                raise msg.ProgramError(msg.SPECIALIZED.format(name=spec.name, traced=traced, got=value))
        else:
            assert_never(spec)
        values.append(value)
    return values


def _same_constant(value: Any, traced: Any) -> bool:
    if isinstance(traced, list):
        if not isinstance(value, (list, tuple)):
            return False
        given, expected = cast("Sequence[object]", value), cast("list[object]", traced)
        return len(given) == len(expected) and all(_same_constant(v, t) for v, t in zip(given, expected))
    return type(value) is type(traced) and bool(value == traced)


def _evaluate(value: Value, inputs: list[Any], results: list[list[Any]]) -> Any:
    if isinstance(value, InputRef):
        return inputs[value.index]
    if isinstance(value, ResultRef):
        return results[value.call][value.output]
    if isinstance(value, Constant):
        return value.value
    if isinstance(value, TensorConstant):
        return _materialize(value)
    if isinstance(value, ListOf):  # pyright: ignore[reportUnnecessaryIsInstance] -- a new variant reaches assert_never
        return [_evaluate(v, inputs, results) for v in value.items]
    assert_never(value)


def _materialize(t: TensorConstant) -> Tensor:
    if t.data is None:
        return empty_tensor(t.shape, t.dtype, t.device)
    import numpy as np

    array = np.array(t.elements(), dtype=numpy_dtype(t.dtype))  # a writable copy, in native order
    return wrap_array(array, t.dtype, t.device)


# -- checking ---------------------------------------------------------------------------------
def _call_problems(program: Program, index: int, call: Call) -> list[str]:
    handle = dispatcher.find_op(call.op, call.overload)
    if handle is None:
        return [f"no operator {call.full_name} is registered now"]
    current = str(handle.schema)
    if current != call.schema:
        return [f"its schema changed since tracing: traced {call.schema}, registered now {current}"]
    schema = handle.schema
    if len(call.args) != len(schema.arguments):
        return [f"{len(call.args)} argument(s) for a schema of {len(schema.arguments)}"]
    problems: list[str] = []
    for argument, value in zip(schema.arguments, call.args):
        problem = _reference_problem(program, value, index) or _type_problem(program, argument.type, value)
        if problem is not None:
            problems.append(f"argument {argument.name!r}: {problem}")
    return problems


def _reference_problem(program: Program, value: Value, before: int) -> str | None:
    """Whether every input or result ``value`` refers to exists, and comes before call ``before``."""
    if isinstance(value, InputRef):
        return None if 0 <= value.index < len(program.inputs) else f"refers to input {value.index}, which does not exist"
    if isinstance(value, ResultRef):
        if not 0 <= value.call < before:
            return f"refers to %{value.call}, which is not an earlier call"
        if not 0 <= value.output < program.calls[value.call].num_outputs:
            return f"refers to result {value.output} of %{value.call}, which has {program.calls[value.call].num_outputs}"
        return None
    if isinstance(value, (Constant, TensorConstant)):
        return None
    if isinstance(value, ListOf):  # pyright: ignore[reportUnnecessaryIsInstance] -- a new variant reaches assert_never
        for item in value.items:
            problem = _reference_problem(program, item, before)
            if problem is not None:
                return problem
        return None
    assert_never(value)


def _accepts_tensor(type_: Type) -> bool:
    if isinstance(type_, OptionalType):
        return _accepts_tensor(type_.elem)
    if isinstance(type_, TypeVar):
        return True
    return isinstance(type_, BaseType) and type_.name in ("Tensor", "Any")


def _type_problem(program: Program, expected: Type, value: Value) -> str | None:
    """Why ``value`` cannot be passed as ``expected`` (None when it can)."""
    if isinstance(value, InputRef):
        spec = program.inputs[value.index]
        if isinstance(spec, ConstantInput):
            return _type_problem(program, expected, spec.value)
        return None if _accepts_tensor(expected) else f"expected {expected}, got the tensor input {spec.name!r}"
    if isinstance(value, ResultRef):
        produced = _result_type(program.calls[value.call], value.output)
        if produced is None or is_subtype(produced, expected):
            return None
        return f"expected {expected}, got a result of type {produced}"
    if isinstance(value, Constant):
        return mismatch(expected, value.value)
    if isinstance(value, TensorConstant):
        return None if _accepts_tensor(expected) else f"expected {expected}, got a tensor constant"
    if isinstance(value, ListOf):  # pyright: ignore[reportUnnecessaryIsInstance] -- a new variant reaches assert_never
        inner = expected.elem if isinstance(expected, OptionalType) else expected
        if not isinstance(inner, ListType):
            return None if _accepts_any(inner) else f"expected {expected}, got a list"
        for position, item in enumerate(value.items):
            problem = _type_problem(program, inner.elem, item)
            if problem is not None:
                return f"element {position}: {problem}"
        return None
    assert_never(value)


def _accepts_any(type_: Type) -> bool:
    return isinstance(type_, TypeVar) or (isinstance(type_, BaseType) and type_.name == "Any")


def _result_type(call: Call, output: int) -> Type | None:
    schema: FunctionSchema = parse_schema(call.schema)
    returns = schema.returns
    return returns[output].type if output < len(returns) else None


# -- printing ---------------------------------------------------------------------------------
def _format_input(spec: Input) -> str:
    if isinstance(spec, TensorInput):
        where = "" if spec.device == Device("cpu") else f", {spec.device}"
        return f"{spec.name}: Tensor({spec.dtype.name}{list(spec.shape)}{where})"
    if isinstance(spec, ConstantInput):  # pyright: ignore[reportUnnecessaryIsInstance] -- a new variant reaches assert_never
        return f"{spec.name}={format_value(spec.value, ())}"
    assert_never(spec)


def _format_call(index: int, call: Call, names: tuple[str, ...]) -> str:
    schema = parse_schema(call.schema)
    parts: list[str] = []
    positional = len(schema.positional)
    for position, (argument, value) in enumerate(zip(schema.arguments, call.args)):
        text = format_value(value, names)
        parts.append(text if position < positional else f"{argument.name}={text}")
    text = f"{call.full_name}({', '.join(parts)})"
    if call.num_outputs == 0:
        return text
    results = [f"%{index}"] + [f"%{index}.{k}" for k in range(1, call.num_outputs)]
    types = ", ".join(str(r.type) for r in schema.returns)
    return f"{', '.join(results)}: {types} = {text}"


def _format_outputs(program: Program, names: tuple[str, ...]) -> str:
    shown = [format_value(v, names) for v in program.outputs]
    kind = program.output_kind
    if kind is OutputKind.single:
        return shown[0]
    if kind is OutputKind.tuple:
        return "(" + ", ".join(shown) + ("," if len(shown) == 1 else "") + ")"
    if kind is OutputKind.list:
        return "[" + ", ".join(shown) + "]"
    if kind is OutputKind.none:
        return format_constant(None)
    assert_never(kind)
