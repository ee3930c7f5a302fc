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
from operator import itemgetter
from typing import Any, Final, Literal, cast

from typing_extensions import assert_never

from ..vocabulary import ScalarType
from ..dispatch import OperatorHandle, dispatcher
from ..runtime import StaticEntry, static_wrapper
from ..schema import FunctionSchema, Type
from ..tensor import Tensor, empty_tensor, numpy_dtype, wrap_array
from ..tracing import (ArgumentFacts, Call, Constant, ConstantInput, ListOf, OutputKind, Program, TensorConstant,
                       TensorInput, Value, argument_facts, argument_problems, reference_problem)  # fmt: skip
from . import _messages as msg
from ._compat import fit_call, schema_text
from ._planning import in_place_calls
from ._straight import STRAIGHT_AFTER, STRAIGHT_MAX_CALLS, Planned, straight_line
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

__all__ = ["CompiledProgram", "compile_program", "Flavor", "FLAVORS", "traced_value"]

Flavor = Literal["dispatch", "static"]
FLAVORS: Final[tuple[Flavor, ...]] = ("dispatch", "static")
Boxed = Callable[[list[Any]], None]
_LITTLE_ENDIAN: Final = sys.byteorder == "little"  # the byte order tensor constants are stored in


# Per dtype: numpy's ndarray and the dtype's native numpy dtype (a load makes a tensor per
# constant: ~0.3 us of each was finding these two).
_NATIVE: Final[dict[ScalarType, tuple[Any, Any]]] = {}


def make_tensor(t: TensorConstant) -> Tensor:
    """A tensor constant as a new tensor."""
    if t.data is None:
        return empty_tensor(t.shape, t.dtype, t.device)
    found = _NATIVE.get(t.dtype)
    if found is None:
        import numpy as np

        found = _NATIVE[t.dtype] = (np.ndarray, numpy_dtype(t.dtype))
    ndarray, native = found
    if _LITTLE_ENDIAN and len(t.data) == native.itemsize * math.prod(t.shape):
        array: Any = ndarray(t.shape, native, bytearray(t.data))  # over a writable copy, in one numpy call
    else:
        import numpy as np

        array = np.array(t.elements(), dtype=native)  # a writable C-order copy, in native order
    if t.device.type == "cpu":
        return Tensor._from_array(array, t.dtype, t.device)  # it owns the copy: no second one
    return wrap_array(array, t.dtype, t.device)


def _dispatch_entry(handle: OperatorHandle) -> Boxed:
    # Reading ``handle.call`` binds the op's generated entry functions on the handle, so
    # ``call_boxed`` is then the boxed entry itself rather than the method that binds it
    # (Note [Handle calls without a frame] in typedops/dispatch/_handle.py).
    handle.call  # noqa: B018
    entry: Boxed = handle.call_boxed
    return entry


def _static_entry(handle: OperatorHandle, full_name: str, dispatched: list[str]) -> tuple[Boxed, StaticEntry | None]:
    found = static_wrapper(full_name)
    if found is None:
        dispatched.append(full_name)
        return _dispatch_entry(handle), None
    return found.boxed, found


class CompiledProgram:
    """A program ready to run (``run(*inputs)``): its calls fitted to the ops registered
    now, assembled into instructions, each op's callable resolved for ``flavor``."""

    __slots__ = ("program", "flavor", "assembly", "dispatched_ops", "_code", "_ops", "_constants", "_tensor_inputs",
                 "_lowered", "_single", "_straight", "_countdown", "_unboxed")  # fmt: skip

    def __init__(self, program: Program, flavor: Flavor, assembly: Assembly, ops: tuple[Boxed, ...],
                 dispatched_ops: tuple[str, ...], unboxed: Sequence[Unboxed | None] = ()) -> None:  # fmt: skip
        self.program = program
        self.flavor: Flavor = flavor
        self.assembly = assembly
        self.dispatched_ops = dispatched_ops  # static flavor: the ops called through the dispatcher
        self._ops = ops
        self._constants = assembly.constants
        self._lowered = lowered = lower(assembly, len(program.inputs), ops, unboxed)
        self._unboxed = unboxed  # for straighten, which lowers again, with each call's slots
        # The instructions as (opcode, arg) pairs, for the stack loop: a lowered program has none.
        self._code = () if lowered is not None else tuple((i.opcode, i.arg) for i in assembly.instructions)
        # The frame slot of a lowered program's one output ("single"), which a run returns
        # as it is, else -1.
        self._single = lowered[2] if lowered is not None and program.output_kind is OutputKind.single else -1
        # Note [Straight-line runs] in _straight.py: the runs left before a lowered
        # program is compiled to one function (-1: never), and that function once it is.
        self._straight: Callable[[Sequence[Any]], Any] | None = None
        self._countdown = STRAIGHT_AFTER if lowered is not None and len(lowered[0]) <= STRAIGHT_MAX_CALLS else -1
        # How many inputs a run takes when all are tensor inputs (a run then checks only
        # that each is a Tensor), else -1: constant inputs are compared with their traced values.
        specs = program.inputs
        self._tensor_inputs = len(specs) if all(isinstance(s, TensorInput) for s in specs) else -1

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
        if len(inputs) == self._tensor_inputs:
            for value in inputs:
                if not isinstance(value, Tensor):
                    _check_inputs(self.program, inputs)  # raises, naming the input
        else:
            _check_inputs(self.program, inputs)
        straight = self._straight
        if straight is not None:
            return straight(inputs) if self._single >= 0 else self.program.output_kind.pack(straight(inputs))
        lowered = self._lowered
        if lowered is None:
            return self.program.output_kind.pack(_execute(self._code, inputs, self._constants, self._ops))
        self._countdown -= 1
        if self._countdown == 0:
            self.straighten()
        frame = _execute_lowered(lowered[0], inputs, self._constants)
        if self._single >= 0:
            return frame[self._single]
        return self.program.output_kind.pack([*lowered[1](frame)])

    __call__ = run

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
            if self.flavor == "static":  # Note [In-place into dead values] in _planning.py
                names = [call.full_name for call in self.program.calls]
                in_place = in_place_calls(names, calls, inputs, self._constants, outputs)
            self._straight = straight_line(calls, inputs, self._constants, outputs, self._single >= 0, in_place)
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


# Note [Lowered runs]
# ~~~~~~~~~~~~~~~~~~~
# Most programs push only inputs, constants and registers (no ``BUILD_LIST``, no
# ``LOAD_FRESH``), and every ``CALL`` is followed by its ``STORE``. Such a program runs
# the same calls in fewer steps, in both flavors: inputs, constants and registers are one
# list, the frame (inputs, then constants, then each call's returns as ``STORE`` appends
# them), so each call's loads become one gather of frame slots (``itemgetter``, made once
# per load) or one to three slots read directly, and the loop does one Python iteration
# per call instead of one per instruction. A run then returns its one output straight
# from the frame.
#
# A call of one return can take an *unboxed* entry, with its arguments as Python
# arguments, without building a stack and writing the result back into it:
#
# - ``"dispatch"``: the op's unboxed dispatcher entry, as eager code calls it, when its
#   keyword-only arguments are constants equal to their defaults (``alpha=1``): the same
#   key set, slot, kernel and functionality (autograd, modes, profiling) as the boxed entry;
# - ``"static"``: the op's generated unboxed static wrapper (Note [Static unboxing
#   wrappers]), which takes every argument positionally, so every call of one return
#   takes it; an op without one takes the dispatcher's unboxed entry as above.
#
# The values were checked at load (Note [Calls against changed schemas]) and a run checks
# its tensor inputs, so the two entries' refusals, which word their errors differently,
# are not reached. Any other call (several returns, keyword-only arguments off their
# defaults in the dispatch flavor) takes the op's boxed entry on a gathered stack; any
# other program ``_execute``, the stack loop, on the boxed entries.
#
# A lowered program that has run ``STRAIGHT_AFTER`` times then runs its calls as one
# compiled straight-line function instead of ``_execute_lowered`` (Note [Straight-line
# runs] in _straight.py); ``lower`` gives it each call's argument slots and returns.
Gather = Callable[[list[Any]], Sequence[Any]]
# (kind, callable, first slot, second slot, third slot, gather of every argument's slot); the kinds:
UNARY: Final = 1  # unboxed, one positional argument: frame[first]
BINARY: Final = 2  # unboxed, two: frame[first], frame[second]
TERNARY: Final = 4  # unboxed, three: frame[first], frame[second], frame[third]
UNBOXED: Final = 3  # unboxed, the gathered arguments
BOXED: Final = 0  # boxed, on a stack of the gathered arguments
Step = tuple[int, Callable[..., Any], int, int, int, Gather]
Unboxed = tuple[Callable[..., Any], int, tuple[Any, ...]]  # (entry, positional count, keyword-only defaults)
_PLAIN: Final = (int, float, bool, str, type(None))


def _gather(slots: Sequence[int]) -> Gather:
    if len(slots) == 1:  # itemgetter of one index gives the item itself; a slice gives a list
        return itemgetter(slice(slots[0], slots[0] + 1))
    if not slots:
        return itemgetter(slice(0, 0))
    return itemgetter(*slots)


_UNUSED: Final = _gather(())


def _unboxed_entry(handle: OperatorHandle, schema: FunctionSchema) -> Unboxed | None:
    """The unboxed entry of a one-return op, for Note [Lowered runs]."""
    if len(schema.returns) != 1 or any(a.default is None for a in schema.kwarg_only):
        return None
    return handle.call, len(schema.positional), tuple(a.default_value for a in schema.kwarg_only)


def _static_unboxed(static: StaticEntry, schema: FunctionSchema) -> Unboxed | None:
    """The unboxed static wrapper of a one-return op, for Note [Lowered runs]: it takes
    every argument positionally."""
    if len(schema.returns) != 1:
        return None
    return static.unboxed, len(schema.arguments), ()


def _unboxed_step(entry: Callable[..., Any], slots: list[int]) -> Step:
    # The gather of a step of one to three arguments is never called: they share _UNUSED.
    if len(slots) == 1:
        return UNARY, entry, slots[0], -1, -1, _UNUSED
    if len(slots) == 2:
        return BINARY, entry, slots[0], slots[1], -1, _UNUSED
    if len(slots) == 3:
        return TERNARY, entry, slots[0], slots[1], slots[2], _UNUSED
    return UNBOXED, entry, -1, -1, -1, _gather(slots)


def _is_default(value: Any, default: Any) -> bool:
    return type(value) is type(default) and type(value) in _PLAIN and bool(value == default)


def _defaults_fit(slots: list[int], inputs: int, constants: tuple[Any, ...], defaults: tuple[Any, ...]) -> bool:
    """Whether the values in frame ``slots`` are constants equal to ``defaults``, one each."""
    if len(slots) != len(defaults):
        return False
    for slot, default in zip(slots, defaults):
        number = slot - inputs
        if not (0 <= number < len(constants) and _is_default(constants[number], default)):
            return False
    return True


Lowered = tuple[tuple[Step, ...], Gather, int, tuple[Planned, ...], tuple[int, ...]]


def lower(assembly: Assembly, inputs: int, ops: Sequence[Boxed], unboxed: Sequence[Unboxed | None] = (),
          plan: bool = False) -> Lowered | None:  # fmt: skip
    """``assembly``'s calls as steps, the gather of its outputs, the frame slot of its
    first output (-1: none), with ``plan`` the calls as Note [Straight-line runs] takes
    them (else none: a load makes no more than a run needs), and the frame slots of the
    outputs; None when Note [Lowered runs] does not apply. ``unboxed[k]`` is call ``k``'s
    unboxed entry, if it may take one."""
    constants = assembly.constants
    registers = inputs + len(constants)
    steps: list[Step] = []
    planned: list[Planned] = []
    pending: list[int] = []  # the frame slots of the values loaded since the last call
    push = pending.append
    stored = True  # the instruction before was not a CALL (whose STORE must follow it)
    for instruction in assembly.instructions:
        op, arg = instruction.opcode, instruction.arg
        if not stored:
            if op is not STORE:
                return None
            stored = True  # the frame takes the call's returns
            if plan:
                boxed, function, slots, _ = planned[-1]
                planned[-1] = (boxed, function, slots, arg)
        elif op is LOAD_REGISTER:
            push(registers + arg)
        elif op is LOAD_CONSTANT:
            push(inputs + arg)
        elif op is LOAD_INPUT:
            push(arg)
        elif op is CALL:
            stored = False
            spec = unboxed[arg] if arg < len(unboxed) else None
            if spec is not None:
                entry, count, defaults = spec
                if _defaults_fit(pending[count:], inputs, constants, defaults):
                    steps.append(_unboxed_step(entry, pending[:count]))
                    if plan:
                        planned.append((False, entry, tuple(pending[:count]), 1))
                    pending.clear()
                    continue
            steps.append((BOXED, ops[arg], -1, -1, -1, _gather(pending)))
            if plan:
                planned.append((True, ops[arg], tuple(pending), 0))
            pending.clear()
        elif op is STORE:
            pass  # the frame takes the call's returns
        elif op is RETURN:
            return tuple(steps), _gather(pending), pending[0] if pending else -1, tuple(planned), tuple(pending)
        elif op is BUILD_LIST or op is LOAD_FRESH:
            return None
        else:
            assert_never(op)
    return None


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


def _same(given: object, traced: object) -> bool:
    if isinstance(traced, list):
        if not isinstance(given, (list, tuple)):
            return False
        items = cast("Sequence[object]", given)
        expected = cast("list[object]", traced)
        return len(items) == len(expected) and all(_same(g, t) for g, t in zip(items, expected))
    return type(given) is type(traced) and bool(given == traced)


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
                if not _same(value, traced):
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
    name = call.full_name
    handle = resolved[index][0] if resolved is not None else dispatcher.find_op(call.op, call.overload)
    if handle is None:
        raise msg.IncompatibleProgramError(msg.OP_GONE.format(index=index, op=name))
    if flavor == "static" and not _CORE_WRAPPERS and call.op.startswith("core::"):
        from ..core import load_static_wrappers

        load_static_wrappers()
        _CORE_WRAPPERS.append(True)  # they stay registered: once per process
    entry, static = (_dispatch_entry(handle), None) if flavor == "dispatch" else _static_entry(handle, name, dispatched)
    schema = handle.schema
    unboxed = _unboxed_entry(handle, schema) if static is None else _static_unboxed(static, schema)
    facts = argument_facts(schema)
    return schema, entry, facts, schema_text(schema), unboxed, (facts.writes, len(facts.returns))


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
    calls: list[tuple[tuple[Value, ...], tuple[bool, ...], int]] = []
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
        schema, entry, facts, text, unboxed_entry, shape = found
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
        unboxed.append(unboxed_entry)
    for position, value in enumerate(program.outputs):
        reference = reference_problem(program.inputs, value, len(program.calls), returns)
        if reference is not None:
            raise msg.IncompatibleProgramError(msg.BAD_REFERENCE.format(where=f"output {position}", problem=reference))
    assembly = assemble(program, calls, make_tensor)
    return CompiledProgram(program, flavor, assembly, tuple(ops), tuple(dispatched), unboxed)
