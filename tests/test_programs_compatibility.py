"""Programs against changed schemas (issue 16): defaults filled in by name, out= placed by
name (pytorch/pytorch#63540), incompatible changes and newer programs refused at load."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import typedops
from typedops import Library, Tensor, core, tensor
from typedops.programs import IncompatibleProgramError, compile_program
from typedops.tracing import Program, trace

_fresh = itertools.count()
X = tensor([1.0, 2.0])


def _ns() -> str:
    return f"compat_test_{next(_fresh)}"


def _traced(ns: str, schema: str, kernel: Callable[..., Any], fn: Callable[[Any], Any]) -> Program:
    """A program traced while ``ns`` defines ``schema`` (the library is gone after)."""
    with Library(ns, "DEF") as lib:
        lib.define(schema)
        name = schema.partition("(")[0]
        lib.impl(name, kernel, "CPU", check=False)
        return trace(lambda a: fn(typedops.ops.__getattr__(ns)), X)


def _under(ns: str, schema: str, kernel: Callable[..., Any], run: Callable[[], Any]) -> Any:
    with Library(ns, "DEF") as lib:
        lib.define(schema)
        lib.impl(schema.partition("(")[0], kernel, "CPU", check=False)
        return run()


def test_a_trailing_defaulted_argument_is_filled_in() -> None:
    ns = _ns()
    program = _traced(ns, "f(Tensor x) -> Tensor", lambda x: core.mul(x, 10), lambda o: o.f(X))
    seen: list[int] = []

    def new_f(x: Tensor, k: int) -> Tensor:
        seen.append(k)
        return core.mul(x, k)

    for flavor in ("dispatch", "static"):
        result = _under(ns, "f(Tensor x, int k=1) -> Tensor", new_f, lambda: compile_program(program, flavor).run(X))
        assert result.tolist() == [1.0, 2.0]
    assert seen == [1, 1]


def test_out_is_placed_by_name_when_an_argument_appears_before_it() -> None:
    ns = _ns()

    def old(x: Tensor, *, out: Tensor) -> Tensor:
        return out.copy_(core.mul(x, 2))

    program = _traced(ns, "g.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)", old, lambda o: o.g.out(X, out=core.zeros([2])))
    calls: list[tuple[int, list[float]]] = []

    def new(x: Tensor, *, scale: int, out: Tensor) -> Tensor:
        calls.append((scale, out.tolist()))
        return out.copy_(core.mul(x, scale))

    def run() -> Any:
        compiled = compile_program(program)
        return compiled.run(tensor([3.0, 4.0]))

    result = _under(ns, "g.out(Tensor x, *, int scale=5, Tensor(a!) out) -> Tensor(a!)", new, run)
    assert result.tolist() == [15.0, 20.0]
    assert calls == [(5, [0.0, 0.0])]  # scale got its default, out the program's buffer


def test_an_incompatible_change_is_refused_naming_the_op_and_both_schemas() -> None:
    ns = _ns()
    program = _traced(ns, "f(Tensor x, int k) -> Tensor", lambda x, k: x, lambda o: o.f(X, 2))
    before = typedops.dispatcher.dump_state()

    def load() -> None:
        with pytest.raises(IncompatibleProgramError) as info:
            compile_program(program)
        assert str(info.value) == (
            f"cannot load the program: call %0 ({ns}::f) was saved against\n"
            f"    {ns}::f(Tensor x, int k) -> Tensor\n"
            f"and the registered schema\n    {ns}::f(Tensor x, str k) -> Tensor\n"
            "is not backward compatible with it (is_backward_compatible_with is false); "
            "trace and save the program again against this library"
        )
        assert isinstance(info.value, ValueError)

    _under(ns, "f(Tensor x, str k) -> Tensor", lambda x, k: x, load)
    assert typedops.dispatcher.dump_state() == before


def test_a_program_from_a_newer_library_runs_only_where_every_call_fits() -> None:
    ns = _ns()
    fits = _traced(ns, "f(Tensor x, int k=1) -> Tensor", lambda x, k: x, lambda o: o.f(X))
    does_not = _traced(ns, "f(Tensor x, int k=1) -> Tensor", lambda x, k: x, lambda o: o.f(o.f(X), k=3))

    def load() -> None:
        assert compile_program(fits, "static").run(X).tolist() == [-1.0, -2.0]
        with pytest.raises(IncompatibleProgramError) as info:
            compile_program(does_not)
        assert str(info.value) == (
            f"cannot load the program: call %1 ({ns}::f) was saved by a newer library, against\n"
            f"    {ns}::f(Tensor x, int k=1) -> Tensor\n"
            f"and passes k=3, which the registered schema\n    {ns}::f(Tensor x) -> Tensor\nhas no argument for; "
            "run it with a library that has 'k', or save it with k left at its default"
        )

    _under(ns, "f(Tensor x) -> Tensor", core.neg, load)


def test_a_program_whose_schemas_are_unchanged_parses_none(monkeypatch: pytest.MonkeyPatch) -> None:
    program = trace(lambda a: core.add(core.neg(a), a), X)
    import typedops.programs._compat as compat

    def refuse(text: str) -> Any:
        raise AssertionError(f"parsed {text}")

    monkeypatch.setattr(compat, "parse_schema", refuse)
    assert compile_program(program).run(X).tolist() == [0.0, 0.0]


def test_a_saved_program_loads_against_a_changed_library(tmp_path: Path) -> None:
    ns = _ns()

    def old(x: Tensor, *, out: Tensor) -> Tensor:
        return out.copy_(core.mul(x, 2))

    program = _traced(ns, "g.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)", old, lambda o: o.g.out(X, out=core.zeros([2])))
    program.save(tmp_path / "g.program")

    def new(x: Tensor, *, scale: int, out: Tensor) -> Tensor:
        return out.copy_(core.mul(x, scale))

    def run() -> Any:
        return [typedops.load(tmp_path / "g.program", flavor=f).run(tensor([3.0, 4.0])).tolist() for f in ("dispatch", "static")]

    assert _under(ns, "g.out(Tensor x, *, int scale=5, Tensor(a!) out) -> Tensor(a!)", new, run) == [[15.0, 20.0]] * 2

    def refused() -> str:
        with pytest.raises(IncompatibleProgramError) as info:
            typedops.load(tmp_path / "g.program")
        assert isinstance(info.value, typedops.ProgramFormatError)
        return str(info.value)

    # after out, too: each value goes to its argument by name
    assert _under(ns, "g.out(Tensor x, *, Tensor(a!) out, int scale=5) -> Tensor(a!)", new, run) == [[15.0, 20.0]] * 2
    assert _under(ns, "g.out(Tensor x, *, int scale, Tensor(a!) out) -> Tensor(a!)", new, refused).startswith(
        f"cannot load the program: call %1 ({ns}::g.out) was saved against\n"
    )


def test_a_saved_program_whose_schemas_are_unchanged_loads_without_parsing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    program = trace(lambda a: core.cat([core.neg(a), core.add(a, a)]), X)  # a list: the general reader
    program.save(tmp_path / "p.program")
    trace(lambda a: core.relu(core.add(core.neg(a), a, alpha=3)), X).save(tmp_path / "q.program")  # the fast one
    import typedops.programs._compat as compat
    import typedops.programs._fast as fast
    import typedops.programs._load as loading
    import typedops.tracing._program as programs

    def refuse(text: str) -> Any:
        raise AssertionError(f"parsed {text}")

    for module in (compat, fast, loading, programs):  # every module of the load path that could parse one
        monkeypatch.setattr(module, "parse_schema", refuse)
    for flavor in ("dispatch", "static"):
        assert typedops.load(tmp_path / "p.program", flavor=flavor).run(X).tolist() == [-1.0, -2.0, 2.0, 4.0]
        assert typedops.load(tmp_path / "q.program", flavor=flavor).run(X).tolist() == [2.0, 4.0]
