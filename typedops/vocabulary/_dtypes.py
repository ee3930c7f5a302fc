"""The value types of the tensor layer that schemas name: dtypes, layouts, devices, scalars.

Their integer codes match PyTorch's (``ScalarType.float32.value == 6``), because
TorchScript writes enum defaults as those integers (``ScalarType dtype=6``).
"""

from __future__ import annotations

import builtins
import enum
from dataclasses import dataclass
from typing import Annotated, Final, Union

from typing_extensions import TypeAlias

from ._errors import ArgumentValueError
from ._messages import BAD_DEVICE_INDEX, NEGATIVE_DEVICE_INDEX, UNKNOWN_DEVICE_TYPE

__all__ = ["ScalarType", "PYTHON_TYPE_DTYPES", "DType", "Layout", "MemoryFormat", "Device", "Generator", "SymInt", "Scalar", "SYM_INT_MARKER"]


class ScalarType(enum.Enum):
    """Element types. Members carry PyTorch's names and codes; its short aliases work too
    (``ScalarType.long is ScalarType.int64``, ``ScalarType.float is ScalarType.float32``)."""

    uint8 = 0
    int8 = 1
    int16 = 2
    int32 = 3
    int64 = 4
    float16 = 5
    float32 = 6
    float64 = 7
    complex64 = 9
    complex128 = 10
    bool = 11
    bfloat16 = 15
    # PyTorch's aliases, as they appear in schema defaults such as 'ScalarType dtype=long'.
    byte = 0
    char = 1
    short = 2
    int = 3
    long = 4
    half = 5
    float = 6
    double = 7
    cfloat = 9
    cdouble = 10

    # Members are singletons compared by identity, so identity is a valid hash -- and
    # object's is C code, where Enum's hashes the name in Python (dtype-keyed dicts and
    # sets are on the kernels' hot paths).
    __hash__ = object.__hash__

    @property
    def is_floating_point(self) -> builtins.bool:  # 'bool' is a member here
        return self in _FLOATING

    @property
    def is_complex(self) -> builtins.bool:
        return self in (ScalarType.complex64, ScalarType.complex128)

    @property
    def itemsize(self) -> builtins.int:
        """Bytes per element."""
        return _ITEMSIZE[self]

    def __repr__(self) -> str:
        return f"typedops.{self.name}"


# Note [Python types as dtypes]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# As in torch, every dtype argument also takes Python's four number types, each naming
# the dtype that holds its values exactly: ``float`` is float64 (not ScalarType.float,
# which is float32, as torch.float is), ``int`` int64, ``bool`` bool, ``complex``
# complex128. The generated entries convert them on their slow path (``fix_arguments``
# in dispatch/_arguments.py: the fast path's test ``type(dtype) is ScalarType`` fails for
# them), ``typedops.tensor`` converts them too, and the stubs accept them (``DType`` in
# the root package). A boxed call's stack holds IValues, where a dtype is a ScalarType.
PYTHON_TYPE_DTYPES: Final[dict[type, ScalarType]] = {
    builtins.float: ScalarType.float64,
    builtins.int: ScalarType.int64,
    builtins.bool: ScalarType.bool,
    builtins.complex: ScalarType.complex128,
}

# What a dtype argument takes, for type checkers (Note [Python types as dtypes]).
DType: TypeAlias = Union[ScalarType, type[builtins.float], type[builtins.int], type[builtins.bool], type[builtins.complex]]

_FLOATING: Final = frozenset(
    {ScalarType.float16, ScalarType.bfloat16, ScalarType.float32, ScalarType.float64}
)
_ITEMSIZE: Final = {
    ScalarType.uint8: 1, ScalarType.int8: 1, ScalarType.int16: 2, ScalarType.int32: 4,
    ScalarType.int64: 8, ScalarType.float16: 2, ScalarType.bfloat16: 2,
    ScalarType.float32: 4, ScalarType.float64: 8, ScalarType.complex64: 8,
    ScalarType.complex128: 16, ScalarType.bool: 1,
}  # fmt: skip


class Layout(enum.Enum):
    """How a tensor's elements are stored."""

    strided = 0
    sparse_coo = 1


class MemoryFormat(enum.Enum):
    """The order in which a dense tensor's dimensions are laid out in memory."""

    contiguous_format = 0
    preserve_format = 1
    channels_last = 2
    channels_last_3d = 3


_DEVICE_TYPES: Final = ("cpu", "meta", "privateuseone")


@dataclass(frozen=True, slots=True)
class Device:
    """Where a tensor lives: ``Device("cpu")``, ``Device("meta")``, ``Device.parse("cpu:0")``."""

    type: str
    index: int | None = None

    def __post_init__(self) -> None:
        if self.type not in _DEVICE_TYPES:
            raise ArgumentValueError(UNKNOWN_DEVICE_TYPE.format(type=self.type, types=", ".join(_DEVICE_TYPES)))
        if self.index is not None and self.index < 0:
            raise ArgumentValueError(NEGATIVE_DEVICE_INDEX.format(index=self.index))

    @classmethod
    def parse(cls, spec: str | Device) -> Device:
        """A device from ``"cpu"``, ``"meta"``, ``"cpu:0"`` (or a Device). A device type
        without an index gives that type's canonical device (Note [Canonical devices])."""
        if isinstance(spec, Device):
            return _CANONICAL.get(spec.type, spec) if spec.index is None and type(spec) is Device else spec
        found = _CANONICAL.get(spec) if cls is Device else None
        if found is not None:
            return found
        kind, sep, index = spec.partition(":")
        if sep and not index.isdigit():
            raise ArgumentValueError(BAD_DEVICE_INDEX.format(spec=spec))
        return cls(kind, int(index) if sep else None)

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"


# Note [Canonical devices]
# ~~~~~~~~~~~~~~~~~~~~~~~~
# Each device type without an index has one canonical Device object, which
# ``Device.parse`` returns for ``"cpu"`` and for any ``Device("cpu")`` (so a factory given
# ``device="cpu"`` or ``device=Device("cpu")`` makes a tensor on it):
# the tensor layer's constructors recognise the CPU device by identity (``device is
# CPU``, a cheaper test than the dict lookup of its key bits), and a device equal but
# not identical to it would miss that shortcut on every op of its tensors. ``Device(...)``
# itself still makes a new object (a frozen dataclass; equal devices compare equal),
# which takes the slower path to the same key bits until something parses it.
_CANONICAL: Final[dict[str, Device]] = {kind: Device(kind) for kind in _DEVICE_TYPES}


class Generator:
    """A random number generator, as schema type ``Generator`` names it (PyTorch's
    ``torch.Generator``). typedops has no generators of its own yet: the class types
    ``Generator?`` arguments (in signatures, schema inference and generated stubs) and a
    kernel that takes one decides what it means; a call does not check the value.
    """

    __slots__ = ()


class _SymIntMarker:
    """Marks ``SymInt`` inside ``Annotated`` so schema inference tells it from ``int``."""

    def __repr__(self) -> str:
        return "SymInt"


SYM_INT_MARKER: Final = _SymIntMarker()

# A size that may become symbolic. For type checkers it is an int (callers pass ints);
# schema inference reads the marker and writes 'SymInt'.
SymInt: TypeAlias = Annotated[int, SYM_INT_MARKER]

# Any Python number an op takes as 'Scalar'. bool is listed for readers: it is an int.
Scalar: TypeAlias = Union[bool, int, float, complex]
