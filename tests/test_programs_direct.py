"""Compiling a version 3 file's numbered values straight to a lowered program (Note [Compiled
from the numbered values] in typedops/programs/_direct.py): ``load`` gives what
``compile_program`` of the program read gives -- the same steps, constants, frame slots,
ops and program -- and where it gives up, or the file is damaged, what ``load`` did
without it: the same program or the same error."""

from __future__ import annotations

import io
import json
import zipfile
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from typedops import Tensor, core, tensor
from typedops.programs import CompiledProgram, IncompatibleProgramError, ProgramFormatError, compile_program, load
from typedops.programs import _load, read_program
from typedops.programs._direct import compile_numbered
from typedops.programs._archive import DEFAULT_LIMITS, Archive
from typedops.programs._fast import Numbered, fast_numbered
from typedops.tracing import Program, TensorConstant, trace, write_program
from typedops.vocabulary import TypedopsError
from tests.helpers import with_manifest

_FUZZ = settings(max_examples=150, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
W = tensor([[0.5, -1.0, 2.0], [2.0, 0.25, -3.0]])
B = tensor([1.0, -2.0, 3.0])
X = tensor([[1.0, 2.0]])


def mlp(x: Tensor) -> Any:
    return core.add(core.matmul(core.relu(core.add(core.matmul(x, W), B)), core.transpose(W, 0, 1)), x)


def several(x: Tensor) -> Any:
    """Keyword arguments off and on their defaults, a tensor constant used twice, outputs that
    are an input, a tensor constant and a result, a call of two results."""
    y = core.add(core.mm(x, W), B, alpha=2)
    top = core.max(y, 1)
    return y, x, B, core.relu(core.add(y, B)), top[0], top[1]


def _saved(program: Program) -> bytes:
    out = io.BytesIO()
    write_program(program, out)
    return out.getvalue()


def _compiled(data: bytes, flavor: Any) -> CompiledProgram:
    """What ``load`` gave before: the program read, then compiled."""
    read = read_program(data, "the stream")
    return compile_program(read.program, flavor, resolved=read.resolved())


def _comparable(c: CompiledProgram) -> list[Any]:
    """Everything a compiled program runs by, as comparable values (each gather applied to a frame)."""
    frame = list(range(1000))
    lowered = c._lowered  # pyright: ignore[reportPrivateUsage]
    assert lowered is not None
    steps, outputs, single, planned, slots = lowered
    constants = [(type(k), k.dtype, k.tolist()) if isinstance(k, Tensor) else (type(k), k)
                 for k in c._constants]  # pyright: ignore[reportPrivateUsage]  # fmt: skip
    return [[(kind, op, a, b, d, list(gather(frame))) for kind, op, a, b, d, gather in steps], list(outputs(frame)),
            single, planned, slots, constants, c._ops, c._unboxed, _assembled(c), c.dispatched_ops,  # pyright: ignore[reportPrivateUsage]
            c._single, c._tensor_inputs, c._assembly, c.flavor]  # pyright: ignore[reportPrivateUsage]  # fmt: skip


def _assembled(c: CompiledProgram) -> list[Any]:
    """The calls as assembling takes them (values, written, returns)."""
    if c._deferred is None:  # pyright: ignore[reportPrivateUsage]
        return c._calls  # pyright: ignore[reportPrivateUsage]
    return [(call.args, *shape) for call, shape in zip(c.program.calls, c._shapes)]  # pyright: ignore[reportPrivateUsage]


@pytest.mark.parametrize("function", [mlp, several])
@pytest.mark.parametrize("flavor", ["dispatch", "static"])
def test_load_compiles_as_compile_program_does(function: Any, flavor: Any) -> None:
    data = _saved(trace(function, X))
    loaded = load(io.BytesIO(data), flavor=flavor)
    assert loaded._deferred is not None  # pyright: ignore[reportPrivateUsage] -- compiled from the numbered values
    assert loaded._program is None  # pyright: ignore[reportPrivateUsage] -- made when first read
    expected = _compiled(data, flavor)
    assert _comparable(loaded) == _comparable(expected)
    assert loaded.program == expected.program
    assert loaded.program is loaded.program  # made once
    assert loaded.disassemble() == expected.disassemble()
    for c in (loaded, expected):
        result = c.run(X)
        want = function(X)
        assert [t.tolist() for t in result] == [t.tolist() for t in want] if isinstance(want, tuple) else \
            result.tolist() == want.tolist()  # fmt: skip


def test_its_constant_tensors_are_writable_and_its_own() -> None:
    data = _saved(trace(several, X))
    loaded = load(io.BytesIO(data), flavor="static")
    tensors = [k for k in loaded._constants if isinstance(k, Tensor)]  # pyright: ignore[reportPrivateUsage]
    assert len(tensors) == 4  # W, then B in two calls and as an output: one tensor a use
    assert len({id(t) for t in tensors}) == 4
    for t in tensors:
        t.numpy()[...] = 7.0  # writable, as compile_program makes them
    weight = loaded.program.calls[0].args[1]
    assert isinstance(weight, TensorConstant) and weight.elements().tolist() == W.tolist()  # the program's bytes are untouched
    assert load(io.BytesIO(data), flavor="static").run(X)[2].tolist() == B.tolist()  # nor another load's


_OPS = ["neg", "relu", "add", "mul", "sub", "max"]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_OPS), st.integers(0, 5), st.integers(-3, 3)), min_size=1, max_size=8),
       st.integers(0, 7), st.sampled_from(["dispatch", "static"]))  # fmt: skip
def test_a_chain_loads_as_compile_program_compiles_it(steps: list[tuple[str, int, int]], out: int, flavor: Any) -> None:
    c3 = tensor([7, 8, 9])

    def chain(a: Tensor) -> tuple[Any, ...]:
        values: list[Any] = [a, c3]
        for name, pick, alpha in steps:
            operand = values[pick % len(values)]
            if name in ("neg", "relu"):
                values.append(getattr(core, name)(operand))
            elif name == "max":  # two results
                values.extend(core.max(operand, 0))
            elif name == "mul":
                values.append(core.mul(values[-1], operand))
            else:
                values.append(getattr(core, name)(values[-1], operand, alpha=alpha))
        return tuple(values[2:]) + (values[out % len(values)],)

    a = tensor([1, -2, 3])
    data = _saved(trace(chain, a))
    loaded = load(io.BytesIO(data), flavor=flavor)
    expected = _compiled(data, flavor)
    assert _comparable(loaded) == _comparable(expected)
    assert [t.tolist() for t in loaded.run(a)] == [t.tolist() for t in chain(a)]
    loaded.straighten()
    assert [t.tolist() for t in loaded.run(a)] == [t.tolist() for t in chain(a)]


def _numbered(data: bytes) -> Numbered:
    found = fast_numbered(Archive(None, "s", DEFAULT_LIMITS, data), _manifest_bytes(data), DEFAULT_LIMITS)
    assert isinstance(found, Numbered)
    return found


def _manifest_bytes(data: bytes) -> bytes:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return archive.read("program.json")


def _with(data: bytes, manifest: Any) -> bytes:
    return with_manifest(data, json.dumps(manifest, separators=(",", ":")).encode())



def _outcome(data: bytes, flavor: Any, direct: bool) -> Any:
    """What ``load`` gives (with the direct path on or off): the compiled program's
    comparable values and a run's result, or the error's type and message."""
    with pytest.MonkeyPatch.context() as patch:
        if not direct:
            patch.setattr(_load, "compile_numbered", lambda *_: None)
        try:
            c = load(io.BytesIO(data), flavor=flavor)
        except TypedopsError as error:
            assert isinstance(error, (ProgramFormatError, IncompatibleProgramError))
            return type(error), str(error)
    try:
        ran = c.run(X)
        result: Any = [t.tolist() for t in ran] if isinstance(ran, tuple) else ran.tolist()
    except TypedopsError as error:
        result = type(error), str(error)
    return _comparable(c), c.program, result


def test_a_value_that_does_not_fit_is_refused_as_before() -> None:
    data = _saved(trace(mlp, X))
    manifest = json.loads(_manifest_bytes(data))
    first = manifest["calls"][0]  # matmul(x, W): W's number replaced by the constant alpha=1's
    first[3] = len(manifest["inputs"]) + len(manifest["tensors"])
    assert manifest["constants"][0] == 1
    bad = _with(data, manifest)
    assert compile_numbered(_numbered(bad), "static") is None
    with pytest.raises(IncompatibleProgramError, match=r"call %0 \(core::matmul\), argument 'other': expected Tensor, got int") as info:
        load(io.BytesIO(bad), flavor="static")
    assert _outcome(bad, "static", False) == (IncompatibleProgramError, str(info.value))


def test_a_written_tensor_constant_is_assembled_as_before() -> None:
    def f(a: Tensor) -> Tensor:
        c = tensor([1.0, 2.0])  # a tensor constant
        c.add_(a)
        return c

    data = _saved(trace(f, tensor([1.0, 1.0])))
    assert compile_numbered(_numbered(data), "dispatch") is None
    loaded = load(io.BytesIO(data))
    assert loaded.run(tensor([1.0, 1.0])).tolist() == loaded.run(tensor([1.0, 1.0])).tolist() == [2.0, 3.0]


@_FUZZ
@given(st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 7)), min_size=1, max_size=3),
       st.sampled_from(["dispatch", "static"]), st.booleans())  # fmt: skip
def test_a_damaged_file_loads_or_is_refused_as_without_it(flips: list[tuple[int, int]], flavor: Any,
                                                          manifest_only: bool) -> None:  # fmt: skip
    """Bit flips in the manifest (re-archived, so they reach the readers) or anywhere in
    the file: ``load`` gives the same program or the same error with the direct path on
    and off, and nothing but ``ProgramFormatError`` or ``IncompatibleProgramError`` escapes."""
    good = _saved(trace(several, X))
    text = bytearray(_manifest_bytes(good) if manifest_only else good)
    for at, bit in flips:
        text[at % len(text)] ^= 1 << bit
    data = with_manifest(good, bytes(text)) if manifest_only else bytes(text)
    assert _outcome(data, flavor, True) == _outcome(data, flavor, False)


@pytest.mark.parametrize("alpha", [1, True, 1.0, -0.0, "x", None, 2**63 - 1, [1]])
def test_a_constant_fits_as_argument_problems_says_after_one_that_fitted(alpha: Any) -> None:
    """Note [Constants known to fit]: with ``alpha=1`` remembered, another constant in its
    place (another type, equal or not) loads or is refused as without the cache."""
    data = _saved(trace(lambda x: core.add(core.matmul(x, W), B), X))
    load(io.BytesIO(data), flavor="static")  # alpha=1 of core::add fitted: remembered
    manifest = json.loads(_manifest_bytes(data))
    assert manifest["constants"] == [1]
    manifest["constants"] = [alpha]
    changed = _with(data, manifest)
    outcome = _outcome(changed, "static", True)
    assert outcome == _outcome(changed, "static", False)
    assert isinstance(outcome[0], list) == (type(alpha) in (int, bool, float))


def test_a_loaded_program_disassembles_and_straightens_before_its_program_is_read() -> None:
    data = _saved(trace(several, X))
    for flavor in ("dispatch", "static"):
        loaded = load(io.BytesIO(data), flavor=flavor)
        assert loaded.disassemble() == _compiled(data, flavor).disassemble()
        fresh = load(io.BytesIO(data), flavor=flavor)
        assert fresh.straighten() and fresh._program is not None  # pyright: ignore[reportPrivateUsage]
        assert [t.tolist() for t in fresh.run(X)] == [t.tolist() for t in several(X)]
