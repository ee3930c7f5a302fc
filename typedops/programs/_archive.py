"""Reading a program file's zip archive and its ``.npy`` entries, sizes capped before reading.

Note [Caps before reads]
~~~~~~~~~~~~~~~~~~~~~~~~
A program file is untrusted input, so no size it declares is believed before it is
checked against a cap, and nothing is read past what was checked:

- the zip directory: its end record is read and checked (entry count, directory size at
  most 128 bytes an entry, no zip64) *before* ``zipfile`` reads the directory and builds
  an object per record; then the records must be as many as the end record said;
- each entry: only stored or deflate compression, no encryption, no name twice, no name
  the manifest does not account for, and its declared uncompressed size under the cap
  for its kind; a stored entry (what typedops writes) is then read directly, exactly its
  declared size, its local header and CRC checked; a deflated one through zipfile with
  ``read(declared + 1)``, so a lying size (a zip bomb) costs at most one byte more than
  the cap, however well it compresses;
- ``tensors.bin`` (format versions 2 and 3): read with its size capped at exactly the
  bytes the tensor table lays out (every offset checked against that layout first), then
  sliced at those offsets (its CRC: Note [Which CRCs are checked]);
- each ``.npy`` (format version 1): its header is parsed (length capped) and its dtype, shape and order
  checked against the manifest before its elements are read, with nothing unpickled
  (Note [Reading .npy entries]); an object dtype is refused outright.

The manifest's own counts are JSON lists already in memory (their size is capped with
the manifest's bytes); the shapes of tensor constants are capped in elements and in
total bytes before any entry is opened (_decode.py).

Note [Which CRCs are checked]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
A zip entry's CRC detects damage, not edits (anyone who edits a file can write its
CRC). Load checks the CRC of ``program.json`` -- everything else rests on it, and a
damaged manifest that still parses would be a different program -- and of every
version 1 ``.npy`` entry (read as before). It does not check ``tensors.bin``'s by
default: the CRC of a small model's elements was ~7% of its load (~7 us of 50 KB), and
what it buys is only this: a bit flipped by the disk or the network *inside the
elements* is refused instead of loaded as a changed element. Every other damage to the
entry is still refused (its local header, name, method and size against the directory
and the tensor table's layout). This is deliberate: torch's lite loader does not check
CRCs either (PyTorch builds its zip reader with ``MINIZ_DISABLE_ZIP_READER_CRC32_CHECKS``),
and .npy and safetensors files carry none. ``load(..., check_data=True)`` (and
``read_file``/``read_program``) checks it too; a deflated entry is read by zipfile, which
always checks it.
"""

from __future__ import annotations

import io
import math
import os
import re
import struct
import tokenize
import zipfile
import zlib
from dataclasses import dataclass
from typing import IO, Any, Final, NoReturn

from . import _messages as msg

__all__ = ["Limits", "DEFAULT_LIMITS", "Archive", "fail_file"]


@dataclass(frozen=True, slots=True)
class Limits:
    """What a load accepts at most (Note [Caps before reads])."""

    manifest_bytes: int = 16 * 2**20  # program.json, uncompressed
    entries: int = 1 + 16_384  # program.json and the tensor constants' entries
    tensor_bytes: int = 2 * 2**30  # the tensor constants' elements, all together
    nesting: int = 32  # list values inside list values


DEFAULT_LIMITS: Final = Limits()

_END_RECORD: Final = struct.Struct("<4s4H2LH")  # the zip "end of central directory" record
# A local file header: signature, version needed, flags, method, time, date, CRC, sizes,
# then the lengths of the name and the extra field (only the fields read are kept).
_LOCAL_HEADER: Final = struct.Struct("<4s2xHH16xHH")
_END_SIGNATURE: Final = b"PK\x05\x06"
_ZIP64_LOCATOR: Final = b"PK\x06\x07"
_MAX_COMMENT: Final = 0xFFFF
# A directory record is 46 bytes and the entry's name (typedops writes no extra fields or
# comments, and names of at most 17 characters): a directory larger than this per entry
# is not one typedops wrote, and zipfile would build an object for every record in it.
_DIRECTORY_RECORD: Final = 128
_NPY_HEADER: Final = 10_000  # numpy's own default cap on a .npy header
# What zipfile, zlib and numpy's .npy reader raise on damaged input. Only calls into them
# are guarded with it; the checks of this package raise ProgramFormatError themselves.
# (numpy reads a version 1.0 header through tokenize, whose TokenError is an Exception.)
_DAMAGE: Final = (zipfile.BadZipFile, zlib.error, EOFError, struct.error, ValueError, TypeError, SyntaxError,
                  tokenize.TokenError, NotImplementedError, RuntimeError, OverflowError, OSError, KeyError,
                  IndexError)  # fmt: skip


# Seeking and reading the file object itself (a negative offset from a damaged directory).
_STREAM_DAMAGE: Final = (ValueError, OSError, OverflowError)


def fail_file(source: str, problem: str) -> NoReturn:
    """Raise the error for a file that is wrong as a whole."""
    raise msg.ProgramFormatError(msg.NOT_A_PROGRAM.format(source=source, problem=problem), "", problem)


def _detail(error: BaseException) -> str:
    text = f"{type(error).__name__}: {error}"
    return text if len(text) <= 200 else text[:197] + "..."


def _check_end_record(file: IO[bytes], source: str, limits: Limits) -> int:
    """Check the zip end record's counts and sizes before zipfile reads the directory;
    return the number of entries it declares."""
    size = file.seek(0, os.SEEK_END)
    tail_size = min(size, _END_RECORD.size + _MAX_COMMENT)
    file.seek(size - tail_size)
    tail = file.read(tail_size)
    at = tail.rfind(_END_SIGNATURE)
    if at < 0:
        fail_file(source, msg.NO_DIRECTORY)
    record = tail[at : at + _END_RECORD.size]
    if len(record) < _END_RECORD.size:
        fail_file(source, msg.TRUNCATED_DIRECTORY)
    fields: tuple[int, ...] = _END_RECORD.unpack(record)[4:7]
    count, directory_size, offset = fields
    locator = tail[at - 20 : at - 16] if at >= 20 else b""
    if locator == _ZIP64_LOCATOR or 0xFFFF == count or 0xFFFFFFFF in (directory_size, offset):
        fail_file(source, msg.ZIP64)
    if count > limits.entries:
        fail_file(source, msg.TOO_MANY_ENTRIES.format(count=count, limit=limits.entries))
    if directory_size > count * _DIRECTORY_RECORD:
        fail_file(source, msg.DIRECTORY_TOO_LARGE.format(size=directory_size, count=count, limit=count * _DIRECTORY_RECORD))
    file.seek(0)
    return count


# Note [The quick directory]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~
# A program file small enough to read at once (_load.py) is parsed from its bytes: the end
# record, then the directory records, with struct, taking only the form typedops writes
# -- no comment, one disk, the directory right before the end record and exactly filled
# by its records, every entry stored, unencrypted (no flag at all), with an ASCII name of
# no NUL, no extra field and no comment, and no name twice -- under the same caps as the
# general reader. Anything else, valid or not, goes to the general reader (the end record
# checked, then zipfile), which accepts everything this accepts, finds the same entries,
# and names what is wrong. Building zipfile's objects cost more than the rest of reading a
# small model's archive.
_CENTRAL_RECORD: Final = struct.Struct("<4s4B4HL2L5H2L")  # zipfile's structCentralDir
_CENTRAL_SIGNATURE: Final = b"PK\x01\x02"
_MAX_EXTRACT_VERSION: Final = 63  # zipfile's own limit


def _quick_directory(data: bytes, limits: Limits) -> dict[str, _Entry] | None:
    """The entries of an archive in the form typedops writes, or None (Note [The quick
    directory])."""
    end = len(data) - _END_RECORD.size
    if end < 0 or data.rfind(_END_SIGNATURE, max(0, end - _MAX_COMMENT)) != end:
        return None
    _, disk, first_disk, here, count, directory, offset, comment = _END_RECORD.unpack_from(data, end)
    if disk or first_disk or here != count or comment or count > limits.entries or count == 0xFFFF:
        return None
    if directory > count * _DIRECTORY_RECORD or offset + directory != end or data[end - 20 : end - 16] == _ZIP64_LOCATOR:
        return None
    entries: dict[str, _Entry] = {}
    record = _CENTRAL_RECORD
    at = offset
    for _ in range(count):
        if at + record.size > end:
            return None
        (signature, _, _, version, _, flags, method, _, _, crc, compressed, size, name_size, extra_size, comment_size,
         disk_start, _, _, header) = record.unpack_from(data, at)  # fmt: skip
        if signature != _CENTRAL_SIGNATURE or version > _MAX_EXTRACT_VERSION or flags or method != zipfile.ZIP_STORED:
            return None
        if extra_size or comment_size or disk_start:
            return None
        at += record.size
        raw = data[at : at + name_size]
        at += name_size
        if at > end or not raw.isascii() or b"\x00" in raw:
            return None
        name = raw.decode("ascii")
        if name in entries:
            return None
        entries[name] = (header, size, compressed, crc, method)
    return entries if at == end else None


# What Archive.read needs of an entry: where its local header starts, its sizes
# (uncompressed, compressed), its CRC and its compression method.
_Entry = tuple[int, int, int, int, int]


class Archive:
    """A program file's zip archive, opened with its directory checked. ``data`` is the
    whole file when it was read at once (Note [The quick directory]); else entries are
    read from ``file``."""

    def __init__(self, file: IO[bytes] | None, source: str, limits: Limits, data: bytes | None = None) -> None:
        self.source = source
        self.limits = limits
        self._view = None if data is None else memoryview(data)  # slices of it copy nothing
        self.entries: dict[str, _Entry]
        self._zip: zipfile.ZipFile | None = None
        self._infos: dict[str, zipfile.ZipInfo] = {}
        quick = None if data is None else _quick_directory(data, limits)
        if quick is not None:
            self.entries = quick
            return
        if file is None:
            file = io.BytesIO(data or b"")
        self._view = None  # the general reader reads through the file object, as zipfile does
        self._file = file
        count = _check_end_record(file, source, limits)
        try:
            self._zip = zipfile.ZipFile(file)
            infos = self._zip.infolist()
        except _DAMAGE as error:
            fail_file(source, msg.DAMAGED.format(detail=_detail(error)))
        if len(infos) != count:
            fail_file(source, msg.ENTRY_COUNT.format(count=count, found=len(infos)))
        self.entries = {}
        for info in infos:
            name = info.filename
            if name in self.entries:
                fail_file(source, msg.DUPLICATE_ENTRY.format(name=name))
            if info.flag_bits & 0x1:
                fail_file(source, msg.ENCRYPTED.format(name=name))
            if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
                fail_file(source, msg.COMPRESSION.format(name=name, method=info.compress_type))
            self.entries[name] = (info.header_offset, info.file_size, info.compress_size, info.CRC, info.compress_type)
            self._infos[name] = info

    def close(self) -> None:
        if self._zip is not None:
            self._zip.close()

    def expect_entries(self, names: set[str]) -> None:
        """Refuse an archive whose entries are not exactly ``names``."""
        for name in self.entries:
            if name not in names:
                fail_file(self.source, msg.UNEXPECTED_ENTRY.format(name=name))
        for name in sorted(names):
            if name not in self.entries:
                fail_file(self.source, msg.MISSING_ENTRY.format(name=name))

    def read(self, name: str, limit: int, crc: bool = True) -> bytes:
        """The bytes of entry ``name``, refused when it declares more than ``limit``; a
        stored entry's CRC is checked when ``crc`` (Note [Which CRCs are checked])."""
        data = self._entry(name, limit, crc)
        return data if isinstance(data, bytes) else bytes(data)

    def _entry(self, name: str, limit: int, crc: bool = True) -> bytes | memoryview:
        """``read`` without the copy: a view of the file's bytes when it was read at once."""
        entry = self.entries.get(name)
        if entry is None:
            fail_file(self.source, msg.MISSING_ENTRY.format(name=name))
        offset, size, compressed, checksum, method = entry
        if size > limit:
            fail_file(self.source, msg.ENTRY_TOO_LARGE.format(name=name, size=size, limit=limit))
        if method == zipfile.ZIP_STORED:
            return self._read_stored(name, offset, size, compressed, checksum if crc else None)
        assert self._zip is not None  # the quick directory holds stored entries only
        try:
            with self._zip.open(self._infos[name]) as stream:
                data = stream.read(size + 1)  # Note [Caps before reads]
        except _DAMAGE as error:
            fail_file(self.source, msg.DAMAGED.format(detail=_detail(error)))
        if len(data) != size:
            fail_file(self.source, msg.ENTRY_GREW.format(name=name, size=size))
        return data

    def _read_stored(self, name: str, offset: int, size: int, compressed: int, crc: int | None) -> bytes | memoryview:
        """A stored entry's bytes, read directly: its local header checked (signature,
        method, name), exactly its declared size read, its CRC checked (unless ``crc`` is
        None). (zipfile's own reader costs about 15 us an entry, most of a small model's
        tensor reads.)"""
        header, local_name, data = self._read_at(offset, len(name), size)
        if len(header) != _LOCAL_HEADER.size:
            fail_file(self.source, msg.ENTRY_CUT.format(name=name))
        signature, flags, method, name_size, extra_size = _LOCAL_HEADER.unpack(header)
        if (signature, flags & 0x1, method, local_name) != (b"PK\x03\x04", 0, zipfile.ZIP_STORED, name.encode("ascii")):
            fail_file(self.source, msg.LOCAL_HEADER.format(name=name))
        if name_size != len(name) or extra_size:  # typedops writes no extra field
            fail_file(self.source, msg.LOCAL_HEADER.format(name=name))
        if len(data) != size or compressed != size:
            fail_file(self.source, msg.ENTRY_CUT.format(name=name))
        if crc is not None and zlib.crc32(data) != crc:
            fail_file(self.source, msg.BAD_CRC.format(name=name))
        return data

    def _read_at(self, offset: int, name_size: int, size: int) -> tuple[bytes | memoryview, bytes | memoryview,
                                                                      bytes | memoryview]:  # fmt: skip
        """The local header at ``offset``, the ``name_size`` bytes after it and the
        ``size`` bytes after those (views of the file's bytes when it was read at once)."""
        data = self._view
        if data is not None:
            start = offset + _LOCAL_HEADER.size
            return data[offset:start], data[start : start + name_size], data[start + name_size : start + name_size + size]
        file = self._file
        try:
            file.seek(offset)
            return file.read(_LOCAL_HEADER.size), file.read(name_size), file.read(size)
        except _STREAM_DAMAGE as error:
            fail_file(self.source, msg.DAMAGED.format(detail=_detail(error)))

    def read_npy(self, name: str, dtype: Any, shape: tuple[int, ...]) -> bytes:
        """The raw elements of ``.npy`` entry ``name``, checked to be exactly ``dtype`` and
        ``shape`` in C order before they are read (Note [Reading .npy entries])."""
        nbytes = dtype.itemsize * math.prod(shape)
        data = self._entry(name, nbytes + _NPY_HEADER + 16)
        header = _fast_header(data)
        if header is None:
            header = self._numpy_header(name, data)
        found_shape, fortran, found, start = header
        if found.hasobject:
            self._fail_npy(name, msg.NPY_OBJECTS.format(dtype=found.str))
        if found != dtype:
            self._fail_npy(name, msg.NPY_DTYPE.format(got=found.str, expected=dtype.name))
        if found_shape != shape:
            self._fail_npy(name, msg.NPY_SHAPE.format(got=list(found_shape), expected=list(shape)))
        if fortran:
            self._fail_npy(name, msg.NPY_ORDER)
        if len(data) - start != nbytes:
            self._fail_npy(name, msg.NPY_LENGTH.format(size=len(data) - start, expected=nbytes))
        return bytes(data[start:])  # the one copy of the elements

    def quick_elements(self, name: str, dtype: Any, shape: tuple[int, ...]) -> bytes | None:
        """What ``read_npy`` returns, for the fast path of reading (Note [The fast path of
        reading] in _fast.py): only for a file read at once, a stored entry whose local
        header, CRC and ``.npy`` header are as typedops writes them; None otherwise, and
        then ``read_npy`` says what is wrong. The same checks, in one call."""
        entry = self.entries.get(name)
        nbytes = dtype.itemsize * math.prod(shape)
        if entry is None or entry[1] > nbytes + _NPY_HEADER + 16:  # no CRC over an entry too long to fit
            return None
        data = self.quick_entry(name)
        header = _fast_header(data) if data is not None else None
        if data is None or header is None:
            return None
        found_shape, fortran, found, start = header
        if found.hasobject or found != dtype or found_shape != shape or fortran or len(data) - start != nbytes:
            return None
        return bytes(data[start:])

    def quick_entry(self, name: str, crc: bool = True) -> memoryview | None:
        """The bytes of entry ``name`` (a view of the file's), for the fast path of reading:
        only for a file read at once and a stored entry whose local header and CRC (when
        ``crc``) are as typedops writes them; None otherwise, and then ``read`` says what is
        wrong."""
        view = self._view
        entry = self.entries.get(name)
        if view is None or entry is None:
            return None
        offset, size, compressed, checksum, method = entry
        begin = offset + _LOCAL_HEADER.size + len(name)
        end = begin + size
        if method != zipfile.ZIP_STORED or compressed != size or end > len(view):
            return None
        signature, flags, stored, name_size, extra_size = _LOCAL_HEADER.unpack_from(view, offset)
        if signature != b"PK\x03\x04" or flags & 0x1 or stored != zipfile.ZIP_STORED or name_size != len(name):
            return None
        if extra_size or view[begin - len(name) : begin].tobytes() != name.encode("ascii"):
            return None
        data = view[begin:end]
        return data if not crc or zlib.crc32(data) == checksum else None

    def _numpy_header(self, name: str, data: bytes | memoryview) -> _Header:
        """The header of a ``.npy`` not in the form typedops writes, read by numpy's reader."""
        import numpy as np

        stream = io.BytesIO(data)
        fmt = np.lib.format
        try:
            version: tuple[int, int] = fmt.read_magic(stream)
        except _DAMAGE as error:
            self._fail_npy(name, msg.NOT_NPY.format(detail=_detail(error)))
        if version not in ((1, 0), (2, 0)):
            self._fail_npy(name, msg.NPY_VERSION.format(version=".".join(map(str, version))))
        read_header = fmt.read_array_header_1_0 if version == (1, 0) else fmt.read_array_header_2_0
        try:
            shape, fortran, dtype = read_header(stream, max_header_size=_NPY_HEADER)
        except _DAMAGE as error:
            self._fail_npy(name, msg.NOT_NPY.format(detail=_detail(error)))
        return tuple(shape), bool(fortran), dtype, stream.tell()

    def _fail_npy(self, name: str, problem: str) -> NoReturn:
        raise msg.ProgramFormatError(msg.BAD_FIELD.format(source=self.source, where=name, problem=problem), name, problem)


# Note [Reading .npy entries]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# A .npy entry is a magic string, a version, a header -- the text of a Python dict with
# the dtype, the order and the shape -- and the raw elements. The header typedops writes
# (numpy's write_array of a numeric C-order array) matches one strict pattern, read here
# with a regular expression and int(); any other header goes through numpy's own reader,
# which parses it with ast.literal_eval (about 90 us a header: the bulk of a small
# model's load). Either way the dtype, order, shape and byte count are checked against the
# manifest before an element is touched, an object dtype is refused outright, and the
# elements are taken as raw numbers with np.frombuffer: nothing is ever unpickled, which is
# what allow_pickle=False guarantees, and the header is parsed once.
_Header = tuple[tuple[int, ...], bool, Any, int]  # shape, Fortran order, numpy dtype, where the elements start
_FAST_HEADER: Final = re.compile(rb"\{'descr': '([<|][a-z][0-9]{1,2})', 'fortran_order': False, "
                                 rb"'shape': \(((?:[0-9]{1,19}, )*(?:[0-9]{1,19},?)?)\), \} *\n")  # fmt: skip
_DTYPES: dict[bytes, Any] = {}


_HEADERS: dict[bytes, _Header] = {}  # header bytes -> what they say (a model repeats its shapes)
_MAX_HEADERS: Final = 1024


def _fast_header(view: bytes | memoryview) -> _Header | None:
    """The header of a version 1.0 ``.npy`` in the form typedops writes, or None."""
    if view[:8] != b"\x93NUMPY\x01\x00" or len(view) < 10:
        return None
    end = 10 + int.from_bytes(view[8:10], "little")
    key = bytes(view[8:end])
    found = _HEADERS.get(key)
    if found is not None:
        return found
    data = bytes(view[:end])
    match = _FAST_HEADER.fullmatch(data, 10, end)
    if match is None:
        return None
    descr, dims = match.groups()
    dtype = _DTYPES.get(descr)
    if dtype is None:
        import numpy as np

        try:
            dtype = _DTYPES.setdefault(descr, np.dtype(descr.decode("ascii")))
        except TypeError:  # not a dtype numpy knows: let numpy's reader say so
            return None
    found = tuple(int(n) for n in dims.split(b",") if n.strip()), False, dtype, end
    if len(_HEADERS) < _MAX_HEADERS:
        _HEADERS[key] = found
    return found
