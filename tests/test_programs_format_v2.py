"""Program format version 2 (issue 16): every tensor constant's elements in one raw entry,
``tensors.bin``, laid out by the tensor table (version 3 keeps that entry:
test_programs_format_v3.py). What ``write_program(..., version=2)`` writes, that it reads back as
version 1 does, and that damaged or hostile version 2 files give ``ProgramFormatError``
naming the problem, in bounded memory (the version 1 files: test_programs_format.py,
test_programs_fuzz.py, test_programs_fast.py)."""

from __future__ import annotations

import io
import json
import tracemalloc
import zipfile
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from typedops import Tensor, core, tensor
from typedops.programs import DEFAULT_LIMITS, ProgramFormatError, load, read_program
from tests.helpers import archive_contents, load_outcome, zipped
from typedops.programs import _load
from typedops.programs._archive import Archive
from typedops.programs._fast import fast_read
from typedops.tracing import ProgramError, TensorConstant, trace, write_program
from typedops.vocabulary import Device

_FUZZ = settings(max_examples=300, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
W = tensor([[0.5, -1.0, 2.0], [2.0, 0.25, -3.0]])  # 24 bytes: the next constant starts at 64
B = tensor([1.0, -2.0, 3.0])
M = tensor([[1, 2], [3, 4]])


def f(x: Tensor) -> Any:
    y = core.add(core.mm(x, W), B, alpha=2)
    return y, core.mul(core.mm(M, M), 3)


PROGRAM = trace(f, tensor([[1.0, 2.0]]))


def _saved(version: int = 2) -> bytes:
    out = io.BytesIO()
    write_program(PROGRAM, out, version)
    return out.getvalue()


GOOD = _saved()




def _with(manifest: Any = None, **entries: bytes) -> bytes:
    """GOOD with its manifest replaced by ``manifest`` and entries replaced (b"-": removed)."""
    contents = archive_contents(GOOD)
    if manifest is not None:
        contents["program.json"] = json.dumps(manifest).encode()
    for name, content in entries.items():
        name = name.replace("_", ".")
        if content == b"-":
            del contents[name]
        else:
            contents[name] = content
    return zipped(contents)


MANIFEST = json.loads(archive_contents(GOOD)["program.json"])
DATA = archive_contents(GOOD)["tensors.bin"]



def test_save_writes_version_2_with_the_elements_in_one_aligned_entry() -> None:
    contents = archive_contents(GOOD)
    assert list(contents) == ["program.json", "tensors.bin"] and MANIFEST["version"] == 2
    rows = MANIFEST["tensors"]
    assert [(r["shape"], r["offset"]) for r in rows] == [([2, 3], 0), ([3], 64), ([2, 2], 128)]
    assert rows[0] == {"dtype": "float32", "shape": [2, 3], "device": "cpu", "offset": 0}
    assert DATA[:24] == W.numpy().astype("<f4").tobytes() and DATA[24:64] == bytes(40)
    assert DATA[128:] == M.numpy().astype("<i8").tobytes() and len(DATA) == 128 + 32
    with zipfile.ZipFile(io.BytesIO(GOOD)) as archive:
        assert archive.getinfo("tensors.bin").compress_type == zipfile.ZIP_STORED
    assert _saved() == GOOD


def test_version_2_and_version_1_files_load_the_same_program() -> None:
    v1 = _saved(1)
    assert list(archive_contents(v1)) == ["program.json", "tensors/0.npy", "tensors/1.npy", "tensors/2.npy"]
    assert load(io.BytesIO(GOOD)).program == load(io.BytesIO(v1)).program == PROGRAM
    x = tensor([[3.0, -1.0]])
    for flavor in ("dispatch", "static"):
        got = load(io.BytesIO(GOOD), flavor=flavor).run(x)
        assert [t.tolist() for t in got] == [t.tolist() for t in f(x)]


def test_the_fast_and_the_general_reader_read_version_2_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    fast = read_program(GOOD, "the bytes")
    monkeypatch.setattr(_load, "fast_numbered", lambda *_: None)
    general = read_program(GOOD, "the bytes")
    assert fast.program == general.program == PROGRAM and fast.call_ops == general.call_ops
    shown = read_program(GOOD, "the bytes", resolve=False)
    assert shown.program == PROGRAM


def test_a_program_without_elements_has_no_data_entry() -> None:
    program = trace(lambda x: core.add(x, x), tensor([1.0]))
    out = io.BytesIO()
    write_program(program, out, 2)
    assert list(archive_contents(out.getvalue())) == ["program.json"]
    assert load(io.BytesIO(out.getvalue())).program == program
    # A constant without elements (a meta tensor's) has a null offset and takes no room.
    meta = _with(_changed(2, device="meta", offset=None), tensors_bin=DATA[:76])
    constant = load(io.BytesIO(meta)).program.calls[2].args[0]
    assert isinstance(constant, TensorConstant) and constant.data is None and constant.device == Device("meta")
    assert load_outcome(_with(_changed(2, device="meta", offset=None))) == (
        ": the entry 'tensors.bin' declares 160 bytes, more than the limit of 76")


def test_write_program_refuses_a_version_it_does_not_write() -> None:
    with pytest.raises(ProgramError, match=r"^cannot save the program: there is no program format version 5 to "
                                           r"write \(versions 1 to 4 are\)$"):  # fmt: skip
        write_program(PROGRAM, io.BytesIO(), 5)


def _changed(index: int, **fields: Any) -> Any:
    manifest = json.loads(json.dumps(MANIFEST))
    manifest["tensors"][index].update(fields)
    return manifest


_LAYOUT = "(the constants' elements are laid out in table order, each at the first multiple of 64 bytes after the one before)"


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (lambda: _with(_changed(1, offset=24)), f"tensors[1].offset: expected null or 64, got the number 24 {_LAYOUT}"),
        (lambda: _with(_changed(1, offset=65)), f"tensors[1].offset: expected null or 64, got the number 65 {_LAYOUT}"),
        (lambda: _with(_changed(0, offset="0")), f"tensors[0].offset: expected null or 0, got the string '0' {_LAYOUT}"),
        (lambda: _with(_changed(0, offset=True)), f"tensors[0].offset: expected null or 0, got the bool true {_LAYOUT}"),
        (lambda: _with(_changed(2, offset=2**70)),
         f"tensors[2].offset: expected null or 128, got the number 1180591620717411303424 {_LAYOUT}"),
        (lambda: _with(_changed(0, data="tensors/0.npy")),
         "tensors[0]: expected the keys dtype, shape, device, offset, got data, device, dtype, offset, shape"),
        (lambda: _with(tensors_bin=DATA[:-1]), "tensors.bin: it holds 159 bytes, and the tensor table lays out 160"),
        (lambda: _with(tensors_bin=DATA + bytes(1)),
         ": the entry 'tensors.bin' declares 161 bytes, more than the limit of 160"),
        (lambda: _with(_changed(2, shape=[2, 3])), "tensors.bin: it holds 160 bytes, and the tensor table lays out 176"),
        (lambda: _with(tensors_bin=b"-"), ": the entry 'tensors.bin' is missing"),
        (lambda: _with(**{"tensors/0_npy": b"x"}),
         ": unexpected entry 'tensors/0.npy': a program holds program.json and the tensor data it names "
         "(tensors.bin; tensors/<k>.npy in version 1)"),
        (lambda: _with(_changed(0, shape=[2**40, 2**40])),
         "tensors[0].shape: a tensor of shape [1099511627776, 1099511627776] holds 1208925819614629174706176 elements, "
         "more than the limit of "),
    ],
)  # fmt: skip
def test_damaged_version_2_files_are_refused_naming_the_problem(data: Any, problem: str) -> None:
    assert load_outcome(data()).startswith(problem)


def test_a_version_1_manifest_row_in_a_version_2_file_is_refused() -> None:
    v1_rows = json.loads(archive_contents(_saved(1))["program.json"])["tensors"]
    manifest = json.loads(json.dumps(MANIFEST))
    manifest["tensors"] = v1_rows
    assert load_outcome(_with(manifest)).startswith("tensors[0]: expected the keys dtype, shape, device, offset")


def test_every_truncation_is_refused() -> None:
    for length in range(len(GOOD)):
        with pytest.raises(ProgramFormatError):
            load(io.BytesIO(GOOD[:length]))


@_FUZZ
@given(st.lists(st.tuples(st.integers(0, len(GOOD) - 1), st.integers(0, 7)), min_size=1, max_size=4))
def test_bit_flips_load_or_give_a_format_error(flips: list[tuple[int, int]]) -> None:
    data = bytearray(GOOD)
    for at, bit in flips:
        data[at] ^= 1 << bit
    load_outcome(bytes(data))


_json = st.one_of(st.none(), st.booleans(), st.integers(), st.sampled_from([-1, 63, 64, 2**31, 2**64]),
                  st.floats(allow_nan=False), st.text(max_size=8), st.lists(st.integers(-1, 2**40), max_size=4))  # fmt: skip


@_FUZZ
@given(st.integers(0, 2), st.sampled_from(["dtype", "shape", "device", "offset"]), _json)
def test_wrong_types_and_oversized_values_in_the_tensor_table_give_a_format_error(row: int, key: str, value: Any) -> None:
    load_outcome(_with(_changed(row, **{key: value})))


def test_a_hostile_tensor_table_is_refused_in_bounded_memory() -> None:
    manifest = _changed(2, shape=[2**28])  # 2 GiB of int64 declared, 32 bytes held
    tracemalloc.start()
    try:
        outcome = load_outcome(_with(manifest))
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    assert outcome.startswith("tensors") and peak < 24 * 2**20, (outcome, peak)


def _fast(data: bytes) -> Any:
    archive = Archive(None, "the stream", DEFAULT_LIMITS, data)
    return fast_read(archive, archive.read("program.json", DEFAULT_LIMITS.manifest_bytes), DEFAULT_LIMITS)


@_FUZZ
@given(st.integers(0, 2), st.sampled_from(["dtype", "shape", "device", "offset"]), _json, st.integers(0, 3))
def test_the_fast_reader_takes_no_tensor_table_the_general_reader_refuses(row: int, key: str, value: Any,
                                                                          cut: int) -> None:  # fmt: skip
    """Note [The fast path of reading]: a changed row, and tensors.bin cut short by ``cut``
    bytes, are read by the fast reader as the general reader reads them, or left to it."""
    data = _with(_changed(row, **{key: value}), tensors_bin=DATA[: len(DATA) - cut])
    fast = _fast(data)
    if fast is None:
        return
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_load, "fast_numbered", lambda *_: None)
        general = read_program(data, "the stream")  # raises if the general reader refuses it
    assert fast[0] == general.program and fast[3] == list(general.call_ops)


def test_a_long_program_leaves_the_shared_result_references_capped() -> None:
    # The fast reader shares the ResultRefs of the first 1,024 (call, output) pairs between
    # loads; a longer program numbers the rest in a dict of its own.
    from typedops.programs._fast import _RESULT_REFS, _SHARED_REFERENCES

    def chain(x: Tensor) -> Tensor:
        for _ in range(1500):
            x = core.neg(x)
        return x

    out = io.BytesIO()
    write_program(trace(chain, tensor([1.0])), out, 2)
    assert fast_read(Archive(None, "the stream", DEFAULT_LIMITS, out.getvalue()), archive_contents(out.getvalue())["program.json"],
                     DEFAULT_LIMITS) is not None  # fmt: skip
    loaded = read_program(out.getvalue(), "the stream")
    assert len(loaded.program.calls) == 1500 and len(_RESULT_REFS) <= _SHARED_REFERENCES
