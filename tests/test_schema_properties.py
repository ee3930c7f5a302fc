"""Property tests of the schema language: printing, both parser paths, errors, literals.

The schemas come from ``tests/strategies.py``. The example counts are kept small so the
file runs in a few seconds on a slow machine; to hunt for bugs, raise ``max_examples`` in
``_FEW`` and ``_MANY`` locally. The ``@example`` inputs are bugs found that way.
"""

from __future__ import annotations

import dataclasses
import math
import random
import re
from pathlib import Path
from collections.abc import Callable
from typing import Final

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import typedops.core

from typedops.schema import (
    INT,
    STR,
    Argument,
    ClassType,
    DefaultValue,
    EnumDefault,
    FunctionSchema,
    ListType,
    SchemaParseError,
    Type,
    TypeVar,
    format_literal,
    literal_value,
    parse_schema,
    parse_type,
)
from typedops.schema._canonical import parse_canonical
from typedops.schema._parser import parse_tokens
from typedops.schema._types import BASE_TYPE_NAMES
from tests.strategies import function_schemas, identifiers, respace
from tests.test_schema_parser import ROUND_TRIP

# No deadline: the CI machine is slow and a first example pays for warm-up.
_FEW: Final = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
_MANY: Final = settings(max_examples=200, deadline=None)


def _token_parse(text: str) -> FunctionSchema:
    """Parse ``text`` with the token parser alone, bypassing the canonical fast path."""
    return parse_tokens(text)


# -- printing and parsing generated schemas ----------------------------------------------


@_FEW
@given(function_schemas())
# A list default in the compact spelling; a string default with a raw NUL.
@example(FunctionSchema("f", positional=(Argument("x", ListType(INT), "[0,-1]"),)))
@example(FunctionSchema("f", kwarg_only=(Argument("x", STR, format_literal("\x00\r\\x")),)))
def test_printed_schema_parses_back_to_itself(schema: FunctionSchema) -> None:
    """Printing is lossless and canonical: parse(str(s)) == s, and prints the same text."""
    text = str(schema)
    parsed = parse_schema(text)
    assert parsed == schema
    assert str(parsed) == text


@_FEW
@given(function_schemas())
def test_fast_path_agrees_with_token_parser_on_printed_schemas(schema: FunctionSchema) -> None:
    """Note [Canonical fast path]: the fast path answers None or what the token parser builds."""
    text = str(schema)
    fast = parse_canonical(text)
    assert fast is None or fast == _token_parse(text) == schema


# Names for type variables and classes: identifier characters, dots and two non-ASCII
# letters, arbitrary text, and the built-in type names.
_type_names: Final = st.one_of(
    st.text("abzAZ_09.\u00e9\u00df", min_size=1, max_size=6),
    st.text(max_size=4),
    st.sampled_from(sorted(BASE_TYPE_NAMES)),
)


@_MANY
@given(st.sampled_from([TypeVar, ClassType]), _type_names)
def test_named_type_is_refused_or_prints_back(cls: Callable[[str], Type], name: str) -> None:
    """A TypeVar or ClassType is refused by its constructor or prints as text that parses back to it."""
    try:
        type_ = cls(name)
    except ValueError:
        return
    assert parse_type(str(type_)) == type_


# -- whitespace never changes meaning ---------------------------------------------------------


def _core_schemas() -> list[str]:
    """The func lines of the bundled core library: real schemas, checked in."""
    path = Path(typedops.core.__file__).parent / "native_functions.yaml"
    return [line.split("func: ", 1)[1] for line in path.read_text().splitlines() if line.startswith("- func: ")]


REAL_SCHEMAS: Final = ROUND_TRIP + _core_schemas()


def same_meaning(schema: FunctionSchema) -> FunctionSchema:
    """``schema`` with list defaults in canonical spacing: the only text whose spelling the
    model keeps (``[0,1]`` and ``[0, 1]``) and re-spacing may change."""

    def canonical(arg: Argument) -> Argument:
        if arg.default is None or arg.default[:1] != "[":
            return arg
        return dataclasses.replace(arg, default=format_literal(arg.default_value))

    return dataclasses.replace(
        schema,
        positional=tuple(map(canonical, schema.positional)),
        kwarg_only=tuple(map(canonical, schema.kwarg_only)),
    )


def check_respaced(text: str, spaced: str) -> None:
    """``spaced`` parses to the schema ``text`` does, by both parser paths."""
    expected = same_meaning(parse_schema(text))
    assert same_meaning(parse_schema(spaced)) == expected, spaced
    assert same_meaning(_token_parse(spaced)) == expected, spaced
    fast = parse_canonical(spaced)
    assert fast is None or fast == _token_parse(spaced), spaced


@_MANY
@given(st.sampled_from(REAL_SCHEMAS), st.randoms(use_true_random=False))
@example("f(Tensor x) -> (Tensor, Tensor)", None)  # '->  (' once read as one tuple-typed return
def test_respaced_real_schema_parses_the_same(text: str, rng: random.Random | None) -> None:
    """Spaces, tabs and newlines around (and inside) every token leave the parse unchanged."""
    if rng is None:
        check_respaced(text, text.replace("-> ", "->  "))
        return
    check_respaced(text, respace(text, rng.choice))


@_FEW
@given(function_schemas(), st.randoms(use_true_random=False))
def test_respaced_printed_schema_parses_the_same(schema: FunctionSchema, rng: random.Random) -> None:
    text = str(schema)
    check_respaced(text, respace(text, rng.choice))


# -- text that is not a schema -----------------------------------------------------------

# Characters that mean something in the grammar, plus some that never do.
_GRAMMAR_CHARS: Final = "()[]?!*,.:|=->\"' \\\t\n_0aZé\x00\r"
# Words, numbers, strings, multi-character operators or single characters.
_TOKEN_RE: Final = re.compile(r"""\w+|->|\.\.\.|::|"[^"]*"|'[^']*'|\S""")


@st.composite
def _mutation(draw: st.DrawFn, text: str) -> str:
    """``text`` with a character deleted or inserted, or a token deleted, repeated or copied."""
    spans = [m.span() for m in _TOKEN_RE.finditer(text)] or [(0, 0)]
    start, end = draw(st.sampled_from(spans))
    other_start, other_end = draw(st.sampled_from(spans))
    at = draw(st.integers(min_value=0, max_value=len(text)))
    char = draw(st.sampled_from(_GRAMMAR_CHARS) | st.characters())
    return draw(
        st.sampled_from(
            [
                text[:at] + text[at + 1 :],  # delete a character
                text[:at] + char + text[at:],  # insert a character
                text[:start] + text[end:],  # delete a token
                text[:end] + text[start:end] + text[end:],  # duplicate a token
                text[:at] + " " + text[other_start:other_end] + " " + text[at:],  # copy a token
                text[:start] + text[other_start:other_end] + text[end:],  # overwrite a token
            ]
        )
    )


@st.composite
def mutated_schema_texts(draw: st.DrawFn) -> str:
    """The text of a valid schema after one to three mutations: nearly, but not always, a schema."""
    text = str(draw(function_schemas(max_arguments=3)))
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        text = draw(_mutation(text))
    return text


def _rebuilt(value: object) -> object:
    """``value`` built again through the public constructors, which check every field."""
    if isinstance(value, tuple):
        return tuple(_rebuilt(item) for item in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {f.name: _rebuilt(getattr(value, f.name)) for f in dataclasses.fields(value)}
        return type(value)(**fields)
    return value


def _parse_or_refuse(text: str) -> None:
    """Parse ``text``: a SchemaParseError pointing into the text, or a schema the model accepts.

    An accepted schema must pass every constructor check, read every default, and print
    as canonical text that parses back to it.
    """
    try:
        schema = parse_schema(text)
    except SchemaParseError as error:
        assert 1 <= error.column <= len(text) + 1, (error.column, text)
        return
    assert _rebuilt(schema) == schema
    assert hash(_rebuilt(schema)) == hash(schema)
    for arg in schema.arguments:
        if arg.has_default:
            arg.default_value  # noqa: B018  # must not raise
    assert parse_schema(str(schema)) == schema


@_MANY
@given(st.text())
def test_arbitrary_text_parses_or_raises_schema_parse_error(text: str) -> None:
    """Any text gives a schema or a SchemaParseError with a column inside the text, nothing else."""
    _parse_or_refuse(text)


@_FEW
@given(mutated_schema_texts())
@example("é(int ø) -> Tensor")  # one non-ASCII letter is one token, not an identifier
@example('f(str x="\\x", str y="\\N", str z="a\rb\x00") -> ()')  # what ast.literal_eval refuses
@example("f(float x=- inf) -> ()")  # '-' and 'inf' are two tokens, printed as one
def test_mutated_schema_text_parses_or_raises_schema_parse_error(text: str) -> None:
    """Near-schemas give a schema the model accepts or a SchemaParseError, nothing else."""
    _parse_or_refuse(text)


@_FEW
@given(mutated_schema_texts())
@example("ns::f.() -> ()")  # an empty overload name
def test_fast_path_agrees_with_token_parser_on_mutated_text(text: str) -> None:
    """Whatever the fast path accepts, the token parser accepts too, as the same schema."""
    fast = parse_canonical(text)
    if fast is not None:
        assert fast == _token_parse(text)


# -- default literals ----------------------------------------------------------------------

_names: Final = identifiers.filter(lambda name: name not in ("True", "False", "None", "inf", "nan"))
_atoms: Final[st.SearchStrategy[DefaultValue]] = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(), st.text(), _names.map(EnumDefault)
)
_default_python_values: Final = _atoms | st.lists(_atoms, max_size=4).map(tuple)


def _same_value(a: DefaultValue, b: DefaultValue) -> bool:
    """Equal and of the same type all the way down (so 1 != 1.0 != True), NaN equal to NaN."""
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(_same_value(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    return type(a) is type(b) and a == b


@_MANY
@given(_default_python_values)
@example("\x00\r\n\t\\\"'")
@example((-0.0, 1e-05, 1e16, float("-inf"), float("nan")))
def test_default_literal_reads_back_as_its_value(value: DefaultValue) -> None:
    """literal_value(format_literal(v)) == v, with the same types, for every default value."""
    assert _same_value(literal_value(format_literal(value)), value)
