"""The fast path of reading a program file: the manifest as typedops writes it, decoded in one pass.

Note [The fast path of reading]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
``json.loads`` with a Python ``object_pairs_hook`` (the general reader's, which refuses a
key given twice) calls back into Python once per JSON object, and the general decoder
then names the place of everything it checks: together most of reading a small model's
manifest. A manifest typedops wrote has every object's keys in one order, so this reader
parses with ``tuple`` as the hook -- each object becomes the tuple of its (key, value)
pairs, made in C -- and accepts each object only when its keys are exactly the expected
ones in that order (so no key is given twice), each value of the common kinds: tensor
inputs, op calls whose arguments are inputs, earlier results, tensor constants or
constants JSON writes as literals, tensor constants with elements, every op registered
with the recorded schema text or one that parses to it. It checks what the general
reader checks (the same types, ranges, references, caps and entries), reads the tensor
constants through the same archive checks (version 1: each ``.npy`` entry; versions 2
and 3: ``tensors.bin`` once, its size exactly what the tensor table lays out, then
sliced), and builds the same ``Program``. A version 3 manifest has one JSON object, the
top, and its calls are arrays of integers (Note [Numbered values], below); it is read
into a ``Numbered``, checked, from which the values and the ``Program`` are made only
when asked for (``load`` compiles it without them: Note [Compiled from the numbered
values] in _direct.py).

It never raises: anything it does not take -- valid or not, a ``ProgramFormatError`` of
the archive included -- makes it return None, and the general reader (_decode.py) reads
the file from the start, so every refusal is the general reader's, worded and ordered as
it was. tests/test_programs_format.py checks that the two read the same program.
"""

from __future__ import annotations

import json
import math
from itertools import chain
from typing import Any, Final

from ..vocabulary import Device, ScalarType, TypedopsError
from ..dispatch import OperatorHandle, dispatcher, load_lazy_library
from ..schema import FunctionSchema, parse_schema
from ..tracing import (
    FORMAT_NAME,
    MANIFEST_ENTRY,
    TENSOR_DATA_ENTRY,
    Call,
    Constant,
    InputRef,
    OutputKind,
    Program,
    ResultRef,
    TensorConstant,
    TensorInput,
    Value,
    aligned,
    input_name_problem,
    tensor_entry,
)
from ._archive import Archive, Limits
from ._compat import schema_text
from ._decode import _DEVICES, _DTYPES, _KINDS, _MAX_RESULTS, _quick_shape, _stored
from ._numbered import WRAPPED_DTYPES

__all__ = ["fast_read", "fast_numbered", "Numbered", "OpRow"]

_TOP: Final = ("format", "version", "ops", "inputs", "calls", "outputs", "output_kind", "tensors")
_TOP_3: Final = ("format", "version", "ops", "inputs", "tensors", "constants", "calls", "outputs", "output_kind")
_TOP_4: Final = (*_TOP_3, "wrapped")
_OP: Final = ("name", "overload", "schema")
_INPUT: Final = ("kind", "name", "dtype", "shape", "device")
_CALL: Final = ("op", "args", "outputs")
_TENSOR: Final = ("dtype", "shape", "device", "data")
_TENSOR_2: Final = ("dtype", "shape", "device", "offset")  # version 2
_ROW_3: Final = ("[dtype, shape, device, offset]",)  # version 3: a row is a list


class _Refused(Exception):
    """A literal JSON has and a program file has not (NaN, Infinity): the general reader names it."""


def _refuse(literal: str) -> Any:
    raise _Refused(literal)


_quick_call: Final = Call.quick  # Note [Quick construction] in tracing/_values.py
_quick_tensor: Final = TensorConstant.quick
_JSON: Final = json.JSONDecoder(object_pairs_hook=tuple, parse_constant=_refuse)
_Pairs = tuple[tuple[str, Any], ...]
FastRead = tuple[Program, list[OperatorHandle], list[FunctionSchema], list[int]]
OpRow = tuple[str, str, str, OperatorHandle, FunctionSchema]  # name, overload, recorded text, handle, schema


def _fields(x: Any, keys: tuple[str, ...]) -> tuple[Any, ...] | None:
    """The values of object ``x`` (a tuple of pairs) when its keys are exactly ``keys``, in order."""
    if x.__class__ is not tuple or len(x) != len(keys):
        return None
    pairs: _Pairs = x  # each pair a (str, value) tuple the parser made
    count = len(keys)  # the common sizes unpacked in line (zip(*pairs) cost ~0.25 us more an object)
    if count == 3:
        (k0, v0), (k1, v1), (k2, v2) = pairs
        return (v0, v1, v2) if (k0, k1, k2) == keys else None
    if count == 4:
        (k0, v0), (k1, v1), (k2, v2), (k3, v3) = pairs
        return (v0, v1, v2, v3) if (k0, k1, k2, k3) == keys else None
    if count == 5:
        (k0, v0), (k1, v1), (k2, v2), (k3, v3), (k4, v4) = pairs
        return (v0, v1, v2, v3, v4) if (k0, k1, k2, k3, k4) == keys else None
    found, values = zip(*pairs)  # the keys, the values
    return values if found == keys else None


def fast_read(archive: Archive, raw: bytes, limits: Limits, check_data: bool = False) -> FastRead | None:
    """The program in ``archive`` whose manifest is ``raw``, with each op row's handle and
    recorded schema and each call's row, or None (Note [The fast path of reading])."""
    found = fast_numbered(archive, raw, limits, check_data)
    return found.read() if isinstance(found, Numbered) else found


def fast_numbered(archive: Archive, raw: bytes, limits: Limits, check_data: bool = False) -> Numbered | FastRead | None:
    """``fast_read``, but for a version 3 or 4 file the ``Numbered`` values it read, its calls
    and ``Program`` not made (Note [Compiled from the numbered values] in _direct.py)."""
    try:
        text = raw.decode("utf-8")
        if text.startswith("\ufeff"):
            return None
        document = _JSON.decode(text)
    except (ValueError, RecursionError, _Refused):
        return None
    top = _fields(document, _TOP_4) if document.__class__ is tuple and len(document) == len(_TOP_4) else None
    if top is None and document.__class__ is tuple and len(document) == len(_TOP_3):
        top = _fields(document, _TOP_3)
    if top is not None:
        if top[0] != FORMAT_NAME or top[1] != len(top) - 6 or type(top[1]) is not int:  # 3 or 4: as many keys
            return None
        try:
            ops, inputs, tensors, constants, calls, outputs, kind = top[2:9]
            return _read_3(archive, limits, check_data, ops, inputs, tensors, constants, calls, outputs, kind,
                           top[9] if len(top) > 9 else None)  # fmt: skip
        except (TypedopsError, RecursionError):  # a ProgramFormatError of the archive, a schema that does not parse
            return None
    top = _fields(document, _TOP)
    if top is None:
        return None
    name, version, op_rows, input_rows, call_rows, output_values, kind_name, tensor_rows = top
    if name != FORMAT_NAME or type(version) is not int or not 1 <= version <= 2:
        return None
    try:
        return _read(archive, limits, version, op_rows, input_rows, call_rows, output_values, kind_name, tensor_rows,
                     check_data)  # fmt: skip
    except (TypedopsError, RecursionError):  # a ProgramFormatError of the archive, a schema that does not parse
        return None


def _read(archive: Archive, limits: Limits, version: int, op_rows: Any, input_rows: Any, call_rows: Any, output_values: Any,
          kind_name: Any, tensor_rows: Any, check_data: bool) -> FastRead | None:  # fmt: skip
    if not (op_rows.__class__ is list and input_rows.__class__ is list and call_rows.__class__ is list
            and output_values.__class__ is list and tensor_rows.__class__ is list and type(kind_name) is str):  # fmt: skip
        return None
    kind = _KINDS.get(kind_name)
    tensors = (_tensors(archive, limits, tensor_rows) if version == 1
               else _tensors_2(archive, limits, tensor_rows, check_data))  # fmt: skip
    ops = _ops(op_rows)
    inputs = _inputs(input_rows)
    if kind is None or tensors is None or ops is None or inputs is None:
        return None
    decoded = _Values(len(inputs), tensors)
    calls: list[Call] = []
    call_ops: list[int] = []
    for row in call_rows:
        fields = _fields(row, _CALL)
        if fields is None:
            return None
        op, args, outputs = fields
        if not (type(op) is int and 0 <= op < len(ops) and args.__class__ is list and type(outputs) is int
                and 0 <= outputs <= _MAX_RESULTS):  # fmt: skip
            return None
        values = decoded.values(args, calls)
        if values is None:
            return None
        entry = ops[op]
        schema = entry[4]
        if len(values) != len(schema.arguments) or outputs != len(schema.returns):
            return None
        calls.append(_quick_call(entry[0], entry[1], entry[2], values, outputs))
        call_ops.append(op)
    results = decoded.values(output_values, calls)
    if results is None or (kind is OutputKind.single and len(results) != 1) or (kind is OutputKind.none and results):
        return None
    program = Program(inputs, tuple(calls), results, kind)
    return program, [entry[3] for entry in ops], [entry[4] for entry in ops], call_ops


def _tensor_row(row: Any, keys: tuple[str, ...]) -> tuple[Any, tuple[int, ...], Any, Any] | None:
    """A tensor row's stored dtype facts, shape and device when they are common ones, and
    its last field (a version 1 row's entry name, a version 2 or 3 row's offset) unchecked;
    ``keys`` is None for a version 3 row (a list)."""
    fields = (row if row.__class__ is list and len(row) == 4 else None) if keys is _ROW_3 else _fields(row, keys)
    if fields is None:
        return None
    dtype_name, dims, device_name, last = fields
    stored = _stored(dtype_name) if type(dtype_name) is str else None
    shape = _quick_shape(dims)
    device = _DEVICES.get(device_name) if type(device_name) is str else None
    if stored is None or shape is None or device is None:
        return None
    return stored, shape, device, last


def _tensors(archive: Archive, limits: Limits, rows: list[Any]) -> list[TensorConstant] | None:
    """The tensor constants, their elements read, when every row is a common one with
    elements and the archive holds exactly the manifest and their entries."""
    if len(rows) > limits.entries - 1 or len(archive.entries) != len(rows) + 1 or MANIFEST_ENTRY not in archive.entries:
        return None
    found: list[tuple[Any, ...]] = []
    total = 0
    for index, row in enumerate(rows):
        common = _tensor_row(row, _TENSOR)
        if common is None:
            return None
        stored, shape, device, data = common
        if type(data) is not str or data != tensor_entry(index):
            return None
        total += math.prod(shape) * stored[2]
        if total > limits.tensor_bytes or data not in archive.entries:
            return None
        found.append((stored[0], shape, device, data, stored[1]))
    constants: list[TensorConstant] = []
    for dtype, shape, device, data, storage in found:
        elements = archive.quick_elements(data, storage, shape)
        if elements is None:
            return None
        constants.append(_quick_tensor(dtype, shape, device, elements))
    return constants


def _tensors_2(archive: Archive, limits: Limits, rows: list[Any], check_data: bool) -> list[TensorConstant] | None:
    """The tensor constants of a version 2 file, as ``_layout`` finds them."""
    found = _layout(archive, limits, rows, check_data, _TENSOR_2)
    return None if found is None else _made(*found)


# A tensor constant's dtype, shape, device, and where its elements start and end in ``tensors.bin``.
Placed = tuple[ScalarType, tuple[int, ...], Device, int, int]


def _made(layout: list[Placed], blob: memoryview, wrapped: frozenset[int] = frozenset()) -> list[TensorConstant]:
    """The tensor constants laid out in ``blob``, each with its own ``bytes`` (rows in
    ``wrapped`` marked as wrapped numbers)."""
    return [_quick_tensor(dtype, shape, device, blob[start:stop].tobytes(), row in wrapped)
            for row, (dtype, shape, device, start, stop) in enumerate(layout)]  # fmt: skip


def _wrapped_rows(x: Any, layout: list[Placed]) -> frozenset[int] | None:
    """The rows of a version 4 ``wrapped`` field (Note [Wrapped numbers in programs] in
    tracing/_values.py) when it is right -- distinct rows of 0-dim constants of a wrapped
    number's dtype -- else None (the general reader names the problem)."""
    if x is None:  # version 3
        return frozenset()
    if x.__class__ is not list:
        return None
    rows = frozenset(x)
    for row in x:
        if type(row) is not int or not 0 <= row < len(layout) or layout[row][1] or layout[row][0] not in WRAPPED_DTYPES:
            return None
    return rows if len(rows) == len(x) else None


def _layout(archive: Archive, limits: Limits, rows: list[Any], check_data: bool,
            keys: tuple[str, ...]) -> tuple[list[Placed], memoryview] | None:  # fmt: skip
    """The tensor constants of a version 2 or 3 file (``keys``: ``_ROW_3``) as laid out in
    ``tensors.bin``, and its bytes (read once; its CRC checked when ``check_data``: Note
    [Which CRCs are checked] in _archive.py), when every row is a common one with elements
    and the archive holds exactly the manifest and that entry."""
    expected = 2 if rows else 1
    if len(rows) > limits.entries - 1 or len(archive.entries) != expected or MANIFEST_ENTRY not in archive.entries:
        return None
    found: list[Placed] = []
    end = total = 0
    for row in rows:
        common = _tensor_row(row, keys)
        if common is None:
            return None
        stored, shape, device, offset = common
        if type(offset) is not int or offset != aligned(end):
            return None
        nbytes = math.prod(shape) * stored[2]
        total += nbytes
        if total > limits.tensor_bytes:
            return None
        end = offset + nbytes
        found.append((stored[0], shape, device, offset, end))
    if not found:
        return [], memoryview(b"")
    blob = archive.quick_entry(TENSOR_DATA_ENTRY, check_data)
    if blob is None or len(blob) != end:
        return None
    return found, blob


def _ops(rows: list[Any], v3: bool = False) -> list[OpRow] | None:
    """Each op row, with its op registered now and the schema it recorded."""
    ops: list[OpRow] = []
    for row in rows:
        fields = (row if row.__class__ is list and len(row) == 3 else None) if v3 else _fields(row, _OP)
        if fields is None:
            return None
        name, overload, text = fields
        if not (type(name) is str and type(overload) is str and type(text) is str):
            return None
        handle = dispatcher.find_op(name, overload)
        if handle is None and load_lazy_library(name.partition("::")[0]):
            handle = dispatcher.find_op(name, overload)  # a bundled library, loaded now
        if handle is None:
            return None
        schema = handle.schema
        if text != schema_text(schema):  # saved against another schema: the recorded one, parsed
            schema = parse_schema(text)
            if schema.qualified_name != name or schema.overload_name != overload:
                return None
        ops.append((name, overload, text, handle, schema))
    return ops


def _inputs(rows: list[Any], v3: bool = False) -> tuple[TensorInput, ...] | None:
    """The inputs, when all are tensor inputs."""
    inputs: list[TensorInput] = []
    names: set[str] = set()
    for row in rows:
        fields = (row if row.__class__ is list and len(row) == 5 else None) if v3 else _fields(row, _INPUT)
        if fields is None:
            return None
        kind, name, dtype_name, dims, device_name = fields
        if kind != "tensor" or type(name) is not str or type(dtype_name) is not str:
            return None
        dtype = _DTYPES.get(dtype_name)
        shape = _quick_shape(dims)
        device = _DEVICES.get(device_name) if type(device_name) is str else None
        if dtype is None or shape is None or device is None or input_name_problem(name, names) is not None:
            return None
        inputs.append(TensorInput(name, dtype, shape, device))
    return tuple(inputs)


# References are immutable values: the first ones are shared by every load (making one
# costs ~0.4 us), the rest made once per load.
_SHARED_REFERENCES: Final = 1 << 10
_INPUT_REFS: Final = [InputRef(i) for i in range(_SHARED_REFERENCES)]
_RESULT_REFS: Final[dict[tuple[int, int], ResultRef]] = {}
_FIRST_RESULTS: Final = [ResultRef(i, 0) for i in range(_SHARED_REFERENCES)]


class _Values:
    """Decodes the common values (as ``Decoder.quick`` does), one object per reference."""

    def __init__(self, inputs: int, tensors: list[TensorConstant]) -> None:
        self.inputs = _INPUT_REFS[:inputs] + [InputRef(i) for i in range(_SHARED_REFERENCES, inputs)]
        self.tensors = tensors
        self.literals: dict[tuple[type[object], object], Constant] = {}

    def values(self, items: list[Any], calls: list[Call]) -> tuple[Value, ...] | None:
        values: list[Value] = []
        for item in items:
            if item.__class__ is not tuple or len(item) != 1:
                return None
            key, body = item[0]
            if key == "result":
                if not (body.__class__ is list and len(body) == 2):
                    return None
                call, output = body
                if not (type(call) is int and type(output) is int and 0 <= call < len(calls)
                        and 0 <= output < calls[call].num_outputs):  # fmt: skip
                    return None
                values.append(_result_ref(call, output))
            elif key == "tensor":
                if not (type(body) is int and 0 <= body < len(self.tensors)):
                    return None
                values.append(self.tensors[body])
            elif key == "input":
                if not (type(body) is int and 0 <= body < len(self.inputs)):
                    return None
                values.append(self.inputs[body])
            elif key == "const":
                constant = self.constant(body)
                if constant is None:
                    return None
                values.append(constant)
            else:
                return None
        return tuple(values)

    def constant(self, body: Any) -> Constant | None:
        literal: object = body
        kind = type(literal)
        if literal is None or kind is bool or kind is int or kind is str:
            found = self.literals.get((kind, literal))  # the type too: True == 1
            if found is None:
                found = self.literals[(kind, literal)] = Constant(body)
            return found
        return Constant(body) if kind is float and math.isfinite(body) else None


# Note [Numbered values]
# ~~~~~~~~~~~~~~~~~~~~~~
# A version 3 manifest numbers every value a call can take: the inputs, the tensor
# constants, the constants, then each call's results as the calls make them (Note [The
# program file format] in tracing/_saving.py). So reading the calls is: every row a list,
# every integer in them an int at least 0 (one pass over them all: their types' ``set``,
# ``min``), then per call its op and result count as its schema's and its largest number
# below the count of values numbered before it -- with no Python object per argument
# and no JSON object anywhere but the top. The values themselves (``InputRef``s,
# ``TensorConstant``s with their bytes, ``Constant``s, ``ResultRef``s) are made only when
# ``Numbered.slots()`` is first called, by ``read()`` or ``program()``: a ``load`` the
# direct compiler takes makes none of them. The checks are the general reader's (_numbered.py):
# an integer that is not a bool, a number below the count of values before the call, so
# a result is an earlier call's, one value per argument and one result per return of the
# recorded schema. A call with a list argument, a constant JSON has no literal for, a
# constant input: the general reader's.
_INT: Final = {int}
_LIST: Final = {list}


class Numbered:
    """A version 3 manifest as the fast path read and checked it: the inputs, each op row
    (its name, overload, recorded text, handle and schema), the call rows, the tensor
    constants' layout in ``blob`` (``tensors.bin``), the constants' values, the number of
    the first result, the outputs' numbers and their kind. Nothing is made from them until
    asked for: ``slots()``, every value numbered (the inputs, the tensor constants, the
    constants, then the results); ``program()``; ``read()``, the ``FastRead`` of it."""

    __slots__ = ("inputs", "ops", "rows", "layout", "blob", "constants", "results", "output_numbers", "kind", "wrapped",
                 "_slots")  # fmt: skip

    def __init__(self, inputs: tuple[TensorInput, ...], ops: list[OpRow], rows: list[list[int]], layout: list[Placed],
                 blob: memoryview, constants: list[Any], results: int, output_numbers: list[int],
                 kind: OutputKind, wrapped: frozenset[int] = frozenset()) -> None:  # fmt: skip
        self.inputs = inputs
        self.ops = ops
        self.rows = rows
        self.layout = layout  # the tensor constants (the slots after the inputs)
        self.blob = blob  # a view of the file's bytes (immutable: read at once)
        self.constants = constants  # the constants' values (the slots after the tensor constants)
        self.results = results  # the slot of the first call's first result
        self.output_numbers = output_numbers
        self.kind = kind
        self.wrapped = wrapped  # the tensor constants (rows of ``layout``) that are wrapped numbers
        self._slots: list[Value] | None = None

    def slots(self) -> list[Value]:
        """Every value numbered, made once (Note [Numbered values])."""
        if self._slots is not None:
            return self._slots
        count = len(self.inputs)
        slots: list[Value] = []
        slots += _INPUT_REFS[:count] if count <= _SHARED_REFERENCES else [InputRef(i) for i in range(count)]
        slots += _made(self.layout, self.blob, self.wrapped)
        slots += [Constant(value) for value in self.constants]
        for index, row in enumerate(self.rows):
            outputs = row[1]
            if outputs == 1 and index < _SHARED_REFERENCES:
                slots.append(_FIRST_RESULTS[index])
            else:
                slots += _results(index, outputs)
        self._slots = slots  # made twice by two threads at once: equal values, either serves
        return slots

    def values(self, numbers: list[int]) -> tuple[Value, ...]:
        """The values numbered ``numbers``."""
        return tuple(map(self.slots().__getitem__, numbers))

    def program(self) -> Program:
        ops, value = self.ops, self.slots().__getitem__
        calls = tuple(_quick_call(*ops[row[0]][:3], tuple(map(value, row[2:])), row[1]) for row in self.rows)
        return Program(self.inputs, calls, self.values(self.output_numbers), self.kind)

    def read(self) -> FastRead:
        ops = self.ops
        return self.program(), [e[3] for e in ops], [e[4] for e in ops], [row[0] for row in self.rows]


def _read_3(archive: Archive, limits: Limits, check_data: bool, op_rows: Any, input_rows: Any, tensor_rows: Any, constant_rows: Any,
            call_rows: Any, output_values: Any, kind_name: Any, wrapped: Any = None) -> Numbered | None:  # fmt: skip
    if not (op_rows.__class__ is list and input_rows.__class__ is list and call_rows.__class__ is list
            and output_values.__class__ is list and tensor_rows.__class__ is list and constant_rows.__class__ is list
            and type(kind_name) is str):  # fmt: skip
        return None
    kind = _KINDS.get(kind_name)
    tensors = _layout(archive, limits, tensor_rows, check_data, _ROW_3)
    ops = _ops(op_rows, True)
    inputs = _inputs(input_rows, True)
    if kind is None or tensors is None or ops is None or inputs is None or not _constants(constant_rows):
        return None
    layout, blob = tensors
    wrapped_rows = _wrapped_rows(wrapped, layout)
    if wrapped_rows is None:
        return None
    first_result = len(inputs) + len(layout) + len(constant_rows)
    numbered = _calls(call_rows, ops, first_result)
    if numbered < 0 or not _numbers(output_values) or (output_values and max(output_values) >= numbered):
        return None  # a number past the values numbered: the general reader names it
    if (kind is OutputKind.single and len(output_values) != 1) or (kind is OutputKind.none and output_values):
        return None
    return Numbered(inputs, ops, call_rows, layout, blob, constant_rows, first_result, output_values, kind, wrapped_rows)


def _numbers(values: Any) -> bool:
    """Whether ``values`` is a list of integers (not bools) of at least 0."""
    return values.__class__ is list and _INT.issuperset(map(type, values)) and (not values or min(values) >= 0)


def _calls(rows: list[Any], ops: list[OpRow], numbered: int) -> int:
    """How many values are numbered after the calls (``numbered`` before them), each call
    checked (Note [Numbered values]); -1 when one is not a common one."""
    if not (_LIST.issuperset(map(type, rows)) and _numbers(list(chain.from_iterable(rows)))):
        return -1
    arities = [(len(schema.arguments) + 2, len(schema.returns)) for _, _, _, _, schema in ops]  # + op and outputs
    for row in rows:
        if len(row) < 2 or row[0] >= len(ops):
            return -1
        outputs: int = row[1]
        if (len(row), outputs) != arities[row[0]] or (len(row) > 2 and max(row[2:]) >= numbered):
            return -1  # a number past the values numbered before the call: the general reader names it
        numbered += outputs
    return numbered


def _results(call: int, outputs: int) -> list[ResultRef]:
    """The results of call ``call``: ``ResultRef``s, shared by every load for the first ones."""
    return [_result_ref(call, output) for output in range(outputs)]


def _result_ref(call: int, output: int) -> ResultRef:
    """Output ``output`` of call ``call``: one ``ResultRef`` shared by every load, for the
    first ``_SHARED_REFERENCES`` pairs seen (the table stays capped); a new one past them."""
    ref = _RESULT_REFS.get((call, output))
    if ref is None:
        ref = ResultRef(call, output)
        if len(_RESULT_REFS) < _SHARED_REFERENCES:
            _RESULT_REFS[(call, output)] = ref
    return ref


def _constants(rows: list[Any]) -> bool:
    """Whether every constant is one JSON has a literal for."""
    for body in rows:
        kind = body.__class__
        if not (body is None or kind is bool or kind is int or kind is str or (kind is float and math.isfinite(body))):
            return False
    return True
