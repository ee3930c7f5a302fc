"""Damaged and hostile program files (issue 16): whatever the bytes, ``typedops.load`` returns
a program or raises ProgramFormatError -- nothing else escapes -- and memory stays bounded
(Note [Caps before reads] in typedops/programs/_archive.py).

Deterministic: Hypothesis runs derandomized with a fixed budget, and the hostile archives
are built byte by byte here (zipfile cannot write a lying size, an encrypted flag or a
directory that disagrees with its end record).
"""

from __future__ import annotations

import copy
import io
import json
import struct
import tracemalloc
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from typedops import Tensor, core, tensor
from typedops.programs import DEFAULT_LIMITS, ProgramFormatError, load
from typedops.programs._archive import Archive, _quick_directory
from typedops.tracing import Program, trace, write_program
from tests.helpers import archive_contents, manifest_paths, zipped

_FUZZ = settings(max_examples=300, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
_MIB = 2**20


def _program() -> Program:
    weight = tensor([[0.5, -1.0], [2.0, 0.25]])

    def f(x: Tensor, n: int) -> Any:
        y = core.add(core.mm(x, weight), x, alpha=n)
        top = core.max(y, 1)
        return core.cat([y.sum().reshape([1]), tensor([float(n)])]), top[1], core.zeros([2], dtype=None)

    return trace(f, tensor([[1.0, 2.0], [3.0, 4.0]]), 3)


def _saved(program: Program) -> bytes:
    out = io.BytesIO()
    write_program(program, out, version=1)  # these tests pin how version 1 files read: test_programs_format_v2.py has 2
    return out.getvalue()


GOOD = _saved(_program())


def _outcome(data: bytes) -> str:
    """'loaded' or the ProgramFormatError's problem; any other exception fails the test."""
    try:
        load(io.BytesIO(data))
    except ProgramFormatError as error:
        return error.problem
    return "loaded"


def _peak(fn: Callable[[], object]) -> int:
    """The peak of traced allocations (Python objects, numpy arrays) while ``fn`` runs."""
    tracemalloc.start()
    try:
        fn()
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return peak


# -- bit flips and truncations -------------------------------------------------------------------
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
    _outcome(bytes(data))


def _directories(data: bytes) -> tuple[Any, Any]:
    """The entries the quick directory reader finds in ``data`` (None: it leaves the file to
    the general reader), and those the general reader (zipfile) finds (or its refusal)."""
    quick = _quick_directory(data, DEFAULT_LIMITS)
    try:
        general: Any = Archive(io.BytesIO(data), "the stream", DEFAULT_LIMITS).entries
    except ProgramFormatError as error:
        general = error.problem
    return quick, general


def test_the_quick_directory_reads_what_typedops_writes() -> None:
    quick, general = _directories(GOOD)
    assert quick is not None and quick == general and list(quick) == ["program.json", "tensors/0.npy", "tensors/1.npy"]


@_FUZZ
@given(st.lists(st.tuples(st.integers(0, 400), st.integers(0, 7)), min_size=1, max_size=3))
def test_the_quick_directory_accepts_only_what_zipfile_reads_the_same(flips: list[tuple[int, int]]) -> None:
    """Note [The quick directory]: bit flips in the directory and end record (the file's
    last 400 bytes) either leave the file to the general reader or give the same entries."""
    data = bytearray(GOOD)
    for back, bit in flips:
        data[len(data) - 1 - back] ^= 1 << bit
    quick, general = _directories(bytes(data))
    assert quick is None or quick == general


@_FUZZ
@given(st.binary(max_size=2000))
def test_arbitrary_bytes_give_a_format_error(data: bytes) -> None:
    assert _outcome(data) != "loaded"


# -- the manifest: wrong types and oversized counts ---------------------------------------------------
def _manifest() -> dict[str, Any]:
    with zipfile.ZipFile(io.BytesIO(GOOD)) as archive:
        return dict(json.loads(archive.read("program.json")))


def _rezip(manifest: Any, extra: dict[str, bytes] | None = None) -> bytes:
    contents = archive_contents(GOOD)
    contents["program.json"] = json.dumps(manifest).encode()
    contents.update(extra or {})
    return zipped(contents)



MANIFEST = _manifest()
PATHS = manifest_paths(MANIFEST)[1:]
_numbers = st.one_of(
    st.integers(), st.sampled_from([-1, 0, 1, 2**31, 2**63, 2**64, 10**30, -(2**63) - 1]),
    st.floats(allow_nan=False, allow_infinity=False),
)  # fmt: skip
_json = st.recursive(
    st.one_of(st.none(), st.booleans(), _numbers, st.text(max_size=12),
              st.sampled_from(["tensors/0.npy", "core::add", "float32", "cpu", "meta", "tuple", "list"])),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(
        st.sampled_from(["input", "result", "tensor", "list", "const", "float", "dtype", "device", "kind", "name"]),
        inner, max_size=3)),
    max_leaves=12,
)  # fmt: skip


@_FUZZ
@given(st.lists(st.tuples(st.sampled_from(PATHS), _json), min_size=1, max_size=3))
def test_wrong_types_and_oversized_counts_give_a_format_error(changes: list[tuple[tuple[Any, ...], Any]]) -> None:
    manifest = copy.deepcopy(MANIFEST)
    for path, replacement in changes:
        node = manifest
        try:
            for key in path[:-1]:
                node = node[key]
            node[path[-1]] = replacement
        except (KeyError, IndexError, TypeError):
            continue  # an earlier change removed the place
    _outcome(_rezip(manifest))


@_FUZZ
@given(st.sampled_from(PATHS))
def test_every_field_removed_gives_a_format_error(path: tuple[Any, ...]) -> None:
    manifest = copy.deepcopy(MANIFEST)
    node: Any = manifest
    for key in path[:-1]:
        node = node[key]
    del node[path[-1]]
    if isinstance(node, list) and path[0] in ("calls", "outputs", "ops", "inputs", "tensors"):
        return  # removing a list item can leave a valid program (an unused op, fewer outputs)
    assert _outcome(_rezip(manifest)) != "loaded"


# -- hostile archives, byte by byte ------------------------------------------------------------------
@dataclass
class Entry:
    name: bytes
    data: bytes  # as stored in the archive
    size: int  # the uncompressed size declared
    method: int = zipfile.ZIP_STORED
    crc: int = 0
    flags: int = 0
    local_name: bytes | None = None  # the name in the local header, when not ``name``


def _stored(name: str, content: bytes) -> Entry:
    return Entry(name.encode(), content, len(content), crc=zlib.crc32(content))


def _archive(entries: list[Entry], *, count: int | None = None, directory_size: int | None = None) -> bytes:
    """A zip archive of ``entries`` whose end record may declare another ``count`` of
    entries or ``directory_size``."""
    out = io.BytesIO()
    directory = io.BytesIO()
    for e in entries:
        offset = out.tell()
        local = e.name if e.local_name is None else e.local_name
        out.write(struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, e.flags, e.method, 0, 0x21, e.crc, len(e.data), e.size,
                              len(local), 0) + local + e.data)  # fmt: skip
        directory.write(struct.pack("<4s6H3L5H2L", b"PK\x01\x02", 20, 20, e.flags, e.method, 0, 0x21, e.crc,
                                    len(e.data), e.size, len(e.name), 0, 0, 0, 0, 0, offset) + e.name)  # fmt: skip
    start, listing = out.tell(), directory.getvalue()
    out.write(listing)
    n = len(entries) if count is None else count
    size = len(listing) if directory_size is None else directory_size
    out.write(struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, n & 0xFFFF, n & 0xFFFF, size, start, 0))
    return out.getvalue()


def _good_entries() -> list[Entry]:
    with zipfile.ZipFile(io.BytesIO(GOOD)) as archive:
        return [_stored(name, archive.read(name)) for name in archive.namelist()]


def test_the_hand_built_archive_of_the_good_entries_loads() -> None:
    assert _outcome(_archive(_good_entries())) == "loaded"  # the builder itself is right


def _deflated_zeros(megabytes: int) -> tuple[bytes, int]:
    """``megabytes`` MiB of zeros, deflated a chunk at a time (little memory), and their CRC."""
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    chunk, crc, parts = bytes(_MIB), 0, []
    for _ in range(megabytes):
        parts.append(packer.compress(chunk))
        crc = zlib.crc32(chunk, crc)
    parts.append(packer.flush())
    return b"".join(parts), crc


BOMB, BOMB_CRC = _deflated_zeros(256)  # 256 MiB of zeros in about 250 KiB


@pytest.mark.parametrize(
    ("name", "build", "problem"),
    [
        ("a bomb declaring its true size", lambda: _archive([Entry(b"program.json", BOMB, 256 * _MIB, 8, BOMB_CRC)]),
         "the entry 'program.json' declares 268435456 bytes, more than the limit of 16777216"),
        ("a bomb declaring a small size", lambda: _archive([Entry(b"program.json", BOMB, 1000, 8, BOMB_CRC)]),
         "the zip archive is damaged (BadZipFile: Bad CRC-32 for file 'program.json')"),
        ("a bomb declaring a small size and its CRC", lambda: _archive(
            [Entry(b"program.json", BOMB, 1000, 8, zlib.crc32(bytes(1000)))]), "program.json is not UTF-8 JSON ("),
        ("a .npy bomb declaring a small size", lambda: _archive(
            [*_good_entries()[:-1], Entry(b"tensors/1.npy", BOMB, 132, 8, BOMB_CRC)]), "the zip archive is damaged ("),
        ("a huge declared size, little data", lambda: _archive([Entry(b"program.json", b"{}", 2**32 - 2)]),
         "the entry 'program.json' declares 4294967294 bytes, more than the limit of 16777216"),
        ("many entries", lambda: _archive([_stored(f"e{i}", b"") for i in range(20_000)]),
         "it has 20000 entries, more than the limit of 16385"),
        ("many entries, under the limit", lambda: _archive(_good_entries() + [_stored(f"e{i}", b"") for i in range(16_000)]),
         "unexpected entry 'e0': a program holds program.json and the tensor data it names "
         "(tensors.bin; tensors/<k>.npy in version 1)"),
        ("a directory larger than its entries need", lambda: _archive(_good_entries(), directory_size=2**31),
         "its zip directory declares 2147483648 bytes for 3 entries, more than the limit of 384"),
        ("fewer entries declared than held", lambda: _archive(_good_entries() + [_stored("x", b"")], count=3),
         "its zip directory declares 3 entries and holds 4"),
        ("zip64", lambda: _archive(_good_entries(), count=0xFFFF), "it is a zip64 archive, which typedops never writes"),
        ("an entry twice", lambda: _archive(_good_entries() + _good_entries()[:1]),
         "the entry 'program.json' appears more than once"),
        ("an encrypted entry", lambda: _archive([Entry(b"program.json", b"{}", 2, flags=1)]),
         "the entry 'program.json' is encrypted"),
        ("bzip2", lambda: _archive([Entry(b"program.json", b"BZh9", 2, method=12)]),
         "the entry 'program.json' uses compression method 12; programs use stored (0) or deflate (8)"),
        ("deeply nested JSON", lambda: _archive([_stored("program.json", b"[" * 2_000_000)]),
         "program.json nests too deeply to parse"),
        ("no manifest", lambda: _archive(_good_entries()[1:]), "the entry 'program.json' is missing"),
        ("a stored entry failing its CRC", lambda: _archive(
            [*_good_entries()[:-1], Entry(b"tensors/1.npy", _good_entries()[-1].data, 132, crc=1)]),
         "the entry 'tensors/1.npy' fails its CRC check (the file is damaged)"),
        ("a local header naming another entry", lambda: _archive(
            [*_good_entries()[:-1], Entry(b"tensors/1.npy", _good_entries()[-1].data, 132, crc=_good_entries()[-1].crc,
                                          local_name=b"tensors/0.npy")]),
         "the local header of the entry 'tensors/1.npy' does not match its directory record"),
    ],
)  # fmt: skip
def test_hostile_archives_are_refused_in_bounded_memory(name: str, build: Callable[[], bytes], problem: str) -> None:
    data = build()
    outcome: list[str] = []
    peak = _peak(lambda: outcome.append(_outcome(data)))
    assert outcome[0].startswith(problem), f"{name}: {outcome[0]}"
    assert peak < 24 * _MIB, f"{name}: {peak / _MIB:.1f} MiB"


# -- tensor data: absurd shapes, pickles ----------------------------------------------------------------
def _npy(array: Any) -> bytes:
    out = io.BytesIO()
    np.lib.format.write_array(out, array, allow_pickle=True)
    return out.getvalue()


class _Boom:
    def __reduce__(self) -> tuple[Any, ...]:
        return (exec, ("raise SystemExit('unpickled')",))


def _header_only(shape: tuple[int, ...], descr: str = "<f4") -> bytes:
    header = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}".encode()
    header = header.ljust(118 if len(header) < 118 else len(header) + 64 - (len(header) + 11) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header


@pytest.mark.parametrize(
    ("npy", "problem"),
    [
        (_header_only((2**40, 2**40)), "its shape [1099511627776, 1099511627776] does not match the shape [2, 2]"),
        (_header_only((2**62,)), "its shape [4611686018427387904] does not match the shape [2, 2]"),
        (_npy(np.array([_Boom(), 1], dtype=object)), "it holds Python objects (dtype |O)"),
        (_npy(np.zeros(2, dtype=[("a", "O"), ("b", "<f4")])), "it holds Python objects (dtype |V"),
        (_header_only((2, 2), descr="|O"), "it holds Python objects (dtype |O)"),
        (_header_only((2, 2), descr=">f4"), "it holds >f4, not the float32 (little-endian) the manifest declares"),
        (b"\x93NUMPY\x03\x00" + b"\0" * 200, ".npy format version 3.0; programs use 1.0 or 2.0"),
        (b"\x93NUMPY\x01\x00" + struct.pack("<H", 8000) + b"{" * 8000, "not a .npy array (TokenError: "),
        (b"\x93NUMPY\x01\x00\xff\xff" + b"{" * 65535, "the entry 'tensors/0.npy' declares 65545 bytes, more than "
                                                         "the limit of 10032"),
    ],
)  # fmt: skip
def test_absurd_npy_shapes_and_pickles_are_refused_unread(npy: bytes, problem: str) -> None:
    data = _rezip(MANIFEST, {"tensors/0.npy": npy})
    outcome: list[str] = []
    peak = _peak(lambda: outcome.append(_outcome(data)))
    assert outcome[0].startswith(problem), outcome[0]
    assert peak < 8 * _MIB


_header_text = st.one_of(
    st.text(alphabet="{}()[]',:<>|0123456789 descrfortan_ordeshapTrueFalse\n\"\\", max_size=300),
    st.builds(lambda d, s: f"{{'descr': {d!r}, 'fortran_order': False, 'shape': {s}, }}",
              st.sampled_from(["<f4", "|O", "O", "<U3", "V8", "<f4,<i8", "[('a', '<f4')]", "S0"]),
              st.sampled_from(["(2, 2)", "(2,2,)", "()", "(-1,)", "(2.5,)", "[2, 2]", "(2**70,)", "None"])),
)  # fmt: skip


@_FUZZ
@given(_header_text, st.sampled_from([1, 2]))
def test_hostile_npy_headers_give_a_format_error(header: str, version: int) -> None:
    text = header.encode("latin-1")
    length = struct.pack("<H" if version == 1 else "<I", len(text))
    npy = b"\x93NUMPY" + bytes([version, 0]) + length + text + bytes(16)
    _outcome(_rezip(MANIFEST, {"tensors/0.npy": npy}))  # a header can be valid: then it loads
