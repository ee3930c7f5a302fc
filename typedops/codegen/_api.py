"""The typed functional API and the Tensor methods of a generated library, and its stub.

One function per op base name. A name with one overload is the op's generated entry
function itself (bound on first use through the module's ``__getattr__``: the fastest
path, and importing stays cheap). A name with several overloads gets a chooser that
tests the arguments that tell the overloads apart -- a required keyword (``out=``), a
tensor where another overload takes a number, or (failing those) fewer positional
arguments than every other overload requires -- and otherwise falls back to the ops
packet's binding rules (``typedops.runtime.choose``).

Note [Methods with self not first]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
A method is called as ``x.name(...)``, so its receiver is the schema's ``self`` wherever
that argument stands: ``where.self(Tensor condition, Tensor self, Tensor other)`` is
``x.where(condition, other)``. When ``self`` is first, the op's entry function is the
method itself. Otherwise the method is a small wrapper taking ``self`` first, then the
arguments before ``self`` by name, then the rest as given, and calls the op with them in
schema order. The arguments before ``self`` are required (a schema whose required
argument follows a defaulted one has no Python form and is refused). Several method
overloads may move ``self`` so long as all take it after the same arguments (PyTorch's
``where.self`` and ``where.ScalarOther``, validated): the wrapper then calls their overload
chooser, which reads arguments in schema order. The method stub takes ``self`` first and
the others in schema order.

Note [Sizes as varargs]
~~~~~~~~~~~~~~~~~~~~~~~
As in PyTorch, a method whose only positional argument after ``self`` is an int list
(``view``, ``reshape``, ``expand``, ``permute``: ``sizes_as_varargs``) also takes the
ints one by one: ``x.view(2, 3)`` and ``x.reshape(-1)`` are ``x.view([2, 3])`` and
``x.reshape([-1])``; so does a function whose only positional argument is one (the
factories ``zeros(2, 3)``, ``ones(4)``, ``empty(2, 2)``, ``randn(3)``). Such a method or
function (of one overload) is a small wrapper around the op's entry function rather than
the entry function itself: ``def _method_view(self, size, *_sizes)`` calls the entry with
``(size, *_sizes)`` when more ints came, with ``(size,)`` for one int, else with ``size``
as given -- the list form pays the wrapper's frame and two tests. Another lone integer
(``np.int64(6)``) is refused by the entry's argument check (an ``int[]`` is no ``int[1]``),
and only then, on that error's path, does the wrapper call again with ``(size,)``. The
stub has two overloads: the sequence and ``*size: int``.
"""

from __future__ import annotations

import enum
import dataclasses
from dataclasses import dataclass
from typing import Final

from typing_extensions import assert_never

from ..boxing import python_name
from ..schema import BaseType, FunctionSchema, Type
from ._merged import GIVEN_LINES, merged_chooser_lines, out_names
from ._model import OpEntry, Options, Variant, self_index, sizes_as_varargs
from ._operators import operator_lines, operators
from ._layout import WIDTH
from ._text import (
    RETURN_TYPES_IMPORT, STUB_IMPORTS, Section, all_names, header, named_result, parameters, returns_annotation,
    runtime, stub_def, stub_order,
)  # fmt: skip

__all__ = [
    "group", "chooser_lines", "functions_section", "methods_section", "library_stub", "COMMON_IMPORTS", "entry_name",
    "entry_lines",
]  # fmt: skip

# What the functional API and the methods (and the static flavor) import, one name each.
COMMON_IMPORTS: Final = runtime("Any", "Tensor as _Tensor", "choose as _choose")


# Note [Entry functions as globals]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# The choosers, methods and operators call an op's entry function. ``handle.call`` is an
# instance attribute, and CPython 3.11 specializes the ``LOAD_METHOD`` of ``h.call(...)``
# only for methods (and modules and classes): every call paid a generic lookup, ~8 ns.
# So each entry function they call is a global of the generated module, ``_call_<op>``,
# which a ``LOAD_GLOBAL`` reads specialized. An entry function is generated on the op's
# first call, not at import (importing stays cheap): the global first holds a stand-in
# (``runtime.lazy_entry``) whose first call puts the entry function in its place. An
# op's entry functions never change once made (a removed op's raise), so the global
# stays right.
def entry_name(attr_name: str) -> str:
    """The global holding the entry function of the op bound to ``attr_name``."""
    return f"_call_{attr_name}"


def entry_lines(attr_names: list[str]) -> list[str]:
    """Bind ``entry_name(a)`` for each op of ``attr_names`` (Note [Entry functions as globals])."""
    if not attr_names:
        return []
    note = "Note [Entry functions as globals] in typedops/codegen/_api.py"
    lines = ["", f"# entry functions, bound on first call ({note})"]
    for attr in dict.fromkeys(attr_names):
        line = f"{entry_name(attr)} = _lazy_entry(globals(), {entry_name(attr)!r}, {attr})"
        if len(line) > WIDTH:
            line = f"{entry_name(attr)} = _lazy_entry(\n    globals(), {entry_name(attr)!r}, {attr}\n)"
        lines.append(line)
    return lines


def target_of(entry: OpEntry) -> str:
    """What a chooser calls for ``entry``: its entry function, or the wrapper naming its
    results (Note [Named results] in typedops/core/return_types.py)."""
    return f"_named_{entry.attr_name}" if named_result(entry.schema) else entry_name(entry.attr_name)


def candidate_of(entry: OpEntry) -> str:
    """What a chooser's table calls for ``entry`` when its quick tests cannot tell: its
    handle, or the wrapper naming its results."""
    return f"_named_{entry.attr_name}" if named_result(entry.schema) else entry.attr_name


def named_lines(entries: list[OpEntry]) -> list[str]:
    """The wrappers ``target_of`` names for the entries with named results (each once)."""
    lines: list[str] = []
    for entry in {e.attr_name: e for e in entries if named_result(e.schema)}.values():
        cls = named_result(entry.schema)
        lines += [
            "",
            "",
            f"def _named_{entry.attr_name}(*args: Any, **kwargs: Any) -> Any:",
            f'    """{entry.schema.full_name}\'s results as return_types.{cls} (Note [Named results])."""',
            f"    return _return_types.{cls}._make({entry_name(entry.attr_name)}(*args, **kwargs))",
        ]
    return lines


_NUMBERS: Final = frozenset({"Scalar", "int", "SymInt", "float", "bool", "complex"})


def _has(entry: OpEntry, variant: Variant) -> bool:
    if variant is Variant.function:
        return entry.function
    if variant is Variant.method:
        return entry.method
    assert_never(variant)


def group(entries: list[OpEntry], variant: Variant) -> dict[str, list[OpEntry]]:
    """Entries with ``variant`` by base name, in yaml order."""
    result: dict[str, list[OpEntry]] = {}
    for entry in entries:
        if entry.defines and _has(entry, variant):
            result.setdefault(entry.schema.name, []).append(entry)
    return result


class _Category(enum.Enum):
    """What an overload chooser tells apart at an argument position."""

    tensor = "tensor"
    number = "number"


def _category(type_: Type) -> _Category | None:
    if isinstance(type_, BaseType):
        if type_.name == "Tensor":
            return _Category.tensor
        if type_.name in _NUMBERS:
            return _Category.number
    return None


def _test(category: _Category, var: str) -> str:
    """The generated test for ``category`` (``var`` is a generated local: ``_v0``...)."""
    if category is _Category.tensor:
        return f"isinstance({var}, _Tensor)"
    if category is _Category.number:
        return f"isinstance({var}, _NUMBERS)"
    assert_never(category)


class _Check(enum.Enum):
    """The kinds of test a chooser's branch makes."""

    keyword = "keyword"  # name in kwargs
    no_keyword = "no_keyword"  # name not in kwargs
    at_most = "at_most"  # len(args) <= count
    more_than = "more_than"  # len(args) > count
    category = "category"  # the argument at position count is of category


@dataclass(frozen=True)
class _Condition:
    """One test of a chooser's branch (rendered by ``_render``, decided for a positional
    call by ``_decide``)."""

    check: _Check
    name: str = ""  # keyword, no_keyword: the argument's Python name
    count: int = 0  # at_most, more_than: the bound; category: the position
    category: _Category | None = None


def _render(c: _Condition) -> str:
    if c.check is _Check.keyword:
        return f"{c.name!r} in kwargs"
    if c.check is _Check.no_keyword:
        return f"{c.name!r} not in kwargs"
    if c.check is _Check.at_most:
        return f"len(args) <= {c.count}"
    if c.check is _Check.more_than:
        return f"len(args) > {c.count}"
    if c.check is _Check.category:
        assert c.category is not None, "a category test names its category"
        return _test(c.category, f"_v{c.count}")
    assert_never(c.check)


def _decide(c: _Condition, n: int) -> bool | None:
    """The test's outcome for a call with ``n`` positional arguments and no keywords, or
    None when it depends on the values (a category test of one of them)."""
    if c.check is _Check.keyword:
        return False
    if c.check is _Check.no_keyword:
        return True
    if c.check is _Check.at_most:
        return n <= c.count
    if c.check is _Check.more_than:
        return n > c.count
    if c.check is _Check.category:
        return None if c.count < n else False  # a missing argument is _MISSING: no category
    assert_never(c.check)


def _arity_conditions(schema: FunctionSchema, others: list[FunctionSchema]) -> list[_Condition]:
    """Tests that rule out every other overload by what it requires: each needs a
    positional argument past the ones ``schema`` takes (``sum(self)`` against
    ``sum.dim_IntList(self, dim, ...)``), so few enough positional arguments, and none of
    those required names given by keyword, leave only ``schema``. Empty when some other
    overload could take as few arguments."""
    count = len(schema.positional)
    names: list[str] = []
    for other in others:
        required = [a for a in other.positional[count:] if not a.has_default]
        if not required:
            return []
        names.append(python_name(required[0].name))
    return [_Condition(_Check.at_most, count=count), *(_Condition(_Check.no_keyword, n) for n in dict.fromkeys(names))]


def _exclusion(schema: FunctionSchema, other: FunctionSchema) -> _Condition | None:
    """A test that rules ``other`` out without ruling ``schema`` out by the same token:
    ``other`` requires a keyword-only argument ``schema`` lacks (``sub.out``'s ``out``),
    or takes fewer positional arguments than ``schema`` (``sum`` against
    ``sum.dim_IntList``: ``x.sum(0)``). None when neither holds."""
    mine = {a.name for a in schema.arguments}
    for arg in other.kwarg_only:
        if not arg.has_default and arg.name not in mine:
            return _Condition(_Check.no_keyword, python_name(arg.name))
    if len(other.positional) < len(schema.positional):
        return _Condition(_Check.more_than, count=len(other.positional))
    return None


def _exclusion_conditions(schema: FunctionSchema, others: list[FunctionSchema]) -> list[_Condition]:
    """One test per other overload that rules it out (Note [Choosers by exclusion]); empty
    when some other overload has none."""
    tests: list[_Condition] = []
    for other in others:
        test = _exclusion(schema, other)
        if test is None:
            return []
        tests.append(test)
    return list(dict.fromkeys(tests))


# Note [Choosers by exclusion]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# An overload whose arguments look like another's -- ``sub.Tensor`` beside ``sub.out``,
# which differs only by its required ``out=``; ``sum.dim_IntList`` beside ``sum``, which
# takes no ``dim`` -- has no argument whose kind tells it apart, so the chooser once left
# every such call to ``choose``'s binding of each candidate (a fifth of a vmapped 5-op
# call went there). Its branch instead tests that every *other* overload cannot take the
# call: each test is a reason the binding rule would refuse that overload, so when all
# hold, ``choose`` could pick nothing but this one, and the branch is right in any order
# among the others. A call that this overload refuses too then gets the overload's own
# argument error (from its entry, as the other quick tests give) instead of the list of
# candidates.
def _conditions(schema: FunctionSchema, others: list[FunctionSchema], used: dict[int, str]) -> list[_Condition]:
    conditions = [_Condition(_Check.keyword, python_name(a.name)) for a in schema.kwarg_only if not a.has_default]
    for index, arg in enumerate(schema.positional):
        mine = _category(arg.type)
        theirs = {_category(o.positional[index].type) for o in others if index < len(o.positional)}
        if mine is not None and theirs and theirs != {mine}:
            used[index] = python_name(arg.name)
            conditions.append(_Condition(_Check.category, count=index, category=mine))
    if not conditions:
        conditions = _arity_conditions(schema, others)
    if not conditions:
        conditions = _exclusion_conditions(schema, others)
    return conditions


_Branch = tuple[list[_Condition], str]


def chooser_lines(
    name: str, schemas: list[FunctionSchema], targets: list[str], candidates: str, *, positional: bool = False
) -> list[str]:
    """``def name(*args, **kwargs)`` calling ``targets[i]`` for the overload ``schemas[i]``
    the arguments pick, else ``choose`` over ``candidates``; ``positional`` adds the fast
    path of Note [Positional calls of choosers] first."""
    used: dict[int, str] = {}
    branches: list[_Branch] = []
    for schema, target in zip(schemas, targets):
        others = [s for s in schemas if s is not schema]
        conditions = _conditions(schema, others, used)
        if conditions:
            branches.append((conditions, target))
    branches.sort(key=lambda b: -len(b[0]))  # stable: yaml order among equals
    qualified = schemas[0].qualified_name
    lines = [f"def {name}(*args: Any, **kwargs: Any) -> Any:"]
    lines.append(f'    """{qualified}: {", ".join(s.overload_name or "default" for s in schemas)}."""')
    if positional:
        lines += _positional_lines(schemas, branches)
    for out in out_names(schemas):  # Note [out=None] in typedops/dispatch/_ops.py
        lines += [f"    if {out!r} in kwargs and kwargs[{out!r}] is None:", f"        del kwargs[{out!r}]"]
    for index in sorted(used):
        lines.append(f"    _v{index} = args[{index}] if len(args) > {index} else kwargs.get({used[index]!r}, _MISSING)")
    single: set[_Condition] = set()  # the branches' one-test conditions so far
    for conditions, target in branches:
        if len(conditions) == 1:
            if _complement(conditions[0]) in single:  # an earlier branch took every other call
                lines.append(f"    return {target}(*args, **kwargs)")
                return lines
            single.add(conditions[0])
        lines.append(f"    if {' and '.join(_render(c) for c in conditions)}:")
        lines.append(f"        return {target}(*args, **kwargs)")
    lines.append(f"    return _choose({qualified!r}, {candidates}, args, kwargs)")
    return lines


# Note [Positional calls of choosers]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# Most calls of an overloaded function or method pass positional arguments only
# (``core.add(a, b)``, ``x.sum()``). For those the chooser's tests are mostly known in
# advance: with no keywords, ``'out' in kwargs`` is false, ``'dim' not in kwargs`` true,
# and ``len(args)`` is the count. So a chooser first handles each count some overload
# takes with its required positional arguments alone: it unpacks ``args`` into the same
# ``_v`` locals, runs the branches that can still hold, in the same order, with only
# their category tests left, and calls the target with the values themselves rather
# than ``*args, **kwargs`` (about 80 ns less for ``core.add(a, b)``). A branch that always
# holds for that count ends the block; when none holds, the general tests below run as
# before. Each decided test has the value the general test would have, so both paths
# pick the same overload (tests/test_codegen_api.py checks every core chooser against
# the binding rule).
def _positional_lines(schemas: list[FunctionSchema], branches: list[_Branch]) -> list[str]:
    counts = sorted({sum(not a.has_default for a in s.positional) for s in schemas})
    blocks: list[str] = []
    for n in counts:
        block: list[str] = []
        values = ", ".join(f"_v{i}" for i in range(n))
        for conditions, target in branches:
            outcomes = [_decide(c, n) for c in conditions]
            if False in outcomes:
                continue
            tests = [_render(c) for c, o in zip(conditions, outcomes) if o is None]
            if not tests:
                block.append(f"            return {target}({values})")
                break
            block += [f"            if {' and '.join(tests)}:", f"                return {target}({values})"]
        if block:
            unpack = f"{values}{',' if n == 1 else ''} = args" if n else None
            blocks += [f"        if len(args) == {n}:", *([f"            {unpack}"] if unpack else []), *block]
    return ["    if not kwargs:", *blocks] if blocks else []


_COMPLEMENTS: Final = {
    _Check.keyword: _Check.no_keyword, _Check.no_keyword: _Check.keyword,
    _Check.at_most: _Check.more_than, _Check.more_than: _Check.at_most,
}


def _complement(c: _Condition) -> _Condition | None:
    """The test that holds exactly when ``c`` does not (``'out' in kwargs`` for ``'out' not
    in kwargs``, ``len(args) > 1`` for ``len(args) <= 1``): after a branch testing ``c``
    alone, a branch testing its complement alone takes every call left, and nothing
    reaches ``choose`` (sub.Tensor and sub.out)."""
    other = _COMPLEMENTS.get(c.check)
    return None if other is None else dataclasses.replace(c, check=other)


def functions_section(entries: list[OpEntry], options: Options) -> Section:
    """The dispatched functional API (``from pkg import add``)."""
    groups = group(entries, Variant.function)
    body = [
        "# -- the typed functional API (types in __init__.pyi)",
        *all_names(groups),
        "_MISSING: Any = object()",
        "_NUMBERS = (int, float, complex)",
    ]
    varargs = {n: m[0] for n, m in groups.items() if len(m) == 1 and sizes_as_varargs(m[0].schema, method=False)}
    singles = {n: m[0] for n, m in groups.items() if len(m) == 1 and n not in varargs}
    body += entry_lines([*_chooser_ops(groups), *(e.attr_name for e in varargs.values())])
    named = named_lines([e for members in groups.values() if len(members) > 1 for e in members])
    body += named
    given = wraps = False
    for name, members in groups.items():
        if len(members) < 2:
            continue
        body.append("")
        table = f"_CANDIDATES_{name}"
        pairs = "".join(f"\n    ({e.attr_name}.schema, {candidate_of(e)}),"for e in members)
        body.append(f"{table} = ({pairs}\n)")
        schemas, targets = [e.schema for e in members], [target_of(e) for e in members]
        merged = merged_chooser_lines(name, schemas, targets, f"_any_{name}")  # Note [Choosers with one signature]
        lines = chooser_lines(f"_any_{name}" if merged else name, schemas, targets, table, positional=merged is None)
        numbers_as_self = options.namespace == "core" and _numbers_as_self(name, members)
        body += _with_number_as_self(name, lines) if numbers_as_self else lines
        wraps = wraps or numbers_as_self
        body += ["", *merged] if merged else []
        given = given or merged is not None
    body += GIVEN_LINES if given else []
    for name, entry in varargs.items():
        body += ["", *_varargs_lines(name, entry, method=False)]
    body.append("")
    body.append("_SINGLE = {" + "".join(f"\n    {n!r}: {e.attr_name}," for n, e in singles.items()) + "\n}")
    body += [
        "",
        "",
        "def __getattr__(name: str) -> Any:",
        '    """Bind a single-overload function to its op\'s entry function on first use."""',
        "    handle = _SINGLE.get(name)",
        "    if handle is None:",
        '        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")',
        "    fn = handle.call",
        "    globals()[name] = fn",
        "    return fn",
    ]
    imports = [*COMMON_IMPORTS, *runtime("lazy_entry as _lazy_entry")]
    if named:
        imports.append(RETURN_TYPES_IMPORT)
    if wraps:
        imports += runtime("wrapped_scalar as _wrapped_scalar", "is_number as _is_number", "CPU as _CPU")
    if varargs:
        imports += runtime("ArgumentError as _ArgumentError")
    return Section(imports, body)


# Note [Numbers as self]
# ~~~~~~~~~~~~~~~~~~~~~~
# PyTorch's Python functions ``add``, ``sub``, ``mul``, ``div`` and ``floor_divide`` take a
# number where their ``self`` is a Tensor (``torch.sub(2, x)``: the number is a wrapped
# number, so ``x``'s dtype wins, as in ``2 - x``); every other function refuses one. Their
# choosers here run their tests inside ``try``, which costs a tensor call nothing on
# CPython 3.11: a number as ``self`` fails the entry's first step (reading its key bits,
# before anything is dispatched), and the ``except`` then calls again with the number
# wrapped on ``other``'s device. PyTorch's rule is about any Tensor argument of these
# functions, so a number as ``other`` beside an ``out=`` tensor is taken too
# (``torch.add(x, 1, out=y)``: there is no ``add.Scalar_out``): that call fails binding
# ``add.Scalar``, which takes no ``out`` (a TypeError), and the ``except`` calls again with
# the number wrapped on ``self``'s device, which chooses ``add.out``. Any other call that
# raises TypeError raises it as before. Only the core library's functions do (PyTorch's
# rule is for torch's own functions, not for ops of other namespaces).
NUMBERS_AS_SELF: Final = frozenset({"add", "sub", "mul", "div", "floor_divide"})


def _numbers_as_self(name: str, members: list[OpEntry]) -> bool:
    """Whether the function ``name`` (of overloads ``members``) takes a number as ``self``
    (Note [Numbers as self]): one of PyTorch's names, with a chooser of its own."""
    if name not in NUMBERS_AS_SELF or len(members) < 2:
        return False
    schemas = [e.schema for e in members]
    if merged_chooser_lines(name, schemas, [name] * len(schemas), name) is not None:
        return False
    return any(_tensor_pair(s) for s in schemas)


def _tensor_pair(schema: FunctionSchema, *, out: bool = False) -> bool:
    """Whether ``schema`` starts ``(Tensor self, Tensor other`` and writes no ``out`` (with
    ``out``: or writes one)."""
    first = schema.arguments[:2]
    return [a.name for a in first] == ["self", "other"] and all(str(a.type) == "Tensor" for a in first) and (
        out or not schema.is_out_fn
    )


def _with_number_as_self(name: str, lines: list[str]) -> list[str]:
    """The chooser ``lines`` (a def, its docstring, its body) run inside ``try``, calling
    again with a number as ``self`` wrapped: Note [Numbers as self]."""
    head, doc, rest = lines[0], lines[1], lines[2:]
    return [
        head, doc, "    try:", *("    " + line for line in rest),
        "    except TypeError:  # an ArgumentError, or a binding one: Note [Numbers as self]",
        "        _s = args[0] if args else kwargs.get('self', _MISSING)",
        "        _o = args[1] if len(args) > 1 else kwargs.get('other', _MISSING)",
        "        if _is_number(_o) and isinstance(_s, _Tensor) and kwargs.get('out') is not None:",
        "            _o = _wrapped_scalar(_o, _s._device)",
        "            if len(args) > 1:",
        f"                return {name}(args[0], _o, *args[2:], **kwargs)",
        f"            return {name}(*args, **{{**kwargs, 'other': _o}})",
        "        if not (_is_number(_s) and (isinstance(_o, _Tensor) or _is_number(_o))):",
        "            raise",
        "    _s = _wrapped_scalar(_s, _o._device if isinstance(_o, _Tensor) else _CPU)  # two numbers: on the CPU",
        "    if args:",
        f"        return {name}(_s, *args[1:], **kwargs)",
        f"    return {name}(**{{**kwargs, 'self': _s}})",
    ]


def _chooser_ops(groups: dict[str, list[OpEntry]]) -> list[str]:
    """The ops the choosers of ``groups`` call (those of names with several overloads)."""
    return [e.attr_name for members in groups.values() if len(members) > 1 for e in members]


def stub_functions(
    groups: dict[str, list[OpEntry]], *, method: bool, indent: str = "", numbers_as_self: bool = False
) -> list[str]:
    """``def`` stubs (with ``@overload`` for several overloads) for each group; with
    ``numbers_as_self``, the functions of Note [Numbers as self] take a number as self."""
    lines: list[str] = []
    for name, members in groups.items():
        outs = out_names([e.schema for e in members])
        for index in stub_order([e.schema for e in members], skip_self=method):
            entry = members[index]
            params = parameters(entry.schema, skip_self=method)
            if method:
                params.insert(0, "self")
            absent = [n for n in outs if n not in {python_name(a.name) for a in entry.schema.arguments}]
            if absent:  # ``out=None`` is no out (Note [out=None] in typedops/dispatch/_ops.py)
                params += [*([] if "*" in params else ["*"]), *(f"{n}: None = ..." for n in absent)]
            sizes = None if method or len(members) > 1 else sizes_as_varargs(entry.schema, method=False)
            if len(members) > 1 or sizes:
                lines.append(f"{indent}@overload")
            lines += stub_def(indent, name, params, returns_annotation(entry.schema, named=len(members) > 1))
            if sizes:  # zeros(2, 3) too: Note [Sizes as varargs]
                ints = [f"*{python_name(sizes)}: int", *(p for p in params[1:] if p != "*")]
                lines += [f"{indent}@overload", *stub_def(indent, name, ints, returns_annotation(entry.schema))]
            if numbers_as_self and _tensor_pair(entry.schema, out=True) and _numbers_as_self(name, members):
                # Note [Numbers as self]: a number as self, as the chooser takes it (and as
                # other beside out=)
                lines.append(f"{indent}@overload")
                lines += stub_def(indent, name, ["self: Scalar", *params[1:]], returns_annotation(entry.schema))
                if entry.schema.is_out_fn:
                    lines.append(f"{indent}@overload")
                    lines += stub_def(indent, name, [params[0], "other: Scalar", *params[2:]],
                                      returns_annotation(entry.schema))  # fmt: skip
    return lines


def methods_section(entries: list[OpEntry], options: Options) -> Section:
    """``install()`` puts the ``variants: method`` ops onto ``typedops.Tensor``; the module
    calls it once at import (tests call it again after replacing methods)."""
    groups = group(entries, Variant.method)
    functions = group(entries, Variant.function)
    # A method whose overloads are exactly the function's (same ops, same order) is the
    # functional API's chooser itself; only the others get a chooser of their own.
    shared = {name for name, members in groups.items() if len(members) > 1 and functions.get(name) == members}
    body = ["# -- the Tensor methods"]
    found = operators(entries, options.namespace)
    # the entry functions called below; the dispatched functional API binds its choosers' own
    called = [e.attr_name for n, members in groups.items() if len(members) > 1 and n not in shared for e in members]
    called += [m[0].attr_name for m in groups.values() if len(m) == 1 and self_index(m[0].schema)]
    varargs = {n: m[0] for n, m in groups.items() if len(m) == 1 and sizes_as_varargs(m[0].schema)}
    called += [e.attr_name for e in varargs.values()]
    called += [entry.attr_name for _, _, entry, _ in found]
    bound: set[str] = set() if options.static_dispatch else set(_chooser_ops(functions))
    body += entry_lines([a for a in called if a not in bound])
    # the wrappers of Note [Named results] that the functional API section did not write
    chosen = [e for n, members in groups.items() if len(members) > 1 and n not in shared for e in members]
    named = named_lines([e for e in chosen if e.attr_name not in bound])
    body += named
    own = [e for e in entries if e.tensor_own_method]
    if own:  # Note [Schemas only] in _validate.py
        body += ["# Not methods here, since Tensor defines these names itself (the ops keep their functions):"]
        body += [f"#   {e.schema.name}: {e.schema.full_name}" for e in own]
    for name, members in groups.items():
        index = self_index(members[0].schema)  # the same for every member (validated)
        if len(members) > 1 and name not in shared:
            table = f"_METHOD_CANDIDATES_{name}"
            pairs = "".join(f"\n    ({e.attr_name}.schema, {candidate_of(e)}),"for e in members)
            body += ["", f"{table} = ({pairs}\n)"]
            body += chooser_lines(f"_ordered_{name}" if index else f"_method_{name}", [e.schema for e in members],
                                  [target_of(e) for e in members], table, positional=True)  # fmt: skip
        if index:
            target = name if name in shared else f"_ordered_{name}"
            if len(members) == 1:
                target = entry_name(members[0].attr_name)
            body += ["", *_moved_self_lines(name, members, index, target)]
        if name in varargs:
            body += ["", *_varargs_lines(name, varargs[name])]
    operator_body, operator_install = operator_lines(found)
    body += operator_body
    body += ["", "", "def install() -> None:", '    """Set the methods on typedops.Tensor (idempotent)."""']
    if not groups and not operator_install:
        body.append("    return")
    for name, members in groups.items():
        if self_index(members[0].schema) or name in varargs:
            body.append(f"    setattr(_Tensor, {name!r}, _method_{name})")
        elif name in shared:
            body.append(f"    setattr(_Tensor, {name!r}, {name})")
        elif len(members) > 1:
            body.append(f"    setattr(_Tensor, {name!r}, _method_{name})")
        else:
            body.append(f"    setattr(_Tensor, {name!r}, _lazy_method(_Tensor, {name!r}, {members[0].attr_name}))")
    body += operator_install
    body += ["", "", "install()"]
    imports = [*COMMON_IMPORTS, *runtime("lazy_method as _lazy_method", "lazy_entry as _lazy_entry")]
    if operator_install:
        imports += runtime(
            "wrapped_scalar as _wrapped_scalar", "is_number as _is_number", "python_number as _python_number"
        )
    if varargs:
        imports += runtime("ArgumentError as _ArgumentError")
    if named:
        imports.append(RETURN_TYPES_IMPORT)
    return Section(imports, body)


def _varargs_lines(name: str, entry: OpEntry, *, method: bool = True) -> list[str]:
    """The method (or function) of an op that also takes its int list as separate ints:
    Note [Sizes as varargs]."""
    sizes = python_name(sizes_as_varargs(entry.schema, method=method) or "")
    target = entry_name(entry.attr_name)
    keywords, passed = (", **kwargs: Any", ", **kwargs") if entry.schema.kwarg_only else ("", "")
    receiver, given, define = ("self: Any, ", "self, ", f"_method_{name}") if method else ("", "", name)
    return [
        "",
        f"def {define}({receiver}{sizes}: Any, *_sizes: Any{keywords}) -> Any:",
        f'    """{entry.schema.full_name}{" as a method" if method else ""}: {sizes} as one sequence or as '
        'separate ints (Note [Sizes as varargs])."""',
        "    if _sizes:",
        f"        return {target}({given}({sizes}, *_sizes){passed})",
        f"    if type({sizes}) is int:",
        f"        return {target}({given}({sizes},){passed})",
        "    try:",
        f"        return {target}({given}{sizes}{passed})",
        "    except _ArgumentError:",
        f"        if not hasattr({sizes}, '__index__'):  # one int (np.int64 too): a list of it",
        "            raise",
        f"    return {target}({given}({sizes},){passed})",
    ]


def _moved_self_lines(name: str, members: list[OpEntry], index: int, target: str) -> list[str]:
    """The method of ops whose ``self`` is not first. See Note [Methods with self not first]."""
    before = [python_name(a.name) for a in members[0].schema.positional[:index]]
    params = ", ".join(f"{n}: Any" for n in before)
    call = ", ".join([*before, "self"])
    names = ", ".join(e.schema.full_name for e in members)
    return [
        "",
        f"def _method_{name}(self: Any, {params}, *args: Any, **kwargs: Any) -> Any:",
        f'    """{names} as a method: self moves to its place in the schema."""',
        f"    return {target}({call}, *args, **kwargs)",
    ]


def library_stub(entries: list[OpEntry], options: Options) -> str:
    """``__init__.pyi``: the functional API, the op handles, the libraries and ``install``."""
    groups = group(entries, Variant.function)
    defined = [e for e in entries if e.defines]
    impl_namespaces = sorted({e.schema.namespace for e in entries if not e.defines})
    lines = header(options, "types of the generated op library")
    lines += [*STUB_IMPORTS, "from typedops.dispatch import Library as _Library, OperatorHandle as _OperatorHandle"]
    if any(named_result(e.schema) for members in groups.values() if len(members) > 1 for e in members):
        lines.append(RETURN_TYPES_IMPORT)
    lines.append("")
    lines += [*all_names(groups), ""]
    if defined:
        lines.append("LIBRARY: _Library")
    lines += [f"IMPL_{ns}: _Library" for ns in impl_namespaces]
    lines += [f"{e.attr_name}: _OperatorHandle" for e in defined]
    lines += ["", "def install() -> None: ...", ""]
    lines += stub_functions(groups, method=False, numbers_as_self=options.namespace == "core")
    lines.append("")
    return "\n".join(lines)
