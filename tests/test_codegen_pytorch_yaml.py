"""PyTorch's own native_functions.yaml generates (issue 11): its extra fields are ignored,
``--schemas-only`` needs no kernels, its types have stub annotations, ``where.self``-style
methods and keyword overload names work, and stub overloads are ordered so none is dead.

The whole of PyTorch's yaml is generated, imported and type-checked in
tests/test_codegen_torch_compat.py (``make compat``); this module uses a small excerpt in
its style, so it runs in ``make test``.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from typedops import NoKernelError, Scalar, Tensor, ops, tensor
from typedops.cli import main
from typedops.codegen import CodegenError, generate, write_files
from typedops.dispatch import Library

# An excerpt in the style of PyTorch's yaml: its fields, C++ kernel names under keys
# typedops lacks, its types and defaults, ops named as PyTorch names them.
EXCERPT = """\
- func: pick.self(Tensor condition, Tensor self, Tensor other) -> Tensor
  device_check: NoCheck   # TensorIterator
  variants: function, method
  dispatch:
    CPU, CUDA, MPS, MTIA: where
  tags: [core, pointwise]
- func: pick.ScalarOther(Tensor condition, Tensor self, Scalar other) -> Tensor
  variants: function, method
- func: pick.Scalar(Tensor condition, Scalar self, Scalar other) -> Tensor
  variants: function
- func: every.dims(Tensor self, int[1]? dim=None, bool keepdim=False) -> Tensor
  structured_delegate: every.dims_out
  variants: function
  cpp_no_default_args: ['dim']
- func: every.dims_out(Tensor self, int[1]? dim=None, bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)
  structured: True
  structured_inherits: TensorIteratorBase
  autogen: every.dims_functional
- func: every(Tensor self) -> Tensor
  structured_delegate: every.all_out
  variants: function
- func: every.all_out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
  structured: True
  precomputed:
  - dim -> int dim
- func: shuffle_(Tensor(a!) self, int from, int? to, *, Generator? generator=None) -> Tensor(a!)
  variants: method
  device_guard: False
  manual_cpp_binding: True
  manual_kernel_registration: True
- func: shuffle_.from(Tensor(a!) self, int from, *, Generator? generator=None) -> Tensor(a!)
  variants: method
  use_const_ref_for_mutable_tensors: False
- func: dim(Tensor self) -> int
  variants: method
  manual_cpp_binding: True
  category_override: dummy
- func: loss(Tensor self, Tensor target, int reduction=Mean) -> Tensor
  python_module: nn
  ufunc_inner_loop:
    Generic: loss (AllAndComplex, BFloat16, Half)
- func: pool(Tensor self, int[2] kernel_size, int[2] stride=[]) -> Tensor
- func: odd(Tensor self, DeviceIndex index, Storage source, Stream s) -> (QScheme, SymBool)
"""


def _load(tmp_path: Path, name: str) -> ModuleType:
    yaml = tmp_path / "native_functions.yaml"
    yaml.write_text(EXCERPT)
    write_files(generate(yaml, tmp_path / name, namespace=name, stubs=tmp_path / "stubs", schemas_only=True))
    sys.path.insert(0, str(tmp_path))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(tmp_path))


@pytest.fixture(scope="module")
def torchlike(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ModuleType, Path]]:
    tmp = tmp_path_factory.mktemp("torchlike")
    module = _load(tmp, "torchlike")
    yield module, tmp
    module.LIBRARY.remove()
    for method in ("pick", "shuffle_"):
        delattr(Tensor, method)


def test_pytorch_fields_are_read_and_ignored(torchlike: tuple[ModuleType, Path]) -> None:
    module, _ = torchlike
    assert [str(h.schema) for h in (module.every__dims, module.every__default)] == [
        "torchlike::every.dims(Tensor self, int[1]? dim=None, bool keepdim=False) -> Tensor",
        "torchlike::every(Tensor self) -> Tensor",
    ]


def test_schemas_only_registers_no_kernels(torchlike: tuple[ModuleType, Path]) -> None:
    module, tmp = torchlike
    source = (tmp / "torchlike" / "__init__.py").read_text()
    assert "_kernel(" not in source.split("# -- the typed functional API")[0].split("_schema(", 1)[1]
    assert ops.torchlike.pick.self.schema.overload_name == "self"
    with pytest.raises(NoKernelError):
        module.loss(tensor([1.0]), tensor([2.0]))


def test_methods_with_self_moved_choose_among_their_overloads(torchlike: tuple[ModuleType, Path]) -> None:
    # PyTorch's where.self and where.ScalarOther: x.where(condition, other) for both
    def tensors(condition: Tensor, self: Tensor, other: Tensor) -> Tensor:
        return tensor([1.0])

    def scalar_other(condition: Tensor, self: Tensor, other: Scalar) -> Tensor:
        return tensor([2.0])

    impl = Library("torchlike", "IMPL", "CPU")
    try:
        impl.impl("pick.self", tensors)
        impl.impl("pick.ScalarOther", scalar_other)
        x, condition = tensor([0.0]), tensor([True])
        pick = x.pick  # type: ignore[attr-defined]  # generated here, so not in the checked-in stubs
        assert pick(condition, tensor([5.0])).tolist() == [1.0]
        assert pick(condition, 5.0).tolist() == [2.0]
        assert pick(condition=condition, other=5.0).tolist() == [2.0]
        assert torchlike[0].pick(condition, x, 5.0).tolist() == [2.0]
    finally:
        impl.remove()


def test_a_method_tensor_defines_is_left_out_without_kernels(torchlike: tuple[ModuleType, Path]) -> None:
    module, tmp = torchlike
    assert Tensor.dim is not module.dim__default.call
    assert tensor([[1.0]]).dim() == 2  # Tensor's own
    source = (tmp / "torchlike" / "__init__.py").read_text()
    assert (
        "# Not methods here, since Tensor defines these names itself (the ops keep their functions):\n"
        "#   dim: torchlike::dim\n"
    ) in source
    assert "    def dim(" not in (tmp / "stubs" / "typedops_namespaces.pyi").read_text()


def test_keyword_overload_names_are_reached_by_getattr(torchlike: tuple[ModuleType, Path]) -> None:
    _, tmp = torchlike
    handle = getattr(ops.torchlike.shuffle_, "from")
    assert str(handle.schema).startswith("torchlike::shuffle_.from(Tensor(a!) self, int from,")
    stub = (tmp / "stubs" / "typedops_namespaces.pyi").read_text()
    # the packet's stub leaves the keyword overload out: a keyword cannot be an attribute
    assert "    from: " not in stub and "    default: _torchlike_op_shuffle___default\n" in stub
    assert "    def shuffle_(self, from_: _builtins.int, *, generator: _t.Generator | None = ...)" in stub


def test_pytorch_types_have_stub_annotations(torchlike: tuple[ModuleType, Path]) -> None:
    _, tmp = torchlike
    library = (tmp / "torchlike" / "__init__.pyi").read_text()
    assert (
        "def odd(self: Tensor, index: int, source: _Storage, s: object) -> tuple[object, bool]: ..."
    ) in library
    assert (
        "def pool(self: Tensor, kernel_size: int | Sequence[int], stride: int | Sequence[int] = ...) -> Tensor: ..."
    ) in library  # a lone int stands for a sized int list (Note [Stubs type what runs])
    assert "def loss(self: Tensor, target: Tensor, reduction: int = ...) -> Tensor: ..." in library


def test_overloads_shadowed_by_defaults_come_first(torchlike: tuple[ModuleType, Path]) -> None:
    # PyTorch's all(self) after all.dims(self, dim=None, keepdim=False): mypy's
    # overload-cannot-match, unless the narrower overload is written first
    _, tmp = torchlike
    library = (tmp / "torchlike" / "__init__.pyi").read_text()
    every = [line for line in library.splitlines() if line.startswith("def every(")]
    assert every == [  # yaml order: dims, dims_out, default, all_out; out=None is no out (Note [out=None])
        "def every(self: Tensor, *, out: None = ...) -> Tensor: ...",
        "def every(self: Tensor, dim: int | Sequence[int] | None = ..., keepdim: bool = ..., *, out: None = ...) -> Tensor: ...",
        "def every(self: Tensor, *, out: Tensor) -> Tensor: ...",
        "def every(self: Tensor, dim: int | Sequence[int] | None = ..., keepdim: bool = ..., *, out: Tensor) -> Tensor: ...",
    ]


def test_stub_order_keeps_yaml_order_unless_an_overload_is_covered() -> None:
    from typedops.codegen._text import stub_order
    from typedops.schema import parse_schema

    schemas = [parse_schema(t) for t in (
        "f.a(Tensor self, int dim, bool keepdim=False) -> Tensor",  # dim required: covers nothing
        "f.b(Tensor self, int[1]? dim=None, bool keepdim=False) -> Tensor",
        "f.c(Tensor self, int? dim=None) -> Tensor",  # another annotation for dim: not covered
        "f(Tensor self) -> Tensor",  # covered by f.b and f.c
        "f.d(Tensor self, Tensor other) -> Tensor",
    )]  # fmt: skip
    assert stub_order(schemas) == [0, 3, 1, 2, 4]
    methods = [parse_schema(t) for t in (
        "g.b(Tensor c, Tensor self, int x=0) -> Tensor", "g(Tensor c, Tensor self) -> Tensor"
    )]
    assert stub_order(methods, skip_self=True) == [1, 0]


def test_schemas_only_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    yaml = tmp_path / "ops.yaml"
    yaml.write_text("- func: core::add.Tensor\n  dispatch:\n    CPU: add\n")
    with pytest.raises(CodegenError) as info:
        generate(yaml, tmp_path / "out", namespace="so", schemas_only=True)
    assert str(info.value) == (
        "ops.yaml:1: core::add.Tensor only adds kernels to an existing op, and --schemas-only registers no "
        "kernels; drop the entry or the option"
    )
    yaml.write_text(EXCERPT)
    with pytest.raises(CodegenError) as info:
        generate(yaml, tmp_path / "out", namespace="so", schemas_only=True, kernels="tests.data.demo_kernels")
    assert str(info.value) == "--schemas-only registers no kernels, so --kernels has nothing to do; drop one of them"
    # without --schemas-only, PyTorch's C++ kernel names under keys typedops lacks are errors
    with pytest.raises(CodegenError) as info:
        generate(yaml, tmp_path / "out", namespace="so", kernels="tests.data.demo_kernels")
    assert str(info.value) == "ops.yaml:5: module 'tests.data.demo_kernels' has no kernel 'where'"
    cli = ["codegen", str(yaml), "--out", str(tmp_path / "cli"), "--namespace", "so", "--stubs", str(tmp_path / "stubs")]
    assert main([*cli, "--schemas-only"]) == 0
    assert "Regenerate with: typedops codegen" in (tmp_path / "cli" / "__init__.py").read_text()
    assert "--schemas-only" in (tmp_path / "cli" / "__init__.py").read_text()
    capsys.readouterr()
