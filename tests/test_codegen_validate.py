"""The code generator refuses bad op yaml with ``file:line:`` messages, injection attempts included."""

from __future__ import annotations

from pathlib import Path

import pytest

from typedops.codegen import CodegenError, generate

KERNELS = "tests.data.demo_kernels"
GOOD = "- func: twice(Tensor self) -> Tensor\n  dispatch:\n    CompositeImplicitAutograd: twice\n"


def _generate(tmp_path: Path, text: str, **options: str) -> None:
    path = tmp_path / "ops.yaml"
    path.write_text(text)
    generate(path, tmp_path / "out", namespace="vd", kernels=options.pop("kernels", KERNELS), **options)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (GOOD.replace("CompositeImplicitAutograd", "CUDAX"), "ops.yaml:3: unknown dispatch key 'CUDAX'"),
        ("- func: twice(Tensor self) -> Tensor\n  variant: method\n",
         "ops.yaml:2: unknown field 'variant' (an entry has: func, variants, dispatch, with_keys, device_check, vmap)"),
        ("- dispatch: {}\n", "ops.yaml:1: entry has no 'func:' field; write 'func: name(Tensor self) -> Tensor'"),
        ("func: x\n", "ops.yaml:1: an op yaml is a list of entries ('- func: ...'), not a mapping"),
        ("- func: twice(Tensor self -> Tensor\n", "ops.yaml:1: invalid schema: expected ',' or ')' after argument 'self', found '->' (column 19)"),
        ("- func: twice(Tensor self) -> Tensor\n  variants: function, staticmethod\n",
         "ops.yaml:2: unknown variant 'staticmethod' (use function, method)"),
        ("- func: cat(Tensor[] tensors) -> Tensor\n  variants: method\n",
         "ops.yaml:2: vd::cat has variant 'method', so it needs a positional argument 'Tensor self'"),
        ("- func: twice(Tensor self) -> Tensor\n  device_check: Sometimes\n",
         "ops.yaml:2: device_check is NoCheck or ExactSame, not 'Sometimes'"),
        # issue 14: batching rules by family (Note [Rule families] in typedops/batching/_rules.py)
        ("- func: twice(Tensor self) -> Tensor\n  vmap: elementwise\n",
         "ops.yaml:2: vmap: unknown batching rule family 'elementwise' (known: cat, composite, dim, dims, "
         "matmul, new_dim, pointwise, random, reduction, shape)"),
        ("- func: twice(Tensor self) -> Tensor\n  vmap: [pointwise]\n",
         "ops.yaml:2: 'vmap' must be text, not a list"),
        ("- func: pair(Tensor self) -> (Tensor, Tensor)\n  vmap: pointwise\n",
         "ops.yaml:2: vmap: the batching rule family 'pointwise' does not fit vd::pair: it must return one Tensor"),
        ("- func: join(Tensor[] xs) -> Tensor\n  vmap: cat\n",
         "ops.yaml:2: vmap: the batching rule family 'cat' does not fit vd::join: it must take (Tensor[] tensors, int dim)"),
        # issue 11: a method may not replace what Tensor itself defines
        ("- func: numpy(Tensor self) -> Tensor\n  variants: method\n",
         "ops.yaml:2: vd::numpy has variant 'method', which would replace Tensor's own 'numpy' for every "
         "tensor; drop 'method' from its variants or rename the op"),
        ("- func: __repr__(Tensor self) -> str\n  variants: function, method\n",
         "ops.yaml:2: vd::__repr__ has variant 'method', which would replace Tensor's own '__repr__' for every "
         "tensor; drop 'method' from its variants or rename the op"),
        ("- func: __init__(Tensor self) -> ()\n  variants: method\n",
         "ops.yaml:2: vd::__init__ has variant 'method', which would replace Tensor's own '__init__' for every "
         "tensor; drop 'method' from its variants or rename the op"),
        ("- func: pick(Tensor? mask=None, Tensor self) -> Tensor\n  variants: method\n",
         "ops.yaml:1: invalid schema: argument 'self' has no default but follows 'mask', which has one; "
         "give 'self' a default or make it keyword-only (after '*') (column 32)"),
        ("- func: pick(Tensor mask, Tensor self) -> Tensor\n  variants: method\n"
         "- func: pick.other(Tensor self, Tensor mask) -> Tensor\n  variants: method\n",
         "ops.yaml:1: vd::pick takes 'self' after 'mask', so every overload of 'pick' with variant 'method' "
         "must take it after the same arguments (not vd::pick.other)"),
        # types stubs cannot write (Dict used to fail an assertion in the stub writer)
        ("- func: f(Tensor self, Dict(str, Tensor) d) -> Tensor\n",
         "ops.yaml:1: argument 'd' of vd::f has type 'Dict(str, Tensor)', which generated stubs cannot type "
         "(a type variable, Dict, Future, Any...); declare the op with Python's @op or define() instead"),
        ("- func: f(Tensor self) -> Future(Tensor)\n",
         "ops.yaml:1: return 0 of vd::f has type 'Future(Tensor)', which generated stubs cannot type "
         "(a type variable, Dict, Future, Any...); declare the op with Python's @op or define() instead"),
        ("- func: f(Tensor self, ...) -> Tensor\n", "ops.yaml:1: vd::f takes or returns '...', which generated functions cannot type"),
        # issue 11: fields outside ours and PyTorch's are still refused
        ("- func: twice(Tensor self) -> Tensor\n  structured_delegat: twice.out\n",
         "ops.yaml:2: unknown field 'structured_delegat' (an entry has: func, variants, dispatch, with_keys, device_check, vmap)"),
        ("- func: twice.from(Tensor self) -> Tensor\n- func: f.default(Tensor self) -> Tensor\n",
         "ops.yaml:2: overload name 'default' names the overload without a name; write 'f(...)' instead of "
         "'f.default(...)'"),
        # an argument that would shadow the generated code's own names (the static functions'
        # key bits '_b', the kernel module alias '_m0')
        ("- func: f(Tensor self, Tensor _b) -> Tensor\n",
         "ops.yaml:1: argument '_b' of vd::f starts with '_', which generated code keeps for its own names "
         "(a parameter so named would shadow them); rename the argument"),
        (GOOD + GOOD.replace("- func", "\n- func"), "ops.yaml:5: vd::twice is declared twice (first at line 1)"),
        ("- func: other::twice(Tensor self) -> Tensor\n",
         "ops.yaml:1: other::twice is in namespace 'other' but this yaml generates namespace 'vd'; "
         "drop the namespace or pass --namespace other"),
        (GOOD.replace("twice\n", "no_such_kernel\n"), "ops.yaml:3: module 'tests.data.demo_kernels' has no kernel 'no_such_kernel'"),
        (GOOD.replace("twice\n", "cat\n"),
         "ops.yaml:3: kernel 'cat' for CompositeImplicitAutograd does not fit vd::twice: kernel cat does not match "
         "vd::twice(Tensor self) -> Tensor:\n  argument 0: the schema calls it 'self', the kernel 'tensors'\n"
         "  argument 1 'dim' (int): the schema has no such argument"),
        (GOOD + "  with_keys: [CPU]\n", "ops.yaml:4: with_keys names CPU, which has no kernel in 'dispatch:' of vd::twice"),
        ("- func: twice(Tensor self) -> Tensor\n  dispatch:\n    CPU: [a]\n", "ops.yaml:3: 'dispatch: CPU' must be text, not a list"),
        ("- func: [\n", "ops.yaml:2: malformed yaml: expected the node content, but found '<stream end>'"),
    ],
)
def test_invalid_yaml_is_refused_with_file_and_line(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(CodegenError) as info:
        _generate(tmp_path, text)
    assert str(info.value) == message


@pytest.mark.parametrize(
    ("text", "message"),
    [
        # an op name that is code
        ("- func: x(); import os(Tensor self) -> Tensor\n",
         "ops.yaml:1: invalid schema: expected '->' and the returns, found ';' (column 4)"),
        # a kernel reference that is code, or names a builtin outside the kernels module
        (GOOD.replace("twice\n", "twice; import os\n"),
         "ops.yaml:3: kernel reference 'twice; import os' must be an identifier (an attribute of the kernels "
         "module) or a dotted path 'package.module.function'"),
        (GOOD.replace("twice\n", "os.system\n"),
         "ops.yaml:3: kernel 'os.system' is a builtin_function_or_method, not a Python function defined in module 'os'"),
        (GOOD.replace("twice\n", "os.path.join\n"),
         "ops.yaml:3: kernel 'os.path.join' is a function from 'posixpath', not a Python function defined in module 'os.path'"),
        ("- func: lambda(Tensor self) -> Tensor\n",
         "ops.yaml:1: operator name 'lambda' is a Python keyword; generated functions cannot use it"),
    ],
)
def test_injection_attempts_are_refused(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(CodegenError) as info:
        _generate(tmp_path, text)
    assert str(info.value) == message
    assert not (tmp_path / "out").exists()


def test_string_defaults_reach_source_only_through_repr(tmp_path: Path) -> None:
    # A default that tries to close its string and start a statement stays one literal.
    default = '"\\")\\nimport os#"'
    path = tmp_path / "ops.yaml"
    path.write_text(f"- func: f(Tensor self, str s={default}) -> Tensor\n")
    files = generate(path, tmp_path / "out", namespace="vd_repr")
    registration = files[tmp_path / "out" / "__init__.py"]
    assert f"_argument('s', _t1, default={default!r})" in registration
    assert f"# vd_repr::f(Tensor self, str s={default}) -> Tensor\n" in registration  # its schema, as a comment
    assert "\nimport os" not in registration


@pytest.mark.parametrize("breaks", ["\\r", "\\u2028", "\\x0c", "\\x85"])
def test_a_default_cannot_end_its_schema_comment(tmp_path: Path, breaks: str) -> None:
    # A line break in a string default (yaml escape in a quoted scalar) would end the schema
    # comment, and what follows would be code; the comment writes it as its escape instead.
    path = tmp_path / "ops.yaml"
    path.write_text(f'- func: "f(Tensor self, str s=\\"{breaks}import os#\\") -> Tensor"\n')
    files = generate(path, tmp_path / "out", namespace="vd_break")
    module = files[tmp_path / "out" / "__init__.py"]
    assert f'# vd_break::f(Tensor self, str s="{breaks}import os#") -> Tensor\n' in module
    assert module.splitlines() == module.split("\n")[:-1]  # no other line break anywhere


def test_bare_kernel_names_need_a_kernels_module(tmp_path: Path) -> None:
    with pytest.raises(CodegenError) as info:
        _generate(tmp_path, GOOD, kernels=None)  # type: ignore[arg-type]
    assert str(info.value) == (
        "ops.yaml:3: kernel reference 'twice' is a bare name but no kernels module was given; "
        "pass --kernels MODULE or write 'package.module.twice'"
    )


def test_kernels_for_an_existing_core_op_need_the_op_in_the_core_yaml(tmp_path: Path) -> None:
    core = tmp_path / "core.yaml"
    core.write_text("- func: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor\n")
    text = "- func: core::add.Scalar\n  dispatch:\n    PrivateUse1: add_tensor\n"
    with pytest.raises(CodegenError) as info:
        _generate(tmp_path, text, core_yaml=core)  # type: ignore[arg-type]
    assert str(info.value) == "ops.yaml:1: core::add.Scalar is not an operator of the core yaml core.yaml"
    (tmp_path / "ops.yaml").write_text(text.replace("add.Scalar", "add.Tensor"))
    files = generate(tmp_path / "ops.yaml", tmp_path / "out", namespace="vd", kernels=KERNELS, core_yaml=core)
    registration = files[tmp_path / "out" / "__init__.py"]
    assert "IMPL_core = _Library('core', 'IMPL')" in registration
    assert "IMPL_core.impl('core::add.Tensor', _m0.add_tensor, _DispatchKey.PrivateUse1, check=False)" in registration
    assert "LIBRARY" not in registration


def test_a_batching_rule_goes_on_the_defining_entry(tmp_path: Path) -> None:
    text = "- func: core::add.Tensor\n  dispatch:\n    PrivateUse1: add_tensor\n  vmap: pointwise\n"
    with pytest.raises(CodegenError) as info:
        _generate(tmp_path, text)
    assert str(info.value) == (
        "ops.yaml:4: vmap: core::add.Tensor is defined elsewhere; declare its batching rule on the entry that defines it"
    )


def test_declared_batching_rules_are_registered(tmp_path: Path) -> None:
    files = generate(_write(tmp_path, GOOD + "  vmap: pointwise\n"), tmp_path / "out", namespace="vd", kernels=KERNELS)
    registration = files[tmp_path / "out" / "__init__.py"]
    assert "_register_vmap_rules(LIBRARY, [\n    (twice__default, 'pointwise'),\n])" in registration


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "ops.yaml"
    path.write_text(text)
    return path


def test_a_missing_core_yaml_is_named(tmp_path: Path) -> None:
    text = "- func: core::add.Tensor\n  dispatch:\n    PrivateUse1: add_tensor\n"
    with pytest.raises(CodegenError) as info:
        _generate(tmp_path, text, core_yaml=tmp_path / "gone.yaml")  # type: ignore[arg-type]
    assert str(info.value) == (
        f"ops.yaml:1: core::add.Tensor adds kernels to an existing op, but the core yaml {tmp_path / 'gone.yaml'} "
        "does not exist; pass --core-yaml PATH"
    )


def test_static_dispatch_takes_backend_keys_only(tmp_path: Path) -> None:
    with pytest.raises(CodegenError) as info:
        _generate(tmp_path, GOOD, static_dispatch="CPU,Autograd")
    assert str(info.value) == (
        "--static-dispatch: 'Autograd' is not a backend key (use some of CPU, Meta, PrivateUse1, PrivateUse2, PrivateUse3)"
    )


@pytest.mark.parametrize(
    ("variants", "groups"),
    [
        ("", {"function": ["twice"], "method": []}),
        ("  variants: method\n", {"function": [], "method": ["twice"]}),
        ("  variants: method, function\n", {"function": ["twice"], "method": ["twice"]}),
        ("  variants: function,function\n", {"function": ["twice"], "method": []}),
    ],
)
def test_variants_choose_the_api_an_op_appears_in(tmp_path: Path, variants: str, groups: dict[str, list[str]]) -> None:
    from typedops.codegen._api import group
    from typedops.codegen._model import Options, Variant
    from typedops.codegen._validate import load_entries

    path = tmp_path / "ops.yaml"
    path.write_text(GOOD.replace("  dispatch:", variants + "  dispatch:"))
    options = Options(namespace="vd", kernels_module=KERNELS, source_label="ops.yaml", command="test")
    entries = load_entries(path, options, Path(__file__).parents[1] / "typedops" / "core" / "native_functions.yaml")
    assert {v.value: list(group(entries, v)) for v in Variant} == groups
