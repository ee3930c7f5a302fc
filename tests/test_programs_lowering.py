"""Lowering without instructions (Note [Lowered without instructions] in typedops/programs/_lowering.py)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from typedops import Tensor, core, tensor
from typedops.programs import CompiledProgram, compile_program
from typedops.programs._lowering import lower
from typedops.tracing import Program, trace


def _steps(lowered: Any, frame: list[Any]) -> list[Any]:
    """A lowered program's steps and outputs as comparable values: each gather applied to ``frame``."""
    steps, outputs, single, _, slots = lowered
    return [[(kind, op, a, b, c, list(gather(frame))) for kind, op, a, b, c, gather in steps],
            list(outputs(frame)), single, slots]  # fmt: skip


def _check(program: Program) -> list[CompiledProgram]:
    """Both flavors lowered without instructions, as lowering the assembly would, with the same constants."""
    compiled = [compile_program(program, "dispatch"), compile_program(program, "static")]
    for c in compiled:
        assert c._assembly is None  # pyright: ignore[reportPrivateUsage] -- lowered without instructions
        frame = list(range(1000))
        again = lower(c.assembly, len(program.inputs), c._ops, c._unboxed)  # pyright: ignore[reportPrivateUsage]
        assert again is not None
        assert _steps(c._lowered, frame) == _steps(again, frame)  # pyright: ignore[reportPrivateUsage]
        assert c.assembly.constants is c._constants  # pyright: ignore[reportPrivateUsage]
    return compiled


def test_a_program_with_constants_tensor_constants_and_keyword_arguments_lowers_as_its_assembly() -> None:
    w, b = tensor([[0.5, 1.0], [-1.0, 2.0]]), tensor([1.0, 2.0])

    def f(x: Tensor) -> tuple[Tensor, Tensor]:
        h = core.relu(core.add(core.matmul(x, w), b, alpha=2))
        return core.add(h, x), core.maximum(h, b)

    x = tensor([[1.0, -2.0], [3.0, 0.5]])
    for c in _check(trace(f, x)):
        assert [t.tolist() for t in c.run(x)] == [t.tolist() for t in f(x)]
        assert "LOAD_CONSTANT" in c.disassemble()


_OPS = ["neg", "relu", "add", "mul", "sub"]


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_OPS), st.integers(0, 5), st.integers(-3, 3)), min_size=1, max_size=8))
def test_a_chain_lowers_as_its_assembly_and_runs_as_eager(steps: list[tuple[str, int, int]]) -> None:
    c3 = tensor([7, 8, 9])

    def chain(a: Tensor) -> tuple[Tensor, ...]:
        values = [a, c3]
        for name, pick, alpha in steps:
            operand = values[pick % len(values)]
            if name in ("neg", "relu"):
                values.append(getattr(core, name)(operand))
            elif name == "mul":
                values.append(core.mul(values[-1], operand))
            else:
                values.append(getattr(core, name)(values[-1], operand, alpha=alpha))
        return tuple(values[2:])

    a = tensor([1, -2, 3])
    for c in _check(trace(chain, a)):
        assert [t.tolist() for t in c.run(a)] == [t.tolist() for t in chain(a)]
        c.straighten()
        assert [t.tolist() for t in c.run(a)] == [t.tolist() for t in chain(a)]
