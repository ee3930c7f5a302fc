"""Pausing the garbage collector while many operators are defined.

Note [Registration and the collector]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Every defined operator leaves long-lived objects the cyclic garbage collector tracks:
about 7 for ``Library.define`` of a native_functions.yaml schema (schema, entry,
handle, ...), 25 for ``@op`` (also its generated entry functions and their attributes).
CPython (through 3.12) runs a *full* collection -- a walk over every tracked object in
the process, which once torch is imported is some 170,000 objects and about 0.1 s --
each time the objects that survived the young generations grow past a quarter of
those the last full collection kept. Defining 10,000 ops one call at a time therefore
walked the whole heap several times, and each op paid for a share of those walks: with
``@op``, about four times the per-op CPU time of a batch of 100 (3.6-4.7x measured;
see benchmarks/bench_op_define.py). A plain loop of definitions now postpones the full
collections until it ends (Note [Registration bursts], below); a block pauses the
collector altogether.

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

import enum
import gc
import sys
import sysconfig
import threading
from collections.abc import Callable
from types import TracebackType
from typing import Final

__all__ = ["bulk_registration", "note_registration"]


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


# Note [Registration bursts]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~
# A plain loop of ``@op`` or ``lib.define`` calls has no block to pause the collector
# around, yet grows the heap by long-lived objects only, and CPython's rule (a full
# collection whenever the survivors grow by a quarter of what the last one kept) walks
# the whole process several times over it to find next to no garbage: a 10,000-op loop
# cost ~3.5x per op what a 100-op one did (CPU time). So the dispatcher treats
# consecutive definitions (and kernel registrations: ``note_registration`` is called by
# ``Dispatcher.define_all`` and ``register_kernel``) as a *burst* and postpones only the
# full collections until it ends:
#
# - the first definition while the collector is enabled (and automatic) raises the
#   third threshold (``gc.set_threshold(t0, t1, _POSTPONED)``); young collections go on
#   as before, so short-lived cycles -- the caller's and ours -- are still collected;
# - a callback in ``gc.callbacks`` sees every collection start. The burst ends at the
#   first one with no definition since the previous one (the loop is over: the next
#   ~700 container allocations made none), or after ``_MAX_YOUNG`` collections in one
#   burst (a program defining an op every few hundred allocations forever still gets
#   its full collections, at most that many young collections apart). Ending restores
#   the thresholds the burst found -- unless someone changed them meanwhile, whose
#   setting then stands -- and the next collection is full if one is due: the burst's
#   objects are walked once, soon after it, instead of several times during it;
# - after a burst ends, the next one may begin only once a collection has started under
#   the restored thresholds, so a postponed full collection is never postponed again.
#
# What it costs a program: ``gc.get_threshold()`` shows ``_POSTPONED`` as its third
# value while a burst runs; cycles that outlive the young generations wait for the
# burst's end (as in ``bulk_registration``, but young collections keep running); and the
# callback stays in ``gc.callbacks`` once a burst has run (removing it from inside a
# collection would make CPython skip the next callback of that round; a burst puts it
# back if someone cleared the list, but clearing it *during* a burst leaves full
# collections postponed until ``gc.set_threshold`` is called). It changes
# nothing while the collector is disabled or automatic collection is off
# (``gc.set_threshold(0)``), and nothing where the collector is not CPython's
# generational one with the quarter rule (other implementations, the free-threaded
# build, and 3.14's incremental collector, where the third threshold means something
# else): there ``note_registration`` only counts.
#
# State changes take one lock; the callback only *tries* it (a collection can start in
# a thread that holds it, or while another thread does) and, failing, looks again at
# the next collection. The count of definitions is read without it: a lost increment
# can only end a burst one collection early.


class _Phase(enum.Enum):
    idle = "idle"  # no burst: the thresholds are the program's
    deferring = "deferring"  # a burst runs: the third threshold is ours
    restoring = "restoring"  # just ended: waiting for a collection under the restored thresholds


_POSTPONED: Final = 1 << 30  # the third threshold while a burst runs: no full collection is due
_MAX_YOUNG: Final = 1000  # collections one burst may span (~700,000 container allocations at t0=700)
_SUPPORTED: Final = (
    sys.implementation.name == "cpython"
    and (3, 10) <= sys.version_info < (3, 14)
    and not sysconfig.get_config_var("Py_GIL_DISABLED")
)


class _BurstState:
    __slots__ = ("lock", "phase", "definitions", "seen", "young", "max_young", "saved", "ours", "watcher")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.phase = _Phase.idle
        self.definitions = 0  # every note_registration() call, ever
        self.seen = 0  # ``definitions`` when the last collection started
        self.young = 0  # collections since the burst began
        self.max_young = _MAX_YOUNG
        self.saved: tuple[int, ...] = ()
        self.ours: tuple[int, ...] = ()
        self.watcher: Callable[[str, dict[str, int]], None] | None = None  # the gc.callbacks entry


_BURST: Final = _BurstState()
_IDLE: Final = _Phase.idle


def note_registration() -> None:
    """Count one definition; the first of a burst postpones full collections until the
    burst ends (Note [Registration bursts])."""
    state = _BURST
    state.definitions += 1
    # Tested without the lock first: inside bulk_registration() every definition comes here.
    if state.phase is _IDLE and _SUPPORTED and gc.isenabled():
        _begin(state)


def _begin(state: _BurstState) -> None:
    with state.lock:
        if state.phase is not _Phase.idle or not gc.isenabled():
            return
        saved = gc.get_threshold()
        if saved[0] == 0:
            return  # automatic collection is off
        if state.watcher is None:
            state.watcher = _watcher(state)
        if state.watcher not in gc.callbacks:  # first burst, or someone cleared the list
            gc.callbacks.append(state.watcher)
        state.saved = saved
        state.ours = (saved[0], saved[1], _POSTPONED)
        state.seen = state.definitions - 1  # this definition counts as one since the last collection
        state.young = 0
        state.phase = _Phase.deferring
        gc.set_threshold(*state.ours)


def _watcher(state: _BurstState) -> Callable[[str, dict[str, int]], None]:
    """The ``gc.callbacks`` entry that ends bursts (Note [Registration bursts]). It reads
    no module globals: collections still run while the interpreter clears modules."""
    idle, deferring, restoring = _Phase.idle, _Phase.deferring, _Phase.restoring
    get_threshold, set_threshold = gc.get_threshold, gc.set_threshold

    def on_collection(phase: str, info: dict[str, int]) -> None:
        if phase != "start" or state.phase is idle or not state.lock.acquire(blocking=False):
            return
        try:
            if state.phase is restoring:
                state.phase = idle  # this collection was chosen under the restored thresholds
            elif state.phase is deferring:
                if state.definitions == state.seen or state.young >= state.max_young:
                    if get_threshold() == state.ours:
                        set_threshold(*state.saved)
                    state.phase = restoring
                else:
                    state.seen = state.definitions
                    state.young += 1
        finally:
            state.lock.release()

    return on_collection
