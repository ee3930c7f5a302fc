"""The bundled core library generated from typedops/core/native_functions.yaml: checked in
(typedops/core/_generated, and its stubs typedops/dispatch/_ops_typing.pyi and
typedops/tensor/_methods.pyi) and up to date, loaded lazily by
``import typedops``, and its methods (``self`` not first included) and functional API.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import typedops
from typedops import Device, MemoryFormat, core, tensor
from typedops.codegen import generate, obsolete_files, stale_files
from typedops.codegen._generate import DEFAULT_CORE_YAML, PACKAGE

ROOT = Path(__file__).resolve().parent.parent
GENERATED = ROOT / "typedops" / "core" / "_generated"
CORE_COMMAND = (
    "typedops codegen typedops/core/native_functions.yaml --out typedops/core/_generated --namespace core "
    "--bundled"
)


def _core_files(out: Path, package: Path) -> dict[Path, str]:
    return generate(DEFAULT_CORE_YAML, out, namespace="core", bundled=package, command=CORE_COMMAND)


def test_checked_in_core_library_is_up_to_date() -> None:
    stale = stale_files(_core_files(GENERATED, PACKAGE))
    assert not stale, (
        f"stale generated files {[str(p.relative_to(ROOT)) for p in stale]}: run `make codegen` "
        f"(or `{CORE_COMMAND}`) to update"
    )


def test_staleness_is_detected(tmp_path: Path) -> None:
    files = _core_files(tmp_path / "out", tmp_path / "package")
    assert sorted(stale_files(files)) == sorted(files)
    assert sorted(p.relative_to(tmp_path).as_posix() for p in files) == [
        "out/__init__.py", "out/__init__.pyi", "out/autograd.py", "out/autograd.pyi", "out/unboxing.py", "out/unboxing.pyi",
        "package/_core_methods.py", "package/dispatch/_ops_typing.pyi", "package/tensor/_methods.pyi",
    ]
    assert obsolete_files(GENERATED, _core_files(GENERATED, PACKAGE)) == []  # no older layout left behind


def test_registration_uses_the_unchecked_builders() -> None:
    text = (GENERATED / "__init__.py").read_text()
    assert "# -- registration (schemas from the unchecked builders of typedops.schema._build" in text
    assert "    argument as _argument,\n" in text  # one import statement, from typedops.runtime
    assert "parse_schema" not in text and "_FunctionSchema(" not in text and "_Argument(" not in text
    # Each op is one entry under its schema text, with the fields that differ from their
    # defaults named; one call then defines every op (where.self among them).
    assert (
        "# core::where.self(Tensor condition, Tensor self, Tensor other) -> Tensor\n"
        "where__self = (\n"
        "    _schema(\n"
        "        'where', 'core', 'self',\n"
        "        positional=(_argument('condition', _t0), _argument('self', _t0), _argument('other', _t0)),\n"
        "        returns=(_return(_t0),),\n"
        "    ),\n"
        "    (_kernel(_DispatchKey.CPU, _m0.where_cpu, _unboxing2), "
        "_kernel(_DispatchKey.Meta, _m0.where_meta, _unboxing2)),\n"
        ")\n"
    ) in text
    assert ") = LIBRARY._define_generated((\n" in text and " where__self," in text
    assert (
        "# 3 positional -> 1\ndef _unboxing2(_fn):\n    def unboxing(op, keys, stack):\n        a2 = stack.pop()\n"
        "        a1 = stack.pop()\n        a0 = stack.pop()\n        try:\n            _r = _fn(a0, a1, a2)\n"
    ) in text


def test_the_documented_entry_is_the_generated_one() -> None:
    docs = (ROOT / "docs" / "codegen.md").read_text()
    excerpt = docs.split("```python\n# core::add_.Tensor(", 1)[1].split("```", 1)[0]
    assert f"\n# core::add_.Tensor({excerpt}" in (GENERATED / "__init__.py").read_text()


def test_import_typedops_loads_core_on_first_use() -> None:
    code = (
        "import sys, typedops\n"
        "assert 'typedops.core' not in sys.modules\n"
        "x = typedops.tensor([1.0, 2.0])\n"
        "print(typedops.core.add(x, x, alpha=2).tolist(), x.add(x).tolist())\n"
        "assert 'typedops.core' in sys.modules\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "[3.0, 6.0] [2.0, 4.0]\n"


@pytest.mark.parametrize(
    ("first_use", "printed"),
    [("x + x", "[2.0, 4.0]"), ("2 * x", "[2.0, 4.0]"), ("x.sum()", "3.0"), ("x.max(0).values", "2.0"),
     ("-x", "[-1.0, -2.0]"), ("x == x", "[True, True]")],
)  # fmt: skip
def test_a_core_method_or_operator_loads_the_core_library_on_first_use(first_use: str, printed: str) -> None:
    # Note [Methods that load the core library]: the stand-ins load it, then call the real one.
    code = (
        "import sys, typedops\n"
        "x = typedops.tensor([1.0, 2.0])\n"
        "assert 'typedops.core' not in sys.modules and hasattr(x, 'exp')\n"
        f"print(({first_use}).tolist())\n"
        "assert 'typedops.core' in sys.modules\n"
        "from typedops._core_methods import NAMES\n"
        "stand_ins = [n for n in NAMES if 'Loads the core library' in (getattr(typedops.Tensor, n).__doc__ or '')]\n"
        "assert not stand_ins, stand_ins  # every one replaced by the library's own\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    assert result.stdout == printed + "\n"
    code = "import sys, typedops\nprint(typedops.ops.core.add.Tensor.schema.full_name)\n"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "core::add.Tensor\n"


def test_missing_tensor_attributes_still_raise() -> None:
    x: Any = tensor([1.0])
    with pytest.raises(AttributeError) as info:
        x.no_such_method
    assert str(info.value) == "'Tensor' object has no attribute 'no_such_method'"
    with pytest.raises(AttributeError):
        x._private


def test_method_with_self_not_first_moves_self_into_place() -> None:
    # where.self(Tensor condition, Tensor self, Tensor other): x.where(condition, other)
    x, y = tensor([1.0, 2.0, 3.0]), tensor([-1.0, -2.0, -3.0])
    condition = x.gt(1.5)
    assert x.where(condition, y).tolist() == [-1.0, 2.0, 3.0]
    assert x.where(condition=condition, other=y).tolist() == [-1.0, 2.0, 3.0]
    assert core.where(condition, x, y).tolist() == [-1.0, 2.0, 3.0]
    assert typedops.ops.core.where.self(condition, x, y).tolist() == [-1.0, 2.0, 3.0]
    with pytest.raises(TypeError):
        x.where(condition)  # type: ignore[call-overload]  # 'other' is missing


def test_method_with_self_not_first_source_and_stub() -> None:
    methods = (GENERATED / "__init__.py").read_text()
    assert (
        "def _method_where(self: Any, condition: Any, *args: Any, **kwargs: Any) -> Any:\n"
        '    """core::where.self, core::where.ScalarOther as a method: self moves to its place in the schema."""\n'
        "    return _ordered_where(condition, self, *args, **kwargs)\n"
    ) in methods
    assert "    setattr(_Tensor, 'where', _method_where)\n" in methods
    stub = (PACKAGE / "tensor" / "_methods.pyi").read_text()
    assert "    def where(self, condition: _t.Tensor, other: _t.Tensor) -> _t.Tensor: ...\n" in stub
    assert "def where(condition: Tensor, self: Tensor, other: Tensor) -> Tensor: ..." in (
        GENERATED / "__init__.pyi"
    ).read_text()


def test_functional_api_and_methods() -> None:
    x, y = tensor([1.0, 2.0]), tensor([10.0, 20.0])
    assert core.add(x, y, alpha=2).tolist() == [21.0, 42.0]
    assert core.add(x, 1, 3).tolist() == [4.0, 5.0]
    assert x.mul(y).tolist() == [10.0, 40.0]
    assert sorted(core.__all__) == sorted(core._generated.__all__)
    n = core.zeros([1, 2, 3, 4]).contiguous(memory_format=MemoryFormat.channels_last)
    assert n.stride() == (24, 1, 8, 2)
    m = core.ones([2, 3], device=Device("meta"))
    assert m.is_meta and core.matmul(m, core.ones([3, 5], device=Device("meta"))).shape == (2, 5)


def test_factories_take_sizes_one_by_one_and_dtypes_by_torchs_names() -> None:
    # Note [Sizes as varargs] in typedops/codegen/_api.py; the names in typedops/__init__.py
    import numpy as np

    assert core.zeros(2, 3).shape == core.zeros([2, 3]).shape == core.zeros(size=(2, 3)).shape == (2, 3)
    assert core.ones(4, dtype=typedops.long).tolist() == [1, 1, 1, 1] and core.randn(3).shape == (3,)
    assert core.empty(2, 2, device="meta", dtype=typedops.half).dtype is typedops.ScalarType.float16
    assert core.zeros(np.int64(2)).shape == (2,)
    with pytest.raises(typedops.vocabulary.ArgumentError) as info:
        core.zeros(2.0)  # type: ignore[call-overload]  # refused, as the stubs say
    assert str(info.value) == "core::zeros(): argument 'size' (SymInt[]): expected a list (SymInt[]), got float"
    assert (typedops.float, typedops.double, typedops.int, typedops.bool) == (
        typedops.ScalarType.float32, typedops.ScalarType.float64, typedops.ScalarType.int32, typedops.ScalarType.bool
    )


def test_demo_tour_generates_imports_and_calls() -> None:
    result = subprocess.run([sys.executable, "-m", "typedops.demo"], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    assert "y.axpy(x, a=2)            = tensor([12.0, 24.0], dtype=float32)   (self moves into place)\n" in result.stdout
    assert "contiguous strides        = (60, 20, 5, 1);  channels_last strides = (60, 1, 15, 3)\n" in result.stdout
    assert "no data: tensor(..., shape=(64, 32), dtype=float32, device='meta')\n" in result.stdout


def test_entry_globals_are_bound_on_first_call() -> None:
    """Note [Entry functions as globals] in typedops/codegen/_api.py: a stand-in puts the
    op's entry function in its global on the first call and calls it."""
    from typedops.core import _generated as generated
    from typedops.runtime import lazy_entry

    handle = typedops.ops.core.add.Tensor
    namespace: dict[str, Any] = {}
    stand_in = lazy_entry(namespace, "_call_add__Tensor", handle)
    namespace["_call_add__Tensor"] = stand_in
    assert stand_in.__name__ == "_call_add__Tensor"
    x = tensor([1.0, 2.0])
    assert stand_in(x, x, alpha=2).tolist() == [3.0, 6.0]
    assert namespace["_call_add__Tensor"] is handle.call
    assert (x + x).tolist() == [2.0, 4.0] and core.add(x, x).tolist() == [2.0, 4.0]
    assert vars(generated)["_call_add__Tensor"] is handle.call  # the module's own, after its first call


def test_the_functional_api_is_bound_at_import() -> None:
    """Note [The functional API without __getattr__] in typedops/core/__init__.py: every
    name is in the module's dict from import on, a name with one overload as a stand-in
    until its first call; a stand-in taken before that call keeps working."""
    code = (
        "import typedops.core as core\n"
        "from typedops import ops, tensor\n"
        "assert '__getattr__' not in vars(core)\n"
        "assert all(name in vars(core) for name in core.__all__)\n"
        "assert core.add is core._generated.add  # a chooser: the generated function\n"
        "taken = core.relu\n"
        "assert taken is not ops.core.relu.default.call\n"
        "x = tensor([-1.0, 2.0])\n"
        "print(core.relu(x).tolist(), taken(x).tolist())\n"
        "assert core.relu is ops.core.relu.default.call and taken is not core.relu\n"
        "try:\n"
        "    core.no_such_function\n"
        "except AttributeError as e:\n"
        "    print(e)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "[0.0, 2.0] [0.0, 2.0]\nmodule 'typedops.core' has no attribute 'no_such_function'\n"
