"""Generated wrappers between the boxed and unboxed calling conventions.

- An *unboxing* wrapper lets a boxed caller (``call_boxed``, a fallback redispatching, an
  interpreter) call an unboxed kernel: it takes ``(op, keys, stack)``, pops exactly the
  schema's arguments, calls the kernel with them, and pushes its returns.
- A *boxing* wrapper lets the unboxed path call a boxed kernel: it takes the key set and
  the typed arguments, packs them into a stack, calls ``kernel(op, keys, stack)`` and
  returns what the kernel left on the stack as the typed result.

See Note [Generated source] and Note [Wrapper cache].

Note [A failed boxed call keeps its arguments]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
An unboxing wrapper pops the arguments, calls the kernel and pushes its returns. If the
kernel (or a list conversion before it) raises, the wrapper pushes the arguments back,
as they were, before the error leaves: a caller that catches it -- a fallback trying
another route, an interpreter reporting the failing instruction -- finds its stack as it
gave it. (PyTorch leaves the stack undefined after a failed boxed call.) The ``try``
costs nothing when nothing is raised. A *boxed* kernel owns the stack while it runs: if
it raises, the stack is as it left it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from typing_extensions import assert_never

from ..vocabulary import BoundedCache, TypedopsError
from ._convert import Conversion, SequenceKind, broadcast, to_list, to_tuple
from ._messages import BOXED_WRONG_RETURNS, KERNEL_WRONG_TUPLE
from ._shape import CallShape
from ._source import install

__all__ = [
    "unboxing_source",
    "boxing_source",
    "make_unboxing",
    "make_boxing",
    "BoxedReturnError",
]


class BoxedReturnError(TypedopsError, TypeError):
    """A kernel returned (or a boxed kernel left on the stack) the wrong number of values."""


def bad_returns(op: Any, stack: list[Any], expected: int) -> BoxedReturnError:
    return BoxedReturnError(BOXED_WRONG_RETURNS.format(op=op, count=len(stack), expected=expected))


def _call_args(shape: CallShape, keyed: bool, values: list[str]) -> str:
    """Arguments for calling a kernel: positional by position, keyword-only by name;
    ``values`` are the locals holding them, in argument order."""
    parts = ["keys"] if keyed else []
    n = len(shape.positional)
    parts += values[:n]
    parts += [f"{a.name}={v}" for a, v in zip(shape.kwarg_only, values[n:])]
    return ", ".join(parts)


def _converter(kind: SequenceKind) -> str:
    """The name generated code calls to make a value a ``kind`` (in ``UNBOXING_GLOBALS``)."""
    if kind is SequenceKind.tuple:
        return "_to_tuple"
    if kind is SequenceKind.list:
        return "_to_list"
    if kind is SequenceKind.any:
        return "_broadcast"
    assert_never(kind)


def unboxing_source(
    shape: CallShape, keyed: bool, conversions: tuple[Conversion | None, ...] = (), name: str = "make"
) -> str:
    """Source of a factory ``make(_fn)`` (or ``name``) returning ``unboxing(op, keys, stack)``.

    ``conversions`` has one ``Conversion`` (or None: none) per argument (see
    ``conversions_for``). The source needs ``_wrong_tuple``, ``_to_tuple`` and
    ``_to_list`` in its globals (``UNBOXING_GLOBALS``); generated op libraries write it
    into their module.
    """
    names = [f"a{i}" for i, _ in enumerate(shape.positional)] + [
        f"k{i}" for i, _ in enumerate(shape.kwarg_only)
    ]
    n = len(names)
    lines = [f"def {name}(_fn):", "    def unboxing(op, keys, stack):"]
    if 0 < n <= 3:  # a few pops are cheaper than a slice and a del
        lines += [f"        {name} = stack.pop()" for name in reversed(names)]
    elif n:
        lines.append(f"        {', '.join(names)}, = stack[-{n}:]")
        lines.append(f"        del stack[-{n}:]")
    if n:
        lines.append("        try:")  # Note [A failed boxed call keeps its arguments]
    body: list[str] = []
    args = list(names)
    for i, (name, conversion) in enumerate(zip(names, conversions)):
        if conversion is not None:
            # Conversion checked its size is an int: its text is digits.
            size = "" if conversion.size is None else f", {conversion.size:d}"
            args[i] = f"c{i}"
            body.append(f"{args[i]} = {_converter(conversion.kind)}({name}{size})")
    call = f"_fn({_call_args(shape, keyed, args)})"
    if shape.returns == 0:
        body.append(call)
    else:
        body.append(f"_r = {call}")
    if n:
        lines += [f"            {line}" for line in body]
        lines += ["        except BaseException:", f"            stack.extend(({', '.join(names)},))", "            raise"]
    else:
        lines += [f"        {line}" for line in body]
    if shape.returns == 1:
        lines.append("        stack.append(_r)")
    elif shape.returns > 1:
        lines.append(f"        if len(_r) != {shape.returns}:")
        lines.append(f"            raise _wrong_tuple(op, _r, {shape.returns})")
        lines.append("        stack.extend(_r)")
    lines += ["    return unboxing", ""]
    return "\n".join(lines)


def boxing_source(shape: CallShape) -> str:
    """Source of a factory ``make(_fn, _op)`` returning ``boxing(keys, *args, **kwonly)``."""
    params = ["keys"] + [f"a{i}" for i, _ in enumerate(shape.positional)]
    if shape.kwarg_only:
        params.append("*")
        params += [f"{a.name}" for a in shape.kwarg_only]
    values = [f"a{i}" for i, _ in enumerate(shape.positional)] + [a.name for a in shape.kwarg_only]
    lines = [
        "def make(_fn, _op):",
        f"    def boxing({', '.join(params)}):",
        f"        stack = [{', '.join(values)}]",
        "        _fn(_op, keys, stack)",
        f"        if len(stack) != {shape.returns}:",
        f"            raise _bad_returns(_op, stack, {shape.returns})",
    ]
    if shape.returns == 0:
        lines.append("        return None")
    elif shape.returns == 1:
        lines.append("        return stack[0]")
    else:
        lines.append("        return tuple(stack)")
    lines += ["    return boxing", ""]
    return "\n".join(lines)


def wrong_tuple(op: Any, result: Any, expected: int) -> BoxedReturnError:
    return BoxedReturnError(KERNEL_WRONG_TUPLE.format(op=op, count=len(result), expected=expected))


UNBOXING_GLOBALS: Final = {
    "_wrong_tuple": wrong_tuple, "_to_tuple": to_tuple, "_to_list": to_list, "_broadcast": broadcast,
}  # fmt: skip


# Compiled factories by shape (Note [Wrapper cache]): bounded, as a program may define
# ever new keyword-only names; an evicted factory's source goes with its last code
# (Note [Generated source]).
FACTORIES_LIMIT: Final = 1024
_unboxing_factories: Final[BoundedCache[tuple[CallShape, bool, tuple[Conversion | None, ...]], Callable[..., Any]]] = (
    BoundedCache(FACTORIES_LIMIT, "unboxing factories by shape")
)
_boxing_factories: Final[BoundedCache[CallShape, Callable[..., Any]]] = BoundedCache(
    FACTORIES_LIMIT, "boxing factories by shape"
)


def _unboxing_factory(
    shape: CallShape, keyed: bool, conversions: tuple[Conversion | None, ...]
) -> Callable[..., Any]:
    key = (shape, keyed, conversions)
    factory = _unboxing_factories.get(key)
    if factory is None:
        factory = _unboxing_factories.put(key, install(
            unboxing_source(shape, keyed, conversions),
            dict(UNBOXING_GLOBALS),
            f"unboxing {shape.describe()}{' keyed' if keyed else ''}",
            "make",
        ))
    return factory


def _boxing_factory(shape: CallShape) -> Callable[..., Any]:
    factory = _boxing_factories.get(shape)
    if factory is None:
        factory = _boxing_factories.put(
            shape, install(boxing_source(shape), {"_bad_returns": bad_returns}, f"boxing {shape.describe()}", "make")
        )
    return factory


def make_unboxing(
    shape: CallShape, kernel: Callable[..., Any], *, keyed: bool = False,
    conversions: tuple[Conversion | None, ...] = (),
) -> Callable[..., None]:
    """A boxed ``(op, keys, stack)`` callable that runs the unboxed ``kernel``."""
    if all(c is None for c in conversions):
        conversions = ()  # one compiled factory per shape, whatever the list of Nones
    wrapper: Callable[..., None] = _unboxing_factory(shape, keyed, conversions)(kernel)
    return wrapper


def make_boxing(shape: CallShape, kernel: Callable[..., None], op: Any) -> Callable[..., Any]:
    """An unboxed ``(keys, *args)`` callable that runs the boxed ``kernel`` for ``op``."""
    wrapper: Callable[..., Any] = _boxing_factory(shape)(kernel, op)
    return wrapper
