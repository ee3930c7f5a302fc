"""Compiling a version 3 file's numbered values straight to a lowered program, for ``load``.

Note [Compiled from the numbered values]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
``load`` of a common version 3 file reads it on the fast path (Note [The fast path of
reading] in _fast.py) into the values it numbers -- the inputs, tensor constants,
constants, then each call's results -- and each call's row of numbers. The frame of a
lowered run (Note [Lowered runs] in _lowering.py) is numbered almost alike: the inputs,
the constants (one slot a use, tensor constants made into tensors), then each call's
results. So ``compile_numbered`` makes the lowered program from the rows, in one pass,
with no ``Call`` and no ``Program`` made first (making them, then walking them in
``compile_program`` and ``lower_calls``, was about a quarter of a load): a number below
the inputs' count is its frame slot, one among the constants takes the next constant
slot, a result's is its number past the constants plus the count of constant uses.

It does exactly what ``compile_program`` then ``lower_calls`` do, and nothing else:
the same ops resolved in the same order (``resolve_handle``), each value checked as
``argument_problems`` checks it -- a tensor input, tensor constant or tensor result
passed where a tensor is taken in a comparison, any other call through
``argument_problems`` itself -- and the same steps, constants and frame slots
(tests/test_programs_direct.py compares them). It gives up (None) wherever those would do
anything else -- a recorded schema that is not the registered one (``fit_call``'s), a
value that does not fit (``compile_program`` names it), a written tensor constant or a
call without returns (assembled) -- and ``load`` then makes the ``Program`` and compiles
it as before, so every refusal is worded as it was. The ``Program`` itself is made the
first time ``CompiledProgram.program`` is read.
"""

from __future__ import annotations

from typing import Any, Final

from ..vocabulary import BoundedCache
from ..schema import Type
from ..tensor import Tensor
from ..tracing import argument_problems
from ._fast import Numbered
from ._interpreter import CompiledProgram, Flavor, _Op, resolve_handle, tensor_of
from ._lowering import Boxed, Lowered, Step, Unboxed, _gather, call_step

__all__ = ["compile_numbered"]

# Note [Constants known to fit]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# Whether a constant fits its argument (``argument_problems`` of a ``Constant``) is
# ``boxing.mismatch`` of the argument's type and the value: it depends on nothing else.
# So a constant that fitted once -- ``alpha=1`` of every ``add`` in a model -- is
# remembered by (the schema's facts, the argument's position, the value's type, the
# value), the facts kept alive so their id is not reused, in a bounded cache; a call whose
# other values pass their comparisons and whose constants are all remembered is not
# checked again. The value's type is in the key (``True == 1``, ``1 == 1.0``); the
# values are JSON's literals (None, bool, int, str, finite float), all hashable, and two
# equal ones of one type fit the same types (0.0 and -0.0 included).
_Fit = tuple[int, int, type, Any]
_FITS: Final = BoundedCache[_Fit, bool](4096, "constants known to fit")


def _resolved(numbered: Numbered, row: int, flavor: Flavor, dispatched: list[str], found: dict[tuple[str, str], _Op]) -> _Op | None:
    """Op row ``row`` resolved for ``flavor`` (once per op, as ``compile_program`` does), or
    None when the file recorded a schema other than the registered one."""
    name, overload, _, handle, schema = numbered.ops[row]
    op = found.get((name, overload))
    if op is None:
        op = found[(name, overload)] = resolve_handle(handle, name, f"{name}.{overload}" if overload else name, flavor,
                                                      dispatched)  # fmt: skip
    return op if op[0] is schema else None


def compile_numbered(numbered: Numbered, flavor: Flavor) -> CompiledProgram | None:
    """``compile_program`` of ``numbered``'s program for ``flavor``, made from its numbered
    values, or None when Note [Compiled from the numbered values] does not apply."""
    inputs, rows, layout, values = numbered.inputs, numbered.rows, numbered.layout, numbered.constants
    count = len(inputs)
    constants_from = count + len(layout)  # the numbers of constants (after the tensor constants)
    results_from = numbered.results
    uses = 0  # the uses of tensor constants and constants: their frame slots
    for row in rows:
        for number in row[2:]:
            if count <= number < results_from:
                uses += 1
    for number in numbered.output_numbers:
        if count <= number < results_from:
            uses += 1
    registers = count + uses - results_from  # a result's frame slot is its number plus this
    constant = count  # the frame slot of the next constant use
    constants: list[Any] = []
    per_row: list[_Op | None] = [None] * len(numbered.ops)
    found: dict[tuple[str, str], _Op] = {}
    dispatched: list[str] = []
    returns: list[tuple[Type, ...]] = []  # per call, for argument_problems
    tensor_returns: list[tuple[bool, ...]] = []
    tensor_results: list[bool] = []  # per result, numbered from 0
    shapes: list[tuple[tuple[bool, ...], int]] = []  # per call, what it writes and its returns
    steps: list[Step] = []
    ops: list[Boxed] = []
    unboxed: list[Unboxed | None] = []
    for index, row in enumerate(rows):
        op = per_row[row[0]]
        if op is None:
            op = per_row[row[0]] = _resolved(numbered, row[0], flavor, dispatched, found)
            if op is None:
                return None
        _, entry, facts, _, one_return, (writes, returned) = op
        if not returned:
            return None
        takes_tensor = facts.tensors
        unchecked: list[_Fit] = []  # the constants of this call not known to fit
        frame: list[int] = []
        fits = True  # every value is one argument_problems passes in a comparison
        for position, number in enumerate(row[2:]):
            if number < count:
                frame.append(number)
                fits = fits and takes_tensor[position]
            elif number < results_from:
                if number < constants_from:
                    if writes[position]:
                        return None  # a written tensor constant: a fresh tensor a run (assembled)
                    fits = fits and takes_tensor[position]
                    constants.append(_tensor_constant(numbered, number - count))
                else:
                    value = values[number - constants_from]
                    constants.append(value)
                    key = (id(facts), position, value.__class__, value)
                    if fits and _FITS.get(key) is None:
                        fits = False
                        unchecked.append(key)
                frame.append(constant)
                constant += 1
            else:
                frame.append(number + registers)
                fits = fits and takes_tensor[position] and tensor_results[number - results_from]
        if not fits:
            if argument_problems(inputs, index, numbered.values(row[2:]), facts, returns, tensor_returns):
                return None  # compile_program names the problem
            for key in unchecked:  # every value fits: these constants too
                _FITS.put(key, True, keep=facts)
        returns.append(facts.returns)
        tensor_returns.append(facts.tensor_returns)
        tensor_results += facts.tensor_returns
        shapes.append((writes, returned))
        ops.append(entry)
        unboxed.append(one_return)
        steps.append(call_step(entry, one_return, frame, count, constants))
    outputs: list[int] = []
    for number in numbered.output_numbers:
        if number < count:
            outputs.append(number)
        elif number < results_from:
            if number < constants_from:
                constants.append(_tensor_constant(numbered, number - count))
            else:
                constants.append(values[number - constants_from])
            outputs.append(constant)
            constant += 1
        else:
            outputs.append(number + registers)
    lowered: Lowered = (tuple(steps), _gather(outputs), outputs[0] if outputs else -1, (), tuple(outputs))
    return CompiledProgram(numbered, flavor, None, tuple(ops), tuple(dispatched), unboxed, (lowered, tuple(constants), []),
                           shapes)  # fmt: skip


def _tensor_constant(numbered: Numbered, row: int) -> Tensor:
    """Tensor constant ``row`` as a new tensor of its own (a wrapped number when the file
    marks it one: Note [Wrapped numbers in programs] in tracing/_values.py)."""
    dtype, shape, device, start, stop = numbered.layout[row]
    made = tensor_of(dtype, shape, device, numbered.blob[start:stop])
    if row in numbered.wrapped:
        made.is_wrapped_number = True
    return made

