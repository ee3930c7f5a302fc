"""The fast path of reading a program file (Note [The fast path of reading] in
typedops/programs/_fast.py): it reads what typedops writes, reads exactly what the general
reader reads, and leaves everything else to it."""

from __future__ import annotations

import io
import json
import zipfile
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from typedops import Tensor, core, tensor
from typedops.programs import DEFAULT_LIMITS, LoadedProgram, ProgramFormatError, read_program
from typedops.programs._archive import Archive
from typedops.programs._fast import fast_read
from typedops.tracing import Program, trace, write_program
from tests.helpers import with_manifest

_FUZZ = settings(max_examples=200, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
W1, B1 = tensor([[0.5, -1.0, 0.25], [2.0, 0.0, 1.0]]), tensor([0.1, 0.2, 0.3])
W2 = tensor([[1.0], [-1.0], [0.5]])


def _mlp(x: Tensor) -> Tensor:
    return core.matmul(core.relu(core.add(core.matmul(x, W1), B1, alpha=2)), W2)


def _saved(program: Program) -> bytes:
    out = io.BytesIO()
    write_program(program, out, version=1)  # these tests pin how version 1 files read: test_programs_format_v2.py has 2
    return out.getvalue()


MLP = _saved(trace(_mlp, tensor([[1.0, 2.0]])))


def _fast(data: bytes) -> Any:
    archive = Archive(None, "the stream", DEFAULT_LIMITS, data)
    return fast_read(archive, archive.read("program.json", DEFAULT_LIMITS.manifest_bytes), DEFAULT_LIMITS)


def _general(data: bytes, monkeypatch: pytest.MonkeyPatch) -> LoadedProgram | str:
    """What the general reader reads (the fast path turned off), or its refusal."""
    import typedops.programs._load as loading

    with monkeypatch.context() as patch:
        patch.setattr(loading, "fast_numbered", lambda *args: None)
        try:
            return read_program(data, "the stream")
        except ProgramFormatError as error:
            return error.problem


def _same(fast: Any, general: LoadedProgram | str) -> None:
    assert isinstance(general, LoadedProgram)
    program, handles, schemas, call_ops = fast
    assert program == general.program and str(program) == str(general.program)
    assert handles == list(general.handles) and schemas == list(general.schemas) and call_ops == list(general.call_ops)


def test_it_reads_what_typedops_writes(monkeypatch: pytest.MonkeyPatch) -> None:
    fast = _fast(MLP)
    assert fast is not None
    _same(fast, _general(MLP, monkeypatch))
    assert read_program(MLP, "here").program == fast[0]


@pytest.mark.parametrize(
    "f",
    [
        lambda x: core.cat([x, x]),  # a list argument
        lambda x: core.sum(x, [0]),  # an int[] constant
        lambda x: core.add(x, float("nan")),  # a constant JSON has no literal for
    ],
)
def test_it_leaves_what_it_does_not_take_to_the_general_reader(f: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    data = _saved(trace(f, tensor([[1.0, 2.0]])))
    assert _fast(data) is None
    assert isinstance(_general(data, monkeypatch), LoadedProgram)



MANIFEST = zipfile.ZipFile(io.BytesIO(MLP)).read("program.json")


@_FUZZ
@given(st.lists(st.tuples(st.integers(0, len(MANIFEST) - 1), st.integers(0, 7)), min_size=1, max_size=3))
def test_a_damaged_manifest_reads_the_same_or_goes_to_the_general_reader(flips: list[tuple[int, int]]) -> None:
    text = bytearray(MANIFEST)
    for at, bit in flips:
        text[at] ^= 1 << bit
    data = with_manifest(MLP, bytes(text))
    fast = _fast(data)
    if fast is not None:
        with pytest.MonkeyPatch.context() as patch:
            _same(fast, _general(data, patch))


def _reordered(m: dict[str, Any]) -> None:
    call = m["calls"][0]
    m["calls"][0] = {"args": call["args"], "op": call["op"], "outputs": call["outputs"]}


@pytest.mark.parametrize(
    ("change", "outcome"),
    [
        (_reordered, "general"),  # keys in another order: valid, and the general reader's to read
        (lambda m: m.update(output_kind="tuple"), "same"),
        (lambda m: m["inputs"][0].update(name="lambda"), "refused"),
        (lambda m: m["calls"][1]["args"][0].update(result=[1, 0]), "refused"),
        (lambda m: m["calls"][0].update(outputs=2), "refused"),
        (lambda m: m["tensors"][0].update(shape=[3, 2]), "refused"),  # the .npy disagrees: the archive's refusal
    ],
)
def test_other_manifests_are_read_by_the_general_reader(change: Any, outcome: str, monkeypatch: pytest.MonkeyPatch) -> None:
    manifest = json.loads(MANIFEST)
    change(manifest)
    data = with_manifest(MLP, json.dumps(manifest, separators=(",", ":")).encode())
    fast = _fast(data)
    general = _general(data, monkeypatch)
    if outcome == "same":
        _same(fast, general)
    else:
        assert fast is None
        assert isinstance(general, LoadedProgram) if outcome == "general" else isinstance(general, str)


def test_a_key_given_twice_is_the_general_readers_to_refuse(monkeypatch: pytest.MonkeyPatch) -> None:
    data = with_manifest(MLP, MANIFEST.replace(b'"outputs":1}', b'"outputs":1,"outputs":1}', 1))
    assert _fast(data) is None
    assert _general(data, monkeypatch) == "the key 'outputs' appears twice"


@_FUZZ
@given(st.lists(st.tuples(st.integers(0, len(MLP) - 1), st.integers(0, 7)), min_size=1, max_size=3))
def test_a_damaged_file_reads_the_same_or_is_refused_as_before(flips: list[tuple[int, int]]) -> None:
    """Bit flips anywhere in the file (archive, manifest, .npy): what load reads with the
    fast path on is what it reads with it off, or both refuse it alike."""
    data = bytearray(MLP)
    for at, bit in flips:
        data[at] ^= 1 << bit
    try:
        read: LoadedProgram | str = read_program(bytes(data), "the stream")
    except ProgramFormatError as error:
        read = error.problem
    with pytest.MonkeyPatch.context() as patch:
        general = _general(bytes(data), patch)
    if isinstance(read, str):
        assert read == general
    else:
        _same((read.program, list(read.handles), list(read.schemas), list(read.call_ops)), general)


def test_every_truncation_is_refused_as_before(monkeypatch: pytest.MonkeyPatch) -> None:
    for length in range(0, len(MLP), 7):
        with pytest.raises(ProgramFormatError) as info:
            read_program(MLP[:length], "the stream")
        assert info.value.problem == _general(MLP[:length], monkeypatch)
