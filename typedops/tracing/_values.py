"""The pieces of a ``Program``: values, inputs and op calls (frozen dataclasses).

Note [Programs are data]
~~~~~~~~~~~~~~~~~~~~~~~~
A program holds no Python callables and no tensors: each call names its op by qualified
name and overload and keeps the schema text it was traced against; each argument is a
``Value`` -- a graph input, an earlier call's result, a constant (None, a number, a
string, a dtype, a layout, a memory format, a device), a tensor constant (dtype, shape,
device and its elements as bytes) or a list of values. So a program can be printed,
compared, checked against the schemas registered now, saved and loaded (issue 16)
without running anything from the file; running it looks every op up by name and calls
it boxed, so the dispatcher checks every value again.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from collections.abc import Sequence
from typing import Any, Union

from typing_extensions import assert_never

from ..vocabulary import Device, Layout, MemoryFormat, ScalarType, TypedopsError

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
    "storage_dtype",
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
    elements as raw bytes -- row-major, little-endian, in the numpy dtype that stores
    ``dtype`` -- or None for a meta tensor (Note [Tensor constants are bytes])."""

    dtype: ScalarType
    shape: tuple[int, ...]
    device: Device
    data: bytes | None

    def elements(self) -> Any:
        """The elements as a read-only numpy array of ``shape`` (a view of ``data``, no
        copy); raises ``ArgumentError`` for a dtype without storage, ``ValueError`` when
        ``data`` does not hold ``shape``'s elements."""
        assert self.data is not None
        import numpy as np

        dtype = storage_dtype(self.dtype)
        return np.frombuffer(self.data, dtype=dtype).reshape(self.shape)


# Note [Tensor constants are bytes]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# A tensor constant's elements are one immutable ``bytes``, exactly what the ``.npy``
# entry of a saved program holds after its header: tracing copies the tensor's array
# once (``tobytes``), saving writes the bytes, loading slices them out of the entry, and
# a run's tensor is one numpy copy of them. No step makes a Python object per element
# (a tuple of numbers cost ~85 us per load of a small MLP). Equality and hashing are by
# value, bit for bit (so -0.0 and 0.0, or two NaNs of different payloads, differ: what
# the file would hold differs); the printout decodes the first few elements.
_STORAGE: dict[ScalarType, Any] = {}


def storage_dtype(dtype: ScalarType) -> Any:
    """The numpy dtype, little-endian, a tensor constant of ``dtype`` stores its elements
    in; raises ``ArgumentError`` for a dtype without storage (bfloat16)."""
    found = _STORAGE.get(dtype)
    if found is None:
        from ..tensor import numpy_dtype

        spec: str = numpy_dtype(dtype).str
        import numpy as np

        found = _STORAGE[dtype] = np.dtype(spec.replace(">", "<"))
    return found


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

    def pack(self, outputs: Sequence[Any]) -> Any:
        """What the traced function returned, rebuilt from the program's ``outputs``."""
        if self is OutputKind.single:
            return outputs[0]
        if self is OutputKind.tuple:
            return tuple(outputs)
        if self is OutputKind.list:
            return outputs
        if self is OutputKind.none:
            return None
        assert_never(self)


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
    try:
        dtype = storage_dtype(t.dtype)
    except TypedopsError:
        return f"tensor(<{len(t.data)} bytes>, shape={list(t.shape)}, dtype={t.dtype.name}{where})"
    import numpy as np

    count = len(t.data) // dtype.itemsize
    head: list[object] = np.frombuffer(t.data, dtype=dtype, count=min(count, _SHOWN_ELEMENTS)).tolist()
    shown = ", ".join(repr(x) for x in head)
    more = ", ..." if count > _SHOWN_ELEMENTS else ""
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
