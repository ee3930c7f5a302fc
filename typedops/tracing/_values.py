"""The pieces of a ``Program``: values, inputs and op calls (frozen dataclasses).

Note [Programs are data]
~~~~~~~~~~~~~~~~~~~~~~~~
A program holds no Python callables and no tensors: each call names its op by qualified
name and overload and keeps the schema text it was traced against; each argument is a
``Value`` -- a graph input, an earlier call's result, a constant (None, a number, a
string, a dtype, a layout, a memory format, a device), a tensor constant (dtype, shape,
device and its elements as numbers) or a list of values. So a program can be printed,
compared, checked against the schemas registered now, saved and loaded (issue 16)
without running anything from the file; running it looks every op up by name and calls
it boxed, so the dispatcher checks every value again.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Union

from typing_extensions import assert_never

from ..vocabulary import Device, Layout, MemoryFormat, ScalarType

__all__ = [
    "ConstantValue",
    "InputRef",
    "ResultRef",
    "Constant",
    "TensorConstant",
    "ListOf",
    "Value",
    "TensorInput",
    "ConstantInput",
    "Input",
    "Call",
    "OutputKind",
    "format_value",
    "format_constant",
]

ConstantValue = Union[None, bool, int, float, complex, str, ScalarType, Layout, MemoryFormat, Device]
CONSTANT_TYPES = (bool, int, float, complex, str, ScalarType, Layout, MemoryFormat, Device)


@dataclass(frozen=True, slots=True)
class InputRef:
    """The program's input number ``index``."""

    index: int


@dataclass(frozen=True, slots=True)
class ResultRef:
    """Result ``output`` of the program's call number ``call``."""

    call: int
    output: int = 0


@dataclass(frozen=True, slots=True)
class Constant:
    """A value fixed when the program was traced."""

    value: ConstantValue


@dataclass(frozen=True, slots=True)
class TensorConstant:
    """A tensor no traced op made (built from data inside the traced function): its
    elements in row-major order, or None for a meta tensor."""

    dtype: ScalarType
    shape: tuple[int, ...]
    device: Device
    data: tuple[bool | int | float | complex, ...] | None


@dataclass(frozen=True, slots=True)
class ListOf:
    """A list argument (``Tensor[]``, ``int[]``, ...), element by element."""

    items: tuple[Value, ...]


Value = Union[InputRef, ResultRef, Constant, TensorConstant, ListOf]


@dataclass(frozen=True, slots=True)
class TensorInput:
    """A tensor input; ``dtype``, ``shape`` and ``device`` are the example's (documentation:
    the program runs on other shapes as far as its constants allow)."""

    name: str
    dtype: ScalarType
    shape: tuple[int, ...]
    device: Device


@dataclass(frozen=True, slots=True)
class ConstantInput:
    """A non-tensor input: the program is specialized to the example's ``value``."""

    name: str
    value: Value


Input = Union[TensorInput, ConstantInput]


@dataclass(frozen=True, slots=True)
class Call:
    """One op call: ``args`` has one value per schema argument, in schema order."""

    op: str  # the qualified name, "ns::name"
    overload: str
    schema: str  # the schema text the call was traced against
    args: tuple[Value, ...]
    num_outputs: int

    @property
    def full_name(self) -> str:
        return f"{self.op}.{self.overload}" if self.overload else self.op


class OutputKind(enum.Enum):
    """The shape of what the traced function returned."""

    single = "single"  # one value
    tuple = "tuple"
    list = "list"
    none = "none"  # the function returned None


# -- printing --------------------------------------------------------------------------------
_SHOWN_ELEMENTS = 6


def format_constant(value: ConstantValue) -> str:
    """A constant as the program text shows it."""
    if value is None or isinstance(value, (bool, int, float, complex, str)):
        return repr(value)
    if isinstance(value, (ScalarType, Layout, MemoryFormat)):
        return value.name
    if isinstance(value, Device):  # pyright: ignore[reportUnnecessaryIsInstance] -- a new variant reaches assert_never
        return f"device({str(value)!r})"
    assert_never(value)


def _format_tensor_constant(t: TensorConstant) -> str:
    where = "" if t.device == Device("cpu") else f", device={str(t.device)!r}"
    if t.data is None:
        return f"tensor(shape={list(t.shape)}, dtype={t.dtype.name}{where})"
    shown = ", ".join(repr(x) for x in t.data[:_SHOWN_ELEMENTS])
    more = ", ..." if len(t.data) > _SHOWN_ELEMENTS else ""
    return f"tensor([{shown}{more}], shape={list(t.shape)}, dtype={t.dtype.name}{where})"


def format_value(value: Value, input_names: tuple[str, ...]) -> str:
    """A value as the program text shows it: inputs by name, results as ``%n``/``%n.k``."""
    if isinstance(value, InputRef):
        return input_names[value.index] if value.index < len(input_names) else f"<input {value.index}>"
    if isinstance(value, ResultRef):
        return f"%{value.call}" if value.output == 0 else f"%{value.call}.{value.output}"
    if isinstance(value, Constant):
        return format_constant(value.value)
    if isinstance(value, TensorConstant):
        return _format_tensor_constant(value)
    if isinstance(value, ListOf):  # pyright: ignore[reportUnnecessaryIsInstance] -- a new variant reaches assert_never
        return "[" + ", ".join(format_value(v, input_names) for v in value.items) + "]"
    assert_never(value)
