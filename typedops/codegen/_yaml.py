"""Reading op yaml with line numbers: a SafeLoader that remembers where each node started.

Mappings load as ``Located`` dicts and sequences as ``LocatedList`` lists; both carry the
1-based line of the node and, per key or item, the line it was written on, so every
validation error can say ``ops.yaml:12: ...``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from ._messages import CANNOT_READ, MALFORMED_YAML, MALFORMED_YAML_AT
from ._model import CodegenError

__all__ = ["Located", "LocatedList", "load_yaml"]


class Located(dict[Any, Any]):
    """A mapping from yaml, with the line of the mapping and of each key."""

    line: int = 0
    key_lines: dict[Any, int] = {}  # noqa: RUF012 -- the loader gives each instance its own

    def line_of(self, key: Any) -> int:
        return self.key_lines.get(key, self.line)


class LocatedList(list[Any]):
    """A sequence from yaml, with the line of the sequence and of each item."""

    line: int = 0
    item_lines: list[int]


# _UNTYPED: types-PyYAML leaves part of BaseConstructor.construct_object's type unknown.


class _LineLoader(yaml.SafeLoader):
    """SafeLoader whose mappings and sequences remember their lines (safe: no tags run code)."""


def _construct_mapping(loader: _LineLoader, node: yaml.MappingNode) -> Iterator[Located]:
    data = Located()
    data.line = node.start_mark.line + 1
    data.key_lines = {}
    yield data
    for key_node, value_node in node.value:
        key: Any = loader.construct_object(key_node, deep=True)  # pyright: ignore[reportUnknownMemberType] -- see _UNTYPED
        try:
            hash(key)
        except TypeError:
            raise yaml.constructor.ConstructorError(
                None, None, "found an unhashable key", key_node.start_mark
            ) from None
        data[key] = loader.construct_object(value_node, deep=True)  # pyright: ignore[reportUnknownMemberType] -- _UNTYPED
        data.key_lines[key] = key_node.start_mark.line + 1


def _construct_sequence(loader: _LineLoader, node: yaml.SequenceNode) -> Iterator[LocatedList]:
    data = LocatedList()
    data.line = node.start_mark.line + 1
    data.item_lines = [child.start_mark.line + 1 for child in node.value]
    yield data
    data.extend(loader.construct_object(child, deep=True) for child in node.value)  # pyright: ignore[reportUnknownMemberType] -- _UNTYPED


_LineLoader.add_constructor("tag:yaml.org,2002:map", _construct_mapping)
_LineLoader.add_constructor("tag:yaml.org,2002:seq", _construct_sequence)


def load_yaml(path: Path, label: str) -> Any:
    """The yaml document in ``path``; ``CodegenError`` ``label:line: ...`` when it is malformed."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise CodegenError(CANNOT_READ.format(label=label, error=error.strerror)) from None
    try:
        return yaml.load(text, Loader=_LineLoader)  # noqa: S506 -- a SafeLoader subclass
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line = mark.line + 1 if mark is not None else 0
        raise CodegenError(MALFORMED_YAML_AT.format(label=label, line=line, problem=error.problem or error.context)) from None
    except yaml.YAMLError as error:
        raise CodegenError(MALFORMED_YAML.format(label=label, error=error)) from None
