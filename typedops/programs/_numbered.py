"""Decoding the inputs, constants, calls and outputs of a version 3 manifest, trusting nothing.

A version 3 manifest numbers every value a call can take -- the inputs, the tensor
constants, the constants, then each call's results in order -- and a call is one JSON
array, ``[op, outputs, argument...]``, each argument a value's number or a list of
values (Note [The program file format] in tracing/_saving.py). This is the general
reader of those parts: it names the place of whatever is wrong (``calls[3][2]``), as
``Decoder`` does for versions 1 and 2; the fast reader (_fast.py) takes the common file
and leaves everything else here.
"""

from __future__ import annotations

from typing import Any, Final

from ..vocabulary import ScalarType
from ..schema import FunctionSchema
from ..tracing import (Call, Constant, ConstantInput, Input, InputRef, ListOf, Program, ResultRef, TensorConstant,
                       TensorInput, Value)  # fmt: skip
from . import _messages as msg
from ._decode import _DTYPES, _KINDS, _MAX_DIM, _MAX_RESULTS, Decoder, OpEntry, _json_kind, shorten

__all__ = ["op_table_3", "program_3", "check_call", "wrapped_tensors", "WRAPPED_DTYPES"]

# The dtypes of a wrapped number (``wrapped_scalar``): Note [Wrapped numbers in programs].
WRAPPED_DTYPES: Final = frozenset({ScalarType.bool, ScalarType.int64, ScalarType.float64, ScalarType.complex128})


def _wrapped_problem(x: Any, tensors: list[TensorConstant]) -> tuple[str, str] | None:
    """What is wrong with ``wrapped`` (version 4), and where, or None."""
    if x.__class__ is not list:
        return msg.EXPECTED.format(expected=msg.WRAPPED_ROWS, got=_json_kind(x)), "wrapped"
    seen: set[int] = set()
    for index, row in enumerate(x):
        where = f"wrapped[{index}]"
        if type(row) is not int or not 0 <= row < len(tensors):
            return msg.NOT_A_TENSOR_ROW.format(last=len(tensors) - 1, got=shorten(row)), where
        if row in seen:
            return msg.WRAPPED_TWICE.format(row=row), where
        seen.add(row)
        t = tensors[row]
        if t.shape or t.dtype not in WRAPPED_DTYPES:
            return msg.NOT_WRAPPABLE.format(row=row, dtype=t.dtype.name, shape=list(t.shape)), where
    return None


def wrapped_tensors(x: Any, tensors: list[TensorConstant], decoder: Decoder | None = None) -> list[TensorConstant] | None:
    """``tensors`` with the rows ``x`` lists (the ``wrapped`` field of version 4) marked as
    wrapped numbers; when ``x`` is wrong, None, or -- given a ``decoder`` -- its error."""
    problem = _wrapped_problem(x, tensors)
    if problem is not None:
        if decoder is not None:
            decoder.fail(*problem)
        return None
    marked = list(tensors)
    rows: list[int] = x
    for row in rows:
        t = tensors[row]
        marked[row] = TensorConstant.quick(t.dtype, t.shape, t.device, t.data, True)
    return marked


def op_table_3(decoder: Decoder, x: Any) -> list[OpEntry]:
    """The op table: rows ``[name, overload, schema]``."""
    entries: list[OpEntry] = []
    for i, row in enumerate(decoder.list_(x, "ops")):
        where = f"ops[{i}]"
        name, overload, schema = decoder.row(row, where, "[name, overload, schema]", 3)
        entries.append(OpEntry(decoder.str_(name, f"{where}[0]"), decoder.str_(overload, f"{where}[1]"),
                               decoder.str_(schema, f"{where}[2]")))  # fmt: skip
    return entries


class _Numbered:
    """The values numbered so far (``slots``), and how to decode a value among them."""

    def __init__(self, decoder: Decoder) -> None:
        self.decoder = decoder
        self.slots: list[Value] = []

    def value(self, x: Any, where: str, low: int, high: int, depth: int = 0) -> Value:
        """Value ``x``: a number among slots ``low`` to ``high - 1``, or a list of values."""
        decoder = self.decoder
        if type(x) is int:
            if x < 0 or x > _MAX_DIM:
                decoder.fail(msg.OUT_OF_RANGE.format(value=x, low=0, high=_MAX_DIM), where)
            if x < low:
                decoder.fail(msg.INPUT_IN_INPUT, where)
            if x >= high:
                decoder.fail(msg.NO_SUCH_VALUE.format(number=x, count=high), where)
            return self.slots[x]
        if x.__class__ is list:
            if depth >= decoder.limits.nesting:
                decoder.fail(msg.NESTED_TOO_DEEP.format(limit=decoder.limits.nesting), where)
            return ListOf(tuple(self.value(v, f"{where}[{i}]", low, high, depth + 1) for i, v in enumerate(x)))
        decoder.fail(msg.EXPECTED.format(expected=msg.NUMBERED_VALUE, got=_json_kind(x)), where)

    def input(self, x: Any, where: str, names: set[str], count: int) -> Input:
        """An input row; a constant input's value refers to tensor constants and constants only."""
        decoder = self.decoder
        kind = x[0] if x.__class__ is list and x else None
        if kind == "tensor":
            _, name, dtype, shape, device = decoder.row(x, where, "[kind, name, dtype, shape, device]", 5)
            return TensorInput(decoder.input_name(name, f"{where}[1]", names), decoder.named(dtype, f"{where}[2]", _DTYPES),
                               decoder.shape(shape, f"{where}[3]"), decoder.device(device, f"{where}[4]"))  # fmt: skip
        if kind == "constant":
            _, name, value = decoder.row(x, where, "[kind, name, value]", 3)
            checked = decoder.input_name(name, f"{where}[1]", names)
            return ConstantInput(checked, self.value(value, f"{where}[2]", count, len(self.slots)))
        if x.__class__ is not list or not x:
            decoder.fail(msg.EXPECTED.format(expected="a list [kind, ...]", got=_json_kind(x)), where)
        shown = kind if type(kind) is not str or len(kind) <= 120 else kind[:117] + "..."
        decoder.fail(msg.ONE_OF.format(expected="tensor, constant", got=shown), f"{where}[0]")

    def call(self, x: Any, index: int, ops: list[OpEntry], schemas: list[FunctionSchema]) -> Call:
        decoder = self.decoder
        where = f"calls[{index}]"
        if not (x.__class__ is list and len(x) >= 2):
            got = f"a list of {len(x)} item(s)" if x.__class__ is list else _json_kind(x)
            decoder.fail(msg.EXPECTED.format(expected=msg.CALL_ROW, got=got), where)
        op = decoder.int_(x[0], f"{where}[0]", 0, _MAX_DIM)
        if op >= len(ops):
            decoder.fail(msg.NO_SUCH_OP.format(index=op, count=len(ops)), f"{where}[0]")
        outputs = decoder.int_(x[1], f"{where}[1]", 0, _MAX_RESULTS)
        high = len(self.slots)
        values = tuple(self.value(v, f"{where}[{i}]", 0, high) for i, v in enumerate(x[2:], 2))
        entry = ops[op]
        call = Call(entry.name, entry.overload, entry.schema, values, outputs)
        # Checked against the schema before the results are numbered: a row of a few bytes
        # may declare 65,536 results, and a file of such rows would number billions.
        check_call(decoder, index, call, schemas[op])
        self.slots += [ResultRef(index, k) for k in range(outputs)]
        decoder.call_ops.append(op)
        return call


def check_call(decoder: Decoder, index: int, call: Call, schema: FunctionSchema) -> None:
    """Call ``index`` has one value per argument and one result per return of ``schema``."""
    v3 = decoder.version >= 3  # a call is [op, outputs, argument...]
    if len(call.args) != len(schema.arguments):
        problem = msg.ARITY.format(got=len(call.args), name=shorten(call.full_name), expected=len(schema.arguments),
                                   schema=shorten(call.schema, 300))  # fmt: skip
        decoder.fail(problem, f"calls[{index}]" if v3 else f"calls[{index}].args")
    if call.num_outputs != len(schema.returns):
        problem = msg.RESULT_COUNT.format(got=call.num_outputs, name=shorten(call.full_name), expected=len(schema.returns),
                                          schema=shorten(call.schema, 300))  # fmt: skip
        decoder.fail(problem, f"calls[{index}][1]" if v3 else f"calls[{index}].outputs")


def program_3(decoder: Decoder, top: dict[str, Any], ops: list[OpEntry], schemas: list[FunctionSchema]) -> Program:
    """The program of a checked version 3 top-level object; ``decoder.tensors`` holds the
    tensor constants."""
    numbered = _Numbered(decoder)
    rows = decoder.list_(top["inputs"], "inputs")
    count = decoder.inputs = len(rows)
    numbered.slots = [InputRef(i) for i in range(count)]
    numbered.slots += decoder.tensors
    numbered.slots += [Constant(decoder.constant(c, f"constants[{i}]"))
                       for i, c in enumerate(decoder.list_(top["constants"], "constants"))]  # fmt: skip
    names: set[str] = set()
    inputs = tuple(numbered.input(row, f"inputs[{i}]", names, count) for i, row in enumerate(rows))
    calls = tuple(numbered.call(row, i, ops, schemas) for i, row in enumerate(decoder.list_(top["calls"], "calls")))
    decoder.calls = list(calls)
    high = len(numbered.slots)
    outputs = tuple(numbered.value(v, f"outputs[{i}]", 0, high) for i, v in enumerate(decoder.list_(top["outputs"], "outputs")))
    kind = decoder.named(top["output_kind"], "output_kind", _KINDS)
    return decoder.finish(inputs, calls, outputs, kind)
