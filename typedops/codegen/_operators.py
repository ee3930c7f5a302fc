"""The Python operators of ``Tensor`` (``a + b``, ``a @ b``, ``-a``, ``a == b``, ``a += b``).

Note [Tensor operators]
~~~~~~~~~~~~~~~~~~~~~~~
The tensor layer sits below the core library, so ``Tensor`` defines no operators itself:
the generated core library installs them with the methods (``install()``), each a small
function that calls an op's entry function -- through the dispatcher, so every key
(autograd, tracing, batching) sees ``a + b`` as the op call it is. The table below says
which op serves which operator, as ``torch.Tensor`` does:

- ``binary``: a tensor operand calls the op's ``(Tensor self, Tensor other)`` overload; a
  Python number is first made a *wrapped number* (``wrapped_scalar``: a 0-dim tensor that
  promotes as the default dtype of its kind), as PyTorch's bindings do, so ``int64 tensor
  + 2.5`` is float32; anything else returns ``NotImplemented``. The reflected forms of the
  commutative ops (``2 + a``, ``2 * a``) call the op with ``self`` first; ``__rsub__`` and
  ``__rtruediv__`` (and ``__rfloordiv__``, ``__rmod__``) call it with the wrapped number
  first (``2 - a``).
- ``tensor``: tensors only (``a @ b``); ``scalar``: numbers only; ``unary``: ``-a``,
  ``abs(a)``; ``chooser``: a number, through the function's chooser, which picks the
  overload by type (``2 ** a``, the reflected form: ``pow.Scalar``);
  ``scalar_or_chooser``: a number straight to the op's ``(Tensor, Scalar)`` overload
  (``a ** 2``: ``pow.Tensor_Scalar``, as fast as before), a tensor through the chooser
  (``a ** b``: ``pow.Tensor_Tensor``); ``method_chooser``: both through the chooser of the
  in-place method (``a **= 2``: ``pow_.Scalar``, ``a **= b``: ``pow_.Tensor``).
- ``__eq__`` and the other comparisons return bool tensors, so ``Tensor`` hashes by
  identity (``__hash__ = object.__hash__`` in the tensor layer), as ``torch.Tensor`` does.
- The in-place forms (``a += b``, ``a &= m``, ``a **= 2``) call the in-place ops (``add_``,
  ``bitwise_and_``, ``pow_``), which write into
  ``a`` and bump its version counter (Note [Shared version counter]); an operand that
  cannot be cast into ``a``'s dtype raises the op's error, it does not rebind ``a``.

Only the library of namespace ``core`` (``OPERATOR_NAMESPACE``) generates operators, so
another generated library never replaces them; an operator whose op (or overload) the
library lacks -- a selective build -- is left out.

What an operator costs: ``a @ b`` runs ~55-80 ns more than ``core.matmul(a, b)`` and
``a.matmul(b)``, which call the entry function with no frame of their own (matmul has one
overload, so there is no chooser). CPython reaches a Python-level ``__matmul__`` through
the type's slot, which looks the method up and starts a new evaluation of it (~35-40 ns; a
Python-to-Python call runs in the caller's evaluation loop), and the operator's guard
(the ``isinstance`` that returns ``NotImplemented`` for other operands) is a frame of its
own. Returning ``NotImplemented`` is what keeps ``a @ x`` for a foreign ``x`` Python's
business, so the guard stays. ``a + b`` pays the same, and is still the fastest ``add``:
``core.add`` and ``a.add`` first choose among add's three overloads.
"""

from __future__ import annotations

from typing import Final

from ..schema import BaseType, FunctionSchema
from ._model import OpEntry

__all__ = ["OPERATOR_NAMESPACE", "operators", "operator_lines", "operator_stub_lines"]

OPERATOR_NAMESPACE: Final = "core"

# (Python method, op name, form, reflected): see Note [Tensor operators].
_TABLE: Final = (
    ("__add__", "add", "binary", False), ("__radd__", "add", "binary", False),
    ("__iadd__", "add_", "binary", False),
    ("__sub__", "sub", "binary", False), ("__rsub__", "sub", "binary", True),
    ("__isub__", "sub_", "binary", False),
    ("__mul__", "mul", "binary", False), ("__rmul__", "mul", "binary", False),
    ("__imul__", "mul_", "binary", False),
    ("__truediv__", "div", "binary", False), ("__rtruediv__", "div", "binary", True),
    ("__itruediv__", "div_", "binary", False),
    ("__floordiv__", "floor_divide", "binary", False), ("__rfloordiv__", "floor_divide", "binary", True),
    ("__ifloordiv__", "floor_divide_", "binary", False),
    ("__mod__", "remainder", "binary", False), ("__rmod__", "remainder", "binary", True),
    ("__imod__", "remainder_", "binary", False),
    ("__matmul__", "matmul", "tensor", False),
    ("__pow__", "pow", "scalar_or_chooser", False), ("__rpow__", "pow", "chooser", True),
    ("__neg__", "neg", "unary", False), ("__abs__", "abs", "unary", False),
    ("__eq__", "eq", "binary", False), ("__ne__", "ne", "binary", False),
    ("__lt__", "lt", "binary", False), ("__le__", "le", "binary", False),
    ("__gt__", "gt", "binary", False), ("__ge__", "ge", "binary", False),
    ("__and__", "bitwise_and", "binary", False), ("__rand__", "bitwise_and", "binary", False),
    ("__or__", "bitwise_or", "binary", False), ("__ror__", "bitwise_or", "binary", False),
    ("__xor__", "bitwise_xor", "binary", False), ("__rxor__", "bitwise_xor", "binary", False),
    ("__invert__", "bitwise_not", "unary", False),
    ("__iand__", "bitwise_and_", "binary", False), ("__ior__", "bitwise_or_", "binary", False),
    ("__ixor__", "bitwise_xor_", "binary", False), ("__ipow__", "pow_", "method_chooser", False),
)  # fmt: skip

# The positional argument types each form needs of its overload (``chooser``: the
# overload it names; the call goes through the function's chooser).
_PARAMETERS: Final = {
    "binary": ("Tensor", "Tensor"), "tensor": ("Tensor", "Tensor"),
    "scalar": ("Tensor", "Scalar"), "unary": ("Tensor",), "chooser": ("Tensor", "Tensor"),
    "scalar_or_chooser": ("Tensor", "Scalar"), "method_chooser": ("Tensor", "Tensor"),
}  # fmt: skip
_CHOOSING: Final = frozenset({"chooser", "scalar_or_chooser"})  # forms that call the function's chooser


def _fits(schema: FunctionSchema, form: str) -> bool:
    """Whether ``schema`` takes exactly the form's positional types (anything else defaulted)."""
    wanted = _PARAMETERS[form]
    positional = schema.positional
    if len(positional) < len(wanted) or not all(a.has_default for a in positional[len(wanted) :]):
        return False
    if not all(a.has_default for a in schema.kwarg_only):
        return False
    return all(
        isinstance(a.type, BaseType) and a.type.name == name for a, name in zip(positional, wanted)
    ) and len(schema.returns) == 1


def operators(entries: list[OpEntry], namespace: str) -> list[tuple[str, str, OpEntry, bool]]:
    """``(python method, form, op entry, reflected)`` for each operator this library serves."""
    if namespace != OPERATOR_NAMESPACE:
        return []
    found: list[tuple[str, str, OpEntry, bool]] = []
    for method, name, form, reflected in _TABLE:
        entry = next(
            (e for e in entries if e.defines and e.schema.name == name and _fits(e.schema, form)), None
        )
        if entry is not None and (form in _CHOOSING or form == "method_chooser"):
            # the module's function ``name`` (or the method's ``_method_<name>``) must be a
            # chooser: with one overload it would be bound on first use, and the global would
            # find Python's builtin of that name (or none)
            method_form = form == "method_chooser"
            overloads = [
                e for e in entries if e.defines and e.schema.name == name and (e.method if method_form else e.function)
            ]
            entry = entry if len(overloads) > 1 else None
        if entry is not None:
            found.append((method, form, entry, reflected))
    return found


def _body(form: str, handle: str, reflected: bool, name: str) -> list[str]:
    call = f"_call_{handle}"  # the op's entry function (Note [Entry functions as globals] in _api.py)
    wrapped = "_wrapped_scalar(other, self._device)"
    if form == "scalar_or_chooser":  # a number straight to the op's entry, a tensor through the chooser
        return ["    if isinstance(other, _OPERAND_NUMBERS):", f"        return {call}(self, other)",
                "    if isinstance(other, _Tensor):", f"        return {name}(self, other)",
                "    return NotImplemented"]  # fmt: skip
    if form == "chooser":  # the functional API's chooser picks the overload by the operand's type
        if reflected:
            return ["    if isinstance(other, _OPERAND_NUMBERS):", f"        return {name}(other, self)",
                    "    return NotImplemented"]  # fmt: skip
        return ["    if isinstance(other, (_Tensor, *_OPERAND_NUMBERS)):", f"        return {name}(self, other)",
                "    return NotImplemented"]  # fmt: skip
    if form == "method_chooser":  # both operand kinds through the method's chooser (x **= 2, x **= y)
        return ["    if isinstance(other, (_Tensor, *_OPERAND_NUMBERS)):",
                f"        return _method_{name}(self, other)", "    return NotImplemented"]  # fmt: skip
    if form == "unary":
        return [f"    return {call}(self)"]
    if form == "tensor":
        return ["    if isinstance(other, _Tensor):", f"        return {call}(self, other)", "    return NotImplemented"]
    if form == "scalar":
        return ["    if isinstance(other, _OPERAND_NUMBERS):", f"        return {call}(self, other)",
                "    return NotImplemented"]  # fmt: skip
    if reflected:
        return ["    if isinstance(other, _OPERAND_NUMBERS):", f"        return {call}({wrapped}, self)",
                "    return NotImplemented"]  # fmt: skip
    return [
        "    if isinstance(other, _Tensor):",
        f"        return {call}(self, other)",
        "    if isinstance(other, _OPERAND_NUMBERS):",
        f"        return {call}(self, {wrapped})",
        "    return NotImplemented",
    ]


def operator_lines(found: list[tuple[str, str, OpEntry, bool]]) -> tuple[list[str], list[str]]:
    """The operator functions, and the ``install()`` lines that set them on Tensor."""
    if not found:
        return [], []
    body = ["", "", "# -- the Tensor operators: Note [Tensor operators] in typedops/codegen/_operators.py",
            "_OPERAND_NUMBERS = (int, float, complex)"]  # fmt: skip
    install: list[str] = []
    for method, form, entry, reflected in found:
        params = "self: Any" if form == "unary" else "self: Any, other: Any"
        body += ["", "", f"def _operator{method}({params}) -> Any:"]
        body.append(f'    """Tensor.{method}: {entry.schema.full_name}."""')
        lines = _body(form, entry.attr_name, reflected, entry.schema.name)
        if lines[-1] == "    return NotImplemented" and form != "tensor":  # numpy's numbers: as Python's
            lines[-1:] = ["    if _is_number(other):  # Note [Numbers that are not Python's] in boxing/_ivalue.py",
                          f"        return _operator{method}(self, _python_number(other))",
                          "    return NotImplemented"]  # fmt: skip
        body += lines
        install.append(f"    setattr(_Tensor, {method!r}, _operator{method})")
    return body, install


_STUB_OPERAND: Final = {
    "binary": "_t.Tensor | _t.Scalar", "tensor": "_t.Tensor", "scalar": "_t.Scalar", "chooser": "_t.Tensor | _t.Scalar",
    "scalar_or_chooser": "_t.Tensor | _t.Scalar", "method_chooser": "_t.Tensor | _t.Scalar",
}  # fmt: skip


def operator_stub_lines(found: list[tuple[str, str, OpEntry, bool]]) -> list[str]:
    """``TensorMethods`` stub lines for the operators (mypy checks ``a + b`` with them)."""
    lines: list[str] = []
    for method, form, _, reflected in found:
        if form == "unary":
            lines.append(f"    def {method}(self) -> _t.Tensor: ...")
            continue
        operand = "_t.Scalar" if reflected or method.startswith("__r") else _STUB_OPERAND[form]
        if method in ("__eq__", "__ne__"):
            # object's __eq__ returns bool; a Tensor's returns a bool tensor, as torch's.
            reason = "a bool tensor, not object's bool"
            lines.append(f"    def {method}(self, other: object) -> _t.Tensor: ...  # type: ignore[override]  # {reason}")
        else:
            lines.append(f"    def {method}(self, other: {operand}) -> _t.Tensor: ...")
    return lines
