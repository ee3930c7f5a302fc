"""Tracing: ``typedops.trace(fn, *inputs)`` records the op calls of a function as a
``Program`` -- a small typed IR of frozen dataclasses that prints, runs, lists its ops and
checks itself against the registered schemas (docs/tracing.md).

It sits in the functionality layer beside autograd, the profiler and dispatch modes;
none of them imports another.
"""

from ._messages import ProgramError, TraceError
from ._checking import ArgumentFacts, accepts_tensor, argument_facts, argument_problems, reference_problem
from ._program import Program
from ._saving import (FORMAT_NAME, FORMAT_VERSION, MANIFEST_ENTRY, MAX_INPUT_NAME, TENSOR_ALIGNMENT, TENSOR_DATA_ENTRY,
                      aligned, input_name_problem, little_endian, tensor_entry, write_program)  # fmt: skip
from ._trace import trace
from ._values import (
    Call,
    Constant,
    ConstantInput,
    Input,
    InputRef,
    ListOf,
    OutputKind,
    ResultRef,
    TensorConstant,
    TensorInput,
    Value,
    same_constant,
)

__all__ = [
    "trace",
    "Program",
    # the program's pieces
    "Call",
    "Value",
    "InputRef",
    "ResultRef",
    "Constant",
    "same_constant",
    "TensorConstant",
    "ListOf",
    "Input",
    "TensorInput",
    "ConstantInput",
    "OutputKind",
    # checking values against schemas (Program.check, typedops.programs.compile_program)
    "ArgumentFacts",
    "argument_facts",
    "argument_problems",
    "reference_problem",
    "accepts_tensor",
    # the file format's writer side (its reader is typedops.programs)
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "MANIFEST_ENTRY",
    "MAX_INPUT_NAME",
    "input_name_problem",
    "tensor_entry",
    "TENSOR_DATA_ENTRY",
    "TENSOR_ALIGNMENT",
    "aligned",
    "little_endian",
    "write_program",
    # errors
    "TraceError",
    "ProgramError",
]
