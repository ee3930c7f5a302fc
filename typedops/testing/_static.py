"""opcheck's ``test_static_dispatch``: a library's statically dispatched functions against
the dispatcher.

Note [opcheck's static dispatch check]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
A library generated with ``--static-dispatch`` (codegen/_static.py) has, per op, a function
that calls the kernel of the highest backend among its tensors' keys directly -- the one
the generator found in the yaml -- without the dispatcher. When the library is imported it
names those functions here (``register_static_functions``, through the runtime), keyed
by the op's full name. For such an op the check calls the static function and the
dispatched op on fresh copies of the arguments and compares the results and the
arguments afterwards (an in-place op's writes). They differ when the dispatcher would
call another kernel than the one the build calls: a kernel registered since for that
key, or a key above the backends that changes the result. An op no static build names
has nothing to check. The newest build naming an op wins.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from ..dispatch import OperatorHandle
from . import _messages as msg
from ._values import clone, describe, difference, same_values

__all__ = ["check_static_dispatch", "register_static_functions", "static_function"]

_STATIC: Final[dict[str, Callable[..., Any]]] = {}


def register_static_functions(functions: Mapping[str, Callable[..., Any]]) -> None:
    """Record the statically dispatched function of each op (full name -> function)."""
    _STATIC.update(functions)


def static_function(name: str) -> Callable[..., Any] | None:
    """The statically dispatched function of the op ``name``, if a static build named one."""
    return _STATIC.get(name)


def check_static_dispatch(op: OperatorHandle, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> str | None:
    fn = _STATIC.get(op.full_name)
    if fn is None:
        return None
    dynamic_args, dynamic_kwargs = clone(args), clone(dict(kwargs))
    dynamic = op(*dynamic_args, **dynamic_kwargs)
    static_args, static_kwargs = clone(args), clone(dict(kwargs))
    static = fn(*static_args, **static_kwargs)
    name = f"{fn.__module__}.{fn.__qualname__}"
    if not same_values(static, dynamic):
        static_text = describe(static) + difference(static, dynamic)
        return msg.STATIC_DIFFERS.format(fn=name, what="gives", static=static_text, dynamic=describe(dynamic))
    after_static = [*static_args, *static_kwargs.values()]
    after_dynamic = [*dynamic_args, *dynamic_kwargs.values()]
    if not same_values(after_static, after_dynamic):
        return msg.STATIC_DIFFERS.format(
            fn=name, what="leaves its arguments as", static=describe(after_static), dynamic=describe(after_dynamic)
        )
    return None
