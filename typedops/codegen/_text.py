"""Text shared by every generated file: the ``@generated`` header and type annotations."""

from __future__ import annotations

import textwrap
from collections.abc import Iterable
from typing import Final, NamedTuple

from ..schema import Argument, BaseType, FunctionSchema, ListType, OptionalType, Type
from ..boxing import python_name
from ._layout import WIDTH, Group, comment_text, layout, packed
from ._model import HEADER, Options

__all__ = [
    "header", "annotation", "parameters", "returns_annotation", "named_result", "RETURN_TYPES_IMPORT", "STUB_IMPORTS",
    "Section", "module_text", "runtime", "RUNTIME", "all_names", "stub_def", "untyped_base", "stub_order",
]  # fmt: skip

STUB_IMPORTS: Final = (
    "from collections.abc import Sequence",
    "from typing import overload",
    "from typedops import Device, DType, Layout, MemoryFormat, Scalar, SymInt, Tensor",
    "from typedops import ScalarType  # pyright: ignore[reportUnusedImport] -- for ScalarType results, if any",
    "from typedops import Generator  # pyright: ignore[reportUnusedImport] -- for Generator? arguments, if any",
    "from typedops.tensor import Storage as _Storage  # pyright: ignore[reportUnusedImport] -- if any",
)


class Section(NamedTuple):
    """One part of a generated module: the import statements it needs (a statement may
    span lines) and its own lines."""

    imports: list[str]
    body: list[str]


RUNTIME: Final = "typedops.runtime"


def runtime(*names: str) -> list[str]:
    """Import statements of ``names`` (``"choose as _choose"``) from the runtime module;
    ``module_text`` merges them into one statement."""
    return [f"from {RUNTIME} import {name}" for name in names]


def module_text(options: Options, what: str, sections: list[Section]) -> str:
    """A generated module: the header, every section's import statements (each once, in
    order of first appearance; the runtime module's names in one statement), then the
    sections' bodies in order."""
    imports: list[str] = []
    names: list[str] = []
    prefix = f"from {RUNTIME} import "
    for section in sections:
        for statement in section.imports:
            if statement.startswith(prefix):
                name = statement[len(prefix):]
                if name not in names:
                    names.append(name)
            elif statement not in imports:
                imports.append(statement)
    if names:
        imports.insert(0, f"{prefix}(\n" + "".join(f"    {name},\n" for name in names) + ")")
    lines = header(options, what) + imports
    for section in sections:
        lines += ["", "", *section.body]
    lines.append("")
    return "\n".join(lines)


def header(options: Options, what: str) -> list[str]:
    """The first lines of a generated file (no dates or paths: output is deterministic),
    each at most ``WIDTH``: ``what`` wrapped, the command broken before its options."""
    described = textwrap.wrap(what, WIDTH - 2, break_long_words=False, break_on_hyphens=False)
    return [
        f"# {HEADER} from {comment_text(options.source_label)} -- do not edit.",
        *(f"# {line}" for line in described),
        *_command_lines(f"Regenerate with: {comment_text(options.command)}"),
        "# fmt: off",
    ]


def _command_lines(text: str) -> list[str]:
    """``# text``, broken before `` --option``s with shell line continuations where too long."""
    lines = ["#"]
    for piece in text.replace(" --", "\n--").split("\n"):
        if lines[-1] != "#" and len(lines[-1]) + len(piece) + 3 > WIDTH:
            lines[-1] += " \\"
            lines.append("#    ")
        lines[-1] += f" {piece}"
    return lines


def stub_def(indent: str, name: str, params: list[str], returns: str) -> list[str]:
    """A stub's ``def name(params) -> returns: ...`` at ``indent``: on one line if it fits
    ``WIDTH``, else one parameter a line."""
    return layout(Group(f"def {name}(", tuple(params)), indent, suffix=f" -> {returns}: ...")


def all_names(names: Iterable[str]) -> list[str]:
    """A generated module's ``__all__`` assignment, on lines at most ``WIDTH``."""
    items = [repr(name) for name in names]
    one_line = f"__all__ = [{', '.join(items)}]"
    return [one_line] if len(one_line) <= WIDTH else ["__all__ = [", *packed(items), "]"]


def annotation(type_: Type, *, argument: bool, prefix: str = "") -> str:
    """The annotation text for ``type_``: what the runtime accepts (Note [Stubs type what
    runs]).

    ``prefix`` qualifies typedops' names (``_t.Tensor``) and builtins (``_builtins.int``)
    where a class body could shadow them.
    """
    if isinstance(type_, OptionalType):
        return f"{annotation(type_.elem, argument=argument, prefix=prefix)} | None"
    if isinstance(type_, ListType):
        inner = annotation(type_.elem, argument=argument, prefix=prefix)
        if not argument:
            return f"list[{inner}]"
        sequence = f"{prefix and '_'}Sequence[{inner}]"
        if type_.size is not None and isinstance(type_.elem, BaseType) and type_.elem.name in _INTS:
            return f"{inner} | {sequence}"  # a lone int stands for a list of `size` of it
        return sequence
    # Dict, tuple, class types...: yaml validation refuses them, but a schema that stubgen
    # reads may have them, and the runtime does not check them.
    name = _AS_BUILTIN.get(type_.name, type_.name) if isinstance(type_, BaseType) else "object"
    if name == "Storage":
        return "_Storage"  # both stubs import typedops.tensor.Storage under this name
    if name in _BUILTINS:
        # In a class body an overload attribute may be named 'int' (transpose.int): with a
        # prefix, builtins are qualified too (the stub imports builtins as _builtins).
        return f"_builtins.{name}" if prefix else name
    if name == "Device" and argument:
        return f"{prefix}Device | {'_builtins.' if prefix else ''}str"  # Device('meta') or 'meta'
    if name == "ScalarType" and argument:
        return f"{prefix}DType"  # a ScalarType or float, int, bool, complex (Note [Python types as dtypes])
    return f"{prefix}{name}"


# Note [Stubs type what runs]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~
# A stub's parameter accepts what the runtime's argument check (``boxing.mismatch``)
# accepts, as PyTorch's Python bindings do: any sequence for a list, a lone int for a
# sized int list (``int[1]? dim``: ``x.sum(0)``), a device's name for a ``Device``, one of
# Python's number types for a ``ScalarType`` (``DType``: Note [Python types as dtypes] in
# vocabulary/_dtypes.py), and
# anything for the types the runtime does not check (Stream, QScheme, dicts, tuples,
# classes). ``Generator`` and ``Storage`` are typedops classes (a Storage typed as
# 'object' would shadow the Tensor overloads of PyTorch's ``set_``).
# Results are what kernels return: ``list`` for lists.
_BUILTINS: Final = frozenset({"int", "float", "bool", "str", "complex", "object"})
_INTS: Final = frozenset({"int", "SymInt"})
# Schema types with no typedops class of their name, typed as what a call passes.
_AS_BUILTIN: Final = {
    "DeviceIndex": "int", "SymBool": "bool", "SymFloat": "float", "Dimname": "str", "Any": "object",
    "Stream": "object", "QScheme": "object", "Capsule": "object", "AnyClassType": "object", "AnyEnumType": "object",
}  # fmt: skip
_TYPED_BASES: Final = frozenset({*(_BUILTINS - {"object"}), "DeviceIndex", "SymBool", "SymFloat", "Stream", "QScheme",
                                 "Tensor", "SymInt", "Scalar", "ScalarType", "Layout", "Device", "MemoryFormat",
                                 "Generator", "Storage"})  # fmt: skip


def untyped_base(type_: Type) -> Type | None:
    """The part of ``type_`` a yaml's stubs cannot annotate (a type variable, ``Dict``,
    ``Future``, ``Any``...), or None when ``annotation`` can write all of it."""
    if isinstance(type_, (OptionalType, ListType)):
        return untyped_base(type_.elem)
    if isinstance(type_, BaseType) and type_.name in _TYPED_BASES:
        return None
    return type_


def parameters(schema: FunctionSchema, *, skip_self: bool = False, prefix: str = "") -> list[str]:
    """Stub parameter texts (``name: T = ...``), with ``*`` before keyword-only ones.

    ``skip_self`` leaves out ``self`` wherever it is (a method's receiver); the others keep
    schema order. A positional default followed by a required positional argument is not
    written (Python has no such signature; the call must pass it)."""
    params: list[str] = []
    positional = [a for a in schema.positional if not (skip_self and a.name == "self")]
    required_after = [any(not b.has_default for b in positional[i + 1 :]) for i in range(len(positional))]
    for arg, later_required in zip(positional, required_after):
        default = " = ..." if arg.has_default and not later_required else ""
        params.append(f"{python_name(arg.name)}: {annotation(arg.type, argument=True, prefix=prefix)}{default}")
    if schema.kwarg_only:
        params.append("*")
        for arg in schema.kwarg_only:
            default = " = ..." if arg.has_default else ""
            params.append(f"{python_name(arg.name)}: {annotation(arg.type, argument=True, prefix=prefix)}{default}")
    return params


def returns_annotation(schema: FunctionSchema, prefix: str = "", *, named: bool = False) -> str:
    """The return type of a stub; with ``named``, a function's or method's (Note [Named
    results] in typedops/core/return_types.py: its class where the op has one)."""
    if not schema.returns:
        return "None"
    if named and named_result(schema) is not None:
        return f"{RETURN_TYPES_ALIAS}.{schema.name}"
    texts = [annotation(r.type, argument=False, prefix=prefix) for r in schema.returns]
    return texts[0] if len(texts) == 1 else f"tuple[{', '.join(texts)}]"


# Note [Named results] in typedops/core/return_types.py: the core library's functions and
# methods return ``return_types.<op name>`` for a schema naming each of its returns.
RETURN_TYPES_ALIAS: Final = "_return_types"
RETURN_TYPES_IMPORT: Final = f"import typedops.core.return_types as {RETURN_TYPES_ALIAS}"


def named_result(schema: FunctionSchema) -> str | None:
    """The class of ``typedops.core.return_types`` the functional API and the methods of
    ``schema`` return (its op's name), or None: a core op with several returns, all named."""
    if schema.namespace != "core" or len(schema.returns) < 2 or not all(r.name for r in schema.returns):
        return None
    return schema.name


# Note [Overloads shadowed by defaults]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# A type checker picks the first ``@overload`` a call fits, so an overload is dead when an
# earlier one takes every call it takes: PyTorch's ``all.dims(self, int[1]? dim=None, bool
# keepdim=False)`` takes ``all(x)`` before ``all(self)`` can (mypy: overload-cannot-match).
# ``stub_order`` moves each overload before any overload that *covers* it -- takes each of
# its parameters (same name, kind, place and annotation; defaulted where it is) and only
# defaulted ones besides -- keeping yaml order otherwise. Covering is transitive and needs
# strictly more parameters, so the moves end. The runtime choosers do not read stubs.
def _stub_signature(schema: FunctionSchema, skip_self: bool) -> tuple[list[tuple[str, str, bool]], ...]:
    def params(args: Iterable[Argument]) -> list[tuple[str, str, bool]]:
        return [(python_name(a.name), annotation(a.type, argument=True), a.has_default) for a in args
                if not (skip_self and a.name == "self")]  # fmt: skip

    return params(schema.positional), params(schema.kwarg_only)


def _covers(wide: tuple[list[tuple[str, str, bool]], ...], narrow: tuple[list[tuple[str, str, bool]], ...]) -> bool:
    """Whether every call the stub ``narrow`` takes, ``wide`` takes too (with more parameters)."""
    (wide_pos, wide_kw), (narrow_pos, narrow_kw) = wide, narrow
    if len(wide_pos) + len(wide_kw) <= len(narrow_pos) + len(narrow_kw) or len(wide_pos) < len(narrow_pos):
        return False
    fits = all(w[:2] == n[:2] and (w[2] or not n[2]) for w, n in zip(wide_pos, narrow_pos))
    wide_by_name = {p[0]: p for p in wide_kw}
    fits = fits and all(p[0] in wide_by_name and wide_by_name[p[0]][1] == p[1] and (wide_by_name[p[0]][2] or not p[2])
                        for p in narrow_kw)  # fmt: skip
    named = {p[0] for p in narrow_kw}
    return fits and all(p[2] for p in wide_pos[len(narrow_pos):]) and all(p[2] for p in wide_kw if p[0] not in named)


def stub_order(schemas: list[FunctionSchema], *, skip_self: bool = False) -> list[int]:
    """Indices of ``schemas`` in the order their overload stubs are written (Note [Overloads
    shadowed by defaults]); ``skip_self`` for methods, whose receiver is not a parameter."""
    signatures = [_stub_signature(s, skip_self) for s in schemas]
    order = list(range(len(schemas)))
    moved = True
    while moved:
        moved = False
        for i, j in ((i, j) for i in range(len(order)) for j in range(i + 1, len(order))):
            if _covers(signatures[order[i]], signatures[order[j]]):
                order.insert(i, order.pop(j))
                moved = True
                break
    return order
