"""Backward compatibility between two versions of a schema.

Note [Backward compatibility]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
A program saved against an old schema calls the op boxed, by position: it pushes the old
non-out arguments in order (possibly fewer, relying on defaults), then the out arguments.
A runtime can run it against a new schema when:

- the name, overload name and varargs/varret flags are unchanged;
- each old non-out argument is still there at the same position, with the same name
  (callers may pass it by keyword), a type that accepts every old value -- a sized list
  (``int[2]``) also takes a lone element, so it stays a sized list, never ``int[]`` --
  the same default if it had one, and not moved behind ``*`` (a positional caller would break);
- every new non-out argument after them has a default, so the runtime can fill it in;
- the out arguments are the same in number, each accepting the old values;
- each return is still there, with a type whose values the old caller can handle.
"""

from __future__ import annotations

from typing import Final

from ._model import Argument, FunctionSchema
from ._types import ANY, BaseType, ListType, OptionalType, TupleType, Type

__all__ = ["is_backward_compatible_with", "is_subtype"]

# Values of the key type are also values of every type in its set.
_WIDENINGS: Final[dict[str, frozenset[str]]] = {
    "int": frozenset({"SymInt", "Scalar", "float", "complex"}),
    "SymInt": frozenset({"Scalar"}),
    "float": frozenset({"Scalar", "complex"}),
    "complex": frozenset({"Scalar"}),
    "bool": frozenset({"Scalar", "SymBool"}),
    "SymBool": frozenset(),
    "SymFloat": frozenset({"Scalar"}),
}


def is_subtype(sub: Type, sup: Type) -> bool:
    """Whether every value of ``sub`` is also a value of ``sup`` (``int`` <: ``int?`` <: ``Any``)."""
    if sub == sup or sup == ANY:
        return True
    if isinstance(sup, OptionalType):
        if isinstance(sub, OptionalType):
            return is_subtype(sub.elem, sup.elem)
        return sub == BaseType("NoneType") or is_subtype(sub, sup.elem)
    if isinstance(sub, BaseType) and isinstance(sup, BaseType):
        return sup.name in _WIDENINGS.get(sub.name, frozenset())
    if isinstance(sub, ListType) and isinstance(sup, ListType):
        # A sized list is a list; a list stays a list of the wider element type.
        size_ok = sup.size is None or sub.size == sup.size
        return size_ok and is_subtype(sub.elem, sup.elem)
    if isinstance(sub, TupleType) and isinstance(sup, TupleType):
        return len(sub.elems) == len(sup.elems) and all(
            is_subtype(a, b) for a, b in zip(sub.elems, sup.elems)
        )
    return False


def _takes_a_lone_value(t: Type) -> bool:
    """Whether an argument of type ``t`` takes a lone element too: a sized list, ``int[2]``
    (``f(x, 3)`` means ``[3, 3]``), also when optional."""
    if isinstance(t, OptionalType):
        t = t.elem
    return isinstance(t, ListType) and t.size is not None


def _argument_still_fits(old: Argument, new: Argument) -> bool:
    if old.name != new.name or not is_subtype(old.type, new.type):
        return False
    if _takes_a_lone_value(old.type) and not _takes_a_lone_value(new.type):
        return False  # int[2] -> int[]: a caller passing a lone int breaks (as torch judges it)
    if old.is_write != new.is_write:
        return False
    return old.default is None or old.default == new.default


def is_backward_compatible_with(old: FunctionSchema, new: FunctionSchema) -> bool:
    """Whether a caller written against ``old`` still works against ``new``.

    See Note [Backward compatibility] for the rules.
    """
    if (old.namespace, old.name, old.overload_name) != (new.namespace, new.name, new.overload_name):
        return False
    if (old.is_vararg, old.is_varret) != (new.is_vararg, new.is_varret):
        return False

    old_outs, new_outs = old.out_arguments, new.out_arguments
    old_args = [a for a in old.arguments if a not in old_outs]
    new_args = [a for a in new.arguments if a not in new_outs]
    if len(new_args) < len(old_args) or len(new_outs) != len(old_outs):
        return False
    new_kwarg_only = {a.name for a in new.kwarg_only}
    for old_arg, new_arg in zip(old_args, new_args):
        if not _argument_still_fits(old_arg, new_arg):
            return False
        if new_arg.name in new_kwarg_only and old_arg not in old.kwarg_only:
            return False  # moved behind '*': positional callers break
    if any(not a.has_default for a in new_args[len(old_args):]):
        return False
    if not all(_argument_still_fits(o, n) for o, n in zip(old_outs, new_outs)):
        return False

    if len(old.returns) != len(new.returns):
        return False
    return all(
        is_subtype(n.type, o.type) and (o.name is None or o.name == n.name)
        for o, n in zip(old.returns, new.returns)
    )
