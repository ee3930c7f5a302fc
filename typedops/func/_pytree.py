"""Pytrees: nested tuples, lists and dicts, flattened to their leaves and rebuilt.

The differentiated arguments of ``grad`` may be such nests of tensors (a model's parameters
as a dict, a tuple of weight and bias); their gradients come back in the same nest.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["TreeSpec", "flatten", "unflatten", "tree_map", "leaf_paths"]


Kind = Literal["leaf", "tuple", "list", "dict"]


@dataclass(frozen=True)
class TreeSpec:
    """The shape of a nest: ``kind`` is "leaf", "tuple", "list" or "dict"; a tuple keeps its
    own type (a namedtuple is rebuilt as itself), a dict its keys in order."""

    kind: Kind
    children: tuple[TreeSpec, ...] = ()
    keys: tuple[Any, ...] = ()
    cls: type | None = None


_LEAF = TreeSpec("leaf")


def flatten(tree: Any) -> tuple[list[Any], TreeSpec]:
    """The leaves of ``tree`` in order, and its spec (``unflatten``'s inverse)."""
    leaves: list[Any] = []
    return leaves, _flatten(tree, leaves)


def _flatten(tree: Any, leaves: list[Any]) -> TreeSpec:
    if isinstance(tree, tuple):
        items: tuple[Any, ...] = tree  # pyright: ignore[reportUnknownVariableType] -- any tuple
        return TreeSpec("tuple", tuple(_flatten(x, leaves) for x in items), cls=type(items))
    if isinstance(tree, list):
        values: list[Any] = tree  # pyright: ignore[reportUnknownVariableType] -- any list
        return TreeSpec("list", tuple(_flatten(x, leaves) for x in values))
    if isinstance(tree, dict):
        mapping: dict[Any, Any] = tree  # pyright: ignore[reportUnknownVariableType] -- any dict
        keys = tuple(mapping)
        return TreeSpec("dict", tuple(_flatten(mapping[k], leaves) for k in keys), keys=keys)
    leaves.append(tree)
    return _LEAF


def unflatten(leaves: list[Any], spec: TreeSpec) -> Any:
    """The nest of shape ``spec`` holding ``leaves`` in order."""
    it = iter(leaves)
    return _build(spec, it)


def _build(spec: TreeSpec, it: Any) -> Any:
    if spec.kind == "leaf":
        return next(it)
    children = [_build(child, it) for child in spec.children]
    if spec.kind == "list":
        return children
    if spec.kind == "dict":
        return dict(zip(spec.keys, children))
    cls = spec.cls
    if cls is None or cls is tuple:
        return tuple(children)
    if hasattr(cls, "_fields"):  # a namedtuple takes its fields positionally
        return cls(*children)
    return cls(children)


def tree_map(fn: Callable[[Any], Any], tree: Any) -> Any:
    """``tree`` with ``fn`` applied to every leaf."""
    leaves, spec = flatten(tree)
    return unflatten([fn(x) for x in leaves], spec)


def leaf_paths(spec: TreeSpec, prefix: str) -> list[str]:
    """Readable paths of the leaves of ``spec``, in order: ``args[1]['w'][0]``."""
    if spec.kind == "leaf":
        return [prefix]
    if spec.kind == "dict":
        labels = [f"[{k!r}]" for k in spec.keys]
    else:
        labels = [f"[{i}]" for i in range(len(spec.children))]
    return [path for child, label in zip(spec.children, labels) for path in leaf_paths(child, prefix + label)]
