"""Support code that generated modules import at run time (kept small: no yaml, no codegen)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..dispatch._ops import _binding_problem
from ..schema import FunctionSchema

__all__ = ["choose", "lazy_method", "no_static_kernel"]


def choose(
    name: str, candidates: tuple[tuple[FunctionSchema, Callable[..., Any]], ...], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    """Call the first candidate whose schema binds the arguments (the ops packet's rule)."""
    reasons = []
    for schema, fn in candidates:
        problem = _binding_problem(schema, args, kwargs)
        if problem is None:
            return fn(*args, **kwargs)
        reasons.append(f"  {schema}: {problem}")
    raise TypeError(f"no overload of {name} takes these arguments. Candidates:\n" + "\n".join(reasons))


def lazy_method(cls: type, name: str, handle: Any) -> Callable[..., Any]:
    """A method that, on first call, replaces itself on ``cls`` with the op's entry function."""

    def first_call(*args: Any, **kwargs: Any) -> Any:
        fn = handle.call
        setattr(cls, name, fn)
        return fn(*args, **kwargs)

    first_call.__name__ = first_call.__qualname__ = name
    return first_call


def no_static_kernel(name: str, bits: int, backends: str) -> RuntimeError:
    from ..dispatch import DispatchKeySet

    return RuntimeError(
        f"{name} has no statically dispatched kernel for {DispatchKeySet.from_bits(bits)!r}; "
        f"this build dispatches statically to {backends} only -- regenerate with that backend "
        "in --static-dispatch, or use the dispatched build"
    )
