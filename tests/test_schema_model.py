"""Model tests: schemas built in code, their canonical printing and derived facts."""

from __future__ import annotations

import pytest

from typedops.schema import (
    BOOL,
    FLOAT,
    INT,
    TENSOR,
    AliasInfo,
    Argument,
    BaseType,
    ClassType,
    EnumDefault,
    FunctionSchema,
    ListType,
    OptionalType,
    Return,
    SchemaKind,
    TupleType,
    TypeVar,
    format_literal,
    literal_value,
    parse_schema,
)

WRITE_A = AliasInfo(("a",), is_write=True)


def test_schema_built_in_code_prints_canonically() -> None:
    schema = FunctionSchema(
        "scale",
        namespace="demo",
        overload_name="out",
        positional=(Argument("x", TENSOR), Argument("factor", FLOAT, format_literal(2.0))),
        kwarg_only=(Argument("out", TENSOR, alias=WRITE_A),),
        returns=(Return(TENSOR, alias=WRITE_A),),
    )
    text = "demo::scale.out(Tensor x, float factor=2.0, *, Tensor(a!) out) -> Tensor(a!)"
    assert str(schema) == text
    assert parse_schema(text) == schema
    assert hash(parse_schema(text)) == hash(schema)


def test_returns_print_forms() -> None:
    def returns(*rets: Return) -> str:
        return str(FunctionSchema("f", returns=rets)).split(" -> ")[1]

    assert returns() == "()"
    assert returns(Return(TENSOR)) == "Tensor"
    assert returns(Return(TENSOR, name="out")) == "Tensor out"
    assert returns(Return(TENSOR), Return(INT)) == "(Tensor, int)"
    # A lone tuple-typed return is wrapped so it does not read as two returns.
    assert returns(Return(TupleType((INT, TENSOR)))) == "((int, Tensor))"
    assert str(FunctionSchema("f", is_varret=True)) == "f() -> ..."


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("add(Tensor self, Tensor other) -> Tensor", SchemaKind.functional),
        ("add_(Tensor(a!) self, Tensor other) -> Tensor(a!)", SchemaKind.inplace),
        ("__iadd__(Tensor(a!) self, Tensor other) -> Tensor(a!)", SchemaKind.inplace),
        ("__add__(Tensor self, Tensor other) -> Tensor", SchemaKind.functional),
        ("add.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)", SchemaKind.out),
        ("_fused(Tensor(a!) running, Tensor x) -> Tensor", SchemaKind.mutable),
    ],
)
def test_kind(text: str, kind: SchemaKind) -> None:
    assert parse_schema(text).kind is kind


def test_out_arguments_and_lookup() -> None:
    s = parse_schema("max.dim_max(Tensor self, int dim, *, Tensor(a!) max, Tensor(b!) max_values) -> (Tensor(a!) values, Tensor(b!) indices)")
    assert [a.name for a in s.out_arguments] == ["max", "max_values"]
    assert s.argument("dim") == Argument("dim", INT)
    with pytest.raises(LookupError, match=r"max.dim_max has no argument 'dims' \(it has: self, dim, max, max_values\)"):
        s.argument("dims")


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1", 1), ("-100", -100), ("1.", 1.0), ("1e-05", 1e-05), ("inf", float("inf")),
        ("True", True), ("None", None), ("'none'", "none"), ('"a\\"b"', 'a"b'),
        ("[]", ()), ("[0,1]", (0, 1)), ("[True, False]", (True, False)),
        ("contiguous_format", EnumDefault("contiguous_format")),
    ],
)  # fmt: skip
def test_default_values(text: str, value: object) -> None:
    assert literal_value(text) == value


def test_default_value_accessor() -> None:
    arg = parse_schema("f(int x, float eps=1e-05) -> ()").positional[::-1]
    assert arg[0].default_value == 1e-05
    with pytest.raises(LookupError, match="argument 'x' has no default"):
        arg[1].default_value


def test_format_literal_is_canonical() -> None:
    assert [format_literal(v) for v in (None, True, 3, 0.5, float("-inf"), "a\nb", (1, 2))] == [
        "None", "True", "3", "0.5", "-inf", '"a\\nb"', "[1, 2]",
    ]  # fmt: skip
    with pytest.raises(TypeError, match="cannot write .* as a schema default"):
        format_literal(object())  # type: ignore[arg-type]  # the mistake under test


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: BaseType("Tensr"), "unknown base type 'Tensr'"),
        (lambda: TypeVar("T"), "type variable 'T' must be an ASCII identifier starting lower-case"),
        (lambda: ClassType("Name"), "class type 'Name' must be a dotted path"),
        (lambda: OptionalType(OptionalType(INT)), r"'int\?\?' is optional twice; write 'int\?'"),
        (lambda: ListType(INT, -1), "list size must be >= 0, not -1"),
        (lambda: AliasInfo(()), "AliasInfo needs at least one alias set name"),
        (lambda: Argument("not a name", INT), "argument name 'not a name' is not an ASCII identifier"),
        (lambda: Argument("x", INT, "1 + 1"), "default '1 \\+ 1' of argument 'x' is not a schema literal"),
        (lambda: Argument("x", INT, alias=WRITE_A, alias_depth=1), "alias depth 1 is deeper than the 0"),
        (lambda: FunctionSchema("f", positional=(Argument("x", INT),), kwarg_only=(Argument("x", BOOL),)),
         "argument 'x' appears twice in f"),
        (lambda: FunctionSchema("f", is_varret=True, returns=(Return(INT),)), "cannot also list returns"),
    ],
)
def test_constructors_refuse_bad_parts(build: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        build()  # type: ignore[operator]  # each case is a zero-argument lambda


def test_tensor_like_types() -> None:
    for text in ("Tensor", "Tensor?", "Tensor[]", "Tensor?[]", "Tensor[2]"):
        assert parse_schema(f"f({text} x) -> ()").positional[0].type.is_tensor_like(), text
    for text in ("int", "Dict(str, Tensor)", "(Tensor, int)", "t"):
        assert not parse_schema(f"f({text} x) -> ()").positional[0].type.is_tensor_like(), text
