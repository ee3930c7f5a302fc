"""Static unboxing wrappers (Note [Static unboxing wrappers]) and selective builds from
programs (Note [Ops a program needs])."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from typedops import core, tensor
from typedops.codegen import CodegenError, generate
from typedops.core import load_static_wrappers
from typedops.dispatch import dispatcher
from typedops.runtime import static_wrapper
from typedops.tracing import TensorInput, trace
from typedops.vocabulary import ScalarType

ROOT = Path(__file__).resolve().parent.parent
CORE_YAML = ROOT / "typedops" / "core" / "native_functions.yaml"


def test_the_core_wrappers_take_the_boxed_stack_and_leave_the_returns() -> None:
    load_static_wrappers()
    found = static_wrapper("core::max.dim")
    assert found is not None and found.backends == "CPU, Meta"
    x = tensor([[1.0, 5.0], [7.0, 2.0]])
    stack: list[Any] = [x, 1, False]
    found.boxed(stack)
    values, indices = core.max(x, 1)
    assert [s.tolist() for s in stack] == [values.tolist(), indices.tolist()]
    add = static_wrapper("core::add.Tensor")
    assert add is not None
    stack = [core.empty([2, 3], device="meta"), core.empty([3], device="meta"), 1]
    add.boxed(stack)
    assert len(stack) == 1 and str(stack[0].device) == "meta" and stack[0].shape == (2, 3)
    assert static_wrapper("core::no_such_op") is None


def test_the_core_unboxed_wrappers_take_every_argument_positionally_and_return_the_returns() -> None:
    load_static_wrappers()
    found = static_wrapper("core::max.dim")
    assert found is not None
    x = tensor([[1.0, 5.0], [7.0, 2.0]])
    values, indices = found.unboxed(x, 1, False)
    assert (values.tolist(), indices.tolist()) == ([5.0, 7.0], [1, 0])
    add = static_wrapper("core::add.Tensor")
    assert add is not None
    assert add.unboxed(tensor([1, 2]), tensor([10, 20]), 3).tolist() == [31, 62]  # alpha, positionally
    out = static_wrapper("core::add.out")
    assert out is not None
    buffer = core.empty([2], dtype=ScalarType.int64)
    assert out.unboxed(tensor([1, 2]), tensor([10, 20]), 1, buffer) is buffer and buffer.tolist() == [11, 22]
    cat = static_wrapper("core::cat")
    assert cat is not None
    assert cat.unboxed([tensor([1]), tensor([2, 3])], 0).tolist() == [1, 2, 3]  # a Tensor[] argument


def test_the_generated_wrappers_are_unboxed_and_boxed_over_them() -> None:
    text = (ROOT / "typedops" / "core" / "_generated" / "unboxing.py").read_text()
    assert (
        "def add__Tensor(self: Any, other: Any, alpha: Any) -> Any:\n"
        "    # core::add.Tensor\n"
        "    _b = self.key_bits | other.key_bits\n"
        "    if _b & 31 & ((_b & 31) - 1):  # tensors of two devices\n"
        "        _b = _one_device('core::add.Tensor', _b, (self, other))\n"
        "    if _b & 2:  # Meta\n"
        "        return _m0.add_meta(self, other, alpha=alpha)\n"
        "    if _b & 1:  # CPU\n"
        "        return _m0.add_cpu(self, other, alpha=alpha)\n"
        "    raise _no_static_kernel('core::add.Tensor', _b, 'CPU, Meta')\n"
        "\n"
        "\n"
        "def _boxed_add__Tensor(stack: list[Any]) -> None:\n"
        "    stack[:] = (add__Tensor(*stack),)\n"
    ) in text
    assert "def _boxed_max__dim(stack: list[Any]) -> None:\n    stack[:] = max__dim(*stack)\n" in text  # two returns
    # an ExactSame op checks its tensors' devices as the dispatcher does; one of one tensor cannot mix them
    assert "    _b = _list_bits(tensors)\n    if _b & 31 & ((_b & 31) - 1):  # tensors of two devices\n" in text
    assert "    _b = self.key_bits\n    if _b & 2:  # Meta\n        return _m0.relu_meta(" in text
    assert "# core::copy_\n    _b = self.key_bits | src.key_bits\n    if _b & 2:  # Meta\n" in text  # NoCheck
    assert "    'core::add.Tensor': (_boxed_add__Tensor, add__Tensor),\n" in text
    docs = (ROOT / "docs" / "codegen.md").read_text()
    shown = docs.split("```python\ndef add__Tensor(", 1)[1].split("```", 1)[0]
    assert f"def add__Tensor({shown}" in text  # docs/codegen.md shows the generated pair


_UNARY = ["neg", "abs", "relu", "exp", "sigmoid"]
_BINARY = ["add.Tensor", "sub.Tensor", "mul.Tensor", "maximum", "minimum", "matmul", "add_.Tensor"]


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(_UNARY + _BINARY), st.lists(st.integers(-20, 20), min_size=4, max_size=4),
       st.sampled_from([1, 2, -1]), st.booleans())  # fmt: skip
def test_unboxed_equals_boxed_equals_dispatched(name: str, data: list[int], alpha: int, floating: bool) -> None:
    load_static_wrappers()
    op, _, overload = name.partition(".")
    found = static_wrapper(f"core::{name}")
    handle = dispatcher.find_op(f"core::{op}", overload)
    assert found is not None and handle is not None
    dtype = ScalarType.float64 if floating else ScalarType.int64

    def arguments() -> list[Any]:  # new tensors for each call: add_ writes its first
        a = tensor(data, dtype=dtype).view([2, 2])
        b = tensor([d * 3 - 1 for d in data], dtype=dtype).view([2, 2])
        values: list[Any] = [a] if name in _UNARY else [a, b]
        return values + ([alpha] if "alpha" in [x.name for x in handle.schema.arguments] else [])

    def outcome(call: Any) -> Any:
        try:
            result = call(arguments())
        except Exception as error:  # noqa: BLE001 -- the three must fail alike
            return type(error), str(error)
        return result.dtype, result.tolist()

    def boxed(values: list[Any]) -> Any:
        found.boxed(values)
        assert len(values) == 1
        return values[0]

    def dispatched(values: list[Any]) -> Any:
        handle.call_boxed(values)
        return values[0]

    expected = outcome(dispatched)
    assert outcome(lambda values: found.unboxed(*values)) == expected
    assert outcome(boxed) == expected


def test_a_static_dispatch_build_gets_wrappers_for_its_keys(tmp_path: Path) -> None:
    files = generate(CORE_YAML, tmp_path, namespace="core_cpu", kernels="typedops.core.kernels", static_dispatch="CPU",
                     stubs=tmp_path)  # fmt: skip
    text = files[tmp_path / "unboxing.py"]
    assert "# Meta" not in text
    assert "_register_static_wrappers('CPU', {\n    'core_cpu::add.Tensor': (_boxed_add__Tensor, add__Tensor)," in text


def test_a_static_core_build_names_results_as_the_dispatched_one_does(tmp_path: Path) -> None:
    # Note [Named results]: its stubs promise return_types.max for max(x, 1), so its chooser
    # calls a wrapper naming the static function's results (opcheck compares the function).
    ops = tmp_path / "ops.yaml"
    ops.write_text("- core::max.dim\n- core::max.other\n- core::maximum\n- core::min.dim\n")
    files = generate(CORE_YAML, tmp_path, namespace="core", kernels="typedops.core.kernels", static_dispatch="CPU",
                     ops_list=ops, stubs=tmp_path)  # fmt: skip
    text = files[tmp_path / "__init__.py"]
    assert "import typedops.core.return_types as _return_types\n" in text
    assert (
        "def _named_max__dim(*args: Any, **kwargs: Any) -> Any:\n"
        '    """core::max.dim\'s results as return_types.max (Note [Named results])."""\n'
        "    return _return_types.max._make(_max__dim(*args, **kwargs))\n"
    ) in text
    assert "    (max__dim.schema, _named_max__dim),\n" in text and "        return _named_max__dim(" in text
    assert "_named_min__dim" not in text  # a lone overload returns a tuple, as the dispatched function does
    assert "    'core::max.dim': _max__dim,\n" in text and "    'core::min.dim': min,\n" in text
    stub = files[tmp_path / "__init__.pyi"]
    assert "-> _return_types.max: ..." in stub and "-> tuple[Tensor, Tensor]: ..." in stub


def test_a_build_from_programs_has_their_ops_and_what_their_kernels_call(tmp_path: Path) -> None:
    x = tensor([1.0, 2.0])
    program = trace(lambda a: core.max(core.exp(a), other=a).sum(), x)
    assert program.ops() == ["core::exp", "core::max.other", "core::sum"]
    files = generate(CORE_YAML, tmp_path, namespace="core", programs=[("p.program", program)])
    text = files[tmp_path / "__init__.py"]
    generated = sorted(line[2:].partition("(")[0] for line in text.splitlines() if line.startswith("# core::"))
    assert generated == ["core::exp", "core::max.other", "core::maximum", "core::sum"]  # max.other calls maximum
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
    program = trace(lambda a: core.max(a, other=a).sum(), tensor([[1.0, 2.0]]))
    spec = program.inputs[0]
    assert isinstance(spec, TensorInput)
    huge = replace(program, inputs=(replace(spec, shape=(2, 20_000_000_000)),))  # 160 GB of zeros, as a file could say
    files = generate(CORE_YAML, tmp_path, namespace="core", programs=[("h.program", huge)])
    text = files[tmp_path / "__init__.py"]
    generated = sorted(line[2:].partition("(")[0] for line in text.splitlines() if line.startswith("# core::"))
    assert generated == ["core::max.other", "core::maximum", "core::sum"]  # max.other's inner maximum still seen
