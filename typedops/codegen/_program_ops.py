"""``typedops codegen --ops-from PROGRAM...``: the ops saved programs need, for a selective build.

Note [Ops a program needs]
~~~~~~~~~~~~~~~~~~~~~~~~~~
A program's calls name the ops it calls itself, but a composite kernel calls other ops
in turn (``sub`` is ``add`` with ``-alpha``), and a build without those fails at run
time. Which ops a kernel calls is known only by running it, so each program is run once
through the dispatcher, on example inputs made from its inputs' recorded dtypes, shapes
and devices (zeros), with the profiler's observer recording every op called -- the
mechanism of ``typedops trace-ops`` -- nested calls included. It runs under
``FakeTensorMode``: the inputs are fake tensors, which hold no elements, so a file's
shapes cost no memory however large (``[2, 20000000000]`` once raised numpy's
MemoryError), and composite kernels still make their inner calls through the dispatcher. The build keeps the ops
of the yaml among those; ops of other namespaces (``@op`` ops, other libraries) are not
the yaml's to generate and are left out. A kernel whose calls depend on the values (none
in the core library) could call ops on other inputs that the zeros did not reach.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..profiler import add_observer, observing
from ..modes import FakeTensorMode
from ..tensor import Tensor
from ..tracing import ConstantInput, Program, TensorInput
from ..vocabulary import TypedopsError
from ._messages import PROGRAM_RUN_FAILED
from ._model import CodegenError

if TYPE_CHECKING:
    from ..programs import CompiledProgram

__all__ = ["ops_of_programs"]


def _example(spec: TensorInput | ConstantInput) -> Any:
    if isinstance(spec, TensorInput):
        from ..core import zeros as make_zeros

        zeros: Tensor = make_zeros(list(spec.shape), dtype=spec.dtype, device=spec.device)  # fake, under the mode
        return zeros
    from ..programs import traced_value

    return traced_value(spec.value)


def ops_of_programs(programs: Sequence[tuple[str, Program | CompiledProgram]]) -> set[str]:
    """The full names of every op the programs (``(label, program)``) call, and every op
    those ops' kernels call (Note [Ops a program needs]). A program already compiled (as
    ``typedops.load`` returns it) is run as it is; a ``Program`` is compiled first."""
    from ..programs import compile_program

    seen: set[str] = set()

    def record(op: Any, args: Any) -> None:
        seen.add(op.full_name)

    for label, given in programs:
        compiled = compile_program(given) if isinstance(given, Program) else given
        program = compiled.program
        seen.update(program.ops())
        try:
            with FakeTensorMode(allow_non_fake_inputs=True):
                inputs = [_example(spec) for spec in program.inputs]
                with add_observer(record), observing():
                    compiled.run(*inputs)
        except (TypedopsError, MemoryError) as error:
            raise CodegenError(PROGRAM_RUN_FAILED.format(label=label, error=error)) from error
    return seen
