"""Laying out generated code (typedops/codegen/_layout.py): fit on a line or explode; names
packed; schema comments wrapped and unable to end early."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from typedops.codegen._layout import WIDTH, Group, comment_lines, comment_text, flat, layout, packed

ARGS = Group("positional=(", ("_argument('self', _t0)", "_argument('other', _t0)"), tuple_=True)
ONE = Group("returns=(", ("_return(_t0)",), tuple_=True)
SCHEMA = Group("_schema(", ("'add'", "'core'", "'Tensor'", ARGS, ONE), lead=3)


def test_flat_writes_calls_and_tuples() -> None:
    assert flat(ONE) == "returns=(_return(_t0),)"  # a one-item tuple keeps its comma
    assert flat(Group("f(", ("x",))) == "f(x)"
    assert flat(Group("(", (), tuple_=True)) == "()"
    assert flat(SCHEMA) == (
        "_schema('add', 'core', 'Tensor', positional=(_argument('self', _t0), _argument('other', _t0)), "
        "returns=(_return(_t0),))"
    )


def test_layout_keeps_what_fits_on_one_line() -> None:
    assert layout(ONE, "    ", prefix="x = ", suffix=",") == ["    x = returns=(_return(_t0),),"]


def test_layout_explodes_what_does_not_fit() -> None:
    # The lead items share a line; the others get a line each, with trailing commas.
    assert layout(SCHEMA, prefix="add__Tensor = ") == [
        "add__Tensor = _schema(",
        "    'add', 'core', 'Tensor',",
        "    positional=(_argument('self', _t0), _argument('other', _t0)),",
        "    returns=(_return(_t0),),",
        ")",
    ]
    deep = Group("(", tuple(f"_argument('a{i}', _t{i}, default='None')" for i in range(4)), tuple_=True)
    assert layout(deep, " " * 80) == [
        " " * 80 + "(",
        *(" " * 84 + f"_argument('a{i}', _t{i}, default='None')," for i in range(4)),
        " " * 80 + ")",
    ]


def test_a_long_text_stays_whole() -> None:
    long = "'" + "x" * 200 + "'"
    assert layout(long, prefix="y = ") == [f"y = {long}"]


def test_packed_fills_lines() -> None:
    names = [f"op{i:03}__default" for i in range(20)]
    lines = packed(names)
    assert all(len(line) <= WIDTH and line.startswith("    ") and line.endswith(",") for line in lines)
    assert len(lines) == 3 and ", ".join(lines).replace(",,", ",").split() == [f"{n}," for n in names]


def test_comment_lines_break_after_commas() -> None:
    schema = (
        "core::_to_copy(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
        "bool? pin_memory=None, bool non_blocking=False, MemoryFormat? memory_format=None) -> Tensor"
    )
    assert comment_lines(schema) == [
        "# core::_to_copy(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None,",
        "#     bool? pin_memory=None, bool non_blocking=False, MemoryFormat? memory_format=None) -> Tensor",
    ]
    assert comment_lines("f() -> ()") == ["# f() -> ()"]


def test_comment_text_escapes_what_could_end_a_comment() -> None:
    assert comment_text('s="a\rb\nc\u2028d\x0ce\x85"') == 's="a\\rb\\nc\\u2028d\\x0ce\\x85"'
    assert comment_text("Tensor(a!) self, int[2] x=[1, 2]") == "Tensor(a!) self, int[2] x=[1, 2]"


@given(st.text(max_size=400))
def test_comment_lines_are_short_single_comment_lines(text: str) -> None:
    lines = comment_lines(text)
    assert all(len(line) <= WIDTH and line.startswith("#") for line in lines)
    assert "\n".join(lines).splitlines() == lines  # no line break inside a line
    # Nothing is lost: only the breaks' spaces and the prefixes differ.
    kept = "".join(line[2:] if n == 0 else line[6:] for n, line in enumerate(lines))
    assert kept.replace(" ", "") == comment_text(text).replace(" ", "")
