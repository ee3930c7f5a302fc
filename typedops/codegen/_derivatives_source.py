"""The text of a library's generated ``autograd.py``: node classes, backward functions and
autograd kernels from checked derivatives (see _derivatives.py), like PyTorch's
``VariableType`` and ``Functions``.

Each formula reaches the text only as a tree that passed Note [Validated formulas],
rewritten here: calls qualified (``_F.`` ops, ``_H.`` helpers), ``x.shape`` read from the
node's saved ``x_shape`` (Note [What a node saves]).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Final

from ..schema import FunctionSchema, OptionalType
from ._derivatives import CORE_HELPERS, Derivative, Formula, _formula_names, _is_tensor_list
from ._model import HEADER, OpEntry

__all__ = ["autograd_module"]


@dataclass
class _Saves:
    """What one formula reads: name -> how it is saved ('tensor', 'tensors', 'value', 'output')
    and (name, attr) pairs read as attributes."""

    names: dict[str, str] = field(default_factory=dict[str, str])
    attrs: list[tuple[str, str]] = field(default_factory=list[tuple[str, str]])


class _Rewrite(ast.NodeTransformer):
    def __init__(self, kinds: dict[str, str], functions: frozenset[str]) -> None:
        self.kinds = kinds
        self.functions = functions
        self.saves = _Saves()

    def visit_Call(self, node: ast.Call) -> ast.AST:
        assert isinstance(node.func, ast.Name)
        module = "_H" if node.func.id in CORE_HELPERS else "_F"
        node.args = [self.visit(a) for a in node.args]
        node.keywords = [ast.keyword(k.arg, self.visit(k.value)) for k in node.keywords]
        node.func = ast.Attribute(ast.Name(module, ast.Load()), node.func.id, ast.Load())
        return node

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        assert isinstance(node.value, ast.Name)
        pair = (node.value.id, node.attr)
        if pair not in self.saves.attrs:
            self.saves.attrs.append(pair)
        return ast.Name(f"{node.value.id}_{node.attr}", ast.Load())

    def visit_Name(self, node: ast.Name) -> ast.AST:
        kind = self.kinds[node.id]
        if kind != "grad":
            self.saves.names.setdefault(node.id, kind)
        return node


def _rewrite(formula: Formula, kinds: dict[str, str], functions: frozenset[str]) -> tuple[str, _Saves]:
    assert formula.expr is not None
    rewriter = _Rewrite(kinds, functions)
    tree = rewriter.visit(ast.fix_missing_locations(_copy(formula.expr)))
    return ast.unparse(tree), rewriter.saves


def _copy(expr: ast.expr) -> ast.expr:
    copied = ast.parse(ast.unparse(expr), mode="eval").body
    return copied


def _kinds(schema: FunctionSchema) -> dict[str, str]:
    return _formula_names(schema)


def _output_index(schema: FunctionSchema, name: str) -> int:
    if name == "result":
        return 0
    return next(i for i, r in enumerate(schema.returns) if r.name == name)


# -- the pieces of one op ------------------------------------------------------------------


def _params(schema: FunctionSchema) -> str:
    parts = [a.name for a in schema.positional]
    if schema.kwarg_only:
        parts += ["*", *(a.name for a in schema.kwarg_only)]
    return ", ".join(parts)


def _call_args(schema: FunctionSchema) -> str:
    return ", ".join([a.name for a in schema.positional] + [f"{a.name}={a.name}" for a in schema.kwarg_only])


def _handle(entry: OpEntry) -> str:
    return f"_op_{entry.attr_name}"


def _slots(entry: OpEntry) -> str:
    return f"_S_{entry.attr_name}"


def _redispatch(entry: OpEntry, prefix: str) -> list[str]:
    """``prefix`` followed by the call below autograd, one argument a line if it is too long:
    the op's slot for the keys below the Autograd keys (``_bl``, computed once by the
    kernel's factory), which is what ``redispatch`` with AutogradOther on top of them calls,
    without its frame (Note [Redispatch below Autograd])."""
    args = _call_args(entry.schema).split(", ") if _call_args(entry.schema) else []
    line = f"{prefix}{_slots(entry)}.cache[_bl]({', '.join(args)})"
    if len(line) <= 120:
        return [line]
    indent = " " * (len(prefix) - len(prefix.lstrip()) + 4)
    return [f"{prefix}{_slots(entry)}.cache[_bl](", *(f"{indent}{a}," for a in args), f"{indent[:-4]})"]


def _bound(entry: OpEntry, kernel: list[str]) -> list[str]:
    """The factory the library registers for ``kernel`` (its lines, a ``def`` of the kernel's
    name): called once per key set, it returns the kernel with the bits below autograd
    bound (Note [Kernels bound to their keys] in typedops/dispatch/_kernel.py)."""
    name = f"{entry.attr_name}_autograd"
    below = ["    _bl = _BELOW[_ks]", ""] if any("_bl" in line for line in kernel) else []
    return [f"def {name}(_ks):", *below, *(f"    {line}" if line else line for line in kernel), f"    return {name}"]


def _def(name: str, params: str) -> list[str]:
    line = f"def {name}({params}):"
    if len(line) <= 120:
        return [line]
    return [f"def {name}(", *(f"    {p.strip()}," for p in params.split(", ")), "):"]


def _class_and_backward(d: Derivative, functions: frozenset[str], node_name: str) -> tuple[list[str], list[str]]:
    """The backward function and the node class whose ``apply`` it is (for an op that owns
    its formulas). A saved tensor several formulas read is unpacked once, before them."""
    schema = d.entry.schema
    kinds = _kinds(schema)
    fields: list[str] = []
    tensor_fields: list[str] = []  # dropped by release(); shapes and numbers stay
    body: list[str] = ["    grad = grads[0]", "    _e = _node.next_edges"]
    blocks: list[list[str]] = []
    results: list[str] = []
    readers: dict[str, list[str]] = {}  # saved tensor -> the conditions of the formulas reading it
    offset = "0"
    for i, formula in enumerate(d.formulas):
        is_list = _is_tensor_list(schema.argument(formula.input).type)
        width = f"_node.s_{formula.input}_count" if is_list else "1"
        if is_list:
            fields.append(f"s_{formula.input}_count")
        edges = f"_e[{offset}:{offset} + {width}]" if is_list else f"_e[{offset}]"
        needed = f"any(_x is not None for _x in {edges})" if is_list else f"{edges} is not None"
        empty = f"[None] * {width}" if is_list else "None"
        block = [f"    _g{i} = {empty}", f"    if {needed}:"]
        if formula.expr is None:
            block.append(f"        raise _not_implemented({d.entry.schema.full_name!r}, {formula.input!r})")
        else:
            text, saves = _rewrite(formula, kinds, functions)
            for name, kind in saves.names.items():
                fields.append(f"s_{name}")
                if kind in ("tensor", "output", "tensors"):
                    tensor_fields.append(f"s_{name}")
                if kind in ("tensor", "output"):
                    fields.append(f"v_{name}")
                    readers.setdefault(name, []).append(needed)
                    block.append(f"        {_unpack_line(schema, name, kind)}")
                elif kind == "tensors":
                    block.append(f"        {name} = [_unpack(_s, _node) for _s in _node.s_{name}]")
                else:
                    block.append(f"        {name} = _node.s_{name}")
            for name, attr in saves.attrs:
                fields.append(f"s_{name}_{attr}")
                block.append(f"        {name}_{attr} = _node.s_{name}_{attr}")
            block.append(f"        _g{i} = {text}")
        blocks.append(block)
        results.append(f"*_g{i}" if is_list else f"_g{i}")
        offset = f"{offset} + {width}" if offset != "0" else width
    shared = {name: conditions for name, conditions in readers.items() if len(conditions) > 1}
    # A node exists only when some input needs a gradient: read by every formula, always unpacked.
    unpacks = {_unpack_line(schema, n, kinds[n]): c for n, c in shared.items()}
    body += _guarded(unpacks, len(d.formulas))
    for block in blocks:
        body += [line for line in block if line.strip() not in unpacks]
    body.append(f"    return ({', '.join(results)}{',' if len(results) == 1 else ''})")
    fields = list(dict.fromkeys(fields))
    backward = [*_def(f"backward_{d.entry.attr_name}", "_node, grads"), *body]
    tensor_fields = list(dict.fromkeys(tensor_fields))
    # The backward function is the class's ``apply`` itself: one frame less per node run.
    slots = f"    __slots__ = ({', '.join(repr(f) for f in fields)}{',' if len(fields) == 1 else ''})"
    if len(slots) > 120:  # one field a line: generated files fit 120 columns
        slots = "    __slots__ = (\n" + "".join(f"        {f!r},\n" for f in fields) + "    )"
    cls = [
        f"class {node_name}(_Node):",
        slots,
        f"    _name = {node_name!r}",
        f"    apply = backward_{d.entry.attr_name}",
        "    __init__ = object.__init__  # the kernel sets every field: Note [Nodes made by generated kernels]",
    ]
    if tensor_fields:
        cls += [
            "",
            "    def release(self):",
            f"        self.{' = self.'.join(tensor_fields)} = None",
            "        self.released = True",
        ]
    return cls, backward


def _unpack_line(schema: FunctionSchema, name: str, kind: str) -> str:
    """The line of a backward that unpacks the saved tensor ``name`` (an input or an output)."""
    if kind == "output":  # Note [Saved outputs without a cycle] in typedops/autograd/_graph.py
        return f"{name} = _unpack_output(_node.s_{name}, _node.v_{name}, _node, {_output_index(schema, name)})"
    return f"{name} = _unpack_saved(_node.s_{name}, _node.v_{name}, _node, -1)"


def _save_lines(field: str, value: str) -> list[str]:
    """Save the tensor ``value`` as the node's ``s_field`` and its version as ``v_field``
    (Tensor._version without the property: no Storage means version 0)."""
    if not value.isidentifier():
        return [f"_t = {value}", *_save_lines(field, "_t")]
    return [
        f"_node.s_{field} = {value}",
        f"_st = {value}._storage",
        f"_node.v_{field} = 0 if _st is None else _st.version",
    ]


def _edge_lines(name: str, edge: str, optional: bool) -> list[str]:
    """``edge = edge_of(name)`` with the common cases in line: Note [Nodes made by generated
    kernels]. A tensor without an Autograd key bit has no edge; a leaf whose AccumulateGrad
    edge exists has that; a non-leaf with no autograd meta (no view, hook or retained grad)
    has ``(grad_fn, output_nr)``; anything else asks ``edge_of``."""
    present = f"{name} is not None and " if optional else ""
    return [
        f"    if {present}{name}.key_bits & _AG:",
        f"        _fn = {name}.grad_fn",
        "        if _fn is None:",
        f"            _m = {name}._autograd_meta",
        f"            if _m is None or ({edge} := _m.edge) is None:",
        f"                {edge} = _edge({name})",
        f"        elif {name}._autograd_meta is None:",
        f"            {edge} = (_fn, {name}._output_nr)",
        "        else:",
        f"            {edge} = _edge({name})",
    ]


def _node_lines(node_name: str, edges: str, outputs: int) -> list[str]:
    """Make the node and set every field of ``Node``: Note [Nodes made by generated kernels]
    (a one-output kernel sets ``out_meta`` after the op, in ``_history``)."""
    return [
        f"    _node = {node_name}()",
        f"    _node.next_edges = {edges}",
        "    _node.seq = next(_SEQUENCE)",
        "    _node.pre_hooks = _node.retains = None",
        "    _node.released = False",
        *(["    _node.out_meta = ()"] if outputs != 1 else []),
    ]


def _saves_of(d: Derivative, functions: frozenset[str]) -> list[tuple[int, _Saves]]:
    schema = (d.inplace_of or d.entry.schema)
    kinds = _kinds(schema)
    return [(i, _rewrite(f, kinds, functions)[1]) for i, f in enumerate(d.formulas) if f.expr is not None]


def _kernel(d: Derivative, functions: frozenset[str], node_name: str) -> list[str]:
    """The autograd kernel: edges, the redispatch, the node and its saved values, history."""
    entry = d.entry
    schema = entry.schema
    inplace = d.inplace_of is not None or (schema.is_mutable and not schema.is_out_fn)
    lines = _def(f"{entry.attr_name}_autograd", _params(schema))
    mutated = [a.name for a in schema.arguments if a.is_write]
    lines += [f"    _base = _check_inplace({name}, {schema.full_name!r}, True)" for name in mutated[:1]]
    lines += [f"    _check_inplace({name}, {schema.full_name!r})" for name in mutated[1:]]
    edge_names: list[str] = []
    singles = [f"_e{i}" for i, f in enumerate(d.formulas) if not _is_tensor_list(schema.argument(f.input).type)]
    if singles:
        lines.append(f"    {' = '.join(singles)} = None")
    for i, formula in enumerate(d.formulas):
        if _is_tensor_list(schema.argument(formula.input).type):
            lines.append(f"    _e{i} = tuple(_edge(_t) for _t in {formula.input})")
            edge_names.append(f"*_e{i}")
        else:
            optional = isinstance(schema.argument(formula.input).type, OptionalType)
            lines += _edge_lines(formula.input, f"_e{i}", optional)
            edge_names.append(f"_e{i}")
    checks = [f"_e{i} is None" if not n.startswith("*") else f"not any(_e{i})" for i, n in enumerate(edge_names)]
    lines += [f"    if {' and '.join(checks)}:", *_redispatch(entry, "        return ")]
    lines += _node_lines(node_name, f"({', '.join(edge_names)}{',' if len(edge_names) == 1 else ''})", len(schema.returns))
    # Each saved value once, under the edges of the formulas that read it (Note [What a
    # node saves]): a value every formula reads is saved unconditionally, as the kernel
    # only gets here when some input needs a gradient.
    pre_needs: dict[str, list[str]] = {}
    post_needs: dict[str, list[str]] = {}
    for i, saves in _saves_of(d, functions):
        needed = f"_e{i} is not None" if not edge_names[i].startswith("*") else f"any(_e{i})"
        for name, kind in saves.names.items():
            if kind == "tensor":
                value = f"_original({name})" if inplace and name in mutated else name
                if isinstance(schema.argument(name).type, OptionalType):
                    line = f"_node.s_{name} = _t = {value}\n_node.v_{name} = 0 if _t is None or _t._storage is None else _t._storage.version"
                else:
                    line = "\n".join(_save_lines(name, value))
                pre_needs.setdefault(line, []).append(needed)
            elif kind == "tensors":
                pre_needs.setdefault(f"_node.s_{name} = [_save(_t) for _t in {name}]", []).append(needed)
            elif kind == "output":
                index = _output_index(schema, name)
                out = "_result" if len(schema.returns) == 1 else f"_result[{index}]"
                # the result without its history: Note [Saved outputs without a cycle]
                post_needs.setdefault("\n".join(_save_lines(name, f"_alias({out})")), []).append(needed)
            else:
                pre_needs.setdefault(f"_node.s_{name} = {name}", []).append(needed)
        for name, attr in saves.attrs:
            if kinds_of(d)[name] == "tensors":
                line = f"_node.s_{name}_{attr} = tuple(_t.{attr} for _t in {name})"
            else:
                line = f"_node.s_{name}_{attr} = {name}.{_SLOT.get(attr, attr)}"
            pre_needs.setdefault(line, []).append(needed)
    before = _guarded(pre_needs, len(d.formulas))
    after = _guarded(post_needs, len(d.formulas))
    for i, formula in enumerate(d.formulas):
        if _is_tensor_list(schema.argument(formula.input).type):
            before.append(f"    _node.s_{formula.input}_count = len({formula.input})")
    lines += before
    lines += _redispatch(entry, "    _result = ")
    lines += _dtype_check(schema)
    lines += _history(d, schema)
    if mutated:
        lines += ["    if _base is not None:", f"        _rebase_view({mutated[0]}, _base)"]
    lines += after
    lines.append("    return _result")
    return _bound(entry, lines)


# What a kernel saves for ``x.shape``/``x.dtype`` is read from the tensor's slots, without the property.
_SLOT = {"shape": "_shape", "dtype": "_dtype"}


# Note [Outputs of a chosen dtype]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# Only floating point and complex tensors have gradients. An op's output has such a dtype
# when its inputs do, except where a ScalarType argument chooses the output's dtype
# (``_to_copy``, ``sum(dtype=)``): only those kernels check it, after the op, so the
# recording path of every other op pays nothing. As in PyTorch, a cast (``_CASTS``) to an
# integer or bool dtype quietly records nothing (``x.to(int64)`` does not require grad);
# any other op raises ``undifferentiable_dtype`` (PyTorch: "Autograd not support dtype").
# The boxed fallback (autograd/_record.py) records only differentiable outputs too.
_CASTS: Final = frozenset({"_to_copy"})


def _dtype_check(schema: FunctionSchema) -> list[str]:
    """The check of a one-output kernel whose op chooses its output's dtype: Note [Outputs
    of a chosen dtype]."""
    if len(schema.returns) != 1 or not any("ScalarType" in str(a.type) for a in schema.arguments):
        return []
    if schema.name in _CASTS:
        return ["    if _result._dtype not in _DIFF_DTYPES:", "        return _result"]
    return ["    if _result._dtype not in _DIFF_DTYPES:", f"        raise _undifferentiable_dtype({schema.full_name!r}, _result._dtype)"]


def _guarded(needs: dict[str, list[str]], formulas: int) -> list[str]:
    """The save lines, consecutive lines under one condition grouped in one ``if``."""
    lines: list[str] = []
    last: str | None = None
    for line, conditions in needs.items():
        unique = list(dict.fromkeys(conditions))
        condition = "" if len(unique) == formulas else " or ".join(unique)
        if condition != last:
            if condition:
                lines.append(f"    if {condition}:")
            last = condition
        lines += [f"        {part}" if condition else f"    {part}" for part in line.split("\n")]
    return lines


def kinds_of(d: Derivative) -> dict[str, str]:
    return _kinds(d.inplace_of or d.entry.schema)


def _history(d: Derivative, schema: FunctionSchema) -> list[str]:
    if len(schema.returns) == 1:
        # set_history(_result, _node) in line: one frame less per recorded op.
        ret = schema.returns[0]
        lines: list[str] = [
            "    _result.key_bits = _WITH_AG[_result.key_bits]",
            "    _result.grad_fn = _node",
            # A result that aliases an argument may be another node's output; a new
            # tensor has the class default 0.
            *(["    if _result._output_nr:", "        _result._output_nr = 0"] if ret.alias is not None else []),
            "    _node.out_meta = ((_result._shape, _result._dtype, _result._device),)",
        ]
        if ret.alias is not None and not ret.alias.is_write:
            first = schema.positional[0].name
            lines.append(f"    _mark_view(_result, {first})")
        return lines
    lines = []
    for i, differentiable in enumerate(d.differentiable_outputs):
        if differentiable:
            lines.append(f"    _set_history(_result[{i}], _node, {i})")
        else:
            lines.append(f"    _add_output(_node, _result[{i}])")
    return lines


def _passthrough(entry: OpEntry) -> list[str]:
    """The kernel of an op none of whose outputs is differentiable: redispatch only."""
    return _bound(entry, [*_def(f"{entry.attr_name}_autograd", _params(entry.schema)), *_redispatch(entry, "    return ")])


def _out_kernel(entry: OpEntry) -> list[str]:
    return _bound(entry, [
        *_def(f"{entry.attr_name}_autograd", _params(entry.schema)),
        f"    raise _out_not_differentiable({entry.schema.full_name!r})",
    ])


def autograd_module(
    derivatives: list[Derivative],
    entries: list[OpEntry],
    functions: frozenset[str],
    *,
    source_label: str,
    package: str,
    helpers: str,
) -> str:
    """The generated ``autograd.py`` of a library."""
    names: dict[str, str] = {}  # functional op -> node class: MulBackward0, SumBackward1...
    counts: dict[str, int] = {}
    for d in derivatives:
        if d.inplace_of is None:
            names[d.entry.schema.full_name] = f"{d.node_stem}{counts.get(d.node_stem, 0)}"
            counts[d.node_stem] = counts.get(d.node_stem, 0) + 1
    covered = {d.entry.schema.full_name for d in derivatives}
    out_ops = [e for e in entries if e.schema.is_out_fn and not _composite(e)]
    blocks: list[list[str]] = []
    registered: list[OpEntry] = []
    for d in derivatives:
        if not any(d.differentiable_outputs) or not d.formulas:
            blocks.append(_passthrough(d.entry))
        elif d.inplace_of is None:
            name = names[d.entry.schema.full_name]
            cls, backward = _class_and_backward(d, functions, name)
            blocks += [backward, cls, _kernel(d, functions, name)]
        else:
            blocks.append(_kernel(d, functions, names[d.inplace_of.full_name]))
        registered.append(d.entry)
    for entry in out_ops:
        if entry.schema.full_name not in covered:
            blocks.append(_out_kernel(entry))
            registered.append(entry)
    handles = [f"    LIBRARY as _LIBRARY,"] + [f"    {e.attr_name} as {_handle(e)}," for e in registered]
    header = [
        f"# {HEADER} from {source_label} -- do not edit.",
        "# the autograd kernels and backward nodes of the library (typedops/codegen/_derivatives.py);",
        "# importing it registers each kernel for the Autograd key. Regenerate with `make codegen`.",
        "# fmt: off",
        "from typedops.runtime import (",
        "    AUTOGRAD_BITS as _AG,",
        "    WITH_AUTOGRAD as _WITH_AG,",
        "    BELOW_AUTOGRAD as _BELOW,",
        "    NODE_SEQUENCE as _SEQUENCE,",
        "    Node as _Node,",
        "    add_output_meta as _add_output,",
        "    check_inplace as _check_inplace,",
        "    edge_of as _edge,",
        "    mark_view as _mark_view,",
        "    rebase_view as _rebase_view,",
        "    not_implemented as _not_implemented,",
        "    out_not_differentiable as _out_not_differentiable,",
        "    DIFFERENTIABLE_DTYPES as _DIFF_DTYPES,",
        "    undifferentiable_dtype as _undifferentiable_dtype,",
        "    register_autograd_kernels as _register_autograd_kernels,",
        "    save as _save,",
        "    set_history as _set_history,",
        "    unboxed_slots as _slots,",
        "    unpack as _unpack,",
        "    unpack_saved as _unpack_saved,",
        "    unpack_output as _unpack_output,",
        "    alias_of as _alias,",
        ")",
        f"import {package} as _F",
        f"import {helpers} as _H",
        f"from {helpers} import original as _original",
        f"from {package} import (",
        *handles,
        ")",
        "",
        "# Each op's unboxed slots, indexed with the keys below autograd (Note [Redispatch below Autograd])",
        *[f"{_slots(e)} = _slots({_handle(e)})" for e in registered if not _raises_only(e, derivatives)],
    ]
    table = ["_register_autograd_kernels(_LIBRARY, ("]
    table += [f"    ({_handle(e)}, {e.attr_name}_autograd)," for e in registered]
    table.append("))")
    parts = ["\n".join(header)] + ["\n".join(b) for b in blocks] + ["\n".join(table)]
    return "\n\n\n".join(parts) + "\n"


def _raises_only(entry: OpEntry, derivatives: list[Derivative]) -> bool:
    """Whether ``entry``'s kernel only raises (an out= op), so it never continues the call."""
    return entry.schema.full_name not in {d.entry.schema.full_name for d in derivatives}


def _composite(entry: OpEntry) -> bool:
    return any(k.key.name == "CompositeImplicitAutograd" for k in entry.kernels)
