"""``CompiledProgram``: a ``Program`` assembled for the stack machine, in one of two flavors.

Note [Two flavors of a loaded program]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
``"dispatch"`` (the default) calls each op's dispatcher entry, resolved once when the
program is compiled (the boxed one, or the unboxed one as eager code does: Note
[Lowered runs]): every functionality applies as to eager code (autograd, modes,
the profiler, fake tensors, tracing), and the dispatcher checks each value.

``"static"`` is dispatcher-free, as write-up 004 proposes for mobile: each op is called
through its generated static unboxing wrapper (Note [Static unboxing wrappers] in
typedops/codegen/_unboxing.py), which picks a backend among those chosen at generation
time from the tensor arguments' key bits and calls that backend's kernel -- the unboxed
wrapper, taking the arguments positionally, in a lowered run (Note [Lowered runs]), the
boxed one on the stack otherwise. No key set is computed, no table read, no
functionality applies (no autograd, modes, profiling): the flavor for inference. The
values were checked against the schemas at load (Note [Calls against changed schemas]);
the run checks only that tensor inputs are tensors. An op with no static wrapper
registered (an ``@op`` op, a library generated without ``--static-dispatch``) is called
through the dispatcher, as torch's lite interpreter falls back from its JIT op registry
to the dispatcher; ``dispatched_ops`` lists them.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Sequence
from typing import Any, Final, Literal, Protocol

from typing_extensions import assert_never

from ..vocabulary import BoundedCache, Device, ScalarType
from ..dispatch import OperatorHandle, dispatcher
from ..runtime import StaticEntry, static_wrapper
from ..schema import FunctionSchema, Type
from ..tensor import CPU, Tensor, empty_tensor, numpy_dtype, wrap_array
from ..tracing import (ArgumentFacts, Call, Constant, ConstantInput, Input, ListOf, OutputKind, Program, TensorConstant,
                       TensorInput, Value, argument_facts, argument_problems, reference_problem, same_constant)  # fmt: skip
from . import _messages as msg
from ._compat import fit_call, schema_text
from ._lowering import (BINARY, TERNARY, UNARY, UNBOXED, AssembledCall, Boxed, Lowered, Step, Unboxed, static_unboxed,
                        unboxed_entry, lower, lower_calls)  # fmt: skip
from ._arrays import array_line
from ._planning import in_place_calls
from ._straight import STRAIGHT_AFTER, STRAIGHT_MAX_CALLS, straight_line
from ._instructions import (
    BUILD_LIST,
    CALL,
    LOAD_CONSTANT,
    LOAD_FRESH,
    LOAD_INPUT,
    LOAD_REGISTER,
    RETURN,
    STORE,
    Assembly,
    Instruction,
    Opcode,
    assemble,
)

__all__ = ["CompiledProgram", "compile_program", "Flavor", "FLAVORS", "traced_value", "DeferredProgram", "resolve_handle",
           "make_tensor", "tensor_of"]

Flavor = Literal["dispatch", "static"]
FLAVORS: Final[tuple[Flavor, ...]] = ("dispatch", "static")
_LITTLE_ENDIAN: Final = sys.byteorder == "little"  # the byte order tensor constants are stored in


# Per dtype: numpy's ndarray and the dtype's native numpy dtype (a load makes a tensor per
# constant: ~0.3 us of each was finding these two).
_NATIVE: Final[dict[ScalarType, tuple[Any, Any]]] = {}


def make_tensor(t: TensorConstant) -> Tensor:
    """A tensor constant as a new tensor."""
    if t.data is None:
        made = empty_tensor(t.shape, t.dtype, t.device)
    else:
        made = tensor_of(t.dtype, t.shape, t.device, t.data)
    if t.wrapped:  # Note [Wrapped numbers in programs] in typedops/tracing/_values.py
        made.is_wrapped_number = True
    return made


def tensor_of(dtype: ScalarType, shape: tuple[int, ...], device: Device, data: bytes | memoryview) -> Tensor:
    """A new tensor of a copy of ``data``, a tensor constant's elements (Note [Tensor
    constants are bytes] in tracing/_values.py)."""
    found = _NATIVE.get(dtype)
    if found is None:
        import numpy as np

        found = _NATIVE[dtype] = (np.ndarray, numpy_dtype(dtype))
    ndarray, native = found
    if _LITTLE_ENDIAN and len(data) == native.itemsize * math.prod(shape):
        array: Any = ndarray(shape, native, bytearray(data))  # over a writable copy, in one numpy call
    else:
        import numpy as np

        elements = TensorConstant(dtype, shape, device, bytes(data)).elements()
        array = np.array(elements, dtype=native)  # a writable C-order copy, in native order
    if device.type == "cpu":
        # It owns the copy: no second one. The CPU device is the one object when it is
        # equal to it (as input tensors' usually is: Note [Array-level runs] tests ``is``).
        return Tensor._from_array(array, dtype, CPU if device == CPU else device)
    return wrap_array(array, dtype, device)


def _dispatch_entry(handle: OperatorHandle) -> Boxed:
    # Reading ``handle.call`` binds the op's generated entry functions on the handle, so
    # ``call_boxed`` is then the boxed entry itself rather than the method that binds it
    # (Note [Handle calls without a frame] in typedops/dispatch/_handle.py).
    handle.call  # noqa: B018
    entry: Boxed = handle.call_boxed
    return entry


class DeferredProgram(Protocol):
    """A program not yet made: its inputs and output kind, and how to make it."""

    @property
    def inputs(self) -> Sequence[Input]: ...

    @property
    def kind(self) -> OutputKind: ...

    def program(self) -> Program: ...


def _unmade(_: TensorConstant) -> None:
    """No tensor: assembling again keeps the tensors lowering made (``CompiledProgram.assembly``)."""


class CompiledProgram:
    """A program ready to run (``run(*inputs)``): its calls fitted to the ops registered
    now, assembled into instructions, each op's callable resolved for ``flavor``."""

    __slots__ = ("_program", "_deferred", "_kind", "flavor", "_assembly", "dispatched_ops", "_code", "_ops", "_constants",
                 "_tensor_inputs", "_lowered", "_single", "_straight", "_countdown", "_unboxed", "_calls",
                 "_shapes", "_direct")  # fmt: skip

    def __init__(self, program: Program | DeferredProgram, flavor: Flavor, assembly: Assembly | None,
                 ops: tuple[Boxed, ...], dispatched_ops: tuple[str, ...], unboxed: Sequence[Unboxed | None] = (),
                 direct: tuple[Lowered, tuple[Any, ...], list[AssembledCall]] | None = None,
                 shapes: list[tuple[tuple[bool, ...], int]] | None = None) -> None:  # fmt: skip
        specs: Sequence[Input]
        if isinstance(program, Program):
            self._program: Program | None = program
            self._deferred: DeferredProgram | None = None
            specs, self._kind = program.inputs, program.output_kind
        else:  # Note [Compiled from the numbered values] in _direct.py: made when first asked for
            self._program, self._deferred = None, program
            specs, self._kind = program.inputs, program.kind
        # A deferred program's calls: what each writes and its returns (its values are the program's).
        self._shapes = shapes or []
        self.flavor: Flavor = flavor
        self.dispatched_ops = dispatched_ops  # static flavor: the ops called through the dispatcher
        self._ops = ops
        self._assembly = assembly
        lowered: Lowered | None
        if direct is not None:  # Note [Lowered without instructions] in _lowering.py: assembled when asked for
            lowered, self._constants, self._calls = direct
        else:
            assert assembly is not None
            self._calls = []
            self._constants = assembly.constants
            lowered = lower(assembly, len(specs), ops, unboxed)
        self._lowered = lowered
        self._unboxed = unboxed  # for straighten, which lowers again, with each call's slots
        # The instructions as (opcode, arg) pairs, for the stack loop: a lowered program has none.
        self._code = () if lowered is not None else tuple((i.opcode, i.arg) for i in self.assembly.instructions)
        # The frame slot of a lowered program's one output ("single"), which a run returns
        # as it is, else -1.
        self._single = lowered[2] if lowered is not None and self._kind is OutputKind.single else -1
        # Note [Straight-line runs] in _straight.py: the runs left before a lowered
        # program is compiled to one function (-1: never), and that function once it is.
        self._straight: Callable[[Sequence[Any]], Any] | None = None
        # An array-level run that checks its inputs itself (Note [Array-level runs] in
        # _arrays.py), which ``run`` calls first, once there is one.
        self._direct: Callable[[Sequence[Any]], Any] | None = None
        self._countdown = STRAIGHT_AFTER if lowered is not None and len(lowered[0]) <= STRAIGHT_MAX_CALLS else -1
        # How many inputs a run takes when all are tensor inputs (a run then checks only
        # that each is a Tensor), else -1: constant inputs are compared with their traced values.
        self._tensor_inputs = len(specs) if all(isinstance(s, TensorInput) for s in specs) else -1

    @property
    def program(self) -> Program:
        """The program compiled (made from the file's values the first time it is asked
        for, when it was compiled from them: Note [Compiled from the numbered values])."""
        program = self._program
        if program is None:
            assert self._deferred is not None
            program = self._program = self._deferred.program()  # two threads may make two equal ones: either serves
        return program

    @property
    def assembly(self) -> Assembly:
        """The program's instructions and constants (a program lowered without them
        assembles them the first time they are asked for, with the constants a run uses)."""
        if self._assembly is None:
            calls = self._calls
            if self._deferred is not None:  # the calls' values are the program's (made now, if not yet)
                calls = [(call.args, *shape) for call, shape in zip(self.program.calls, self._shapes)]
            made = assemble(self.program, calls, _unmade)
            assert len(made.constants) == len(self._constants)
            self._assembly = Assembly(made.instructions, self._constants)
        return self._assembly

    @property
    def instructions(self) -> tuple[Instruction, ...]:
        return self.assembly.instructions

    def ops(self) -> list[str]:
        return self.program.ops()

    def __str__(self) -> str:
        return str(self.program)

    def disassemble(self) -> str:
        """The instructions, one a line, each ``CALL`` with its op's name."""
        calls = self.program.calls
        lines: list[str] = []
        for number, instruction in enumerate(self.assembly.instructions):
            note = f"  # {calls[instruction.arg].full_name}" if instruction.opcode is CALL else ""
            lines.append(f"{number:4d}  {instruction.opcode.name:<14}{instruction.arg}{note}")
        return "\n".join(lines)

    def run(self, *inputs: Any) -> Any:
        """Run the program on ``inputs`` (one per program input, in order)."""
        direct = self._direct
        if direct is not None:
            return direct(inputs)
        return self._run(inputs)

    __call__ = run

    def _run(self, inputs: Sequence[Any]) -> Any:
        """``run`` after its array-level run (if any) declined: every input checked here."""
        if len(inputs) == self._tensor_inputs:
            for value in inputs:
                if not isinstance(value, Tensor):
                    _check_inputs(self.program, inputs)  # raises, naming the input
        else:
            _check_inputs(self.program, inputs)
        straight = self._straight
        if straight is not None:
            return straight(inputs) if self._single >= 0 else self._kind.pack(straight(inputs))
        lowered = self._lowered
        if lowered is None:
            return self._kind.pack(_execute(self._code, inputs, self._constants, self._ops))
        self._countdown -= 1
        if self._countdown == 0:
            self.straighten()
        frame = _execute_lowered(lowered[0], inputs, self._constants)
        if self._single >= 0:
            return frame[self._single]
        return self._kind.pack([*lowered[1](frame)])

    def straighten(self) -> bool:
        """Compile a lowered program to one straight-line function now, rather than after
        ``STRAIGHT_AFTER`` runs (Note [Straight-line runs] in _straight.py); whether it
        is (programs that are not lowered, or longer than ``STRAIGHT_MAX_CALLS`` calls,
        keep their loop)."""
        inputs = len(self.program.inputs)
        lowered = self._lowered
        if self._straight is None and lowered is not None and len(lowered[0]) <= STRAIGHT_MAX_CALLS:
            # The calls with their slots: lowered again, as compile_program does not keep them.
            again = lower(self.assembly, inputs, self._ops, self._unboxed, plan=True)
            assert again is not None
            calls, outputs = again[3], again[4]
            in_place: list[Callable[..., Any] | None] = []
            names = [call.full_name for call in self.program.calls]
            if self.flavor == "static":  # Note [In-place into dead values] in _planning.py
                in_place = in_place_calls(names, calls, inputs, self._constants, outputs)
            single = self._single >= 0
            straight = self._straight = straight_line(calls, inputs, self._constants, outputs, single, in_place)
            if self.flavor == "static":  # Note [Array-level runs] in _arrays.py
                # Called by ``run`` before any check when its guard tests every input (each
                # is used) and it returns the one output as ``run`` does: it declines to ``_run``.
                used = {slot for _, _, slots, _ in calls for slot in slots}
                direct = single and all(n in used for n in range(inputs))
                arrays = array_line(names, calls, self.program.inputs, self._constants, outputs, single,
                                    self._run if direct else straight)  # fmt: skip
                if arrays is not None and direct:
                    self._direct = arrays
                elif arrays is not None:
                    self._straight = arrays
        return self._straight is not None


def _execute(code: tuple[tuple[Opcode, int], ...], inputs: Sequence[Any], constants: tuple[Any, ...],
             ops: tuple[Boxed, ...]) -> list[Any]:  # fmt: skip
    """The run loop (Note [The program stack machine] in _instructions.py)."""
    stack: list[Any] = []
    registers: list[Any] = []
    push = stack.append
    for op, arg in code:
        if op is LOAD_REGISTER:
            push(registers[arg])
        elif op is LOAD_CONSTANT:
            push(constants[arg])
        elif op is CALL:
            ops[arg](stack)
        elif op is STORE:
            registers += stack
            stack.clear()
        elif op is LOAD_INPUT:
            push(inputs[arg])
        elif op is BUILD_LIST:
            start = len(stack) - arg
            items = stack[start:]
            del stack[start:]
            push(items)
        elif op is LOAD_FRESH:
            push(make_tensor(constants[arg]))
        elif op is RETURN:
            return stack
        else:
            assert_never(op)
    return stack  # not reached: an assembly ends with RETURN


def _execute_lowered(steps: tuple[Step, ...], inputs: Sequence[Any], constants: tuple[Any, ...]) -> list[Any]:
    """The run of a lowered program (Note [Lowered runs]): its frame, the outputs in it."""
    frame = [*inputs, *constants]
    append = frame.append
    for kind, op, first, second, third, gather in steps:
        if kind == BINARY:
            append(op(frame[first], frame[second]))
        elif kind == UNARY:
            append(op(frame[first]))
        elif kind == TERNARY:
            append(op(frame[first], frame[second], frame[third]))
        elif kind == UNBOXED:
            append(op(*gather(frame)))
        else:
            stack = [*gather(frame)]
            op(stack)
            frame += stack
    return frame


def traced_value(value: Value) -> Any:
    """The Python value of a constant input as traced (a list for ``ListOf``)."""
    if isinstance(value, Constant):
        return value.value
    if isinstance(value, ListOf):
        return [traced_value(v) for v in value.items]
    return value


def _check_inputs(program: Program, inputs: Sequence[Any]) -> None:
    specs = program.inputs
    if len(inputs) != len(specs):
        names = ", ".join(s.name for s in specs)
        raise msg.ProgramError(msg.WRONG_INPUT_COUNT.format(expected=len(specs), names=names, got=len(inputs)))
    for spec, value in zip(specs, inputs):
        match spec:
            case TensorInput():
                if not isinstance(value, Tensor):
                    raise msg.ProgramError(msg.NOT_A_TENSOR_INPUT.format(name=spec.name, kind=type(value).__name__))
            case ConstantInput():
                traced = traced_value(spec.value)
                if not same_constant(value, traced):
                    raise msg.ProgramError(msg.SPECIALIZED.format(name=spec.name, traced=traced, got=value))
            case _:
                assert_never(spec)


# What compile_program finds once per op (name, overload): its registered schema, the
# callable the flavor calls, the schema's facts and text, its unboxed entry, and what
# assembling takes of each of its calls besides the values (what it writes, its returns).
_Op = tuple[FunctionSchema, Boxed, ArgumentFacts, str, Unboxed | None, tuple[tuple[bool, ...], int]]


_CORE_WRAPPERS: Final[list[bool]] = []  # not empty once the core library's static wrappers are registered


def _resolve_op(index: int, call: Call, resolved: Sequence[tuple[OperatorHandle, FunctionSchema]] | None,
                flavor: Flavor, dispatched: list[str]) -> _Op:  # fmt: skip
    """The op of ``call`` (its first call in the program), found for ``compile_program``."""
    handle = resolved[index][0] if resolved is not None else dispatcher.find_op(call.op, call.overload)
    if handle is None:
        raise msg.IncompatibleProgramError(msg.OP_GONE.format(index=index, op=call.full_name))
    return resolve_handle(handle, call.op, call.full_name, flavor, dispatched)


# Note [Ops resolved once]
# ~~~~~~~~~~~~~~~~~~~~~~~~
# What the dispatch flavor calls of an op depends on its handle alone: the handle's
# schema, its entry functions (generated once per op and never replaced: ``entries`` in
# typedops/dispatch/_operator.py) and what the schema implies. A handle belongs to one
# registration of one op (a redefined op gets a new handle), so the resolved op is kept
# per handle -- the handle kept alive with it, so its id is not reused -- and a program
# loaded again takes it without resolving (~0.5 us an op). The static flavor's answer
# also depends on the static wrappers registered for the op's name now (a later module
# may replace them: ``register_static_wrappers``), so it is kept with the wrappers it was
# resolved against and taken only while they are still the ones registered.
_RESOLVED: Final = BoundedCache[tuple[int, bool], "tuple[StaticEntry | None, _Op]"](2048, "ops resolved for programs")


def resolve_handle(handle: OperatorHandle, op: str, name: str, flavor: Flavor, dispatched: list[str]) -> _Op:
    """What a program calls of op ``name`` (``op``: its qualified name) registered as
    ``handle``, for ``flavor``; ``dispatched`` gets its name when the static flavor calls
    it through the dispatcher."""
    static: StaticEntry | None = None
    if flavor == "static":
        if not _CORE_WRAPPERS and op.startswith("core::"):
            from ..core import load_static_wrappers

            load_static_wrappers()
            _CORE_WRAPPERS.append(True)  # they stay registered: once per process
        static = static_wrapper(name)
        if static is None:
            dispatched.append(name)
    key = (id(handle), flavor == "static")
    known = _RESOLVED.get(key)  # Note [Ops resolved once]
    if known is not None and known[0] is static:
        return known[1]
    entry = _dispatch_entry(handle) if static is None else static.boxed
    schema = handle.schema
    unboxed = unboxed_entry(handle, schema) if static is None else static_unboxed(static, schema)
    facts = argument_facts(schema)
    made: _Op = (schema, entry, facts, schema_text(schema), unboxed, (facts.writes, len(facts.returns)))
    _RESOLVED.put(key, (static, made), keep=handle)
    return made


def compile_program(
    program: Program,
    flavor: Flavor = "dispatch",
    *,
    resolved: Sequence[tuple[OperatorHandle, FunctionSchema]] | None = None,
) -> CompiledProgram:
    """``program`` fitted to the ops registered now and assembled for ``flavor``;
    raises ``IncompatibleProgramError`` for a call that cannot be made (Note [Calls against
    changed schemas] in _compat.py). ``resolved`` gives, per call, the op's handle and its
    saved schema as loading found them (the registered schema object itself when the texts
    agree), so nothing is looked up or parsed twice."""
    if flavor not in FLAVORS:
        raise msg.ArgumentValueError(msg.BAD_FLAVOR.format(flavor=flavor))
    per_op: dict[tuple[str, str], _Op] = {}  # found once per op
    dispatched: list[str] = []
    calls: list[AssembledCall] = []
    returns: list[tuple[Type, ...]] = []
    tensor_returns: list[tuple[bool, ...]] = []
    ops: list[Boxed] = []
    unboxed: list[Unboxed | None] = []
    inputs = program.inputs
    for index, call in enumerate(program.calls):
        key = (call.op, call.overload)
        found = per_op.get(key)
        if found is None:
            found = per_op[key] = _resolve_op(index, call, resolved, flavor, dispatched)
        schema, entry, facts, text, one_return, shape = found
        saved = resolved[index][1] if resolved is not None else None
        args = call.args if saved is schema else fit_call(index, call, schema, text, saved)
        problems = argument_problems(inputs, index, args, facts, returns, tensor_returns)
        if problems:
            argument, problem = problems[0]
            raise msg.IncompatibleProgramError(msg.BAD_VALUE.format(
                index=index, op=schema.full_name, argument=argument, problem=problem))  # fmt: skip
        calls.append((args, *shape))
        returns.append(facts.returns)
        tensor_returns.append(facts.tensor_returns)
        ops.append(entry)
        unboxed.append(one_return)
    for position, value in enumerate(program.outputs):
        reference = reference_problem(program.inputs, value, len(program.calls), returns)
        if reference is not None:
            raise msg.IncompatibleProgramError(msg.BAD_REFERENCE.format(where=f"output {position}", problem=reference))
    direct = lower_calls(program, calls, ops, unboxed, make_tensor)
    if direct is not None:
        return CompiledProgram(program, flavor, None, tuple(ops), tuple(dispatched), unboxed, (*direct, calls))
    assembly = assemble(program, calls, make_tensor)
    return CompiledProgram(program, flavor, assembly, tuple(ops), tuple(dispatched), unboxed)
