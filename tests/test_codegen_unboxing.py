"""Static unboxing wrappers (Note [Static unboxing wrappers]) and selective builds from
programs (Note [Ops a program needs])."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from typedops import core, tensor
from typedops.codegen import CodegenError, generate
from typedops.core import load_static_wrappers
from typedops.runtime import static_wrapper
from typedops.tracing import TensorInput, trace

ROOT = Path(__file__).resolve().parent.parent
CORE_YAML = ROOT / "typedops" / "core" / "native_functions.yaml"


def test_the_core_wrappers_take_the_boxed_stack_and_leave_the_returns() -> None:
    load_static_wrappers()
    found = static_wrapper("core::max.dim")
    assert found is not None and found[1] == "CPU, Meta"
    x = tensor([[1.0, 5.0], [7.0, 2.0]])
    stack: list[Any] = [x, 1, False]
    found[0](stack)
    values, indices = core.max(x, 1)
    assert [s.tolist() for s in stack] == [values.tolist(), indices.tolist()]
    add = static_wrapper("core::add.Tensor")
    assert add is not None
    stack = [core.empty([2, 3], device="meta"), core.empty([3], device="meta"), 1]
    add[0](stack)
    assert len(stack) == 1 and str(stack[0].device) == "meta" and stack[0].shape == (2, 3)
    assert static_wrapper("core::no_such_op") is None


def test_the_generated_wrapper_reads_the_stack_by_position() -> None:
    text = (ROOT / "typedops" / "core" / "_generated" / "unboxing.py").read_text()
    assert (
        "def add__Tensor(stack: list[Any]) -> None:\n"
        "    # core::add.Tensor\n"
        "    _b = stack[0].key_bits | stack[1].key_bits\n"
        "    if _b & 31 & ((_b & 31) - 1):  # tensors of two devices\n"
        "        _b = _one_device('core::add.Tensor', _b, (stack[0], stack[1]))\n"
        "    if _b & 2:  # Meta\n"
        "        stack[:] = (_m0.add_meta(stack[0], stack[1], alpha=stack[2]),)\n"
        "        return\n"
        "    if _b & 1:  # CPU\n"
        "        stack[:] = (_m0.add_cpu(stack[0], stack[1], alpha=stack[2]),)\n"
        "        return\n"
        "    raise _no_static_kernel('core::add.Tensor', _b, 'CPU, Meta')\n"
    ) in text
    # an ExactSame op checks its tensors' devices as the dispatcher does; one of one tensor cannot mix them
    assert "    _b = _list_bits(stack[0])\n    if _b & 31 & ((_b & 31) - 1):  # tensors of two devices\n" in text
    assert "    _b = stack[0].key_bits\n    if _b & 2:  # Meta\n        stack[:] = (_m0.relu_meta(" in text
    assert "# core::copy_\n    _b = stack[0].key_bits | stack[1].key_bits\n    if _b & 2:  # Meta\n" in text  # NoCheck


def test_a_static_dispatch_build_gets_wrappers_for_its_keys(tmp_path: Path) -> None:
    files = generate(CORE_YAML, tmp_path, namespace="core_cpu", kernels="typedops.core.kernels", static_dispatch="CPU",
                     stubs=tmp_path)  # fmt: skip
    text = files[tmp_path / "unboxing.py"]
    assert "# Meta" not in text and "_register_static_wrappers('CPU', {\n    'core_cpu::add.Tensor': add__Tensor," in text


def test_a_build_from_programs_has_their_ops_and_what_their_kernels_call(tmp_path: Path) -> None:
    x = tensor([1.0, 2.0])
    program = trace(lambda a: core.sub(core.exp(a), a).sum(), x)
    assert program.ops() == ["core::exp", "core::sub.Tensor", "core::sum"]
    files = generate(CORE_YAML, tmp_path, namespace="core", programs=[("p.program", program)])
    text = files[tmp_path / "__init__.py"]
    generated = sorted(line[2:].partition("(")[0] for line in text.splitlines() if line.startswith("# core::"))
    assert generated == ["core::add.Tensor", "core::exp", "core::sub.Tensor", "core::sum"]  # sub calls add
    assert tmp_path / "autograd.py" not in files


def test_a_program_that_fails_on_zeros_is_named(tmp_path: Path) -> None:
    program = trace(lambda a: a.view([2]), tensor([1.0, 2.0]))
    spec = program.inputs[0]
    assert isinstance(spec, TensorInput)
    wrong = replace(program, inputs=(replace(spec, shape=(3,)),))  # as a hostile file could say
    with pytest.raises(CodegenError) as info:
        generate(CORE_YAML, tmp_path, namespace="core", programs=[("w.program", wrong)])
    assert str(info.value).startswith(
        "--ops-from w.program: running the program on fake tensors of its inputs' shapes, to find the ops its kernels "
        "call, failed: "
    )
    assert str(info.value).endswith("; trace and save it again on inputs it runs on, or leave it out and name its ops "
                                    "with --ops")  # fmt: skip


def test_a_program_of_huge_declared_shapes_is_run_on_fake_tensors(tmp_path: Path) -> None:
    program = trace(lambda a: core.sub(a, a).sum(), tensor([[1.0, 2.0]]))
    spec = program.inputs[0]
    assert isinstance(spec, TensorInput)
    huge = replace(program, inputs=(replace(spec, shape=(2, 20_000_000_000)),))  # 160 GB of zeros, as a file could say
    files = generate(CORE_YAML, tmp_path, namespace="core", programs=[("h.program", huge)])
    text = files[tmp_path / "__init__.py"]
    generated = sorted(line[2:].partition("(")[0] for line in text.splitlines() if line.startswith("# core::"))
    assert generated == ["core::add.Tensor", "core::sub.Tensor", "core::sum"]  # sub's inner add still seen
