"""Decoding a program file's manifest (``program.json``) into a ``Program``, trusting nothing.

Every field's JSON type and range is checked, and every reference (to an input, an
earlier call's result, an op of the op table, a tensor constant) before it is used; the
first problem found is raised as ``ProgramFormatError`` naming where it is
(``calls[3].args[1]``) and what is wrong. The layout is Note [The program file format]
in tracing/_saving.py; docs/programs.md has the table of fields. A version 3 manifest's
tables go through here too; its inputs, constants, calls and outputs through _numbered.py.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, NamedTuple, NoReturn, TypeVar

from typing_extensions import TypeGuard

from ..vocabulary import ArgumentValueError, Device, Layout, MemoryFormat, ScalarType, TypedopsError
from ..tensor import numpy_dtype
from ..tracing import (
    FORMAT_NAME,
    FORMAT_VERSION,
    Call,
    Constant,
    ConstantInput,
    Input,
    InputRef,
    ListOf,
    OutputKind,
    Program,
    TENSOR_DATA_ENTRY,
    ResultRef,
    TensorConstant,
    TensorInput,
    Value,
    aligned,
    input_name_problem,
    little_endian,
    tensor_entry,
)
from . import _messages as msg
from ._archive import Limits

__all__ = ["OpEntry", "TensorEntry", "Decoder", "parse_manifest", "shorten"]

_E = TypeVar("_E")
_TOP_KEYS: Final = ("format", "version", "ops", "inputs", "calls", "outputs", "output_kind", "tensors")
_TOP_KEYS_3: Final = ("format", "version", "ops", "inputs", "tensors", "constants", "calls", "outputs", "output_kind")
_TOP_KEYS_4: Final = (*_TOP_KEYS_3, "wrapped")  # Note [Wrapped numbers in programs] in tracing/_values.py
# Where a row's fields are named: by key (versions 1 and 2: rows are objects), by position (3: arrays).
_TENSOR_PLACES: Final = (".dtype", ".shape", ".device", ".data")
_TENSOR_PLACES_2: Final = (".dtype", ".shape", ".device", ".offset")
_TENSOR_PLACES_3: Final = ("[0]", "[1]", "[2]", "[3]")
_MAX_DIMS: Final = 64  # numpy's limit
_MAX_DIM: Final = 2**63 - 1
_MAX_RESULTS: Final = 2**16
_DTYPES: Final = {member.name: member for member in ScalarType}  # canonical names, no aliases
_LAYOUTS: Final = {member.name: member for member in Layout}
_MEMORY_FORMATS: Final = {member.name: member for member in MemoryFormat}
_KINDS: Final = {member.value: member for member in OutputKind}
_NON_FINITE: Final = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}
_VALUE_KEYS: Final = "input, result, tensor, list or const"
_MISSING: Final = object()
_LITERALS: Final = (bool, int, str)  # constants JSON holds as they are (None, and finite floats, too)
_DEVICES: Final = {spec: Device.parse(spec) for spec in ("cpu", "meta", "privateuseone")}  # the usual ones
_STORAGE: dict[ScalarType, Any] = {}  # dtype -> the numpy dtype of its elements in a file
_KEY_SETS: dict[tuple[str, ...], frozenset[str]] = {}  # the keys an object must have, as a set


_TENSOR_ROW: Final = ("dtype", "shape", "device", "data")
_TENSOR_KEYS: Final = frozenset(_TENSOR_ROW)
_TENSOR_ROW_2: Final = ("dtype", "shape", "device", "offset")  # version 2
_TENSOR_KEYS_2: Final = frozenset(_TENSOR_ROW_2)
_CALL_KEYS: Final = frozenset(("op", "args", "outputs"))
_OP_KEYS: Final = frozenset(("name", "overload", "schema"))


def _quick_shape(x: Any) -> tuple[int, ...] | None:
    """``x`` as a shape when it is a correct one (what ``Decoder.shape`` accepts), else None."""
    if not (_is_list(x) and len(x) <= _MAX_DIMS):
        return None
    for n in x:
        if type(n) is not int or not 0 <= n <= _MAX_DIM:
            return None
    return tuple(x)


_STORED: dict[str, tuple[ScalarType, Any, int]] = {}  # dtype name -> (dtype, storage, item size)


def _stored(name: str) -> tuple[ScalarType, Any, int] | None:
    """The dtype named ``name``, the numpy dtype of its elements in a file and its item
    size, when it has storage (by name: an enum member's hash is a Python call)."""
    found = _STORED.get(name)
    if found is None:
        dtype = _DTYPES.get(name)
        if dtype is None:
            return None
        try:
            storage = little_endian(numpy_dtype(dtype))
        except TypedopsError:
            return None
        found = _STORED[name] = (dtype, storage, dtype.itemsize)
    return found


def _quick_tensor_row(row: Any, index: int, limit: int) -> tuple[TensorEntry, int] | None:
    """Row ``index`` of the tensor table and its bytes, when it is a correct row with
    elements of at most ``limit`` bytes, else None (Note [The manifest's quick path])."""
    if row.__class__ is not dict or row.keys() != _TENSOR_KEYS:
        return None
    name: Any = row["dtype"]
    stored = _stored(name) if type(name) is str else None
    shape = _quick_shape(row["shape"])
    device: Any = row["device"]
    device = _DEVICES.get(device) if type(device) is str else None
    data: Any = row["data"]
    if stored is None or shape is None or device is None or type(data) is not str or data != tensor_entry(index):
        return None
    dtype, storage, itemsize = stored
    size = math.prod(shape) * itemsize
    return (TensorEntry(dtype, shape, device, data, storage), size) if size <= limit else None


def shorten(text: object, limit: int = 120) -> str:
    """``text`` for a message: a string from the file may be megabytes long."""
    text = str(text)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _is_object(x: object) -> TypeGuard[dict[str, Any]]:
    return isinstance(x, dict)


def _is_list(x: object) -> TypeGuard[list[Any]]:
    return isinstance(x, list)


def _row_kind(x: object) -> str:
    return f"a list of {len(x)} item(s)" if _is_list(x) else _json_kind(x)


def _json_kind(x: object) -> str:
    if x is None:
        return "null"
    if isinstance(x, bool):
        return f"the bool {str(x).lower()}"
    if isinstance(x, (int, float)):
        text = repr(x)
        return f"the number {text if len(text) <= 24 else text[:21] + '...'}"
    if isinstance(x, str):
        return f"the string {x[:40]!r}" + ("..." if len(x) > 40 else "")
    return "a list" if isinstance(x, list) else "an object"


def parse_manifest(data: bytes, source: str) -> Any:
    """``program.json``'s bytes as JSON: UTF-8, no NaN or Infinity literals, no key twice."""

    def refuse_literal(literal: str) -> NoReturn:
        problem = msg.NOT_FINITE.format(literal=literal)
        raise msg.ProgramFormatError(msg.BAD_FIELD.format(source=source, where="program.json", problem=problem),
                                     "program.json", problem)  # fmt: skip

    def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        found = dict(pairs)
        if len(found) != len(pairs):
            key = next(k for i, (k, _) in enumerate(pairs) if k in dict(pairs[:i]))
            problem = msg.DUPLICATE_KEY.format(key=shorten(key))
            raise msg.ProgramFormatError(msg.BAD_FIELD.format(source=source, where="program.json", problem=problem),
                                         "program.json", problem)  # fmt: skip
        return found

    try:
        return json.loads(data.decode("utf-8"), parse_constant=refuse_literal, object_pairs_hook=unique_keys)
    except msg.ProgramFormatError:
        raise
    except RecursionError:
        problem = msg.TOO_DEEP
    except ValueError as error:  # JSONDecodeError, UnicodeDecodeError, an int of too many digits
        problem = msg.NOT_JSON.format(detail=str(error)[:200])
    raise msg.ProgramFormatError(msg.NOT_A_PROGRAM.format(source=source, problem=problem), "", problem)


@dataclass(frozen=True, slots=True)
class OpEntry:
    """A row of the op table: the op and the schema text its calls were traced against."""

    name: str
    overload: str
    schema: str

    @property
    def full_name(self) -> str:
        return f"{self.name}.{self.overload}" if self.overload else self.name


class TensorEntry(NamedTuple):
    """A row of the tensor table, before its elements are read (a named tuple: making a
    frozen dataclass costs five times as much, and a load makes one per constant)."""

    dtype: ScalarType
    shape: tuple[int, ...]
    device: Device
    entry: str | None  # the archive entry holding the elements (None: no elements)
    storage: Any  # the numpy dtype of the elements (None when there are none)
    offset: int = -1  # version 2: where the elements start in the entry (-1: version 1, or none)


# Note [The manifest's quick path]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# Decoding a value names where it is (``calls[3].args[1].result``) so that a refusal can
# say so; building those names for every value of a good file was a large share of a
# load. ``Decoder.quick`` decodes the values a program is mostly made of -- an input, an
# earlier call's result, a tensor constant, a constant that is a JSON literal -- checking
# exactly what ``value`` checks (JSON types, ranges, references) without naming anything,
# and returns None for anything else, valid or not; ``value`` then decodes it and names
# whatever is wrong. (It tests ``x.__class__ is dict``: JSON makes exact dicts and lists,
# and the test costs no call.) So a refusal is worded as before, and nothing is accepted that was
# refused (tests/test_programs_format.py pins the messages; the fuzz test the rest).


class Decoder:
    """Checks and decodes one manifest; ``fail`` raises naming the place."""

    def __init__(self, source: str, limits: Limits) -> None:
        self.source = source
        self.limits = limits
        self.version = 1  # the file's format version, once ``top`` has read it
        self.data_size: int = 0  # version 2: the bytes the tensor table lays out in TENSOR_DATA_ENTRY
        self.inputs = 0
        self.tensors: list[TensorConstant] = []
        self.calls: list[Call] = []
        self.call_ops: list[int] = []  # each call's row of the op table
        self.results: dict[tuple[int, int], ResultRef] = {}
        self.literals: dict[tuple[type[object], object], Constant] = {}  # one Constant per None, bool, int, str

    def fail(self, problem: str, where: str) -> NoReturn:
        raise msg.ProgramFormatError(msg.BAD_FIELD.format(source=self.source, where=where, problem=problem), where, problem)

    # -- JSON types ------------------------------------------------------------------------
    def obj(self, x: Any, where: str, keys: tuple[str, ...]) -> dict[str, Any]:
        if not _is_object(x):
            self.fail(msg.EXPECTED.format(expected="an object", got=_json_kind(x)), where)
        expected = _KEY_SETS.get(keys) or _KEY_SETS.setdefault(keys, frozenset(keys))
        if x.keys() != expected:
            self.fail(msg.KEYS.format(expected=", ".join(keys), got=", ".join(sorted(x)) or "none"), where)
        return x

    def list_(self, x: Any, where: str) -> list[Any]:
        if not _is_list(x):
            self.fail(msg.EXPECTED.format(expected="a list", got=_json_kind(x)), where)
        return x

    def int_(self, x: Any, where: str, low: int, high: int) -> int:
        if type(x) is not int:
            self.fail(msg.EXPECTED.format(expected="an integer", got=_json_kind(x)), where)
        if not low <= x <= high:
            self.fail(msg.OUT_OF_RANGE.format(value=x, low=low, high=high), where)
        return x

    def str_(self, x: Any, where: str) -> str:
        if not isinstance(x, str):
            self.fail(msg.EXPECTED.format(expected="a string", got=_json_kind(x)), where)
        return x

    def named(self, x: Any, where: str, table: dict[str, _E]) -> _E:
        name = self.str_(x, where)
        found = table.get(name)
        if found is None:
            self.fail(msg.ONE_OF.format(expected=", ".join(table), got=shorten(name)), where)
        return found

    def shape(self, x: Any, where: str) -> tuple[int, ...]:
        dims = self.list_(x, where)
        if len(dims) > _MAX_DIMS:
            self.fail(msg.TOO_MANY.format(count=len(dims), limit=_MAX_DIMS), where)
        return tuple(self.int_(n, f"{where}[{i}]", 0, _MAX_DIM) for i, n in enumerate(dims))

    def device(self, x: Any, where: str) -> Device:
        found = _DEVICES.get(x) if type(x) is str else None
        if found is not None:
            return found
        try:
            return Device.parse(self.str_(x, where))
        except ArgumentValueError as error:
            self.fail(msg.BAD_DEVICE.format(detail=error), where)

    # -- the top -----------------------------------------------------------------------------
    def top(self, document: Any) -> dict[str, Any]:
        """The top-level object, its format and version checked before its keys (so a
        newer file is named as one)."""
        if not _is_object(document):
            self.fail(msg.EXPECTED.format(expected="an object", got=_json_kind(document)), "program.json")
        top = document
        if top.get("format") != FORMAT_NAME:
            self.fail(msg.NOT_FORMAT.format(got=_json_kind(top.get("format"))), "format")
        version = top.get("version")
        if type(version) is int and version > FORMAT_VERSION:
            self.fail(msg.NEWER_VERSION.format(version=version, supported=FORMAT_VERSION), "version")
        self.version = self.int_(version, "version", 1, FORMAT_VERSION)
        keys = _TOP_KEYS if self.version < 3 else _TOP_KEYS_3 if self.version == 3 else _TOP_KEYS_4
        return self.obj(top, "program.json", keys)

    def row(self, x: Any, where: str, shown: str, size: int) -> list[Any]:
        """A version 3 row: a list of ``size`` fields (``shown`` names them)."""
        if not (_is_list(x) and len(x) == size):
            self.fail(msg.EXPECTED.format(expected=f"a list {shown}", got=_row_kind(x)), where)
        return x

    # -- tables ----------------------------------------------------------------------------
    def op_table(self, x: Any) -> list[OpEntry]:
        """The op table of a version 1 or 2 manifest (version 3: _numbered.py)."""
        entries: list[OpEntry] = []
        for i, row in enumerate(self.list_(x, "ops")):
            if _is_object(row) and row.keys() == _OP_KEYS:  # the common row (Note [The manifest's quick path])
                name: Any = row["name"]
                overload: Any = row["overload"]
                schema: Any = row["schema"]
                if type(name) is str and type(overload) is str and type(schema) is str:
                    entries.append(OpEntry(name, overload, schema))
                    continue
            where = f"ops[{i}]"
            fields = self.obj(row, where, ("name", "overload", "schema"))
            name = self.str_(fields["name"], f"{where}.name")
            overload = self.str_(fields["overload"], f"{where}.overload")
            entries.append(OpEntry(name, overload, self.str_(fields["schema"], f"{where}.schema")))
        return entries

    def schema_place(self, row: int) -> str:
        """Where op row ``row``'s schema text is."""
        return f"ops[{row}][2]" if self.version >= 3 else f"ops[{row}].schema"

    def tensor_table(self, x: Any) -> list[TensorEntry]:
        """The tensor table, with every shape capped and the total bytes under the limit."""
        rows = self.list_(x, "tensors")
        if len(rows) > self.limits.entries - 1:
            self.fail(msg.TOO_MANY.format(count=len(rows), limit=self.limits.entries - 1), "tensors")
        entries: list[TensorEntry] = []
        total = 0
        limit = self.limits.tensor_bytes
        v2 = self.version >= 2
        v3 = self.version >= 3
        row_keys, key_set = (_TENSOR_ROW_2, _TENSOR_KEYS_2) if v2 else (_TENSOR_ROW, _TENSOR_KEYS)
        places = _TENSOR_PLACES_3 if v3 else _TENSOR_PLACES_2 if v2 else _TENSOR_PLACES
        for i, row in enumerate(rows):
            # The common row is checked without naming its place (Note [The manifest's quick
            # path]); anything else is checked again by the methods that name it.
            quick = None if v2 else _quick_tensor_row(row, i, limit)
            if quick is not None and total + quick[1] <= limit:
                entries.append(quick[0])
                total += quick[1]
                continue
            where = f"tensors[{i}]"
            if v3:
                fields = dict(zip(row_keys, self.row(row, where, "[dtype, shape, device, offset]", 4)))
            else:
                fields = row if _is_object(row) and row.keys() == key_set else self.obj(row, where, row_keys)
            found: Any = fields["dtype"]
            dtype = _DTYPES.get(found) if type(found) is str else None
            if dtype is None:
                dtype = self.named(found, where + places[0], _DTYPES)
            found = fields["shape"]
            shape = _quick_shape(found)
            if shape is None:
                shape = self.shape(found, where + places[1])
            found = fields["device"]
            device = _DEVICES.get(found) if type(found) is str else None
            if device is None:
                device = self.device(found, where + places[2])
            offset: int = -1
            if v2:  # the elements laid out in table order, each at the next aligned offset
                found = fields["offset"]
                if found is not None and (type(found) is not int or found != aligned(self.data_size)):
                    expected = aligned(self.data_size)
                    self.fail(msg.DATA_OFFSET.format(expected=expected, got=_json_kind(found)), where + places[3])
                data, offset = (None, -1) if found is None else (TENSOR_DATA_ENTRY, found)
            else:
                data = fields["data"]
                if data is not None and data != tensor_entry(i):
                    self.fail(msg.DATA_ENTRY.format(expected=tensor_entry(i), got=_json_kind(data)), where + places[3])
            storage = None
            if data is not None:
                try:
                    storage = _STORAGE.get(dtype) or _STORAGE.setdefault(dtype, little_endian(numpy_dtype(dtype)))
                except TypedopsError:
                    self.fail(msg.NO_STORAGE.format(dtype=dtype.name), where + places[0])
                count, limit = math.prod(shape), self.limits.tensor_bytes // dtype.itemsize
                if count > limit:
                    self.fail(msg.TENSOR_TOO_LARGE.format(shape=list(shape), count=count, limit=limit), where + places[1])
                total += count * dtype.itemsize
                if total > self.limits.tensor_bytes:
                    self.fail(msg.TENSORS_TOO_LARGE.format(size=total, limit=self.limits.tensor_bytes), "tensors")
                if v2:
                    self.data_size = offset + count * dtype.itemsize
            entries.append(TensorEntry(dtype, shape, device, data, storage, offset))
        return entries

    # -- values --------------------------------------------------------------------------
    def quick(self, x: Any, before: int) -> Value | None:
        """The value ``x`` of a call numbered ``before`` when it is one of the common kinds
        and correct (an input, an earlier result, a tensor constant, a constant with a
        JSON literal), else None: then ``value`` decodes it or says what is wrong. It
        accepts nothing ``value`` refuses and builds no message (Note [The manifest's
        quick path])."""
        if not (x.__class__ is dict and len(x) == 1):
            return None
        body: Any = x.get("result", _MISSING)
        if body is not _MISSING:
            if body.__class__ is list and len(body) == 2:
                call: Any = body[0]
                output: Any = body[1]
                if type(call) is int and type(output) is int and 0 <= call < before and 0 <= output:
                    if output < self.calls[call].num_outputs:
                        return self._result(call, output)
            return None
        body = x.get("input", _MISSING)
        if body is not _MISSING:
            return InputRef(body) if type(body) is int and 0 <= body < self.inputs and before >= 0 else None
        body = x.get("const", _MISSING)
        if body is not _MISSING:
            if body is None or type(body) in _LITERALS:
                literal: object = body
                key = (type(literal), literal)  # the type too: True == 1
                found = self.literals.get(key)
                if found is None:
                    found = self.literals[key] = Constant(body)
                return found
            return Constant(body) if type(body) is float and math.isfinite(body) else None
        body = x.get("tensor", _MISSING)
        if type(body) is int and 0 <= body < len(self.tensors):
            return self.tensors[body]
        return None

    def _result(self, call: int, output: int) -> ResultRef:
        """``ResultRef(call, output)``, one object per pair (a program refers to most results
        more than once)."""
        found = self.results.get((call, output))
        if found is None:
            found = self.results[(call, output)] = ResultRef(call, output)
        return found

    def value(self, x: Any, where: str, before: int, depth: int = 0) -> Value:
        """A value of a call numbered ``before`` (results of earlier calls only)."""
        if not (_is_object(x) and len(x) == 1):
            self.fail(msg.EXPECTED.format(expected=f"a value (an object with one key: {_VALUE_KEYS})", got=_json_kind(x)), where)
        ((key, body),) = x.items()
        inner = f"{where}.{key}"
        if key == "input":
            index = self.int_(body, inner, 0, _MAX_DIM)
            if before < 0:  # running it would look an input up among the inputs being bound
                self.fail(msg.INPUT_IN_INPUT, inner)
            if index >= self.inputs:
                self.fail(msg.NO_SUCH_INPUT.format(index=index, count=self.inputs), inner)
            return InputRef(index)
        if key == "result":
            return self.result(body, inner, before)
        if key == "tensor":
            index = self.int_(body, inner, 0, _MAX_DIM)
            if index >= len(self.tensors):
                self.fail(msg.NO_SUCH_TENSOR.format(index=index, count=len(self.tensors)), inner)
            return self.tensors[index]
        if key == "list":
            if depth >= self.limits.nesting:
                self.fail(msg.NESTED_TOO_DEEP.format(limit=self.limits.nesting), inner)
            items = self.list_(body, inner)
            return ListOf(tuple(self.value(v, f"{inner}[{i}]", before, depth + 1) for i, v in enumerate(items)))
        if key == "const":
            return Constant(self.constant(body, inner))
        self.fail(msg.ONE_OF.format(expected=_VALUE_KEYS, got=shorten(key)), where)

    def result(self, body: Any, where: str, before: int) -> ResultRef:
        pair = self.list_(body, where)
        if len(pair) != 2:
            self.fail(msg.EXPECTED.format(expected="[call, output]", got=f"{len(pair)} item(s)"), where)
        call = self.int_(pair[0], f"{where}[0]", 0, _MAX_DIM)
        output = self.int_(pair[1], f"{where}[1]", 0, _MAX_DIM)
        if before < 0:
            self.fail(msg.RESULT_IN_INPUT, where)
        if call >= before:
            self.fail(msg.NOT_EARLIER.format(call=call), where)
        count = self.calls[call].num_outputs
        if output >= count:
            self.fail(msg.NO_SUCH_RESULT.format(output=output, call=call, count=count), where)
        return self._result(call, output)

    def float_(self, x: Any, where: str) -> float:
        if type(x) is float and math.isfinite(x):
            return x
        if isinstance(x, dict):
            return _NON_FINITE[self.named(self.obj(x, where, ("float",))["float"], f"{where}.float",
                                          {k: k for k in _NON_FINITE})]  # fmt: skip
        self.fail(msg.EXPECTED.format(expected='a finite number or {"float": "nan" | "inf" | "-inf"}',
                                             got=_json_kind(x)), where)  # fmt: skip

    def constant(self, x: Any, where: str) -> Any:
        if x is None or type(x) in (bool, int, str):
            return x
        if type(x) is float:
            return self.float_(x, where)
        if not (_is_object(x) and len(x) == 1):
            self.fail(msg.EXPECTED.format(expected="a constant", got=_json_kind(x)), where)
        ((key, body),) = x.items()
        inner = f"{where}.{key}"
        readers: dict[str, Callable[[Any, str], Any]] = {
            "float": lambda b, w: self.float_({"float": b}, where),
            "complex": self.complex_,
            "dtype": lambda b, w: self.named(b, w, _DTYPES),
            "layout": lambda b, w: self.named(b, w, _LAYOUTS),
            "memory_format": lambda b, w: self.named(b, w, _MEMORY_FORMATS),
            "device": self.device,
        }
        reader = readers.get(key)
        if reader is None:
            self.fail(msg.ONE_OF.format(expected=", ".join(readers), got=shorten(key)), where)
        return reader(body, inner)

    def complex_(self, x: Any, where: str) -> complex:
        parts = self.list_(x, where)
        if len(parts) != 2:
            self.fail(msg.EXPECTED.format(expected="[real, imaginary]", got=f"{len(parts)} item(s)"), where)
        return complex(self.float_(parts[0], f"{where}[0]"), self.float_(parts[1], f"{where}[1]"))

    # -- inputs, calls, outputs ------------------------------------------------------------------
    def input(self, x: Any, where: str, names: set[str]) -> Input:
        if not _is_object(x):
            self.fail(msg.EXPECTED.format(expected="an object", got=_json_kind(x)), where)
        kind = x.get("kind")
        if kind == "tensor":
            fields = self.obj(x, where, ("kind", "name", "dtype", "shape", "device"))
            name = self.input_name(fields["name"], f"{where}.name", names)
            dtype = self.named(fields["dtype"], f"{where}.dtype", _DTYPES)
            return TensorInput(name, dtype, self.shape(fields["shape"], f"{where}.shape"),
                               self.device(fields["device"], f"{where}.device"))  # fmt: skip
        if kind == "constant":
            fields = self.obj(x, where, ("kind", "name", "value"))
            name = self.input_name(fields["name"], f"{where}.name", names)
            return ConstantInput(name, self.value(fields["value"], f"{where}.value", -1))
        self.fail(msg.ONE_OF.format(expected="tensor, constant", got=shorten(kind) if isinstance(kind, str) else kind), f"{where}.kind")

    def input_name(self, x: Any, where: str, names: set[str]) -> str:
        name = self.str_(x, where)
        problem = input_name_problem(name, names)  # the writer's own rule and words
        if problem is not None:
            self.fail(problem, where)
        return name

    def call(self, x: Any, index: int, ops: list[OpEntry]) -> Call:
        """Call number ``index``: the common call is decoded without naming its place (Note
        [The manifest's quick path]), anything else by ``named_call``."""
        if x.__class__ is dict and x.keys() == _CALL_KEYS:
            op: Any = x["op"]
            args: Any = x["args"]
            outputs: Any = x["outputs"]
            if type(op) is int and 0 <= op < len(ops) and args.__class__ is list and type(outputs) is int and 0 <= outputs <= _MAX_RESULTS:
                quick = self.quick
                values: list[Value] = []
                for v in args:
                    value = quick(v, index)
                    if value is None:
                        return self.named_call(x, index, ops)
                    values.append(value)
                entry = ops[op]
                self.call_ops.append(op)
                return Call(entry.name, entry.overload, entry.schema, tuple(values), outputs)
        return self.named_call(x, index, ops)

    def named_call(self, x: Any, index: int, ops: list[OpEntry]) -> Call:
        where = f"calls[{index}]"
        fields = self.obj(x, where, ("op", "args", "outputs"))
        op = self.int_(fields["op"], f"{where}.op", 0, _MAX_DIM)
        if op >= len(ops):
            self.fail(msg.NO_SUCH_OP.format(index=op, count=len(ops)), f"{where}.op")
        args = self.list_(fields["args"], f"{where}.args")
        values = tuple(self.quick(v, index) or self.value(v, f"{where}.args[{i}]", index) for i, v in enumerate(args))
        outputs = self.int_(fields["outputs"], f"{where}.outputs", 0, _MAX_RESULTS)
        entry = ops[op]
        self.call_ops.append(op)
        return Call(entry.name, entry.overload, entry.schema, values, outputs)

    def program(self, top: dict[str, Any], ops: list[OpEntry]) -> Program:
        """The program of a checked top-level object; ``self.tensors`` holds the constants."""
        rows = self.list_(top["inputs"], "inputs")
        self.inputs = len(rows)
        names: set[str] = set()
        inputs = tuple(self.input(row, f"inputs[{i}]", names) for i, row in enumerate(rows))
        for i, row in enumerate(self.list_(top["calls"], "calls")):
            self.calls.append(self.call(row, i, ops))
        before = len(self.calls)
        outputs = tuple(self.quick(v, before) or self.value(v, f"outputs[{i}]", before)
                        for i, v in enumerate(self.list_(top["outputs"], "outputs")))  # fmt: skip
        kind = self.named(top["output_kind"], "output_kind", _KINDS)
        return self.finish(inputs, tuple(self.calls), outputs, kind)

    def finish(self, inputs: tuple[Input, ...], calls: tuple[Call, ...], outputs: tuple[Value, ...],
               kind: OutputKind) -> Program:  # fmt: skip
        """The program, its outputs checked against its output kind."""
        if (kind is OutputKind.single and len(outputs) != 1) or (kind is OutputKind.none and outputs):
            self.fail(msg.OUTPUT_COUNT.format(kind=kind.value, count=len(outputs)), "outputs")
        return Program(inputs, calls, outputs, kind)
