"""codegen/_derivatives.py: derivatives.yaml checked with ast against the allow-list, errors
with the yaml file and line; the generated autograd module."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from typedops import Tensor
from typedops.codegen import generate
from typedops.codegen._derivatives import CORE_HELPERS
from typedops.codegen._generate import DEFAULT_CORE_YAML
from typedops.codegen._model import CodegenError

ROOT = Path(__file__).resolve().parent.parent
NATIVE = DEFAULT_CORE_YAML.read_text()


def _generate(tmp_path: Path, derivatives: str) -> dict[Path, str]:
    (tmp_path / "native_functions.yaml").write_text(NATIVE)
    (tmp_path / "derivatives.yaml").write_text(textwrap.dedent(derivatives))
    return generate(tmp_path / "native_functions.yaml", tmp_path / "out", namespace="core")


MUL = "- name: mul.Tensor(Tensor self, Tensor other) -> Tensor\n"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("  self: __import__('os').system('x')\n",
         "derivatives.yaml:2: a call of \"__import__('os').system\" (allowed: the library's ops and the derivative helpers) "
         "is not allowed in a formula (see Note [Validated formulas])"),
        ("  self: grad * secret\n",
         "derivatives.yaml:2: the name 'secret' (formulas see the op's arguments, grad, grads and result) "
         "is not allowed in a formula (see Note [Validated formulas])"),
        ("  self: grad.sum()\n",
         "derivatives.yaml:2: a call of 'grad.sum' (allowed: the library's ops and the derivative helpers) "
         "is not allowed in a formula (see Note [Validated formulas])"),
        ("  self: other.__class__\n",
         "derivatives.yaml:2: the attribute '__class__' (allowed: dtype, ndim, shape) is not allowed in a "
         "formula (see Note [Validated formulas])"),
        ("  self: \"(lambda: grad)()\"\n",
         "derivatives.yaml:2: a call of 'lambda: grad' (allowed: the library's ops and the derivative "
         "helpers) is not allowed in a formula (see Note [Validated formulas])"),
        ("  self: grad * 'x'\n",
         "derivatives.yaml:2: the constant 'x' is not allowed in a formula (see Note [Validated formulas])"),
        ("  self: grad if\n",
         "derivatives.yaml:2: the formula for 'self' is not a Python expression: invalid syntax"),
        ("  self: \"[g for g in grads]\"\n",
         "derivatives.yaml:2: ListComp is not allowed in a formula (see Note [Validated formulas])"),
        ("  alpha: grad\n", "derivatives.yaml:2: 'alpha' is not an argument of core::mul.Tensor"),
    ],
)
def test_formulas_outside_the_allow_list_are_refused_with_their_line(tmp_path: Path, body: str, message: str) -> None:
    with pytest.raises(CodegenError) as info:
        _generate(tmp_path, MUL + body)
    assert str(info.value) == message


def test_entries_must_name_an_op_of_the_library(tmp_path: Path) -> None:
    with pytest.raises(CodegenError, match=r"derivatives.yaml:1: no op in the library has the schema 'mul.Tensor\(Tensor self\) -> Tensor'"):
        _generate(tmp_path, "- name: mul.Tensor(Tensor self) -> Tensor\n  self: grad\n")


def test_output_differentiability_must_list_every_output(tmp_path: Path) -> None:
    text = MUL + "  output_differentiability: [True, False]\n  self: grad\n"
    with pytest.raises(CodegenError, match="derivatives.yaml:2: output_differentiability must list one true/false per output"):
        _generate(tmp_path, text)


def test_a_non_tensor_argument_has_no_gradient(tmp_path: Path) -> None:
    text = "- name: pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor\n  exponent: grad\n"
    with pytest.raises(CodegenError, match="derivatives.yaml:2: argument 'exponent' of type Scalar has no gradient"):
        _generate(tmp_path, text)


def test_the_generated_kernel_saves_only_what_formulas_read(tmp_path: Path) -> None:
    files = _generate(tmp_path, MUL + "  self: sum_to_size(grad * other, self.shape)\n  other: grad\n")
    text = files[tmp_path / "out" / "autograd.py"]
    assert "class MulBackward0(_Node):\n    __slots__ = ('s_other', 'v_other', 's_self_shape')\n" in text
    assert "        _g0 = _H.sum_to_size(grad * other, self_shape)\n" in text
    # a saved tensor is two fields, the tensor and its version: no SavedTensor object
    assert (
        "        if _e0 is not None:\n            _node.s_other = other\n            _st = other._storage\n"
        "            _node.v_other = 0 if _st is None else _st.version\n            _node.s_self_shape = self._shape\n"
    ) in text
    # each kernel is made by a factory, once per key set, with the bits below autograd bound
    assert "def mul__Tensor_autograd(_ks):\n    _bl = _BELOW[_ks]\n\n    def mul__Tensor_autograd(self, other):\n" in text
    assert "            return _S_mul__Tensor.cache[_bl](self, other)\n" in text
    assert "_ks]" not in text.replace("_BELOW[_ks]", "")
    # mul_ reuses mul's formulas; out= refuses (and binds nothing)
    assert "    def mul___Tensor_autograd(self, other):\n        _base = _check_inplace(self, 'core::mul_.Tensor', True)\n" in text
    assert (
        "def mul__out_autograd(_ks):\n    def mul__out_autograd(self, other, *, out):\n"
        "        raise _out_not_differentiable('core::mul.out')\n    return mul__out_autograd\n"
    ) in text


def test_a_tensor_several_formulas_read_is_unpacked_once_and_apply_is_the_backward(tmp_path: Path) -> None:
    files = _generate(tmp_path, MUL + "  self: grad * other * self\n  other: grad * self\n")
    text = files[tmp_path / "out" / "autograd.py"]
    # self: read by both formulas, unpacked once before them; other: by one, in its branch
    assert (
        "    _e = _node.next_edges\n    self = _unpack_saved(_node.s_self, _node.v_self, _node, -1)\n    _g0 = None\n"
        "    if _e[0] is not None:\n        other = _unpack_saved(_node.s_other, _node.v_other, _node, -1)\n"
        "        _g0 = grad * other * self\n"
    ) in text
    assert text.count("self = _unpack_saved(_node.s_self, _node.v_self, _node, -1)") == 1
    assert "    _name = 'MulBackward0'\n    apply = backward_mul__Tensor\n    __init__ = object.__init__" in text
    # edges: none for a tensor without an Autograd key bit; the common cases in line, edge_of for the rest
    assert (
        "        if other.key_bits & _AG:\n            _fn = other.grad_fn\n            if _fn is None:\n"
        "                _m = other._autograd_meta\n                if _m is None or (_e1 := _m.edge) is None:\n"
        "                    _e1 = _edge(other)\n            elif other._autograd_meta is None:\n"
        "                _e1 = (_fn, other._output_nr)\n            else:\n                _e1 = _edge(other)\n"
    ) in text


OPT_KERNEL = "from typedops import Tensor\n\ndef mul_opt(self: Tensor, other: Tensor | None) -> Tensor:\n    return self\n"


def test_an_optional_tensor_is_saved_with_its_version_or_as_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # No core op has a Tensor? input: a library op of its own, its kernel, node and
    # backward run from the generated text with the op below autograd stubbed.
    from typedops import core, no_grad, tensor
    from typedops.autograd import unpack_saved

    (tmp_path / "opt_kernels.py").write_text(OPT_KERNEL)
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "native_functions.yaml").write_text(
        NATIVE + "\n- func: mul_opt(Tensor self, Tensor? other) -> Tensor\n  dispatch:\n    CPU: opt_kernels.mul_opt\n"
    )
    (tmp_path / "derivatives.yaml").write_text(
        "- name: mul_opt(Tensor self, Tensor? other) -> Tensor\n  self: grad * other\n  other: grad * self\n"
    )
    text = generate(tmp_path / "native_functions.yaml", tmp_path / "out", namespace="core")[tmp_path / "out" / "autograd.py"]
    assert "            _node.s_other = _t = other\n            _node.v_other = 0 if _t is None or _t._storage is None" in text
    header = text[text.index("from typedops.runtime import (") : text.index("import typedops.core._generated as _F")]
    start = text.index("def backward_mul_opt__default")
    end = text.index("\n\n\n", text.index("def mul_opt__default_autograd"))

    def below(self: Tensor, other: Tensor | None) -> Tensor:
        with no_grad():
            return self * 1 if other is None else self * other

    class Slots:
        cache = {k: below for k in range(1 << 12)}

    namespace: dict[str, Any] = {"_S_mul_opt__default": Slots, "_F": core}
    exec(header + text[start:end], namespace)
    x, w = tensor([1.0, 2.0], requires_grad=True), tensor([3.0, 4.0], requires_grad=True)
    kernel = namespace["mul_opt__default_autograd"](x.keys)  # the kernel for x's key set
    node = kernel(x, None).grad_fn  # None saved as None, version 0
    assert (node.s_other, node.v_other) == (None, 0) and node.next_edges[1] is None
    assert unpack_saved(node.s_other, node.v_other, node, -1) is None
    y = kernel(x, w * 1)
    y.sum().backward(retain_graph=True)
    assert x.grad is not None and x.grad.tolist() == [3.0, 4.0] and w.grad is not None and w.grad.tolist() == [1.0, 2.0]
    saved = y.grad_fn.s_other
    saved.mul_(tensor([2.0, 2.0]))
    with pytest.raises(RuntimeError, match="which is an input of MulOptBackward0, is at version 1; expected version 0"):
        y.sum().backward()


def test_not_implemented_generates_a_raising_branch(tmp_path: Path) -> None:
    files = _generate(tmp_path, MUL + "  self: not_implemented\n  other: grad * self\n")
    text = files[tmp_path / "out" / "autograd.py"]
    assert "    if _e[0] is not None:\n        raise _not_implemented('core::mul.Tensor', 'self')\n" in text


def test_core_helpers_list_matches_the_helpers_module() -> None:
    from typedops.core._derivatives import HELPERS

    assert HELPERS == CORE_HELPERS


def test_the_checked_in_autograd_module_is_generated_from_the_yaml() -> None:
    text = (ROOT / "typedops" / "core" / "_generated" / "autograd.py").read_text()
    assert text.startswith("# @generated by typedops.codegen from derivatives.yaml -- do not edit.")
    assert "class SumBackward1(_Node):" in text  # sum.dim_IntList, numbered after sum
