"""Programs that outlive the process: a traced ``Program`` run on a small stack machine,
through the dispatcher or dispatcher-free (docs/programs.md)."""

from ._interpreter import FLAVORS, CompiledProgram, Flavor, compile_program, traced_value
from ._instructions import Instruction, Opcode
from ._messages import IncompatibleProgramError

__all__ = ["compile_program", "CompiledProgram", "Flavor", "FLAVORS", "Instruction", "Opcode", "IncompatibleProgramError",
           "traced_value"]
