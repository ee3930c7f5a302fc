"""The typing of ``typedops.ops.<ns>`` and of the Tensor methods a library installs.

Note [Stubs for ops and methods]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
``typedops.ops`` and ``typedops.Tensor`` are runtime objects whose operators appear by
registration, so a type checker cannot see them. The generator describes them in stubs:
one class per op overload (an ``OperatorHandle`` whose ``__call__`` has the schema's
signature), one per op name (a packet with an attribute per overload, ``overloads()`` and
an ``@overload``-ed ``__call__``), a ``Namespace`` class with an attribute per op name,
and the methods. The packet and namespace classes do not derive from the runtime
``OpOverloadPacket``/``OpNamespace``, whose ``__getattr__`` would type every misspelt
name: ``ops.core.nosuchop`` is a static error.

The bundled core library's stubs ship inside the package, beside the objects they type
(Note [Typing what core installs]): ``typedops/dispatch/_ops_typing.pyi`` declares the
type of ``typedops.ops`` (its ``core`` namespace) and ``typedops/tensor/_methods.pyi`` the
core Tensor methods. Each has a real module twin (``_ops_typing.py``, ``_methods.py``)
that declares the same classes without the generated members, so a checker that misses a
stub sees fewer members, never ``Any``.

A project's own namespaces and methods reach the same two classes through a hook: ``Ops``
derives from ``typedops_namespaces.Namespaces`` and ``TensorMethods`` from
``typedops_namespaces.TensorMethods``, a real top-level package typedops ships with both
classes empty. ``typedops codegen --stubs DIR`` and ``typedops stubgen --out DIR`` write
``DIR/typedops_namespaces.pyi``: one section per namespace (its classes, prefixed with
the namespace, and its library's methods), then ``Namespaces`` with an attribute per
section and ``TensorMethods`` deriving from each section's. Each run replaces its own
namespaces' sections and keeps the others. The file is self-contained -- it imports only
typedops -- so no class there derives from a module that could be missing. With DIR on
the checker's stub path (pyright: ``typings`` by default; mypy: ``mypy_path``) it replaces
the shipped package: ``typedops.ops.myops.scale(...)`` and ``x.mymethod()`` are checked,
and ``ops.myops.misspelt`` is an error. Namespaces without stubs stay dynamic through
``Ops.__getattr__``. A project method named like a core method is typed as the core one
(the core class comes first).

Note [Typing what core installs]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
The core library adds operators to objects of lower layers: a namespace to
``typedops.ops`` (dispatch) and methods to ``Tensor`` (tensor). A checker reads a class's
members where the class is declared, so their types live there too, generated from the
core yaml by ``make codegen`` (``typedops codegen ... --bundled``): ``Tensor`` derives
from ``TensorMethods`` (of ``typedops/tensor/_methods``) and ``ops`` is declared an
``Ops`` (of ``typedops/dispatch/_ops_typing``), both under ``TYPE_CHECKING`` only, so
nothing changes at run time. The stubs name only types of their own layer and below.
"""

from __future__ import annotations

import keyword
from pathlib import Path
from typing import Final

from ..boxing import python_name
from ..schema import FunctionSchema, ListType
from ._api import group
from ._model import HEADER, OpEntry, Options, Variant, sizes_as_varargs
from ._operators import operator_stub_lines, operators
from ._text import RETURN_TYPES_IMPORT, annotation, header, parameters, returns_annotation, stub_def, stub_order

__all__ = ["bundled_stubs", "BUNDLED_STUBS", "namespace_section", "project_stub", "read_sections", "INDEX_FILE",
           "methods_of", "CONVERSION_METHODS"]

_P = "_t."
_IMPORTS: Final = (
    "import builtins as _builtins",
    "from collections.abc import Sequence as _Sequence",
    "from typing import overload",
    "",
    "import typedops as _t",
    "from typedops.tensor import Storage as _Storage  # pyright: ignore[reportUnusedImport] -- if any",
)
# Where the bundled library's stubs go, relative to the typedops package.
BUNDLED_STUBS: Final = {"ops": Path("dispatch") / "_ops_typing.pyi", "methods": Path("tensor") / "_methods.pyi",
                        "names": Path("_core_methods.py")}  # fmt: skip
HOOK: Final = "typedops_namespaces"
INDEX_FILE: Final = f"{HOOK}.pyi"
_SECTION: Final = "# -- typedops.ops."
_END: Final = "# -- typedops.ops and Tensor, with the namespaces above"


def _def(name: str, schema: FunctionSchema, first: str, *, method: bool = False, named: bool = False) -> list[str]:
    """A class body's ``def name(first, params) -> R: ...``, within 120 columns; ``named``:
    R is the op's named result class where it has one (Note [Named results] in
    typedops/core/return_types.py)."""
    names = {python_name(a.name) for a in schema.arguments if not (method and a.name == "self")}
    while first in names:  # an argument named like the receiver ('_h')
        first += "_"
    params = parameters(schema, skip_self=method, prefix=_P)
    return stub_def("    ", name, [first, *params], returns_annotation(schema, _P, named=named))


def _varargs_def(name: str, schema: FunctionSchema) -> list[str]:
    """The overload of a method taking its int list's items one by one (``*size: int``)."""
    params = parameters(schema, skip_self=True, prefix=_P)
    list_type = schema.positional[1].type
    assert isinstance(list_type, ListType)
    params[0] = f"*{python_name(schema.positional[1].name)}: {annotation(list_type.elem, argument=True, prefix=_P)}"
    if "*" in params:
        params.remove("*")  # the keyword-only ones follow *size already
    return stub_def("    ", name, ["self", *params], returns_annotation(schema, _P))


def _class_name(schema: FunctionSchema, tag: str) -> str:
    return f"{tag}_op_{schema.name}__{schema.overload_name or 'default'}"


def _reachable(schema: FunctionSchema) -> bool:
    """Whether ``ops.<ns>.<name>.<overload>`` can name the op: not a Python keyword, and
    not a dunder, which typedops.ops refuses as a protocol probe."""
    return not any(keyword.iskeyword(n) or n.startswith("__") for n in (schema.name, schema.overload_name))


def namespace_lines(schemas: list[FunctionSchema], tag: str = "") -> list[str]:
    """The handle, packet and namespace classes of one namespace's ops; ``tag`` (``_myops``)
    prefixes their names where several namespaces share a file."""
    lines: list[str] = []
    by_name: dict[str, list[FunctionSchema]] = {}
    for schema in filter(_reachable, schemas):
        by_name.setdefault(schema.name, []).append(schema)
        lines += ["", f"class {_class_name(schema, tag)}(_Handle):"]
        lines += _def("__call__", schema, "_h")
    for name, members in by_name.items():
        lines += ["", f"class {tag}_packet_{name}:"]
        lines += [f"    {s.overload_name or 'default'}: {_class_name(s, tag)}" for s in members]
        lines.append("    def overloads(self) -> list[_builtins.str]: ...")
        for index in stub_order(members):
            if len(members) > 1:
                lines.append("    @overload")
            lines += _def("__call__", members[index], "_p")
    lines += ["", f"class {tag}_Namespace:" if tag else "class Namespace:"]
    lines += [f"    {name}: {tag}_packet_{name}" for name in by_name] or ["    pass"]
    return lines


def method_lines(methods: dict[str, list[FunctionSchema]], extra: list[str] | None = None) -> list[str]:
    """The body of a ``TensorMethods`` class: one ``def`` (or ``@overload``s) per method,
    then ``extra`` lines (the core library's operators)."""
    lines: list[str] = []
    for name, members in methods.items():
        sizes = sizes_as_varargs(members[0]) if len(members) == 1 else None
        for index in stub_order(members, skip_self=True):
            if len(members) > 1 or sizes:
                lines.append("    @overload")
            lines += _def(name, members[index], "self", method=True, named=len(members) > 1)
        if sizes:  # x.view(2, 3) too: Note [Sizes as varargs] in _api.py
            lines += ["    @overload", *_varargs_def(name, members[0])]
    lines += extra or []
    return lines or ["    pass"]


# The tensor layer's ``x.float()``, ``x.long()``... (Note [Dtype conversion methods] in
# tensor/_conversions.py): typed with the core library's methods, which they call (``to``).
CONVERSION_METHODS: Final = (
    "float", "double", "half", "bfloat16", "long", "int", "short", "char", "byte", "bool", "cfloat", "cdouble",
)
_CONVERSION_STUBS: Final = [
    f"    def {name}(self, memory_format: _t.MemoryFormat | None = ...) -> _t.Tensor: ..." for name in CONVERSION_METHODS
]


def methods_of(entries: list[OpEntry]) -> dict[str, list[FunctionSchema]]:
    return {name: [e.schema for e in members] for name, members in group(entries, Variant.method).items()}


def namespace_section(namespace: str, source: str, schemas: list[FunctionSchema],
                      methods: dict[str, list[FunctionSchema]]) -> str:
    """One namespace's section of ``typedops_namespaces.pyi``; ``source`` says what wrote it."""
    tag = f"_{namespace}"
    lines = [f"{_SECTION}{namespace}: {source}", *namespace_lines(schemas, tag)]
    lines += ["", f"class {tag}_TensorMethods:", *method_lines(methods)]
    return "\n".join(lines)


def read_sections(path: Path) -> dict[str, str]:
    """The namespace sections of an existing ``typedops_namespaces.pyi`` (none if absent)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    sections: dict[str, list[str]] = {}
    name: str | None = None
    for line in text.split("\n"):
        if line.startswith(_END):
            break
        if line.startswith(_SECTION):
            name = line[len(_SECTION) :].partition(":")[0]
            sections[name] = [line]
        elif name is not None:
            sections[name].append(line)
    return {name: "\n".join(lines).rstrip("\n") for name, lines in sections.items()}


def project_stub(sections: dict[str, str]) -> str:
    """``typedops_namespaces.pyi`` from its namespace sections (see Note [Stubs for ops and
    methods])."""
    names = sorted(sections)
    lines = [
        f"# {HEADER} (codegen --stubs, stubgen) -- do not edit.",
        "# the op namespaces and Tensor methods of a project, read by type checkers in place of typedops_namespaces",
        "# Each section below says what wrote it; each run replaces its own namespaces' sections.",
        "# fmt: off",
        *_IMPORTS,
        "from typedops.dispatch import OperatorHandle as _Handle",
    ]
    for name in names:
        lines += ["", "", sections[name]]
    lines += ["", "", _END, "", "class Namespaces:"]
    lines += [f"    {name}: _{name}_Namespace" for name in names] or ["    pass"]
    bases = ", ".join(f"_{name}_TensorMethods" for name in names)
    lines += ["", f"class TensorMethods({bases}):" if bases else "class TensorMethods:", "    pass", ""]
    return "\n".join(lines)


def bundled_stubs(entries: list[OpEntry], options: Options, package: Path) -> dict[Path, str]:
    """The stubs of the bundled library, by path under ``package`` (Note [Typing what
    core installs]): the type of ``typedops.ops`` and the core Tensor methods."""
    ns = options.namespace
    ops = header(options, f"the type of typedops.ops, with typedops.ops.{ns} (Note [Typing what core installs])")
    ops += [*_IMPORTS, f"from {HOOK} import Namespaces as _Namespaces", "",
            "from ._handle import OperatorHandle as _Handle", "from ._ops import OpNamespace as _OpNamespace", ""]  # fmt: skip
    ops += namespace_lines([e.schema for e in entries if e.defines])
    ops += ["", "class Ops(_Namespaces):", f"    {ns}: Namespace",
            "    def __getattr__(self, namespace: str) -> _OpNamespace: ...", ""]  # fmt: skip
    methods = header(options, "the Tensor methods of the core library (Note [Typing what core installs])")
    methods += [*_IMPORTS, f"from {HOOK} import TensorMethods as _ProjectMethods", RETURN_TYPES_IMPORT, "", "",
                "class TensorMethods(_ProjectMethods):",
                *method_lines(methods_of(entries), [*operator_stub_lines(operators(entries, ns)), *_CONVERSION_STUBS]),
                ""]  # fmt: skip
    names = header(options, "the names of the Tensor methods and operators the core library installs")
    installed = [*methods_of(entries), *(method for method, _, _, _ in operators(entries, ns))]
    names += [
        '"""What ``typedops`` puts on ``Tensor`` until the core library is loaded: Note [Methods',
        'that load the core library] in typedops/__init__.py."""',
        "",
        "NAMES: tuple[str, ...] = (",
        *(f"    {name!r}," for name in installed),
        ")",
        "",
    ]
    return {package / BUNDLED_STUBS["ops"]: "\n".join(ops), package / BUNDLED_STUBS["methods"]: "\n".join(methods),
            package / BUNDLED_STUBS["names"]: "\n".join(names)}  # fmt: skip
