"""Memory planning of straight-line static runs (Note [In-place into dead values] in
typedops/programs/_planning.py): a planned run gives exactly what the step loop gives."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from typedops import Tensor, core, tensor
from typedops.programs import CompiledProgram, compile_program
from typedops.programs._planning import FRESH, in_place_calls
from typedops.runtime import register_static_wrappers, static_wrapper
from typedops.tracing import trace
from typedops.vocabulary import ScalarType, TensorError
from tests.helpers import identical_tensors

_DTYPES = ["float32", "float64", "int64", "int32", "bool", "float16"]


def _array(t: Tensor) -> Any:
    return np.asarray(t.numpy())


def _pair(program: Any) -> tuple[CompiledProgram, CompiledProgram]:
    """The program as the step loop runs it, and planned and straightened."""
    looped = compile_program(program, "static")
    planned = compile_program(program, "static")
    assert planned.straighten()
    return looped, planned




def _planned_ops(compiled: CompiledProgram) -> list[str | None]:
    from typedops.programs._lowering import lower

    lowered: Any = lower(compiled.assembly, len(compiled.program.inputs), compiled._ops, compiled._unboxed, plan=True)  # pyright: ignore[reportPrivateUsage]
    calls, outputs = lowered[3], lowered[4]
    names = [c.full_name for c in compiled.program.calls]
    chosen = in_place_calls(names, calls, len(compiled.program.inputs), compiled._constants, outputs)  # pyright: ignore[reportPrivateUsage]
    return [None if c is None else c.__name__ for c in chosen]


W = tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
B = tensor([0.1, -0.2, 0.3])


def _mlp(x: Tensor) -> Tensor:
    return core.add(core.matmul(core.relu(core.add(core.matmul(x, W), B)), W.t()), x)


def test_an_mlps_adds_write_into_the_dead_products() -> None:
    x = tensor([[1.0, 2.0], [3.0, -4.0]])
    looped, planned = _pair(trace(_mlp, x))
    assert _planned_ops(planned) == [None, "add___Tensor", None, None, None, "add___Tensor"]
    for seed in range(3):
        inputs = tensor(np.random.default_rng(seed).standard_normal((2, 2)).astype(np.float32).tolist())
        before = _array(inputs).copy()
        identical_tensors(planned.run(inputs), looped.run(inputs))
        assert np.array_equal(_array(inputs), before)  # an input is never written


def _r(x: Tensor) -> Tensor:
    return core.relu(x)


@pytest.mark.parametrize(
    ("fn", "planned"),
    [
        (lambda x: core.add(x, x), [None]),  # self is an input
        (lambda x: core.add(core.add(x, x), B), [None, "add___Tensor"]),
        (lambda x: core.add(core.add(x, x), B, alpha=2), [None, None]),  # alpha is not 1
        (lambda x: core.add(core.add(x, x), B, alpha=1.0), [None, None]),  # alpha is not the integer 1
        (lambda x: core.add(core.neg(x), B), [None, None]),  # neg is not in FRESH
        (lambda x: core.add(core.relu(x), core.relu(x)), [None, None, "add___Tensor"]),
        (lambda x: (core.add(core.relu(x), B), core.relu(x)), [None, "add___Tensor", None]),
        (lambda x: core.mul(core.relu(x), B), [None, "mul___Tensor"]),
        (lambda x: core.mul(B, core.relu(x)), [None, None]),  # the fresh value is not self
    ],
)
def test_only_a_fresh_self_used_once_is_written(fn: Callable[..., Any], planned: list[str | None]) -> None:
    x = tensor([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]])
    looped, straight = _pair(trace(fn, x))
    assert _planned_ops(straight) == planned
    identical_tensors(straight.run(x), looped.run(x))


def test_a_value_used_twice_or_returned_is_not_written() -> None:
    x = tensor([[1.0, -2.0, 3.0]])

    def used_twice(a: Tensor) -> Tensor:
        r = core.relu(a)
        return core.mul(core.add(r, B), r)

    def returned(a: Tensor) -> tuple[Tensor, Tensor]:
        r = core.relu(a)
        return core.add(r, B), r

    for fn, expected in ((used_twice, [None, None, "mul___Tensor"]), (returned, [None, None])):
        looped, straight = _pair(trace(fn, x))
        assert _planned_ops(straight) == expected
        identical_tensors(straight.run(x), looped.run(x))


def test_an_apps_own_wrapper_for_a_core_op_turns_planning_off() -> None:
    x = tensor([[1.0, -2.0, 3.0]])
    program = trace(lambda a: core.add(core.relu(a), B), x)
    own = static_wrapper("core::relu")
    assert own is not None
    try:
        register_static_wrappers("CPU", {"core::relu": (own.boxed, lambda t: own.unboxed(t))})
        _, straight = _pair(program)
        assert _planned_ops(straight) == [None, None]
    finally:
        register_static_wrappers(own.backends, {"core::relu": (own.boxed, own.unboxed)})
    _, straight = _pair(program)
    assert _planned_ops(straight) == [None, "add___Tensor"]


@pytest.mark.parametrize(
    ("x", "other"),
    [
        (tensor([[1.0, 2.0], [3.0, 4.0]]), tensor([1.0, 2.0], dtype=ScalarType.float64)),  # promotes: out of place
        (tensor([1.0, 2.0]), tensor([[1.0], [2.0], [3.0]])),  # broadcasts to a larger shape
        (tensor([[1.0, 2.0]]), tensor([[1.0], [2.0]])),  # a suffix of the shape only in length
        (tensor(2.0), tensor(3.0)),  # 0-dim
        (tensor([[1, 2], [3, 4]]), tensor(7)),  # 0-dim other, integers
        (tensor([[True, False]]), tensor([[True, True]])),
        (tensor([[1.0, 2.0]], dtype=ScalarType.float16), tensor([0.5, 0.25], dtype=ScalarType.float16)),
    ],
)
def test_the_guard_keeps_every_case_as_the_loop_runs_it(x: Tensor, other: Tensor) -> None:
    for fn in (lambda a: core.add(core.add(a, a), other), lambda a: core.mul(core.add(a, a), other)):
        looped, straight = _pair(trace(fn, x))
        assert _planned_ops(straight)[1] is not None
        identical_tensors(straight.run(x), looped.run(x))


def test_meta_tensors_and_two_devices_run_as_in_the_loop() -> None:
    meta = core.empty([2, 3], device="meta")
    other = core.empty([3], device="meta")
    looped, straight = _pair(trace(lambda a: core.add(core.relu(a), other), meta))
    identical_tensors(straight.run(meta), looped.run(meta))
    cpu = tensor([1.0, 2.0, 3.0])
    looped, straight = _pair(trace(lambda a: core.add(core.relu(a), cpu), tensor([1.0, 2.0, 3.0])))
    with pytest.raises(TensorError) as loop_error:
        looped.run(core.empty([3], device="meta"))
    with pytest.raises(TensorError) as straight_error:
        straight.run(core.empty([3], device="meta"))
    assert str(straight_error.value) == str(loop_error.value)


_SHAPES = st.lists(st.integers(1, 3), min_size=0, max_size=3).map(tuple)


@settings(max_examples=60, deadline=None)
@given(shape=_SHAPES, dtype=st.sampled_from(_DTYPES), transposed=st.booleans(), seed=st.integers(0, 2**16))
def test_fresh_ops_return_new_c_contiguous_tensors(shape: tuple[int, ...], dtype: str, transposed: bool,
                                                   seed: int) -> None:  # fmt: skip
    # What Note [In-place into dead values] relies on: each FRESH op's core static wrapper
    # returns a new tensor owning a new C-contiguous array, sharing no memory with its inputs.
    rng = np.random.default_rng(seed)
    values = rng.integers(0, 2, shape) if dtype == "bool" else rng.integers(-3, 4, shape)
    a = Tensor.from_numpy(np.asarray(values).astype(dtype))
    if transposed and len(shape) >= 2:
        a = a.t() if len(shape) == 2 else a.transpose(0, 2)
    square = Tensor.from_numpy(np.asarray(rng.integers(-3, 4, (a.shape[-1:] or (1,)) * 2)).astype(dtype))
    for name in sorted(FRESH):
        entry = static_wrapper(name)
        assert entry is not None
        if name in ("core::add.Tensor", "core::mul.Tensor"):
            args: tuple[Any, ...] = (a, a, 1) if name == "core::add.Tensor" else (a, a)
        elif name == "core::relu":
            if dtype == "bool":
                continue
            args = (a,)
        elif name == "core::mm" and len(a.shape) != 2:
            continue
        elif len(a.shape) == 0:
            continue
        else:
            args = (a, square)
        try:
            result = entry.unboxed(*args)
        except (TensorError, TypeError, ValueError):
            continue  # an op refusing these operands returns nothing to plan with
        assert isinstance(result, Tensor) and all(result is not t for t in args)
        array = _array(result)
        if not transposed or name in ("core::matmul", "core::mm"):  # else it keeps its inputs' layout
            assert array.flags.c_contiguous and result.is_contiguous()
        for t in args:
            if isinstance(t, Tensor):
                assert not np.shares_memory(array, _array(t))


_STEPS = st.lists(st.sampled_from(["add", "mul", "relu", "matmul", "neg", "add2", "twice"]), min_size=1, max_size=8)
_NUMERIC = st.sampled_from(["float32", "float64", "int64"])


@settings(max_examples=80, deadline=None)
@given(steps=_STEPS, dtype=_NUMERIC, b_dtype=_NUMERIC, seed=st.integers(0, 2**16))
def test_a_planned_chain_gives_the_loops_bits_and_writes_no_input(steps: list[str], dtype: str, b_dtype: str,
                                                                  seed: int) -> None:  # fmt: skip
    rng = np.random.default_rng(seed)
    x = Tensor.from_numpy(rng.integers(-3, 4, (2, 3)).astype(dtype))
    b = Tensor.from_numpy(rng.integers(-3, 4, (3,)).astype(b_dtype))  # another dtype: promotion, out of place
    w = Tensor.from_numpy(rng.integers(-3, 4, (3, 3)).astype(dtype))

    def chain(a: Tensor) -> Tensor:
        h = a
        for step in steps:
            if step == "add":
                h = core.add(h, b)
            elif step == "add2":
                h = core.add(h, core.relu(h))
            elif step == "mul":
                h = core.mul(h, a)
            elif step == "relu":
                h = core.relu(h)
            elif step == "twice":  # h is read again after the inner add
                h = core.add(core.add(h, b), h)
            elif step == "matmul" and h.dtype is w.dtype:
                h = core.matmul(h, w)
            else:
                h = core.neg(h)
        return h

    looped, planned = _pair(trace(chain, x))
    before = [_array(t).copy() for t in (x, b, w)]
    identical_tensors(planned.run(x), looped.run(x))
    identical_tensors(planned.run(x), chain(x))
    assert all(np.array_equal(_array(t), v) for t, v in zip((x, b, w), before))
