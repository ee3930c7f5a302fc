"""Programs that outlive the process: ``typedops.load`` reads what ``Program.save`` wrote
(docs/programs.md). The format's reader lives here, trusting nothing in the file; its
writer is in ``typedops.tracing``, beside ``Program`` (Note [The program file format] in
tracing/_saving.py).

It sits above the core library, below codegen.
"""

from ._archive import DEFAULT_LIMITS, Limits
from ._decode import OpEntry
from ._load import FLAVORS, Flavor, LoadedProgram, load, read_program
from ._messages import ProgramFormatError

__all__ = [
    "load",
    "read_program",
    "LoadedProgram",
    "OpEntry",
    "Flavor",
    "FLAVORS",
    "Limits",
    "DEFAULT_LIMITS",
    "ProgramFormatError",
]
