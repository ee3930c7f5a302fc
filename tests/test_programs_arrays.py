"""Array-level straight-line runs (Note [Array-level runs] in typedops/programs/_arrays.py):
where taken, exactly the Tensor-level static run; where the guard fails, that run itself."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import typedops.programs._interpreter as interpreter
from typedops import Tensor, core, tensor
from typedops.programs import CompiledProgram, compile_program
from typedops.programs._arrays import array_line
from typedops.programs._lowering import lower
from typedops.tensor import empty_meta
from typedops.tracing import Program, trace
from typedops.vocabulary import ScalarType, TypedopsError
from tests.helpers import identical_tensors

_FLOATS = [ScalarType.float32, ScalarType.float64]


def _array(t: Tensor) -> Any:
    return np.asarray(t.numpy(force=True))


def _identical(got: Any, expected: Any) -> None:
    identical_tensors(got, expected)
    gots = got if isinstance(got, (tuple, list)) else [got]
    expecteds = expected if isinstance(expected, (tuple, list)) else [expected]
    assert [id(a) for a in gots].count(id(gots[0])) == [id(b) for b in expecteds].count(id(expecteds[0]))


@contextmanager
def _tensor_level() -> Iterator[None]:
    """Straighten to the Tensor-level run only (no array-level run)."""
    saved = getattr(interpreter, "array_line")
    setattr(interpreter, "array_line", lambda *args: None)
    try:
        yield
    finally:
        setattr(interpreter, "array_line", saved)


def _flavors(program: Program) -> tuple[CompiledProgram, CompiledProgram, CompiledProgram, CompiledProgram]:
    """The array-level run, the Tensor-level static run, the static step loop, the dispatch flavor."""
    arrays = compile_program(program, "static")
    assert arrays.straighten()
    tensors = compile_program(program, "static")
    with _tensor_level():
        assert tensors.straighten()
    return arrays, tensors, compile_program(program, "static"), compile_program(program, "dispatch")


def _parts(compiled: CompiledProgram) -> tuple[list[str], Any, Any]:
    lowered: Any = lower(compiled.assembly, len(compiled.program.inputs), compiled._ops, compiled._unboxed, plan=True)  # pyright: ignore[reportPrivateUsage]
    return [c.full_name for c in compiled.program.calls], lowered[3], lowered[4]


def _spied(program: Program) -> tuple[Callable[[Any], Any] | None, list[int]]:
    """``program``'s array-level run over a fallback that counts its calls (and runs the
    Tensor-level straight-line run)."""
    compiled = compile_program(program, "static")
    with _tensor_level():
        compiled.straighten()
    straight: Any = compiled._straight  # pyright: ignore[reportPrivateUsage]
    fallbacks: list[int] = []

    def fallback(inputs: Any) -> Any:
        fallbacks.append(1)
        return straight(inputs)

    names, calls, outputs = _parts(compiled)
    single = compiled._single >= 0  # pyright: ignore[reportPrivateUsage]
    made = array_line(names, calls, program.inputs, compiled._constants, outputs, single, fallback)  # pyright: ignore[reportPrivateUsage]
    return made, fallbacks


def _weights(dtype: ScalarType, width: int = 3) -> list[tuple[Tensor, Tensor]]:
    rng = np.random.default_rng(0)
    native = np.float32 if dtype is ScalarType.float32 else np.float64
    return [(tensor(rng.standard_normal((width, width)).astype(native).tolist(), dtype=dtype),
             tensor(rng.standard_normal(width).astype(native).tolist(), dtype=dtype)) for _ in range(3)]  # fmt: skip


def _mlp(weights: list[tuple[Tensor, Tensor]]) -> Callable[[Tensor], Tensor]:
    def mlp(x: Tensor) -> Tensor:
        for index, (w, b) in enumerate(weights):
            x = core.add(core.matmul(x, w), b)
            if index < len(weights) - 1:
                x = core.relu(x)
        return x

    return mlp


def _input(dtype: ScalarType, shape: tuple[int, int] = (2, 3), seed: int = 1) -> Tensor:
    values = np.random.default_rng(seed).standard_normal(shape)
    return tensor(values.tolist(), dtype=dtype)


# -- the guard and the fallback ------------------------------------------------------------
@pytest.mark.parametrize("dtype", _FLOATS)
def test_the_mlp_takes_the_array_run(dtype: ScalarType) -> None:
    x = _input(dtype)
    run, fallbacks = _spied(trace(_mlp(_weights(dtype)), x))
    assert run is not None
    out = run((x,))
    assert fallbacks == []
    _identical(out, _mlp(_weights(dtype))(x))


def _non_contiguous(dtype: ScalarType) -> Tensor:
    return core.transpose(_input(dtype, (3, 2)), 0, 1)


def _requiring_grad(dtype: ScalarType) -> Tensor:
    return _input(dtype).requires_grad_()


def _subclass(dtype: ScalarType) -> Tensor:
    class Sub(Tensor):
        pass

    t = _input(dtype)
    made = Sub._from_parts(t.storage, t._shape, t._strides, 0, dtype, t.device)  # pyright: ignore[reportPrivateUsage]
    return made


@pytest.mark.parametrize("make", [
    lambda: _input(ScalarType.float64), lambda: _input(ScalarType.int64), lambda: _non_contiguous(ScalarType.float32),
    lambda: _requiring_grad(ScalarType.float32), lambda: empty_meta((2, 3), ScalarType.float32),
    lambda: _input(ScalarType.float32, (2, 4)), lambda: _subclass(ScalarType.float32),
], ids=["other dtype", "int dtype", "non-contiguous", "requires grad", "meta", "shapes that do not fit", "subclass"])  # fmt: skip
def test_a_failing_guard_or_run_is_the_tensor_level_run(make: Callable[[], Tensor]) -> None:
    x = _input(ScalarType.float32)
    program = trace(_mlp(_weights(ScalarType.float32)), x)
    run, fallbacks = _spied(program)
    assert run is not None
    arrays, tensors, looped, _ = _flavors(program)
    given_input = make()
    try:
        expected = tensors.run(given_input)
    except TypedopsError as error:
        with pytest.raises(type(error)) as raised:
            arrays.run(given_input)
        assert str(raised.value) == str(error)
        with pytest.raises(type(error)):
            run((given_input,))
    else:
        _identical(arrays.run(given_input), expected)
        _identical(looped.run(given_input), expected)
        _identical(run((given_input,)), expected)
    assert fallbacks == [1]


def test_programs_without_array_rules_have_no_array_run() -> None:
    f32, i64 = _input(ScalarType.float32), _input(ScalarType.int64)
    for function, x in [
        (lambda x: core.exp(core.relu(x)), f32),  # exp has no rule
        (lambda x: core.add(x, x, alpha=2), f32),  # alpha is not 1
        (lambda x: core.add(x, tensor([1, 2, 3])), f32),  # an int64 constant: two dtypes
        (lambda x: core.relu(x), i64),  # not float32 or float64
        (lambda x: (core.relu(x), x), f32),  # an output that is not a result
    ]:  # fmt: skip
        assert _spied(trace(function, x))[0] is None


def test_inputs_that_do_not_fit_are_refused_as_before() -> None:
    x = _input(ScalarType.float32)
    arrays, tensors, _, _ = _flavors(trace(_mlp(_weights(ScalarType.float32)), x))
    assert arrays._direct is not None  # pyright: ignore[reportPrivateUsage]
    for given_inputs in [(), (x, x), (3,), ([1.0],)]:
        with pytest.raises(TypedopsError) as expected:
            tensors.run(*given_inputs)
        with pytest.raises(type(expected.value)) as got:
            arrays.run(*given_inputs)
        assert str(got.value) == str(expected.value)


def test_a_program_without_inputs_refuses_inputs_as_before() -> None:
    w = _weights(ScalarType.float64)[0]
    arrays, tensors, _, _ = _flavors(trace(lambda: core.relu(core.matmul(w[0], w[0]))))
    assert arrays._direct is not None  # pyright: ignore[reportPrivateUsage]
    _identical(arrays.run(), tensors.run())
    with pytest.raises(TypedopsError) as expected:
        tensors.run(w[0])
    with pytest.raises(type(expected.value)) as got:
        arrays.run(w[0])
    assert str(got.value) == str(expected.value)


def test_the_output_has_its_first_operands_device_object() -> None:
    x = _input(ScalarType.float32)
    arrays, tensors, _, _ = _flavors(trace(lambda x: core.relu(core.mul(x, x)), x))
    assert arrays.run(x).device is x.device
    assert tensors.run(x).device is x.device


def test_the_users_inputs_and_the_constants_are_never_written() -> None:
    weights = _weights(ScalarType.float32)
    x = _input(ScalarType.float32)
    program = trace(lambda x: core.relu(core.add(core.mul(x, x), weights[0][1])), x)
    arrays, tensors, _, _ = _flavors(program)
    before = _array(x).copy()
    constants = [_array(c).copy() for c in arrays._constants if isinstance(c, Tensor)]  # pyright: ignore[reportPrivateUsage]
    first, second = arrays.run(x), arrays.run(x)
    assert _array(x).tobytes() == before.tobytes()
    assert [_array(c).tobytes() for c in arrays._constants if isinstance(c, Tensor)] == [c.tobytes() for c in constants]  # pyright: ignore[reportPrivateUsage]
    _identical(first, tensors.run(x))
    _identical(second, first)
    assert first is not second and not np.shares_memory(_array(first), _array(second))
    assert not np.shares_memory(_array(first), _array(x))


def test_an_output_listed_twice_is_one_tensor() -> None:
    x = _input(ScalarType.float64)
    program = trace(lambda x: (lambda r: (r, core.neg(r), r))(core.relu(x)), x)
    arrays, tensors, looped, dispatched = _flavors(program)
    got = arrays.run(x)
    assert got[0] is got[2]
    for other in (tensors, looped, dispatched):
        _identical(got, other.run(x))


# -- the property ------------------------------------------------------------------------------
_STEPS = ["matmul", "mm", "add", "add_input", "mul", "mul_input", "relu", "neg", "add_row"]


@st.composite
def _programs(draw: st.DrawFn) -> tuple[Callable[[Tensor], Any], ScalarType, int, int, bool]:
    dtype = draw(st.sampled_from(_FLOATS))
    batch, width = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    steps = draw(st.lists(st.sampled_from(_STEPS), min_size=1, max_size=8))
    constant_dtype = draw(st.sampled_from([dtype, dtype, dtype, ScalarType.int64, ScalarType.float16]))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    native = np.float32 if dtype is ScalarType.float32 else np.float64

    def constant(*shape: int) -> Tensor:
        values = rng.standard_normal(shape).astype(native) if constant_dtype in _FLOATS else rng.integers(-3, 3, shape)
        return tensor(values.tolist(), dtype=constant_dtype)

    made = [(step, constant(width, width) if step in ("matmul", "mm") else constant(width)) for step in steps]
    two_outputs = draw(st.booleans())

    def function(x: Tensor) -> Any:
        h = x
        for step, c in made:
            if step in ("matmul", "mm"):
                h = getattr(core, step)(h, c)
            elif step == "add":
                h = core.add(h, c)
            elif step == "add_row":
                h = core.add(c, h)
            elif step == "add_input":
                h = core.add(h, x)
            elif step == "mul":
                h = core.mul(h, c)
            elif step == "mul_input":
                h = core.mul(x, h)
            elif step == "relu":
                h = core.relu(h)
            else:
                h = core.neg(h)
        return (h, core.relu(h)) if two_outputs else h

    return function, dtype, batch, width, two_outputs


@st.composite
def _run_inputs(draw: st.DrawFn, dtype: ScalarType, batch: int, width: int) -> tuple[str, Tensor]:
    kind = draw(st.sampled_from(["same", "same", "same", "other_dtype", "int", "transposed", "grad", "meta", "shape"]))
    values = np.random.default_rng(draw(st.integers(0, 2**16))).standard_normal((batch, width))
    if kind == "other_dtype":
        return kind, tensor(values.tolist(), dtype=ScalarType.float64 if dtype is ScalarType.float32 else ScalarType.float32)
    if kind == "int":
        return kind, tensor(np.rint(values).astype(np.int64).tolist())
    if kind == "transposed":
        return kind, core.transpose(tensor(values.T.tolist(), dtype=dtype), 0, 1)
    if kind == "grad":
        return kind, tensor(values.tolist(), dtype=dtype).requires_grad_()
    if kind == "meta":
        return kind, empty_meta((batch, width), dtype)
    if kind == "shape":
        return kind, tensor(np.ones((batch, width + 1)).tolist(), dtype=dtype)
    return kind, tensor(values.tolist(), dtype=dtype)


def _outcome(compiled: CompiledProgram, x: Tensor) -> Any:
    try:
        return compiled.run(x)
    except TypedopsError as error:
        return (type(error), str(error))


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_the_array_run_is_the_tensor_level_run_and_the_dispatch_flavor(data: st.DataObject) -> None:
    function, dtype, batch, width, _ = data.draw(_programs())
    try:
        program = trace(function, tensor(np.ones((batch, width)).tolist(), dtype=dtype))
    except TypedopsError:  # a matmul of two dtypes: not a program
        assume(False)
        raise
    arrays, tensors, looped, dispatched = _flavors(program)
    kind, x = data.draw(_run_inputs(dtype, batch, width))
    made, fallbacks = _spied(program)
    before = None if x.device.type == "meta" else _array(x).tobytes()
    expected = _outcome(tensors, x)
    for compiled in (arrays, looped):
        got = _outcome(compiled, x)
        if isinstance(expected, tuple) and isinstance(expected[0], type):
            assert got == expected
        else:
            _identical(got, expected)
    if not x.requires_grad and not (isinstance(expected, tuple) and isinstance(expected[0], type)):
        if x.device.type == "cpu":
            _identical(_outcome(dispatched, x), expected)
    if made is not None:  # the array run alone, over a fallback that counts
        got = made((x,)) if not isinstance(expected, tuple) or not isinstance(expected[0], type) else None
        if got is not None:
            _identical(program.output_kind.pack(got) if isinstance(got, list) else got, expected)
        if kind == "same":
            assert fallbacks == []
        elif kind not in ("shape", "transposed") or (kind == "transposed" and not x.is_contiguous()):
            # the guard fails (another shape may fit; a transposed 1-wide tensor is contiguous)
            assert fallbacks == ([1] if got is not None else fallbacks)
    if before is not None:
        assert _array(x).tobytes() == before
