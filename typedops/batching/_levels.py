"""vmap levels: which vmaps are running in this thread and asyncio task.

Note [Levels]
~~~~~~~~~~~~~
Every call of a vmapped function opens a *level*: a number, the batch size and the
randomness mode, pushed on a per-context stack (a ``ContextVar``, so each thread and each
asyncio task sees its own, as the dispatcher's key sets are: Note [Thread-local keys] in
dispatch/_tls.py). Level numbers come from one process-wide counter, so a level opened
later -- an inner vmap -- always has a larger number than the levels around it, and a
number is never reused. A batched tensor remembers its level (functorch's design, which
torch.func keeps): an op called with batched tensors works on the *highest* level among
them, the innermost vmap, and treats tensors of lower levels as plain values that happen
to be batched themselves. So nested vmaps never mix their batch dimensions: the inner
one's physical tensor may itself be a batched tensor of the outer level (Note [Batched
tensors] in _tensor.py).

A level is *alive* while its vmap runs: ``push_level`` enters it in ``RUNNING`` (number to
level, one dict for the process) and ``pop_level`` takes it out. A batched tensor whose
level is not running escaped its vmap (kept in a global or a closure); every place that
unwraps a batched tensor -- each rule, the fallback, a user rule -- checks its level there
(one dict lookup) and raises rather than computing with a batch dimension no vmap will
remove. Level numbers are never reused, so a later vmap cannot revive an escaped tensor.
"""

from __future__ import annotations

import contextvars
import itertools
from dataclasses import dataclass, field
from typing import Any, Final, Literal, NamedTuple

from ..dispatch import VmapInfo

__all__ = ["Level", "VmapInfo", "Randomness", "RUNNING", "push_level", "pop_level", "current_levels", "level_alive", "innermost", "SameDraws", "SAME_DRAWS"]

Randomness = Literal["error", "different", "same"]


class Level(NamedTuple):
    """One running vmap: its level number (Note [Levels]), batch size and randomness (a
    named tuple: immutable, and made on every vmapped call, at a third of a frozen
    dataclass's cost)."""

    level: int
    batch_size: int
    randomness: Randomness

    @property
    def info(self) -> VmapInfo:
        return VmapInfo(self.batch_size, self.randomness)


_LEVELS: Final = contextvars.ContextVar[tuple[Level, ...]]("typedops_vmap_levels", default=())
_numbers: Final = itertools.count(1)
RUNNING: Final[dict[int, Level]] = {}  # every running level by number, in any context: Note [Levels]


def push_level(batch_size: int, randomness: Randomness) -> tuple[Level, contextvars.Token[tuple[Level, ...]]]:
    """Open a new level (larger than every level before it); ``pop_level`` closes it."""
    level = Level(next(_numbers), batch_size, randomness)
    token = _LEVELS.set((*_LEVELS.get(), level))
    RUNNING[level.level] = level
    return level, token


def pop_level(token: contextvars.Token[tuple[Level, ...]]) -> None:
    RUNNING.pop(_LEVELS.get()[-1].level, None)
    _LEVELS.reset(token)


def current_levels() -> tuple[Level, ...]:
    """The running vmaps of this context, outermost first."""
    return _LEVELS.get()


def innermost() -> Level | None:
    levels = _LEVELS.get()
    return levels[-1] if levels else None


def level_alive(number: int) -> Level | None:
    """The running level numbered ``number``, or None when its vmap has returned."""
    return RUNNING.get(number)


# Note [Same draws across chunks]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# ``vmap(f, randomness="same", chunk_size=k)`` runs ``f`` once per chunk of samples, and each
# run would draw anew: the chunks would differ where PyTorch gives every sample the same
# values. So the chunked run keeps a ``SameDraws`` here while its chunks run: the first
# chunk's "same" draws are kept in order, and each later chunk, from its start (``cursor``
# back at 0), is given copies of them, a draw of another op or size drawing anew. The
# generator thus advances once, as without chunks. ("different" draws need nothing: each
# chunk draws its own samples' values, in order, as one unchunked draw does.)
@dataclass(slots=True)
class SameDraws:
    """The draws of a chunked "same" vmap: Note [Same draws across chunks]."""

    draws: list[tuple[Any, Any]] = field(default_factory=lambda: [])  # (the call's key, a copy of its result)
    cursor: int = 0


SAME_DRAWS: Final = contextvars.ContextVar["SameDraws | None"]("typedops_vmap_same_draws", default=None)
