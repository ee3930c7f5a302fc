"""Parser tests: what parses into what, and every refusal with its exact message."""

from __future__ import annotations

from typing import Final

import pytest

from typedops import TypedopsError
from typedops.schema import (
    INT,
    SCALAR,
    TENSOR,
    AliasInfo,
    Argument,
    ClassType,
    DictType,
    FunctionSchema,
    FutureType,
    ListType,
    OptionalType,
    Return,
    SchemaParseError,
    TupleType,
    TypeVar,
    parse_schema,
    parse_type,
)
from typedops.schema._canonical import parse_canonical
from typedops.schema._parser import parse_tokens

# Lines from native_functions.yaml and TorchScript covering each form of the grammar;
# every one must print back exactly as written.
ROUND_TRIP: Final = [
    "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
    "add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
    "add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",
    "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
    "max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
    "split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]",
    "index.Tensor(Tensor self, Tensor?[] indices) -> Tensor",
    "_foreach_add_.List(Tensor(a!)[] self, Tensor[] other, *, Scalar alpha=1) -> ()",
    "mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
    "conv2d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=1, SymInt[2] padding=0, SymInt[2] dilation=1, SymInt groups=1) -> Tensor",
    "layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, Tensor? bias=None, float eps=1e-05, bool cudnn_enable=True) -> Tensor",
    "gelu(Tensor self, *, str approximate='none') -> Tensor",
    "contiguous(Tensor(a) self, *, MemoryFormat memory_format=contiguous_format) -> Tensor(a)",
    "nll_loss(Tensor self, Tensor target, Tensor? weight=None, int reduction=Mean, SymInt ignore_index=-100) -> Tensor",
    "clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor",
    "aten::format(str self, ...) -> str",
    "prim::PythonOp(...) -> ...",
    "aten::setdefault.str(Dict(str, t)(a!) self, str(b -> *) key, t(c -> *) default_value) -> t(*)",
    "aten::keys.str(Dict(str, t) self) -> str[](*)",
    "aten::items.str(Dict(str, t) self) -> ((str, t)[])",
    "aten::dict.str((str, tVal)[] inputs) -> Dict(str, tVal)",
    "aten::_unwrap_optional(t(a)? optional) -> t(a)",
    "aten::wait(Future(t) self) -> t",
    "prim::awaitable_nowait(t self) -> Await(t)",
    "c10d::allgather_coalesced_(Tensor[][] output_lists, Tensor[] input_list, __torch__.torch.classes.c10d.ProcessGroup process_group, bool async_op=True) -> __torch__.torch.classes.c10d.Work",
    "aten::cudnn_affine_grid_generator(Tensor theta, int N, int C, int H, int W) -> Tensor grid",
    'aten::strip(str self, str chars=" \\n\\t\\f\\v") -> str',
    "aten::hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor",
    "aten::nan_to_num(Tensor self, float? nan=None, float? posinf=None, float? neginf=None) -> Tensor",
    "f(float a=inf, float b=-inf, float c=1., float d=0.33333333333333331) -> ()",
    "f(int[] a=[0,1], int[] b=[0, 1], bool[3] mask=[True, True, True]) -> ()",
    "f(Tensor(b|a) x) -> Tensor(b|a)",
]


@pytest.mark.parametrize("text", ROUND_TRIP)
def test_prints_back_exactly(text: str) -> None:
    assert str(parse_schema(text)) == text


@pytest.mark.parametrize("text", ROUND_TRIP)
def test_token_parser_and_fast_path_agree(text: str) -> None:
    fast = parse_canonical(text)
    assert fast is None or fast == parse_tokens(text)


def test_model_of_add_out() -> None:
    s = parse_schema("aten::add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)")
    assert (s.namespace, s.name, s.overload_name) == ("aten", "add", "out")
    assert s.full_name == "aten::add.out"
    assert s.positional == (Argument("self", TENSOR), Argument("other", TENSOR))
    out_alias = AliasInfo(("a",), is_write=True)
    assert s.kwarg_only == (Argument("alpha", SCALAR, "1"), Argument("out", TENSOR, alias=out_alias))
    assert s.returns == (Return(TENSOR, alias=out_alias),)
    assert s.is_out_fn and s.is_mutable and not s.is_inplace


def test_alias_position_is_kept() -> None:
    elements = parse_schema("f(Tensor(a!)[] x) -> ()").positional[0]
    container = parse_schema("f(t[](a!) x) -> ()").positional[0]
    assert (elements.type, elements.alias_depth) == (ListType(TENSOR), 0)
    assert (container.type, container.alias_depth) == (ListType(TypeVar("t")), 1)
    assert elements.alias == container.alias == AliasInfo(("a",), is_write=True)


def test_types() -> None:
    assert parse_type("Tensor?[]") == ListType(OptionalType(TENSOR))
    assert parse_type("int[1]?") == OptionalType(ListType(INT, 1))
    assert parse_type("Dict(str, Tensor)") == DictType(parse_type("str"), TENSOR)
    assert parse_type("Future(t)") == FutureType(TypeVar("t"))
    assert parse_type("(int, Tensor)") == TupleType((INT, TENSOR))
    assert parse_type("__torch__.torch.classes.ns.Name") == ClassType("__torch__.torch.classes.ns.Name")


def test_named_single_return_is_not_trailing_garbage() -> None:
    # TorchScript prints single named returns without parentheses ('-> Tensor grid'),
    # so '-> Tensor extra' is a return named 'extra', as torch reads it too. Text after
    # the returns is refused (see ERROR_CASES).
    s = parse_schema("f(Tensor x) -> Tensor extra")
    assert s.returns == (Return(TENSOR, name="extra"),)


def test_whitespace_is_normalized() -> None:
    assert str(parse_schema("  f( Tensor  x ,int y=1 )->Tensor ")) == "f(Tensor x, int y=1) -> Tensor"


def test_parse_is_also_a_classmethod() -> None:
    text = "f(Tensor x) -> Tensor"
    assert FunctionSchema.parse(text) == parse_schema(text)


def test_parse_type_refuses_alias_and_trailing_text() -> None:
    with pytest.raises(SchemaParseError, match="a type on its own takes no alias annotation"):
        parse_type("Tensor(a)")
    with pytest.raises(SchemaParseError, match="unexpected 'x' after the type"):
        parse_type("Tensor x")


def test_non_text_is_a_type_error() -> None:
    with pytest.raises(TypeError, match=r"parse_schema\(\) takes schema text \(str\), not bytes"):
        parse_schema(b"f() -> ()")  # type: ignore[arg-type]  # the mistake under test


ERROR_CASES: Final = [
    # (schema text, exact message, column, caret width)
    ('f(Tensor x) -> Tensor extra garbage', "unexpected 'garbage' after the returns", 29, 7),
    ('f(Tensor x, Tensor x) -> Tensor', "argument 'x' appears twice; argument names must be unique", 20, 1),
    ('f(int a, *, *, int b) -> Tensor', "'*' appears twice; keyword-only arguments take one '*'", 13, 1),
    ('f(Tensor? ? x) -> Tensor', "'?' applied twice; 'Tensor?' is already optional", 11, 1),
    ('f(Tensr x) -> Tensor', "unknown type 'Tensr' (did you mean 'Tensor'?)", 3, 5),
    ('f(Tensor x)', "expected '->' and the returns, found end of input", 12, 1),
    ('f(Tensor x) ->', 'expected a type, found end of input', 15, 1),
    ('(Tensor x) -> Tensor', "expected an operator name, found '('", 1, 1),
    ('aten::add.Tensor.x(Tensor x) -> Tensor', "operator name 'add.Tensor.x' has more than one '.'; write name.overload", 7, 12),
    ('f(Tensor x,) -> Tensor', "trailing ',' before ')'", 11, 1),
    ('f(Tensor) -> Tensor', "expected an argument name after type 'Tensor', found ')'", 9, 1),
    ('f(Tensor x, *) -> Tensor', "'*' must be followed by keyword-only arguments", 14, 1),
    ('f(Tensor x, ..., int y) -> Tensor', "'...' must be the last argument", 16, 1),
    ('f(int[x] a) -> Tensor', "a list size must be a whole number, as in 'int[2]', not '[x]'", 6, 3),
    ('f(Tensor(a x) -> Tensor', "expected ')' to close the alias annotation, found 'x'", 12, 1),
    ('f(Tensor(a!)[](b) x) -> Tensor', 'a type takes at most one alias annotation', 15, 1),
    ('f(int x="a") -> Tensor', 'default "a" does not fit type \'int\' of argument \'x\': type \'int\' takes int defaults, not str', 9, 3),
    ('f(bool x=1.5) -> Tensor', "default 1.5 does not fit type 'bool' of argument 'x': type 'bool' takes bool defaults, not float", 10, 3),
    ('f(Tensor x=None) -> Tensor', "default None does not fit type 'Tensor' of argument 'x': only an optional type ('T?') takes None", 12, 4),
    ('f(str x="abc) -> Tensor', 'string default has no closing quote', 9, 1),
    ('f(Dict(str) x) -> Tensor', "expected ',' between the key and value types of Dict, found ')'", 11, 1),
    ('f(Future x) -> Tensor', "'Future' needs its element types in parentheses, as in Future(Tensor)", 3, 6),
    ('f(int x=) -> Tensor', "expected a default value for argument 'x', found ')'", 9, 1),
    ('f(Tensor x) -> (Tensor a, Tensor a)', "return name 'a' appears twice", 34, 1),
    ('f(Tensor x) -> (Tensor, Tensor', "expected ',' or ')' between returns, found end of input", 31, 1),
    ('f(int x=[1, [2]]) -> Tensor', "list defaults do not nest; write a flat list such as [1, 2]", 9, 1),
    ('ns::(Tensor x) -> Tensor', "expected an operator name after '::', found '('", 5, 1),
    ('', 'expected an operator name, found end of input', 1, 1),
    ('f(Tensor x) -> Tensor(a', "expected ')' to close the alias annotation, found end of input", 24, 1),
    ('f((int, Tensor(a)) x) -> Tensor', 'alias annotations inside a tuple type are not supported', 9, 6),
    ('f(int x=abc) -> Tensor', "default abc does not fit type 'int' of argument 'x': type 'int' takes one of Mean, Sum as a named default", 9, 3),
    ('f(int[2] x=[1, 2.5]) -> Tensor', "default [1, 2.5] does not fit type 'int[2]' of argument 'x': list element 2.5: type 'int' takes int defaults, not float", 12, 8),
    ('f(Tensor x) -> Tensor @', "unexpected '@' after the returns", 23, 1),
    # -- issue 11: accepted but malformed; torch refuses each --------------------------------
    ('f(SymInt[ x) -> ()', "'[' is not closed; a list suffix is '[]' or '[N]'", 9, 1),
    ('f(Tensor x) -> Tensor[', "'[' is not closed; a list suffix is '[]' or '[N]'", 22, 1),
    ('f(Tensor x) -> Tensor[[]', "'[' is not closed; a list suffix is '[]' or '[N]'", 22, 1),
    ('f(int[? x) -> Tensor', "'[' is not closed; a list suffix is '[]' or '[N]'", 6, 1),
    ('f(int x=1, int y) -> Tensor', "argument 'y' has no default but follows 'x', which has one; give 'y' a default or make it keyword-only (after '*')", 16, 1),
    ('f(int x=1, ...) -> Tensor', "'...' cannot follow arguments with defaults ('x' has one); varargs take every argument by position", 12, 3),
    ('f(int x, *, int y=2, ...) -> Tensor', "'...' cannot follow arguments with defaults ('y' has one); varargs take every argument by position", 22, 3),
    ('f(bol flag=False) -> Tensor', "default False does not fit type 'bol' of argument 'flag': type variable 'bol' takes no default (did you mean type 'bool'?)", 12, 5),
    ('f(t? x=1) -> ()', "default 1 does not fit type 't?' of argument 'x': type variable 't' takes no default but None", 8, 1),
    ('f(Any x=None) -> ()', "default None does not fit type 'Any' of argument 'x': only an optional type ('T?') takes None", 9, 4),
    ('f(Any? x=1) -> ()', "default 1 does not fit type 'Any?' of argument 'x': type 'Any' takes no default but None", 10, 1),
    ('f(SymInt[] stride=1) -> Tensor', "default 1 does not fit type 'SymInt[]' of argument 'stride': a lone value fits only a sized list such as 'SymInt[2]'; write a list, as in [1]", 19, 1),
    ('f(int[]? x=1) -> ()', "default 1 does not fit type 'int[]?' of argument 'x': a lone value fits only a sized list such as 'int[2]'; write a list, as in [1]", 12, 1),
    ('f(Tensor[] x=[]) -> ()', "default [] does not fit type 'Tensor[]' of argument 'x': a list of 'Tensor' takes no list default", 14, 2),
    ('f(complex x=1) -> ()', "default 1 does not fit type 'complex' of argument 'x': type 'complex' takes float defaults, not int", 13, 1),
    ('f(int x=9223372036854775808) -> ()', "default 9223372036854775808 does not fit type 'int' of argument 'x': integer 9223372036854775808 does not fit in 64 bits", 9, 19),
    ('f(float x=1e999) -> ()', "default 1e999 does not fit type 'float' of argument 'x': float 1e999 is out of range", 11, 5),
    ('f(float x=1e-400) -> ()', "default 1e-400 does not fit type 'float' of argument 'x': float 1e-400 is out of range", 11, 6),
    ('f(int[9223372036854775808] x) -> ()', "a list size must fit in 64 bits, not '[9223372036854775808]'", 6, 21),
    ('f(int[] x=[1, 2) -> ()', "list default has no closing ']'", 11, 1),
    ('aten::add.(Tensor x) -> ()', "expected an overload name after '.', found '('", 11, 1),
    # -- torch's lexer reserves TorchScript's keywords; the differential fuzz found them ------
    ('f(in x) -> ()', "'in' is a reserved word of the schema language; it cannot name a type variable", 3, 2),
    ('f(int in) -> ()', "'in' is a reserved word of the schema language; it cannot name an argument", 7, 2),
    ('f() -> (int if)', "'if' is a reserved word of the schema language; it cannot name a return", 13, 2),
    ('f(Tensor(is) x) -> ()', "'is' is a reserved word of the schema language; it cannot name an alias set", 10, 2),
    ('not(int x) -> ()', "'not' is a reserved word of the schema language; it cannot name an operator", 1, 3),
    ('f(int True) -> ()', "'True' is a reserved word of the schema language; it cannot name an argument", 7, 4),
    ('f(str x="v\\lid") -> ()', "unknown escape '\\l' in a string default; the escapes are \\a \\b \\f \\n \\t \\v \\\\ \\' \\\" and octal \\000 to \\377", 9, 7),
    ('f(Tensor?(a!) x) -> ()', "an alias annotation cannot follow '?'; write it after the base type, as in 'Tensor(a!)?'", 10, 1),
    ('f(int[]? x=[1]) -> ()', "default [1] does not fit type 'int[]?' of argument 'x': an optional list takes None or a lone value, not a list literal", 12, 3),
    # -- issue 11: a 5,000-digit int was a bare ValueError; deep nesting a RecursionError -------
    ('f(int x=' + '9' * 5000 + ') -> ()', "default 99999999999999999999999999999999... (5000 characters) does not fit type 'int' of argument 'x': integer 99999999999999999999999999999999... (5000 characters) does not fit in 64 bits", 9, 5000),
    ('f(int[' + '9' * 5000 + '] x) -> ()', "a list size must fit in 64 bits, not '[9999999999999999999999999999999'... (5002 characters)", 6, 5002),
    ('f(' + 'Future(' * 101 + 'int' + ')' * 101 + ' x) -> ()', "types nest more than 100 deep; a schema type nests a few levels at most", 710, 3),
    ('f(int' + '[]' * 101 + ' x) -> ()', "types nest more than 100 deep; a schema type nests a few levels at most", 206, 2),
    ('f(Wibble x) -> Tensor', "unknown type 'Wibble'; the built-in types are Any, AnyClassType, AnyEnumType, Await, Capsule, Device, DeviceIndex, Dict, Dimname, Future, Generator, Layout, MemoryFormat, NoneType, QScheme, RRef, Scalar, ScalarType, Storage, Stream, SymBool, SymFloat, SymInt, Tensor, bool, complex, float, int, str", 3, 6),
]


@pytest.mark.parametrize(("text", "message", "column", "width"), ERROR_CASES)
def test_refusals(text: str, message: str, column: int, width: int) -> None:
    with pytest.raises(SchemaParseError) as info:
        parse_schema(text)
    error = info.value
    assert (error.reason, error.column, error.width) == (f"{message} (column {column})", column, width)


def test_error_shows_the_text_with_a_caret() -> None:
    with pytest.raises(SchemaParseError) as info:
        parse_schema("f(Tensr x) -> Tensor")
    assert str(info.value) == (
        "unknown type 'Tensr' (did you mean 'Tensor'?) (column 3)\n"
        "  f(Tensr x) -> Tensor\n"
        "    ^^^^^"
    )


def test_parse_error_is_a_typedops_error_and_a_value_error() -> None:
    with pytest.raises(TypedopsError):
        parse_schema("f(")
    with pytest.raises(ValueError):
        parse_schema("f(")


# -- issue 11: whitespace never changes meaning ------------------------------------------------


def test_two_spaces_after_the_arrow_still_mean_two_returns() -> None:
    # The fast path once took ' (Tensor, Tensor)' as one tuple-typed return.
    two = parse_schema("f(Tensor x) -> (Tensor, Tensor)")
    assert parse_schema("f(Tensor x) ->  (Tensor, Tensor)") == two
    assert two.returns == (Return(TENSOR), Return(TENSOR))


@pytest.mark.parametrize(
    ("spaced", "canonical"),
    [
        ("aten :: add . Tensor ( Tensor self ) -> Tensor", "aten::add.Tensor(Tensor self) -> Tensor"),
        ("aten : : add(Tensor self) -> Tensor", "aten::add(Tensor self) -> Tensor"),
        ("f(int [ 2 ] x, Tensor? [ ] y) -> ()", "f(int[2] x, Tensor?[] y) -> ()"),
        ("f(int x= - 1, float y=- .5) -> ()", "f(int x=-1, float y=-.5) -> ()"),
        ("f(int[] x=[ 0 ,\t- 1 ], int[] y=[ ]) -> ()", "f(int[] x=[0, -1], int[] y=[]) -> ()"),
        ("f(Tensor\tx)\n->\r\nTensor", "f(Tensor x) -> Tensor"),
    ],
)
def test_whitespace_inside_tokens_torch_splits(spaced: str, canonical: str) -> None:
    """Where torch's lexer sees several tokens, whitespace may go between them."""
    assert str(parse_schema(spaced)) == canonical


def test_deepest_nesting_parses_prints_compares_and_hashes() -> None:
    """Nesting up to the limit parses, and the schema prints, compares and hashes."""
    limit = 100
    texts = [
        "f(" + "Dict(str, " * limit + "int" + ")" * limit + " x) -> ()",
        "f(" + "Future(" * limit + "int" + ")" * limit + " x) -> ()",
        "f(" + "(" * limit + "int" + ")" * limit + " x) -> ()",
        "f(int" + "[]" * limit + " x) -> ()",
        "f() -> " + "(" * (limit + 1) + "int" + ")" * (limit + 1),
    ]
    for text in texts:
        schema = parse_schema(text)
        assert parse_schema(str(schema)) == schema
        assert hash(parse_schema(str(schema))) == hash(schema)
    with pytest.raises(SchemaParseError, match="types nest more than 100 deep"):
        parse_schema("f(" + "(" * 1000 + "int" + ")" * 1000 + " x) -> ()")


def test_model_refuses_what_the_parser_refuses() -> None:
    with pytest.raises(ValueError, match="argument 'y' has no default but follows 'x'"):
        FunctionSchema("f", positional=(Argument("x", INT, "1"), Argument("y", INT)))
    with pytest.raises(ValueError, match="'...' cannot follow arguments with defaults"):
        FunctionSchema("f", kwarg_only=(Argument("x", INT, "1"),), is_vararg=True)
    with pytest.raises(ValueError, match="a lone value fits only a sized list"):
        Argument("x", ListType(INT), "1")
    with pytest.raises(ValueError, match=r"not in canonical spacing; write \[0, 1\]"):
        Argument("x", ListType(INT), "[ 0 ,1]")
    with pytest.raises(ValueError, match="'in' is a reserved word of the schema language; it cannot name an argument"):
        Argument("in", INT)
    with pytest.raises(ValueError, match="'is' is a reserved word of the schema language; it cannot name a type variable"):
        TypeVar("is")
    with pytest.raises(ValueError, match="an alias annotation cannot follow '\\?'"):
        Argument("x", OptionalType(TENSOR), alias=AliasInfo(("a",)), alias_depth=1)
    # keyword-only arguments may follow defaulted ones without defaults, as in torch
    assert str(FunctionSchema("f", positional=(Argument("x", INT, "1"),), kwarg_only=(Argument("y", INT),)))


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("'a'", "str"), ('"a"', "str"), ("[1, 2]", "list"), ("[]", "list"), ("True", "bool"),
        ("False", "bool"), ("None", "none"), ("3", "int"), ("-3", "int"), ("3.", "float"),
        ("1e-05", "float"), ("-inf", "float"), ("inf", "float"), ("nan", "float"), ("Mean", "name"),
    ],
)  # fmt: skip
def test_each_default_literal_has_one_kind(text: str, kind: str) -> None:
    from typedops.schema._defaults import LiteralKind, _literal_kind

    assert _literal_kind(text) is LiteralKind(kind)


@pytest.mark.parametrize(
    ("type_text", "default", "reason"),
    [
        ("Scalar", "'a'", "type 'Scalar' takes bool or float or int defaults, not str"),
        ("Tensor", "1", "type 'Tensor' takes no default"),
        ("float", "True", "type 'float' takes float or int defaults, not bool"),
        ("Layout", "channels_last", "type 'Layout' takes one of sparse_coo, strided as a named default"),
        ("float", "Mean", "type 'float' takes no bare names as a named default"),
        ("float[]", "[1, inf, nan]", None),
        ("Layout", "0", None),
        ("int?", "None", None),
    ],
)
def test_default_kinds_name_what_a_type_takes(type_text: str, default: str, reason: str | None) -> None:
    from typedops.schema._defaults import default_mismatch

    assert default_mismatch(parse_type(type_text), default) == reason


def test_schemas_with_the_same_argument_text_share_the_argument_and_return() -> None:
    # Note [Shared arguments]: fewer objects per defined op.
    from typedops.schema import _canonical

    a = parse_schema("f(Tensor self, int dim=0) -> Tensor")
    b = parse_schema("g(Tensor self, *, int dim=0) -> Tensor")
    assert a.positional[0] is b.positional[0] and a.positional[1] is b.kwarg_only[0]
    assert a.returns[0] is b.returns[0]
    _canonical.clear_type_table()
    c = parse_schema("h(Tensor self) -> Tensor")
    assert c.positional[0] == a.positional[0] and c.positional[0] is not a.positional[0]


@pytest.mark.parametrize(
    ("seen", "text", "message"),
    [
        ("f(Tensor x) -> Tensor", "g(Tensor x, Tensor x) -> Tensor", "argument 'x' appears twice"),
        ("f(Tensor x) -> (Tensor a, int b)", "g(Tensor x) -> (Tensor a, Tensor a)", "return name 'a' appears twice"),
        ("f(int x=1) -> ()", "g(int x=1, int y) -> ()", "argument 'y' has no default but follows"),
    ],
)
def test_a_shared_argument_is_still_checked_in_its_schema(seen: str, text: str, message: str) -> None:
    parse_schema(seen)  # the pieces of ``text`` are in the tables now
    with pytest.raises(SchemaParseError, match=message):
        parse_schema(text)
