"""``Program``: what ``typedops.trace`` records -- inputs, op calls and outputs.

It prints one op call a line, runs (each call looked up by name and made boxed), lists
its ops (the input of a selective build) and checks itself against the schemas
registered now. See Note [Programs are data] in _values.py.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO, Any, Final

from typing_extensions import assert_never

from ..vocabulary import BoundedCache, Device, TypedopsError
from ..schema import FunctionSchema, Type, parse_schema
from ..tensor import Tensor, empty_tensor, numpy_dtype, wrap_array
from ..dispatch import OperatorHandle, dispatcher
from . import _messages as msg
from ._checking import accepts_tensor, argument_facts, argument_problems, reference_problem
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
    same_constant,
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
        zip of JSON and raw tensor data -- no pickle, no code (Note [The program file
        format] in _saving.py); ``typedops.load(file)`` reads it back."""
        write_program(self, file)

    # -- checking ------------------------------------------------------------------------
    def check(self) -> None:
        """Raise ``ProgramError`` listing every call whose op is missing, whose schema
        changed since tracing, or whose values do not fit its argument types (arity,
        references to earlier results, value types: Note [Checking a program's values] in
        _checking.py); return None when all fit."""
        problems: list[str] = []
        returns: list[tuple[Type | None, ...]] = []
        tensor_returns: list[tuple[bool, ...]] = []
        for index, call in enumerate(self.calls):
            found, types = _call_problems(self, index, call, returns, tensor_returns)
            problems += [f"call %{index} ({call.full_name}): {p}" for p in found]
            returns.append(types)
            tensor_returns.append(tuple(t is not None and accepts_tensor(t) for t in types))
        for position, value in enumerate(self.outputs):
            problem = reference_problem(self.inputs, value, len(self.calls), returns)
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
            if not same_constant(value, traced):
                raise msg.ProgramError(msg.SPECIALIZED.format(name=spec.name, traced=traced, got=value))
        else:
            assert_never(spec)
        values.append(value)
    return values


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
        made = empty_tensor(t.shape, t.dtype, t.device)
    else:
        import numpy as np

        array = np.array(t.elements(), dtype=numpy_dtype(t.dtype))  # a writable copy, in native order
        made = wrap_array(array, t.dtype, t.device)
    if t.wrapped:  # Note [Wrapped numbers in programs] in _values.py
        made.is_wrapped_number = True
    return made


# -- checking ---------------------------------------------------------------------------------
# The schema texts calls recorded, parsed, once per distinct text.
_RECORDED: Final = BoundedCache[str, FunctionSchema](1024, "recorded schema texts")


def _recorded_schema(call: Call, handle: OperatorHandle | None) -> FunctionSchema | None:
    """The schema ``call`` was traced against: the registered one when its text agrees,
    else the recorded text parsed (once per text), or None when it is not a schema."""
    if handle is not None and str(handle.schema) == call.schema:
        return handle.schema
    found = _RECORDED.get(call.schema)
    if found is not None:
        return found
    try:
        return _RECORDED.put(call.schema, parse_schema(call.schema))
    except (TypedopsError, RecursionError):  # a Program made by hand may hold any text
        return None


def _call_problems(program: Program, index: int, call: Call, returns: list[tuple[Type | None, ...]],
                   tensor_returns: list[tuple[bool, ...]]) -> tuple[list[str], tuple[Type | None, ...]]:  # fmt: skip
    """The problems of call ``index``, and the types of its results (None: unknown) for
    the calls after it."""
    handle = dispatcher.find_op(call.op, call.overload)
    recorded = _recorded_schema(call, handle)
    types: tuple[Type | None, ...] = tuple(r.type for r in recorded.returns) if recorded is not None else ()
    types = (types + (None,) * call.num_outputs)[: call.num_outputs]
    if handle is None:
        return [f"no operator {call.full_name} is registered now"], types
    current = str(handle.schema)
    if current != call.schema:
        return [f"its schema changed since tracing: traced {call.schema}, registered now {current}"], types
    schema = handle.schema
    if len(call.args) != len(schema.arguments):
        return [f"{len(call.args)} argument(s) for a schema of {len(schema.arguments)}"], types
    found = argument_problems(program.inputs, index, call.args, argument_facts(schema), returns, tensor_returns)
    return [f"argument {name!r}: {problem}" for name, problem in found], types


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
