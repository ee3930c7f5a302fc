"""Lowering a program's calls to the steps of Note [Lowered runs], which _interpreter.py runs.

A lowered program runs one loop iteration a call over one frame (inputs, constants, each
call's returns); ``lower`` makes its steps from an assembly's instructions, and
``lower_calls`` from the calls' values directly, without instructions (Note [Lowered
without instructions]).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from itertools import repeat
from operator import itemgetter
from typing import Any, Final, cast

from typing_extensions import assert_never

from ..vocabulary import BoundedCache
from ..dispatch import OperatorHandle
from ..runtime import StaticEntry
from ..schema import FunctionSchema
from ..tracing import Constant, Input, InputRef, Program, ResultRef, TensorConstant, TensorInput, Value
from ._instructions import BUILD_LIST, CALL, LOAD_CONSTANT, LOAD_FRESH, LOAD_INPUT, LOAD_REGISTER, RETURN, STORE, Assembly
from ._straight import Planned

__all__ = ["unboxed_entry", "static_unboxed", "lower", "lower_calls", "call_step", "Lowered", "Unboxed", "Boxed", "AssembledCall", "Step"]

Boxed = Callable[[list[Any]], None]

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


# Per schema object: its positional count and keyword-only defaults when its op may take
# its unboxed entry, else _NO_ENTRY (finding them cost ~0.4 us an op on every load).
_SHAPES: Final = BoundedCache[int, tuple[int, tuple[Any, ...]]](4096, "unboxed entries of schemas")
_NO_ENTRY: Final[tuple[int, tuple[Any, ...]]] = (-1, ())


def unboxed_entry(handle: OperatorHandle, schema: FunctionSchema) -> Unboxed | None:
    """The unboxed entry of a one-return op, for Note [Lowered runs]."""
    shape = _SHAPES.get(id(schema))
    if shape is None:
        fits = len(schema.returns) == 1 and all(a.default is not None for a in schema.kwarg_only)
        made = (len(schema.positional), tuple(a.default_value for a in schema.kwarg_only)) if fits else _NO_ENTRY
        shape = _SHAPES.put(id(schema), made, keep=schema)
    if shape is _NO_ENTRY:
        return None
    return handle.call, shape[0], shape[1]


def static_unboxed(static: StaticEntry, schema: FunctionSchema) -> Unboxed | None:
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


def _defaults_fit(slots: list[int], inputs: int, constants: Sequence[Any], defaults: tuple[Any, ...]) -> bool:
    """Whether the values in frame ``slots`` are constants equal to ``defaults``, one each:
    of the default's own type, a plain one (so ``==`` is the value's), and equal."""
    if len(slots) != len(defaults):
        return False
    count = len(constants)
    for slot, default in zip(slots, defaults):
        number = slot - inputs
        if not 0 <= number < count:
            return False
        value: object = constants[number]
        kind = type(value)
        if kind is not type(default) or kind not in _PLAIN or not value == default:
            return False
    return True


def call_step(entry: Boxed, spec: Unboxed | None, slots: list[int], inputs: int, constants: Sequence[Any]) -> Step:
    """The step of a call of boxed ``entry`` on frame ``slots``: its unboxed entry
    (``spec``) when its trailing slots are constants equal to the defaults the unboxed
    entry leaves out, else the boxed entry."""
    if spec is not None:
        unboxed, positional, defaults = spec
        if (len(slots) == positional and not defaults) or _defaults_fit(slots[positional:], inputs, constants, defaults):
            return _unboxed_step(unboxed, slots[:positional])
    return BOXED, entry, -1, -1, -1, _gather(slots)


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


# Note [Lowered without instructions]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# A program Note [Lowered runs] applies to is lowered straight from its calls' values,
# without assembling instructions first and lowering them (most of compile_program's
# time on a load): every value an input (a tensor input), a result, a constant or a
# tensor constant the call does not write, and every call with a return. The steps,
# constants and frame slots are exactly those ``lower(assemble(...))`` gives -- the
# constants in the order assembling pushes them, one a use, then the registers
# (tests/test_programs_lowering.py compares the two); anything else (a list, a
# constant input, a written tensor constant, a call without returns) is assembled and
# lowered as before. The instructions are assembled when ``assembly`` is first read
# (``disassemble``, ``straighten``), with the same constants.
AssembledCall = tuple[tuple[Value, ...], tuple[bool, ...], int]  # (values, written, returns)


def _frame_constants(program: Program, calls: list[AssembledCall]) -> list[Any] | None:
    """The constants of ``program``'s frame in the order assembling pushes them (tensor
    constants still ``TensorConstant``), or None when Note [Lowered without instructions]
    does not apply."""
    inputs = program.inputs
    constants: list[Any] = []
    for args, written, returns in calls:
        if not returns or not _frame_constants_of(inputs, args, written, constants):
            return None
    if not _frame_constants_of(inputs, program.outputs, repeat(False), constants):
        return None
    return constants


def _frame_constants_of(inputs: Sequence[Input], values: Sequence[Value], written: Iterable[bool],
                        constants: list[Any]) -> bool:  # fmt: skip
    """Push the constants among ``values`` onto ``constants`` (a tensor constant that is
    ``written`` is not one); False for a value the Note does not cover."""
    for value, writes in zip(values, written):
        kind = type(value)
        if kind is Constant:
            constants.append(cast(Constant, value).value)
        elif kind is TensorConstant and not writes:
            constants.append(value)
        elif kind is InputRef:
            if not isinstance(inputs[cast(InputRef, value).index], TensorInput):
                return False
        elif kind is not ResultRef:
            return False
    return True


def lower_calls(program: Program, calls: list[AssembledCall], ops: Sequence[Boxed], unboxed: Sequence[Unboxed | None],
                make_tensor: Callable[[TensorConstant], Any]) -> tuple[Lowered, tuple[Any, ...]] | None:  # fmt: skip
    """``program`` lowered from ``calls`` (as ``assemble`` takes them), and its frame's
    constants; None when Note [Lowered without instructions] does not apply."""
    found = _frame_constants(program, calls)
    if found is None:
        return None
    constants = tuple(make_tensor(c) if type(c) is TensorConstant else c for c in found)
    inputs = len(program.inputs)
    registers = inputs + len(constants)
    constant = inputs  # the frame slot of the next constant
    first: list[int] = []  # the frame slot of each call's first result
    steps: list[Step] = []
    for index, (args, _, returns) in enumerate(calls):
        slots: list[int] = []
        for value in args:  # inline: a call a value was most of lowering
            kind = type(value)
            if kind is ResultRef:
                ref = cast(ResultRef, value)
                slots.append(first[ref.call] + ref.output)
            elif kind is InputRef:
                slots.append(cast(InputRef, value).index)
            else:  # a constant or tensor constant: the next constant slot, in the order met
                slots.append(constant)
                constant += 1
        first.append(registers)
        registers += returns
        steps.append(call_step(ops[index], unboxed[index] if index < len(unboxed) else None, slots, inputs, constants))
    pending: list[int] = []
    for value in program.outputs:
        kind = type(value)
        if kind is ResultRef:
            ref = cast(ResultRef, value)
            pending.append(first[ref.call] + ref.output)
        elif kind is InputRef:
            pending.append(cast(InputRef, value).index)
        else:
            pending.append(constant)
            constant += 1
    return (tuple(steps), _gather(pending), pending[0] if pending else -1, (), tuple(pending)), constants
