"""The tokenizer reads any text in linear time (Note [Linear-time parsing] in _lexer.py).

No timings: the tests check the two structural facts the note's argument rests on. The
regexes never backtrack into a repeat, and the token matches tile the text, so no match
attempt fails after reading ahead (which, repeated at each position, was quadratic:
``"'a\\" * 20000`` took ~50 s).
"""

from __future__ import annotations

import importlib
import re
from typing import Any, Final

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from typedops.schema._defaults import LITERAL_RE
from typedops.schema._lexer import END, TOKEN_FORMS, TOKEN_RE, tokenize

_sre: Any = importlib.import_module("re._parser")
_GREEDY: Final = {_sre.MAX_REPEAT, _sre.MIN_REPEAT}
_MAXREPEAT: Final = _sre.MAXREPEAT


def _backtracking_repeats(items: Any) -> list[str]:
    """The unbounded greedy or lazy repeats anywhere in a parsed pattern."""
    found: list[str] = []
    for op, arg in items:
        if op in _GREEDY and arg[1] > 1:
            found.append(f"{op} {arg[:2]}")
        children = arg if isinstance(arg, (list, tuple)) else ()
        for child in children:
            if isinstance(child, _sre.SubPattern) or (isinstance(child, list) and child and isinstance(child[0], tuple)):
                found += _backtracking_repeats(child)
            elif isinstance(child, list):  # a BRANCH's alternatives
                for alt in child:
                    if isinstance(alt, (list, _sre.SubPattern)):
                        found += _backtracking_repeats(alt)
    return found


@pytest.mark.parametrize("regex", [TOKEN_RE, LITERAL_RE], ids=["TOKEN_RE", "LITERAL_RE"])
def test_every_repeat_is_possessive(regex: re.Pattern[str]) -> None:
    assert _backtracking_repeats(_sre.parse(regex.pattern)) == []


def test_the_repeat_finder_finds_greedy_repeats() -> None:
    """The check above can fail: a greedy ``*`` and ``+`` are found, ``?`` is bounded."""
    assert len(_backtracking_repeats(_sre.parse(r"a*(b|c+)x?"))) == 2


# Note [Linear-time parsing]: a form that fails does so within its first three characters.
_DECIDED_WITHIN: Final = 3
_FORMS: Final = [re.compile(form) for form in TOKEN_FORMS]


@settings(max_examples=500, deadline=None)
@given(
    st.sampled_from(range(len(_FORMS))),
    st.text(alphabet="()[]?!*,.:|=->\"'\\ \t\n_0aZe+\x00", min_size=_DECIDED_WITHIN + 1, max_size=12),
    st.text(alphabet="]\"'0a", max_size=3),
)
@example(3, "'aaaa", "'")  # an unclosed string: once it scanned to the end, then failed
@example(4, "[aaaa", "]")  # an unclosed list group, likewise
def test_a_failing_token_form_fails_within_its_first_characters(form: int, text: str, tail: str) -> None:
    """If a form fails on ``text``, it fails on whatever follows ``text``'s first characters
    (``text`` is longer than those, so the end of input decides nothing).

    So a failed match attempt never reads far ahead: the tokenizer reads each character a
    bounded number of times.
    """
    if _FORMS[form].match(text) is None:
        assert _FORMS[form].match(text[:_DECIDED_WITHIN] + tail) is None


_ADVERSARIAL: Final = [
    "'a\\" * 200,
    '"a\\' * 200,
    "[" * 200,
    "[ '" * 200,
    "[a" * 200,
    "(" * 200,
    "- " * 200,
    "1e" * 200,
    "a." * 200,
    " " * 200,
    "f(int[] x=[" + "1, " * 200,
]


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="()[]?!*,.:|=->\"'\\ \t\n_0aZé\x00\r") | st.text())
@example("")
def test_token_matches_tile_the_text(text: str) -> None:
    """Each match starts where the previous one ended; the tokens end with END."""
    check_tiling(text)


@pytest.mark.parametrize("text", _ADVERSARIAL, ids=range(len(_ADVERSARIAL)))
def test_token_matches_tile_adversarial_text(text: str) -> None:
    check_tiling(text)


def check_tiling(text: str) -> None:
    matches = list(TOKEN_RE.finditer(text))
    position = 0
    for match in matches:
        assert match.start() == position, (text, match)
        position = match.end()
    assert position == len(text)
    # Tokens end with END: once, or twice when the text ends in whitespace (the first
    # END match takes the whitespace, the second is empty).
    first_end = [m.group(1) for m in matches].index(END)
    assert all(m.group(1) == END for m in matches[first_end:])
    assert len(matches) - first_end <= 2
    assert matches[first_end].end() == len(text)
    assert tokenize(text) == [m.group(1) for m in matches]
