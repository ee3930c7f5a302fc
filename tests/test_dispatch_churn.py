"""Memory under churn (issue 11): defining and removing ops with ever new names, in ever
new namespaces, must not grow memory without bound. Compiled code is shared by shape
(Note [Wrapper cache]: positional names are not part of it), every cache is bounded
(Note [Bounded caches]), and a generated file's linecache entry goes with its last code
(Note [Generated source])."""

from __future__ import annotations

import gc
import inspect
import linecache
import sys
import weakref
from typing import Any

import pytest

from typedops import DispatchKey, Library, OperatorHandle, Tensor, boxed, ops, tensor
from typedops.boxing import _wrappers, install, live_generated_files, renamed
from typedops.dispatch import DispatchKeySet, _entry
from typedops.vocabulary import BoundedCache

CYCLES = 10_000
CHUNK = 1_000  # growth is checked after every chunk, so a leak fails early
WARM_UP = 300
# Memory is counted in allocated blocks (sys.getallocatedblocks: deterministic, and free,
# where tracemalloc would make the test four times slower). Bounded caches fill up to their
# limits (about 60,000 blocks, 6 MB, in all); the old code grew by about 100 blocks (12 KB)
# and two linecache entries per cycle.
GROWTH_BOUND = 250_000
LINES_BOUND = 20


def unboxed_kernel(a: Tensor, b: int, *, alpha: float) -> Tensor:
    return a


def any_keywords_kernel(a: Tensor, **keywords: int) -> Tensor:
    return a


def boxed_kernel(op: OperatorHandle, keys: DispatchKeySet, stack: list[Any]) -> None:
    del stack[1:]


def fallback(op: OperatorHandle, keys: DispatchKeySet, stack: list[Any]) -> None:
    op.redispatch_boxed(keys, stack)


def cycle(i: int, x: Tensor) -> None:
    """Define an op with new names in a new namespace, register, call it both ways, remove it."""
    with Library(f"churn{i}", "DEF") as lib:
        op = lib.define(f"f{i}(Tensor a{i}, int b{i}=1, *, float alpha=2.0) -> Tensor")
        if i % 2:
            lib.impl(f"f{i}", unboxed_kernel, "CPU", check=False)  # its names are not the schema's
        else:
            lib.impl(f"f{i}", boxed(boxed_kernel), "CPU")
        if i % 20 == 0:
            lib.fallback(fallback, DispatchKey.AutogradCPU)
        assert op(x) is x
        assert op(**{f"a{i}": x, f"b{i}": 2}) is x  # positional arguments by their names
        assert getattr(getattr(ops, f"churn{i}"), f"f{i}").default(x) is x  # ops caches what it finds
        stack: list[Any] = [x]
        op.call_boxed(stack)
        assert stack == [x]


def test_define_call_remove_cycles_with_new_names_keep_memory_bounded() -> None:
    x = tensor([1.0])
    for i in range(WARM_UP):
        cycle(i, x)
    gc.collect()
    lines = len(linecache.cache)
    start = sys.getallocatedblocks()
    for first in range(WARM_UP, WARM_UP + CYCLES, CHUNK):
        for i in range(first, first + CHUNK):
            cycle(i, x)
        gc.collect()
        growth = sys.getallocatedblocks() - start
        done = i + 1 - WARM_UP
        assert growth < GROWTH_BOUND, f"{growth} more allocated blocks after {done} cycles"
        assert len(linecache.cache) - lines < LINES_BOUND, f"{len(linecache.cache) - lines} more linecache entries after {done} cycles"


def test_evicted_factories_take_their_source_lines_with_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keyword-only names are part of a shape (Note [Wrapper cache]), so ever new ones
    compile ever new factories: the caches keep a bounded number, and the linecache entry
    of an evicted factory goes when its code does (here, with small caches)."""
    for module, name in ((_entry, "_factories"), (_entry, "_named"), (_wrappers, "_unboxing_factories"),
                         (_wrappers, "_boxing_factories")):  # fmt: skip
        monkeypatch.setattr(module, name, BoundedCache(4, f"small {name}"))
    x = tensor([1.0])
    gc.collect()
    lines, files = len(linecache.cache), live_generated_files()
    for i in range(60):
        with Library(f"churn_kw{i}", "DEF") as lib:
            op = lib.define(f"f(Tensor a, *, int k{i}=3) -> Tensor")
            lib.impl("f", boxed(boxed_kernel) if i % 2 else any_keywords_kernel, "CPU", check=False)
            assert op(x) is x
            stack: list[Any] = [x]
            op.call_boxed(stack)
            assert stack == [x]
    gc.collect()
    # at most 4 factories in each of three caches (the renamed copies share their files)
    assert len(linecache.cache) - lines <= 12
    assert live_generated_files() - files <= 12


def test_renamed_parameters_shadow_nothing() -> None:
    """A parameter renamed to one of the generated code's global or local names neither
    reads the global nor is overwritten by the local (Note [Generated source])."""
    namespace: dict[str, Any] = {"_apply": lambda v: v * 10}
    make = install(
        "def make(_op):\n"
        "    def call(_p0, _p1):\n"
        "        _b = _apply(_p0)\n"
        "        return _op, _b, _p1\n"
        "    return call\n",
        namespace, "test renamed", "make",
    )
    call = renamed(make, {"_p0": "_apply", "_p1": "_b"})("op")
    assert call(1, 2) == ("op", 10, 2)
    assert call(_b=2, _apply=3) == ("op", 30, 2)
    assert str(inspect.signature(call)) == "(_apply, _b)"
    assert "_b_" in call.__code__.co_varnames  # the local was renamed, not the parameter
    assert renamed(make, {})("op")(1, 2) == ("op", 10, 2)


def test_ops_keeps_no_namespace_or_packet_of_removed_ops() -> None:
    """``ops.<ns>.<name>`` caches what it resolves (Note [Cached op attributes] in
    dispatch/_ops.py): one object while in use, nothing once the ops are gone."""

    def kernel(a: Tensor) -> Tensor:
        return a

    x = tensor([1.0])
    with Library("churn_ops", "DEF") as lib:
        lib.define("f(Tensor a) -> Tensor")
        lib.impl("f", kernel, "CPU")
        namespace, packet = weakref.ref(ops.churn_ops), weakref.ref(ops.churn_ops.f)
        assert ops.churn_ops is namespace() and ops.churn_ops.f is packet()
        assert ops.churn_ops.f(x) is x
    gc.collect()
    assert namespace() is None and packet() is None
