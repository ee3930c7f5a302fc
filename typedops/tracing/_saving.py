"""Writing a ``Program`` to a file: the program format's encoder (docs/programs.md, "Format").

Note [The program file format]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
A saved program is a zip archive of data only: ``program.json``, a manifest in plain JSON,
and ``tensors.bin``, the raw elements of every tensor constant that has elements, each at
a multiple of 64 bytes in table order (versions 2 and 3; version 1 had one
``tensors/<k>.npy`` per constant). The manifest holds the format's name and version, the
table of ops the program calls (each with the schema text its calls were traced
against), the inputs, the table of tensor constants (dtype, shape, device and where their
elements are), the calls (each naming its op by index into the op table), the outputs and
the output kind.

Version 3 (what ``save`` writes) numbers every value a call can take -- the inputs, then
the tensor constants, then the constants (a table of their own, each once), then each
call's results as the calls make them -- and writes a call as one flat JSON array of
integers, ``[op, outputs, argument...]``, an argument being a value's number or, for a
list argument, a JSON array of values. Rows of the other tables are arrays too. So the
manifest has one JSON object (the top), and a reader makes no Python object per argument
(Note [Numbered values] in typedops/programs/_fast.py). A constant is JSON's null, a
bool, an int, a finite float or a string, or a one-key object for what JSON has no
literal for (``{"float": "nan"}``, ``{"complex": [re, im]}``, ``{"dtype": "float32"}``,
``{"layout": ...}``, ``{"memory_format": ...}``, ``{"device": "cpu"}``).

Version 4 is version 3 with one more top-level field, ``wrapped``: the rows of the tensor
table that are wrapped numbers (Note [Wrapped numbers in programs] in _values.py); a
program holding one cannot be written in an earlier version.

Versions 1 and 2 (``write_program(..., version=1 or 2)`` still writes them) wrote each
row as an object and each value as a one-key object: ``{"input": i}``, ``{"result":
[call, output]}``, ``{"tensor": k}``, ``{"list": [...]}`` or ``{"const": c}``.

This writer lives beside ``Program`` so that ``Program.save`` needs no import from the
layer above (docs/architecture.md, "Seams by registration" and what follows it); the
reader -- which trusts nothing, caps every size and checks every reference -- is
``typedops.programs``, above. tests/test_programs_format.py holds the two together with a
round-trip property over traced programs. Every change to what is written bumps
``FORMAT_VERSION``.
"""

from __future__ import annotations

import io
import json
import keyword
import math
import os
import zipfile
from typing import IO, TYPE_CHECKING, Any, Final, NoReturn

from typing_extensions import assert_never

from ..vocabulary import Device, Layout, MemoryFormat, ScalarType, TypedopsError
from . import _messages as msg
from ._values import (
    Call,
    Constant,
    ConstantInput,
    ConstantValue,
    Input,
    InputRef,
    ListOf,
    ResultRef,
    TensorConstant,
    TensorInput,
    Value,
    storage_dtype,
)

if TYPE_CHECKING:
    import numpy as np

    from ._program import Program

__all__ = ["FORMAT_NAME", "FORMAT_VERSION", "MANIFEST_ENTRY", "TENSOR_DATA_ENTRY", "TENSOR_ALIGNMENT",
           "MAX_INPUT_NAME", "tensor_entry", "aligned", "little_endian", "input_name_problem", "write_program"]  # fmt: skip

FORMAT_NAME: Final = "typedops.program"
FORMAT_VERSION: Final = 4
MANIFEST_ENTRY: Final = "program.json"
TENSOR_DATA_ENTRY: Final = "tensors.bin"  # versions 2 and 3: every tensor constant's elements
TENSOR_ALIGNMENT: Final = 64  # versions 2 and 3: each constant's elements start at a multiple of this in TENSOR_DATA_ENTRY
# Entries carry a fixed time stamp, so one program always makes the same bytes.
_EPOCH: Final = (1980, 1, 1, 0, 0, 0)

JSONValue = Any  # what json.dumps takes: dicts, lists, str, int, float, bool, None
MAX_INPUT_NAME: Final = 256  # an input's name: a Python identifier, as tracing takes it from a parameter


def input_name_problem(name: str, seen: set[str]) -> str | None:
    """Why ``name`` cannot name an input in a program file whose earlier inputs are named
    ``seen`` (None: it can, and it is added to ``seen``). The writer and the reader
    (``typedops.programs``) both ask this, so a file ``save`` writes is one ``load`` reads."""
    shown = name if len(name) <= 120 else name[:117] + "..."  # a name from a file may be megabytes long
    if len(name) > MAX_INPUT_NAME or not name.isidentifier() or keyword.iskeyword(name):
        return msg.BAD_INPUT_NAME.format(name=shown, limit=MAX_INPUT_NAME)
    if name in seen:
        return msg.DUPLICATE_INPUT.format(name=shown)
    seen.add(name)
    return None


def tensor_entry(index: int) -> str:
    """The archive entry holding the elements of tensor constant ``index`` (version 1)."""
    return f"tensors/{index}.npy"


def aligned(offset: int) -> int:
    """``offset`` rounded up to a multiple of ``TENSOR_ALIGNMENT``: where the next tensor
    constant's elements start in ``TENSOR_DATA_ENTRY`` (versions 2 and 3)."""
    return -(-offset // TENSOR_ALIGNMENT) * TENSOR_ALIGNMENT


def little_endian(dtype: Any) -> np.dtype[Any]:
    """numpy ``dtype`` in the byte order the format stores: little-endian."""
    import numpy as np

    spec: str = dtype.str
    return np.dtype(spec.replace(">", "<"))


class _Encoder:
    """Collects the op table and the tensor table while it encodes values and calls."""

    def __init__(self, version: int) -> None:
        self.version = version
        self.ops: dict[tuple[str, str, str], int] = {}
        self.tensors: list[TensorConstant] = []
        self.elements: list[bytes | None] = []  # per row: its elements, raw (2) or as .npy (1); None: none
        self._by_id: dict[int, int] = {}  # id(TensorConstant) -> its row
        self._by_content: dict[TensorConstant, int] = {}  # equal by value -> its row

    def tensor(self, t: TensorConstant) -> int:
        """The row of ``t`` in the tensor table: one row per distinct constant (equal bit
        for bit; the recorder makes a new constant each time a tensor it does not know is
        used)."""
        row = self._by_id.get(id(t))
        if row is None:
            row = self._by_content.setdefault(t, len(self.tensors))
            if row == len(self.tensors):
                self.tensors.append(t)
                self.elements.append(None if t.data is None else _npy(t) if self.version == 1 else _raw(t))
            self._by_id[id(t)] = row
        return row

    def op(self, call: Call) -> int:
        key = (call.op, call.overload, call.schema)
        return self.ops.setdefault(key, len(self.ops))

    def value(self, value: Value) -> JSONValue:
        match value:
            case InputRef():
                return {"input": value.index}
            case ResultRef():
                return {"result": [value.call, value.output]}
            case Constant():
                return {"const": _constant(value.value)}
            case TensorConstant():
                return {"tensor": self.tensor(value)}
            case ListOf():
                return {"list": [self.value(v) for v in value.items]}
            case _:
                assert_never(value)

    def input(self, spec: Input) -> JSONValue:
        match spec:
            case TensorInput():
                dtype, shape, device = spec.dtype.name, list(spec.shape), str(spec.device)
                return {"kind": "tensor", "name": spec.name, "dtype": dtype, "shape": shape, "device": device}
            case ConstantInput():
                return {"kind": "constant", "name": spec.name, "value": self.value(spec.value)}
            case _:
                assert_never(spec)


def _float(value: float) -> JSONValue:
    return value if math.isfinite(value) else {"float": repr(value)}  # 'nan', 'inf', '-inf'


def _constant(value: ConstantValue) -> JSONValue:
    if value is None or type(value) in (bool, int, str):
        return value
    if type(value) is float:
        return _float(value)
    if type(value) is complex:
        return {"complex": [_float(value.real), _float(value.imag)]}
    if isinstance(value, ScalarType):
        return {"dtype": value.name}
    if isinstance(value, Layout):
        return {"layout": value.name}
    if isinstance(value, MemoryFormat):
        return {"memory_format": value.name}
    if isinstance(value, Device):
        return {"device": str(value)}
    raise msg.ProgramError(msg.CANNOT_SAVE.format(problem=msg.NOT_SAVABLE.format(kind=type(value).__name__)))


def _check_input_names(program: Program) -> None:
    names: set[str] = set()
    for index, spec in enumerate(program.inputs):
        problem = input_name_problem(spec.name, names)
        if problem is not None:
            raise msg.ProgramError(msg.CANNOT_SAVE.format(problem=msg.SAVED_INPUT.format(index=index, problem=problem)))


def _manifest(encoder: _Encoder, program: Program) -> JSONValue:
    """The manifest of versions 1 and 2."""
    _check_input_names(program)
    inputs = [encoder.input(spec) for spec in program.inputs]
    calls = [
        {"op": encoder.op(call), "args": [encoder.value(v) for v in call.args], "outputs": call.num_outputs}
        for call in program.calls
    ]
    outputs = [encoder.value(v) for v in program.outputs]
    if any(t.wrapped for t in encoder.tensors):
        raise msg.ProgramError(msg.CANNOT_SAVE.format(problem=msg.WRAPPED_NEEDS_4.format(version=encoder.version)))
    kind = program.output_kind
    return {
        "format": FORMAT_NAME,
        "version": encoder.version,
        "ops": [{"name": name, "overload": overload, "schema": schema} for name, overload, schema in encoder.ops],
        "inputs": inputs,
        "calls": calls,
        "outputs": outputs,
        "output_kind": kind.value,
        "tensors": _tensor_rows(encoder),
    }


def _tensor_rows(encoder: _Encoder) -> list[JSONValue]:
    rows: list[JSONValue] = []
    end = 0  # versions 2 and 3: where the elements so far end in TENSOR_DATA_ENTRY
    for index, (t, data) in enumerate(zip(encoder.tensors, encoder.elements)):
        row: dict[str, JSONValue] = {"dtype": t.dtype.name, "shape": list(t.shape), "device": str(t.device)}
        if encoder.version == 1:
            row["data"] = None if data is None else tensor_entry(index)
        else:
            row["offset"] = None if data is None else aligned(end)
            end = end if data is None else aligned(end) + len(data)
        rows.append(row)
    return rows


class _Numbered:
    """Version 3: every value a call can take numbered -- the inputs, the tensor constants,
    the constants, then the calls' results in order (Note [The program file format])."""

    def __init__(self, encoder: _Encoder, program: Program) -> None:
        self.encoder = encoder
        self.program = program
        self.constants: dict[tuple[type[object], str], int] = {}
        self.rows: list[JSONValue] = []  # the constants table
        for value in _values(program):
            self.collect(value)
        self.constants_start = len(program.inputs) + len(encoder.tensors)
        self.results: list[int] = []  # per call, the number of its first result
        number = self.constants_start + len(self.rows)
        for call in program.calls:
            self.results.append(number)
            number += call.num_outputs

    def collect(self, value: Value) -> None:
        """Give ``value``'s tensor constants and constants their rows."""
        match value:
            case TensorConstant():
                self.encoder.tensor(value)
            case Constant():
                self.constant(value.value)
            case ListOf():
                for item in value.items:
                    self.collect(item)
            case InputRef() | ResultRef():
                pass
            case _:
                assert_never(value)

    def constant(self, value: ConstantValue) -> int:
        """The row of constant ``value`` (one per value, told apart by type: 1, 1.0 and True differ)."""
        encoded = _constant(value)
        key = (type(value), json.dumps(encoded, allow_nan=False))
        row = self.constants.setdefault(key, len(self.rows))
        if row == len(self.rows):
            self.rows.append(encoded)
        return row

    def number(self, value: Value, before: int) -> JSONValue:
        """``value``'s number (a list: a list of them), for call number ``before`` (-1: a
        constant input; the number of calls: an output)."""
        match value:
            case InputRef():
                if not 0 <= value.index < len(self.program.inputs):
                    self.refuse(before, f"input {value.index}")
                return value.index
            case ResultRef():
                call, output = value.call, value.output
                if not (0 <= call < before and 0 <= output < self.program.calls[call].num_outputs):
                    self.refuse(before, f"result {output} of call {call}")
                return self.results[call] + output
            case TensorConstant():
                return len(self.program.inputs) + self.encoder.tensor(value)
            case Constant():
                return self.constants_start + self.constant(value.value)
            case ListOf():
                return [self.number(v, before) for v in value.items]
            case _:
                assert_never(value)

    def refuse(self, before: int, what: str) -> NoReturn:
        where = "a constant input" if before < 0 else "an output" if before == len(self.program.calls) else f"call %{before}"
        raise msg.ProgramError(msg.CANNOT_SAVE.format(problem=msg.SAVED_REFERENCE.format(where=where, what=what)))


def _values(program: Program) -> list[Value]:
    """Every value of ``program``, in the order the manifest holds them."""
    found = [spec.value for spec in program.inputs if isinstance(spec, ConstantInput)]
    for call in program.calls:
        found += call.args
    return found + list(program.outputs)


def _manifest_3(encoder: _Encoder, program: Program) -> JSONValue:
    """The manifest of versions 3 and 4 (4 adds ``wrapped``: Note [Wrapped numbers in programs])."""
    _check_input_names(program)
    numbered = _Numbered(encoder, program)
    wrapped = [row for row, t in enumerate(encoder.tensors) if t.wrapped]
    if wrapped and encoder.version < 4:
        raise msg.ProgramError(msg.CANNOT_SAVE.format(problem=msg.WRAPPED_NEEDS_4.format(version=encoder.version)))
    inputs: list[JSONValue] = []
    for spec in program.inputs:
        match spec:
            case TensorInput():
                inputs.append(["tensor", spec.name, spec.dtype.name, list(spec.shape), str(spec.device)])
            case ConstantInput():
                inputs.append(["constant", spec.name, numbered.number(spec.value, -1)])
            case _:
                assert_never(spec)
    calls: list[JSONValue] = []
    for index, call in enumerate(program.calls):
        calls.append([encoder.op(call), call.num_outputs, *(numbered.number(v, index) for v in call.args)])
    manifest: dict[str, JSONValue] = {
        "format": FORMAT_NAME,
        "version": encoder.version,
        "ops": [[name, overload, schema] for name, overload, schema in encoder.ops],
        "inputs": inputs,
        "tensors": [[row["dtype"], row["shape"], row["device"], row["offset"]] for row in _tensor_rows(encoder)],
        "constants": numbered.rows,
        "calls": calls,
        "outputs": [numbered.number(v, len(program.calls)) for v in program.outputs],
        "output_kind": program.output_kind.value,
    }
    if encoder.version >= 4:
        manifest["wrapped"] = wrapped
    return manifest


def _raw(t: TensorConstant) -> bytes:
    """A tensor constant's elements as ``TENSOR_DATA_ENTRY`` holds them (little-endian, C order)."""
    _npy_dtype(t)
    assert t.data is not None
    return t.data


def _npy(t: TensorConstant) -> bytes:
    """The ``.npy`` bytes of a tensor constant's elements (little-endian, C order)."""
    import numpy as np

    assert t.data is not None
    array = np.frombuffer(t.data, dtype=_npy_dtype(t)).reshape(t.shape)
    out = io.BytesIO()
    np.lib.format.write_array(out, array, allow_pickle=False)
    return out.getvalue()


def _npy_dtype(t: TensorConstant) -> np.dtype[Any]:
    """The numpy dtype of ``t``'s stored elements, refusing a dtype without storage or
    elements of the wrong length."""
    assert t.data is not None
    try:
        dtype: np.dtype[Any] = storage_dtype(t.dtype)
    except TypedopsError:
        raise msg.ProgramError(msg.CANNOT_SAVE.format(problem=msg.NO_STORAGE.format(dtype=t.dtype.name))) from None
    expected = math.prod(t.shape) * dtype.itemsize
    if len(t.data) != expected:
        problem = msg.DATA_LENGTH.format(size=len(t.data), shape=list(t.shape), dtype=t.dtype.name, expected=expected)
        raise msg.ProgramError(msg.CANNOT_SAVE.format(problem=problem))
    return dtype


def _entry(name: str, compress: int) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=_EPOCH)
    info.compress_type = compress
    info.external_attr = 0o644 << 16
    return info


def write_program(program: Program, file: str | os.PathLike[str] | IO[bytes], version: int = FORMAT_VERSION) -> None:
    """Write ``program`` to ``file``, a path or a binary file open for writing, in format
    ``version`` (``FORMAT_VERSION``, or 1 to 3: what a typedops that reads only those loads;
    they cannot hold a wrapped number, Note [Wrapped numbers in programs])."""
    if version not in (1, 2, 3, 4):
        raise msg.ProgramError(msg.CANNOT_SAVE.format(problem=msg.NO_SUCH_VERSION.format(version=version)))
    encoder = _Encoder(version)
    manifest = _manifest_3(encoder, program) if version >= 3 else _manifest(encoder, program)
    text = json.dumps(manifest, allow_nan=False, separators=(",", ":"))
    with zipfile.ZipFile(file, "w") as archive:  # everything is encoded before the file is touched
        # Every entry is stored, not compressed: loading reads the bytes as they are.
        archive.writestr(_entry(MANIFEST_ENTRY, zipfile.ZIP_STORED), text.encode("ascii"))
        if version >= 2:
            if any(data is not None for data in encoder.elements):
                archive.writestr(_entry(TENSOR_DATA_ENTRY, zipfile.ZIP_STORED), _tensor_data(encoder.elements))
            return
        for index, data in enumerate(encoder.elements):
            if data is None:
                continue
            archive.writestr(_entry(tensor_entry(index), zipfile.ZIP_STORED), data)


def _tensor_data(elements: list[bytes | None]) -> bytes:
    """``TENSOR_DATA_ENTRY``: the elements in table order, each at a multiple of
    ``TENSOR_ALIGNMENT``, zeros between them."""
    out = bytearray()
    for data in elements:
        if data is not None:
            out += bytes(aligned(len(out)) - len(out))
            out += data
    return bytes(out)
