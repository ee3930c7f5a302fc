"""The registration section of a generated library: pre-built schema objects, definitions,
kernels (``check=False``).

Importing it parses and re-checks nothing: every ``FunctionSchema`` is written as calls of
the unchecked builders in ``typedops.schema._build`` (the generator validated it), with each
distinct type object built once by its public constructor and shared (``_t0 = BaseType('Tensor')``).
See Note [Nothing unvalidated reaches source] in _validate.py.
"""

from __future__ import annotations

import importlib
from typing import Final

from ..schema import (
    AliasInfo,
    Argument,
    AwaitType,
    BaseType,
    ClassType,
    DictType,
    FunctionSchema,
    FutureType,
    ListType,
    OptionalType,
    Return,
    RRefType,
    TupleType,
    Type,
    TypeVar,
)
from ..boxing import call_shape, conversions_for, unboxing_source
from ._model import Kernel, OpEntry, Options
from ._text import Section, runtime

__all__ = ["registration_section", "kernel_modules"]


_CONSTRUCTORS: Final = (
    "AwaitType", "BaseType", "ClassType", "DictType", "FutureType", "ListType", "OptionalType", "RRefType",
    "TupleType", "TypeVar",
)  # fmt: skip


class _Types:
    """Names the distinct type objects a module needs, in order of first use."""

    def __init__(self) -> None:
        self.names: dict[Type, str] = {}
        self.lines: list[str] = []

    def ref(self, type_: Type) -> str:
        name = self.names.get(type_)
        if name is None:
            expr = self._expr(type_)
            name = f"_t{len(self.names)}"
            self.names[type_] = name
            self.lines.append(f"{name} = {expr}")
        return name

    def _expr(self, t: Type) -> str:
        if isinstance(t, BaseType):
            return f"_BaseType({t.name!r})"
        if isinstance(t, OptionalType):
            return f"_OptionalType({self.ref(t.elem)})"
        if isinstance(t, ListType):
            size = "" if t.size is None else f", {t.size!r}"
            return f"_ListType({self.ref(t.elem)}{size})"
        if isinstance(t, DictType):
            return f"_DictType({self.ref(t.key)}, {self.ref(t.value)})"
        if isinstance(t, TupleType):
            return f"_TupleType(({''.join(self.ref(e) + ', ' for e in t.elems)}))"
        if isinstance(t, TypeVar):
            return f"_TypeVar({t.name!r})"
        if isinstance(t, ClassType):
            return f"_ClassType({t.qualified_name!r})"
        if isinstance(t, (FutureType, AwaitType, RRefType)):
            return f"_{type(t).__name__}({self.ref(t.elem)})"
        raise TypeError(f"no constructor expression for schema type {t!r} ({type(t).__name__})")


def _alias(alias: AliasInfo | None) -> str:
    if alias is None:
        return "None"
    return f"_alias({alias.before!r}, {alias.after!r}, {alias.is_write!r})"


def _argument(arg: Argument, types: _Types) -> str:
    return f"_argument({arg.name!r}, {types.ref(arg.type)}, {arg.default!r}, {_alias(arg.alias)}, {arg.alias_depth!r})"


def _return(ret: Return, types: _Types) -> str:
    return f"_return({types.ref(ret.type)}, {ret.name!r}, {_alias(ret.alias)}, {ret.alias_depth!r})"


def _tuple(items: list[str]) -> str:
    return "()" if not items else "(" + ", ".join(items) + ",)"


def schema_expr(schema: FunctionSchema, types: _Types) -> str:
    """Builder-call text that rebuilds ``schema`` exactly, without re-running the checks of
    the public constructors (the generator validated the schema; see typedops/schema/_build.py).
    Types keep their public constructors: each is built once per module and shared."""
    parts = [
        repr(schema.name),
        repr(schema.namespace),
        repr(schema.overload_name),
        _tuple([_argument(a, types) for a in schema.positional]),
        _tuple([_argument(a, types) for a in schema.kwarg_only]),
        _tuple([_return(r, types) for r in schema.returns]),
    ]
    if schema.is_vararg or schema.is_varret:
        parts += [repr(schema.is_vararg), repr(schema.is_varret)]
    return f"_schema({', '.join(parts)})"


def kernel_modules(entries: list[OpEntry]) -> dict[str, str]:
    """Kernel module -> the alias generated code imports it as (``_m0``...), in first-use order."""
    modules: dict[str, str] = {}
    for entry in entries:
        for kernel in entry.kernels:
            modules.setdefault(kernel.ref.module, f"_m{len(modules)}")
    return modules


class _Unboxing:
    """The unboxing wrappers' factories a module needs, one per distinct wrapper text --
    what ``make_unboxing`` would compile on first use, written ahead of time. (Shapes that
    differ only in positional argument names share a factory.)"""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}  # the factory's source, named "make" -> its name here
        self.lines: list[str] = []

    def ref(self, entry: OpEntry, kernel: Kernel) -> str:
        fn = getattr(importlib.import_module(kernel.ref.module), kernel.ref.attribute)  # validated
        conversions = conversions_for(entry.schema, fn, with_keys=kernel.with_keys)
        shape = call_shape(entry.schema)
        source = unboxing_source(shape, kernel.with_keys, conversions if any(conversions) else ())
        name = self.names.get(source)
        if name is None:
            name = self.names[source] = f"_unboxing{len(self.names)}"
            keywords = "".join(f", {a.name}=" for a in shape.kwarg_only)
            what = f"{len(shape.positional)} positional{keywords} -> {shape.returns}{', keyed' if kernel.with_keys else ''}"
            self.lines += ["", "", f"# {what}"]
            self.lines += source.replace("def make(", f"def {name}(", 1).rstrip("\n").splitlines()
        return name

    def section(self) -> list[str]:
        if not self.lines:
            return []
        heading = "# unboxing wrappers for boxed callers, written ahead of time (else compiled on first use)"
        return ["", "", heading, *self.lines[2:]]  # the heading replaces the first blank lines


def registration_section(entries: list[OpEntry], options: Options) -> Section:
    """``LIBRARY`` and one ``OperatorHandle`` per defined op (named ``entry.attr_name``)."""
    types = _Types()
    unboxing = _Unboxing()
    body: list[str] = []
    defined = [e for e in entries if e.defines]
    extra = [e for e in entries if not e.defines]
    modules = kernel_modules(entries)
    if defined:
        body.append(f"LIBRARY = _Library({options.namespace!r}, 'DEF')")
    impl_namespaces = sorted({e.schema.namespace for e in extra})
    for ns in impl_namespaces:
        body.append(f"IMPL_{ns} = _Library({ns!r}, 'IMPL')")
    if defined:
        # One call defines every op with its kernels (Library._define_generated: one lock,
        # one source location); the handles unpack into one name per op.
        body.append("")
        body.append("(")
        body += [f"    {entry.attr_name}," for entry in defined]
        body.append(") = LIBRARY._define_generated((")
        for entry in defined:
            kernels = ", ".join(
                f"(_DispatchKey.{k.key.name}, {modules[k.ref.module]}.{k.ref.attribute}, {k.with_keys!r}, "
                f"{unboxing.ref(entry, k)})"
                for k in entry.kernels
            )
            body.append(f"    ({schema_expr(entry.schema, types)}, ({kernels}{',' if len(entry.kernels) == 1 else ''})),")
        body.append("))")
    for entry in extra:
        body.append("")
        handle = repr(entry.schema.full_name)
        library = f"IMPL_{entry.schema.namespace}"
        for kernel in entry.kernels:
            fn = f"{modules[kernel.ref.module]}.{kernel.ref.attribute}"
            keyed = ", with_keys=True" if kernel.with_keys else ""
            body.append(f"{library}.impl({handle}, {fn}, _DispatchKey.{kernel.key.name}{keyed}, check=False)")
    constructors = sorted({c for c in _CONSTRUCTORS if any(f"_{c}(" in line for line in types.lines)})
    imports = runtime("DispatchKey as _DispatchKey", "Library as _Library", *(f"{c} as _{c}" for c in constructors))
    imports += runtime("alias as _alias", "argument as _argument", "make_return as _return", "schema as _schema")
    if unboxing.lines:
        imports += runtime("to_list as _to_list", "to_tuple as _to_tuple", "wrong_tuple as _wrong_tuple")
    if impl_namespaces:
        imports.append("import typedops.core  # noqa: F401 -- defines the core ops these kernels are for")
    imports += [f"import {module} as {alias}" for module, alias in modules.items()]
    heading = "# -- registration (schemas from the unchecked builders of typedops.schema._build: validated at generation)"
    return Section(imports, [heading, *types.lines, *unboxing.section(), "", "", *body])
