"""Overload choosers with one plain signature (Note [Choosers with one signature])."""

from __future__ import annotations

from typing import Final

from ..boxing import python_name
from ..schema import FunctionSchema
from ._layout import WIDTH

__all__ = ["merged_chooser_lines", "GIVEN_LINES", "out_names"]

# Note [Choosers with one signature]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# A chooser ``def sum(*args, **kwargs)`` costs its caller ~100 ns more than a plain
# function: CPython 3.11 specializes no call of a function with ``*args``/``**kwargs``
# and builds the dict. When the overloads' Python signatures fit one plain signature --
# each argument name positional at the same place in every overload that has it, or
# keyword-only in all -- the chooser takes that signature, every argument defaulting to
# ``_MISSING``: ``sum(self, dim, keepdim, *, dtype)`` for ``sum`` and
# ``sum.dim_IntList``. Which names were given then picks the overload: an overload
# binds a call by names when it has every given name and is given all it requires. The
# chooser is made only when no call binds two overloads by names (``add.Tensor`` and
# ``add.Scalar`` take the same names; ``alpha`` is keyword-only in one of them anyway),
# so a branch that tests "binds this overload by names" picks what the binding rule
# picks (``choose`` takes the first overload that binds; here only one can). A call no
# overload binds is passed, every argument by keyword, to the general chooser
# (``_any_<name>``), which raises the error it raised before. Python's own errors for a
# call the signature refuses (an unknown keyword, an argument given twice) read as
# before; only "takes from M to N positional arguments" counts the merged signature.
# An out argument (``sub.out``'s ``out``) defaults to None instead, and None counts as
# not given (Note [out=None] in typedops/dispatch/_ops.py): ``out is None`` costs the
# plain call what ``out is _MISSING`` did.
GIVEN_LINES = [
    "",
    "",
    "def _given(**kwargs: Any) -> dict[str, Any]:",
    '    """The arguments a call gave (Note [Choosers with one signature] in typedops/codegen/_merged.py)."""',
    "    return {k: v for k, v in kwargs.items() if v is not _MISSING}",
]


def out_names(schemas: list[FunctionSchema]) -> list[str]:
    """The Python names some overload writes its results into and none takes otherwise:
    a None given for one of them means it was not given (Note [out=None] in
    typedops/dispatch/_ops.py)."""
    outs = {python_name(a.name) for s in schemas for a in s.out_arguments if not a.has_default}
    others = {python_name(a.name) for s in schemas for a in s.arguments if a not in s.out_arguments}
    return sorted(outs - others)


def _merged(schemas: list[FunctionSchema]) -> tuple[list[str], list[str]] | None:
    """The positional and keyword-only names of one signature taking every overload's
    arguments in their places, or None when there is none."""
    positional: list[str] = []
    keywords: list[str] = []
    for schema in schemas:
        if schema.is_vararg:
            return None
        mine = [python_name(a.name) for a in schema.positional]
        shorter, longer = sorted((mine, positional), key=len)
        if longer[: len(shorter)] != shorter:
            return None
        positional = longer
        keywords += [python_name(a.name) for a in schema.kwarg_only]
    keywords = list(dict.fromkeys(keywords))
    names = positional + keywords
    if set(positional) & set(keywords) or len(set(names)) != len(names) or any(n.startswith("_") for n in names):
        return None
    return positional, keywords


def _names(schema: FunctionSchema) -> tuple[list[str], list[str]]:
    """``schema``'s required and optional Python argument names."""
    required = [python_name(a.name) for a in schema.arguments if not a.has_default]
    return required, [python_name(a.name) for a in schema.arguments if a.has_default]


def _unique(schemas: list[FunctionSchema]) -> bool:
    """No set of names binds two overloads: for each pair, what both require is not
    within what both have."""
    for i, a in enumerate(schemas):
        for b in schemas[i + 1 :]:
            (ra, oa), (rb, ob) = _names(a), _names(b)
            if set(ra) | set(rb) <= set(ra + oa) & set(rb + ob):
                return False
    return True


# At most this many optional arguments get a call for each subset of them given; an
# overload with more passes those given through ``_given`` (a dict built per call).
_EXPANDED: Final = 2


def _call(target: str, schema: FunctionSchema, given: list[str]) -> str:
    """``target(...)`` with the names ``given``: positional arguments by position up to
    the first one not given, the others by keyword."""
    parts: list[str] = []
    by_position = True
    for arg in schema.positional:
        name = python_name(arg.name)
        if name not in given:
            by_position = False
        else:
            parts.append(name if by_position else f"{name}={name}")
    parts += [f"{n}={n}" for n in (python_name(a.name) for a in schema.kwarg_only) if n in given]
    return f"{target}({', '.join(parts)})"


def _calls(target: str, schema: FunctionSchema, given: list[str], optional: list[str], indent: str) -> list[str]:
    """Return the call of ``target`` with ``given`` and whichever of ``optional`` the call gave."""
    if not optional:
        return [f"{indent}return {_call(target, schema, given)}"]
    if len(optional) > _EXPANDED:
        rest = ", ".join(f"{n}={n}" for n in optional)
        return [
            f"{indent}if {' and '.join(f'{n} is _MISSING' for n in optional)}:",
            f"{indent}    return {_call(target, schema, given)}",
            f"{indent}return {_call(target, schema, given)[:-1]}{', ' if given else ''}**_given({rest}))",
        ]
    first, rest_ = optional[0], optional[1:]
    return [
        f"{indent}if {first} is _MISSING:",
        *_calls(target, schema, given, rest_, indent + "    "),
        *_calls(target, schema, [*given, first], rest_, indent),
    ]


def _branch(schema: FunctionSchema, target: str, all_names: list[str], outs: list[str]) -> list[str]:
    """``if <the call binds schema by names>: return target(...)``; an out argument of
    ``outs`` is missing when None (its default: Note [out=None] in dispatch/_ops.py)."""
    required, optional = _names(schema)
    have = set(required + optional)

    def absent(n: str) -> str:
        return "None" if n in outs else "_MISSING"

    tests = [f"{n} is not {absent(n)}" for n in required] + [f"{n} is {absent(n)}" for n in all_names if n not in have]
    return [f"    if {' and '.join(tests)}:" if tests else "    if True:", *_calls(target, schema, required, optional, " " * 8)]


def merged_chooser_lines(name: str, schemas: list[FunctionSchema], targets: list[str], general: str) -> list[str] | None:
    """``def name(<one plain signature>)`` calling ``targets[i]`` when the given names bind
    ``schemas[i]``, else ``general(**given)``; None when the overloads have no one
    signature or some call binds two of them (Note [Choosers with one signature])."""
    merged = _merged(schemas)
    if merged is None or not _unique(schemas):
        return None
    positional, keywords = merged
    outs = out_names(schemas)
    params = [f"{n}: Any = {'None' if n in outs else '_MISSING'}" for n in positional]
    if keywords:
        params += ["*", *(f"{n}: Any = {'None' if n in outs else '_MISSING'}" for n in keywords)]
    all_names = positional + keywords
    overloads = ", ".join(s.overload_name or "default" for s in schemas)
    head = f"def {name}({', '.join(params)}) -> Any:"
    if len(head) > WIDTH:  # one parameter a line (sum's, with its out= overload)
        head = "\n".join([f"def {name}(", *(f"    {p}," for p in params), ") -> Any:"])
    lines = [
        head,
        f'    """{schemas[0].qualified_name}: {overloads} (Note [Choosers with one signature])."""',
    ]
    for schema, target in zip(schemas, targets):
        lines += _branch(schema, target, all_names, outs)
    lines.append(f"    return {general}(**_given({', '.join(f'{n}={n}' for n in all_names)}))")
    return lines
