"""The boxed argument check ``mismatch`` (boxing/_ivalue.py): Note [Ints are int64]."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from typedops.boxing import mismatch
from typedops.schema import BaseType, ListType, OptionalType

_INT64 = st.integers(-(2**63), 2**63 - 1)
_OUTSIDE = st.integers(2**63, 2**200) | st.integers(-(2**200), -(2**63) - 1)


@given(_INT64, st.sampled_from(["int", "SymInt", "Scalar", "float"]))
def test_an_int64_fits_every_type_that_takes_an_int(value: int, name: str) -> None:
    assert mismatch(BaseType(name), value) is None
    assert mismatch(ListType(BaseType(name)), [value]) is None


@given(_OUTSIDE, st.sampled_from(["int", "SymInt", "Scalar"]))
def test_an_int_outside_int64_is_refused_where_an_int64_is_taken(value: int, name: str) -> None:
    problem = f"expected {name}, got {value}, outside int64's range (-2**63 to 2**63 - 1)"
    if value.bit_length() > 80:
        problem = f"expected {name}, got an int of {value.bit_length()} bits, outside int64's range (-2**63 to 2**63 - 1)"
    assert mismatch(BaseType(name), value) == problem
    assert mismatch(OptionalType(BaseType(name)), value) == problem
    assert mismatch(ListType(BaseType(name)), [0, value]) == f"element 1: {problem}"


def test_the_ends_of_int64_and_an_int_too_long_to_print() -> None:
    assert mismatch(BaseType("int"), 2**63 - 1) is None and mismatch(BaseType("int"), -(2**63)) is None
    assert mismatch(BaseType("int"), 2**63) == (
        "expected int, got 9223372036854775808, outside int64's range (-2**63 to 2**63 - 1)"
    )
    assert mismatch(BaseType("Scalar"), -(10**5000)) == (
        "expected Scalar, got an int of 16610 bits, outside int64's range (-2**63 to 2**63 - 1)"
    )
    assert mismatch(BaseType("float"), 2**64) is None  # a float takes it (rounded), as in PyTorch
