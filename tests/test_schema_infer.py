"""Schema inference (issue 3): typed functions -> schemas, refusals, and the reverse."""

from __future__ import annotations

import inspect
import keyword
import math
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any, Dict, List, Optional, Tuple, Union

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests import _infer_future_annotations as future
from tests.corpus import native_function_schemas
from typedops import (
    Device,
    Generator,
    Layout,
    MemoryFormat,
    Scalar,
    SchemaInferenceError,
    ScalarType,
    SymInt,
    Tensor,
    TypedopsError,
)
from typedops import tensor as tensor_of
from typedops.schema._defaults import default_mismatch
from typedops.schema import (
    BOOL, COMPLEX, DEVICE, FLOAT, INT, LAYOUT, MEMORY_FORMAT, SCALAR, SCALAR_TYPE, STR,
    SYM_INT, TENSOR, AliasInfo, Argument, BaseType, DictType, EnumDefault, FunctionSchema, ListType,
    OptionalType, Return, Type, format_literal, infer_schema, parse_schema,
    signature_from_schema,
)  # fmt: skip

# -- the mapping table --------------------------------------------------------------------


def tensor(x: Tensor) -> Tensor:
    raise NotImplementedError


def optional_tensors(a: Optional[Tensor], b: Tensor | None, c: Union[None, Tensor]) -> None:
    raise NotImplementedError


def numbers(a: int, b: SymInt, c: float, d: bool, e: str, f: complex) -> None:
    raise NotImplementedError


def tensor_layer(s: Scalar, t: ScalarType, l: Layout, d: Device, m: MemoryFormat) -> None:
    raise NotImplementedError


def optional_values(a: Optional[Scalar], b: SymInt | None, c: ScalarType | None, d: Scalar | None) -> None:
    raise NotImplementedError


def scalar_spelled_out(a: Union[int, float, complex], b: bool | int | float | complex) -> None:
    raise NotImplementedError


# torch.types.Number is Union[int, float, bool]; torch.library.infer_schema reads it as Scalar.
Number = Union[int, float, bool]


def number_like_torch(
    a: Number, b: Optional[Number], c: list[Number], d: Sequence[Number], e: int | float,
) -> Number:
    raise NotImplementedError


def lists(
    a: list[int], b: List[float], c: Sequence[SymInt], d: typing.Sequence[bool],
    e: tuple[Tensor, ...], f: Tuple[str, ...],
) -> None:
    raise NotImplementedError


def sized(a: tuple[int, int], b: tuple[SymInt, SymInt, SymInt], c: tuple[int], d: Tuple[bool, bool]) -> None:
    raise NotImplementedError


def nested(
    a: list[Optional[Tensor]], b: Optional[list[int]], c: list[int] | None,
    d: Optional[tuple[int, int]], e: list[tuple[int, int]],
) -> None:
    raise NotImplementedError


def dicts(a: dict[str, Tensor], b: Dict[str, list[int]], c: Mapping[int, float], d: dict[str, Tensor] | None) -> None:
    raise NotImplementedError


def annotated_extra(a: Annotated[float, "a unit"], b: Annotated[int, []]) -> None:
    raise NotImplementedError


def nested_string(x: list["Tensor"], y: Optional["Tensor"]) -> "Tensor":
    raise NotImplementedError


def defaults(
    x: Tensor, alpha: float = 1.0, eps: float = 1e-05, reduction: str = "sum",
    keepdim: bool = False, out: Optional[Tensor] = None, size: tuple[int, int] = (1, 2),
) -> Tensor:
    raise NotImplementedError


def more_defaults(
    a: float = 1, b: int = -3, c: float = math.inf, d: Scalar = 2, e: Scalar = True,
    f: Sequence[int] = (), g: list[int] = [4, 5], h: Sequence[Optional[int]] | None = None,
    i: str = 'say "hi"\n', j: complex = 2.5, k: Optional[list[int]] = None,
) -> None:
    raise NotImplementedError


def enum_defaults(
    memory_format: MemoryFormat = MemoryFormat.contiguous_format,
    dtype: ScalarType | None = None, layout: Layout = Layout.strided,
    dt: ScalarType = ScalarType.long, dts: Sequence[ScalarType] = (ScalarType.float32,),
    device: Device = Device("cpu"), other: Device = Device("cpu", 0),
    maybe_device: Optional[Device] = Device("meta"),
) -> None:
    raise NotImplementedError


def int_for_complex(c: complex = 2) -> None:
    raise NotImplementedError


def tuple_default_for_list(dims: list[int] = (1, 2)) -> None:  # type: ignore[assignment]
    raise NotImplementedError  # mypy wants Sequence[int] for a tuple default; inference takes both


def keyword_only(x: Tensor, /, y: Tensor, *, alpha: Scalar = 1, out: Tensor) -> Tensor:
    raise NotImplementedError


def returns_none(x: Tensor) -> None:
    raise NotImplementedError


def returns_pair(x: Tensor) -> tuple[Tensor, Tensor]:
    raise NotImplementedError


def returns_three(x: Tensor) -> Tuple[Tensor, list[int], int]:
    raise NotImplementedError


def returns_optional(x: Tensor) -> Optional[Tensor]:
    raise NotImplementedError


def returns_list(x: Tensor) -> list[int]:
    raise NotImplementedError


def returns_str(x: Tensor) -> str:
    raise NotImplementedError


def returns_tensor_list(x: Tensor) -> tuple[Tensor, ...]:
    raise NotImplementedError


def returns_empty_tuple(x: Tensor) -> tuple[()]:
    raise NotImplementedError


def returns_dict(x: Tensor) -> dict[str, Tensor]:
    raise NotImplementedError


def no_parameters() -> Tensor:
    raise NotImplementedError


INFERRED: list[tuple[Callable[..., object], str]] = [
    (tensor, "tensor(Tensor x) -> Tensor"),
    (optional_tensors, "optional_tensors(Tensor? a, Tensor? b, Tensor? c) -> ()"),
    (numbers, "numbers(int a, SymInt b, float c, bool d, str e, complex f) -> ()"),
    (tensor_layer, "tensor_layer(Scalar s, ScalarType t, Layout l, Device d, MemoryFormat m) -> ()"),
    (optional_values, "optional_values(Scalar? a, SymInt? b, ScalarType? c, Scalar? d) -> ()"),
    (scalar_spelled_out, "scalar_spelled_out(Scalar a, Scalar b) -> ()"),
    (number_like_torch, "number_like_torch(Scalar a, Scalar? b, Scalar[] c, Scalar[] d, Scalar e) -> Scalar"),
    (lists, "lists(int[] a, float[] b, SymInt[] c, bool[] d, Tensor[] e, str[] f) -> ()"),
    (sized, "sized(int[2] a, SymInt[3] b, int[1] c, bool[2] d) -> ()"),
    (nested, "nested(Tensor?[] a, int[]? b, int[]? c, int[2]? d, int[2][] e) -> ()"),
    (dicts, "dicts(Dict(str, Tensor) a, Dict(str, int[]) b, Dict(int, float) c, Dict(str, Tensor)? d) -> ()"),
    (annotated_extra, "annotated_extra(float a, int b) -> ()"),
    (nested_string, "nested_string(Tensor[] x, Tensor? y) -> Tensor"),
    (
        defaults,
        'defaults(Tensor x, float alpha=1.0, float eps=1e-05, str reduction="sum", '
        "bool keepdim=False, Tensor? out=None, int[2] size=[1, 2]) -> Tensor",
    ),
    (
        more_defaults,
        "more_defaults(float a=1, int b=-3, float c=inf, Scalar d=2, Scalar e=True, "
        'int[] f=[], int[] g=[4, 5], int?[]? h=None, str i="say \\"hi\\"\\n", '
        "complex j=2.5, int[]? k=None) -> ()",
    ),
    (
        enum_defaults,
        "enum_defaults(MemoryFormat memory_format=contiguous_format, ScalarType? dtype=None, "
        "Layout layout=strided, ScalarType dt=int64, ScalarType[] dts=[float32], "
        'Device device="cpu", Device other="cpu:0", Device? maybe_device="meta") -> ()',
    ),
    (tuple_default_for_list, "tuple_default_for_list(int[] dims=[1, 2]) -> ()"),
    (int_for_complex, "int_for_complex(complex c=2.0) -> ()"),
    (keyword_only, "keyword_only(Tensor x, Tensor y, *, Scalar alpha=1, Tensor out) -> Tensor"),
    (returns_none, "returns_none(Tensor x) -> ()"),
    (returns_pair, "returns_pair(Tensor x) -> (Tensor, Tensor)"),
    (returns_three, "returns_three(Tensor x) -> (Tensor, int[], int)"),
    (returns_optional, "returns_optional(Tensor x) -> Tensor?"),
    (returns_list, "returns_list(Tensor x) -> int[]"),
    (returns_str, "returns_str(Tensor x) -> str"),
    (returns_tensor_list, "returns_tensor_list(Tensor x) -> Tensor[]"),
    (returns_empty_tuple, "returns_empty_tuple(Tensor x) -> ()"),
    (returns_dict, "returns_dict(Tensor x) -> Dict(str, Tensor)"),
    (no_parameters, "no_parameters() -> Tensor"),
    # from __future__ import annotations: every annotation is a string
    (
        future.conv,
        "conv(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=[1, 1], *, "
        "int groups=1, MemoryFormat memory_format=contiguous_format) -> Tensor",
    ),
    (
        future.mixed,
        "mixed(Tensor?[] xs, int[]? sizes, Scalar scale=2, int[] dims=[], "
        'Dict(str, float)? options=None, ScalarType? dtype=None, Device device="meta") '
        "-> (Tensor, int[])",
    ),
    (future.pair, "pair(Tensor x) -> (Tensor, Tensor)"),
    (future.quoted_inside, "quoted_inside(Tensor[] xs, SymInt n) -> Tensor"),
]


@pytest.mark.parametrize(("fn", "expected"), INFERRED, ids=[f.__name__ for f, _ in INFERRED])
def test_infer_schema(fn: Callable[..., object], expected: str) -> None:
    schema = infer_schema(fn)
    assert str(schema) == expected
    assert parse_schema(expected) == schema  # the inferred schema is what the text says


def test_inference_is_repeatable() -> None:
    # The second call is served from the annotation cache; it must build an equal schema.
    for fn, expected in INFERRED:
        assert str(infer_schema(fn)) == expected


def test_string_annotations_resolve_in_the_function_module() -> None:
    # 'T' is typedops.Tensor in the helper module, and undefined here.
    assert "T" not in globals()
    assert str(infer_schema(future.pair, name="p")) == "p(Tensor x) -> (Tensor, Tensor)"


def test_string_annotations_are_evaluated_on_every_call() -> None:
    # Compiled code is cached per string; the names in it are looked up afresh each time.
    namespace: dict[str, Any] = {"Size": int}
    exec("def resize(x: 'Tensor', size: 'Size') -> 'Tensor': pass", namespace)
    namespace["Tensor"] = Tensor
    assert str(infer_schema(namespace["resize"])) == "resize(Tensor x, int size) -> Tensor"
    namespace["Size"] = SymInt
    assert str(infer_schema(namespace["resize"])) == "resize(Tensor x, SymInt size) -> Tensor"


def test_the_annotation_caches_never_answer_for_a_dead_annotation() -> None:
    # Note [Annotation cache] keys on id(annotation). ``list[int]`` makes a new object each
    # time; freed, its memory (hence its id) may go to the next alias made, here a
    # ``list[float]``: an entry that outlived its annotation would answer ``int[]`` for it.
    # 2000 rounds put twice the caches' limit, so their eviction is exercised too.
    def f(xs: object) -> None:
        raise NotImplementedError

    wrong = []
    for n in range(2000):
        for element, text in ((int, "f(int[] xs) -> ()"), (float, "f(float[] xs) -> ()")):
            f.__annotations__ = {"xs": list[element], "return": None}  # type: ignore[valid-type]
            got = str(infer_schema(f, name="f"))
            f.__annotations__ = {}
            if got != text:
                wrong.append((n, got))
    assert wrong == []


def test_schemas_share_the_arguments_of_equal_parameters() -> None:
    # Note [Argument cache]: one Argument object per distinct (name, kind, annotation, default).
    def f(x: Tensor, n: int = 2, *, flag: bool = True) -> Tensor:
        raise NotImplementedError

    def g(x: Tensor, n: int = 2, *, flag: bool = True) -> Tensor:
        raise NotImplementedError

    a, b = infer_schema(f), infer_schema(g)
    assert all(p is q for p, q in zip(a.arguments, b.arguments))
    # Note [Shared argument tuples]: and the tuples holding them, and the returns'
    assert (a.positional, a.kwarg_only, a.returns) == (b.positional, b.kwarg_only, b.returns)
    assert a.positional is b.positional and a.kwarg_only is b.kwarg_only and a.returns is b.returns


def test_schemas_with_some_parameters_in_common_keep_their_own_tuples() -> None:
    def f(x: Tensor, n: int = 2) -> Tensor:
        raise NotImplementedError

    def g(x: Tensor, n: int = 2, m: int = 3) -> Tensor:
        raise NotImplementedError

    def h(x: Tensor) -> Tensor:
        raise NotImplementedError

    schemas = [infer_schema(fn) for fn in (f, g, h, f, g, h)]
    assert [str(s) for s in schemas[:3]] == [
        "f(Tensor x, int n=2) -> Tensor", "g(Tensor x, int n=2, int m=3) -> Tensor", "h(Tensor x) -> Tensor"
    ]
    assert [s.positional is t.positional for s, t in zip(schemas[:3], schemas[3:])] == [True] * 3


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("n: Scalar = 1", "n: Scalar = True"),  # equal values of different types
        ("v: float = 0.0", "v: float = -0.0"),  # equal floats with different texts
        ("xs: list[int] = [1]", "xs: list[int] = [2]"),  # mutable defaults
        ("x: Tensor", "x: Optional[Tensor]"),
        ("x: Tensor", "y: Tensor"),
        ("n: int", "n: int = 1"),
        ("n: int = 1", "*, n: int = 1"),
    ],
)
def test_the_argument_cache_keeps_different_parameters_apart(first: str, second: str) -> None:
    namespace: dict[str, Any] = {"Tensor": Tensor, "Optional": Optional, "Scalar": Scalar}
    exec(f"def one({first}) -> None: pass\ndef two({second}) -> None: pass", namespace)
    for _ in range(2):  # the second round is served from the cache
        one, two = infer_schema(namespace["one"]), infer_schema(namespace["two"])
        assert str(one) == f"one({_schema_text(first)}) -> ()"
        assert str(two) == f"two({_schema_text(second)}) -> ()"


def _schema_text(parameter: str) -> str:
    """The schema text of one parameter written in Python, for the cases above."""
    star = "*, " if parameter.startswith("*, ") else ""
    name, _, rest = parameter.removeprefix("*, ").partition(": ")
    ann, _, default = rest.partition(" = ")
    type_ = {"int": "int", "Scalar": "Scalar", "float": "float", "list[int]": "int[]", "Tensor": "Tensor", "Optional[Tensor]": "Tensor?"}[ann]
    default = {"True": "True", "[1]": "[1]", "[2]": "[2]"}.get(default, default)
    return f"{star}{type_} {name}{'=' + default if default else ''}"


def test_a_cached_parameter_does_not_let_a_bad_default_through() -> None:
    def good(n: int = 1) -> None:
        raise NotImplementedError

    def bad(n: int = True) -> None:
        raise NotImplementedError

    infer_schema(good)
    with pytest.raises(SchemaInferenceError) as info:
        infer_schema(bad)
    assert str(info.value) == (
        "default True of parameter 'n' of bad() does not fit its annotation 'int'; give a "
        "default of that type, or change the annotation"
    )


def test_mutated_parameters_are_not_shared() -> None:
    # Their alias sets are lettered per op, so each schema gets its own Argument.
    def f(a: Tensor, x: Tensor) -> None:
        raise NotImplementedError

    first = infer_schema(f, mutates_args=["x"])
    second = infer_schema(f, mutates_args="unknown")
    assert str(first) == "f(Tensor a, Tensor(a!) x) -> ()"
    assert str(second) == "f(Tensor(a!) a, Tensor(b!) x) -> ()"
    assert infer_schema(f).arguments[1].alias is None


# -- names -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "namespace", "op", "overload"),
    [
        ("scale", "", "scale", ""),
        ("scale.out", "", "scale", "out"),
        ("myops::scale", "myops", "scale", ""),
        ("myops::scale.Tensor_out", "myops", "scale", "Tensor_out"),
    ],
)
def test_name(name: str, namespace: str, op: str, overload: str) -> None:
    schema = infer_schema(tensor, name=name)
    assert (schema.namespace, schema.name, schema.overload_name) == (namespace, op, overload)
    assert str(schema) == f"{name}(Tensor x) -> Tensor"


class _Kernel:
    """A callable object: no __name__, read through inspect.signature."""

    def __call__(self, x: Tensor, alpha: float = 0.5) -> Tensor:
        raise NotImplementedError

    def __repr__(self) -> str:
        return "_Kernel()"


def test_callable_object_needs_a_name() -> None:
    assert str(infer_schema(_Kernel(), name="ns::k")) == "ns::k(Tensor x, float alpha=0.5) -> Tensor"
    with pytest.raises(SchemaInferenceError) as info:
        infer_schema(_Kernel())
    assert str(info.value) == "_Kernel() has no usable __name__; pass the operator name, e.g. name='my_op'"


# -- mutates_args ---------------------------------------------------------------------------


def update(x: Tensor, alpha: float, ys: list[Tensor], out: Optional[Tensor] = None) -> None:
    raise NotImplementedError


@pytest.mark.parametrize(
    ("mutates", "expected"),
    [
        ((), "update(Tensor x, float alpha, Tensor[] ys, Tensor? out=None) -> ()"),
        (["out"], "update(Tensor x, float alpha, Tensor[] ys, Tensor(a!)? out=None) -> ()"),
        # lettered in parameter order, whatever the order of mutates_args
        (["out", "x"], "update(Tensor(a!) x, float alpha, Tensor[] ys, Tensor(b!)? out=None) -> ()"),
        ({"ys"}, "update(Tensor x, float alpha, Tensor(a!)[] ys, Tensor? out=None) -> ()"),
        ("unknown", "update(Tensor(a!) x, float alpha, Tensor(b!)[] ys, Tensor(c!)? out=None) -> ()"),
    ],
)
def test_mutates_args(mutates: Any, expected: str) -> None:
    schema = infer_schema(update, mutates_args=mutates)
    assert str(schema) == expected
    assert parse_schema(expected) == schema


def test_mutated_arguments_are_writes() -> None:
    schema = infer_schema(update, mutates_args=["x"])
    assert schema.argument("x").alias == AliasInfo(("a",), (), True)
    assert schema.is_mutable and not schema.argument("out").is_write


def test_many_mutated_tensors_get_distinct_alias_sets() -> None:
    names = [f"t{i}" for i in range(30)]
    fn = _function_from(inspect.Signature(
        [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=Tensor) for n in names],
        return_annotation=None,
    ))
    schema = infer_schema(fn, name="many", mutates_args="unknown")
    sets = [a.alias.before[0] for a in schema.arguments if a.alias is not None]
    assert sets[:3] == ["a", "b", "c"] and sets[25:28] == ["z", "aa", "ab"]
    assert len(set(sets)) == 30
    assert parse_schema(str(schema)) == schema


# -- refusals ---------------------------------------------------------------------------------


def no_annotation(x, alpha: float) -> Tensor:  # type: ignore[no-untyped-def]  # on purpose
    raise NotImplementedError


def var_positional(x: Tensor, *args: Tensor) -> Tensor:
    raise NotImplementedError


def var_keyword(x: Tensor, **kwargs: float) -> Tensor:
    raise NotImplementedError


def any_annotation(x: Any) -> Tensor:
    raise NotImplementedError


def callable_annotation(x: Tensor, fn: Callable[[Tensor], Tensor]) -> Tensor:
    raise NotImplementedError


def list_of_callables(fns: list[Callable[[], int]]) -> None:
    raise NotImplementedError


def user_class(x: _Kernel) -> None:
    raise NotImplementedError


def union_annotation(x: Union[int, str]) -> None:
    raise NotImplementedError


def bare_list(x: list) -> None:  # type: ignore[type-arg]  # on purpose
    raise NotImplementedError


def none_annotation(x: None) -> None:
    raise NotImplementedError


def mixed_tuple(x: tuple[int, str]) -> None:
    raise NotImplementedError


def dict_key(x: dict[Device, int]) -> None:
    raise NotImplementedError


def wrong_default(x: Tensor, alpha: float = "mean") -> Tensor:  # type: ignore[assignment]
    raise NotImplementedError


def bool_for_int(dim: int = True) -> None:
    raise NotImplementedError


def none_default(x: Tensor, dim: int = None) -> Tensor:  # type: ignore[assignment]
    raise NotImplementedError


def optional_items_default(h: Sequence[Optional[int]] = (None, 1)) -> None:
    raise NotImplementedError


def complex_default(z: Optional[complex] = 1j) -> None:
    raise NotImplementedError


def tensor_default(x: Tensor = tensor_of([1.0], device="meta")) -> None:
    raise NotImplementedError


def wrong_length(size: tuple[int, int] = (1, 2, 3)) -> None:  # type: ignore[assignment]
    raise NotImplementedError


def dict_default(d: dict[str, int] = {}) -> None:
    raise NotImplementedError


def enum_mismatch(layout: Layout = MemoryFormat.channels_last) -> None:  # type: ignore[assignment]
    raise NotImplementedError


def string_for_device(device: Device = "cpu") -> None:  # type: ignore[assignment]
    raise NotImplementedError


def no_return(x: Tensor):  # type: ignore[no-untyped-def]  # on purpose
    raise NotImplementedError


def any_return(x: Tensor) -> Any:
    raise NotImplementedError


def nested_return_tuple(x: Tensor) -> tuple[Tensor, tuple[int, str]]:
    raise NotImplementedError


def non_ascii(ä: Tensor) -> Tensor:
    raise NotImplementedError


_SUPPORTED = (
    "Tensor, int, SymInt, float, bool, str, complex, Scalar, ScalarType, Layout, Device, "
    "MemoryFormat or Generator, or Optional, list, Sequence, tuple or dict of those"
)

REFUSALS: list[tuple[Callable[..., object], dict[str, Any], str]] = [
    (no_annotation, {}, "parameter 'x' of no_annotation() has no annotation; annotate it, e.g. 'x: Tensor'"),
    (
        var_positional, {},
        "parameter '*args' of var_positional() takes any number of arguments, which an "
        "operator cannot; take a list instead, e.g. 'args: list[Tensor]'",
    ),
    (
        var_keyword, {},
        "parameter '**kwargs' of var_keyword() takes any keyword arguments, which an "
        "operator cannot; declare each one after '*', e.g. '*, alpha: float = 1.0'",
    ),
    (
        any_annotation, {},
        "parameter 'x' of any_annotation() is annotated 'Any', which has no schema type; "
        "name the type it takes, e.g. 'Tensor'",
    ),
    (
        callable_annotation, {},
        "parameter 'fn' of callable_annotation() is annotated 'Callable[[Tensor], Tensor]', "
        f"which has no schema type; use {_SUPPORTED}",
    ),
    (
        list_of_callables, {},
        "parameter 'fns' of list_of_callables() is annotated 'list[Callable[[], int]]', "
        f"which has no schema type (because of 'Callable[[], int]'); use {_SUPPORTED}",
    ),
    (
        user_class, {},
        f"parameter 'x' of user_class() is annotated '_Kernel', which has no schema type; use {_SUPPORTED}",
    ),
    (
        union_annotation, {},
        "parameter 'x' of union_annotation() is annotated 'Union[int, str]', which has no "
        "schema type; an argument has one type: write 'Optional[X]' for X or None, 'Scalar' "
        "for any number, or register one overload per type",
    ),
    (
        bare_list, {},
        "parameter 'x' of bare_list() is annotated 'list', which has no schema type; say "
        "what it holds, e.g. 'list[int]'",
    ),
    (
        none_annotation, {},
        "parameter 'x' of none_annotation() is annotated 'None', which has no schema type; "
        "None on its own is no parameter type; write 'Optional[X]' for an X that may be None",
    ),
    (
        mixed_tuple, {},
        "parameter 'x' of mixed_tuple() is annotated 'tuple[int, str]', which has no schema "
        "type; a tuple must hold one type, e.g. 'tuple[int, int]'; use 'list[X]' for any length",
    ),
    (
        dict_key, {},
        "parameter 'x' of dict_key() is annotated 'dict[Device, int]', which has no schema "
        "type (because of 'Device'); dict keys must be str, int, float, complex, bool or Tensor",
    ),
    (
        wrong_default, {},
        "default 'mean' of parameter 'alpha' of wrong_default() does not fit its annotation "
        "'float'; give a default of that type, or change the annotation",
    ),
    (
        bool_for_int, {},
        "default True of parameter 'dim' of bool_for_int() does not fit its annotation "
        "'int'; give a default of that type, or change the annotation",
    ),
    (
        none_default, {},
        "default None of parameter 'dim' of none_default() does not fit its annotation "
        "'int'; make it optional: 'dim: Optional[int] = None'",
    ),
    (
        complex_default, {},
        "default 1j of parameter 'z' of complex_default() cannot be written in a schema, "
        "which has no complex literals; default to None ('z: Optional[complex] = None') "
        "and pick the value in the kernel",
    ),
    (
        optional_items_default, {},
        "default (None, 1) of parameter 'h' of optional_items_default() cannot be a schema "
        "default (a list of 'int?' takes no list default); default to None ('h: "
        "Optional[Sequence[Optional[int]]] = None') and pick the value in the kernel",
    ),
    (
        tensor_default, {},
        "default tensor(..., shape=(1,), dtype=float32, device='meta') of parameter 'x' of "
        "tensor_default() cannot be written in a schema, which has no Tensor literals; "
        "default to None ('x: Optional[Tensor] = None') and pick the value in the kernel",
    ),
    (
        wrong_length, {},
        "default (1, 2, 3) of parameter 'size' of wrong_length() does not fit its "
        "annotation 'tuple[int, int]'; give a default of that type, or change the annotation",
    ),
    (
        dict_default, {},
        "default {} of parameter 'd' of dict_default() cannot be written in a schema, which "
        "has no dict literals; default to None ('d: Optional[dict[str, int]] = None') and "
        "pick the value in the kernel",
    ),
    (
        enum_mismatch, {},
        "default <MemoryFormat.channels_last: 2> of parameter 'layout' of enum_mismatch() "
        "does not fit its annotation 'Layout'; give a default of that type, or change the "
        "annotation",
    ),
    (
        string_for_device, {},
        "default 'cpu' of parameter 'device' of string_for_device() does not fit its "
        "annotation 'Device'; give a default of that type, or change the annotation",
    ),
    (
        update, {"mutates_args": ["x", "alpha"]},
        "parameter 'alpha' of update() is in mutates_args but is annotated 'float'; only "
        "tensors (Tensor, Optional[Tensor], list[Tensor]) can be mutated; remove 'alpha' "
        "from mutates_args",
    ),
    (
        update, {"mutates_args": ["x", "y"]},
        "mutates_args names 'y', but update() has no parameter 'y'; its parameters are: "
        "x, alpha, ys, out",
    ),
    (
        update, {"mutates_args": "out"},
        "mutates_args takes parameter names or \"unknown\", not the string 'out'; write "
        "mutates_args=['out']",
    ),
    (
        no_return, {},
        "the return of no_return() has no annotation; annotate it, e.g. 'def no_return(...) "
        "-> Tensor', or '-> None' if it returns nothing",
    ),
    (
        any_return, {},
        "the return of any_return() is annotated 'Any', which has no schema type; name the "
        "type it takes, e.g. 'Tensor'",
    ),
    (
        nested_return_tuple, {},
        "the return of nested_return_tuple() is annotated 'tuple[Tensor, tuple[int, str]]', "
        "which has no schema type (because of 'tuple[int, str]'); a tuple must hold one "
        "type, e.g. 'tuple[int, int]'; use 'list[X]' for any length",
    ),
    (
        non_ascii, {},
        "parameter 'ä' of non_ascii() is not an ASCII identifier, which a schema argument "
        "name must be; rename it",
    ),
    (
        tensor, {"name": "my-op"},
        "'my-op' is not an operator name; write 'op', 'op.overload' or 'ns::op.overload' "
        "with ASCII identifiers",
    ),
    (
        tensor, {"name": "ns::op.a.b"},
        "'ns::op.a.b' is not an operator name; write 'op', 'op.overload' or "
        "'ns::op.overload' with ASCII identifiers",
    ),
    (
        future.unresolvable, {},
        "parameter 'y' of unresolvable() is annotated 'Tensr', which does not resolve in "
        "module tests._infer_future_annotations (NameError: name 'Tensr' is not defined); "
        "define or import the name there",
    ),
    (
        future.type_checking_only, {},
        "parameter 'layout' of type_checking_only() is annotated 'Layout', which does not "
        "resolve in module tests._infer_future_annotations (NameError: name 'Layout' is not "
        "defined); define or import the name there",
    ),
]


@pytest.mark.parametrize(
    ("fn", "kwargs", "message"), REFUSALS, ids=[f"{f.__name__}-{i}" for i, (f, _, _) in enumerate(REFUSALS)]
)
def test_refusal(fn: Callable[..., object], kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(SchemaInferenceError) as info:
        infer_schema(fn, **kwargs)
    assert str(info.value) == message


def test_refusals_are_type_errors() -> None:
    with pytest.raises(TypeError):
        infer_schema(any_annotation)
    assert issubclass(SchemaInferenceError, TypedopsError)


def test_refusals_come_in_parameter_order() -> None:
    def two_problems(x, *args: Tensor) -> Tensor:  # type: ignore[no-untyped-def]
        raise NotImplementedError

    with pytest.raises(SchemaInferenceError, match="parameter 'x' of two_problems"):
        infer_schema(two_problems)


def test_not_a_function() -> None:
    with pytest.raises(SchemaInferenceError, match="cannot read the signature of 3"):
        infer_schema(3, name="three")  # type: ignore[arg-type]


# -- the reverse: schema -> signature ---------------------------------------------------------


def test_signature_from_schema() -> None:
    schema = parse_schema(
        "ns::conv.out(Tensor input, SymInt[2] stride=1, Scalar? alpha=None, *, "
        "ScalarType dtype=long, MemoryFormat mf=contiguous_format, Device d=\"cpu:0\", "
        "float[] ws=[1.5], Tensor(a!) out) -> (Tensor, int[])"
    )
    sig = signature_from_schema(schema)
    P = inspect.Parameter
    assert list(sig.parameters.values()) == [
        P("input", P.POSITIONAL_OR_KEYWORD, annotation=Tensor),
        P("stride", P.POSITIONAL_OR_KEYWORD, annotation=tuple[SymInt, SymInt], default=(1, 1)),
        P("alpha", P.POSITIONAL_OR_KEYWORD, annotation=Optional[Scalar], default=None),
        P("dtype", P.KEYWORD_ONLY, annotation=ScalarType, default=ScalarType.int64),
        P("mf", P.KEYWORD_ONLY, annotation=MemoryFormat, default=MemoryFormat.contiguous_format),
        P("d", P.KEYWORD_ONLY, annotation=Device, default=Device("cpu", 0)),
        P("ws", P.KEYWORD_ONLY, annotation=list[float], default=(1.5,)),
        P("out", P.KEYWORD_ONLY, annotation=Tensor),
    ]
    assert sig.return_annotation == tuple[Tensor, list[int]]
    again = infer_schema(_function_from(sig), name="ns::conv.out", mutates_args=["out"])
    # the same schema, with the broadcast and the enum's alias written out canonically
    assert str(again) == (
        "ns::conv.out(Tensor input, SymInt[2] stride=[1, 1], Scalar? alpha=None, *, "
        'ScalarType dtype=int64, MemoryFormat mf=contiguous_format, Device d="cpu:0", '
        "float[] ws=[1.5], Tensor(a!) out) -> (Tensor, int[])"
    )


def test_generator_arguments_have_a_python_type() -> None:
    # issue 11: PyTorch's 'Generator? generator=None' (48 ops of native_functions.yaml)
    schema = parse_schema("ns::bernoulli(Tensor self, *, Generator? generator=None) -> Tensor")
    sig = signature_from_schema(schema)
    assert sig.parameters["generator"].annotation == Optional[Generator]
    assert sig.parameters["generator"].default is None

    def bernoulli(self: Tensor, *, generator: Optional[Generator] = None) -> Tensor:
        raise NotImplementedError

    assert infer_schema(bernoulli, name="ns::bernoulli", mutates_args=()) == schema


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "f(Future(Tensor) x) -> ()",
            f"argument 'x' of f has type 'Future(Tensor)', which has no Python form; "
            f"signatures can be made for {_SUPPORTED}",
        ),
        (
            "f(t x) -> t",
            f"argument 'x' of f has type 't', which has no Python form; signatures can be "
            f"made for {_SUPPORTED}",
        ),
        (
            "f(Tensor x) -> (Tensor, Storage)",
            f"return 1 of f has type 'Storage', which has no Python form; signatures can be "
            f"made for {_SUPPORTED}",
        ),
        ("f(Tensor x, ...) -> ()", "f takes or returns '...', which a typed Python signature cannot"),
        (
            "f(Tensor x) -> int[2]",
            "the return of f has type 'int[2]', which has no Python form: a tuple return "
            "annotation means several returns; return 'list[...]' instead",
        ),
        ("f(Tensor from) -> ()", "argument 'from' of f is a Python keyword, so it cannot name a parameter"),
        # aten's 'int[2] stride=[]' means "unspecified"; tuple[int, int] cannot default to ()
        ("f(int[2] stride=[]) -> ()", "argument 'stride' of f has default [], which is no value of type 'int[2]'"),
    ],
)
def test_signature_refusal(text: str, message: str) -> None:
    with pytest.raises(SchemaInferenceError) as info:
        signature_from_schema(parse_schema(text))
    assert str(info.value) == message


def test_an_unknown_enum_default_cannot_reach_a_signature() -> None:
    # The model refuses it as the parser does, so no schema carries one.
    with pytest.raises(ValueError) as info:
        Argument("dtype", SCALAR_TYPE, "float128")
    assert str(info.value).startswith(
        "default float128 does not fit type 'ScalarType' of argument 'dtype': type 'ScalarType' "
        "takes one of bfloat16, bool, byte,"
    )


def _shape(args: tuple[Argument, ...]) -> list[tuple[str, Type, bool, bool]]:
    return [(a.name, a.type, a.is_write, a.has_default) for a in args]


def test_native_functions_survive_the_round_trip() -> None:
    """Over native_functions.yaml: each schema is refused with SchemaInferenceError, or its
    signature infers back to the same arguments (names, types, writes, defaults present)
    and return types. Alias sets on returns, view aliases and return names have no
    Python form; default text comes back canonical ('int[2] stride=1' -> '[1, 1]')."""
    schemas = native_function_schemas()
    if schemas is None:
        pytest.skip("needs torch (the compat extra) for native_functions.yaml")
    refused = 0
    for text in schemas:
        schema = parse_schema(text)
        try:
            sig = signature_from_schema(schema)
        except SchemaInferenceError:
            refused += 1  # Generator, 'int reduction=Mean', 'int[2] stride=[]', ...
            continue
        written = [a.name for a in schema.arguments if a.is_write]
        back = infer_schema(_function_with_signature(sig), name=schema.full_name, mutates_args=written)
        assert _shape(back.positional) == _shape(schema.positional), text
        assert _shape(back.kwarg_only) == _shape(schema.kwarg_only), text
        assert [r.type for r in back.returns] == [r.type for r in schema.returns], text
    assert refused < len(schemas) // 10


# -- the property: infer_schema(signature_from_schema(s)) == s ------------------------------


def _function_from(sig: inspect.Signature) -> Callable[..., object]:
    """A real function with ``sig``'s parameters, defaults and annotations (fast path)."""
    params = list(sig.parameters.values())
    defaults = [p.default for p in params]
    parts: list[str] = []
    for i, p in enumerate(params):
        if p.kind is p.KEYWORD_ONLY and "*" not in parts:
            parts.append("*")
        parts.append(p.name if p.default is p.empty else f"{p.name}=_defaults[{i}]")
    namespace: dict[str, Any] = {"_defaults": defaults}
    exec(f"def kernel({', '.join(parts)}): pass", namespace)
    fn: Callable[..., object] = namespace["kernel"]
    fn.__annotations__ = {p.name: p.annotation for p in params}
    fn.__annotations__["return"] = sig.return_annotation
    return fn


def _function_with_signature(sig: inspect.Signature) -> Callable[..., object]:
    """A function whose ``__signature__`` is ``sig`` (the inspect.signature path)."""

    def kernel(*args: object, **kwargs: object) -> None:
        raise NotImplementedError

    kernel.__signature__ = sig  # type: ignore[attr-defined]
    return kernel


_BASES = [
    TENSOR, INT, SYM_INT, FLOAT, BOOL, STR, COMPLEX, SCALAR, SCALAR_TYPE, LAYOUT, DEVICE, MEMORY_FORMAT, BaseType("Generator"),
]  # fmt: skip
_DICT_KEYS = [STR, INT, FLOAT, COMPLEX, BOOL, TENSOR]
_ENUMS: dict[str, Any] = {"ScalarType": ScalarType, "Layout": Layout, "MemoryFormat": MemoryFormat}


def _containers(inner: st.SearchStrategy[Type]) -> st.SearchStrategy[Type]:
    return st.one_of(
        inner.filter(lambda t: not isinstance(t, OptionalType)).map(OptionalType),
        st.builds(ListType, inner, st.none() | st.integers(1, 4)),
        st.builds(DictType, st.sampled_from(_DICT_KEYS), inner),
    )


supported_types = st.recursive(st.just(TENSOR) | st.sampled_from(_BASES), _containers, max_leaves=4)


def _values(type_: Type) -> st.SearchStrategy[Any] | None:
    """Schema-level default values of ``type_`` (None when it takes no default)."""
    if isinstance(type_, OptionalType):
        inner = _values(type_.elem)
        return st.none() if inner is None else st.none() | inner
    if isinstance(type_, ListType):
        elem = type_.elem.elem if isinstance(type_.elem, OptionalType) else type_.elem
        values = _values(type_.elem) if elem in _BASES else None
        if values is None:
            return st.just(()) if type_.size is None else None
        size = type_.size
        return st.lists(values, min_size=size or 0, max_size=size or 3).map(tuple)
    if type_ in (INT, SYM_INT):
        return st.integers()
    if type_ in (FLOAT, COMPLEX):
        return st.floats() | st.integers()
    if type_ == SCALAR:
        return st.booleans() | st.integers() | st.floats()
    if type_ == BOOL:
        return st.booleans()
    if type_ == STR:
        return st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=8)
    if type_ == DEVICE:
        return st.sampled_from(["cpu", "meta", "cpu:0", "privateuseone:3"])
    enum = _ENUMS.get(str(type_))
    if enum is not None:
        return st.sampled_from([EnumDefault(m.name) for m in enum])
    return None  # Tensor, Dict(...): no literal


_identifiers = st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True).filter(lambda s: not keyword.iskeyword(s))


def _lone_fixed_list(returns: list[Type]) -> bool:
    return len(returns) == 1 and isinstance(returns[0], ListType) and returns[0].size is not None


@st.composite
def schemas(draw: st.DrawFn) -> FunctionSchema:
    names = draw(st.lists(_identifiers, unique=True, max_size=6))
    n_positional = draw(st.integers(0, len(names)))
    args: list[list[Any]] = []
    for name in names:
        type_ = draw(supported_types)
        values = _values(type_)
        default = None
        if values is not None and draw(st.booleans()):
            default = format_literal(draw(values))
            if default_mismatch(type_, default) is not None:
                default = None  # a value of the type that no schema literal may stand for
        args.append([name, type_, default])
    required = [i for i, a in enumerate(args[:n_positional]) if a[2] is None]
    for arg in args[: required[-1] if required else 0]:
        arg[2] = None  # a Python positional parameter with a default has only such after it
    built: list[Argument] = []
    for name, type_, default in args:
        alias = None
        if type_.is_tensor_like() and draw(st.booleans()):
            alias = AliasInfo((chr(ord("a") + sum(a.alias is not None for a in built)),), (), True)
        built.append(Argument(name, type_, default, alias))
    returns = draw(st.lists(supported_types, max_size=3).filter(lambda rs: not _lone_fixed_list(rs)))
    return FunctionSchema(
        draw(_identifiers),
        namespace=draw(st.just("") | _identifiers),
        overload_name=draw(st.just("") | _identifiers),
        positional=tuple(built[:n_positional]),
        kwarg_only=tuple(built[n_positional:]),
        returns=tuple(Return(t) for t in returns),
    )


@settings(max_examples=300, deadline=None)
@given(schemas())
def test_infer_schema_inverts_signature_from_schema(schema: FunctionSchema) -> None:
    sig = signature_from_schema(schema)
    written = [a.name for a in schema.arguments if a.is_write]
    for fn in (_function_from(sig), _function_with_signature(sig)):
        assert infer_schema(fn, name=schema.full_name, mutates_args=written) == schema
