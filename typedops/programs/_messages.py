"""The programs package's errors and messages, in one place."""

from __future__ import annotations

from typing import Final

from ..vocabulary import ArgumentValueError, TypedopsError
from ..tracing import ProgramError

__all__ = ["ProgramFormatError", "IncompatibleProgramError", "ProgramError", "ArgumentValueError"]


class ProgramFormatError(TypedopsError, ValueError):
    """A file that is not a program typedops can load: malformed, truncated, hostile, from
    a newer typedops, or naming what this process does not have (an op, a dtype).
    ``where`` is the place in the file (``"calls[3].args[1]"``, an entry name, or ``""``
    for the file as a whole) and ``problem`` what is wrong there."""

    def __init__(self, message: str, where: str = "", problem: str = "") -> None:
        self.where = where
        self.problem = problem
        super().__init__(message)


# -- the error's two shapes ----------------------------------------------------------------------
NOT_A_PROGRAM: Final = "{source} is not a typedops program that can be loaded: {problem}"
BAD_FIELD: Final = "{source} is not a typedops program that can be loaded: {where}: {problem}"

# -- the archive -------------------------------------------------------------------------------
NO_DIRECTORY: Final = "it has no zip directory at its end (not a zip archive, or truncated)"
TRUNCATED_DIRECTORY: Final = "its zip directory is cut short (the file is truncated)"
ZIP64: Final = "it is a zip64 archive, which typedops never writes"
DIRECTORY_TOO_LARGE: Final = "its zip directory declares {size} bytes for {count} entries, more than the limit of {limit}"
ENTRY_COUNT: Final = "its zip directory declares {count} entries and holds {found}"
TOO_MANY_ENTRIES: Final = "it has {count} entries, more than the limit of {limit}"
DAMAGED: Final = "the zip archive is damaged ({detail})"
DUPLICATE_ENTRY: Final = "the entry {name!r} appears more than once"
UNEXPECTED_ENTRY: Final = (
    "unexpected entry {name!r}: a program holds program.json and the tensor data it names "
    "(tensors.bin; tensors/<k>.npy in version 1)"
)
MISSING_ENTRY: Final = "the entry {name!r} is missing"
ENCRYPTED: Final = "the entry {name!r} is encrypted"
COMPRESSION: Final = "the entry {name!r} uses compression method {method}; programs use stored (0) or deflate (8)"
ENTRY_TOO_LARGE: Final = "the entry {name!r} declares {size} bytes, more than the limit of {limit}"
LOCAL_HEADER: Final = "the local header of the entry {name!r} does not match its directory record"
ENTRY_CUT: Final = "the entry {name!r} is cut short (the file is truncated)"
BAD_CRC: Final = "the entry {name!r} fails its CRC check (the file is damaged)"
ENTRY_GREW: Final = "the entry {name!r} holds more than the {size} bytes it declares"

# -- the manifest ------------------------------------------------------------------------------
NOT_JSON: Final = "program.json is not UTF-8 JSON ({detail})"
NOT_FINITE: Final = "program.json holds {literal}, which JSON does not have (write {{\"float\": \"nan\"}})"
DUPLICATE_KEY: Final = "the key {key!r} appears twice"
TOO_DEEP: Final = "program.json nests too deeply to parse"
NOT_FORMAT: Final = "the format is {got}, not 'typedops.program'"
NEWER_VERSION: Final = (
    "format version {version} is newer than this typedops reads (versions 1 to {supported}); "
    "load it with the typedops that saved it, or a newer one"
)
EXPECTED: Final = "expected {expected}, got {got}"
WRAPPED_ROWS: Final = "a list of rows of the tensor table"
NOT_A_TENSOR_ROW: Final = "expected a row of the tensor table (0 to {last}), got {got}"
WRAPPED_TWICE: Final = "tensor row {row} is listed twice"
NOT_WRAPPABLE: Final = (
    "tensor row {row} ({dtype}{shape}) cannot be a wrapped number: one is a 0-dim bool, int64, float64 or complex128"
)
OUT_OF_RANGE: Final = "{value} is out of range: expected {low} to {high}"
TOO_MANY: Final = "{count} items, more than the limit of {limit}"
KEYS: Final = "expected the keys {expected}, got {got}"
ONE_OF: Final = "expected one of {expected}, got {got!r}"
NESTED_TOO_DEEP: Final = "values nest more than {limit} levels deep"

# -- references --------------------------------------------------------------------------------
NO_SUCH_INPUT: Final = "refers to input {index}, and the program has {count} input(s)"
NOT_EARLIER: Final = "refers to a result of call {call}, which is not an earlier call"
NO_SUCH_RESULT: Final = "refers to result {output} of call {call}, which has {count} result(s)"
NO_SUCH_OP: Final = "refers to op {index}, and the file lists {count} op(s)"
NO_SUCH_TENSOR: Final = "refers to tensor constant {index}, and the file has {count}"
RESULT_IN_INPUT: Final = "a constant input refers to a call's result"
INPUT_IN_INPUT: Final = "a constant input refers to an input (a constant holds no tensor)"
NUMBERED_VALUE: Final = "a value: the number of an input, tensor constant, constant or earlier result, or a list of values"
NO_SUCH_VALUE: Final = (
    "refers to value {number}, and {count} come before it (the inputs, the tensor constants, the constants, "
    "then each earlier call's results)"
)
CALL_ROW: Final = "a list [op, outputs, argument, ...]"
OUTPUT_COUNT: Final = "output kind {kind!r} with {count} output(s) (single takes 1, none takes 0)"
SCHEMA_NAME: Final = "the schema {schema!r} is not one of {name}"
BAD_SCHEMA: Final = "the schema does not parse: {detail}"
NOT_REGISTERED: Final = (
    "the program calls {name}, which is not registered: import (or define) the library that "
    "registers it before loading the program"
)
ARITY: Final = "{got} argument(s) for {name}, whose schema takes {expected}: {schema}"
RESULT_COUNT: Final = "{got} result(s) for {name}, whose schema returns {expected}: {schema}"
BAD_DEVICE: Final = "not a device: {detail}"
DATA_ENTRY: Final = "expected null or {expected!r}, got {got}"
DATA_OFFSET: Final = (
    "expected null or {expected}, got {got} (the constants' elements are laid out in table order, "
    "each at the first multiple of 64 bytes after the one before)"
)
DATA_SIZE: Final = "it holds {size} bytes, and the tensor table lays out {expected}"

# -- tensor data ---------------------------------------------------------------------------------
TENSOR_TOO_LARGE: Final = "a tensor of shape {shape} holds {count} elements, more than the limit of {limit}"
TENSORS_TOO_LARGE: Final = "the tensor constants hold {size} bytes together, more than the limit of {limit}"
NO_STORAGE: Final = "dtype {dtype} has no storage for elements"
NOT_NPY: Final = "not a .npy array ({detail})"
NPY_VERSION: Final = ".npy format version {version}; programs use 1.0 or 2.0"
NPY_OBJECTS: Final = (
    "it holds Python objects (dtype {dtype}): a program's tensors hold numbers, and loading "
    "never unpickles"
)
NPY_DTYPE: Final = "it holds {got}, not the {expected} (little-endian) the manifest declares"
NPY_SHAPE: Final = "its shape {got} does not match the shape {expected} the manifest declares"
NPY_LENGTH: Final = "it holds {size} bytes of elements, and its dtype and shape take {expected}"
NPY_ORDER: Final = "it is in Fortran order; programs store C order"

# -- arguments -----------------------------------------------------------------------------------
BAD_FLAVOR: Final = "flavor must be 'dispatch' or 'static', got {flavor!r}"


# -- the interpreter (the errors of its load are IncompatibleProgramError) -----------------------
class IncompatibleProgramError(ProgramFormatError):
    """A program whose calls do not fit the ops registered now: an op missing, a schema
    changed incompatibly, a call from a newer library that this one cannot make, or a value
    that does not fit its argument. A ``ProgramFormatError``: loading a file raises nothing
    else for what is in it; ``where`` is the call or output (``"calls[3]"``)."""

    def __init__(self, message: str, where: str = "") -> None:
        super().__init__(message, where, message)


# -- loading: compatibility (Note [Calls against changed schemas] in _compat.py) -----------
OP_GONE: Final = (
    "cannot load the program: call %{index} calls {op}, which is not registered; "
    "import the library that defines it before loading"
)
INCOMPATIBLE: Final = (
    "cannot load the program: call %{index} ({op}) was saved against\n    {saved}\n"
    "and the registered schema\n    {current}\nis not backward compatible with it "
    "(is_backward_compatible_with is false); trace and save the program again against this library"
)
NEWER_CALL: Final = (
    "cannot load the program: call %{index} ({op}) was saved by a newer library, against\n    {saved}\n"
    "and passes {argument}={value}, which the registered schema\n    {current}\nhas no argument for; "
    "run it with a library that has {argument!r}, or save it with {argument} left at its default"
)
WRONG_ARITY: Final = (
    "cannot load the program: call %{index} ({op}) has {got} argument(s) for its saved schema of {expected}"
)
BAD_REFERENCE: Final = "cannot load the program: {where} {problem}"
BAD_VALUE: Final = "cannot load the program: call %{index} ({op}), argument {argument!r}: {problem}"

# -- running --------------------------------------------------------------------------------
WRONG_INPUT_COUNT: Final = "the compiled program takes {expected} input(s) ({names}) by position, got {got}"
NOT_A_TENSOR_INPUT: Final = "the compiled program's input {name!r} must be a Tensor, got {kind}"
SPECIALIZED: Final = (
    "input {name!r} was {traced!r} when the program was traced, and the program is specialized "
    "to that value; got {got!r}. Trace and save it again with {name}={got!r}"
)

# -- typedops program run ---------------------------------------------------------------------
CANNOT_IMPORT: Final = "cannot import module {module!r} (--import): {error}"
BAD_INPUTS_FILE: Final = "cannot read the inputs {path}: {error} (write them with numpy.savez)"
INPUTS_DO_NOT_FIT: Final = (
    "the inputs {path} do not fit the program: it takes the tensor inputs {expected}, the file has {got}; "
    "name the arrays after the inputs (numpy.savez(path, x=...)) or give them in order (numpy.savez(path, a, b))"
)
BAD_INPUT_ARRAY: Final = "the input {name!r} in {path} is not a tensor typedops can hold: {error}"
