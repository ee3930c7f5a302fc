"""A lowered program's steps as one straight-line Python function.

Note [Straight-line runs]
~~~~~~~~~~~~~~~~~~~~~~~~~
A lowered run (Note [Lowered runs] in _lowering.py) costs, per call, one iteration of
the step loop: unpacking the step, comparing its kind, reading the frame slots, appending
the result. Written out as straight-line code -- one local variable a frame slot, one
line a call::

    def run(i):
        i0, = i
        r0 = f0(i0, k0)
        r1 = f1(r0, k1, k2)
        r2 = f2(r1)
        return r2

-- the same calls, with the same arguments, in the same order, take ~0.08 us less each
(the MLP of benchmarks/bench_programs.py: ~0.65 us of a ~20 us run). The source is built
only from integers (slot, call and constant numbers, formatted by ``%d`` from values
checked to be ``int``) and fixed text; the callables and constants are the arguments
of the function that makes ``run`` (closure cells), never source text. Nothing from the
program file reaches the source.

Compiling the source costs far more than a run saves (~65 us for the MLP's eight calls,
about 100 runs' saving), so a program is compiled only once it has run
``STRAIGHT_AFTER`` times with the step loop (a program run a few times never pays for
it), and only when it has at most ``STRAIGHT_MAX_CALLS`` calls (a longer function
compiles slower per line and gains little more). ``load`` and ``compile_program`` compile
nothing.

The straight-line function keeps every value alive until it returns, as the frame list
of the step loop does; a boxed call's returns are unpacked into exactly as many variables
as its ``STORE`` moves, as the step loop appends them. In the static flavor a call may
also be written as a guard choosing between its in-place variant and itself (Note
[In-place into dead values] in _planning.py; ``_GUARD`` below, fixed text too). A static
program whose calls all have array rules gets, over this function, an array-level run
that calls numpy between the tensors and falls back to this one (Note [Array-level runs]
in _arrays.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

from ..tensor import cached_contiguous_strides

__all__ = ["STRAIGHT_AFTER", "STRAIGHT_MAX_CALLS", "Planned", "straight_line", "as_int"]

STRAIGHT_AFTER: Final = 100  # runs with the step loop before a program is compiled
STRAIGHT_MAX_CALLS: Final = 1000  # longer programs keep the step loop

# One call of a lowered program: (whether it is boxed, its callable, the frame slots of
# its arguments, how many returns it stores).
Planned = tuple[bool, Callable[..., Any], tuple[int, ...], int]


# Note [In-place into dead values] in _planning.py: one dtype, one device, ``other``'s
# shape a suffix of ``self``'s, and ``self`` contiguous (``cg``: its shape's remembered
# contiguous strides, or None). The device is a frozen dataclass: ``is`` first (the CPU
# device is one object), ``==`` otherwise.
_GUARD: Final = (
    "        if ({s}._dtype is {o}._dtype and ({s}._device is {o}._device or {s}._device == {o}._device)\n"
    "                and {s}._shape[len({s}._shape) - len({o}._shape):] == {o}._shape\n"
    "                and {s}._strides == cg({s}._shape)):\n"
    "            {r} = {g}({a})\n"
    "        else:\n"
    "            {r} = {f}({a})\n"
)


def as_int(value: object) -> int:
    if type(value) is not int or value < 0:  # the source is made of these alone
        raise AssertionError(f"not a slot number: {value!r}")
    return value


def straight_line(calls: Sequence[Planned], inputs: int, constants: Sequence[Any], outputs: Sequence[int],
                  single: bool, in_place: Sequence[Callable[..., Any] | None] = ()) -> Callable[[Sequence[Any]], Any]:  # fmt: skip
    """``run(inputs)`` running ``calls`` in order on a frame of ``inputs`` inputs, then
    ``constants``, then each call's returns; it returns the value in frame slot
    ``outputs[0]`` when ``single``, else a list of the values in ``outputs``.
    ``in_place[k]``, when given, is the in-place wrapper call ``k`` runs as when its
    operands pass the guard of Note [In-place into dead values] in _planning.py."""
    registers = as_int(inputs) + len(constants)
    names = [f"i{n:d}" for n in range(inputs)] + [f"k{n:d}" for n in range(len(constants))]
    body: list[str] = [f"        {''.join(f'{name}, ' for name in names[:inputs])}= i\n"] if inputs else []
    used_constants: set[int] = set()
    functions: list[Callable[..., Any]] = []

    def slot(number: int) -> str:
        number = as_int(number)
        if inputs <= number < registers:
            used_constants.add(number - inputs)
        return names[number]  # an IndexError for a slot no earlier step filled

    for number, (boxed, function, slots, returns) in enumerate(calls):
        f = f"f{len(functions):d}"
        functions.append(function)
        alternative = in_place[number] if number < len(in_place) else None
        arguments = ", ".join(slot(s) for s in slots)
        results = [f"r{len(names) - registers + n:d}" for n in range(as_int(returns))]
        if boxed:
            body.append(f"        s = [{arguments}]\n        {f}(s)\n")
            if results:
                body.append(f"        {''.join(f'{r}, ' for r in results)}= s\n")
        else:
            if len(results) != 1:
                raise AssertionError("an unboxed call has one return")
            if alternative is not None:  # Note [In-place into dead values]: its guard, then the in-place wrapper
                target, other = slot(slots[0]), slot(slots[1])
                g = f"f{len(functions):d}"
                functions.append(alternative)
                body.append(_GUARD.format(s=target, o=other, r=results[0], g=g, f=f, a=arguments))
            else:
                body.append(f"        {results[0]} = {f}({arguments})\n")
        names += results
    returned = slot(outputs[0]) if single else f"[{', '.join(slot(s) for s in outputs)}]"
    header = "def make(f, k):\n"
    header += "".join(f"    f{n:d} = f[{n:d}]\n" for n in range(len(functions)))
    header += "".join(f"    k{n:d} = k[{n:d}]\n" for n in sorted(used_constants))
    source = f"{header}    def run(i):\n{''.join(body)}        return {returned}\n    return run\n"
    namespace: dict[str, Any] = {}
    # No linecache entry (it would outlive the program): a traceback names the file and line.
    globals_: dict[str, Any] = {"__builtins__": {}, "len": len, "cg": cached_contiguous_strides}
    exec(compile(source, "<straight-line program>", "exec"), globals_, namespace)
    run: Callable[[Sequence[Any]], Any] = namespace["make"](tuple(functions), tuple(constants))
    return run
