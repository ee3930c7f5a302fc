"""Generated wrappers: their text per shape, installation, conversions and stack helpers."""

from __future__ import annotations

import inspect
import linecache
from collections.abc import Sequence
from typing import Any, Optional, Union

import pytest

from typedops.boxing import (
    ArgCheck,
    BoxedReturnError,
    CheckKind,
    Conversion,
    SequenceKind,
    conversions_for,
    GeneratedSourceError,
    boxing_source,
    call_shape,
    check_identifier,
    drop,
    last,
    make_boxing,
    make_unboxing,
    peek,
    pop,
    push,
    shape_and_defaults,
    positional_names,
    unboxing_source,
)
from typedops import MemoryFormat, Tensor, tensor
from typedops.boxing._convert import broadcast, to_list, to_tuple
from typedops.boxing._source import install, numbered
from typedops.schema import infer_schema, parse_schema

ADD = call_shape(parse_schema("t::add(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"))
SPLIT = call_shape(parse_schema("t::split(Tensor self, int[2] sizes, int dim=0) -> (Tensor, Tensor)"))


def test_unboxing_source_text() -> None:
    assert unboxing_source(ADD, keyed=False) == (
        "def make(_fn):\n"
        "    def unboxing(op, keys, stack):\n"
        "        k0 = stack.pop()\n"
        "        a1 = stack.pop()\n"
        "        a0 = stack.pop()\n"
        "        try:\n"
        "            _r = _fn(a0, a1, alpha=k0)\n"
        "        except BaseException:\n"
        "            stack.extend((a0, a1, k0,))\n"
        "            raise\n"
        "        stack.append(_r)\n"
        "    return unboxing\n"
    )


def test_unboxing_source_with_keys_conversions_and_two_returns() -> None:
    conversions = (None, Conversion(SequenceKind.tuple, 2), None)
    assert unboxing_source(SPLIT, keyed=True, conversions=conversions) == (
        "def make(_fn):\n"
        "    def unboxing(op, keys, stack):\n"
        "        a2 = stack.pop()\n"
        "        a1 = stack.pop()\n"
        "        a0 = stack.pop()\n"
        "        try:\n"
        "            c1 = _to_tuple(a1, 2)\n"
        "            _r = _fn(keys, a0, c1, a2)\n"
        "        except BaseException:\n"
        "            stack.extend((a0, a1, a2,))\n"
        "            raise\n"
        "        if len(_r) != 2:\n"
        "            raise _wrong_tuple(op, _r, 2)\n"
        "        stack.extend(_r)\n"
        "    return unboxing\n"
    )


def test_boxing_source_text() -> None:
    assert boxing_source(ADD) == (
        "def make(_fn, _op):\n"
        "    def boxing(keys, a0, a1, *, alpha):\n"
        "        stack = [a0, a1, alpha]\n"
        "        _fn(_op, keys, stack)\n"
        "        if len(stack) != 1:\n"
        "            raise _bad_returns(_op, stack, 1)\n"
        "        return stack[0]\n"
        "    return boxing\n"
    )


def test_wrappers_of_one_shape_share_their_code() -> None:
    first = make_unboxing(ADD, lambda a, b, alpha: a)
    second = make_unboxing(ADD, lambda a, b, alpha: b)
    assert first.__code__ is second.__code__


def test_shape_and_defaults() -> None:
    schema = parse_schema(
        "t::f(Tensor self, int[2] size=1, *, MemoryFormat memory_format=contiguous_format, bool? flag=None) -> Tensor"
    )
    shape, defaults = shape_and_defaults(schema)
    assert shape == call_shape(schema)
    assert shape.describe() == "(Tensor, _, *, memory_format, flag) -> 1"
    assert defaults == ((1, 1), MemoryFormat.contiguous_format, None)


def test_schemas_sharing_their_arguments_share_shape_and_defaults() -> None:
    def f(x: Tensor, n: int = 3) -> Tensor:
        raise NotImplementedError

    def g(x: Tensor, n: int = 3) -> Tensor:
        raise NotImplementedError

    first, second = shape_and_defaults(infer_schema(f)), shape_and_defaults(infer_schema(g))
    assert first[0] is second[0] and first[1] == (3,)
    # Equal text parsed twice gives new Argument objects: an equal shape, computed again.
    parsed = [shape_and_defaults(parse_schema("t::h(Tensor x, int n=3) -> Tensor")) for _ in range(2)]
    assert parsed[0] == parsed[1] == first


def test_generated_code_is_in_linecache() -> None:
    wrapper = make_unboxing(ADD, lambda a, b, alpha: a)
    filename = wrapper.__code__.co_filename
    assert filename.startswith("<typedops unboxing (Tensor, Tensor, *, alpha) -> 1 #")
    assert linecache.getline(filename, 7).strip() == "_r = _fn(a0, a1, alpha=k0)"
    assert "stack.pop()" in inspect.getsource(wrapper)


def test_unboxing_and_boxing_run() -> None:
    stack: list[Any] = [1, 2, 3]
    make_unboxing(ADD, lambda a, b, alpha: a + b * alpha)(None, None, stack)
    assert stack == [7]

    def boxed(op: Any, keys: Any, stack: list[Any]) -> None:
        a, b, alpha = stack
        stack[:] = [a - b * alpha]

    assert make_boxing(ADD, boxed, "t::add")(None, 10, 2, alpha=3) == 4


def test_a_boxed_kernel_leaving_the_wrong_number_of_values() -> None:
    def bad(op: Any, keys: Any, stack: list[Any]) -> None:
        stack.append(0)

    with pytest.raises(BoxedReturnError) as info:
        make_boxing(ADD, bad, "t::add")(None, 1, 2, alpha=3)
    assert str(info.value) == (
        "boxed kernel of t::add left 4 value(s) on the stack, but its schema returns 1; "
        "a boxed kernel pops its arguments and pushes its returns"
    )


def test_compile_failure_shows_the_numbered_source() -> None:
    source = "def make():\n    return (\n"
    with pytest.raises(GeneratedSourceError) as info:
        install(source, {}, "broken", "make")
    message = str(info.value)
    assert message.startswith("typedops generated code that does not compile (")
    assert message.endswith("please report this with the source below:\n" + numbered(source))
    assert numbered(source) == "1 | def make():\n2 |     return ("


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("x y", "argument 'x y' cannot be used in generated code: it must be an ASCII identifier and not a Python keyword"),
        ("class", "argument 'class' cannot be used in generated code: it must be an ASCII identifier and not a Python keyword"),
        ("é", "argument 'é' cannot be used in generated code: it must be an ASCII identifier and not a Python keyword"),
    ],
)
def test_check_identifier_refuses(name: str, message: str) -> None:
    with pytest.raises(ValueError) as info:
        check_identifier(name, "argument")
    assert str(info.value) == message


def test_keyword_argument_names_get_a_trailing_underscore() -> None:
    schema = parse_schema("t::can_cast(ScalarType from, ScalarType to, *, bool lambda=False) -> bool")
    assert positional_names(schema) == ("from_", "to")
    # positional names are not part of the shape (Note [Wrapper cache]); keyword-only ones are
    assert [a.name for a in call_shape(schema).args] == ["", "", "lambda_"]


def test_conversions() -> None:
    assert to_tuple([1, 2]) == (1, 2) and to_tuple(3, 2) == (3, 3) and to_tuple(None) is None
    assert to_list((1, 2)) == [1, 2] and to_list(3, 2) == [3, 3] and to_list(None) is None
    same = (1, 2)
    assert to_tuple(same) is same
    # a range (any sequence the argument check takes) is its items, not a lone value
    assert to_tuple(range(2), 2) == (0, 1) and to_list(range(3), 1) == [0, 1, 2]
    assert broadcast(range(2), 1) == [0, 1] and broadcast(4, 2) == [4, 4]


def test_conversions_follow_the_kernels_sequence_annotations() -> None:
    schema = parse_schema("t::f(int[2] a, int[] b, int[]? c, int[] d, int[] e, int n) -> ()")

    def kernel(
        a: tuple[int, int], b: list[int], c: Optional[tuple[int, ...]], d: Sequence[int],
        e: Union[list[int], tuple[int, ...]], n: int,
    ) -> None:
        raise NotImplementedError

    assert conversions_for(schema, kernel, with_keys=False) == (
        Conversion(SequenceKind.tuple, 2), Conversion(SequenceKind.list), Conversion(SequenceKind.tuple),
        None, None, None,
    )  # fmt: skip
    no_lists = parse_schema("t::g(Tensor x, int n) -> ()")
    assert conversions_for(no_lists, kernel, with_keys=False) == (None, None)


def test_conversion_source_names_the_converter_and_the_size() -> None:
    shape = call_shape(parse_schema("t::f(int[] a, int[3] b) -> ()"))
    lines = unboxing_source(shape, False, (Conversion(SequenceKind.list), Conversion(SequenceKind.list, 3)))
    assert "            c0 = _to_list(a0)\n            c1 = _to_list(a1, 3)\n" in lines


@pytest.mark.parametrize(
    ("kind", "size", "message"),
    [
        ("tuple", None, "a Conversion converts to a SequenceKind, not 'tuple'"),
        (SequenceKind.list, -1, "a Conversion's size is None or a whole number >= 0, not -1"),
        (SequenceKind.list, "2); import os; (", "a Conversion's size is None or a whole number >= 0, not '2); import os; ('"),
        (SequenceKind.tuple, True, "a Conversion's size is None or a whole number >= 0, not True"),
    ],
)
def test_a_conversion_refuses_what_cannot_be_written_into_source(kind: Any, size: Any, message: str) -> None:
    with pytest.raises(ValueError) as info:
        Conversion(kind, size)
    assert str(info.value) == message


@pytest.mark.parametrize(
    ("type_text", "check"),
    [
        ("Tensor", ArgCheck(CheckKind.tensor)),
        ("Tensor?[]", ArgCheck(CheckKind.tensor)),
        ("int", ArgCheck(CheckKind.int)),
        ("SymInt?", ArgCheck(CheckKind.int, optional=True)),
        ("float?", ArgCheck(CheckKind.float, optional=True)),
        ("Scalar", ArgCheck(CheckKind.scalar)),
        ("Device?", ArgCheck(CheckKind.device, optional=True)),
        ("ScalarType", ArgCheck(CheckKind.scalar_type)),
        ("int[2]", ArgCheck(CheckKind.int_list, size=2)),
        ("SymInt[]?", ArgCheck(CheckKind.int_list, optional=True)),
        ("float[2]", ArgCheck(CheckKind.slow)),
        ("Dict(str, int)?", ArgCheck(CheckKind.slow)),
        ("Any", ArgCheck(CheckKind.none)),
        ("Generator?", ArgCheck(CheckKind.none)),
        ("t", ArgCheck(CheckKind.none)),
    ],
)
def test_each_argument_type_gets_its_fast_check(type_text: str, check: ArgCheck) -> None:
    (arg,) = call_shape(parse_schema(f"t::f({type_text} a) -> ()")).args
    assert arg.check == check


def test_stack_helpers() -> None:
    stack: list[Any] = []
    push(stack, 1, 2, 3)
    assert peek(stack, 0, 3) == 1 and peek(stack, 2, 3) == 3
    assert last(stack, 2) == [2, 3]
    assert pop(stack) == 3
    drop(stack, 2)
    assert stack == []
    with pytest.raises(IndexError, match=r"^peek\(0, 1\) on a stack of 0 values$"):
        peek(stack, 0, 1)
    with pytest.raises(IndexError, match=r"^drop\(1\) on a stack of 0 values$"):
        drop(stack, 1)


# -- Note [A failed boxed call keeps its arguments] -------------------------------------------
def test_a_kernel_that_raises_leaves_the_stack_as_given() -> None:
    from typedops import Library

    def kernel(x: Tensor, n: int, *, sizes: list[int]) -> Tensor:
        raise KeyError("the kernel failed")

    with Library("kept_args", "FRAGMENT") as lib:
        op = lib.define("f(Tensor x, int n=3, *, int[2] sizes=1) -> Tensor")
        lib.impl("f", kernel, "CPU")
        x = tensor([1.0])
        for given in ([x], [x, 2], [x, 2, [4, 5]], [x, 2, 7]):
            stack: list[Any] = list(given)
            with pytest.raises(KeyError):
                op.call_boxed(stack)
            assert stack == given  # the defaults filled in are taken back too


def test_an_unboxing_wrapper_gives_back_converted_arguments_unconverted() -> None:
    def kernel(a: list[int]) -> None:
        raise ValueError("no")

    shape = call_shape(parse_schema("t::f(int[2] a) -> ()"))
    wrapper = make_unboxing(shape, kernel, conversions=(Conversion(SequenceKind.list, 2),))
    stack: list[Any] = [5]
    with pytest.raises(ValueError):
        wrapper(None, None, stack)
    assert stack == [5]
