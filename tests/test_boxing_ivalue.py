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


def test_plain_number_gives_numpy_numbers_as_python_numbers_where_a_number_goes() -> None:
    # Note [Numbers that are not Python's]: sizes, dims, floats and Scalars take np.int64
    # and np.float32 as torch's do; a bool argument takes Python's bools only.
    import numpy as np

    from typedops.boxing import plain_number
    from typedops.schema import parse_type

    for text, value, expected in [
        ("int", np.int64(3), 3), ("SymInt", np.uint8(2), 2), ("Scalar", np.int32(-1), -1), ("int?", np.int16(4), 4),
        ("SymInt[]", [np.int64(2), 3], [2, 3]), ("int[1]", np.int64(0), 0), ("int[]", (np.array(5),), [5]),
        ("Scalar", np.float32(0.5), 0.5), ("Scalar", np.bool_(True), 1.0), ("Scalar?", np.complex64(1j), 1j),
        ("float", np.float32(2.5), 2.5), ("float", np.int64(2), 2), ("float", np.float64(2.0), 2.0),
        ("complex", np.complex128(1 + 2j), 1 + 2j),
    ]:  # fmt: skip
        got = plain_number(parse_type(text), value)
        assert got == expected and type(got) is type(expected), (text, value, got)
        assert all(type(n) is int for n in got) if isinstance(got, list) else True
    unchanged: list[tuple[str, object]] = [
        ("int", True), ("int", np.float64(2.0)), ("int[]", [1, 2]), ("int", None), ("int", np.array([1, 2])),
        ("str", np.int64(1)), ("bool", np.bool_(True)), ("Scalar", np.array(2.0)), ("float", np.array([1.0])),
        ("float", 2.5), ("Scalar", 3),
    ]  # fmt: skip
    for text, value in unchanged:
        assert plain_number(parse_type(text), value) is value, (text, value)


def test_is_number_takes_python_and_numpy_numbers() -> None:
    import numpy as np

    from typedops import tensor
    from typedops.boxing import is_number

    assert all(is_number(v) for v in (1, 2.5, 1j, True, np.int8(1), np.float16(1), np.bool_(False), np.complex64(1)))
    assert not any(is_number(v) for v in (None, "1", np.array(1.0), [1], tensor([1.0])))
