"""Thread-local include/exclude key sets (issue 4): scoping, restoration, per-thread isolation."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Generator, Iterator
from contextlib import contextmanager

import pytest
from hypothesis import given
from hypothesis import strategies as st

from typedops import DispatchKey, DispatchKeySet, Library, OperatorHandle, Tensor, exclude_keys, include_keys, tensor
from typedops.dispatch import allow_keys, local_exclude, local_include

K = DispatchKey
EMPTY = DispatchKeySet()


@pytest.fixture
def ns(request: pytest.FixtureRequest) -> str:
    return "tls_" + re.sub(r"\W", "_", request.node.name)


def _sets() -> tuple[DispatchKeySet, DispatchKeySet]:
    return local_include(), local_exclude()


def test_nothing_is_open_by_default() -> None:
    assert _sets() == (EMPTY, EMPTY)


def test_include_is_scoped() -> None:
    with include_keys(K.Tracer):
        assert _sets() == (DispatchKeySet([K.Tracer]), EMPTY)
    assert _sets() == (EMPTY, EMPTY)


def test_exclude_is_scoped() -> None:
    with exclude_keys([K.AutogradCPU, "AutogradMeta"]):
        assert _sets() == (EMPTY, DispatchKeySet([K.AutogradCPU, K.AutogradMeta]))
    assert _sets() == (EMPTY, EMPTY)


def test_accepts_a_key_set() -> None:
    with include_keys(DispatchKeySet([K.Tracer, K.Profiler])):
        assert local_include() == DispatchKeySet([K.Tracer, K.Profiler])


class Boom(Exception):
    pass


def test_include_and_exclude_restore_on_exception() -> None:
    with pytest.raises(Boom):
        with include_keys(K.Tracer):
            with exclude_keys(K.AutogradCPU):
                raise Boom
    assert _sets() == (EMPTY, EMPTY)
    with include_keys(K.Profiler):
        with pytest.raises(Boom):
            with exclude_keys(K.Profiler):
                assert _sets() == (EMPTY, DispatchKeySet([K.Profiler]))
                raise Boom
        # the inner block's exclusion of Profiler is gone, the outer inclusion is back
        assert _sets() == (DispatchKeySet([K.Profiler]), EMPTY)
    assert _sets() == (EMPTY, EMPTY)


def test_a_bad_key_changes_nothing() -> None:
    with pytest.raises(ValueError):
        with include_keys([K.Tracer, K.Autograd]):
            pass  # pragma: no cover
    assert _sets() == (EMPTY, EMPTY)


def test_nesting_accumulates_and_unwinds_step_by_step() -> None:
    with include_keys(K.Tracer):
        with include_keys(K.Profiler):
            with exclude_keys(K.AutogradCPU):
                assert _sets() == (DispatchKeySet([K.Tracer, K.Profiler]), DispatchKeySet([K.AutogradCPU]))
            assert _sets() == (DispatchKeySet([K.Tracer, K.Profiler]), EMPTY)
        assert _sets() == (DispatchKeySet([K.Tracer]), EMPTY)
    assert _sets() == (EMPTY, EMPTY)


def test_include_undoes_an_outer_exclude_and_back() -> None:
    with exclude_keys([K.Tracer, K.AutogradCPU]):
        with include_keys(K.Tracer):
            assert _sets() == (DispatchKeySet([K.Tracer]), DispatchKeySet([K.AutogradCPU]))
            with exclude_keys(K.Tracer):
                assert _sets() == (EMPTY, DispatchKeySet([K.Tracer, K.AutogradCPU]))
            assert _sets() == (DispatchKeySet([K.Tracer]), DispatchKeySet([K.AutogradCPU]))
        assert _sets() == (EMPTY, DispatchKeySet([K.Tracer, K.AutogradCPU]))
    assert _sets() == (EMPTY, EMPTY)


def test_same_context_manager_object_restores_what_it_saw() -> None:
    # Each include_keys(...) call makes a fresh manager; re-entering the same call twice
    # in sequence works and leaves nothing behind.
    for _ in range(3):
        with include_keys(K.Tracer):
            assert local_include() == DispatchKeySet([K.Tracer])
    assert _sets() == (EMPTY, EMPTY)


# -- the sets reach calls ------------------------------------------------------------


@contextmanager
def keys_seen(ns: str) -> Iterator[tuple[Callable[[Tensor], DispatchKeySet], list[DispatchKeySet]]]:
    """An op ns::f whose CPU kernel and Tracer fallback record the key sets they get."""
    seen: list[DispatchKeySet] = []
    with Library(ns, "DEF") as lib, Library(ns, "IMPL", "Tracer") as impl:
        op = lib.define("f(Tensor x) -> Tensor")

        def tracer(op_: OperatorHandle, keys: DispatchKeySet, stack: list[object]) -> None:
            seen.append(keys)
            op_.redispatch_boxed(keys, stack)

        def cpu(keys: DispatchKeySet, x: Tensor) -> Tensor:
            seen.append(keys)
            return x

        lib.impl("f", cpu, "CPU", with_keys=True)
        impl.fallback(tracer)

        def call(x: Tensor) -> DispatchKeySet:
            seen.clear()
            op(x)
            return seen[0]

        yield call, seen


def test_included_key_reaches_the_call_and_excluded_key_leaves_it(ns: str) -> None:
    with keys_seen(ns) as (call, seen):
        x = tensor([1.0])
        assert call(x) == DispatchKeySet([K.CPU])
        with include_keys(K.Tracer):
            assert call(x) == DispatchKeySet([K.Tracer, K.CPU])
            assert seen == [DispatchKeySet([K.Tracer, K.CPU]), DispatchKeySet([K.CPU])]
            with exclude_keys(K.Tracer):
                assert call(x) == DispatchKeySet([K.CPU])
                assert len(seen) == 1
        assert call(x) == DispatchKeySet([K.CPU])


def test_excluding_the_backend_key_leaves_the_other_backend(ns: str) -> None:
    with Library(ns, "DEF") as lib:
        op = lib.define("f(Tensor x, Tensor y) -> int")

        def cpu(x: Tensor, y: Tensor) -> int:
            return 0

        def meta(x: Tensor, y: Tensor) -> int:
            return 1

        lib.impl("f", cpu, "CPU")
        lib.impl("f", meta, "Meta")
        a, b = tensor([1]), tensor([1], device="meta")
        assert op(a, b) == 1  # Meta outranks CPU
        with exclude_keys(K.Meta):
            assert op(a, b) == 0


# -- per-thread isolation ----------------------------------------------------------------


def test_each_thread_has_its_own_sets() -> None:
    entered = threading.Barrier(2)
    checked = threading.Barrier(2)
    results: dict[str, tuple[DispatchKeySet, DispatchKeySet]] = {}
    errors: list[BaseException] = []

    def worker(name: str, include: DispatchKey, exclude: DispatchKey) -> None:
        try:
            with include_keys(include), exclude_keys(exclude):
                entered.wait(timeout=10)  # both threads now have their sets open
                results[name] = _sets()
                checked.wait(timeout=10)
            results[name + " after"] = _sets()
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [
        threading.Thread(target=worker, args=("a", K.Tracer, K.AutogradCPU)),
        threading.Thread(target=worker, args=("b", K.Profiler, K.AutogradMeta)),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=10)
    assert not errors
    assert results["a"] == (DispatchKeySet([K.Tracer]), DispatchKeySet([K.AutogradCPU]))
    assert results["b"] == (DispatchKeySet([K.Profiler]), DispatchKeySet([K.AutogradMeta]))
    assert results["a after"] == results["b after"] == (EMPTY, EMPTY)
    assert _sets() == (EMPTY, EMPTY)


def test_another_threads_include_does_not_reach_my_calls(ns: str) -> None:
    opened = threading.Event()
    release = threading.Event()
    other_saw: list[DispatchKeySet] = []

    def other() -> None:
        with include_keys(K.Tracer):
            other_saw.append(local_include())
            opened.set()
            release.wait(timeout=10)

    with keys_seen(ns) as (call, _):
        thread = threading.Thread(target=other)
        thread.start()
        try:
            assert opened.wait(timeout=10)
            # Some thread has an include open; this thread's calls must not see it.
            assert _sets() == (EMPTY, EMPTY)
            assert call(tensor([1.0])) == DispatchKeySet([K.CPU])
            with exclude_keys(K.Tracer):
                assert call(tensor([1.0])) == DispatchKeySet([K.CPU])
            assert call(tensor([1.0])) == DispatchKeySet([K.CPU])
        finally:
            release.set()
            thread.join(timeout=10)
    assert other_saw == [DispatchKeySet([K.Tracer])]


def test_a_thread_started_inside_a_block_starts_empty() -> None:
    seen: list[tuple[DispatchKeySet, DispatchKeySet]] = []
    with include_keys(K.Tracer), exclude_keys(K.AutogradCPU):
        thread = threading.Thread(target=lambda: seen.append(_sets()))
        thread.start()
        thread.join(timeout=10)
        assert _sets() == (DispatchKeySet([K.Tracer]), DispatchKeySet([K.AutogradCPU]))
    assert seen == [(EMPTY, EMPTY)]


def test_exception_in_one_thread_restores_only_that_thread() -> None:
    inside = threading.Event()
    failed = threading.Event()
    after: list[tuple[DispatchKeySet, DispatchKeySet]] = []

    def failing() -> None:
        try:
            with include_keys(K.Autocast):
                inside.set()
                raise Boom
        except Boom:
            after.append(_sets())
        failed.set()

    with include_keys(K.Tracer):
        thread = threading.Thread(target=failing)
        thread.start()
        assert inside.wait(timeout=10)
        assert failed.wait(timeout=10)
        thread.join(timeout=10)
        assert _sets() == (DispatchKeySet([K.Tracer]), EMPTY)
    assert after == [(EMPTY, EMPTY)]
    assert _sets() == (EMPTY, EMPTY)


# -- tasks, generators, out-of-order exits (Note [Order-independent exits]) ----------------
def test_each_asyncio_task_has_its_own_sets() -> None:
    import asyncio

    seen: dict[str, tuple[DispatchKeySet, DispatchKeySet]] = {}

    async def tracer_task(started: asyncio.Event, checked: asyncio.Event) -> None:
        with include_keys(K.Tracer):
            started.set()
            await checked.wait()
            seen["tracer"] = _sets()

    async def other_task(started: asyncio.Event, checked: asyncio.Event) -> None:
        await started.wait()
        seen["other"] = _sets()  # the tracer task is inside its block right now
        checked.set()

    async def main() -> None:
        started, checked = asyncio.Event(), asyncio.Event()
        await asyncio.gather(tracer_task(started, checked), other_task(started, checked))

    asyncio.run(main())
    assert seen == {"tracer": (DispatchKeySet([K.Tracer]), EMPTY), "other": (EMPTY, EMPTY)}
    assert _sets() == (EMPTY, EMPTY)


def test_a_task_starts_with_a_copy_of_its_creators_sets() -> None:
    import asyncio

    async def child() -> tuple[DispatchKeySet, DispatchKeySet]:
        with exclude_keys(K.CPU):
            return _sets()

    async def main() -> tuple[tuple[DispatchKeySet, DispatchKeySet], tuple[DispatchKeySet, DispatchKeySet]]:
        with include_keys(K.Tracer):
            inner = await asyncio.create_task(child())
            return inner, _sets()

    inner, after = asyncio.run(main())
    assert inner == (DispatchKeySet([K.Tracer]), DispatchKeySet([K.CPU]))
    assert after == (DispatchKeySet([K.Tracer]), EMPTY)  # the child's exclude stayed in the child


def test_out_of_order_exits_leave_exactly_the_open_blocks() -> None:
    def gen() -> Iterator[int]:
        with include_keys(K.Tracer):
            yield 1
            yield 2

    g = gen()
    next(g)  # the generator's block is open, in our context (Python runs it there)
    outer = exclude_keys(K.CPU)
    outer.__enter__()
    assert _sets() == (DispatchKeySet([K.Tracer]), DispatchKeySet([K.CPU]))
    next(g)
    with pytest.raises(StopIteration):
        next(g)  # the generator's block exits first, inside ours
    assert _sets() == (EMPTY, DispatchKeySet([K.CPU]))
    outer.__exit__(None, None, None)
    assert _sets() == (EMPTY, EMPTY)  # nothing stale is left for good


def test_decorated_generator_does_not_leak_while_suspended() -> None:
    @include_keys(K.Tracer)
    def gen() -> Iterator[tuple[DispatchKeySet, DispatchKeySet]]:
        yield _sets()
        yield _sets()

    g = gen()
    assert next(g) == (DispatchKeySet([K.Tracer]), EMPTY)
    assert _sets() == (EMPTY, EMPTY)  # suspended: the caller is outside the block
    with exclude_keys(K.CPU):
        assert next(g) == (DispatchKeySet([K.Tracer]), DispatchKeySet([K.CPU]))
    assert list(g) == []
    assert _sets() == (EMPTY, EMPTY)


def test_decorated_generator_sees_thrown_exceptions_inside_the_block() -> None:
    seen: list[tuple[DispatchKeySet, DispatchKeySet]] = []

    @exclude_keys(K.CPU)
    def gen() -> Generator[int, None, None]:
        try:
            yield 1
        except KeyError:
            seen.append(_sets())
            yield 2

    g = gen()
    next(g)
    assert g.throw(KeyError("k")) == 2
    g.close()
    assert seen == [(EMPTY, DispatchKeySet([K.CPU]))]
    assert _sets() == (EMPTY, EMPTY)


def test_decorated_function_enters_per_call() -> None:
    @include_keys(K.Tracer)
    def inside() -> tuple[DispatchKeySet, DispatchKeySet]:
        return _sets()

    assert inside() == (DispatchKeySet([K.Tracer]), EMPTY)
    assert _sets() == (EMPTY, EMPTY)


def test_one_block_object_open_in_two_threads_exits_in_each() -> None:
    shared = include_keys(K.Tracer)
    inside, release = threading.Barrier(2, timeout=10), threading.Barrier(2, timeout=10)
    after: list[tuple[DispatchKeySet, DispatchKeySet]] = []

    def worker() -> None:
        with shared:
            inside.wait()
            release.wait()
        after.append(_sets())

    threads = [threading.Thread(target=worker) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert after == [(EMPTY, EMPTY), (EMPTY, EMPTY)]


def test_allow_keys_lifts_an_outer_exclusion_without_including() -> None:
    K = DispatchKey
    with exclude_keys([K.Tracer, K.Profiler]):
        with allow_keys(K.Tracer):
            assert local_exclude() == DispatchKeySet([K.Profiler])
            assert local_include() == DispatchKeySet()
        assert local_exclude() == DispatchKeySet([K.Tracer, K.Profiler])
    assert local_exclude() == DispatchKeySet()


def test_threads_opening_and_closing_blocks_at_once_keep_the_count_exact() -> None:
    """Note [The open-blocks list]: no lock, yet no enter or exit is lost; while any block
    is open, the calls' flag is true."""
    from typedops.dispatch._tls import STATE

    start = STATE.active
    shared = include_keys(K.Tracer)
    seen_closed: list[bool] = []

    def worker() -> None:
        for _ in range(2000):
            with shared:
                if not STATE.open:
                    seen_closed.append(True)
            with exclude_keys(K.CPU):
                pass

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert STATE.active == start and not seen_closed


_BLOCKS = {"tracer": include_keys(K.Tracer), "no cpu": exclude_keys(K.CPU), "allow cpu": allow_keys(K.CPU)}


@given(st.lists(st.tuples(st.sampled_from(sorted(_BLOCKS)), st.booleans()), max_size=12))
def test_any_order_of_entries_and_exits_leaves_the_sets_of_the_blocks_open(steps: list[tuple[str, bool]]) -> None:
    """Note [A block alone] is a shortcut of Note [Order-independent exits]: whichever
    blocks are entered and left (the same object nested, exits out of order), the sets are
    those of the blocks still open, and nothing is left once all are closed."""
    from typedops.dispatch._tls import STATE

    start = STATE.active
    open_: list[str] = []
    for name, enter in steps:
        if enter or name not in open_:
            _BLOCKS[name].__enter__()
            open_.append(name)
        else:
            _BLOCKS[name].__exit__(None, None, None)
            del open_[len(open_) - 1 - open_[::-1].index(name)]
        include = exclude = DispatchKeySet()
        for n in open_:
            if n == "tracer":
                include = include | DispatchKeySet([K.Tracer])
            elif n == "no cpu":
                exclude = exclude | DispatchKeySet([K.CPU])
            else:
                exclude = exclude - DispatchKeySet([K.CPU])
        assert _sets() == (include, exclude)
        assert STATE.active == start + len(open_)
    for name in reversed(open_):
        _BLOCKS[name].__exit__(None, None, None)
    assert _sets() == (EMPTY, EMPTY) and STATE.active == start
