"""``typedops.load``: a program file read, checked and resolved against the ops registered now.

Reading goes archive (_archive.py: caps before reads) -> manifest (_decode.py: every field
and reference checked) -> ops (looked up once, here) -> tensor constants (their ``.npy``
entries, checked before read) -> ``Program``. Nothing in the file is executed, imported
or unpickled: a program file is data (Note [Programs are data] in tracing/_values.py).
"""

from __future__ import annotations

import io
import os
from dataclasses import dataclass
from typing import IO, Any, Final

from ..vocabulary import ArgumentValueError, BoundedCache, TypedopsError
from ..schema import FunctionSchema, parse_schema
from ..dispatch import OperatorHandle, dispatcher, load_lazy_library
from ..tracing import MANIFEST_ENTRY, Program, TensorConstant
from . import _messages as msg
from ._archive import DEFAULT_LIMITS, Archive, Limits
from ._decode import Decoder, OpEntry, TensorEntry, parse_manifest, shorten
from ._interpreter import FLAVORS, CompiledProgram, Flavor, compile_program

__all__ = ["Flavor", "FLAVORS", "LoadedProgram", "read_program", "load"]


@dataclass(frozen=True, slots=True)
class LoadedProgram:
    """A program read from a file, with what loading resolved: per row of the file's op
    table, the op's handle (looked up once, at load; none when read without resolving)
    and the schema the file recorded (the registered schema object itself when the texts
    agree, else the recorded text parsed); ``call_ops`` gives each call's row."""


    program: Program
    ops: tuple[OpEntry, ...]
    handles: tuple[OperatorHandle, ...]
    schemas: tuple[FunctionSchema, ...]
    call_ops: tuple[int, ...]
    # Per row of the tensor table: the TensorConstant the program's values share, and its
    # elements as a numpy array (a read-only view of its bytes; None without elements).
    tensors: tuple[TensorConstant, ...]
    arrays: tuple[Any, ...]


# The text of each registered schema a load compared against, by id (the schema kept
# alive by the entry): printing a schema costs several microseconds, and a load compares
# one per op of the file.
_TEXTS: Final = BoundedCache[int, str](4096, "registered schema texts")


def _text_of(schema: FunctionSchema) -> str:
    text = _TEXTS.get(id(schema))
    return text if text is not None else _TEXTS.put(id(schema), str(schema), keep=schema)


def _recorded_schema(decoder: Decoder, row: int, entry: OpEntry, registered: FunctionSchema | None) -> FunctionSchema:
    """The schema the file recorded for op ``row``: ``registered`` itself when the texts
    agree (no parsing on the common path), else the recorded text parsed."""
    if registered is not None and entry.schema == _text_of(registered):
        return registered
    where = f"ops[{row}].schema"
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


def _tensor_constant(archive: Archive, entry: TensorEntry) -> tuple[TensorConstant, Any]:
    if entry.entry is None:
        return TensorConstant(entry.dtype, entry.shape, entry.device, None), None
    constant = TensorConstant(entry.dtype, entry.shape, entry.device, archive.read_npy(entry.entry, entry.storage, entry.shape))
    return constant, constant.elements()


def _check_calls(decoder: Decoder, program: Program, schemas: list[FunctionSchema]) -> None:
    """Each call has one value per argument and one result per return of its schema."""
    for index, (call, row) in enumerate(zip(program.calls, decoder.call_ops)):
        schema = schemas[row]
        if len(call.args) != len(schema.arguments):
            problem = msg.ARITY.format(got=len(call.args), name=shorten(call.full_name), expected=len(schema.arguments),
                                       schema=shorten(call.schema, 300))  # fmt: skip
            decoder.fail(problem, f"calls[{index}].args")
        if call.num_outputs != len(schema.returns):
            problem = msg.RESULT_COUNT.format(got=call.num_outputs, name=shorten(call.full_name), expected=len(schema.returns),
                                              schema=shorten(call.schema, 300))  # fmt: skip
            decoder.fail(problem, f"calls[{index}].outputs")


def read_program(file: IO[bytes], source: str, limits: Limits = DEFAULT_LIMITS, *, resolve: bool = True) -> LoadedProgram:
    """Read, check and resolve the program in ``file`` (a seekable binary file); ``source``
    names it in errors. Raises ``ProgramFormatError`` for anything wrong with the file.
    With ``resolve=False`` the ops are not looked up (``handles`` is empty) and every
    recorded schema is parsed: enough to show a program whose ops this process lacks."""
    archive = Archive(file, source, limits)
    try:
        decoder = Decoder(source, limits)
        top = decoder.top(parse_manifest(archive.read(MANIFEST_ENTRY, limits.manifest_bytes), source))
        tensors = decoder.tensor_table(top["tensors"])
        archive.expect_entries({MANIFEST_ENTRY} | {t.entry for t in tensors if t.entry is not None})
        ops = decoder.op_table(top["ops"])
        if resolve:
            handles, schemas = _resolve(decoder, ops)
        else:
            handles, schemas = [], [_recorded_schema(decoder, row, entry, None) for row, entry in enumerate(ops)]
        constants = [_tensor_constant(archive, t) for t in tensors]
        decoder.tensors = [constant for constant, _ in constants]
        program = decoder.program(top, ops)
        _check_calls(decoder, program, schemas)
    finally:
        archive.close()
    return LoadedProgram(program, tuple(ops), tuple(handles), tuple(schemas), tuple(decoder.call_ops),
                         tuple(decoder.tensors), tuple(array for _, array in constants))  # fmt: skip


def _for_flavor(loaded: LoadedProgram, flavor: Flavor) -> CompiledProgram:
    """What ``load`` returns for ``flavor``: the program compiled for the interpreter
    (_interpreter.py), from the handles loading resolved and the schemas the file recorded."""
    resolved = [(loaded.handles[row], loaded.schemas[row]) for row in loaded.call_ops]
    return compile_program(loaded.program, flavor, resolved=resolved)


# A file up to this size is read whole before it is parsed: the archive reader seeks and
# reads each entry, and on a file each of those is a system call (about a fifth of the
# load of a small model). Larger files are read entry by entry, as the caps allow.
_IN_MEMORY: Final = 1 << 20


def _small_in_memory(stream: IO[bytes]) -> IO[bytes]:
    """``stream`` itself, or its bytes in memory when the file is small."""
    if os.fstat(stream.fileno()).st_size > _IN_MEMORY:
        return stream
    return io.BytesIO(stream.read(_IN_MEMORY + 1))


def load(file: str | os.PathLike[str] | IO[bytes], *, flavor: Flavor = "dispatch") -> CompiledProgram:
    """Load the program saved at ``file`` (a path, or a seekable binary file) by
    ``Program.save``. Loading never executes code from the file: it is a zip of JSON and
    ``.npy`` data, read with every size capped and every field checked; anything wrong
    raises ``ProgramFormatError`` naming where and what (docs/programs.md, "Format").
    Every op the program calls must be registered (a bundled library is loaded on demand).
    ``flavor`` chooses how the program runs: ``"dispatch"`` or ``"static"`` (Note [Two
    flavors of a loaded program] in _interpreter.py); a call that does not fit the op
    registered now raises ``IncompatibleProgramError`` (Note [Calls against changed
    schemas] in _compat.py). ``.program`` is the ``Program`` read."""
    if flavor not in FLAVORS:
        raise ArgumentValueError(msg.BAD_FLAVOR.format(flavor=flavor))
    if isinstance(file, (str, os.PathLike)):
        path = os.fspath(file)
        with open(path, "rb") as stream:  # a missing or unreadable file is the OSError open raises
            loaded = read_program(_small_in_memory(stream), repr(path))
    else:
        loaded = read_program(file, "the stream")
    return _for_flavor(loaded, flavor)
