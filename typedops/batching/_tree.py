"""Pytrees: nested arguments and outputs as flat lists. Tuples (a namedtuple or other tuple
subclass keeps its type), lists and dicts are containers, everything else is a leaf
(torch.utils._pytree's model, for the containers vmap and grad take). The one pytree of the
library: ``typedops.func`` uses it through this package's exports.

A ``Spec`` is the structure without the leaves; ``broadcast_dims`` spreads an ``in_dims``
(or ``out_dims``) over a structure the way torch.vmap does: an int or None stands for
every leaf below it, a container must match the structure's container.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

__all__ = ["Spec", "flatten", "unflatten", "tree_map", "leaf_paths", "broadcast_dims", "LEAF"]


@dataclass(frozen=True, slots=True)
class Spec:
    """A container kind ("tuple", "list", "dict") with its keys and children, or a leaf;
    ``cls`` is a tuple's own type when it is not ``tuple`` itself (a namedtuple)."""

    kind: str
    children: tuple[Spec, ...] = ()
    keys: tuple[Any, ...] = ()
    cls: type | None = None

    @property
    def leaves(self) -> int:
        return 1 if self.kind == "leaf" else sum(c.leaves for c in self.children)

    def __str__(self) -> str:
        if self.kind == "leaf":
            return "*"
        if self.kind == "dict":
            return "{" + ", ".join(f"{k!r}: {c}" for k, c in zip(self.keys, self.children)) + "}"
        inner = ", ".join(str(c) for c in self.children)
        if self.kind == "tuple":
            return f"({inner},)" if len(self.children) == 1 else f"({inner})"
        return f"[{inner}]"


LEAF = Spec("leaf")


def flatten(value: Any) -> tuple[list[Any], Spec]:
    leaves: list[Any] = []
    return leaves, _flatten(value, leaves)


def _flatten(value: Any, leaves: list[Any]) -> Spec:
    if isinstance(value, tuple):
        items = cast("Sequence[Any]", value)
        cls = type(items)
        return Spec("tuple", tuple(_flatten(v, leaves) for v in items), (), None if cls is tuple else cls)
    if isinstance(value, list):
        return Spec("list", tuple(_flatten(v, leaves) for v in cast("Sequence[Any]", value)))
    if isinstance(value, dict):
        mapping = cast("Mapping[Any, Any]", value)
        keys = tuple(mapping)
        return Spec("dict", tuple(_flatten(mapping[k], leaves) for k in keys), keys)
    leaves.append(value)
    return LEAF


def unflatten(leaves: list[Any], spec: Spec) -> Any:
    it = iter(leaves)
    return _build(spec, it.__next__)


def _build(spec: Spec, take: Callable[[], Any]) -> Any:
    if spec.kind == "leaf":
        return take()
    children = [_build(c, take) for c in spec.children]
    if spec.kind == "list":
        return children
    if spec.kind == "dict":
        return dict(zip(spec.keys, children))
    cls: Any = spec.cls
    if cls is None:
        return tuple(children)
    if hasattr(cls, "_fields"):  # a namedtuple takes its fields positionally
        return cls._make(children)
    return cls(children)


def tree_map(fn: Callable[[Any], Any], tree: Any) -> Any:
    """``tree`` with ``fn`` applied to every leaf."""
    leaves, spec = flatten(tree)
    return unflatten([fn(x) for x in leaves], spec)


def leaf_paths(spec: Spec, prefix: str) -> list[str]:
    """Readable paths of the leaves of ``spec``, in order: ``args[1]['w'][0]``."""
    if spec.kind == "leaf":
        return [prefix]
    if spec.kind == "dict":
        labels = [f"[{k!r}]" for k in spec.keys]
    else:
        labels = [f"[{i}]" for i in range(len(spec.children))]
    return [path for child, label in zip(spec.children, labels) for path in leaf_paths(child, prefix + label)]


def broadcast_dims(dims: Any, spec: Spec) -> list[Any] | None:
    """One dim per leaf of ``spec``, or None when ``dims`` does not fit its structure."""
    found: list[Any] = []
    return found if _broadcast(dims, spec, found) else None


def _broadcast(dims: Any, spec: Spec, found: list[Any]) -> bool:
    if not isinstance(dims, (tuple, list, dict)):
        found.extend([dims] * spec.leaves)
        return True
    if spec.kind == "leaf":
        return False
    if isinstance(dims, dict):
        mapping = cast("Mapping[Any, Any]", dims)
        if spec.kind != "dict" or set(mapping) != set(spec.keys):
            return False
        return all(_broadcast(mapping[k], c, found) for k, c in zip(spec.keys, spec.children))
    items = cast("Sequence[Any]", dims)
    kind = "tuple" if isinstance(dims, tuple) else "list"
    if spec.kind != kind or len(items) != len(spec.children):
        return False
    return all(_broadcast(d, c, found) for d, c in zip(items, spec.children))
