"""Building schema objects without re-checking them: for code that already checked.

The parser checks everything it reads, inference checks every annotation, and the code
generator checks the yaml at generation time; each then builds its ``Argument``,
``Return`` and ``FunctionSchema`` objects here, skipping the ``__post_init__`` checks
the public constructors run (they would repeat the work, on the start-up path of every
op library). Nothing else should use this module: a schema built here is only as
valid as its caller made sure it is.

Parameters after the leading ones are named and defaulted as the model's fields are, so
generated code names only the fields that differ from their defaults:
``argument('alpha', t, default='1')``, ``make_return(t, alias=alias(('a',), is_write=True))``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ._model import Argument, FunctionSchema, Return
from ._types import AliasInfo, Type

__all__ = ["argument", "make_return", "schema", "alias"]

# Setting slots through their descriptors is the cheapest way to fill a frozen instance.
_new = object.__new__
_set = object.__setattr__


def _slot_setter(cls: type, field: str) -> Callable[[object, object], None]:
    """The ``__set__`` of a slot's member descriptor: fills one field of a frozen instance."""
    setter: Callable[[object, object], None] = vars(cls)[field].__set__
    return setter


_arg_name = _slot_setter(Argument, "name")
_arg_type = _slot_setter(Argument, "type")
_arg_default = _slot_setter(Argument, "default")
_arg_alias = _slot_setter(Argument, "alias")
_arg_depth = _slot_setter(Argument, "alias_depth")
_ret_type = _slot_setter(Return, "type")
_ret_name = _slot_setter(Return, "name")
_ret_alias = _slot_setter(Return, "alias")
_ret_depth = _slot_setter(Return, "alias_depth")
_fs_name = _slot_setter(FunctionSchema, "name")
_fs_namespace = _slot_setter(FunctionSchema, "namespace")
_fs_overload = _slot_setter(FunctionSchema, "overload_name")
_fs_positional = _slot_setter(FunctionSchema, "positional")
_fs_kwarg_only = _slot_setter(FunctionSchema, "kwarg_only")
_fs_returns = _slot_setter(FunctionSchema, "returns")
_fs_vararg = _slot_setter(FunctionSchema, "is_vararg")
_fs_varret = _slot_setter(FunctionSchema, "is_varret")


def argument(
    name: str, type_: Type, default: str | None = None, alias: AliasInfo | None = None, alias_depth: int = 0
) -> Argument:
    arg: Argument = _new(Argument)
    _arg_name(arg, name)
    _arg_type(arg, type_)
    _arg_default(arg, default)
    _arg_alias(arg, alias)
    _arg_depth(arg, alias_depth)
    return arg


def make_return(
    type_: Type, name: str | None = None, alias: AliasInfo | None = None, alias_depth: int = 0
) -> Return:
    ret: Return = _new(Return)
    _ret_type(ret, type_)
    _ret_name(ret, name)
    _ret_alias(ret, alias)
    _ret_depth(ret, alias_depth)
    return ret


def schema(
    name: str, namespace: str, overload: str, positional: Sequence[Argument] = (),
    kwarg_only: Sequence[Argument] = (), returns: Sequence[Return] = (), is_vararg: bool = False,
    is_varret: bool = False,
) -> FunctionSchema:
    schema: FunctionSchema = _new(FunctionSchema)
    _fs_name(schema, name)
    _fs_namespace(schema, namespace)
    _fs_overload(schema, overload)
    _fs_positional(schema, tuple(positional))
    _fs_kwarg_only(schema, tuple(kwarg_only))
    _fs_returns(schema, tuple(returns))
    _fs_vararg(schema, is_vararg)
    _fs_varret(schema, is_varret)
    return schema


def alias(before: tuple[str, ...], after: tuple[str, ...] = (), is_write: bool = False) -> AliasInfo:
    info: AliasInfo = _new(AliasInfo)
    _set(info, "before", before)
    _set(info, "after", after)
    _set(info, "is_write", is_write)
    return info
