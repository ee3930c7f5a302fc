"""Laying out generated expressions in lines a person can read (at most ``WIDTH`` wide).

An expression is a tree: text (``"_t0"``, ``"'add'"``) or a ``Group`` of items in brackets
(a call, a tuple, a keyword argument whose value is a tuple). A group that fits on its
line is written on it; one that does not is *exploded*, as black would: its opening on
the line, its items one per line (each laid out the same way) with a trailing comma, its
closing bracket on a line of its own. Text never breaks, so a line holding one very long
literal can still pass ``WIDTH``; nothing else does.
"""

from __future__ import annotations

from typing import Final, NamedTuple, Union

__all__ = ["Group", "Node", "flat", "layout", "packed", "comment_lines", "comment_text", "WIDTH", "INDENT"]

WIDTH: Final = 120
INDENT: Final = "    "


class Group(NamedTuple):
    """``opening`` (``"_schema("``, ``"positional=("``, ``"("``) and its items up to ``")"``.

    ``lead`` items stay together on the first line of an exploded group (a call's
    self-explanatory leading arguments: ``'add', 'core', 'Tensor',``); ``tuple_`` writes a
    one-item group as a tuple, ``(x,)``.
    """

    opening: str
    items: tuple[Node, ...]
    lead: int = 0
    tuple_: bool = False


Node = Union[str, Group]


def flat(node: Node) -> str:
    """``node`` on one line."""
    if isinstance(node, str):
        return node
    inner = ", ".join(flat(item) for item in node.items)
    comma = "," if node.tuple_ and len(node.items) == 1 else ""
    return f"{node.opening}{inner}{comma})"


def layout(node: Node, indent: str = "", prefix: str = "", suffix: str = "") -> list[str]:
    """``node`` as lines starting at ``indent``, after ``prefix`` on its first line and with
    ``suffix`` after its last: on one line if that fits ``WIDTH``, else exploded."""
    one_line = f"{indent}{prefix}{flat(node)}{suffix}"
    if isinstance(node, str) or len(one_line) <= WIDTH or not node.items:
        return [one_line]
    inner = indent + INDENT
    lines = [f"{indent}{prefix}{node.opening}"]
    if node.lead:
        lines.append(inner + "".join(f"{flat(item)}, " for item in node.items[: node.lead]).rstrip())
    for item in node.items[node.lead :]:
        lines += layout(item, inner, suffix=",")
    lines.append(f"{indent}){suffix}")
    return lines


def packed(items: list[str], indent: str = INDENT) -> list[str]:
    """``items`` comma-separated (with a trailing comma) on as few lines at ``indent`` as
    fit ``WIDTH``: a list of names reads better filled than one name per line."""
    lines = [indent]
    for item in items:
        if len(lines[-1]) + len(item) + 1 > WIDTH and lines[-1] != indent:
            lines[-1] = lines[-1].rstrip()
            lines.append(indent)
        lines[-1] += f"{item}, "
    return [line.rstrip() for line in lines]


def comment_lines(text: str) -> list[str]:
    """``text`` as ``#`` comment lines of at most ``WIDTH``, broken after ``", "`` where it
    can be (continuation lines indented), else anywhere.

    The text goes through ``comment_text``, so no character of it can end the comment.
    """
    safe = comment_text(text)
    first, rest = "# ", "#     "
    lines: list[str] = []
    line = first
    for piece in _pieces(safe):
        if len(line) + len(piece) > WIDTH and line.strip("# "):
            lines.append(line.rstrip())
            line = rest
            piece = piece.lstrip()
        while len(line) + len(piece) > WIDTH:  # one piece longer than a line: cut it
            cut = WIDTH - len(line)
            lines.append(line + piece[:cut])
            line, piece = rest, piece[cut:]
        line += piece
    lines.append(line.rstrip())
    return lines


def comment_text(text: str) -> str:
    """``text`` made safe to follow ``#``: a comment must not end early, so every character
    ``str.isprintable`` refuses (line breaks among them) is written as its ``repr`` escape
    and what follows it stays inside the comment. See Note [Nothing unvalidated reaches
    source] in _validate.py."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _pieces(text: str) -> list[str]:
    """``text`` cut after every ``", "``: the places a comment line may break."""
    parts = text.split(", ")
    return [part + ", " for part in parts[:-1]] + [parts[-1]]
