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
one ``_typedops_ops_<ns>.pyi`` per namespace into DIR (its classes and its library's
methods) and an index, ``DIR/typedops_namespaces.pyi``, whose ``Namespaces`` has an
attribute per namespace stub in DIR and whose ``TensorMethods`` derives from theirs. With
DIR on the checker's stub path (pyright: ``typings`` by default; mypy: ``mypy_path``)
the index replaces the shipped package: ``typedops.ops.myops.scale(...)`` and
``x.mymethod()`` are checked, and ``ops.myops.misspelt`` is an error. Namespaces without
stubs stay dynamic through ``Ops.__getattr__``. A project method named like a core method
is typed as the core one (the core class comes first).

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

from pathlib import Path
from typing import Final

from ..schema import FunctionSchema
from ._api import group
from ._model import OpEntry, Options
from ._text import header, parameters, returns_annotation

__all__ = [
    "ops_stub", "stub_module_name", "bundled_stubs", "BUNDLED_STUBS", "namespace_stub", "index_stub",
    "stub_namespaces", "INDEX_FILE",
]  # fmt: skip

_P = "_t."
_IMPORTS: Final = (
    "import builtins as _builtins",
    "from collections.abc import Sequence as _Sequence",
    "from typing import overload",
    "",
    "import typedops as _t",
)
# Where the bundled library's stubs go, relative to the typedops package.
BUNDLED_STUBS: Final = {"ops": Path("dispatch") / "_ops_typing.pyi", "methods": Path("tensor") / "_methods.pyi"}
HOOK: Final = "typedops_namespaces"
INDEX_FILE: Final = f"{HOOK}.pyi"
_PREFIX: Final = "_typedops_ops_"


def stub_module_name(namespace: str) -> str:
    return f"{_PREFIX}{namespace}"


def stub_namespaces(folder: Path) -> list[str]:
    """The namespaces with a stub in ``folder``."""
    if not folder.is_dir():
        return []
    return sorted(p.stem[len(_PREFIX) :] for p in folder.glob(f"{_PREFIX}*.pyi"))


def _signature(schema: FunctionSchema, first: str, *, method: bool = False) -> str:
    params = parameters(schema, skip_self=method, prefix=_P)
    return f"({', '.join([first, *params])}) -> {returns_annotation(schema, _P)}"


def _class_name(schema: FunctionSchema) -> str:
    return f"_op_{schema.name}__{schema.overload_name or 'default'}"


def namespace_lines(schemas: list[FunctionSchema]) -> list[str]:
    """The handle, packet and ``Namespace`` classes of one namespace's ops."""
    lines: list[str] = []
    by_name: dict[str, list[FunctionSchema]] = {}
    for schema in schemas:
        by_name.setdefault(schema.name, []).append(schema)
        lines += ["", f"class {_class_name(schema)}(_Handle):"]
        lines.append(f"    def __call__{_signature(schema, '_h')}: ...")
    for name, members in by_name.items():
        lines += ["", f"class _packet_{name}:"]
        lines += [f"    {s.overload_name or 'default'}: {_class_name(s)}" for s in members]
        lines.append("    def overloads(self) -> list[_builtins.str]: ...")
        for schema in members:
            if len(members) > 1:
                lines.append("    @overload")
            lines.append(f"    def __call__{_signature(schema, '_p')}: ...")
    lines += ["", "class Namespace:"]
    lines += [f"    {name}: _packet_{name}" for name in by_name] or ["    pass"]
    return lines


def method_lines(methods: dict[str, list[FunctionSchema]]) -> list[str]:
    """The body of a ``TensorMethods`` class: one ``def`` (or ``@overload``s) per method."""
    lines: list[str] = []
    for name, members in methods.items():
        for schema in members:
            if len(members) > 1:
                lines.append("    @overload")
            lines.append(f"    def {name}{_signature(schema, 'self', method=True)}: ...")
    return lines or ["    pass"]


def _methods(entries: list[OpEntry]) -> dict[str, list[FunctionSchema]]:
    return {name: [e.schema for e in members] for name, members in group(entries, "method").items()}


def namespace_stub(head: list[str], schemas: list[FunctionSchema], methods: dict[str, list[FunctionSchema]]) -> str:
    """``_typedops_ops_<ns>.pyi``: the namespace's classes and its library's methods."""
    lines = [*head, *_IMPORTS, "from typedops.dispatch import OperatorHandle as _Handle", ""]
    lines += namespace_lines(schemas)
    lines += ["", "class TensorMethods:", *method_lines(methods), ""]
    return "\n".join(lines)


def ops_stub(entries: list[OpEntry], options: Options) -> str:
    """A yaml library's ``_typedops_ops_<ns>.pyi``."""
    head = header(options, f"types of typedops.ops.{options.namespace} and of its Tensor methods (typing only)")
    return namespace_stub(head, [e.schema for e in entries if e.defines], _methods(entries))


def index_stub(namespaces: list[str]) -> str:
    """``typedops_namespaces.pyi``: every namespace stub of the folder, for ``typedops.ops``
    and ``Tensor`` (see Note [Stubs for ops and methods])."""
    modules = [stub_module_name(ns) for ns in namespaces]
    lines = [
        "# @generated by typedops.codegen from the _typedops_ops_*.pyi stubs in this folder -- do not edit.",
        "# the op namespaces and Tensor methods they add, read by type checkers in place of typedops_namespaces",
        "# Rewritten by: typedops codegen ... --stubs DIR, typedops stubgen ... --out DIR",
        "# fmt: off",
        *[f"import {module}" for module in modules],
        "",
        "class Namespaces:",
        *([f"    {ns}: {module}.Namespace" for ns, module in zip(namespaces, modules)] or ["    pass"]),
        "",
        f"class TensorMethods({', '.join(f'{m}.TensorMethods' for m in modules)}):" if modules else "class TensorMethods:",
        "    pass",
        "",
    ]
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
    methods += [*_IMPORTS, f"from {HOOK} import TensorMethods as _ProjectMethods", "", "",
                "class TensorMethods(_ProjectMethods):", *method_lines(_methods(entries)), ""]  # fmt: skip
    return {package / BUNDLED_STUBS["ops"]: "\n".join(ops), package / BUNDLED_STUBS["methods"]: "\n".join(methods)}
