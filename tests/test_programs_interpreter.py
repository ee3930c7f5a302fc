"""The program stack machine (issue 16): instructions, both flavors, inputs, constants."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any, Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import typedops
from typedops import Tensor, core, op, tensor
from typedops.programs import CompiledProgram, IncompatibleProgramError, Opcode, compile_program
from typedops.tracing import Call, Constant, InputRef, OutputKind, Program, ProgramError, ResultRef, TensorInput, trace
from typedops.runtime import register_static_wrappers
from typedops.vocabulary import ArgumentValueError, Device, ScalarType, TensorError

_fresh = itertools.count()


def _ns() -> str:
    return f"interp_test_{next(_fresh)}"


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, Tensor):
        return isinstance(b, Tensor) and a.dtype is b.dtype and a.shape == b.shape and a.tolist() == b.tolist()
    if isinstance(a, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return bool(a == b)


def _both(program: Program) -> list[CompiledProgram]:
    return [compile_program(program, "dispatch"), compile_program(program, "static")]


def _f(x: Tensor, w: Tensor) -> tuple[Tensor, Tensor]:
    h = core.relu(core.add(core.matmul(x, w), x, alpha=2))
    return h.sum(), core.cat([h, h], 0)


X = tensor([[1.0, -2.0], [3.0, 0.5]])
W = tensor([[0.5, 1.0], [-1.0, 2.0]])


def test_a_program_assembles_to_loads_calls_and_stores() -> None:
    compiled = compile_program(trace(_f, X, W))
    assert compiled.disassemble() == "\n".join([
        "   0  LOAD_INPUT    0",
        "   1  LOAD_INPUT    1",
        "   2  CALL          0  # core::matmul",
        "   3  STORE         1",
        "   4  LOAD_REGISTER 0",
        "   5  LOAD_INPUT    0",
        "   6  LOAD_CONSTANT 0",
        "   7  CALL          1  # core::add.Tensor",
        "   8  STORE         1",
        "   9  LOAD_REGISTER 1",
        "  10  CALL          2  # core::relu",
        "  11  STORE         1",
        "  12  LOAD_REGISTER 2",
        "  13  LOAD_CONSTANT 1",
        "  14  CALL          3  # core::sum",
        "  15  STORE         1",
        "  16  LOAD_REGISTER 2",
        "  17  LOAD_REGISTER 2",
        "  18  BUILD_LIST    2",
        "  19  LOAD_CONSTANT 2",
        "  20  CALL          4  # core::cat",
        "  21  STORE         1",
        "  22  LOAD_REGISTER 3",
        "  23  LOAD_REGISTER 4",
        "  24  RETURN        2",
    ])  # fmt: skip
    assert {i.opcode for i in compiled.instructions} <= set(Opcode)


def test_both_flavors_give_eager_results() -> None:
    program = trace(_f, X, W)
    a, b = tensor([[2.0, 1.0], [0.0, -3.0]]), tensor([[1.0, 1.0], [2.0, -1.0]])
    for compiled in _both(program):
        assert _same(compiled.run(a, b), _f(a, b))
        assert _same(compiled(a, b), _f(a, b))
        assert compiled.dispatched_ops == ()


def test_the_static_flavor_dispatches_statically_to_meta() -> None:
    program = trace(_f, X, W)
    a, b = core.empty([3, 2], device="meta"), core.empty([2, 2], device="meta")
    total, both = compile_program(program, "static").run(a, b)
    assert (total.device, both.device, both.shape) == (Device("meta"), Device("meta"), (6, 2))


def test_both_flavors_refuse_tensors_of_two_devices_alike() -> None:
    weight = tensor([[0.5, 1.0], [-1.0, 2.0]])  # a CPU tensor constant
    program = trace(lambda a: core.mm(a, weight), X)
    meta = core.empty([3, 2], device="meta")
    for compiled in _both(program):
        with pytest.raises(TensorError) as info:
            compiled.run(meta)
        assert str(info.value) == (
            "Expected all tensors to be on the same device, but found at least two devices, meta and cpu! "
            "(core::mm takes tensors of one device; move them to one device first)"
        )
    listed = trace(lambda a: core.cat([a, weight], 0), X)  # a Tensor[] argument
    for compiled in _both(listed):
        with pytest.raises(TensorError, match="found at least two devices, meta and cpu"):
            compiled.run(meta)


def test_both_flavors_let_a_0_dim_cpu_tensor_join_another_device() -> None:
    program = trace(lambda a: core.mul(a, tensor(2.0)), X)  # a 0-dim CPU tensor constant
    for compiled in _both(program):
        out = compiled.run(core.empty([3, 2], device="meta"))
        assert (out.device, out.shape) == (Device("meta"), (3, 2))


def test_the_static_flavor_calls_an_op_without_a_static_wrapper_through_the_dispatcher() -> None:
    ns = _ns()

    @op(f"{ns}::twice")
    def twice(x: Tensor) -> Tensor:
        return core.mul(x, 2)

    program = trace(lambda a: core.neg(twice(a)), X)
    compiled = compile_program(program, "static")
    assert compiled.dispatched_ops == (f"{ns}::twice",)
    assert compiled.run(X).tolist() == [[-2.0, 4.0], [-6.0, -1.0]]
    twice.library.remove()


def test_the_static_flavor_calls_unboxed_static_wrappers_and_boxed_ones_where_it_cannot_lower() -> None:
    # Note [Lowered runs]: a lowered static run calls each op's unboxed static wrapper
    # with every argument positionally; a program with a list argument runs the stack
    # loop on the boxed wrappers.
    ns = _ns()
    lib = typedops.Library(ns, "DEF")
    lib.define("scale(Tensor x, *, int k=2) -> Tensor")
    lib.define("total(Tensor[] xs) -> Tensor")

    def scale(x: Tensor, k: int) -> Tensor:
        return core.mul(x, k)

    def total(xs: list[Tensor]) -> Tensor:
        return core.cat(xs, 0).sum()

    def scale_kernel(x: Tensor, *, k: int) -> Tensor:
        return scale(x, k)

    lib.impl("scale", scale_kernel, "CPU")
    lib.impl("total", total, "CPU")
    seen: list[tuple[str, tuple[Any, ...]]] = []

    def unboxed(name: str, kernel: Any) -> Any:
        def wrapper(*args: Any) -> Any:
            seen.append((name, tuple(a.tolist() if isinstance(a, Tensor) else a for a in args)))
            return kernel(*args)

        return wrapper

    def boxed(name: str, kernel: Any) -> Any:
        def wrapper(stack: list[Any]) -> None:
            seen.append((f"boxed {name}", ()))
            stack[:] = (kernel(*stack),)

        return wrapper

    register_static_wrappers("CPU", {f"{ns}::scale": (boxed("scale", scale), unboxed("scale", scale)),
                                     f"{ns}::total": (boxed("total", total), unboxed("total", total))})  # fmt: skip
    ops = typedops.ops
    a = tensor([1, 2])
    program = trace(lambda x: getattr(ops, ns).scale(x, k=3), a)
    compiled = compile_program(program, "static")
    assert compiled.run(tensor([4, 5])).tolist() == [12, 15]
    assert seen == [("scale", ([4, 5], 3))] and compiled.dispatched_ops == ()
    seen.clear()
    listed = compile_program(trace(lambda x: getattr(ops, ns).total([x, x]), a), "static")
    assert listed.run(tensor([4, 5])).tolist() == 18
    assert seen == [("boxed total", ())]
    lib.remove()


def test_the_static_flavor_reaches_the_dispatcher_only_for_ops_without_a_static_wrapper() -> None:
    ns = _ns()

    @op(f"{ns}::twice")
    def twice(x: Tensor) -> Tensor:
        return core.mul(x, 2)

    program = trace(lambda a: core.neg(core.add(twice(core.abs(a)), a)), X)
    with typedops.profile() as prof:
        assert compile_program(program, "static").run(X).tolist() == [[-3.0, -2.0], [-9.0, -1.5]]
    # twice goes through the dispatcher (and so does the mul its kernel calls); abs, add and neg do not
    assert sorted(e.name for e in prof.events()) == sorted([f"{ns}::twice", "core::mul.Scalar", "core::mul.Tensor"])
    twice.library.remove()


def test_the_static_flavor_writes_out_arguments_as_eager_does() -> None:
    def f(a: Tensor, b: Tensor, out: Tensor) -> Tensor:
        return core.add(a, b, alpha=2, out=out)

    a, b = tensor([1, 2]), tensor([10, 20])
    program = trace(f, a, b, core.empty([2], dtype=ScalarType.int64))
    for compiled in _both(program):
        out = core.empty([2], dtype=ScalarType.int64)
        assert compiled.run(a, b, out) is out and out.tolist() == [21, 42]


def test_the_static_flavor_refuses_a_backend_it_was_not_generated_for() -> None:
    import numpy as np

    from typedops.tensor import wrap_array
    from typedops.vocabulary import NoKernelError

    program = trace(lambda a, b: core.relu(core.add(a, b)), tensor([1.0]), tensor([2.0]))
    other = wrap_array(np.zeros(2, dtype=np.float32), ScalarType.float32, Device("privateuseone"))
    with pytest.raises(NoKernelError) as info:
        compile_program(program, "static").run(other, other)
    assert str(info.value) == (
        "core::add.Tensor has no statically dispatched kernel for DispatchKeySet(ADInplaceOrView, PrivateUse1); this "
        "build dispatches statically to CPU, Meta only -- regenerate with that backend in --static-dispatch, or use the "
        "dispatched build"
    )
    with pytest.raises(NoKernelError, match="core::add.Tensor has no kernel for dispatch key PrivateUse1"):
        compile_program(program, "dispatch").run(other, other)


def test_the_dispatch_flavor_is_seen_by_the_profiler_and_autograd() -> None:
    program = trace(lambda a, b: core.mul(a, b).sum(), X, W)
    compiled = compile_program(program)
    with typedops.profile() as prof:
        compiled.run(X, W)
    assert [e.name for e in prof.events()] == ["core::mul.Tensor", "core::sum"]
    a = tensor([1.0, 2.0], requires_grad=True)
    compiled.run(a, tensor([3.0, 4.0])).backward()
    assert a.grad is not None and a.grad.tolist() == [3.0, 4.0]


def test_a_tensor_constant_an_op_writes_into_is_new_each_run() -> None:
    def f(a: Tensor) -> Tensor:
        c = tensor([1.0, 2.0])  # a tensor constant
        c.add_(a)
        return c

    program = trace(f, tensor([1.0, 1.0]))
    for compiled in _both(program):
        assert Opcode.LOAD_FRESH in {i.opcode for i in compiled.instructions}
        assert compiled.run(tensor([1.0, 1.0])).tolist() == [2.0, 3.0]
        assert compiled.run(tensor([1.0, 1.0])).tolist() == [2.0, 3.0]


def test_a_write_through_a_view_of_a_tensor_constant_persists_across_runs() -> None:
    def f(a: Tensor) -> Tensor:
        c = tensor([1.0, 2.0])  # a tensor constant, written only through a view of it
        return c.view([2]).add_(a)

    program = trace(f, tensor([1.0, 1.0]))
    for compiled in _both(program):  # the limit of LOAD_FRESH (docs/programs.md)
        assert Opcode.LOAD_FRESH not in {i.opcode for i in compiled.instructions}
        assert compiled.run(tensor([1.0, 1.0])).tolist() == [2.0, 3.0]
        assert compiled.run(tensor([1.0, 1.0])).tolist() == [3.0, 4.0]


def test_runs_check_their_inputs() -> None:
    program = trace(lambda a, n: core.mul(a, n), X, 3)
    compiled = compile_program(program)
    with pytest.raises(ProgramError) as info:
        compiled.run(X)
    assert str(info.value) == "the compiled program takes 2 input(s) (a, n) by position, got 1"
    with pytest.raises(ProgramError, match="^the compiled program's input 'a' must be a Tensor, got list$"):
        compiled.run([1.0], 3)
    with pytest.raises(ProgramError) as info:
        compiled.run(X, 4)
    assert str(info.value) == (
        "input 'n' was 3 when the program was traced, and the program is specialized to that value; "
        "got 4. Trace and save it again with n=4"
    )
    assert compiled.run(X, 3).tolist() == core.mul(X, 3).tolist()


def test_an_unknown_flavor_is_refused() -> None:
    with pytest.raises(ArgumentValueError) as info:
        compile_program(trace(_f, X, W), "fast")  # type: ignore[arg-type]
    assert str(info.value) == "flavor must be 'dispatch' or 'static', got 'fast'"
    assert isinstance(info.value, ValueError)


def test_a_program_with_bad_references_or_values_is_refused_at_load() -> None:
    schema = "core::neg(Tensor self) -> Tensor"
    inputs = (TensorInput("x", ScalarType.float32, (2,), Device("cpu")),)

    def refused(calls: tuple[Call, ...], outputs: tuple[Any, ...] = (ResultRef(0),)) -> str:
        with pytest.raises(IncompatibleProgramError) as info:
            compile_program(Program(inputs, calls, outputs, OutputKind.single))
        assert isinstance(info.value, typedops.TypedopsError)
        return str(info.value)

    assert refused((Call("core::neg", "", schema, (ResultRef(3),), 1),)) == (
        "cannot load the program: call %0 (core::neg), argument 'self': refers to %3, which is not an earlier call"
    )
    assert refused((Call("core::neg", "", schema, (Constant("x"),), 1),)) == (
        "cannot load the program: call %0 (core::neg), argument 'self': expected Tensor, got str"
    )
    assert refused((Call("core::neg", "", schema, (InputRef(0), InputRef(0)), 1),)) == (
        "cannot load the program: call %0 (core::neg) has 2 argument(s) for its saved schema of 1"
    )
    assert refused((Call("core::nope", "", schema, (InputRef(0),), 1),)) == (
        "cannot load the program: call %0 calls core::nope, which is not registered; "
        "import the library that defines it before loading"
    )
    assert refused((Call("core::neg", "", schema, (InputRef(0),), 1),), (ResultRef(0, 1),)) == (
        "cannot load the program: output 0 refers to result 1 of %0, which has 1"
    )


_UNARY = ["neg", "abs", "relu"]
_BINARY = ["add", "mul", "maximum", "sub", "minimum"]


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(_UNARY + _BINARY), st.integers(0, 5)), min_size=1, max_size=10),
    st.lists(st.integers(-50, 50), min_size=3, max_size=3),
)
def test_both_flavors_run_a_chain_exactly_like_eager(steps: list[tuple[str, int]], data: list[int]) -> None:
    def chain(a: Tensor, b: Tensor) -> tuple[Tensor, ...]:
        values = [a, b]
        for name, pick in steps:
            fn = getattr(core, name)
            operand = values[pick % len(values)]
            values.append(fn(operand) if name in _UNARY else fn(values[-1], operand))
        return tuple(values[2:])

    a, b = tensor(data), tensor([d * 3 - 1 for d in data])  # int64: exact
    program = trace(chain, tensor([1, 2, 3]), tensor([4, 5, 6]))
    for compiled in _both(program):
        assert _same(compiled.run(a, b), chain(a, b))


def test_the_examples_of_docs_programs_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import contextlib
    import io
    import re

    monkeypatch.chdir(tmp_path)  # the examples save files: not into the checkout
    page = (Path(__file__).resolve().parent.parent / "docs" / "programs.md").read_text()
    blocks = [(m.group(1), m.group(2)) for m in re.finditer(r"^```(\w*)\n(.*?)^```$", page, re.S | re.M)]
    namespace: dict[str, object] = {"__name__": "docs_programs"}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        for kind, text in blocks:
            if kind == "python":
                exec(compile(text, "docs/programs.md", "exec"), namespace)
    shown = next(text for kind, text in blocks if kind == "" and "LOAD_INPUT" in text).splitlines()
    printed = out.getvalue().splitlines()
    assert printed[: shown.index("   ...")] == shown[: shown.index("   ...")]
    assert printed[-1] == shown[-1]


def test_a_loaded_program_runs_under_dispatch_modes_and_fake_tensors(tmp_path: Any) -> None:
    from typedops import DispatchMode, FakeTensor, FakeTensorMode

    class Logging(DispatchMode):
        def __init__(self) -> None:
            self.calls: list[str] = []

        def __typedops_dispatch__(self, op: Any, types: Any, args: Any, kwargs: Any) -> Any:
            self.calls.append(op.full_name)
            return op(*args, **kwargs)

    trace(_f, X, W).save(tmp_path / "f.program")
    loaded = typedops.load(tmp_path / "f.program")
    with Logging() as mode:
        loaded.run(X, W)
    assert mode.calls == ["core::matmul", "core::add.Tensor", "core::relu", "core::sum", "core::cat"]
    five = core.ones([5, 2])
    with FakeTensorMode() as fake:
        total, both = loaded.run(fake.from_tensor(five), fake.from_tensor(W))
    assert isinstance(both, FakeTensor) and both.shape == (10, 2) and total.shape == ()


def test_a_mode_sees_a_program_s_calls_as_it_sees_eager_ones() -> None:
    # Calls taking the unboxed entry (alpha equal to its default) and the boxed one
    # (alpha=2) alike (Note [Lowered runs] in typedops/programs/_interpreter.py).
    from typedops import DispatchMode

    class Recording(DispatchMode):
        def __init__(self) -> None:
            self.calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []

        def __typedops_dispatch__(self, op: Any, types: Any, args: Any, kwargs: Any) -> Any:
            self.calls.append((op.full_name, tuple(a.tolist() if isinstance(a, Tensor) else a for a in args),
                               dict(kwargs)))  # fmt: skip
            return op(*args, **kwargs)

    def f(a: Tensor, b: Tensor) -> Tensor:
        return core.neg(core.add(core.sub(core.add(a, b), b, alpha=2), a))

    a, b = tensor([1, -2, 3]), tensor([4, 5, -6])
    with Recording() as eager:
        expected = f(a, b)
    for compiled in _both(trace(f, a, b)):
        with Recording() as seen:
            result = compiled.run(a, b)
        assert _same(result, expected)
        if compiled.flavor == "dispatch":
            assert seen.calls == eager.calls


def _caller_files(ns: str) -> tuple[Any, list[str]]:
    """An op ``ns::probe`` whose kernel records which of the interpreter's frames called it:
    the step loop's (in _interpreter.py) or a straight-line function's."""
    import sys

    files: list[str] = []

    @op(f"{ns}::probe")
    def probe(x: Tensor) -> Tensor:
        frame: Any = sys._getframe(1)
        while not (frame.f_code.co_filename == "<straight-line program>"
                   or frame.f_code.co_filename.endswith(("programs/_interpreter.py", "test_programs_interpreter.py"))):  # fmt: skip
            frame = frame.f_back  # the dispatcher's frames, up to its caller
        files.append(frame.f_code.co_filename)
        return core.neg(x)

    return probe, files


@pytest.mark.parametrize("flavor", ["dispatch", "static"])
def test_a_lowered_program_runs_as_one_straight_line_function_after_straight_after_runs(flavor: str) -> None:
    # Note [Straight-line runs]: the step loop calls the ops STRAIGHT_AFTER times, then
    # the program's own compiled function does, with the same results.
    from typedops.programs._straight import STRAIGHT_AFTER

    probe, files = _caller_files(_ns())
    program = trace(lambda a: core.add(probe(a), a), X)
    compiled = compile_program(program, flavor)  # type: ignore[arg-type]
    files.clear()  # the traced call's
    results = [compiled.run(X).tolist() for _ in range(STRAIGHT_AFTER + 2)]
    assert all(r == [[0.0, 0.0], [0.0, 0.0]] for r in results)
    assert files[:STRAIGHT_AFTER] == [files[0]] * STRAIGHT_AFTER and files[0].endswith("programs/_interpreter.py")
    assert files[STRAIGHT_AFTER:] == ["<straight-line program>"] * 2
    probe.library.remove()


def test_straighten_compiles_now_and_keeps_boxed_calls_of_several_returns() -> None:
    ns = _ns()
    lib = typedops.Library(ns, "DEF")
    lib.define("split2(Tensor x) -> (Tensor, Tensor)")

    def split2(x: Tensor) -> tuple[Tensor, Tensor]:
        return core.neg(x), core.abs(x)

    lib.impl("split2", split2, "CPU")
    ops = getattr(typedops.ops, ns)

    def f(a: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        first, second = ops.split2(a)
        return second, core.mul(first, second), a

    for compiled in _both(trace(f, X)):
        expected = compiled.run(X)
        assert compiled.straighten() and compiled.straighten()  # once compiled, it stays
        got = compiled.run(X)
        assert _same(got, expected) and got[2] is X
    listed = compile_program(trace(lambda a: core.cat([a, a], 0), X), "static")
    assert not listed.straighten()  # a list argument: not lowered, the instruction loop
    assert listed.run(X).tolist() == core.cat([X, X], 0).tolist()


def test_straight_line_source_is_made_of_slot_numbers_alone() -> None:
    from typedops.programs._straight import straight_line

    with pytest.raises(AssertionError, match="not a slot number: '0; import os'"):
        straight_line([(False, core.neg, ("0; import os",), 1)], 1, (), (1,), True)  # type: ignore[list-item]
    with pytest.raises(AssertionError, match="not a slot number: True"):
        straight_line([(False, core.neg, (True,), 1)], 1, (), (1,), True)
    def boxed(stack: list[Any]) -> None:
        stack[:] = [core.mul(stack[0], stack[1])]

    # The frame: input 0, constant 1, then each call's returns (slots 2 and 3).
    run = straight_line([(False, core.neg, (0,), 1), (True, boxed, (2, 1), 1)], 1, (3,), (3, 2, 1), False)
    three, negated, constant = run((X,))
    assert three.tolist() == (-X * 3).tolist() and negated.tolist() == (-X).tolist() and constant == 3


_redefined = itertools.count()


def test_an_op_is_resolved_once_per_handle_and_afresh_when_redefined_or_given_new_static_wrappers(tmp_path: Path) -> None:
    # Note [Ops resolved once]: a second load takes the first one's resolved op; an op
    # defined again is a new handle, whose kernel the next load calls; static wrappers
    # registered later replace what the static flavor calls.
    from typedops.programs import _interpreter

    ns = f"resolved_once_{next(_redefined)}"
    x = tensor([1.0, 2.0])

    def loads_under(kernel: Any, wrapper: Any = None) -> list[Any]:
        flavors: tuple[tuple[bool, Literal["dispatch", "static"]], ...] = ((False, "dispatch"), (True, "static"))
        lib = typedops.Library(ns, "DEF")
        try:
            lib.define("f(Tensor x) -> Tensor")
            lib.impl("f", kernel, "CPU", check=False)
            handle = typedops.ops.__getattr__(ns).f.default
            path = tmp_path / f"{ns}.program"
            trace(lambda a: handle(a), x).save(path)
            runs: list[Any] = []
            for static, flavor in flavors:
                first = typedops.load(path, flavor=flavor)
                resolved = _interpreter._RESOLVED.get((id(handle), static))
                if static and wrapper is not None:  # a module registering wrappers after the first load
                    register_static_wrappers("CPU", {f"{ns}::f": (lambda stack: stack.__setitem__(slice(None), (
                        wrapper(*stack),)), wrapper)})  # fmt: skip
                second = typedops.load(path, flavor=flavor)
                again = _interpreter._RESOLVED.get((id(handle), static))
                assert resolved is not None and again is not None
                assert (again is resolved) == (not static or wrapper is None)
                runs += [first.run(x).tolist(), second.run(x).tolist(), resolved[1][1]]
            return runs
        finally:
            lib.remove()

    before = loads_under(lambda t: core.mul(t, 10))
    after = loads_under(lambda t: core.mul(t, 100), wrapper=lambda t: core.mul(t, 1000))
    assert before[0:2] == before[3:5] == [[10.0, 20.0]] * 2
    assert after[0:2] == [[100.0, 200.0]] * 2  # the redefined op's kernel
    assert after[3:5] == [[100.0, 200.0], [1000.0, 2000.0]]  # the static wrappers registered after the first load
    assert before[2] is not after[2]  # the redefined op's own entry, not the first one's
