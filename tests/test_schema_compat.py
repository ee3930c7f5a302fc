"""Backward compatibility between schema versions (Note [Backward compatibility])."""

from __future__ import annotations

import pytest

from typedops.schema import INT, SCALAR, is_backward_compatible_with, is_subtype, parse_schema, parse_type

OLD = "ns::f(Tensor self, int dim, *, Tensor(a!) out) -> Tensor(a!)"


@pytest.mark.parametrize(
    ("new", "compatible", "why"),
    [
        (OLD, True, "identical"),
        ("ns::f(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)", True, "new trailing argument with a default"),
        ("ns::f(Tensor self, int dim, *, bool keepdim=False, Tensor(a!) out) -> Tensor(a!)", True, "new keyword-only argument with a default"),
        ("ns::f(Tensor self, int dim, bool keepdim, *, Tensor(a!) out) -> Tensor(a!)", False, "new argument without a default"),
        ("ns::f(Tensor self, int? dim, *, Tensor(a!) out) -> Tensor(a!)", True, "argument type widened to optional"),
        ("ns::f(Tensor self, Scalar dim, *, Tensor(a!) out) -> Tensor(a!)", True, "int widened to Scalar"),
        ("ns::f(Tensor self, bool dim, *, Tensor(a!) out) -> Tensor(a!)", False, "argument type changed"),
        ("ns::f(Tensor self, int axis, *, Tensor(a!) out) -> Tensor(a!)", False, "argument renamed"),
        ("ns::f(Tensor self, *, int dim, Tensor(a!) out) -> Tensor(a!)", False, "positional argument moved behind '*'"),
        ("ns::f(Tensor self, *, Tensor(a!) out) -> Tensor(a!)", False, "argument removed"),
        ("ns::f(Tensor self, int dim) -> Tensor", False, "out argument removed"),
        ("ns::f.other(Tensor self, int dim, *, Tensor(a!) out) -> Tensor(a!)", False, "other overload"),
        ("ns::f(Tensor self, int dim, *, Tensor(a!) out) -> (Tensor(a!), Tensor)", False, "return added"),
    ],
)
def test_backward_compatibility(new: str, compatible: bool, why: str) -> None:
    assert is_backward_compatible_with(parse_schema(OLD), parse_schema(new)) is compatible, why


@pytest.mark.parametrize(
    ("old", "new", "compatible"),
    [
        ("f(int[2] k) -> ()", "f(int[] k) -> ()", False),  # f(3) meant f([3, 3]); int[] takes no lone int
        ("f(int[2]? k) -> ()", "f(int[]? k) -> ()", False),
        ("f(int[2] k) -> ()", "f(int[2]? k) -> ()", True),
        ("f(int[] k) -> ()", "f(int[2] k) -> ()", False),
        ("f(int[] k) -> ()", "f(int[]? k) -> ()", True),
        ("f(int[1] k) -> int[2]", "f(int[1] k) -> int[]", False),  # returns: no caller passes them
    ],
)
def test_a_sized_list_argument_stays_sized_since_it_takes_a_lone_value(old: str, new: str, compatible: bool) -> None:
    assert is_backward_compatible_with(parse_schema(old), parse_schema(new)) is compatible


def test_default_change_breaks_callers_that_relied_on_it() -> None:
    old = parse_schema("f(Tensor self, int dim=0) -> Tensor")
    assert not is_backward_compatible_with(old, parse_schema("f(Tensor self, int dim=1) -> Tensor"))
    assert is_backward_compatible_with(parse_schema("f(Tensor self, int dim) -> Tensor"), old)


def test_return_may_narrow_but_not_widen() -> None:
    old = parse_schema("f(Tensor self) -> Tensor?")
    assert is_backward_compatible_with(old, parse_schema("f(Tensor self) -> Tensor"))
    assert not is_backward_compatible_with(parse_schema("f(Tensor self) -> Tensor"), old)


@pytest.mark.parametrize(
    ("sub", "sup", "expected"),
    [
        ("int", "int?", True), ("int?", "int", False), ("int", "Scalar", True),
        ("float", "int", False), ("int[2]", "int[]", True), ("int[]", "int[2]", False),
        ("int[]", "Scalar[]", True), ("Tensor", "Any", True), ("NoneType", "Tensor?", True),
        ("(int, float)", "(Scalar, Scalar)", True), ("(int, float)", "(int, float, int)", False),
    ],
)  # fmt: skip
def test_subtype(sub: str, sup: str, expected: bool) -> None:
    assert is_subtype(parse_type(sub), parse_type(sup)) is expected
    assert is_subtype(INT, SCALAR)
