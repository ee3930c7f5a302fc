"""typedops.profile and the observers (issue 15)."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import typedops
from typedops import Library, core, profile, tensor
from typedops.dispatch import DispatchKey
from typedops.profiler import OpStats, add_observer, format_time, observing, shapes_of

X = tensor([[1.0, 2.0], [3.0, 4.0]])


def _run(rounds: int = 3) -> None:
    for _ in range(rounds):
        core.max(core.mul(X, X), X).sum()


def test_counts_every_call_nested_ones_too() -> None:
    with profile() as prof:
        _run()
    # max.other is composite: its kernel calls maximum, which the profiler sees as well.
    assert prof.counts() == {"core::mul.Tensor": 3, "core::maximum": 3, "core::max.other": 3, "core::sum": 3}


def test_self_time_is_total_time_minus_the_calls_inside() -> None:
    with profile() as prof:
        _run(2)
    stats = {s.name: s for s in prof.stats()}
    outer, inner = stats["core::max.other"], stats["core::maximum"]
    assert outer.self_ns + inner.total_ns == outer.total_ns
    assert stats["core::mul.Tensor"].self_ns == stats["core::mul.Tensor"].total_ns
    events = prof.events()
    assert [e.name for e in events[:3]] == ["core::mul.Tensor", "core::maximum", "core::max.other"]
    assert all(e.self_ns <= e.total_ns for e in events)


def test_shapes_are_recorded_when_asked() -> None:
    with profile(record_shapes=True) as prof:
        core.add(X, tensor([1.0, 2.0]), alpha=2)
        core.cat([X, X])
    assert [e.shapes for e in prof.events()] == [([2, 2], [2], []), ([[2, 2], [2, 2]], [])]
    with profile() as plain:
        core.add(X, X)
    assert plain.events()[0].shapes is None
    assert shapes_of([X, 1, [X]]) == ([2, 2], [], [[2, 2]])


def test_the_table_reads_like_torchs() -> None:
    with profile(record_shapes=True) as prof:
        _run()
    table = prof.table(sort_by="count")
    lines = table.splitlines()
    assert re.fullmatch(
        r"Name +Self CPU % +Self CPU +CPU total % +CPU total +CPU time avg +# of Calls", lines[1]
    )
    assert lines[0] == lines[2] == lines[-2] and set(lines[0]) == {"-", " "}
    assert [line.split()[0] for line in lines[3:-2]] == ["core::max.other", "core::maximum", "core::mul.Tensor", "core::sum"]
    assert lines[-1].startswith("Self CPU time total: ")
    by_name = prof.table(sort_by="name", row_limit=2).splitlines()
    assert [line.split()[0] for line in by_name[3:-2]] == ["core::max.other", "core::maximum"]
    self_sorted = [s.name for s in sorted(prof.stats(), key=lambda s: (-s.self_ns, s.name))]
    assert [line.split()[0] for line in prof.table().splitlines()[3:-2]] == self_sorted
    assert "Input Shapes" in prof.table(group_by_shapes=True)
    with pytest.raises(ValueError, match=re.escape("cannot sort the profile table by 'cpu'; sort by one of: self_time,")):
        prof.table(sort_by="cpu")
    with pytest.raises(typedops.TypedopsError, match="row_limit must be a positive int or None, not 0"):
        prof.table(row_limit=0)


def test_format_time_switches_units_as_torch_does() -> None:
    assert [format_time(n) for n in (1500, 2_500_000, 3_000_000_000)] == ["1.500us", "2.500ms", "3.000s"]
    assert OpStats("x", 2, 10, 4).avg_ns == 5


def test_chrome_trace_json(tmp_path: Path) -> None:
    with profile(record_shapes=True) as prof:
        _run(1)
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(path)
    data = json.loads(path.read_text())
    events = data["traceEvents"]
    assert [e["name"] for e in events] == ["core::mul.Tensor", "core::maximum", "core::max.other", "core::sum"]
    assert {e["ph"] for e in events} == {"X"}
    inner, outer = events[1], events[2]
    assert outer["ts"] <= inner["ts"] and inner["ts"] + inner["dur"] <= outer["ts"] + outer["dur"]  # nested in time
    assert inner["args"] == {"Input Dims": [[2, 2], [2, 2]]}


def test_observers_see_each_call_with_its_arguments_and_their_token() -> None:
    seen: list[Any] = []

    def start(op: Any, args: Any) -> Any:
        seen.append(("start", op.full_name, len(args)))
        return op.full_name

    def end(op: Any, token: Any) -> None:
        seen.append(("end", token))

    with add_observer(start, end):
        core.neg(X)  # not observed: no observing block
        with observing():
            core.neg(X)
        with profile() as prof:
            core.exp(X)
    assert seen == [("start", "core::neg", 1), ("end", "core::neg"), ("start", "core::exp", 1), ("end", "core::exp")]
    assert prof.counts() == {"core::exp": 1}
    core.neg(X)
    with observing():
        core.neg(X)
    assert len(seen) == 4  # removed
    with pytest.raises(TypeError, match="add_observer takes start"):
        add_observer(3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="needs a start or an end"):
        add_observer(None)


def test_off_it_leaves_the_tables_as_they_were() -> None:
    core.add(X, X)
    before = typedops.dispatcher.dump_state()
    with profile():
        core.add(X, X)
        assert "fallback: boxed _profiler_fallback" in typedops.ops.core.add.Tensor.dump_table()
    assert typedops.dispatcher.dump_state() == before


def test_each_task_profiles_its_own_calls() -> None:
    async def work(profiled: bool) -> dict[str, int]:
        if profiled:
            with profile() as prof:
                await asyncio.sleep(0)
                core.neg(X)
                await asyncio.sleep(0)
            return prof.counts()
        await asyncio.sleep(0)
        core.exp(X)
        return {}

    async def main() -> list[dict[str, int]]:
        return list(await asyncio.gather(work(True), work(False)))

    assert asyncio.run(main()) == [{"core::neg": 1}, {}]


def test_a_user_profiler_fallback_is_named() -> None:
    def mine(op: Any, keys: Any, stack: list[Any]) -> None:
        op.redispatch_boxed(keys, stack)

    with Library("_", "IMPL") as lib:
        lib.fallback(mine, DispatchKey.Profiler)
        with pytest.raises(typedops.RegistrationError, match="typedops.profile serves the Profiler key"):
            with profile():
                pass


_UNARY = ["neg", "exp", "abs", "relu"]
_BINARY = ["add", "mul", "sub", "maximum", "max"]


@settings(max_examples=30, deadline=None)
@given(st.lists(st.sampled_from(_UNARY + _BINARY), min_size=1, max_size=10))
def test_counts_and_times_add_up_for_any_chain(names: list[str]) -> None:
    with profile() as prof:
        value = X
        for name in names:
            fn = getattr(core, name)
            value = fn(value) if name in _UNARY else fn(value, X)
    counts = prof.counts()
    expected: dict[str, int] = {}
    for name in names:
        full = f"core::{name}" if name in _UNARY + ["maximum"] else f"core::{name}.Tensor"
        full = "core::max.other" if name == "max" else full
        expected[full] = expected.get(full, 0) + 1
    inner = expected.get("core::maximum", 0) + expected.get("core::max.other", 0)  # max.other calls maximum
    if inner:
        expected["core::maximum"] = inner
    assert counts == expected
    # The self times of all calls add up to the total times of the outermost calls (the
    # chain's own), whatever nests inside them.
    events = prof.events()
    outermost = [e for e in events if not any(
        o is not e and o.start_ns <= e.start_ns and e.start_ns + e.total_ns <= o.start_ns + o.total_ns for o in events
    )]  # fmt: skip
    assert len(outermost) == len(names)
    assert sum(e.self_ns for e in events) == sum(e.total_ns for e in outermost)
    assert all(0 <= e.self_ns <= e.total_ns for e in events)


def test_nested_profiles_each_record_the_calls_inside_them() -> None:
    with profile() as outer:
        core.neg(X)
        with profile(record_shapes=True) as inner:
            core.exp(X)
    assert outer.counts() == {"core::neg": 1, "core::exp": 1}
    assert inner.counts() == {"core::exp": 1} and inner.events()[0].shapes == ([2, 2],)
