"""Array-level straight-line runs of static programs: numpy calls between the tensors.

Note [Array-level runs]
~~~~~~~~~~~~~~~~~~~~~~~
A straight-line static run (Note [Straight-line runs] in _straight.py) still pays, per
call, for the tensors between the calls: the static wrapper's key bits, the kernel's
checks, unwrapping each operand's array and wrapping the result in a new ``Tensor``
(~0.4 us a call; the MLP's numpy calls alone are ~0.97x torch's lite interpreter, its
kernels ~1.15x). A program whose every call is a core op with an *array rule* (Note
[Array rules] in typedops/core/kernels/_arrays.py: ``matmul``, ``mm``, ``add.Tensor``
with ``alpha`` the integer 1, ``mul.Tensor``, ``relu``, ``neg``), each called through the
core library's own generated static wrapper, also gets an *array-level* run: it unwraps
its tensor inputs once, calls each rule's numpy function on arrays, and wraps only the
outputs, as new tensors::

    def run(i):
        i0, = i                          # (a wrong count: tensor_run)
        if not (<i0 passes the guard>):
            return tensor_run(i)
        try:
            a0 = array_of(i0)
            r0 = f0(a0, k0)              # matmul's rule: dot of two 2-D arrays
            try:
                r1 = g1(r0, k1)          # add, in place into the dead r0: r0 += k1
            except ValueError:
                r1 = f1(r0, k1)          # (numpy refused: other's shape is not r0's)
                <r1 finished as fresh does>
            ...
        except Exception:
            return tensor_run(i)
        return wrap(r7, D, CPU)

It is the Tensor-level run (``tensor_run``, the straight-line function of Note
[Straight-line runs]) with the tensors taken out, and is taken only when it provably
gives that run's results bit for bit:

- **the guard**, per tensor input the calls use: exactly ``Tensor`` (no subclass), the
  key bits of a plain CPU tensor (so a CPU device, not meta, not requiring grad, no other
  key: the static wrappers pick the CPU kernels by these bits alone), the program's dtype
  ``D``, C-contiguous strides exactly (``contiguous_strides`` of its shape), not a wrapped
  number, not a batching wrapper. A kernel's result takes its first operand's device
  object; so does the array run's output (a tensor constant's is the CPU device object).
  ``D`` is float32 or float64, and every tensor constant the calls use has it (and
  passes the same tests, checked once when the run is made) and so does every tensor
  input's traced dtype: so every operand of every call has ``D``, no op promotes, each
  kernel takes its fast path, and the rule is the numpy call that path makes. A run whose
  inputs fail the guard is the Tensor-level run.
- **the layouts**: the kernels give results with C-contiguous strides (Note [Array
  rules]), the guard gives inputs with them, and the rules' results are finished as the
  kernels finish theirs (``finish_array``; dot's needs nothing), so each call sees the
  arrays its kernel sees: the same shapes and strides, the same values.
- **anything numpy raises** (shapes that do not broadcast, a rule declining a case its
  kernel computes otherwise, a warning made an error) ends the array run, and the whole
  program runs again on the Tensor path, so the user gets typedops' own error (or the
  kernel's result). The array run has written nothing the user can see by then: it
  writes only into its own intermediates (below), never into an input or a constant.
- **memory**: a call whose first operand is a result no other call and no output uses
  writes into it, as Note [In-place into dead values] in _planning.py plans at the
  Tensor level: ``add``/``mul`` as ``+=``/``*=`` (numpy refuses with ValueError, writing
  nothing, when the broadcast shape is not the operand's: then the call runs as
  written), ``relu`` as ``maximum(r, 0, out=r)``. Every result is a new array, so such
  an operand is the run's own.
- **the outputs** are results, each wrapped once (an output listed twice is one tensor,
  as in the Tensor-level run) as a new tensor of dtype ``D`` owning its array, which no
  input, constant or other output shares.

``CompiledProgram.run`` calls a program's array-level run first, before any check of its
inputs, when the run guards every input (each is an operand of some call) and returns
one output: the guard's tests include the run's own (a ``Tensor``), a wrong count of
inputs fails its unpacking, and whatever fails goes to the checked run, which refuses
it in its own words. Otherwise the array-level run stands in for the straight-line
function after the checks.

The source is built as in Note [Straight-line runs]: only from integers (slot, call and
constant numbers, checked to be ``int``) and fixed text; the callables, arrays and
helpers are arguments of the function that makes ``run``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any, Final

from ..vocabulary import ScalarType
from ..core.kernels import ARRAY_DTYPES, ArrayRule, array_rule, finish_array
from ..tensor import CPU, DEVICE_KEY_BITS, Tensor, array_of, contiguous_strides_cached
from ..tracing import Input, TensorInput
from ._planning import core_wrapper, is_one
from ._straight import Planned, as_int

__all__ = ["array_line"]

_ADD: Final = "core::add.Tensor"
_GUARD: Final = ("type({i}) is T and {i}.key_bits == B and {i}._dtype is D"
                 " and {i}._strides == cs({i}._shape) and {i}.is_wrapped_number is False and {i}._batch_level is None")  # fmt: skip
# A result finished as its kernel finishes it (``finish_array``); the test first lets
# through, without a call, what ``finish_array`` returns unchanged.
_FINISH: Final = "{s}if type({r}) is not N or not {r}.flags.c_contiguous:\n{s}    {r} = fin({r})\n"
_IN: Final = " " * 12  # the indent of the calls, in the try block of the run


def _plain(t: Tensor, dtype: ScalarType) -> bool:
    """Whether tensor constant ``t`` passes the guard of Note [Array-level runs]."""
    return (type(t) is Tensor and t.key_bits == DEVICE_KEY_BITS["cpu"] and t._dtype is dtype and t._device is CPU
            and t._strides == contiguous_strides_cached(t._shape) and t.is_wrapped_number is False
            and t._batch_level is None)  # fmt: skip


def _rules(names: Sequence[str], calls: Sequence[Planned], inputs: int, constants: Sequence[Any],
           specs: Sequence[Input]) -> tuple[ScalarType, list[ArrayRule]] | None:  # fmt: skip
    """The program's dtype and each call's array rule, or None when Note [Array-level
    runs] does not apply."""
    registers = inputs + len(constants)
    dtypes: set[ScalarType] = set()
    for name, (boxed, function, slots, returns) in zip(names, calls, strict=True):
        if boxed or returns != 1 or core_wrapper(name, function) is None:
            return None
        probe = array_rule(name, ScalarType.float32)  # its operand count (every rule takes float32)
        if probe is None:
            return None
        operands = probe.operands
        if len(slots) != operands + (name == _ADD) or (name == _ADD and not is_one(slots[2] - inputs, constants)):
            return None
        for slot in slots[:operands]:
            if slot < inputs:
                spec = specs[slot]
                if not isinstance(spec, TensorInput):
                    return None
                dtypes.add(spec.dtype)
            elif slot < registers:
                constant = constants[slot - inputs]
                if not isinstance(constant, Tensor):
                    return None
                dtypes.add(constant.dtype)
    if len(dtypes) != 1:
        return None
    dtype = dtypes.pop()
    if dtype not in ARRAY_DTYPES:
        return None
    rules: list[ArrayRule] = []
    for name, (_, _, slots, _) in zip(names, calls):
        rule = array_rule(name, dtype)
        if rule is None:
            return None
        for slot in slots[: rule.operands]:
            if inputs <= slot < registers and not _plain(constants[slot - inputs], dtype):
                return None
        rules.append(rule)
    return dtype, rules


def array_line(names: Sequence[str], calls: Sequence[Planned], specs: Sequence[Input], constants: Sequence[Any],
               outputs: Sequence[int], single: bool,
               tensor_run: Callable[[Sequence[Any]], Any]) -> Callable[[Sequence[Any]], Any] | None:  # fmt: skip
    """The array-level run of a lowered static program (Note [Array-level runs]) falling
    back to ``tensor_run``, or None when the Note does not apply. ``calls``, ``constants``,
    ``outputs`` and ``single`` are as ``straight_line`` takes them; ``names[k]`` is call
    ``k``'s op, ``specs`` the program's inputs."""
    inputs = len(specs)
    registers = inputs + len(constants)
    found = _rules(names, calls, inputs, constants, specs)
    if found is None or not calls or any(not registers <= as_int(s) < registers + len(calls) for s in outputs):
        return None
    dtype, rules = found
    uses = Counter(slot for _, _, slots, _ in calls for slot in slots)
    uses.update(outputs)
    functions: list[Any] = [tensor_run]
    arrays: list[Any] = []  # the constants' arrays, then the rules' extra arguments
    names_of: dict[int, str] = {}  # frame slot: the variable holding its array
    # Frame slot: its tensor's device (a kernel's result has its first operand's device object).
    devices: dict[int, str] = {}
    guards: list[str] = []
    body: list[str] = []

    def variable(slot: int) -> str:
        slot = as_int(slot)
        if slot not in names_of:
            if slot < inputs:
                guards.append(_GUARD.format(i=f"i{slot:d}"))
                body.append(f"{_IN}a{slot:d} = ar(i{slot:d})\n")
                names_of[slot] = f"a{slot:d}"
                devices[slot] = f"i{slot:d}._device"
            else:  # a tensor constant: its array, read once now (the program alone holds the tensor)
                names_of[slot] = f"k{len(arrays):d}"
                arrays.append(array_of(constants[slot - inputs]))
                devices[slot] = "C"  # _plain: the CPU device object
        return names_of[slot]

    for number, ((_, _, slots, _), rule) in enumerate(zip(calls, rules)):
        operands = [variable(s) for s in slots[: rule.operands]]
        for value in rule.extra:
            operands.append(f"k{len(arrays):d}")
            arrays.append(value)
        arguments = ", ".join(operands)
        result = f"r{number:d}"
        names_of[registers + number] = result
        devices[registers + number] = devices[slots[0]]
        f = f"f{len(functions):d}"
        functions.append(rule.function)
        target = slots[0]
        if rule.in_place is not None and target >= registers and uses[target] == 1:
            g = f"f{len(functions):d}"
            functions.append(rule.in_place)
            if rule.in_place_refuses:
                body.append(f"{_IN}try:\n{_IN}    {result} = {g}({arguments})\n{_IN}except ValueError:\n"
                            f"{_IN}    {result} = {f}({arguments})\n" + _FINISH.format(s=_IN + "    ", r=result))  # fmt: skip
            else:
                body.append(f"{_IN}{result} = {g}({arguments})\n")
        else:
            body.append(f"{_IN}{result} = {f}({arguments})\n" + (_FINISH.format(s=_IN, r=result) if rule.finish else ""))
    wrapped: dict[int, str] = {}  # output slot: the variable of its tensor
    wraps: list[str] = []
    for slot in outputs:
        if slot not in wrapped:
            wrapped[slot] = f"o{len(wrapped):d}"
            wraps.append(f"        {wrapped[slot]} = w({names_of[slot]}, D, {devices[slot]})\n")
    returned = wrapped[outputs[0]] if single else f"[{', '.join(wrapped[s] for s in outputs)}]"
    source = _source(inputs, len(functions), len(arrays), guards, body, wraps, returned)
    import numpy as np

    helpers = (Tensor, DEVICE_KEY_BITS["cpu"], dtype, CPU, contiguous_strides_cached, array_of, np.ndarray,
               finish_array, Tensor._from_array)  # fmt: skip
    namespace: dict[str, Any] = {}
    exec(compile(source, "<array-level program>", "exec"), {"__builtins__": {}, "type": type, "ValueError": ValueError,
                                                             "Exception": Exception}, namespace)  # fmt: skip
    run: Callable[[Sequence[Any]], Any] = namespace["make"](tuple(functions), tuple(arrays), helpers)
    return run


def _source(inputs: int, functions: int, arrays: int, guards: list[str], body: list[str], wraps: list[str],
            returned: str) -> str:  # fmt: skip
    """The source of ``make``, which makes the run of Note [Array-level runs]."""
    if inputs:  # unpacked in a try (free until it raises): a wrong count of inputs is the fallback's to refuse
        unpack = f"        try:\n            {''.join(f'i{n:d}, ' for n in range(as_int(inputs)))}= i\n"
        unpack += "        except ValueError:\n            return t(i)\n"
    else:
        unpack = "        if i:\n            return t(i)\n"
    condition = " and ".join(guards) or "True"
    header = "def make(f, k, g):\n    T, B, D, C, cs, ar, N, fin, w = g\n    t = f[0]\n"
    header += "".join(f"    f{n:d} = f[{n:d}]\n" for n in range(1, as_int(functions)))
    header += "".join(f"    k{n:d} = k[{n:d}]\n" for n in range(as_int(arrays)))
    return (f"{header}    def run(i):\n{unpack}        if not ({condition}):\n            return t(i)\n"
            f"        try:\n{''.join(body)}        except Exception:\n            return t(i)\n"
            f"{''.join(wraps)}        return {returned}\n    return run\n")  # fmt: skip
