"""typedops.trace and Program (issue 15): recording, printing, running, ops(), check()."""

from __future__ import annotations

import dataclasses
import itertools
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import typedops
from typedops import Library, Tensor, core, op, tensor
from typedops.dispatch import DispatchKey
from typedops.tracing import (
    Call,
    Constant,
    InputRef,
    ListOf,
    OutputKind,
    Program,
    ProgramError,
    ResultRef,
    TensorConstant,
    TensorInput,
    TraceError,
    Value,
    trace,
)
from typedops.vocabulary import Device, ScalarType

_fresh = itertools.count()


def _ns() -> str:
    return f"trace_test_{next(_fresh)}"


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, Tensor):
        return isinstance(b, Tensor) and a.dtype is b.dtype and a.shape == b.shape and a.tolist() == b.tolist()
    if isinstance(a, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return bool(a == b)


def f(x: Tensor, y: Tensor, n: int) -> Any:
    z = core.mul(x, y)
    for _ in range(n):
        z = core.add(z, x, alpha=2)
    return z.sum(), core.zeros([2])


X, Y = tensor([1.0, 2.0]), tensor([3.0, 4.0])

PRINTED = """\
program(x: Tensor(float32[2]), y: Tensor(float32[2]), n=2):
  %0: Tensor = core::mul.Tensor(x, y)
  %1: Tensor = core::add.Tensor(%0, x, alpha=2)
  %2: Tensor = core::add.Tensor(%1, x, alpha=2)
  %3: Tensor = core::sum(%2, dtype=None)
  %4: Tensor = core::zeros([2], dtype=None, layout=None, device=None, pin_memory=None)
  return (%3, %4)"""


def test_trace_records_every_call_and_prints_one_a_line() -> None:
    program = trace(f, X, Y, 2)
    assert str(program) == PRINTED
    assert program.ops() == ["core::add.Tensor", "core::mul.Tensor", "core::sum", "core::zeros"]
    assert program.calls[1] == Call(
        "core::add", "Tensor", str(typedops.ops.core.add.Tensor.schema), (ResultRef(0), InputRef(0), Constant(2)), 1
    )
    assert program.inputs[0] == TensorInput("x", ScalarType.float32, (2,), Device("cpu"))
    assert program.output_kind is OutputKind.tuple


def test_a_program_runs_and_gives_what_the_function_gave() -> None:
    program = trace(f, X, Y, 2)
    a, b = tensor([5.0, -1.0]), tensor([0.5, 2.0])
    assert _same(program(a, b, 2), f(a, b, 2))
    assert _same(program(a, y=b, n=2), f(a, b, 2))
    program.check()


def test_inputs_used_as_constants_are_specialized() -> None:
    program = trace(f, X, Y, 2)
    message = (
        "input 'n' was 2 when the program was traced, and the program is specialized to that value "
        "(Python code used it as a constant); got 3. Trace again with n=3"
    )
    with pytest.raises(ProgramError, match=re.escape(message)):
        program(X, Y, 3)
    with pytest.raises(ProgramError, match=re.escape("input 'x' must be a Tensor, got float")):
        program(1.0, Y, 2)
    with pytest.raises(ProgramError, match=re.escape("the program takes 3 input(s) (x, y, n), got 2")):
        program(X, Y)
    with pytest.raises(ProgramError, match=re.escape("the program has no input 'z'; its inputs are x, y, n")):
        program(X, Y, 2, z=1)


@pytest.mark.parametrize(
    ("inputs", "name", "kind"),
    [((X, [X]), "input1", "list"), ((X, (Y,)), "input1", "tuple"), ((X, [1, [2, (X,)]]), "input1", "list"),
     ((X, [Y]), "input1", "list")],
)  # fmt: skip
def test_a_list_input_holding_a_tensor_is_refused_naming_it(inputs: tuple[Any, ...], name: str, kind: str) -> None:
    # It was recorded as a constant input referring to input 0, which no run could bind.
    message = (
        f"cannot trace with input {name!r}: a {kind} holding a tensor is not an input a program takes (its inputs "
        "are tensors and constants, and a constant holds no tensor); pass each tensor as an input of its own"
    )
    with pytest.raises(TraceError, match=re.escape(message)) as raised:
        trace(lambda *args: core.neg(args[0]), *inputs)
    assert isinstance(raised.value, TypeError)
    with pytest.raises(TraceError, match=re.escape(message.replace(name, "ys"))):
        trace(lambda x, ys: core.cat(ys), X, ys=list(inputs[1:]) if kind == "list" else tuple(inputs[1:]))


def test_a_list_input_of_constants_still_specializes_and_tensors_go_in_as_inputs() -> None:
    program = trace(lambda a, b, sizes: core.cat([a, b]).reshape(sizes), X, Y, [4])
    assert program(Y, X, [4]).tolist() == [3.0, 4.0, 1.0, 2.0]
    with pytest.raises(ProgramError, match="input 'sizes' was \\[4\\] when the program was traced"):
        program(X, Y, [2, 2])


def test_calls_inside_kernels_are_recorded_at_the_outermost_level_or_decomposed() -> None:
    # sub_ is CompositeImplicitAutograd: its kernel calls add_ with alpha negated.
    outer = trace(lambda a: core.mul(a, 1.0).sub_(a, alpha=3), X)
    assert [c.full_name for c in outer.calls][-1] == "core::sub_.Tensor"
    inner = trace(lambda a: core.mul(a, 1.0).sub_(a, alpha=3), X, decompose=True)
    assert [c.full_name for c in inner.calls][-1] == "core::add_.Tensor"
    assert inner.calls[-1].args[1:] == (InputRef(0), Constant(-3))
    assert _same(outer(tensor([2.0])), inner(tensor([2.0])))


def test_tensors_made_from_data_become_tensor_constants_and_lists_are_recorded() -> None:
    def g(a: Tensor) -> Tensor:
        return core.cat([a, tensor([[7.0, 8.0]]).reshape([2])])

    program = trace(g, X)
    assert program.calls[-1].args[0] == ListOf((InputRef(0), ResultRef(0)))
    constant = TensorConstant(ScalarType.float32, (1, 2), Device("cpu"), b"\0\0\xe0@\0\0\0A")  # 7.0, 8.0
    assert program.calls[0].args[0] == constant and hash(program.calls[0].args[0]) == hash(constant)
    assert constant.elements().tolist() == [[7.0, 8.0]] and not constant.elements().flags.writeable
    assert "core::reshape(tensor([7.0, 8.0], shape=[1, 2], dtype=float32), [2])" in str(program)
    assert _same(program(tensor([0.0, 1.0])), g(tensor([0.0, 1.0])))


def test_multiple_results_are_referenced_one_by_one() -> None:
    program = trace(lambda a: core.max(a.reshape([1, 2]), 1)[1], X)
    assert "%1, %1.1: Tensor, Tensor = core::max.dim(%0, 1, False)" in str(program)
    assert program.outputs == (ResultRef(1, 1),)
    assert program(tensor([3.0, 9.0])).tolist() == [1]


def test_output_kinds() -> None:
    assert trace(lambda a: None, X).output_kind is OutputKind.none
    assert trace(lambda a: None, X)(X) is None
    as_list = trace(lambda a: [a, 3], X)
    assert as_list.outputs == (InputRef(0), Constant(3)) and as_list(X)[1] == 3
    with pytest.raises(TraceError, match=re.escape("the traced function returned a nested tuple")):
        trace(lambda a: ((a,),), X)
    with pytest.raises(TraceError, match=re.escape("the traced function returned a object: a traced")):
        trace(lambda a: object(), X)


def test_a_value_neither_tensor_nor_constant_is_refused_naming_the_op_and_argument() -> None:
    ns = _ns()

    @op(f"{ns}::scale")
    def scale(x: Tensor, factor: float) -> Tensor:
        return x

    before = typedops.dispatcher.dump_state()
    # A typed argument is checked by the call itself (Note [Unboxed calls check like boxed ones])
    with pytest.raises(TypeError) as checked:
        trace(lambda a: scale(a, object()), X)  # type: ignore[arg-type]
    assert str(checked.value) == f"{ns}::scale(): argument 'factor' (float): expected float, got object"
    assert typedops.dispatcher.dump_state() == before
    # one the call does not check (Any) reaches the tracer, which refuses it
    lib = typedops.Library(ns, "FRAGMENT")
    anything = lib.define("anything(Tensor x, Any v) -> Tensor")
    lib.impl("anything", typedops.boxed(lambda op, keys, stack: stack.__setitem__(slice(None), [stack[0]])), "CPU")
    before = typedops.dispatcher.dump_state()
    with pytest.raises(TraceError) as info:
        trace(lambda a: anything(a, object()), X)
    assert str(info.value) == (
        f"cannot trace {ns}::anything: argument 'v' is a object, neither a tensor nor a constant "
        "(None, bool, int, float, complex, str, a dtype, layout, memory format or device, or a list of these); "
        "pass a tensor, or convert the value (int(...), float(...)) before the call"
    )
    assert isinstance(info.value, TypeError)
    assert typedops.dispatcher.dump_state() == before  # the Tracer fallback is gone again
    lib.remove()
    with pytest.raises(TraceError, match="cannot trace with input 'input1': a object is neither"):
        trace(lambda *a: a[0], X, object())
    scale.library.remove()


def test_tracing_costs_nothing_after_it_ends() -> None:
    trace(f, X, Y, 1)
    assert "Tracer               fallthrough" in typedops.ops.core.add.Tensor.dump_table()


def test_a_user_tracer_fallback_is_named_when_trace_needs_the_key() -> None:
    def mine(op: Any, keys: Any, stack: list[Any]) -> None:
        op.redispatch_boxed(keys, stack)

    with Library("_", "IMPL") as lib:
        lib.fallback(mine, DispatchKey.Tracer)
        with pytest.raises(typedops.RegistrationError, match="typedops.trace serves the Tracer key with its own"):
            trace(f, X, Y, 1)
    trace(f, X, Y, 1)


def test_check_finds_what_no_longer_fits() -> None:
    ns = _ns()
    with Library(ns, "DEF") as lib:
        lib.define("g(Tensor x, int n) -> Tensor")
        lib.impl("g", lambda x, n: x, "CompositeExplicitAutograd", check=False)
        program = trace(lambda a: getattr(typedops.ops, ns).g(a, 2), X)
        program.check()
        schema = program.calls[0].schema
        bad = Program(
            program.inputs,
            (
                Call(f"{ns}::g", "", schema, (InputRef(0), Constant("two")), 1),
                Call(f"{ns}::g", "", schema, (ResultRef(5), Constant(1)), 1),
                Call(f"{ns}::g", "", schema, (InputRef(0),), 1),
                Call(f"{ns}::nope", "", schema, (InputRef(0), Constant(1)), 1),
            ),
            (ResultRef(0, 3),),
            OutputKind.single,
        )
        with pytest.raises(ProgramError) as info:
            bad.check()
        assert info.value.problems == [
            f"call %0 ({ns}::g): argument 'n': expected int, got str",
            f"call %1 ({ns}::g): argument 'x': refers to %5, which is not an earlier call",
            f"call %2 ({ns}::g): 1 argument(s) for a schema of 2",
            f"call %3 ({ns}::nope): no operator {ns}::nope is registered now",
            "output 0: refers to result 3 of %0, which has 1",
        ]
    with Library(ns, "DEF") as lib:
        lib.define("g(Tensor x, float n) -> Tensor")
        with pytest.raises(ProgramError, match=re.escape(f"its schema changed since tracing: traced {schema}")):
            program.check()


_UNARY = ["neg", "exp", "abs", "sigmoid", "tanh"]
_BINARY = ["add", "mul", "maximum", "sub"]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_UNARY + _BINARY), st.integers(0, 5)), min_size=1, max_size=8))
def test_a_traced_chain_runs_like_the_function(steps: list[tuple[str, int]]) -> None:
    def chain(a: Tensor, b: Tensor) -> Tensor:
        values = [a, b]
        for name, pick in steps:
            fn = getattr(core, name)
            operand = values[pick % len(values)]
            values.append(fn(operand) if name in _UNARY else fn(values[-1], operand))
        return values[-1]

    program = trace(chain, tensor([0.5, -1.0]), tensor([2.0, 0.25]))
    assert len(program.calls) == len(steps)
    program.check()
    a, b = tensor([1.5, 0.0]), tensor([-0.5, 3.0])
    assert _same(program(a, b), chain(a, b))


def test_tracing_fake_tensors_records_the_same_program() -> None:
    from typedops import FakeTensorMode

    with FakeTensorMode() as mode:
        fx, fy = mode.from_tensor(X), mode.from_tensor(Y)
        program = trace(f, fx, fy, 1)
    assert [c.full_name for c in program.calls] == [c.full_name for c in trace(f, X, Y, 1).calls]
    assert _same(program(X, Y, 1), f(X, Y, 1))


def test_check_parses_no_schema_when_the_texts_agree(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each result's type comes from the registered schema (Note [Checking a program's
    values] in typedops/tracing/_checking.py), not from the call's text parsed again."""
    program = trace(lambda a, b: core.add(core.mul(core.neg(a), b), core.neg(b)), X, Y)
    import typedops.tracing._program as programs

    def refuse(text: str) -> Any:
        raise AssertionError(f"parsed {text}")

    monkeypatch.setattr(programs, "parse_schema", refuse)
    program.check()


def test_check_and_compile_program_share_one_checker() -> None:
    """The words of a value that does not fit are the same from Program.check and from
    compile_program (which every load goes through)."""
    from typedops.programs import IncompatibleProgramError, compile_program

    program = trace(lambda a: core.mul(a, 2), X)
    call = program.calls[0]
    bad = Program(program.inputs, (Call(call.op, call.overload, call.schema, (InputRef(0), Constant("two")), 1),),
                  program.outputs, program.output_kind)  # fmt: skip
    with pytest.raises(ProgramError) as checked:
        bad.check()
    with pytest.raises(IncompatibleProgramError) as compiled:
        compile_program(bad)
    (problem,) = checked.value.problems
    words = "argument 'other': expected Scalar, got str"
    assert problem == f"call %0 ({call.full_name}): {words}"
    assert str(compiled.value) == f"cannot load the program: call %0 ({call.full_name}), {words}"


# -- quick construction (Note [Quick construction] in tracing/_values.py) ----------------------
_DATA = st.one_of(st.none(), st.binary(max_size=16))


@given(st.sampled_from(list(ScalarType)), st.lists(st.integers(0, 4), max_size=3).map(tuple), _DATA)
def test_tensor_constant_quick_is_the_constructed_one(dtype: ScalarType, shape: tuple[int, ...], data: bytes | None) -> None:
    made, quick = TensorConstant(dtype, shape, Device("cpu"), data), TensorConstant.quick(dtype, shape, Device("cpu"), data)
    assert type(quick) is TensorConstant
    assert quick == made and hash(quick) == hash(made) and repr(quick) == repr(made)
    with pytest.raises(dataclasses.FrozenInstanceError):
        quick.data = b""  # type: ignore[misc]


@given(st.text(max_size=8), st.text(max_size=8), st.integers(0, 3), st.lists(st.integers(0, 3), max_size=3))
def test_call_quick_is_the_constructed_one(name: str, overload: str, outputs: int, refs: list[int]) -> None:
    args: tuple[Value, ...] = tuple(ResultRef(r) for r in refs) + (Constant(1),)
    made = Call(name, overload, "f() -> ()", args, outputs)
    quick = Call.quick(name, overload, "f() -> ()", args, outputs)
    assert type(quick) is Call
    assert quick == made and hash(quick) == hash(made) and repr(quick) == repr(made) and quick.full_name == made.full_name
    with pytest.raises(dataclasses.FrozenInstanceError):
        quick.op = "x"  # type: ignore[misc]


# -- detach is an op (Note [detach is an op] in typedops/autograd/_methods.py) ----------------
def test_detach_is_recorded_and_replayed_saved_and_loaded() -> None:
    import io

    program = trace(lambda a: a.detach() * 2.0, tensor([1.0, 2.0]))
    assert [c.full_name for c in program.calls] == ["core::detach", "core::mul.Tensor"]
    assert program.calls[0].args == (InputRef(0),)
    assert _same(program(tensor([10.0, 20.0])), tensor([20.0, 40.0]))
    buffer = io.BytesIO()
    program.save(buffer)
    for flavor in ("dispatch", "static"):
        buffer.seek(0)
        loaded = typedops.load(buffer, flavor=flavor)
        assert loaded.program == program
        assert _same(loaded.run(tensor([10.0, 20.0])), tensor([20.0, 40.0]))


def test_func_grad_inside_trace_records_its_lifted_arguments() -> None:
    from typedops.func import grad, grad_and_value

    def g(a: Tensor) -> Any:
        return grad(lambda t: (t * t).sum())(a)

    def gv(a: Tensor) -> Any:
        return grad_and_value(lambda t: (t * t).sum())(a)

    new = tensor([10.0, 20.0])
    for fn in (g, gv):
        for requires_grad in (False, True):  # a fresh leaf, or an alias of the argument
            program = trace(fn, tensor([1.0, 2.0], requires_grad=requires_grad))
            assert program.calls[0].full_name == "core::detach"
            assert _same(program(new), fn(new))


def test_func_grad_under_vmap_inside_trace_records_the_unbatched_argument() -> None:
    """vmap(grad(f), in_dims=(None, 0)) expands the unbatched argument: through the ops
    while a trace runs, so the program takes the new argument, not the traced one."""
    from typedops import vmap
    from typedops.func import grad

    def fn(p: Tensor, x: Tensor) -> Any:
        return vmap(grad(lambda p, x: (p * p * x).sum()), in_dims=(None, 0))(p, x)

    program = trace(fn, tensor([1.0, 2.0]), tensor([[1.0, 1.0], [2.0, 2.0]]))
    p, x = tensor([3.0, 4.0]), tensor([[1.0, 1.0], [2.0, 2.0]])
    assert _same(program(p, x), fn(p, x)) and program(p, x).tolist() == [[6.0, 8.0], [12.0, 16.0]]


# -- wrapped numbers (Note [Wrapped numbers in programs] in typedops/tracing/_values.py) -------
@pytest.mark.parametrize(
    ("fn", "example"),
    [
        (lambda a: a * 2.5, tensor([1, 2])),
        (lambda a: 2.5 * a, tensor([1, 2])),
        (lambda a: a + 1, tensor([True, False])),
        (lambda a: a - 1.5, tensor([1.0, 2.0], dtype=ScalarType.float16)),
        (lambda a: a * 2j, tensor([1.0, 2.0])),
    ],
    ids=["int*float", "float*int", "bool+int", "half-float", "float*complex"],
)
def test_a_python_number_is_recorded_as_a_wrapped_number_and_promotes_as_in_eager(fn: Any, example: Tensor) -> None:
    program = trace(fn, example)
    expected = fn(example)
    assert program(example).dtype is expected.dtype and _same(program(example), expected)
    wrapped = [v for call in program.calls for v in call.args if isinstance(v, TensorConstant)]
    assert len(wrapped) == 1 and wrapped[0].wrapped and wrapped[0].shape == ()
    assert "wrapped(" in str(program)
    plain = dataclasses.replace(wrapped[0], wrapped=False)
    assert plain != wrapped[0]  # a program with the plain tensor is another program


# -- constants are the same when eager is (Note [Constants are the same when eager is]) -------
def test_a_program_traced_with_a_nan_input_runs_with_nan_and_loads_equal_to_itself() -> None:
    import io
    import math

    program = trace(lambda x, s: core.mul(x, s), tensor([1.0, 2.0]), float("nan"))
    assert all(math.isnan(v) for v in program(tensor([1.0, 2.0]), float("nan")).tolist())
    buffer = io.BytesIO()
    program.save(buffer)
    for flavor in ("dispatch", "static"):
        buffer.seek(0)
        loaded = typedops.load(buffer, flavor=flavor)
        assert loaded.program == program and hash(loaded.program) == hash(program)
        assert all(math.isnan(v) for v in loaded.run(tensor([1.0, 2.0]), float("nan")).tolist())
    zero = trace(lambda x, s: core.mul(x, s), tensor([1.0, 2.0]), 0.0)
    message = "input 's' was 0.0 when the program was traced, and the program is specialized to that value"
    with pytest.raises(ProgramError, match=re.escape(message)):
        zero(tensor([1.0, 2.0]), -0.0)
    buffer = io.BytesIO()
    zero.save(buffer)
    with pytest.raises(ProgramError, match=re.escape(message)):
        typedops.load(io.BytesIO(buffer.getvalue())).run(tensor([1.0, 2.0]), -0.0)


_NUMBERS = st.one_of(st.booleans(), st.integers(), st.floats(allow_nan=True), st.complex_numbers(allow_nan=True))


@given(_NUMBERS, _NUMBERS)
def test_constants_are_equal_exactly_when_of_one_type_and_value_nan_equal_to_nan(a: Any, b: Any) -> None:
    import math

    def key(v: Any) -> Any:
        if isinstance(v, float):
            return ("nan",) if math.isnan(v) else (v, math.copysign(1.0, v))
        if isinstance(v, complex):
            return (key(v.real), key(v.imag))
        return v

    assert Constant(a) == Constant(a)  # NaN too
    same = type(a) is type(b) and key(a) == key(b)
    assert (Constant(a) == Constant(b)) is same
    if same:
        assert hash(Constant(a)) == hash(Constant(b))
