"""Programs that outlive the process: ``typedops.load`` reads what ``Program.save`` wrote
and returns it compiled for a small stack machine, run through the dispatcher or
dispatcher-free (docs/programs.md). The format's reader lives here, trusting nothing in
the file; its writer is in ``typedops.tracing``, beside ``Program`` (Note [The program
file format] in tracing/_saving.py).

It sits above the core library, below codegen.
"""

from ._archive import DEFAULT_LIMITS, Limits
from ._instructions import Instruction, Opcode
from ._io import format_outputs, import_modules, outputs_of, read_inputs, write_outputs
from ._interpreter import FLAVORS, CompiledProgram, Flavor, compile_program, traced_value
from ._load import LoadedProgram, load, read_file, read_program
from ._messages import IncompatibleProgramError, ProgramFormatError

__all__ = [
    "load",
    "read_program",
    "read_file",
    "LoadedProgram",
    "Flavor",
    "FLAVORS",
    "Limits",
    "DEFAULT_LIMITS",
    "ProgramFormatError",
    # the interpreter
    "compile_program",
    "CompiledProgram",
    "Instruction",
    "Opcode",
    "IncompatibleProgramError",
    "traced_value",
    # typedops program run
    "import_modules",
    "read_inputs",
    "outputs_of",
    "format_outputs",
    "write_outputs",
]
