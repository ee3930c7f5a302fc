"""The error hierarchy: one root, and each concrete error also its matching builtin."""

from __future__ import annotations

import pytest

import typedops
from typedops import ops
from typedops.boxing import peek
from typedops.schema import INT, Argument, FunctionSchema, parse_schema
from typedops.vocabulary import (
    ArgumentError,
    ArgumentOverflowError,
    ArgumentValueError,
    DimensionError,
    NoKernelError,
    OperatorAttributeError,
    OperatorNotFoundError,
    RegistrationError,
    SchemaError,
    SchemaInferenceError,
    SchemaLookupError,
    SchemaMismatchError,
    SchemaParseError,
    StackError,
    TensorError,
    Device,
    OutOfMemoryError,
    TypedopsError,
    UnsupportedError,
)

EXPECTED_BASES = [
    (SchemaParseError, ValueError),
    (SchemaError, ValueError),
    (SchemaLookupError, LookupError),
    (SchemaInferenceError, TypeError),
    (SchemaMismatchError, TypeError),
    (RegistrationError, ValueError),
    (OperatorNotFoundError, LookupError),
    (OperatorAttributeError, AttributeError),
    (NoKernelError, LookupError),
    (ArgumentError, TypeError),
    (ArgumentValueError, ValueError),
    (ArgumentOverflowError, OverflowError),
    (StackError, IndexError),
    (TensorError, RuntimeError),
    (DimensionError, IndexError),
    (UnsupportedError, NotImplementedError),
    (OutOfMemoryError, MemoryError),
]


@pytest.mark.parametrize(("error", "builtin"), EXPECTED_BASES)
def test_each_error_is_rooted_and_a_builtin(error: type[Exception], builtin: type[Exception]) -> None:
    assert issubclass(error, TypedopsError) and issubclass(error, builtin)


def test_every_exported_error_is_listed_here() -> None:
    exported = {
        getattr(typedops.vocabulary, name)
        for name in typedops.vocabulary.__all__
        if name.endswith("Error") and name != "TypedopsError"
    }
    assert exported == {error for error, _ in EXPECTED_BASES}


def test_operator_attribute_error_is_an_operator_not_found_error() -> None:
    with pytest.raises(OperatorAttributeError, match="namespace 'core' has no operator 'nosuchop'") as info:
        ops.core.nosuchop  # type: ignore[attr-defined]  # noqa: B018 -- the misspelling under test
    assert isinstance(info.value, OperatorNotFoundError)
    assert not hasattr(ops.core, "nosuchop")


def test_raised_errors_carry_the_root() -> None:
    with pytest.raises(ArgumentValueError, match=r"^unknown device type 'cuda'; typedops has cpu, meta, privateuseone$"):
        Device.parse("cuda")
    with pytest.raises(StackError, match=r"^peek\(0, 2\) on a stack of 1 values$"):
        peek([1], 0, 2)
    with pytest.raises(SchemaError, match="^argument 'x' appears twice in f$"):
        FunctionSchema("f", positional=(Argument("x", INT), Argument("x", INT)))
    with pytest.raises(SchemaLookupError, match=r"^f has no argument 'y' \(it has: none\)$"):
        FunctionSchema("f").argument("y")
    with pytest.raises(ArgumentError, match=r"^parse_schema\(\) takes schema text \(str\), not int$"):
        parse_schema(3)  # type: ignore[arg-type]
