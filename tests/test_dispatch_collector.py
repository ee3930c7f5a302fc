"""``bulk_registration()``: the collector paused around definitions and restored after
(Note [Registration and the collector]). Behaviour only; the timings are in benchmarks/."""

from __future__ import annotations

import gc
import re
import threading
import weakref
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from typedops import Library, Tensor, bulk_registration, op
from typedops.dispatch import _collector


@pytest.fixture(autouse=True)
def collector_enabled() -> Iterator[None]:
    """Each test starts with the collector on, and leaves it as the test found it."""
    was = gc.isenabled()
    gc.enable()
    yield
    if was:
        gc.enable()
    else:
        gc.disable()


@pytest.fixture
def ns(request: pytest.FixtureRequest) -> str:
    return "gc_" + re.sub(r"\W", "_", request.node.name)


def test_the_collector_is_paused_inside_and_enabled_after() -> None:
    with bulk_registration():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_collector_the_caller_disabled_stays_disabled() -> None:
    gc.disable()
    with bulk_registration():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_the_collector_comes_back_when_the_block_raises() -> None:
    with pytest.raises(ZeroDivisionError), bulk_registration():
        1 / 0  # noqa: B018
    assert gc.isenabled()


def test_nested_blocks_restore_when_the_outermost_ends() -> None:
    with bulk_registration():
        with bulk_registration():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer block is still open
    assert gc.isenabled()


def test_overlapping_blocks_in_two_threads_restore_when_the_last_ends() -> None:
    # The first block to begin is not the last to end: A enters, B enters, A leaves
    # (B still needs the pause), B leaves (the collector comes back).
    a_in, b_in, a_out, b_may_leave = (threading.Event() for _ in range(4))
    seen: dict[str, bool] = {}

    def a() -> None:
        with bulk_registration():
            a_in.set()
            b_in.wait(5)
        seen["after A left"] = gc.isenabled()
        a_out.set()

    def b() -> None:
        a_in.wait(5)
        with bulk_registration():
            b_in.set()
            b_may_leave.wait(5)

    threads = [threading.Thread(target=a), threading.Thread(target=b)]
    for t in threads:
        t.start()
    assert a_out.wait(5)
    b_may_leave.set()
    for t in threads:
        t.join(5)
    assert seen == {"after A left": False}
    assert gc.isenabled()


def _cyclic_op(name: str, lib: Library) -> weakref.ref[Any]:
    """Define an op whose kernel and op function reference each other; return a weak
    reference to the kernel."""

    def kernel(x: Tensor) -> Tensor:
        return x

    f = op(name, lib=lib)(kernel)
    kernel.op = f  # type: ignore[attr-defined]  # the cycle: kernel -> op -> entry -> kernel
    return weakref.ref(kernel)


def test_cycles_made_in_a_block_are_collected_after_it(ns: str) -> None:
    with bulk_registration():
        with Library(ns, "DEF") as lib:
            refs = [_cyclic_op(f"{ns}::f{i}", lib) for i in range(50)]
        assert all(r() is not None for r in refs)  # removed, but only a collection frees a cycle
    gc.collect()
    assert [r for r in refs if r() is not None] == []


def test_the_postponed_collection_runs_by_itself_after_the_block(ns: str) -> None:
    # Allocations are counted while the collector is paused, so the young collection
    # the block postponed runs at the first allocations after it: no gc.collect() needed.
    with bulk_registration():
        with Library(ns, "DEF") as lib:
            refs = [_cyclic_op(f"{ns}::f{i}", lib) for i in range(50)]
        assert gc.get_count()[0] > gc.get_threshold()[0]
    keep: list[list[int]] = [[] for _ in range(gc.get_threshold()[0] + 1)]  # container allocations
    assert len(keep) and [r for r in refs if r() is not None] == []


# -- Note [Registration bursts]: a plain loop of definitions postpones full collections


def _collections_by_generation() -> tuple[list[int], Callable[[str, dict[str, int]], None]]:
    """A list that records the generation of every collection that starts, and the
    callback doing it (for gc.callbacks)."""
    started: list[int] = []

    def callback(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started.append(info["generation"])

    return started, callback


def _end_any_burst() -> None:
    """Let collections run with no definition between them, so a burst some earlier test
    began ends and the next definition begins a new one."""
    for _ in range(4):
        if _collector._BURST.phase is _collector._Phase.idle:
            return
        gc.collect(0)
    assert _collector._BURST.phase is _collector._Phase.idle


@pytest.fixture
def thresholds() -> Iterator[tuple[int, ...]]:
    """The collector's thresholds as the test found them, with no burst running; put back after it."""
    _end_any_burst()
    before = gc.get_threshold()
    yield before
    _end_any_burst()
    gc.set_threshold(*before)


pytestmark_burst = pytest.mark.skipif(not _collector._SUPPORTED, reason="CPython's generational collector only")


def _allocate_containers(n: int) -> list[list[int]]:
    return [[] for _ in range(n)]


@pytestmark_burst
def test_a_definition_postpones_full_collections_until_definitions_stop(ns: str, thresholds: tuple[int, ...]) -> None:
    with Library(ns, "DEF") as lib:
        lib.define("f(Tensor x) -> Tensor")
        assert gc.get_threshold() == (*thresholds[:2], _collector._POSTPONED)
        gc.collect(0)  # definitions since the last collection: the burst goes on
        assert gc.get_threshold()[2] == _collector._POSTPONED
        gc.collect(0)  # none since: the burst ends
        assert gc.get_threshold() == thresholds
        lib.define("g(Tensor x) -> Tensor")  # no new burst before a collection under the restored thresholds
        assert gc.get_threshold() == thresholds
        gc.collect(0)
        lib.define("h(Tensor x) -> Tensor")
        assert gc.get_threshold()[2] == _collector._POSTPONED


def _grow(define: Callable[[int], object], rounds: int) -> list[int]:
    """Generations of the collections that start while the heap grows by long-lived
    objects, ``define(i)`` called in each round (a no-op for the control)."""
    started, callback = _collections_by_generation()
    kept: list[list[list[int]]] = []
    gc.collect()
    gc.callbacks.append(callback)
    try:
        for i in range(rounds):
            define(i)
            kept.append(_allocate_containers(50))
    finally:
        gc.callbacks.remove(callback)
    return started


@pytestmark_burst
def test_long_lived_growth_between_definitions_runs_young_collections_only(ns: str, thresholds: tuple[int, ...]) -> None:
    gc.set_threshold(thresholds[0], 2, 2)  # a full collection is due as soon as the survivors grow by a quarter
    rounds = len(gc.get_objects()) // 100  # long-lived growth: half the heap
    control = _grow(lambda i: None, rounds)
    assert 2 in control  # without definitions, a full collection runs
    with Library(ns, "DEF") as lib:
        during = _grow(lambda i: lib.define(f"f{i}(Tensor x) -> Tensor"), rounds)
        after, callback = _collections_by_generation()
        gc.callbacks.append(callback)
        try:
            # a collection may still see the last definitions, the next ends the burst, the
            # one after runs the postponed full collection
            _allocate_containers(5 * thresholds[0])
        finally:
            gc.callbacks.remove(callback)
    assert 0 in during and 1 in during and 2 not in during
    assert 2 in after and gc.get_threshold() == (thresholds[0], 2, 2)


@pytestmark_burst
def test_a_burst_ends_after_max_young_collections_however_many_definitions(
    ns: str, thresholds: tuple[int, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_collector._BURST, "max_young", 3)
    seen: list[int] = []
    with Library(ns, "DEF") as lib:
        for i in range(12):
            lib.define(f"f{i}(Tensor x) -> Tensor")
            seen.append(gc.get_threshold()[2])
            gc.collect(0)
    # The burst spans 3 collections, the 4th ends it, the 5th runs under the program's
    # thresholds, and the next definition begins another burst.
    assert seen == ([_collector._POSTPONED] * 4 + [thresholds[2]]) * 2 + [_collector._POSTPONED] * 2


@pytestmark_burst
def test_thresholds_set_during_a_burst_stand_after_it(ns: str, thresholds: tuple[int, ...]) -> None:
    with Library(ns, "DEF") as lib:
        lib.define("f(Tensor x) -> Tensor")
        gc.set_threshold(500, 5, 5)
        gc.collect(0)
        gc.collect(0)
    assert gc.get_threshold() == (500, 5, 5)


@pytestmark_burst
def test_no_burst_while_the_collector_is_off(ns: str, thresholds: tuple[int, ...]) -> None:
    with Library(ns, "DEF") as lib:
        gc.disable()
        lib.define("f(Tensor x) -> Tensor")
        assert gc.get_threshold() == thresholds
        gc.enable()
        gc.set_threshold(0)  # automatic collection off
        lib.define("g(Tensor x) -> Tensor")
        assert gc.get_threshold() == (0, *thresholds[1:])
        with bulk_registration():
            lib.define("h(Tensor x) -> Tensor")
    assert gc.get_threshold() == (0, *thresholds[1:])


@pytestmark_burst
def test_definitions_in_several_threads_leave_the_thresholds_as_they_were(ns: str, thresholds: tuple[int, ...]) -> None:
    with Library(ns, "DEF") as lib:

        def define(t: int) -> None:
            for i in range(200):
                lib.define(f"f{t}_{i}(Tensor x) -> Tensor")
                _allocate_containers(20)

        threads = [threading.Thread(target=define, args=(t,)) for t in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
    _end_any_burst()
    assert gc.get_threshold() == thresholds


@pytestmark_burst
def test_a_burst_puts_its_callback_back_when_the_list_was_cleared(ns: str, thresholds: tuple[int, ...]) -> None:
    saved = list(gc.callbacks)
    gc.callbacks.clear()
    try:
        with Library(ns, "DEF") as lib:
            lib.define("f(Tensor x) -> Tensor")
            assert gc.get_threshold()[2] == _collector._POSTPONED
            gc.collect(0)
            gc.collect(0)
            assert gc.get_threshold() == thresholds
    finally:
        gc.callbacks[:] = saved
