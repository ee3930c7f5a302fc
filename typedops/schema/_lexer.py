"""The schema tokenizer, parse failures, and the limits every parse runs within.

Note [Linear-time parsing]
~~~~~~~~~~~~~~~~~~~~~~~~~~
Schema text may come from anywhere (a file, a user, a fuzzer), so parsing must take time
linear in its length: 1 MB of any text is parsed or refused in well under two seconds.
The tokenizer is one compiled regex that ``findall`` runs forward over the text, and it
is written so that every match attempt succeeds where the previous match ended:

- every repeat is possessive (``*+``, ``++``), so a match never backtracks into a repeat;
- a quoted string or a bracketed group that is never closed is still one token (a string
  runs to the end of its line, a group to the next ``[`` or the end), so no alternative
  scans far ahead and then fails, leaving the same text to be scanned again;
- every form (``TOKEN_FORMS``) that can fail does so within its first three characters,
  and one-character tokens (any other character) and ``\\Z`` (the end) always match.

So the matches tile the text with no gaps and each character is read a bounded number of
times; a test checks both properties. The parsers then walk the token list forward.
Unclosed tokens are refused by the parser with a message saying what is unclosed.

Note [Nesting limit]
~~~~~~~~~~~~~~~~~~~~
The type parser recurses into ``Dict(...)``, ``Future(...)`` and tuples, and the model's
``str``, ``==`` and ``hash`` recurse through nested types. Nesting is limited to
``MAX_TYPE_DEPTH`` levels (real schemas nest at most three), so that every schema that
parses also prints, compares and hashes well inside Python's recursion limit, and deep
input is refused with ``SchemaParseError`` rather than ``RecursionError``.
"""

from __future__ import annotations

import itertools
import re
from typing import Final, NoReturn

from ..vocabulary import SchemaParseError
from ._messages import AT_COLUMN, RESERVED
from ._types import RESERVED_WORDS

__all__ = ["tokenize", "TOKEN_RE", "TOKEN_FORMS", "END", "MAX_TYPE_DEPTH", "Failure", "fail", "shown", "clipped", "check_name", "is_ident", "error"]

# Whitespace is ASCII whitespace, as in torch's lexer; any other character is a token.
_SPACE: Final = r"[ \t\n\r\f\v]"
# A string runs to its closing quote, or, unclosed, to the end of its line.
_STRING: Final = r'"(?:[^"\\\n]++|\\.)*+"?+|\'(?:[^\'\\\n]++|\\.)*+\'?+'
# The token forms, tried in order. Order matters: '->' before numbers; a bracketed group
# (list suffix or list default) is one token, kept whole so a default's text survives,
# and unclosed runs to the next '['.
TOKEN_FORMS: Final = (
    r"->|\.\.\.|::",
    r"[A-Za-z_][A-Za-z_0-9]*+(?:\.[A-Za-z_][A-Za-z_0-9]*+)*+",
    r"-?+(?:\d++(?:\.\d*+)?+|\.\d++)(?:[eE][+-]?+\d++)?+",
    _STRING,
    rf"\[(?:[^\[\]\"']++|{_STRING})*+\]?+",
    r"[^ \t\n\r\f\v]",
    r"\Z",
)
# One token per match; group 1 is the token ('' at the end: the END sentinel).
TOKEN_RE: Final = re.compile(rf"{_SPACE}*+(" + "|".join(TOKEN_FORMS) + ")")
# ``tokenize(text)`` is the list of tokens, ending with END.
tokenize: Final = TOKEN_RE.findall
END: Final = ""
MAX_TYPE_DEPTH: Final = 100
_SHOWN_LIMIT: Final = 40


class Failure(Exception):
    """Internal: a parse failure at token ``index``; turned into SchemaParseError."""

    def __init__(self, reason: str, index: int, width: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.index = index
        self.width = width


def fail(reason: str, index: int, width: int | None = None) -> NoReturn:
    raise Failure(reason, index, width)


def shown(tok: str) -> str:
    """A token as error messages show it: quoted, and shortened when long."""
    if tok == END:
        return "end of input"
    if len(tok) > _SHOWN_LIMIT:
        return f"{tok[:_SHOWN_LIMIT - 8]!r}... ({len(tok)} characters)"
    return repr(tok)


def clipped(text: str) -> str:
    """Text as error messages show it unquoted: shortened when long."""
    if len(text) > _SHOWN_LIMIT:
        return f"{text[:_SHOWN_LIMIT - 8]}... ({len(text)} characters)"
    return text


def check_name(tok: str, i: int, what: str) -> None:
    """Fail at token ``i`` when ``tok`` is a reserved word, which cannot name ``what``."""
    if tok in RESERVED_WORDS:
        fail(RESERVED.format(name=tok, what=what), i)


def is_ident(tok: str) -> bool:
    # ASCII only: a non-ASCII letter is a one-character token, never an identifier.
    first = tok[:1]
    return first == "_" or (first.isascii() and first.isalpha())


def error(failure: Failure, text: str) -> SchemaParseError:
    """Slow path: find the column of the failing token by tokenizing again with positions."""
    match = None
    for match in itertools.islice(TOKEN_RE.finditer(text), failure.index + 1):
        pass  # stop at the failing token: the rest of the text need not be read again
    assert match is not None  # finditer always yields the END match at least
    start, end = match.start(1), match.end(1)
    if start == len(text):
        start = end = len(text.rstrip(" \t\n\r\f\v"))
    width = end - start if failure.width is None else failure.width
    return SchemaParseError(AT_COLUMN.format(reason=failure.reason, column=start + 1), text, start + 1, width)
