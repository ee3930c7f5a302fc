"""The interpreter's instruction set, and the assembler from a ``Program`` to it.

Note [The program stack machine]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
A program runs on a boxed stack and a list of registers. For each call, instructions
push its arguments (an input, a constant, a register, a list built of those), ``CALL``
calls the op on the stack -- the boxed convention: the stack holds exactly the call's
arguments, in schema order, and the op replaces them with its returns -- and ``STORE``
appends the returns to the registers (a call with no returns leaves an empty stack and
needs none). So the registers are the calls' results in order, and ``ResultRef(call,
output)`` is register ``first[call] + output``, known when assembling. At the end the
outputs are pushed and ``RETURN`` hands the stack back.

Everything a run needs is resolved when assembling, once per load: each op's callable
(a dispatcher entry or a static unboxing wrapper, _interpreter.py), the constants
(tensor constants made into tensors), the register numbers. A run does no lookup by
name and parses nothing.

A tensor constant passed where the op writes (``Tensor(a!)``) is pushed with
``LOAD_FRESH``, a new tensor each run, so that write does not reach the next run. Only
that: any other use pushes the one tensor made at load, so a write through a view of it
(``core::view`` of the constant, then ``add_`` of the view) persists across runs, as in
eager code (docs/programs.md).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, Final, cast

from typing_extensions import assert_never

from ..tracing import Constant, ConstantInput, InputRef, ListOf, Program, ResultRef, TensorConstant, TensorInput, Value

__all__ = ["Opcode", "Instruction", "Assembly", "assemble", "stack_effect", "LOAD_INPUT", "LOAD_CONSTANT",
           "LOAD_FRESH", "LOAD_REGISTER", "BUILD_LIST", "CALL", "STORE", "RETURN"]  # fmt: skip


class Opcode(enum.Enum):
    """What one instruction does with its ``arg`` (Note [The program stack machine])."""

    LOAD_INPUT = "load_input"  # push input number arg
    LOAD_CONSTANT = "load_constant"  # push constant number arg
    LOAD_FRESH = "load_fresh"  # push a new tensor made from tensor constant number arg
    LOAD_REGISTER = "load_register"  # push register number arg
    BUILD_LIST = "build_list"  # pop arg values, push them as one list
    CALL = "call"  # call op number arg on the stack: its arguments become its returns
    STORE = "store"  # move the stack (a call's arg returns) to the end of the registers
    RETURN = "return"  # the stack holds the arg outputs: end the run


# The opcodes as module constants: the run loop compares against them (a global load is
# several times cheaper than an Enum class attribute), and mypy and pyright still narrow
# ``op`` member by member, so the loop ends in ``assert_never``.
LOAD_INPUT: Final = Opcode.LOAD_INPUT
LOAD_CONSTANT: Final = Opcode.LOAD_CONSTANT
LOAD_FRESH: Final = Opcode.LOAD_FRESH
LOAD_REGISTER: Final = Opcode.LOAD_REGISTER
BUILD_LIST: Final = Opcode.BUILD_LIST
CALL: Final = Opcode.CALL
STORE: Final = Opcode.STORE
RETURN: Final = Opcode.RETURN


@dataclass(frozen=True, slots=True)
class Instruction:
    opcode: Opcode
    arg: int

    def __str__(self) -> str:
        return f"{self.opcode.name} {self.arg}"


def stack_effect(instruction: Instruction) -> int:
    """How many values ``instruction`` adds to the stack (negative: removes); a ``CALL``'s
    effect depends on its op and is counted by the assembler."""
    op, arg = instruction.opcode, instruction.arg
    if op is LOAD_INPUT or op is LOAD_CONSTANT or op is LOAD_FRESH or op is LOAD_REGISTER:
        return 1
    if op is BUILD_LIST:
        return 1 - arg
    if op is CALL:
        return 0
    if op is STORE or op is RETURN:
        return -arg
    assert_never(op)


@dataclass(frozen=True, slots=True)
class Assembly:
    """A program as instructions: ``constants`` are the values ``LOAD_CONSTANT`` pushes
    (``TensorConstant`` for ``LOAD_FRESH``), and ``CALL k`` calls the program's call ``k``."""

    instructions: tuple[Instruction, ...]
    constants: tuple[Any, ...]


# One shared Instruction per (opcode, arg) with arg below _MAX_INTERNED, in a list per
# opcode indexed by arg (they are immutable, and making a frozen dataclass costs about
# half a microsecond: most of assembling; a list index costs no hashing of the enum).
_MAX_INTERNED: Final = 1 << 12
_INTERNED: Final[dict[Opcode, list[Instruction]]] = {opcode: [] for opcode in Opcode}


def _instruction(opcode: Opcode, arg: int) -> Instruction:
    """``Instruction(opcode, arg)``, shared for small ``arg``."""
    return _interned(_INTERNED[opcode], opcode, arg)


def _interned(made: list[Instruction], opcode: Opcode, arg: int) -> Instruction:
    if arg < len(made):
        return made[arg]
    if arg >= _MAX_INTERNED:
        return Instruction(opcode, arg)
    made.extend(Instruction(opcode, n) for n in range(len(made), arg + 1))
    return made[arg]


_INPUTS: Final = _INTERNED[LOAD_INPUT]
_CONSTANTS: Final = _INTERNED[LOAD_CONSTANT]
_REGISTERS: Final = _INTERNED[LOAD_REGISTER]
for _made, _opcode in ((_INPUTS, LOAD_INPUT), (_CONSTANTS, LOAD_CONSTANT), (_REGISTERS, LOAD_REGISTER)):
    _interned(_made, _opcode, 255)  # the first 256 of each made now: assembling reads them inline


class _Assembler:
    def __init__(self, program: Program, make_tensor: Any) -> None:
        self.program = program
        self.make_tensor = make_tensor  # TensorConstant -> Tensor
        self.code: list[Instruction] = []
        self.constants: list[Any] = []
        self.first: list[int] = []  # the register of each call's first result

    def constant(self, value: Any) -> None:
        self.code.append(_interned(_CONSTANTS, LOAD_CONSTANT, len(self.constants)))
        self.constants.append(value)

    def push(self, value: Value, written: bool = False) -> None:
        kind = type(value)  # the common values first, without a match (Note [The program stack machine])
        if kind is ResultRef:
            assert isinstance(value, ResultRef)
            self.code.append(_interned(_REGISTERS, LOAD_REGISTER, self.first[value.call] + value.output))
            return
        if kind is TensorConstant and not written:
            assert isinstance(value, TensorConstant)
            self.constant(self.make_tensor(value))
            return
        match value:
            case InputRef():
                spec = self.program.inputs[value.index]
                if isinstance(spec, ConstantInput):  # the program is specialized to it
                    self.push(spec.value)
                else:
                    self.code.append(_interned(_INPUTS, LOAD_INPUT, value.index))
            case ResultRef():
                self.code.append(_instruction(LOAD_REGISTER, self.first[value.call] + value.output))
            case Constant():
                self.constant(value.value)
            case TensorConstant():
                if written:
                    self.code.append(_instruction(LOAD_FRESH, len(self.constants)))
                    self.constants.append(value)
                else:
                    self.constant(self.make_tensor(value))
            case ListOf():
                for item in value.items:
                    self.push(item, written)
                self.code.append(_instruction(BUILD_LIST, len(value.items)))
            case _:
                assert_never(value)


def assemble(
    program: Program, calls: list[tuple[tuple[Value, ...], tuple[bool, ...], int]], make_tensor: Any
) -> Assembly:
    """The instructions of ``program`` whose call ``k`` takes the values ``calls[k][0]``
    (fitted to the registered schema; ``calls[k][1]`` marks the arguments the op writes)
    and returns ``calls[k][2]`` values."""
    asm = _Assembler(program, make_tensor)
    code, constants, push, first = asm.code, asm.constants, asm.push, asm.first
    append, inputs = code.append, program.inputs
    calls_made, stores = _INTERNED[CALL], _INTERNED[STORE]
    registers = 0
    for index, (args, written, returns) in enumerate(calls):
        for value, writes in zip(args, written):
            # The common values inline (a method call each was most of assembling); the
            # rest, and anything past the interned instructions, through push.
            kind = type(value)
            if kind is ResultRef:
                assert isinstance(value, ResultRef)
                register = first[value.call] + value.output
                if register < len(_REGISTERS):
                    append(_REGISTERS[register])
                    continue
            elif kind is TensorConstant or kind is Constant:
                if not writes and len(constants) < len(_CONSTANTS):
                    append(_CONSTANTS[len(constants)])
                    constants.append(make_tensor(value) if kind is TensorConstant else cast(Constant, value).value)
                    continue
            elif kind is InputRef:
                assert isinstance(value, InputRef)
                if value.index < len(_INPUTS) and isinstance(inputs[value.index], TensorInput):
                    append(_INPUTS[value.index])
                    continue
            push(value, writes)
        append(_interned(calls_made, CALL, index))
        first.append(registers)
        if returns:
            append(_interned(stores, STORE, returns))
            registers += returns
    for value in program.outputs:
        push(value)
    append(_instruction(RETURN, len(program.outputs)))
    return Assembly(tuple(code), tuple(constants))
