"""The registration section of a generated library: pre-built schema objects, definitions,
kernels (``check=False``).

Importing it parses and re-checks nothing: every ``FunctionSchema`` is written as calls of
the unchecked builders in ``typedops.schema._build`` (the generator validated it), with each
distinct type object built once by its public constructor and shared (``_t0 = BaseType('Tensor')``).
See Note [Nothing unvalidated reaches source] in _validate.py.

Each op reads as one entry: its schema text as a comment, then its handle's name bound to
its ``(schema, kernels)``, the builders called with the fields that differ from their
defaults named (``_argument('alpha', _t1, default='1')``), laid out in lines of at most
120 characters (_layout.py). Naming the fields costs little at import, as the fields at
their defaults are no longer passed: for the core library's 128 ops, building the section
took ~290 us instead of ~273 us (timed in one process; ~8 us of it the keyword calls,
~7 us the ``_kernel`` calls), under 2% of the library's ~1.1 ms import and within the
noise of bench_codegen_import, which measured no difference.
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
from ._layout import Group, Node, comment_lines, comment_text, layout, packed
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
            text = "" if isinstance(type_, BaseType) else f"  # {comment_text(str(type_))}"
            self.lines.append(f"{name} = {expr}{text}")
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
        raise AssertionError(f"no constructor expression for schema type {t!r} ({type(t).__name__})")  # a typedops bug


def _alias(alias: AliasInfo) -> str:
    after = f", after={alias.after!r}" if alias.after else ""
    write = ", is_write=True" if alias.is_write else ""
    return f"_alias({alias.before!r}{after}{write})"


def _fields(alias: AliasInfo | None, depth: int) -> str:
    """The keyword arguments of the alias fields that differ from their defaults."""
    return (f", alias={_alias(alias)}" if alias is not None else "") + (f", alias_depth={depth!r}" if depth else "")


def _argument(arg: Argument, types: _Types) -> str:
    default = "" if arg.default is None else f", default={arg.default!r}"
    return f"_argument({arg.name!r}, {types.ref(arg.type)}{default}{_fields(arg.alias, arg.alias_depth)})"


def _return(ret: Return, types: _Types) -> str:
    name = "" if ret.name is None else f", name={ret.name!r}"
    return f"_return({types.ref(ret.type)}{name}{_fields(ret.alias, ret.alias_depth)})"


def schema_node(schema: FunctionSchema, types: _Types) -> Group:
    """Builder calls that rebuild ``schema`` exactly, without re-running the checks of the
    public constructors (the generator validated the schema; see typedops/schema/_build.py).
    Fields at their defaults are left out; types keep their public constructors: each is
    built once per module and shared."""
    head = (repr(schema.name), repr(schema.namespace), repr(schema.overload_name))
    fields: list[Node] = []
    for field, nodes in (
        ("positional", [_argument(a, types) for a in schema.positional]),
        ("kwarg_only", [_argument(a, types) for a in schema.kwarg_only]),
        ("returns", [_return(r, types) for r in schema.returns]),
    ):
        if nodes:
            fields.append(Group(f"{field}=(", tuple(nodes), tuple_=True))
    fields += [f"{flag}=True" for flag in ("is_vararg", "is_varret") if getattr(schema, flag)]
    return Group("_schema(", (*head, *fields), lead=len(head))


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


def _kernel(kernel: Kernel, modules: dict[str, str], unboxing: str) -> str:
    keyed = ", with_keys=True" if kernel.with_keys else ""
    fn = f"{modules[kernel.ref.module]}.{kernel.ref.attribute}"
    return f"_kernel(_DispatchKey.{kernel.key.name}, {fn}, {unboxing}{keyed})"


def _entry(entry: OpEntry, types: _Types, unboxing: _Unboxing, modules: dict[str, str]) -> list[str]:
    """One defined op as one unit: its schema text as a comment, then its name bound to
    what ``_define_generated`` takes for it, ``(schema, kernels)``."""
    kernels = tuple(_kernel(k, modules, unboxing.ref(entry, k)) for k in entry.kernels)
    pair = Group("(", (schema_node(entry.schema, types), Group("(", kernels, tuple_=True)), tuple_=True)
    return ["", *comment_lines(str(entry.schema)), *layout(pair, prefix=f"{entry.attr_name} = ")]


# Note [One name per op, from entry to handle]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# A generated library defines all its ops in one call (Library._define_generated: one lock,
# one source location), yet each op must read as one unit. So each op's entry binds its
# handle's name to the op's (schema, kernels) beside its schema text, and the one call
# takes those names and rebinds each to its handle: ``(a, b) = LIBRARY._define_generated((a, b))``.
# Both lists are the same names in the same order, so nothing is paired by position.
def _define_all(defined: list[OpEntry]) -> list[str]:
    names = packed([entry.attr_name for entry in defined])
    return [
        "",
        "",
        "# Define every op above with its kernels in one call, which rebinds each name to its op's handle",
        "# (see Note [One name per op, from entry to handle] in typedops/codegen/_registration.py).",
        "(",
        *names,
        ") = LIBRARY._define_generated((",
        *names,
        "))",
    ]


def _device_checks(defined: list[OpEntry]) -> list[str]:
    """Mark the ops whose yaml entry keeps ``device_check: ExactSame`` (the default): their
    calls refuse tensors of several devices (Note [One device per call] in dispatch/_entry.py)."""
    checked = [entry.attr_name for entry in defined if entry.device_check]
    if not checked:
        return []
    return ["", "# Ops that take tensors of one device only (device_check: ExactSame)", "_check_devices(", *packed(checked), ")"]


def _vmap_rules(defined: list[OpEntry]) -> list[str]:
    """Register the batching rule each entry declares (``vmap: family``) on ``Batched``."""
    ruled = [f"({entry.attr_name}, {entry.vmap!r})" for entry in defined if entry.vmap is not None]
    if not ruled:
        return []
    return [
        "",
        "# Batching rules by family (vmap:): Note [Rule families] in typedops/batching/_rules.py",
        "_register_vmap_rules(LIBRARY, [",
        *packed(ruled),
        "])",
    ]


def _impl(entry: OpEntry, kernel: Kernel, modules: dict[str, str]) -> list[str]:
    """A kernel for an op defined elsewhere, registered on ``IMPL_<namespace>``."""
    items = [repr(entry.schema.full_name), f"{modules[kernel.ref.module]}.{kernel.ref.attribute}"]
    items += [f"_DispatchKey.{kernel.key.name}", *(["with_keys=True"] if kernel.with_keys else []), "check=False"]
    return layout(Group(f"IMPL_{entry.schema.namespace}.impl(", tuple(items)))


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
        body += ["", "", _ENTRIES_HEADING]
        for entry in defined:
            body += _entry(entry, types, unboxing, modules)
        body += _define_all(defined)
        body += _device_checks(defined)
        body += _vmap_rules(defined)
    for entry in extra:
        body.append("")
        for kernel in entry.kernels:
            body += _impl(entry, kernel, modules)
    imports = _imports(types, unboxing, bool(defined), impl_namespaces, modules, any(e.device_check for e in defined))
    if any(e.vmap is not None for e in defined):
        imports += runtime("register_vmap_rules as _register_vmap_rules")
    return Section(imports, [_HEADING, *types.lines, *unboxing.section(), "", "", *body])


_HEADING: Final = (
    "# -- registration (schemas from the unchecked builders of typedops.schema._build: validated at generation)"
)
_ENTRIES_HEADING: Final = (
    "# One entry per op: its schema as text, then its handle's name bound to (schema, kernels) for the call below."
)


def _imports(
    types: _Types,
    unboxing: _Unboxing,
    defines: bool,
    impl_namespaces: list[str],
    modules: dict[str, str],
    device_checks: bool,
) -> list[str]:
    constructors = sorted({c for c in _CONSTRUCTORS if any(f"_{c}(" in line for line in types.lines)})
    imports = runtime("DispatchKey as _DispatchKey", "Library as _Library", *(f"{c} as _{c}" for c in constructors))
    imports += runtime("alias as _alias", "argument as _argument", "make_return as _return", "schema as _schema")
    if defines:
        imports += runtime("kernel as _kernel")
    if device_checks:
        imports += runtime("check_devices as _check_devices")
    if unboxing.lines:
        imports += runtime(
            "to_list as _to_list", "to_tuple as _to_tuple", "broadcast as _broadcast", "wrong_tuple as _wrong_tuple"
        )
    if impl_namespaces:
        imports.append("import typedops.core  # noqa: F401 -- defines the core ops these kernels are for")
    imports += [f"import {module} as {alias}" for module, alias in modules.items()]
    return imports
