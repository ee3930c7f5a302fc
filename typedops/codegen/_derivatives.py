"""derivatives.yaml -> the autograd kernels and node classes of an op library.

Note [Validated formulas]
~~~~~~~~~~~~~~~~~~~~~~~~~
A formula is a Python expression that becomes part of a generated module, so it is parsed
with ``ast`` and every node checked before anything is written: only the names the op
gives it (argument names, ``grad``/``grads``, ``result`` or the outputs' names), numbers,
booleans and None, the arithmetic and comparison operators, ``x if c else y``, tuples and
lists, indexing, the attributes ``shape``/``dtype``/``ndim`` of tensor arguments, and calls
of allow-listed functions (the library's ops and the derivative helpers). Anything else
-- another name, an attribute call, a lambda, a string, a keyword call of an unknown
function -- is refused with the yaml file and line. The checked tree is rewritten (calls
qualified, attributes turned into saved values) and printed back with ``ast.unparse``, so
no text of the yaml reaches the module except through a tree that passed the checks.

Note [What a node saves]
~~~~~~~~~~~~~~~~~~~~~~~~
The generated kernel saves, for each input that needs a gradient, what that input's
formula reads: tensor arguments as the fields ``s_x`` and ``v_x``, the tensor and its
version (version-checked at backward by ``unpack_saved``; Note [Nodes made by generated
kernels] in autograd/_graph.py), ``x.shape``
and the like as plain values (so reading a shape never trips the version check, as
PyTorch's ``self_sym_sizes``), other arguments as they are, and outputs after the op ran.
For an in-place op derived from a functional formula, a formula reading ``self`` gets a
clone of ``self`` taken before the op writes to it. A value several formulas read is saved
once, under the union of their inputs' conditions (none when every input's formula reads it),
and a saved tensor several formulas read is unpacked once in the backward function, before
them. Shapes and dtypes are read from the tensor's slots (``_shape``, ``_dtype``).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path
from typing import Final, TypeGuard, cast

from ..schema import BaseType, FunctionSchema, ListType, OptionalType
from ._model import CodegenError, OpEntry
from ._yaml import Located, LocatedList, load_yaml
from ._messages import (
    DERIVATIVES_NOT_A_LIST,
    DERIVATIVE_NOT_AN_ARGUMENT,
    DERIVATIVE_NO_GRADIENT,
    FORMULA_NOT_PYTHON,
    DERIVATIVE_NAME_NOT_TEXT,
    DERIVATIVE_NO_SUCH_OP,
    OUTPUT_DIFFERENTIABILITY_LENGTH,
    FORMULA_NOT_TEXT,
    FORMULA_NOT_ALLOWED,
    DERIVATIVE_NOT_A_MAPPING,
    DERIVATIVE_TWICE,
    DERIVATIVE_NAME_NOT_A_SCHEMA,
)

__all__ = ["Derivative", "Formula", "load_derivatives", "CORE_HELPERS", "FORMULA_ATTRIBUTES", "NOT_IMPLEMENTED"]

# The helpers of typedops/core/_derivatives.py (a test keeps the two equal).
CORE_HELPERS: Final = frozenset({
    "sum_to_size", "scale", "scale_negated", "pow_backward", "pow_backward_self", "pow_backward_exponent",
    "minmax_backward", "clamp_backward", "sign", "sum_backward", "mean_backward",
    "amax_backward", "evenly_distribute_backward",
    "max_dim_backward", "matmul_backward_self", "matmul_backward_other", "inverse_permutation",
    "select_backward", "slice_backward", "squeeze_backward", "cat_backward", "as_strided_backward", "sgn", "conj",
    "index_backward", "index_put_self_backward",
})  # fmt: skip
FORMULA_ATTRIBUTES: Final = frozenset({"shape", "dtype", "ndim"})
NOT_IMPLEMENTED: Final = "not_implemented"
_RESERVED: Final = frozenset({"grad", "grads", "result"})
_BINOPS: Final = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow, ast.MatMult)
_UNARY: Final = (ast.USub, ast.UAdd, ast.Not)
_COMPARE: Final = (ast.Gt, ast.GtE, ast.Lt, ast.LtE, ast.Eq, ast.NotEq)


@dataclass(frozen=True, slots=True)
class Formula:
    """One input's gradient: the checked expression (None: not_implemented) and its line."""

    input: str
    expr: ast.expr | None
    line: int


@dataclass(frozen=True, slots=True)
class Derivative:
    """One op's derivatives: its schema, the formula per differentiable input (schema order),
    which outputs are differentiable, and ``inplace_of``: the functional op whose formulas an
    in-place op reuses."""

    entry: OpEntry
    formulas: tuple[Formula, ...]
    differentiable_outputs: tuple[bool, ...]
    line: int
    inplace_of: FunctionSchema | None = None

    @property
    def node_stem(self) -> str:
        """``MulBackward`` for mul: the node class is that plus a number (0, 1... by overload)."""
        schema = self.inplace_of or self.entry.schema
        return "".join(part.capitalize() for part in schema.name.strip("_").split("_")) + "Backward"


# -- loading and checking -----------------------------------------------------------------


def _is_tensor(arg_type: object) -> bool:
    return isinstance(arg_type, BaseType) and arg_type.name == "Tensor"


def _is_tensor_list(arg_type: object) -> bool:
    return isinstance(arg_type, ListType) and _is_tensor(arg_type.elem)


def _differentiable_type(arg_type: object) -> bool:
    return (
        _is_tensor(arg_type)
        or _is_tensor_list(arg_type)
        or (isinstance(arg_type, OptionalType) and _is_tensor(arg_type.elem))
    )


def load_derivatives(path: Path, entries: list[OpEntry], op_functions: frozenset[str]) -> list[Derivative]:
    """The checked derivatives of ``path`` for the ops ``entries`` define."""
    label = path.name
    data = load_yaml(path, label)
    if not isinstance(data, LocatedList):
        raise CodegenError(DERIVATIVES_NOT_A_LIST.format(label=label))
    by_text = {_unqualified(e.schema): e for e in entries}
    found: list[Derivative] = []
    seen: set[str] = set()
    for item, line in zip(data, data.item_lines):
        if not isinstance(item, Located) or "name" not in item:
            raise CodegenError(DERIVATIVE_NOT_A_MAPPING.format(label=label, line=line))
        derivative = _derivative(item, label, by_text, op_functions)
        if derivative.entry.schema.full_name in seen:
            raise CodegenError(DERIVATIVE_TWICE.format(label=label, line=line, op=derivative.entry.schema.full_name))
        seen.add(derivative.entry.schema.full_name)
        found.append(derivative)
    return found + _inplace_variants(found, entries)


def _unqualified(schema: FunctionSchema) -> str:
    text = str(schema)
    return text.split("::", 1)[1] if "::" in text.split("(", 1)[0] else text


def _derivative(item: Located, label: str, by_text: dict[str, OpEntry], functions: frozenset[str]) -> Derivative:
    line = item.line_of("name")
    name = item["name"]
    if not isinstance(name, str):
        raise CodegenError(DERIVATIVE_NAME_NOT_TEXT.format(label=label, line=line))
    try:
        text = _unqualified(FunctionSchema.parse(name))
    except Exception as error:  # noqa: BLE001 -- any parse failure becomes a located error
        raise CodegenError(DERIVATIVE_NAME_NOT_A_SCHEMA.format(label=label, line=line, error=error)) from None
    entry = by_text.get(text)
    if entry is None:
        raise CodegenError(DERIVATIVE_NO_SUCH_OP.format(label=label, line=line, schema=text))
    schema = entry.schema
    outputs = _output_differentiability(item, label, schema)
    names = _formula_names(schema)
    formulas: list[Formula] = []
    for key in item:
        if key in ("name", "output_differentiability"):
            continue
        key_line = item.line_of(key)
        if not isinstance(key, str) or key not in {a.name for a in schema.arguments}:
            raise CodegenError(DERIVATIVE_NOT_AN_ARGUMENT.format(label=label, line=key_line, key=key, op=schema.full_name))
        arg = schema.argument(key)
        if not _differentiable_type(arg.type):
            raise CodegenError(DERIVATIVE_NO_GRADIENT.format(label=label, line=key_line, key=key, type=arg.type))
        formulas.append(_formula(key, item[key], f"{label}:{key_line}", names, functions, key_line))
    order = [a.name for a in schema.arguments]
    formulas.sort(key=lambda f: order.index(f.input))
    return Derivative(entry, tuple(formulas), outputs, line)


def _output_differentiability(item: Located, label: str, schema: FunctionSchema) -> tuple[bool, ...]:
    value = item.get("output_differentiability")
    if value is None:
        return tuple(_is_tensor(r.type) for r in schema.returns)
    line = item.line_of("output_differentiability")
    if not _is_bool_list(value) or len(value) != len(schema.returns):
        raise CodegenError(
            OUTPUT_DIFFERENTIABILITY_LENGTH.format(label=label, line=line, count=len(schema.returns))
        )
    return tuple(value)


def _formula_names(schema: FunctionSchema) -> dict[str, str]:
    """Name -> kind ('tensor', 'tensors', 'value', 'output', 'grad') a formula of the op may use."""
    names: dict[str, str] = {"grad": "grad", "grads": "grad"}
    for arg in schema.arguments:
        kind = "tensors" if _is_tensor_list(arg.type) else "tensor" if _differentiable_type(arg.type) else "value"
        names[arg.name] = kind
    if len(schema.returns) == 1:
        names["result"] = "output"
    for ret in schema.returns:
        if ret.name:
            names[ret.name] = "output"
    return names


def _formula(
    input_name: str, text: object, where: str, names: dict[str, str], functions: frozenset[str], line: int
) -> Formula:
    if text == NOT_IMPLEMENTED:
        return Formula(input_name, None, line)
    if not isinstance(text, str):
        raise CodegenError(FORMULA_NOT_TEXT.format(where=where, input=input_name))
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as error:
        raise CodegenError(FORMULA_NOT_PYTHON.format(where=where, input=input_name, error=error.msg)) from None
    _check(tree.body, where, names, functions)
    return Formula(input_name, tree.body, line)


def _check(node: ast.expr, where: str, names: dict[str, str], functions: frozenset[str]) -> None:
    """Refuse anything outside Note [Validated formulas]."""

    def refuse(what: str) -> CodegenError:
        return CodegenError(FORMULA_NOT_ALLOWED.format(where=where, what=what))

    def visit(n: ast.AST) -> None:
        if isinstance(n, ast.BinOp):
            if not isinstance(n.op, _BINOPS):
                raise refuse(f"the operator {type(n.op).__name__}")
            visit(n.left)
            visit(n.right)
        elif isinstance(n, ast.UnaryOp):
            if not isinstance(n.op, _UNARY):
                raise refuse(f"the operator {type(n.op).__name__}")
            visit(n.operand)
        elif isinstance(n, ast.Compare):
            if not all(isinstance(op, _COMPARE) for op in n.ops):
                raise refuse("that comparison")
            for part in [n.left, *n.comparators]:
                visit(part)
        elif isinstance(n, ast.IfExp):
            for part in (n.test, n.body, n.orelse):
                visit(part)
        elif isinstance(n, (ast.Tuple, ast.List)):
            for part in n.elts:
                visit(part)
        elif isinstance(n, ast.Subscript):
            visit(n.value)
            visit(n.slice)
        elif isinstance(n, ast.Constant):
            if n.value is not None and type(n.value) not in (int, float, bool):
                raise refuse(f"the constant {n.value!r}")
        elif isinstance(n, ast.Name):
            if n.id not in names:
                raise refuse(f"the name {n.id!r} (formulas see the op's arguments, grad, grads and result)")
        elif isinstance(n, ast.Attribute):
            if not (isinstance(n.value, ast.Name) and names.get(n.value.id) in ("tensor", "tensors")):
                raise refuse("an attribute of anything but a tensor argument")
            if n.attr not in FORMULA_ATTRIBUTES:
                raise refuse(f"the attribute {n.attr!r} (allowed: {', '.join(sorted(FORMULA_ATTRIBUTES))})")
        elif isinstance(n, ast.Call):
            if not isinstance(n.func, ast.Name) or n.func.id not in functions:
                shown = ast.unparse(n.func)
                raise refuse(f"a call of {shown!r} (allowed: the library's ops and the derivative helpers)")
            for arg in n.args:
                if isinstance(arg, ast.Starred):
                    raise refuse("a starred argument")
                visit(arg)
            for kw in n.keywords:
                if kw.arg is None:
                    raise refuse("a ** argument")
                visit(kw.value)
        else:
            raise refuse(f"{type(n).__name__}")

    visit(node)


def _is_bool_list(value: object) -> TypeGuard[list[bool]]:
    return isinstance(value, list) and all(isinstance(v, bool) for v in cast("list[object]", value))


def _inplace_variants(found: list[Derivative], entries: list[OpEntry]) -> list[Derivative]:
    """In-place ops (``exp_``, ``add_.Tensor``) without their own entry reuse their
    functional op's formulas, when the schemas agree but for the in-place alias."""
    by_name = {(d.entry.schema.name, d.entry.schema.overload_name): d for d in found}
    have = {d.entry.schema.full_name for d in found}
    extra: list[Derivative] = []
    for entry in entries:
        schema = entry.schema
        if not schema.name.endswith("_") or schema.full_name in have or schema.is_out_fn:
            continue
        functional = by_name.get((schema.name[:-1], schema.overload_name))
        if functional is None or not _same_arguments(schema, functional.entry.schema):
            continue
        extra.append(
            Derivative(
                entry, functional.formulas, functional.differentiable_outputs, functional.line, functional.entry.schema
            )
        )
    return extra


def _same_arguments(a: FunctionSchema, b: FunctionSchema) -> bool:
    def shape(s: FunctionSchema) -> list[tuple[str, str, bool]]:
        return [(x.name, str(x.type), x in s.kwarg_only) for x in s.arguments]

    return shape(a) == shape(b)

