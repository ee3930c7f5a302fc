"""``bulk_registration()``: the collector paused around definitions and restored after
(Note [Registration and the collector]). Behaviour only; the timings are in benchmarks/."""

from __future__ import annotations

import gc
import re
import threading
import weakref
from collections.abc import Iterator
from typing import Any

import pytest

from typedops import Library, Tensor, bulk_registration, op


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
