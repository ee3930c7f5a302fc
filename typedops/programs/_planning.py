"""Memory planning for straight-line static runs: which calls may write into a dead value.

Note [In-place into dead values]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
ExecuTorch's memory planning lets a value that is dead after an instruction give its
memory to the next one. A straight-line static run (Note [Straight-line runs] in
_straight.py) does the same where it is provably invisible: a call of ``core::add.Tensor``
(with ``alpha`` the integer 1) or ``core::mul.Tensor`` whose ``self`` is a *planned-fresh*
value used by nothing else runs as the op's in-place variant, ``add_``/``mul_``, writing
into that value instead of making a new tensor (~0.3 us less a call: no result tensor,
no new array). A value is planned-fresh when it is the one return of a call of an op in
``FRESH`` -- ops whose generated core static wrappers return a new tensor that owns a new
array (or a new meta tensor), never an input or a view of one, C-contiguous when the
op's inputs are (an element-wise result takes its inputs' layout: Note [Element-wise
result strides] in tensor/_strides.py)
(tests/test_programs_planning.py checks it) -- or of a call rewritten in place (its
result is its ``self``, which was planned-fresh and is now dead).

``self`` must be used exactly once in the whole program (by this call: no other call,
no view of it, no output, not this call's other operand), and both the call's wrapper
and the in-place one must be the core library's generated ones (an app may register its
own for a core op name: then nothing is planned). The rewrite is taken per run, by a
guard in the generated code, only when the two calls are provably the same:

- the operands have one dtype (so the out-of-place result has ``self``'s dtype, and
  both kernels take their fast paths: ``a + b`` or ``a += b`` in numpy, the same
  element-wise loop in the same dtype, so the same bits);
- one device (else both refuse, each naming its own op; and ``self``, made by a core
  wrapper, is on CPU or Meta, whose kernels both wrappers have, so neither refuses it
  for want of a kernel);
- ``other``'s shape is a suffix of ``self``'s (it broadcasts to ``self``'s shape, so the
  result has ``self``'s shape), and ``self`` has exactly the contiguous strides of its
  shape, which the out-of-place result would have too (a permuted ``self`` keeps the
  out-of-place call).

Otherwise the call runs as written. Only the static flavor plans: in the dispatch flavor
an in-place op is seen by autograd, modes and the profiler. An array-level run (Note
[Array-level runs] in _arrays.py) plans the same way on arrays, ``relu`` included
(``maximum(r, 0, out=r)``): there every result is a new array the run alone holds.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any, Final

from ..runtime import static_wrapper
from ._straight import Planned

__all__ = ["FRESH", "IN_PLACE", "in_place_calls", "core_wrapper", "is_one"]

# Ops whose core static wrappers (CPU and Meta kernels) return a new tensor owning a new
# C-contiguous array: Note [In-place into dead values].
FRESH: Final = frozenset({"core::matmul", "core::mm", "core::add.Tensor", "core::mul.Tensor", "core::relu"})
# An op and its in-place variant, with the frame position of an ``alpha`` that must be 1 (-1: none).
IN_PLACE: Final[dict[str, tuple[str, int]]] = {"core::add.Tensor": ("core::add_.Tensor", 2),
                                               "core::mul.Tensor": ("core::mul_.Tensor", -1)}  # fmt: skip
_CORE_WRAPPERS: Final = "typedops.core._generated.unboxing"  # the module of the core library's wrappers


def core_wrapper(name: str, function: Callable[..., Any] | None = None) -> Callable[..., Any] | None:
    """The core library's generated unboxed static wrapper registered for ``name`` (and,
    given, the same as ``function``), else None."""
    entry = static_wrapper(name)
    if entry is None or getattr(entry.unboxed, "__module__", None) != _CORE_WRAPPERS:
        return None
    if function is not None and entry.unboxed is not function:
        return None
    return entry.unboxed


def in_place_calls(names: Sequence[str], calls: Sequence[Planned], inputs: int, constants: Sequence[Any],
                   outputs: Sequence[int]) -> list[Callable[..., Any] | None]:  # fmt: skip
    """Per call of a lowered static program (``names[k]`` is call ``k``'s op), the in-place
    wrapper it may run as, under the guard of Note [In-place into dead values], or None."""
    registers = inputs + len(constants)
    uses = Counter(slot for _, _, slots, _ in calls for slot in slots)
    uses.update(outputs)
    fresh: set[int] = set()
    chosen: list[Callable[..., Any] | None] = []
    slot = registers  # the frame slot of the next call's first return
    for name, (boxed, function, slots, returns) in zip(names, calls, strict=True):
        choice = None
        core = not boxed and returns == 1 and core_wrapper(name, function) is not None
        rewrite = IN_PLACE.get(name) if core else None
        if rewrite is not None and slots and slots[0] in fresh and uses[slots[0]] == 1:
            alpha = rewrite[1]
            if alpha < 0 or is_one(slots[alpha] - inputs, constants):
                choice = core_wrapper(rewrite[0])
        chosen.append(choice)
        if core and name in FRESH:
            fresh.add(slot)
        slot += returns
    return chosen


def is_one(number: int, constants: Sequence[Any]) -> bool:
    """Whether constant ``number`` exists and is the integer 1 (not a bool, not 1.0)."""
    return 0 <= number < len(constants) and type(constants[number]) is int and constants[number] == 1
