"""A differential fuzz of ``parse_schema`` against torch's parser (``make compat``).

Every ``func:`` line of native_functions.yaml gives one-character mutants: each
character deleted, and at each position one character (from the grammar's alphabet)
inserted or substituted, picked by a seeded generator, so the run is the same every time.
Both parsers read every distinct mutant, and each outcome is classified:

- both refuse, or both accept with the same meaning (torch reads our printing of the
  mutant as the schema it read from the mutant): agreement;
- one accepts what the other refuses, or both accept with different meanings: a
  disagreement, put in the class ``classify`` names. Every class must be a deliberate
  difference that docs/schema.md lists; anything else is reported as ``unexplained``.
"""

from __future__ import annotations

import collections
import random
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Final

from typedops.schema import SchemaParseError, parse_schema

__all__ = ["ALPHABET", "FuzzReport", "mutants", "run"]

# Characters that mean something in the grammar, a few that could start a word or a
# number, and whitespace.
ALPHABET: Final = "()[]?!*,.:|=->\"'\\ \t_0159aAtTz"

UNEXPLAINED: Final = "unexplained"


@dataclass
class FuzzReport:
    mutants: int = 0
    agreed: int = 0
    classes: collections.Counter[str] = field(default_factory=collections.Counter)
    examples: dict[str, list[str]] = field(default_factory=dict)

    def add(self, cls: str, text: str) -> None:
        self.classes[cls] += 1
        self.examples.setdefault(cls, [])
        if len(self.examples[cls]) < 5:
            self.examples[cls].append(text)


def mutants(schema: str, rng: random.Random) -> Iterator[str]:
    """Every one-character deletion, and a random insertion or substitution per position."""
    for at in range(len(schema)):
        yield schema[:at] + schema[at + 1 :]
    for at in range(len(schema) + 1):
        char = rng.choice(ALPHABET)
        if at < len(schema) and rng.random() < 0.5:
            yield schema[:at] + char + schema[at + 1 :]
        else:
            yield schema[:at] + char + schema[at:]


def run(schemas: Iterable[str], torch_parse: Callable[[str], Any], seed: int = 0) -> FuzzReport:
    rng = random.Random(seed)
    seen: set[str] = set(schemas := list(schemas))
    report = FuzzReport()
    for schema in schemas:
        for text in mutants(schema, rng):
            if text in seen:
                continue
            seen.add(text)
            report.mutants += 1
            cls = _compare(text, torch_parse)
            if cls is None:
                report.agreed += 1
            else:
                report.add(cls, text)
    return report


def _compare(text: str, torch_parse: Callable[[str], Any]) -> str | None:
    """None when both parsers agree on ``text``, else the disagreement's class."""
    try:
        theirs = torch_parse(text)
    except Exception:  # noqa: BLE001  # torch raises RuntimeError and others
        theirs = None
    try:
        ours = parse_schema(text)
    except SchemaParseError as error:
        return None if theirs is None else _we_refuse(text, error.reason, theirs)
    if theirs is None:
        return _we_accept(text)
    try:
        same = torch_parse(str(ours)) == theirs
    except Exception:  # noqa: BLE001
        same = False
    return None if same else _both_accept(text)


# -- the classes ---------------------------------------------------------------------------
# Each maps to a row of the table of deliberate differences in docs/schema.md.

# Where torch accepts and typedops refuses: a pattern on typedops' reason.
_REFUSAL_CLASSES: Final = [
    ("names must be unique", re.compile(r"appears twice; argument names must be unique|return name .* appears twice")),
    ("one '*'", re.compile(r"'\*' appears twice")),
    ("one '?'", re.compile(r"'\?' applied twice")),
    ("legacy '!'", re.compile(r"found '!'|unexpected '!'")),
    ("required after defaulted", re.compile(r"has no default but follows")),
    ("list size is a whole number", re.compile(r"a list size must be a whole number")),
    ("type variables are identifiers", re.compile(r"unknown type '[a-z][^']*\.[^']*'; class type")),
    ("default fits its type", re.compile(r"does not fit type")),
    ("one alias annotation", re.compile(r"a type takes at most one alias annotation")),
]


def _we_refuse(text: str, reason: str, theirs: Any) -> str:
    for name, pattern in _REFUSAL_CLASSES:
        if pattern.search(reason):
            return name
    return f"{UNEXPLAINED}: torch accepts, typedops refuses: {reason.rsplit(' (column', 1)[0]}"


def _we_accept(text: str) -> str:
    return f"{UNEXPLAINED}: typedops accepts, torch refuses"


def _both_accept(text: str) -> str:
    return f"{UNEXPLAINED}: both accept, meanings differ"
