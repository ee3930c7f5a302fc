"""Tables under concurrent registration (issue 4, Note [Atomic tables]).

Caller threads call ops, unboxed and boxed, in a loop while other threads register and
remove kernels and fallbacks. Every call must see the old table or the new one: its
result is one of the results the registrations allow, and no exception escapes.
Iterations are bounded so the file stays well under five seconds on a slow machine.
"""

from __future__ import annotations

import itertools
import re
import sys
import threading
import time
from collections.abc import Iterator
from collections.abc import Callable
from typing import Any

import pytest

from typedops import (
    DispatchKey,
    DispatchKeySet,
    Library,
    OperatorHandle,
    Tensor,
    dispatcher,
    include_keys,
    tensor,
)

K = DispatchKey
CALLERS = 4
ROUNDS = 300  # registrations (and removals) per registering thread
TIMEOUT = 30.0


@pytest.fixture
def ns(request: pytest.FixtureRequest) -> str:
    return "stress_" + re.sub(r"\W", "_", request.node.name)


@pytest.fixture(autouse=True)
def frequent_thread_switches() -> Iterator[None]:
    """Switch threads every 20 microseconds instead of every 5 ms, so that registrations
    and calls interleave at many more points."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(2e-5)
    try:
        yield
    finally:
        sys.setswitchinterval(interval)


def old_kernel(x: Tensor) -> str:
    return "old"


def new_kernel(x: Tensor) -> str:
    return "new"


def wrapping_fallback(op: OperatorHandle, keys: DispatchKeySet, stack: list[Any]) -> None:
    op.redispatch_boxed(keys, stack)
    stack[-1] = f"fb({stack[-1]})"


class Run:
    """Shared state of one stress run: the start barrier, the stop flag, what went wrong."""

    def __init__(self, parties: int) -> None:
        self.start = threading.Barrier(parties)
        self.stop = threading.Event()
        self.errors: list[BaseException] = []
        self.lock = threading.Lock()

    def guard(self, fn: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            try:
                self.start.wait(timeout=TIMEOUT)
                fn()
            except BaseException as error:  # every exception is a failure of the test
                with self.lock:
                    self.errors.append(error)
                self.stop.set()

        return run


def run_threads(run: Run, callers: list[Callable[[], None]], registrars: list[Callable[[], None]]) -> None:
    threads = [threading.Thread(target=run.guard(fn)) for fn in callers + registrars]
    for t in threads:
        t.start()
    for t in threads[len(callers) :]:
        t.join(timeout=TIMEOUT)
    run.stop.set()  # registrars are done: callers finish their current loop
    for t in threads:
        t.join(timeout=TIMEOUT)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    assert not run.errors, f"{len(run.errors)} exception(s) escaped; first: {run.errors[0]!r}"


def test_calls_see_old_or_new_table_while_kernels_and_fallbacks_come_and_go(ns: str) -> None:
    before = dispatcher.dump_state()
    run = Run(CALLERS + 2)
    seen: list[set[str]] = [set() for _ in range(CALLERS)]
    seen_new = threading.Event()
    seen_fallback = threading.Event()
    plain_allowed = {"old", "new"}
    profiled_allowed = plain_allowed | {"fb(old)", "fb(new)"}

    with Library(ns, "DEF") as lib:
        op = lib.define("s(Tensor x) -> str")
        lib.impl("s", old_kernel, "CPU")
        x = tensor([1.0], requires_grad=True)  # carries AutogradCPU, where new_kernel comes and goes

        def caller(index: int) -> Callable[[], None]:
            def loop() -> None:
                results = seen[index]
                profiled = index % 2 == 1  # half the callers carry Profiler (thread-local)
                allowed = profiled_allowed if profiled else plain_allowed
                while not run.stop.is_set():
                    if profiled:
                        with include_keys(K.Profiler):
                            batch = one_batch()
                    else:
                        batch = one_batch()
                    for r in batch:
                        if r not in allowed:
                            raise AssertionError(f"caller {index} saw {r!r}")
                        if r == "new":  # a plain caller saw it: 'fb(new)' alone would not do
                            seen_new.set()
                        if r.startswith("fb("):
                            seen_fallback.set()
                    results.update(batch)

            def one_batch() -> list[str]:
                out: list[str] = []
                for _ in range(20):
                    out.append(op(x))
                    stack: list[Any] = [x]
                    op.call_boxed(stack)
                    if len(stack) != 1:
                        raise AssertionError(f"boxed call left {stack!r}")
                    out.append(stack[0])
                return out

            return loop

        def kernel_registrar() -> None:
            for round_ in range(ROUNDS):
                if run.stop.is_set():
                    return
                with Library(ns, "IMPL", K.AutogradCPU) as impl:
                    impl.impl("s", new_kernel)
                    if round_ == 0:  # make sure callers do see the new table once
                        assert seen_new.wait(timeout=TIMEOUT)

        def fallback_registrar() -> None:
            for round_ in range(ROUNDS):
                if run.stop.is_set():
                    return
                with Library("_", "IMPL", K.Profiler) as everywhere:
                    everywhere.fallback(wrapping_fallback)
                    if round_ == 0:
                        assert seen_fallback.wait(timeout=TIMEOUT)

        run_threads(run, [caller(i) for i in range(CALLERS)], [kernel_registrar, fallback_registrar])

        assert op(x) == "old"  # every temporary registration is gone
        with include_keys(K.Profiler):
            assert op(x) == "old"
    observed = set().union(*seen)
    assert {"old", "new"} <= observed
    assert observed & {"fb(old)", "fb(new)"}
    assert dispatcher.dump_state() == before


def test_included_backend_key_kernel_comes_and_goes(ns: str) -> None:
    """Callers carry PrivateUse1 (thread-locally); its direct kernel is registered and
    removed, and the op's CompositeExplicitAutograd kernel serves it in between."""
    run = Run(CALLERS + 1)
    counts = [0] * CALLERS
    seen_new = threading.Event()

    def cea(keys: DispatchKeySet, x: Tensor) -> str:
        return f"cea {keys!r}"

    def private(keys: DispatchKeySet, x: Tensor) -> str:
        return f"private {keys!r}"

    allowed = {"cea DispatchKeySet(PrivateUse1, CPU)", "private DispatchKeySet(PrivateUse1, CPU)"}

    with Library(ns, "DEF") as lib:
        op = lib.define("s(Tensor x) -> str")
        lib.impl("s", cea, K.CompositeExplicitAutograd, with_keys=True)
        x = tensor([1.0])

        def caller(index: int) -> Callable[[], None]:
            def loop() -> None:
                with include_keys(K.PrivateUse1):
                    while not run.stop.is_set():
                        for _ in range(20):
                            stack: list[Any] = [x]
                            op.call_boxed(stack)
                            for r in (op(x), *stack):
                                if r not in allowed:
                                    raise AssertionError(f"caller {index} saw {r!r}")
                                if r.startswith("private"):
                                    seen_new.set()
                        counts[index] += 40

            return loop

        def registrar() -> None:
            for round_ in range(ROUNDS):
                if run.stop.is_set():
                    return
                handle = lib.impl("s", private, K.PrivateUse1, with_keys=True)
                if round_ == 0:
                    assert seen_new.wait(timeout=TIMEOUT)
                handle.remove()

        run_threads(run, [caller(i) for i in range(CALLERS)], [registrar])
        assert all(counts), counts
        # outside the callers' threads PrivateUse1 is not carried
        assert op(x) == "cea DispatchKeySet(CPU)"


def test_first_calls_race_with_the_first_registrations(ns: str) -> None:
    """Ops defined while callers run: several callers make an op's first calls (which
    compute its table) at once, racing with each other and with the registration of its
    kernel. A namespace fallback serves until the kernel is there."""
    run = Run(CALLERS + 1)
    published: list[OperatorHandle] = []
    ops_count = 150

    def kernel(x: Tensor) -> str:
        return "kernel"

    def fallback(op: OperatorHandle, keys: DispatchKeySet, stack: list[Any]) -> None:
        stack[-1] = "fallback"

    with Library(ns, "DEF") as lib, Library(ns, "IMPL", K.CPU) as impl:
        impl.fallback(fallback)
        x = tensor([1.0])

        def caller(index: int) -> Callable[[], None]:
            def loop() -> None:
                done = 0
                while not run.stop.is_set() or done < len(published):
                    current = list(published)
                    for op in current[-3:]:  # the newest ops: the ones being registered
                        for r in (op(x), op(x)):
                            if r not in ("fallback", "kernel"):
                                raise AssertionError(f"{op.full_name}: caller {index} saw {r!r}")
                    done = len(current)
                # once every registration is done, every op has its kernel
                for op in published:
                    stack: list[Any] = [x]
                    op.call_boxed(stack)
                    if (op(x), stack) != ("kernel", ["kernel"]):
                        raise AssertionError(f"{op.full_name} ends without its kernel")

            return loop

        def registrar() -> None:
            for i in range(ops_count):
                if run.stop.is_set():
                    return
                op = lib.define(f"op{i}(Tensor x) -> str")
                published.append(op)  # callers may now make the first call
                lib.impl(f"op{i}", kernel, K.CPU)

        run_threads(run, [caller(i) for i in range(CALLERS)], [registrar])
        assert len(published) == ops_count


def test_call_during_the_first_table_computation(ns: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Deterministic version of the race above: one thread is held inside the op's first
    table computation (while the slot caches are built), and another thread calls the op.

    That call must wait for the table or use it; it must not fail.
    """
    from typedops.dispatch import _operator

    paused = threading.Event()
    release = threading.Event()
    holder: list[threading.Thread] = []

    class GatedCache(_operator.SlotCache):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            if holder and threading.current_thread() is holder[0] and not paused.is_set():
                paused.set()
                release.wait(timeout=TIMEOUT)
            super().__init__(*args, **kwargs)

    def kernel(x: Tensor) -> str:
        return "kernel"

    results: list[str] = []
    errors: list[BaseException] = []

    def guarded(fn: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            try:
                fn()
            except BaseException as error:
                errors.append(error)

        return run

    with Library(ns, "DEF") as lib:
        op = lib.define("f(Tensor x) -> str")
        x = tensor([1.0])
        monkeypatch.setattr(_operator, "SlotCache", GatedCache)

        def first() -> None:
            # registration or the first call computes the table: either way, in this thread
            lib.impl("f", kernel, K.CPU)
            results.append(op(x))

        first_thread = threading.Thread(target=guarded(first))
        holder.append(first_thread)
        second_thread = threading.Thread(target=guarded(lambda: results.append(op(x))))
        first_thread.start()
        assert paused.wait(timeout=TIMEOUT), "the table was never computed"
        second_thread.start()
        second_thread.join(timeout=0.5)  # a correct call waits for the lock (or uses the table)
        release.set()
        first_thread.join(timeout=TIMEOUT)
        second_thread.join(timeout=TIMEOUT)
        monkeypatch.undo()
        assert not errors, repr(errors[0])
        assert results == ["kernel", "kernel"]
        assert op(x) == "kernel"


def test_dumps_see_old_or_new_registrations_while_they_change(ns: str) -> None:
    """op.dump(), op.dump_table() and the dispatcher's listings read the registry while
    other threads register and remove kernels (for several keys, so the op's dict of
    registrations grows and shrinks) and fallbacks: each sees one state, never raises."""
    sys.setswitchinterval(2e-6)  # the fixture restores it
    run = Run(CALLERS + 2)
    keys = (K.CPU, K.AutogradCPU, K.PrivateUse1, K.CompositeExplicitAutograd, K.Tracer)
    dumps = [0] * CALLERS

    def kernel(x: Tensor) -> str:
        return "kernel"

    with Library(ns, "DEF") as lib:
        op = lib.define("s(Tensor x) -> str")
        lib.impl("s", kernel, K.CPU)
        x = tensor([1.0])

        def dumper(index: int) -> Callable[[], None]:
            def loop() -> None:
                while not run.stop.is_set():
                    text = op.dump()
                    if not text.startswith(str(op.schema)):
                        raise AssertionError(f"dump {text!r}")
                    table = op.dump_table()
                    if "CPU" not in table or op(x) != "kernel":
                        raise AssertionError(f"table {table!r}")
                    dispatcher.namespaces()
                    dumps[index] += 1

            return loop

        def kernel_registrar() -> None:
            for _ in range(3 * ROUNDS):
                if run.stop.is_set():
                    return
                with Library(ns, "IMPL") as impl:
                    for key in keys[1:]:
                        impl.impl("s", kernel, key)

        def fallback_registrar() -> None:
            for round_ in range(ROUNDS):
                if run.stop.is_set():
                    return
                with Library(f"{ns}_{round_ % 7}", "IMPL", K.Profiler) as other:
                    other.fallback(wrapping_fallback)
                with Library(ns, "IMPL", K.Profiler) as mine:
                    mine.fallback(wrapping_fallback)

        run_threads(run, [dumper(i) for i in range(CALLERS)], [kernel_registrar, fallback_registrar])
        assert all(dumps), dumps
        assert op(x) == "kernel"


def test_first_calls_racing_a_library_close_fail_cleanly_or_succeed(ns: str) -> None:
    """Each round defines an op and its kernel, and closes its library while callers make
    the op's first calls (which build its kernel's wrappers). A call returns the kernel's
    result or raises OperatorNotFoundError (the op is gone); nothing else."""
    from typedops import NoKernelError, OperatorNotFoundError

    rounds = 150
    run = Run(CALLERS + 1)
    current: list[OperatorHandle] = []
    calls = [0] * CALLERS
    outcomes: set[str] = set()

    def kernel(x: Tensor, n: int) -> int:
        return n

    x = tensor([1.0])

    def caller(index: int) -> Callable[[], None]:
        def loop() -> None:
            while not run.stop.is_set():
                op = current[-1] if current else None
                if op is None:
                    continue
                for _ in range(3):
                    try:
                        stack: list[Any] = [x, 3]
                        op.call_boxed(stack)
                        r = op(x, 2)
                        if (r, stack) != (2, [3]):
                            raise AssertionError(f"{op.full_name}: caller {index} saw {r!r}, {stack!r}")
                        outcomes.add("result")
                    except (OperatorNotFoundError, NoKernelError) as error:
                        outcomes.add(type(error).__name__)
                    calls[index] += 1

        return loop

    def registrar() -> None:
        # At least `rounds` rounds, and on until every caller has made calls and one saw a
        # removed op: on a loaded machine a caller may start only after 150 rounds (then
        # the asserts below fail only if it never gets to call, within half the timeout).
        deadline = time.monotonic() + TIMEOUT / 2
        for i in itertools.count():
            done = i >= rounds and all(calls) and "OperatorNotFoundError" in outcomes
            if run.stop.is_set() or done or time.monotonic() > deadline:
                return
            with Library(f"{ns}_{i}", "DEF") as lib:
                op = lib.define(f"f{i}(Tensor x, int n) -> int")
                lib.impl(f"f{i}", kernel, K.CPU)
                current.append(op)
            # closed: the op is removed while callers may be making its first calls

    run_threads(run, [caller(i) for i in range(CALLERS)], [registrar])
    assert all(calls), calls
    assert "OperatorNotFoundError" in outcomes


def test_library_closed_while_a_first_call_builds_its_wrappers(ns: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Deterministic version of the race above: a caller is held inside the building of its
    kernel's wrappers (its first call), and the library is closed meanwhile. The call
    finishes on the table it started with; later calls raise OperatorNotFoundError."""
    from typedops import OperatorNotFoundError
    from typedops.boxing import make_unboxing
    from typedops.dispatch import _operator

    paused = threading.Event()
    release = threading.Event()
    results: list[int] = []
    errors: list[BaseException] = []
    real = make_unboxing

    def gated(*args: Any, **kwargs: Any) -> Any:
        if threading.current_thread() is not threading.main_thread() and not paused.is_set():
            paused.set()
            release.wait(timeout=TIMEOUT)
        return real(*args, **kwargs)

    def kernel(x: Tensor, n: int) -> int:
        return n

    lib = Library(ns, "DEF")
    op = lib.define("f(Tensor x, int n) -> int")
    lib.impl("f", kernel, K.CPU)
    x = tensor([1.0])
    monkeypatch.setattr(_operator, "make_unboxing", gated)

    def first() -> None:
        try:
            results.append(op(x, 2))
        except BaseException as error:
            errors.append(error)

    thread = threading.Thread(target=first)
    thread.start()
    assert paused.wait(timeout=TIMEOUT), "the wrappers were never built"
    lib.remove()  # the op's definition goes while its first call is under way
    release.set()
    thread.join(timeout=TIMEOUT)
    monkeypatch.undo()
    assert not errors, repr(errors[0])
    assert results == [2]  # the call saw the table it started with
    with pytest.raises(OperatorNotFoundError, match=r"operator .*::f was removed"):
        op(x, 2)
