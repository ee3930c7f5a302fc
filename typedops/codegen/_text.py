"""Text shared by every generated file: the ``@generated`` header and type annotations."""

from __future__ import annotations

import textwrap
from collections.abc import Iterable
from typing import Final, NamedTuple

from ..schema import BaseType, FunctionSchema, ListType, OptionalType, Type
from ..boxing import python_name
from ._layout import WIDTH, Group, comment_text, layout, packed
from ._model import HEADER, Options

__all__ = [
    "header", "annotation", "parameters", "returns_annotation", "STUB_IMPORTS", "Section", "module_text",
    "runtime", "RUNTIME", "all_names", "stub_def",
]  # fmt: skip

STUB_IMPORTS: Final = (
    "from collections.abc import Sequence",
    "from typing import overload",
    "from typedops import Device, Layout, MemoryFormat, Scalar, ScalarType, SymInt, Tensor",
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
    """The annotation text for ``type_``; arguments accept any sequence for a list.

    ``prefix`` qualifies typedops' names (``_t.Tensor``) and builtins (``_builtins.int``)
    where a class body could shadow them.
    """
    if isinstance(type_, OptionalType):
        return f"{annotation(type_.elem, argument=argument, prefix=prefix)} | None"
    if isinstance(type_, ListType):
        inner = annotation(type_.elem, argument=argument, prefix=prefix)
        return f"{prefix and '_'}Sequence[{inner}]" if argument else f"list[{inner}]"
    assert isinstance(type_, BaseType), f"validated types have Python forms, not {type_}"
    if type_.name in _BUILTINS:
        # In a class body an overload attribute may be named 'int' (transpose.int): with a
        # prefix, builtins are qualified too (the stub imports builtins as _builtins).
        return f"_builtins.{type_.name}" if prefix else type_.name
    return f"{prefix}{type_.name}"


_BUILTINS: Final = frozenset({"int", "float", "bool", "str", "complex"})


def parameters(schema: FunctionSchema, *, skip_self: bool = False, prefix: str = "") -> list[str]:
    """Stub parameter texts (``name: T = ...``), with ``*`` before keyword-only ones.

    ``skip_self`` leaves out ``self`` wherever it is (a method's receiver); the others keep
    schema order."""
    params: list[str] = []
    for arg in schema.positional:
        if skip_self and arg.name == "self":
            continue
        default = " = ..." if arg.has_default else ""
        params.append(f"{python_name(arg.name)}: {annotation(arg.type, argument=True, prefix=prefix)}{default}")
    if schema.kwarg_only:
        params.append("*")
        for arg in schema.kwarg_only:
            default = " = ..." if arg.has_default else ""
            params.append(f"{python_name(arg.name)}: {annotation(arg.type, argument=True, prefix=prefix)}{default}")
    return params


def returns_annotation(schema: FunctionSchema, prefix: str = "") -> str:
    if not schema.returns:
        return "None"
    texts = [annotation(r.type, argument=False, prefix=prefix) for r in schema.returns]
    return texts[0] if len(texts) == 1 else f"tuple[{', '.join(texts)}]"
