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
import math
from dataclasses import dataclass, fields
from collections.abc import Sequence
from typing import Any, Final, Union, cast

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
    "same_value",
    "same_constant",
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
    """A value fixed when the program was traced; equal to another of the same type and
    value, NaN to NaN and -0.0 not to 0.0 (Note [Constants are the same when eager is])."""

    value: ConstantValue

    def __eq__(self, other: object) -> bool:
        return type(other) is Constant and same_value(self.value, other.value)

    def __hash__(self) -> int:
        value = self.value
        if type(value) is float or type(value) is complex:
            return hash((type(value), repr(value)))  # repr: 'nan' for every NaN, '-0.0' apart from '0.0'
        return hash((type(value), value))


# Note [Constants are the same when eager is]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# Two constants are the same -- in ``Program`` equality, and when a program checks a
# constant input against the value it was traced with -- when the function would compute
# the same with either: of one type (``1``, ``1.0`` and ``True`` differ), equal, a NaN
# the same as a NaN (so a program traced with ``float('nan')`` runs with it, and loads
# equal to itself), ``-0.0`` not the same as ``0.0`` (``1 / x`` tells them apart). A
# tensor constant compares its bytes (Note [Tensor constants are bytes]).
def _same_float(a: float, b: float) -> bool:
    if a != a:  # NaN
        return b != b
    return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)


def same_value(a: object, b: object) -> bool:
    """Whether constant values ``a`` and ``b`` are the same (Note [Constants are the same when eager is])."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float) and isinstance(b, float):
        return _same_float(a, b)
    if isinstance(a, complex) and isinstance(b, complex):
        return _same_float(a.real, b.real) and _same_float(a.imag, b.imag)
    return bool(a == b)


def same_constant(given: object, traced: object) -> bool:
    """Whether ``given``, a constant input, is the ``traced`` value (a list: a list or tuple
    of the same items) the program is specialized to."""
    if isinstance(traced, list):
        if not isinstance(given, (list, tuple)):
            return False
        items = cast("Sequence[object]", given)
        expected = cast("list[object]", traced)
        return len(items) == len(expected) and all(same_constant(g, t) for g, t in zip(items, expected))
    return same_value(given, traced)


@dataclass(frozen=True, slots=True)
class TensorConstant:
    """A tensor no traced op made (built from data inside the traced function): its
    elements as raw bytes -- row-major, little-endian, in the numpy dtype that stores
    ``dtype`` -- or None for a meta tensor (Note [Tensor constants are bytes])."""

    dtype: ScalarType
    shape: tuple[int, ...]
    device: Device
    data: bytes | None
    wrapped: bool = False  # a Python number an op call wrapped (Note [Wrapped numbers in programs])

    def elements(self) -> Any:
        """The elements as a read-only numpy array of ``shape`` (a view of ``data``, no
        copy); raises ``ArgumentError`` for a dtype without storage, ``ValueError`` when
        ``data`` does not hold ``shape``'s elements."""
        assert self.data is not None
        import numpy as np

        dtype = storage_dtype(self.dtype)
        return np.frombuffer(self.data, dtype=dtype).reshape(self.shape)

    @classmethod
    def quick(cls, dtype: ScalarType, shape: tuple[int, ...], device: Device, data: bytes | None,
              wrapped: bool = False) -> TensorConstant:  # fmt: skip
        """``TensorConstant(dtype, shape, device, data, wrapped)``, made faster (Note [Quick construction])."""
        made = _new(cls)
        set_dtype, set_shape, set_device, set_data, set_wrapped = _TENSOR_CONSTANT_SLOTS
        set_dtype(made, dtype)
        set_shape(made, shape)
        set_device(made, device)
        set_data(made, data)
        set_wrapped(made, wrapped)
        return made


# Note [Quick construction]
# ~~~~~~~~~~~~~~~~~~~~~~~~~
# A frozen dataclass's ``__init__`` sets each field with ``object.__setattr__(self, name,
# value)`` -- a lookup of the field's slot by name per field -- after the class call. A
# reader makes a ``TensorConstant`` per tensor and a ``Call`` per call, so ``quick``
# makes the same object with ``object.__new__`` and each slot's own descriptor setter,
# found once at import. The object is the one ``__init__`` would make: the same class,
# the same fields (so equal, with the same hash and repr, and frozen: assigning a field
# still raises ``FrozenInstanceError``); tests/test_tracing.py checks it.
_new: Final = object.__new__


def _slot_setters(cls: type[object], names: tuple[str, ...]) -> tuple[Any, ...]:
    """The ``__set__`` of each named slot of ``cls`` (a frozen dataclass with slots), in order."""
    assert tuple(f.name for f in fields(cast(Any, cls))) == names, "a field was added: update its quick()"
    return tuple(cls.__dict__[name].__set__ for name in names)


_TENSOR_CONSTANT_SLOTS: Final = _slot_setters(TensorConstant, ("dtype", "shape", "device", "data", "wrapped"))


# Note [Wrapped numbers in programs]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# A Python number passed where an op takes a ``Tensor`` (``a * 2.5``) reaches the op as a
# *wrapped number*: a 0-dim tensor (float64, int64, complex128 or bool) that promotes as
# the default dtype of its kind, so an int64 tensor times 2.5 is float32, not float64. A
# trace records it as a ``TensorConstant`` with ``wrapped=True``; running the program
# makes it a wrapped number again, so the program promotes as the function did. The file
# format carries the flag (version 4: the ``wrapped`` list of tensor-table rows); the
# listing shows it as ``wrapped(2.5)``.


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

    @classmethod
    def quick(cls, op: str, overload: str, schema: str, args: tuple[Value, ...], num_outputs: int) -> Call:
        """``Call(op, overload, schema, args, num_outputs)``, made faster (Note [Quick construction])."""
        made = _new(cls)
        set_op, set_overload, set_schema, set_args, set_outputs = _CALL_SLOTS
        set_op(made, op)
        set_overload(made, overload)
        set_schema(made, schema)
        set_args(made, args)
        set_outputs(made, num_outputs)
        return made


_CALL_SLOTS: Final = _slot_setters(Call, ("op", "overload", "schema", "args", "num_outputs"))


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
    if t.wrapped and t.data is not None and not t.shape and not where:
        try:
            number: object = t.elements().item()
        except (TypedopsError, ValueError):  # a Program made by hand may hold any bytes
            number = None
        if number is not None:
            return f"wrapped({number!r})"
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
