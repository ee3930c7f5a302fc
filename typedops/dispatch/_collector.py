"""Pausing the garbage collector while many operators are defined.

Note [Registration and the collector]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Every defined operator leaves long-lived objects the cyclic garbage collector tracks:
about 7 for ``Library.define`` of a native_functions.yaml schema (schema, entry,
handle, ...), 27 for ``@op`` (also its generated entry functions and their attributes).
CPython (through 3.12) runs a *full* collection -- a walk over every tracked object in
the process, which once torch is imported is some 170,000 objects and about 0.1 s --
each time the objects that survived the young generations grow past a quarter of
those the last full collection kept. Defining 10,000 ops one call at a time therefore
walks the whole heap several times, and each op pays for a share of those walks: with
``@op``, about four times the per-op CPU time of a batch of 100 (3.7-4.7x measured;
see benchmarks/bench_op_define.py).

``bulk_registration()`` pauses the collector for a block: ``gc.disable()`` on the way
in, ``gc.enable()`` on the way out -- only if the collector was enabled when the
outermost block began, so a caller who turned it off keeps it off. It is process-wide
and reentrant: one lock and one depth count, so nested blocks and blocks in several
threads overlap safely, and the collector comes back when the *last* of them ends,
exceptions included. ``Library.define_many`` and generated registration
(``Library._define_generated``) run in one.

Why disabling and not ``gc.freeze()``:

- Nothing leaks. CPython keeps counting allocations while the collector is disabled,
  so the first allocation after the block runs the young collection it postponed, and
  the new objects join the oldest generation by the ordinary route (they count toward
  the next full collection). A cycle made inside the block is collected as any other.
  ``gc.freeze()`` would move every object of the process, the caller's young garbage
  included, straight into the permanent generation and back into the oldest one,
  where no allocation counts it: a program alternating small blocks with making
  garbage would never trigger a full collection again.
- ``gc.freeze()``/``gc.unfreeze()`` cannot tell our freezes from the caller's: a
  process that froze its heap before forking would have it unfrozen.

What it costs: while any block runs, no thread's garbage is collected (the state is
process-global; there is no per-thread collector). Blocks are meant to wrap
definitions, which take milliseconds to a second; code that makes much cyclic garbage
belongs outside them. A block's objects are walked once, by one full collection some
time after it -- instead of several during it. The collector's state is restored as
it was at the outermost entry: code that switches the collector on or off *inside* a
block (in any thread) has its switch undone when the last block ends.
"""

from __future__ import annotations

import gc
import threading
from types import TracebackType
from typing import Final

__all__ = ["bulk_registration"]


class _PauseState:
    """The process-wide count of open blocks, and whether the first one disabled the collector."""

    __slots__ = ("lock", "depth", "reenable")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.depth = 0
        self.reenable = False


_STATE: Final = _PauseState()


class bulk_registration:  # noqa: N801  # used like a function: `with bulk_registration():`
    """Pause the garbage collector while a block defines many operators.

    ::

        with typedops.bulk_registration():
            for fn in kernels:
                op(f"myops::{fn.__name__}")(fn)

    Makes the per-op cost of defining thousands of ops the same as of defining a few
    (see Note [Registration and the collector] in dispatch/_collector.py). Reentrant
    and thread-safe; the collector's enabled state is restored when the outermost
    block ends, exceptions included, and objects made in the block stay collectable.
    """

    __slots__ = ()

    def __enter__(self) -> None:
        with _STATE.lock:
            if _STATE.depth == 0:
                _STATE.reenable = gc.isenabled()
                gc.disable()
            _STATE.depth += 1

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        with _STATE.lock:
            _STATE.depth -= 1
            if _STATE.depth == 0 and _STATE.reenable:
                _STATE.reenable = False
                gc.enable()
