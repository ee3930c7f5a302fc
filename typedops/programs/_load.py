"""``typedops.load``: a program file read, checked and resolved against the ops registered now.

Reading goes archive (_archive.py: caps before reads) -> manifest (_decode.py: every field
and reference checked) -> ops (looked up once, here) -> tensor constants (``tensors.bin``
in format versions 2 and 3, their ``.npy`` entries in version 1, checked before read) -> ``Program``.
Nothing in the file is executed, imported or unpickled: a program file is data (Note [Programs
are data] in tracing/_values.py).
"""

from __future__ import annotations

import io
import math
import os
import stat
from dataclasses import dataclass
from typing import IO, Final

from ..vocabulary import ArgumentValueError, TypedopsError
from ..schema import FunctionSchema, parse_schema
from ..dispatch import OperatorHandle, dispatcher, load_lazy_library
from ..tracing import MANIFEST_ENTRY, TENSOR_DATA_ENTRY, Program, TensorConstant
from . import _messages as msg
from ._archive import DEFAULT_LIMITS, Archive, Limits
from ._compat import schema_text
from ._decode import Decoder, OpEntry, TensorEntry, parse_manifest, shorten
from ._direct import compile_numbered
from ._fast import Numbered, fast_numbered
from ._numbered import check_call, op_table_3, program_3, wrapped_tensors
from ._interpreter import FLAVORS, CompiledProgram, Flavor, compile_program

__all__ = ["Flavor", "FLAVORS", "LoadedProgram", "read_program", "read_file", "load"]


@dataclass(frozen=True, slots=True)
class LoadedProgram:
    """A program read from a file (``program``), with what loading resolved for each row of
    the file's op table: the op's handle (looked up once; none when read without
    resolving) and the schema the file recorded (the registered schema object itself when
    the texts agree, else the recorded text parsed); ``call_ops`` gives each call's row.
    ``compile_program(loaded.program, flavor, resolved=loaded.resolved())`` is what
    ``load`` returns."""

    program: Program
    handles: tuple[OperatorHandle, ...]
    schemas: tuple[FunctionSchema, ...]
    call_ops: tuple[int, ...]

    def resolved(self) -> list[tuple[OperatorHandle, FunctionSchema]]:
        """Per call, its op's handle and recorded schema (for ``compile_program``)."""
        handles, schemas = self.handles, self.schemas
        return [(handles[row], schemas[row]) for row in self.call_ops]


def _recorded_schema(decoder: Decoder, row: int, entry: OpEntry, registered: FunctionSchema | None) -> FunctionSchema:
    """The schema the file recorded for op ``row``: ``registered`` itself when the texts
    agree (no parsing on the common path), else the recorded text parsed."""
    if registered is not None and entry.schema == schema_text(registered):
        return registered
    where = decoder.schema_place(row)
    try:
        schema = parse_schema(entry.schema)
    except (TypedopsError, RecursionError) as error:
        decoder.fail(msg.BAD_SCHEMA.format(detail=shorten(error, 300)), where)
    if schema.qualified_name != entry.name or schema.overload_name != entry.overload:
        decoder.fail(msg.SCHEMA_NAME.format(schema=shorten(entry.schema, 300), name=shorten(entry.full_name)), where)
    return schema


def _resolve(decoder: Decoder, ops: list[OpEntry]) -> tuple[list[OperatorHandle], list[FunctionSchema]]:
    handles: list[OperatorHandle] = []
    schemas: list[FunctionSchema] = []
    for row, entry in enumerate(ops):
        handle = dispatcher.find_op(entry.name, entry.overload)
        if handle is None and load_lazy_library(entry.name.partition("::")[0]):
            handle = dispatcher.find_op(entry.name, entry.overload)  # a bundled library, loaded now
        if handle is None:
            decoder.fail(msg.NOT_REGISTERED.format(name=shorten(entry.full_name)), f"ops[{row}]")
        handles.append(handle)
        schemas.append(_recorded_schema(decoder, row, entry, handle.schema))
    return handles, schemas


def _tensor_constant(archive: Archive, entry: TensorEntry) -> TensorConstant:
    data = None if entry.entry is None else archive.read_npy(entry.entry, entry.storage, entry.shape)
    return TensorConstant(entry.dtype, entry.shape, entry.device, data)


def _tensor_constants(archive: Archive, decoder: Decoder, tensors: list[TensorEntry],
                      check_data: bool) -> list[TensorConstant]:  # fmt: skip
    """The tensor constants, their elements read: from their ``.npy`` entries (version 1),
    or from ``tensors.bin``, read once, exactly the size the tensor table lays out (versions 2 and 3)."""
    if decoder.version == 1:
        return [_tensor_constant(archive, t) for t in tensors]
    if all(t.entry is None for t in tensors):
        return [TensorConstant(t.dtype, t.shape, t.device, None) for t in tensors]
    blob = archive.read(TENSOR_DATA_ENTRY, decoder.data_size, check_data)  # Note [Which CRCs are checked]
    if len(blob) != decoder.data_size:
        decoder.fail(msg.DATA_SIZE.format(size=len(blob), expected=decoder.data_size), TENSOR_DATA_ENTRY)
    constants: list[TensorConstant] = []
    for t in tensors:
        data = None
        if t.entry is not None:
            data = blob[t.offset : t.offset + t.storage.itemsize * math.prod(t.shape)]
        constants.append(TensorConstant(t.dtype, t.shape, t.device, data))
    return constants


def _check_calls(decoder: Decoder, program: Program, schemas: list[FunctionSchema]) -> None:
    """Each call has one value per argument and one result per return of its schema."""
    for index, (call, row) in enumerate(zip(program.calls, decoder.call_ops)):
        check_call(decoder, index, call, schemas[row])


def read_program(file: IO[bytes] | bytes, source: str, limits: Limits = DEFAULT_LIMITS, *,
                 resolve: bool = True, check_data: bool = False) -> LoadedProgram:  # fmt: skip
    """Read, check and resolve the program in ``file`` (a seekable binary file, or the
    file's bytes); ``source`` names it in errors. Raises ``ProgramFormatError`` for
    anything wrong with the file. With ``resolve=False`` the ops are not looked up
    (``handles`` is empty) and every recorded schema is parsed: enough to show a program
    whose ops this process lacks. ``check_data`` checks the CRC of ``tensors.bin`` too
    (Note [Which CRCs are checked] in _archive.py)."""
    read = _read(file, source, limits, resolve, check_data, None)
    assert isinstance(read, LoadedProgram)
    return read


def _read(file: IO[bytes] | bytes, source: str, limits: Limits, resolve: bool, check_data: bool,
          flavor: Flavor | None) -> LoadedProgram | CompiledProgram:  # fmt: skip
    """``read_program``; with a ``flavor``, a file the fast path reads into numbered values
    is compiled for it from them when it can be (Note [Compiled from the numbered values]
    in _direct.py): then the result is that ``CompiledProgram``."""
    archive = Archive(None, source, limits, file) if isinstance(file, bytes) else Archive(file, source, limits)
    try:
        raw = archive.read(MANIFEST_ENTRY, limits.manifest_bytes)
        found = fast_numbered(archive, raw, limits, check_data) if resolve else None  # Note [The fast path of reading]
        if isinstance(found, Numbered):
            compiled = None if flavor is None else compile_numbered(found, flavor)
            if compiled is not None:
                return compiled
        fast = found.read() if isinstance(found, Numbered) else found
        if fast is not None:
            program, handles, schemas, call_ops = fast
            return LoadedProgram(program, tuple(handles), tuple(schemas), tuple(call_ops))
        decoder = Decoder(source, limits)
        top = decoder.top(parse_manifest(raw, source))
        tensors = decoder.tensor_table(top["tensors"])
        archive.expect_entries({MANIFEST_ENTRY} | {t.entry for t in tensors if t.entry is not None})
        ops = decoder.op_table(top["ops"]) if decoder.version < 3 else op_table_3(decoder, top["ops"])
        if resolve:
            handles, schemas = _resolve(decoder, ops)
        else:
            handles, schemas = [], [_recorded_schema(decoder, row, entry, None) for row, entry in enumerate(ops)]
        decoder.tensors = _tensor_constants(archive, decoder, tensors, check_data)
        if decoder.version >= 4:
            marked = wrapped_tensors(top["wrapped"], decoder.tensors, decoder)
            assert marked is not None  # the decoder raised otherwise
            decoder.tensors = marked
        if decoder.version < 3:
            program = decoder.program(top, ops)
            _check_calls(decoder, program, schemas)
        else:  # each call checked as it is read, before its results are numbered
            program = program_3(decoder, top, ops, schemas)
    finally:
        archive.close()
    return LoadedProgram(program, tuple(handles), tuple(schemas), tuple(decoder.call_ops))


# A file up to this size is read whole, with one system call, and its archive parsed from
# the bytes (Note [The quick directory] in _archive.py); a larger one is read entry by
# entry, as the caps allow.
_IN_MEMORY: Final = 1 << 20


def _contents(stream: IO[bytes]) -> IO[bytes] | bytes:
    """The bytes of ``stream`` (from its start) when it is small, else ``stream`` itself."""
    try:
        size = os.fstat(stream.fileno()).st_size
    except (OSError, AttributeError, io.UnsupportedOperation):  # not a file: a BytesIO, ...
        size = stream.seek(0, os.SEEK_END)
    if size > _IN_MEMORY:
        return stream
    stream.seek(0)
    data = stream.read(size + 1)
    return data if len(data) == size else stream  # one that grows while read is read as a stream


def _small_file(path: str) -> bytes | None:
    """The bytes of the regular file at ``path`` when it is small, read with one system
    call and no file object (~3 us less than ``open``); None for anything else, which is
    then opened as a stream (and a path that cannot be read raises as ``open`` does)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    except OSError:
        return None  # open() raises it, in its words
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > _IN_MEMORY:
            return None
        data = os.read(fd, info.st_size + 1)
        return data if len(data) == info.st_size else None
    except OSError:
        return None
    finally:
        os.close(fd)


def read_file(file: str | os.PathLike[str] | IO[bytes], *, resolve: bool = True, check_data: bool = False) -> LoadedProgram:
    """``read_program`` of the file at ``file`` (a path, or a seekable binary file), read
    at once when it is small; a missing or unreadable path is the ``OSError`` of opening
    it."""
    read = _read_file(file, resolve, check_data, None)
    assert isinstance(read, LoadedProgram)
    return read


def _read_file(file: str | os.PathLike[str] | IO[bytes], resolve: bool, check_data: bool,
               flavor: Flavor | None) -> LoadedProgram | CompiledProgram:  # fmt: skip
    """``read_file``, or with a ``flavor`` what ``_read`` gives."""
    limits = DEFAULT_LIMITS
    if isinstance(file, (str, os.PathLike)):
        path = os.fspath(file)
        data = _small_file(path)
        if data is not None:
            return _read(data, repr(path), limits, resolve, check_data, flavor)
        with open(path, "rb", buffering=0) as stream:  # unbuffered: a small file is one read
            return _read(_contents(stream), repr(path), limits, resolve, check_data, flavor)
    return _read(_contents(file), "the stream", limits, resolve, check_data, flavor)


def load(file: str | os.PathLike[str] | IO[bytes], *, flavor: Flavor = "dispatch",
         check_data: bool = False) -> CompiledProgram:  # fmt: skip
    """Load the program saved at ``file`` (a path, or a seekable binary file) by
    ``Program.save``. Loading never executes code from the file: it is a zip of JSON and
    raw tensor data (``.npy`` entries in format version 1), read with every size capped and
    every field checked; anything wrong raises ``ProgramFormatError`` naming where and what
    (docs/programs.md, "Format").
    Every op the program calls must be registered (a bundled library is loaded on demand).
    ``flavor`` chooses how the program runs: ``"dispatch"`` or ``"static"`` (Note [Two
    flavors of a loaded program] in _interpreter.py); a call that does not fit the op
    registered now raises ``IncompatibleProgramError`` (Note [Calls against changed
    schemas] in _compat.py). ``.program`` is the ``Program`` read. ``check_data`` checks
    the CRC of the tensor constants' elements too (Note [Which CRCs are checked] in
    _archive.py: by default a bit flipped inside them is not detected)."""
    if flavor not in FLAVORS:
        raise ArgumentValueError(msg.BAD_FLAVOR.format(flavor=flavor))
    read = _read_file(file, True, check_data, flavor)
    if isinstance(read, CompiledProgram):  # Note [Compiled from the numbered values] in _direct.py
        return read
    return compile_program(read.program, flavor, resolved=read.resolved())
