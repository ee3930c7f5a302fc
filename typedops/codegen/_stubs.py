"""The typing-only module that describes ``typedops.ops.<ns>`` and the Tensor methods.

Note [Stubs for ops and methods]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
``typedops.ops`` and ``typedops.Tensor`` are runtime objects whose operators appear by
registration, so mypy cannot see them. The generator writes ``stubs/_typedops_ops_<ns>.pyi``
(a top-level module that exists only as a stub; ``mypy_path = stubs`` finds it) with one
class per op overload (an ``OperatorHandle`` whose ``__call__`` has the schema's
signature), one per op name (an ``OpOverloadPacket`` with an attribute per overload and
``@overload``-ed ``__call__``), a ``Namespace`` class, an ``Ops`` class with the namespace
as an attribute, and ``TensorMethods`` holding the methods. typedops declares its
runtime ``ops`` as ``Ops`` and derives ``Tensor`` from ``TensorMethods`` under
``TYPE_CHECKING`` only, so nothing changes at run time.
"""

from __future__ import annotations

import keyword

from ._api import group
from ._model import OpEntry, Options, Variant
from ._operators import operator_stub_lines, operators
from ._text import header, parameters, returns_annotation, stub_def, stub_order

__all__ = ["ops_stub", "stub_module_name"]

_P = "_t."


def stub_module_name(namespace: str) -> str:
    return f"_typedops_ops_{namespace}"


def _def(name: str, entry: OpEntry, first: str, *, method: bool = False) -> list[str]:
    params = parameters(entry.schema, skip_self=method, prefix=_P)
    return stub_def("    ", name, [first, *params], returns_annotation(entry.schema, _P))


def ops_stub(entries: list[OpEntry], options: Options) -> str:
    ns = options.namespace
    defined = [e for e in entries if e.defines]
    lines = header(options, f"types of typedops.ops.{ns} and of the Tensor methods (typing only)")
    lines += [
        "import builtins as _builtins",
        "from collections.abc import Sequence as _Sequence",
        "from typing import overload",
        "",
        "import typedops as _t",
        "from typedops.tensor import Storage as _Storage",
        "from typedops.dispatch import OperatorHandle as _Handle, OpNamespace as _OpNamespace, "
        "OpOverloadPacket as _Packet",
        "",
    ]
    by_name: dict[str, list[OpEntry]] = {}
    for entry in defined:
        by_name.setdefault(entry.schema.name, []).append(entry)
        lines += ["", f"class _op_{entry.attr_name}(_Handle):"]
        lines += _def("__call__", entry, "_h")
    for name, members in by_name.items():
        lines += ["", f"class _packet_{name}(_Packet):"]
        for entry in members:
            overload = entry.schema.overload_name or "default"
            if keyword.iskeyword(overload):  # random_.from: reached by getattr, typed by __getattr__
                lines.append(f"    # {overload}: _op_{entry.attr_name} (a keyword: use getattr)")
                continue
            lines.append(f"    {overload}: _op_{entry.attr_name}")
        for index in stub_order([e.schema for e in members]):
            if len(members) > 1:
                lines.append("    @overload")
            lines += _def("__call__", members[index], "_p")
    lines += ["", "class Namespace(_OpNamespace):"]
    lines += [f"    {name}: _packet_{name}" for name in by_name] or ["    pass"]
    lines += [
        "",
        "class Ops:",
        f"    {ns}: Namespace",
        "    def __getattr__(self, namespace: str) -> _OpNamespace: ...",
        "",
        "class TensorMethods:",
    ]
    methods = group(entries, Variant.method)
    for name, members in methods.items():
        for index in stub_order([e.schema for e in members], skip_self=True):
            if len(members) > 1:
                lines.append("    @overload")
            lines += _def(name, members[index], "self", method=True)
    operator_stubs = operator_stub_lines(operators(entries, ns))
    lines += operator_stubs
    if not methods and not operator_stubs:
        lines.append("    pass")
    lines.append("")
    return "\n".join(lines)
