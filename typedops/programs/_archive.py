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
  for its kind; it is then read with ``read(declared + 1)``, so a lying size (a zip bomb)
  costs at most one byte more than the cap, however well it compresses;
- each ``.npy``: its header is parsed (numpy's reader, header length capped) and its
  dtype, shape and order checked against the manifest before its elements are read, with
  ``allow_pickle=False``; an object dtype is refused outright.

The manifest's own counts are JSON lists already in memory (their size is capped with
the manifest's bytes); the shapes of tensor constants are capped in elements and in
total bytes before any entry is opened (_decode.py).
"""

from __future__ import annotations

import io
import os
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


class Archive:
    """A program file's zip archive, opened with its directory checked."""

    def __init__(self, file: IO[bytes], source: str, limits: Limits) -> None:
        self.source = source
        self.limits = limits
        count = _check_end_record(file, source, limits)
        try:
            self._zip = zipfile.ZipFile(file)
            infos = self._zip.infolist()
        except _DAMAGE as error:
            fail_file(source, msg.DAMAGED.format(detail=_detail(error)))
        if len(infos) != count:
            fail_file(source, msg.ENTRY_COUNT.format(count=count, found=len(infos)))
        self.entries: dict[str, zipfile.ZipInfo] = {}
        for info in infos:
            name = info.filename
            if name in self.entries:
                fail_file(source, msg.DUPLICATE_ENTRY.format(name=name))
            if info.flag_bits & 0x1:
                fail_file(source, msg.ENCRYPTED.format(name=name))
            if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
                fail_file(source, msg.COMPRESSION.format(name=name, method=info.compress_type))
            self.entries[name] = info

    def close(self) -> None:
        self._zip.close()

    def expect_entries(self, names: set[str]) -> None:
        """Refuse an archive whose entries are not exactly ``names``."""
        for name in self.entries:
            if name not in names:
                fail_file(self.source, msg.UNEXPECTED_ENTRY.format(name=name))
        for name in sorted(names):
            if name not in self.entries:
                fail_file(self.source, msg.MISSING_ENTRY.format(name=name))

    def read(self, name: str, limit: int) -> bytes:
        """The bytes of entry ``name``, refused when it declares more than ``limit``."""
        info = self.entries.get(name)
        if info is None:
            fail_file(self.source, msg.MISSING_ENTRY.format(name=name))
        if info.file_size > limit:
            fail_file(self.source, msg.ENTRY_TOO_LARGE.format(name=name, size=info.file_size, limit=limit))
        try:
            with self._zip.open(info) as stream:
                data = stream.read(info.file_size + 1)  # Note [Caps before reads]
        except _DAMAGE as error:
            fail_file(self.source, msg.DAMAGED.format(detail=_detail(error)))
        if len(data) != info.file_size:
            fail_file(self.source, msg.ENTRY_GREW.format(name=name, size=info.file_size))
        return data

    def read_npy(self, name: str, dtype: Any, shape: tuple[int, ...]) -> Any:
        """The elements of ``.npy`` entry ``name``, a numpy array of exactly ``dtype`` and
        ``shape`` (checked before the elements are read)."""
        import numpy as np

        nbytes = dtype.itemsize * _prod(shape)
        data = self.read(name, nbytes + _NPY_HEADER + 16)
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
            header: tuple[tuple[int, ...], bool, Any] = read_header(stream, max_header_size=_NPY_HEADER)
        except _DAMAGE as error:
            self._fail_npy(name, msg.NOT_NPY.format(detail=_detail(error)))
        found_shape, fortran, found = header
        if found.hasobject:
            self._fail_npy(name, msg.NPY_OBJECTS.format(dtype=found.str))
        if found != dtype:
            self._fail_npy(name, msg.NPY_DTYPE.format(got=found.str, expected=dtype.name))
        if tuple(found_shape) != shape:
            self._fail_npy(name, msg.NPY_SHAPE.format(got=list(found_shape), expected=list(shape)))
        if fortran:
            self._fail_npy(name, msg.NPY_ORDER)
        if len(data) - stream.tell() != nbytes:
            self._fail_npy(name, msg.NPY_LENGTH.format(size=len(data) - stream.tell(), expected=nbytes))
        try:
            return fmt.read_array(io.BytesIO(data), allow_pickle=False, max_header_size=_NPY_HEADER)
        except _DAMAGE as error:
            self._fail_npy(name, msg.NOT_NPY.format(detail=_detail(error)))

    def _fail_npy(self, name: str, problem: str) -> NoReturn:
        raise msg.ProgramFormatError(msg.BAD_FIELD.format(source=self.source, where=name, problem=problem), name, problem)


def _prod(shape: tuple[int, ...]) -> int:
    count = 1
    for n in shape:
        count *= n
    return count
