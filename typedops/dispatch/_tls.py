"""Include and exclude key sets per thread and per asyncio task, changed only through
context managers.

Note [Thread-local keys]
~~~~~~~~~~~~~~~~~~~~~~~~
Each caller's context has its own include set (keys added to every call's key set, e.g.
Tracer while tracing) and exclude set (keys removed, e.g. the autograd keys inside an
autograd kernel). They live in one ``contextvars.ContextVar``, so each thread *and* each
asyncio task sees its own (a task starts with a copy of its creator's sets; a thread
starts empty). Reading the variable on every call would still cost more than the rest
of the dispatch, so a process-wide count ``STATE.active`` says how many include/exclude
blocks are open anywhere. Calls read the variable only while it is non-zero; a context
with nothing open then finds empty sets, so the answer is right everywhere, and the
common case (nothing open anywhere) costs one global load.

Note [The open-blocks list]
~~~~~~~~~~~~~~~~~~~~~~~~~~~
The count is the length of one list, ``STATE.open``, that never changes identity:
entering a block appends an item, leaving one pops an item (any item: only the length
means anything). Generated entry code holds the list itself as its global
``_tls_active`` and tests its truth, which is its length. A ``list.append`` or
``list.pop`` is one C call, atomic under the GIL, so threads opening and closing blocks
at once never lose a change, with no lock; and since the global is the list, not a copy
of a number, there is no copy to keep current -- no write of a stale count by a thread
that lost a race. (An int counter needed a lock and a write into each namespace holding
a copy, a third of what opening a block cost.)

Note [Order-independent exits]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
The variable holds the open blocks themselves, in the order they were entered, with the
sets they add up to. Leaving a block removes *that* block and recomputes the sets from
the blocks still open -- it does not restore a saved value. So blocks that exit out of
order (a ``with`` inside a generator suspended while its caller opened and closed
another) leave exactly the blocks still open in force, never a stale copy. A ``with``
inside a generator body does act on the caller while the generator is suspended: Python
runs a generator in its caller's context (PEP 568 would change that). Used as
decorators, ``include_keys``/``exclude_keys`` on a generator function enter and leave
around each step instead, so nothing leaks out of a suspended generator.
"""

from __future__ import annotations

import contextvars
import functools
import inspect
from collections.abc import Callable, Generator, Iterable
from typing import Any, Final, TypeVar

from ..vocabulary import DispatchKey, DispatchKeySet
from ._kernel import Boxed, call_through_stack

__all__ = [
    "include_keys", "exclude_keys", "allow_keys", "KeysChanged", "local_include", "local_exclude",
    "keep_flag_in", "local_sets", "STATE", "python_modes", "set_python_modes", "python_fallback",
]  # fmt: skip

F = TypeVar("F", bound=Callable[..., Any])


class _State:
    __slots__ = ("open",)

    def __init__(self) -> None:
        # One item per open include/exclude block, all threads together (Note [The
        # open-blocks list]).
        self.open: Final[list[None]] = []

    @property
    def active(self) -> int:
        """How many include/exclude blocks are open, all threads together."""
        return len(self.open)

    def change(self, delta: int) -> None:
        """Count ``delta`` more open blocks (fewer when negative)."""
        if delta > 0:
            self.open.extend([None] * delta)
        for _ in range(-delta):
            _close()


STATE = _State()
_open: Final = STATE.open.append


def _close() -> None:
    try:
        STATE.open.pop()
    except IndexError:  # a block left that was never entered: nothing to take back
        pass


def keep_flag_in(namespace: dict[str, Any]) -> None:
    """Give ``namespace`` the list of open blocks as ``_tls_active``, true while any block
    is open anywhere (Note [The open-blocks list])."""
    namespace["_tls_active"] = STATE.open


class _Block:
    """One open include/exclude block: which ``KeysChanged`` opened it, and its keys."""

    __slots__ = ("owner", "include", "exclude", "allow")

    def __init__(self, owner: object, include: int, exclude: int, allow: int = 0) -> None:
        self.owner = owner
        self.include = include
        self.exclude = exclude
        self.allow = allow  # keys whose outer exclusion this block lifts (not included)


# (include bits, exclude bits, the open blocks in entry order, the Python key's mode
# stack): Note [Order-independent exits], Note [The Python key's modes].
_Sets = tuple[int, int, tuple[_Block, ...], tuple[Any, ...]]
_EMPTY: Final[_Sets] = (0, 0, (), ())
_SETS: Final = contextvars.ContextVar[_Sets]("typedops_dispatch_keys", default=_EMPTY)
_get = _SETS.get
local_sets: Final = _get  # what generated entry code reads: (include, exclude, blocks, modes)


def _sets_of(blocks: tuple[_Block, ...], modes: tuple[Any, ...]) -> _Sets:
    include = exclude = 0
    for block in blocks:
        # Including a key undoes an outer exclusion of it, and the other way round.
        include = (include | block.include) & ~block.exclude
        exclude = (exclude | block.exclude) & ~block.include & ~block.allow
    return include, exclude, blocks, modes


def local_include() -> DispatchKeySet:
    """This thread's (and asyncio task's) include set."""
    return DispatchKeySet.from_bits(_get()[0])


def local_exclude() -> DispatchKeySet:
    """This thread's (and asyncio task's) exclude set."""
    return DispatchKeySet.from_bits(_get()[1])


# Note [The Python key's modes]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# The stack of dispatch modes (typedops.modes) is per-context state of the Python key and
# lives in the same context variable as the include and exclude sets, as PyTorch keeps its
# dispatch-mode stack in c10's thread-local state beside the key sets. Dispatch calls
# none of the modes: the modes layer owns what the entries mean, and hands the Python
# key's fallback a function that calls one (``python_fallback``). Keeping both in one
# variable lets the Python key's fallback pop the innermost mode and shift the key sets
# for its handler in one ``ContextVar.set``, and undo both with another (Note [Hiding
# included keys]); two variables took two more writes per handled call.
def python_modes() -> tuple[Any, ...]:
    """This context's dispatch-mode stack, innermost last (Note [The Python key's modes])."""
    return _get()[3]


def set_python_modes(modes: tuple[Any, ...]) -> None:
    """Replace this context's dispatch-mode stack; the key sets are kept."""
    include, exclude, blocks, _ = _get()
    _SETS.set((include, exclude, blocks, modes))


# Note [Hiding included keys]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~
# The Python key's fallback hands a call to user code (a dispatch mode's handler) which
# calls the op again, and that inner call must skip the keys the outer call already
# passed (Note [Handlers call below the keys above Python] in modes/_mode.py) and, when
# no mode is left, the Python key itself. An exclude block would do it, but opening and
# closing one costs more (the count of open blocks, a new block and its sets each way).
# ``python_fallback`` instead makes one write of this context's sets for the handler's
# duration: the innermost mode popped, the Python key dropped from the *include* set when
# no mode is left -- a tensor carrying the key (a fake tensor) still reaches it -- and the
# keys above Python added to the exclude set; a second write puts back what it saved,
# exceptions included. It opens no block, so it works only while some block is open
# (calls read the sets only then; a mode's own include block normally is): with none
# open anywhere it opens one first. A block entered or left in between recomputes the
# sets from the open blocks, which brings the hidden keys back: the fallback must still
# be right when its key is reached again (only slower), and it is, as it reads the mode
# stack afresh. The work is done here, beside the state, rather than through
# ``shift``/``restore`` functions the modes layer would call: each function call is a
# frame on every handled call (about 100 ns measured for the two).
def python_fallback(
    handle: Callable[[Any, Any, list[Any]], None],
    handle_unboxed: Callable[[Any, Any, tuple[Any, ...], dict[str, Any]], Any],
    otherwise: Callable[[Any, Any, list[Any]], None],
    above: int,
) -> Boxed:
    """The boxed fallback of the Python key: with a mode on this context's stack, calls
    ``handle(mode, op, stack)`` for the innermost one with it popped and the key sets
    shifted below ``above`` (Note [Hiding included keys]); with none, ``otherwise(op,
    keys, stack)``. Its unboxed twin (Note [Unboxed twins of boxed kernels] in
    _operator.py) calls ``handle_unboxed(mode, op, args, kwargs)`` the same way, and takes
    the boxed way when no mode is on."""
    python = 1 << DispatchKey.Python
    block = KeysChanged(0, above)
    # The last (sets, shifted sets) pair: calls in a row under one mode share the shifted
    # tuple. Holding ``sets`` keeps its id from being reused; one tuple, written whole,
    # so threads racing on it see one pair or another, never a mix.
    last: tuple[_Sets, _Sets] = (_EMPTY, _EMPTY)

    def shift(saved: _Sets, modes: tuple[Any, ...]) -> None:
        nonlocal last
        pair = last
        if pair[0] is saved:
            _SETS.set(pair[1])
        else:
            rest = modes[:-1]
            shifted = (saved[0] & ~(0 if rest else python), saved[1] | above, saved[2], rest)
            last = (saved, shifted)
            _SETS.set(shifted)

    def fallback(op: Any, keys: Any, stack: list[Any]) -> None:
        saved = _get()
        modes = saved[3]
        if not modes:
            otherwise(op, keys, stack)
            return
        if not STATE.active:  # the shift would not be read: a block of its own first
            with block:
                fallback(op, keys, stack)
            return
        shift(saved, modes)
        try:
            handle(modes[-1], op, stack)
        finally:
            blocks = _get()[2]
            _SETS.set(saved if blocks is saved[2] else _sets_of(blocks, saved[3]))

    def unboxed(op: Any, keys: Any, /, *args: Any, **kwargs: Any) -> Any:
        saved = _get()
        modes = saved[3]
        if not modes or not STATE.active:  # rare: the boxed way, as a boxing wrapper would
            return call_through_stack(op, lambda stack: fallback(op, keys, stack), args, kwargs)
        shift(saved, modes)
        try:
            return handle_unboxed(modes[-1], op, args, kwargs)
        finally:
            blocks = _get()[2]
            _SETS.set(saved if blocks is saved[2] else _sets_of(blocks, saved[3]))

    fallback.__name__ = fallback.__qualname__ = "python_fallback"  # as dumps name it
    return Boxed(fallback, unboxed=unboxed)


def _as_bits(keys: Iterable[DispatchKey | str] | DispatchKey | DispatchKeySet | str) -> int:
    if isinstance(keys, DispatchKeySet):
        return int(keys)
    return int(DispatchKeySet(keys))  # a single key or key name counts as one key


# Note [A block alone]
# ~~~~~~~~~~~~~~~~~~~~
# Most blocks open in a context where nothing else is open (a vmapped call, ``no_grad``
# around plain code): the context's sets are the shared ``_EMPTY``. Each ``KeysChanged``
# keeps the sets of itself alone, made on first use, and entering it there sets that
# tuple; leaving finds it still in place (an identity test) and puts ``_EMPTY`` back.
# Blocks never change, so one tuple serves every context and thread this object is
# entered in; anything else -- another block or a mode in between, the same object
# nested -- takes the general way of Note [Order-independent exits], which also puts
# ``_EMPTY`` back when nothing is left, so the next block finds it again.
class KeysChanged:
    """A block that adds ``include`` and removes ``exclude`` from every call's key set in
    the current thread and asyncio task; a context manager, and a decorator (also of
    generator functions, entered around each step)."""

    __slots__ = ("_include", "_exclude", "_allow", "_alone")

    def __init__(self, include: int, exclude: int, allow: int = 0) -> None:
        self._include = include
        self._exclude = exclude
        self._allow = allow
        self._alone: _Sets | None = None  # Note [A block alone]

    def __enter__(self) -> None:
        sets = _get()
        _open(None)
        if sets is _EMPTY:
            alone = self._alone
            if alone is None:
                alone = self._alone = _sets_of((_Block(self, self._include, self._exclude, self._allow),), ())
            _SETS.set(alone)
            return
        _, _, blocks, modes = sets
        _SETS.set(_sets_of((*blocks, _Block(self, self._include, self._exclude, self._allow)), modes))

    def __exit__(self, *exc: object) -> None:
        # Remove the innermost block this object opened in this context; the same object
        # may be open in several tasks or nested in one.
        sets = _get()
        if sets is self._alone:
            _SETS.set(_EMPTY)
        else:
            _, _, blocks, modes = sets
            for i in range(len(blocks) - 1, -1, -1):
                if blocks[i].owner is self:
                    rest = blocks[:i] + blocks[i + 1 :]
                    _SETS.set(_sets_of(rest, modes) if rest or modes else _EMPTY)
                    break
        _close()

    def __call__(self, fn: F) -> F:
        if inspect.isgeneratorfunction(fn):
            return self._wrap_generator(fn)

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with KeysChanged(self._include, self._exclude, self._allow):
                return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]  # same signature as fn

    def _wrap_generator(self, fn: F) -> F:
        include, exclude, allow = self._include, self._exclude, self._allow

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Generator[Any, Any, Any]:
            # Each step of the generator runs inside the block; the caller, between
            # steps, runs outside it (Note [Order-independent exits]).
            gen = fn(*args, **kwargs)
            try:
                with KeysChanged(include, exclude, allow):
                    response = gen.send(None)
                while True:
                    try:
                        request = yield response
                    except GeneratorExit:
                        with KeysChanged(include, exclude, allow):
                            gen.close()
                        raise
                    except BaseException as error:
                        with KeysChanged(include, exclude, allow):
                            response = gen.throw(error)
                    else:
                        with KeysChanged(include, exclude, allow):
                            response = gen.send(request)
            except StopIteration as stop:
                return stop.value

        return wrapper  # type: ignore[return-value]  # same signature as fn


def include_keys(keys: Iterable[DispatchKey | str] | DispatchKey | DispatchKeySet | str) -> KeysChanged:
    """Add ``keys`` to every call's key set in this thread and asyncio task, until the
    block exits.

    ``with include_keys(DispatchKey.Tracer): ...`` sends every op call in the block
    through the Tracer key first. Leaving the block (also by an exception) removes
    exactly what it added (Note [Order-independent exits]). As a decorator it wraps each
    call of the function (each step, for a generator function).
    """
    return KeysChanged(_as_bits(keys), 0)


def exclude_keys(keys: Iterable[DispatchKey | str] | DispatchKey | DispatchKeySet | str) -> KeysChanged:
    """Remove ``keys`` from every call's key set in this thread and asyncio task, until
    the block exits; a decorator too, like ``include_keys``."""
    return KeysChanged(0, _as_bits(keys))


def allow_keys(keys: Iterable[DispatchKey | str] | DispatchKey | DispatchKeySet | str) -> KeysChanged:
    """Lift the exclusion of ``keys`` by enclosing blocks, without adding them to calls'
    key sets, until the block exits (``enable_grad`` inside ``no_grad``); a decorator too."""
    return KeysChanged(0, 0, _as_bits(keys))
