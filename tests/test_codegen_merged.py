"""Overload choosers with one plain signature (typedops/codegen/_merged.py)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import typedops.core._generated as generated
from typedops import core, tensor
from typedops.codegen._api import chooser_lines
from typedops.codegen._merged import GIVEN_LINES, merged_chooser_lines
from typedops.dispatch import binding_problem
from typedops.schema import FunctionSchema, parse_schema
from tests.helpers import bound_overload

_SUM = parse_schema("ns::sum(Tensor self, *, ScalarType? dtype=None) -> Tensor")
_SUM_DIM = parse_schema("ns::sum.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor")


def test_sum_and_sum_dim_share_one_signature() -> None:
    assert merged_chooser_lines("sum", [_SUM, _SUM_DIM], ["a", "b"], "_any_sum") == [
        "def sum(self: Any = _MISSING, dim: Any = _MISSING, keepdim: Any = _MISSING, *, dtype: Any = _MISSING) -> Any:",
        '    """ns::sum: default, dim (Note [Choosers with one signature])."""',
        "    if self is not _MISSING and dim is _MISSING and keepdim is _MISSING:",
        "        if dtype is _MISSING:",
        "            return a(self)",
        "        return a(self, dtype=dtype)",
        "    if self is not _MISSING and dim is not _MISSING:",
        "        if keepdim is _MISSING:",
        "            if dtype is _MISSING:",
        "                return b(self, dim)",
        "            return b(self, dim, dtype=dtype)",
        "        if dtype is _MISSING:",
        "            return b(self, dim, keepdim)",
        "        return b(self, dim, keepdim, dtype=dtype)",
        "    return _any_sum(**_given(self=self, dim=dim, keepdim=keepdim, dtype=dtype))",
    ]


def test_a_required_keyword_is_passed_by_keyword() -> None:
    plain = parse_schema("ns::exp(Tensor self) -> Tensor")
    out = parse_schema("ns::exp.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)")
    lines = merged_chooser_lines("exp", [plain, out], ["a", "b"], "_g")
    assert lines is not None and lines[4:6] == [
        "    if self is not _MISSING and out is not None:",  # Note [out=None] in dispatch/_ops.py
        "        return b(self, out=out)",
    ]


def test_more_optional_arguments_than_are_expanded_pass_through_given() -> None:
    """Past two optional arguments, those given go through ``_given``; an optional
    positional argument after one not given goes by keyword."""
    plain = parse_schema("ns::f(Tensor self, int a=0, int b=0, *, int c=0) -> Tensor")
    out = parse_schema("ns::f.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)")
    lines = merged_chooser_lines("f", [plain, out], ["p", "o"], "_g")
    assert lines is not None and lines[2:6] == [
        "    if self is not _MISSING and out is None:",
        "        if a is _MISSING and b is _MISSING and c is _MISSING:",
        "            return p(self)",
        "        return p(self, **_given(a=a, b=b, c=c))",
    ]
    two = parse_schema("ns::g(Tensor self, int a=0, int b=0) -> Tensor")
    lines = merged_chooser_lines("g", [two, parse_schema("ns::g.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)")],
                                 ["p", "o"], "_g")  # fmt: skip
    assert lines is not None and "            return p(self, b=b)" in lines


@pytest.mark.parametrize(
    "schemas",
    [
        [  # the same names: only the types tell them apart
            "ns::add.Tensor(Tensor self, Tensor other) -> Tensor",
            "ns::add.Scalar(Tensor self, Scalar other) -> Tensor",
        ],
        [  # alpha keyword-only in one, positional in the other
            "ns::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
            "ns::add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor",
        ],
        ["ns::f(Tensor self, int x) -> Tensor", "ns::f.y(Tensor self, int y) -> Tensor"],  # x and y at one place
        ["ns::f(Tensor self, int x=0) -> Tensor", "ns::f.y(Tensor self, *, bool y=False) -> Tensor"],  # f(a) binds both
    ],
)
def test_no_one_signature(schemas: list[str]) -> None:
    parsed = [parse_schema(s) for s in schemas]
    assert merged_chooser_lines("f", parsed, ["a", "b"], "_g") is None


def test_an_out_argument_defaults_to_none_and_none_is_no_out() -> None:
    """Note [out=None] in typedops/dispatch/_ops.py: ``out`` defaults to None, the test
    that it was given costs what ``is _MISSING`` did, and a None passed on reaches the
    general chooser, which drops it."""
    plain = parse_schema("ns::exp(Tensor self) -> Tensor")
    out = parse_schema("ns::exp.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)")
    lines = merged_chooser_lines("exp", [plain, out], ["a", "b"], "_g")
    assert lines is not None and lines[:4] == [
        "def exp(self: Any = _MISSING, *, out: Any = None) -> Any:",
        '    """ns::exp: default, out (Note [Choosers with one signature])."""',
        "    if self is not _MISSING and out is None:",
        "        return a(self)",
    ]
    general, merged = _choosers("exp", [plain, out])
    x = tensor([1.0])
    assert merged(x, out=None) == merged(x) == general(x, out=None) == 0 and merged(x, out=x) == 1
    assert merged(self=x, out=None) == 0


def test_the_core_sum_function_and_method_take_every_call_form() -> None:
    x = tensor([[1.0, 2.0], [3.0, 4.0]])
    assert core.sum(x).tolist() == 10.0 and core.sum(x, dtype=None).tolist() == 10.0 and x.sum().tolist() == 10.0
    assert core.sum(x, [0]).tolist() == [4.0, 6.0] and core.sum(x, dim=[1], keepdim=True).tolist() == [[3.0], [7.0]]
    assert x.sum(0, True).tolist() == [[4.0, 6.0]] and x.sum(dim=1).tolist() == [3.0, 7.0]
    assert core.sum(self=x, dim=0).tolist() == [4.0, 6.0]
    with pytest.raises(TypeError, match="^sum\\(\\) got an unexpected keyword argument 'keepdim'$"):
        core.sum(x, keepdim=True)  # type: ignore[call-overload]  # sum.dim_IntList requires dim: the default overload's error, as before
    with pytest.raises(TypeError, match="no overload of core::sum takes these arguments"):
        core.sum(dim=0)  # type: ignore[call-overload]


# -- every one-signature chooser of the core library picks what the general chooser picks

_CHOOSERS: list[tuple[str, list[FunctionSchema]]] = sorted(
    (name[len("_CANDIDATES_"):], [schema for schema, _ in table])
    for name, table in vars(generated).items()
    if name.startswith("_CANDIDATES_")
    and merged_chooser_lines("f", [schema for schema, _ in table], ["t"] * len(table), "_g") is not None
)


def test_the_core_library_has_one_signature_choosers() -> None:
    assert {"sum", "mean", "tanh", "exp"} <= {name for name, _ in _CHOOSERS}


def _choosers(name: str, schemas: list[FunctionSchema]) -> tuple[Any, Any]:
    """The general and the one-signature chooser of ``schemas``, each returning the index
    of the overload it calls (None: ``choose``'s binding rule found none)."""

    def choose(_name: str, candidates: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> int | None:
        return next((i for i, s in enumerate(candidates) if binding_problem(s, args, kwargs) is None), None)

    targets = [f"_t{i}" for i in range(len(schemas))]
    namespace: dict[str, Any] = {
        "Any": Any, "_Tensor": type(tensor(0.0)), "_NUMBERS": (int, float, complex), "_MISSING": object(),
        "_choose": choose, "_C": schemas,
        **{t: (lambda i: lambda *a, **k: i)(i) for i, t in enumerate(targets)},
    }  # fmt: skip
    merged = merged_chooser_lines(name, schemas, targets, f"_any_{name}")
    assert merged is not None
    source = [*chooser_lines(f"_any_{name}", schemas, targets, "_C"), *merged, *GIVEN_LINES]
    exec("\n".join(source), namespace)
    return namespace[f"_any_{name}"], namespace[name]


_VALUES = st.sampled_from([tensor([1.0, 2.0]), 0, 2.5, [0], None, True, "a"])



@given(st.data())
@settings(max_examples=400, deadline=None)
def test_a_one_signature_chooser_picks_what_the_general_one_picks(data: st.DataObject) -> None:
    name, schemas = data.draw(st.sampled_from(_CHOOSERS))
    names = sorted({a.name for s in schemas for a in s.arguments})
    args = tuple(data.draw(st.lists(_VALUES, max_size=4)))
    kwargs = data.draw(st.dictionaries(st.sampled_from([*names, "other_name"]), _VALUES, max_size=3))
    general, merged = _choosers(name, schemas)
    picked = general(*args, **kwargs)
    expected = bound_overload(name, schemas, args, kwargs)
    try:
        got = merged(*args, **kwargs)
    except TypeError:  # Python's binding refused the call: so does the binding rule
        assert expected is None
        return
    if expected is not None:  # a call no overload takes may get any overload's own error
        assert got == picked == expected
