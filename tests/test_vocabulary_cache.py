"""The bounded cache every memo uses: its limit, its eviction order, and id()-keyed entries."""

from __future__ import annotations

import gc
import threading
import weakref

import pytest
from hypothesis import given
from hypothesis import strategies as st

from typedops.vocabulary import BoundedCache


class _Thing:
    """An object that can be weakly referenced (to watch it die)."""


def test_get_is_dict_get() -> None:
    cache: BoundedCache[str, int] = BoundedCache(4, "numbers")
    assert cache.get("a") is None
    assert cache.get("a", -1) == -1
    assert cache.put("a", 1) == 1
    assert cache.get("a") == 1 and "a" in cache and len(cache) == 1
    assert repr(cache) == "<BoundedCache numbers: 1 of 4 entries>"


@pytest.mark.parametrize("limit", [0, 1, -5, 2.5, "8", True])
def test_limit_must_be_an_int_of_at_least_two(limit: object) -> None:
    with pytest.raises(ValueError) as info:
        BoundedCache(limit, "bad")  # type: ignore[arg-type]  # the error under test
    assert str(info.value) == f"a BoundedCache needs a limit of at least 2 entries, not {limit!r}"


@given(limit=st.integers(2, 12), keys=st.lists(st.integers(0, 40), max_size=200))
def test_limit_is_respected_and_the_newest_entry_stays(limit: int, keys: list[int]) -> None:
    cache: BoundedCache[int, int] = BoundedCache(limit, "ints")
    for key in keys:
        cache.put(key, key * 10)
        assert len(cache) <= limit
        assert cache.get(key) == key * 10
    for key in keys:
        assert cache.get(key) in (None, key * 10)  # evicted or right, never wrong


def test_a_full_cache_drops_its_older_half_in_insertion_order() -> None:
    cache: BoundedCache[int, str] = BoundedCache(6, "strings")
    for key in range(6):
        cache.put(key, str(key))
    cache.put(6, "6")
    assert [k for k in range(7) if k in cache] == [3, 4, 5, 6]


def test_replacing_an_entry_of_a_full_cache_evicts_nothing() -> None:
    cache: BoundedCache[int, str] = BoundedCache(3, "strings")
    for key in range(3):
        cache.put(key, "old")
    cache.put(0, "new")
    assert [cache.get(k) for k in range(3)] == ["new", "old", "old"]


def test_an_entry_keeps_the_object_whose_id_is_its_key() -> None:
    cache: BoundedCache[int, str] = BoundedCache(4, "by id")
    thing = _Thing()
    watch = weakref.ref(thing)
    key = id(thing)
    cache.put(key, "thing", keep=thing)
    del thing
    gc.collect()
    # The object is alive, so no new object can take its id while the entry can hit.
    assert watch() is not None and id(watch()) == key
    assert cache.get(key) == "thing"


def test_eviction_and_clear_let_kept_objects_go() -> None:
    cache: BoundedCache[int, int] = BoundedCache(2, "by id")
    first, second = _Thing(), _Thing()
    watch_first, watch_second = weakref.ref(first), weakref.ref(second)
    cache.put(id(first), 1, keep=first)
    del first
    cache.put(-1, 0)
    cache.put(-2, 0)  # full: drops the older entry, which held `first`
    gc.collect()
    assert watch_first() is None and len(cache) == 2
    cache.put(id(second), 2, keep=second)
    del second
    cache.clear()
    gc.collect()
    assert watch_second() is None and len(cache) == 0


def test_a_reused_id_misses_once_its_entry_is_gone() -> None:
    # CPython reuses the memory (hence the id) of a freed object for the next object of the
    # same size; whether or not it does here, the dead object's entry must not answer.
    cache: BoundedCache[int, str] = BoundedCache(2, "by id")
    old = _Thing()
    cache.put(id(old), "old", keep=old)
    cache.put(-1, "x")
    cache.put(-2, "y")  # evicts old's entry
    del old
    gc.collect()
    new = _Thing()
    assert cache.get(id(new)) is None


def test_concurrent_puts_keep_exactly_the_objects_of_the_entries() -> None:
    cache: BoundedCache[int, int] = BoundedCache(64, "by id")

    def work() -> None:
        for n in range(3000):
            thing = _Thing()
            cache.put(id(thing), n, keep=thing)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(cache) <= 64
    assert set(cache._kept) == set(cache._data)  # every entry keeps its object, no stray objects
    assert all(id(obj) == key for key, obj in cache._kept.items())
