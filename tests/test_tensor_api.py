"""The torch-like Tensor API beside the ops: numpy() of a tensor that requires grad, truth
and number conversions of one-element tensors, Python types as dtypes, sizes as varargs
(tests/test_tensor_api_compat.py compares each with torch)."""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Any, cast

import pytest
from hypothesis import given
from hypothesis import strategies as st

import typedops
from typedops import ScalarType, Tensor, core, no_grad, ops, tensor
from typedops.vocabulary import ArgumentError, ArgumentOverflowError, ArgumentValueError, TensorError, UnsupportedError

_NUMPY_GRAD = "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."


def test_numpy_refuses_a_tensor_that_requires_grad_while_grad_mode_is_on() -> None:
    x = tensor([1.0, 2.0], requires_grad=True)
    for t in (x, core.mul(x, 2.0)):
        with pytest.raises(TensorError) as info:
            t.numpy()
        assert str(info.value) == _NUMPY_GRAD and isinstance(info.value, RuntimeError)
        assert t.detach().numpy().tolist() == t.numpy(force=True).tolist() == t.tolist()
        with no_grad():
            assert t.numpy().tolist() == t.tolist()
    assert tensor([1.0]).numpy().tolist() == [1.0]


def test_truth_of_an_empty_tensor_has_its_own_message() -> None:
    for t in (core.ones([0]), core.ones([2, 0]), core.ones([0], device="meta")):
        with pytest.raises(TensorError) as info:
            bool(t)
        assert str(info.value) == (
            "Boolean value of Tensor with no values is ambiguous; test t.numel() (or reduce the "
            "tensor to one element first)"
        )


_ONE = "only one element tensors can be converted to Python scalars; this one has {n} elements: " \
       "reduce it first (t.sum(), t.max()) or read them all with t.tolist()"  # fmt: skip


def test_number_conversions_of_one_element_tensors() -> None:
    assert float(tensor([[2.5]])) == 2.5 and type(float(tensor(3))) is float
    assert int(tensor(-2.7)) == -2 and int(tensor([True])) == 1 and type(int(tensor(2.0))) is int
    assert complex(tensor(1.5)) == 1.5 + 0j and complex(tensor(1 + 2j, dtype=ScalarType.complex128)) == 1 + 2j
    assert float(tensor(3 + 0j)) == 3.0 and int(tensor(3 + 0j)) == 3
    assert operator.index(tensor([[3]], dtype=ScalarType.int32)) == 3 and operator.index(tensor(True)) == 1
    assert [10, 20, 30][tensor(1)] == 20 and list(range(tensor(2))) == [0, 1]
    assert math.isclose(float(tensor(0.1)), 0.10000000149011612)  # float32's value, as torch gives


@pytest.mark.parametrize("convert", [float, int, complex])
@pytest.mark.parametrize("numel", [0, 2])
def test_number_conversions_refuse_other_sizes(convert: Any, numel: int) -> None:
    with pytest.raises(ArgumentValueError) as info:
        convert(core.ones([numel]))
    assert str(info.value) == _ONE.format(n=numel) and isinstance(info.value, ValueError)


def test_int_and_float_of_a_complex_value_with_an_imaginary_part_are_refused() -> None:
    for convert, name in ((int, "int64_t"), (float, "double")):
        with pytest.raises(TensorError) as info:
            convert(tensor(1.5 + 2j))
        assert str(info.value) == (
            f"value cannot be converted to type {name} without overflow: the complex value (1.5+2j) "
            "has a nonzero imaginary part; convert it with complex(t)"
        )


def test_int_of_nan_and_infinity_is_refused() -> None:
    with pytest.raises(ArgumentValueError) as nan:
        int(tensor(math.nan))
    assert str(nan.value) == "cannot convert float NaN to integer: test it with t != t first"
    with pytest.raises(ArgumentOverflowError) as inf:
        int(tensor(-math.inf))
    assert str(inf.value) == "cannot convert float infinity to integer: clamp it to a finite range first"
    assert isinstance(inf.value, OverflowError)


@pytest.mark.parametrize(
    ("t", "shown"),
    [(tensor(1.0), "float32 with 1 elements"), (tensor([1, 2]), "int64 with 2 elements"),
     (tensor(1j), "complex64 with 1 elements")],
)  # fmt: skip
def test_index_takes_integer_tensors_of_one_element_only(t: Tensor, shown: str) -> None:
    with pytest.raises(ArgumentError) as info:
        operator.index(t)
    assert str(info.value) == (
        f"only integer tensors of a single element can be converted to an index; this one is {shown}: "
        "convert it with t.to(int64) or read it with int(t)"
    )


def test_meta_tensors_have_no_value_to_convert() -> None:
    for convert in (float, int, complex, bool, operator.index):
        with pytest.raises(TensorError):
            convert(core.ones([1], dtype=ScalarType.int64, device="meta"))


_PYTHON_TYPES = [(float, ScalarType.float64), (int, ScalarType.int64), (bool, ScalarType.bool),
                 (complex, ScalarType.complex128)]  # fmt: skip


@pytest.mark.parametrize(("given", "dtype"), _PYTHON_TYPES)
def test_python_types_are_dtypes_for_every_dtype_argument(given: Any, dtype: ScalarType) -> None:
    x = core.ones([2, 3])
    made = [
        core.ones([2], dtype=given), core.zeros([2], dtype=given), core.empty([2], dtype=given),
        core.full([2], 1, dtype=given), core.scalar_tensor(1, dtype=given), core.arange(3, dtype=given),
        core.arange(0, 3, 1, dtype=given), core.randn([2], dtype=given) if dtype.is_floating_point or dtype.is_complex
        else core.ones([1], dtype=dtype), core.zeros_like(x, dtype=given), core.sum(x, dtype=given),
        core.sum(x, [0], dtype=given), x.sum(dtype=given), core.mean(x, dtype=given) if dtype.is_floating_point
        or dtype.is_complex else core.ones([1], dtype=dtype), x.to(given), ops.core.to.dtype(x, given),
        ops.core._to_copy.default(x, dtype=given), tensor([1, 0], dtype=given),
    ]  # fmt: skip
    assert [t.dtype for t in made] == [dtype] * len(made)


def test_a_dtype_that_is_no_python_number_type_is_still_refused() -> None:
    with pytest.raises(ArgumentError) as info:
        core.ones([2], dtype=cast(Any, str))
    assert str(info.value) == "core::ones(): argument 'dtype' (ScalarType?): expected ScalarType, got type"
    stack: list[Any] = [[2], float]  # a boxed stack holds IValues: a dtype is a ScalarType there
    with pytest.raises(ArgumentError):
        ops.core.ones.default.call_boxed(stack)


def test_sizes_as_varargs() -> None:
    x = core.ones([4, 6])
    assert x.view(2, 12).shape == x.view([2, 12]).shape == x.view((2, 12)).shape == (2, 12)
    assert x.view(24).shape == x.reshape(-1).shape == (24,) and x.view(size=[24]).shape == (24,)
    assert x.reshape(3, 8).shape == (3, 8) and x.permute(1, 0).shape == (6, 4)
    assert x.expand(2, 4, 6).shape == x.expand([2, 4, 6], implicit=True).shape == (2, 4, 6)
    assert core.ones([3]).permute(0).shape == (3,)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda x: x.view(2.5), "core::view(): argument 'size' (SymInt[]): expected a list (SymInt[]), got float"),
        (lambda x: x.view(2, 12.0), "core::view(): argument 'size' (SymInt[]): element 1: expected SymInt, got float"),
        (lambda x: x.reshape(5), "shape '[5]' is invalid for input of size 24"),
    ],
)
def test_sizes_as_varargs_are_checked_as_the_list_is(call: Any, message: str) -> None:
    with pytest.raises(typedops.TypedopsError) as info:
        call(core.ones([4, 6]))
    assert str(info.value) == message


@given(st.lists(st.integers(1, 3), min_size=1, max_size=4))
def test_view_of_separate_ints_is_view_of_their_list(shape: list[int]) -> None:
    x = core.ones([math.prod(shape)])
    assert x.view(*shape).shape == x.view(shape).shape == x.reshape(*shape).shape == tuple(shape)


def test_max_and_min_of_every_element() -> None:
    x = tensor([[1.0, 7.0], [-3.0, 2.0]])
    assert core.max(x).item() == x.max().item() == 7.0 and core.min(x).item() == x.min().item() == -3.0
    assert x.max().shape == () and tensor([True, False]).min().tolist() is False
    assert math.isnan(tensor([1.0, math.nan]).max().item())
    assert core.ones([2, 0], device="meta").max().shape == ()  # a meta tensor's emptiness is not checked


def test_min_dim_gives_the_values_and_the_first_index() -> None:
    values, indices = tensor([[3.0, 1.0, 1.0], [0.0, 5.0, -2.0]]).min(1)
    assert values.tolist() == [1.0, -2.0] and indices.tolist() == [1, 2] and indices.dtype is ScalarType.int64
    kept = core.min(tensor([[3, 1], [0, 5]]), 0, True)
    assert kept[0].tolist() == [[0, 1]] and kept[1].tolist() == [[1, 0]]


@pytest.mark.parametrize("name", ["max", "min"])
def test_max_and_min_refuse_empty_and_complex_tensors(name: str) -> None:
    with pytest.raises(TensorError) as empty:
        getattr(core.ones([2, 0]), name)()
    assert str(empty.value) == (
        f"{name}(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim "
        "with the 'dim' argument."
    )
    calls: list[Callable[[Tensor], Any]] = [lambda t: getattr(t, name)(), lambda t: getattr(t, name)(0)]
    for call in calls:
        with pytest.raises(UnsupportedError) as complex_:
            call(tensor([1j]))
        assert str(complex_.value) == (
            f"{name} is not implemented for complex64: complex numbers have no order; compare their .real or "
            ".abs() instead"
        )


def test_squeeze_without_a_dim_drops_every_size_one_dim_as_a_view() -> None:
    x = core.ones([1, 2, 1, 3, 1])
    y = x.squeeze()
    assert y.shape == (2, 3) and y.storage is x.storage and core.squeeze(core.ones([1, 1])).shape == ()
    assert core.ones([2, 3]).squeeze().shape == (2, 3) and x.squeeze(0).shape == (2, 1, 3, 1)
    assert core.transpose(core.ones([2, 1, 3]), 0, 2).squeeze().stride() == (1, 3)


def test_sum_into_out() -> None:
    x = tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    out = core.zeros([3])
    assert core.sum(x, 0, out=out) is out and out.tolist() == [5.0, 7.0, 9.0]
    grown = core.zeros([0], dtype=ScalarType.int64)  # resized; summed in out's dtype
    assert core.sum(tensor([[1, 2], [3, 4]]), [1], True, out=grown).tolist() == [[3], [7]] and grown.shape == (2, 1)
    assert core.sum(x, [0, 1], out=core.zeros([], dtype=ScalarType.float64)).dtype is ScalarType.float64
    assert core.sum(x, 1, out=None).tolist() == [6.0, 15.0]  # out=None is no out
    meta = core.zeros([5], device="meta")
    assert core.sum(core.ones([2, 3], device="meta"), 1, out=meta).shape == (2,)
    with pytest.raises(TensorError) as info:
        core.sum(x, 0, dtype=ScalarType.float64, out=core.zeros([3]))
    assert str(info.value) == (
        "Expected out tensor to have dtype float64, but got float32 instead: pass an out tensor of dtype float64, "
        "or leave dtype out to sum in the out tensor's dtype"
    )
    with pytest.raises(typedops.TypedopsError) as graded:
        core.sum(tensor([1.0], requires_grad=True), 0, out=core.zeros([]))
    assert "functions with out=... arguments don't support automatic differentiation" in str(graded.value)


def test_floor_division_and_remainder_round_toward_negative_infinity() -> None:
    a, b = tensor([5, -7, 3, -4]), tensor([2, 2, -2, -3])
    assert (a // b).tolist() == core.floor_divide(a, b).tolist() == [2, -4, -2, 1]
    assert (a % b).tolist() == a.remainder(b).tolist() == [1, 1, -1, -1]
    assert (a // 2).tolist() == [2, -4, 1, -2] and (7 // b).tolist() == [3, 3, -4, -3]
    assert (a % 3).tolist() == [2, 2, 0, 2] and (7 % b).tolist() == [1, 1, -1, -2]
    assert core.remainder(2.5, tensor([2.0])).tolist() == [0.5]  # remainder.Scalar_Tensor
    halves = tensor([5.0, -5.0, 0.0]) // tensor([0.0, 0.0, 0.0])
    assert halves.tolist()[:2] == [math.inf, -math.inf] and math.isnan(halves.tolist()[2])
    assert (tensor([5], dtype=ScalarType.int32) // 2.5).dtype is ScalarType.float32  # a wrapped float promotes
    assert repr((tensor([-0.0, 0.0]) % tensor([3.0, -2.0])).tolist()) == "[-0.0, 0.0]"  # the dividend's sign


@pytest.mark.parametrize("name", ["floor_divide", "remainder"])
def test_floor_division_and_remainder_refuse(name: str) -> None:
    fn = getattr(core, name)
    with pytest.raises(TensorError) as zero:
        fn(tensor([5, 6]), tensor([1, 0]))
    assert str(zero.value) == (
        f"ZeroDivisionError: {name} of integers by zero; test the divisor first (core.where), or divide "
        "floating tensors (x.to(float32)), where it gives inf or nan"
    )
    for bad, dtype in ((tensor([True]), "bool"), (tensor([1j]), "complex64")):
        with pytest.raises(UnsupportedError) as info:
            fn(bad, bad)
        assert str(info.value) == f"{name} is not implemented for {dtype} tensors; convert them first, e.g. x.to(float32)"


def test_remainder_is_differentiable_and_floor_divide_is_not() -> None:
    x = tensor([5.0, -7.5, 3.0], requires_grad=True)
    y = tensor([2.0, 2.0, -2.0], requires_grad=True)
    (x % y).sum().backward()
    assert x.grad is not None and y.grad is not None
    assert x.grad.tolist() == [1.0, 1.0, 1.0] and y.grad.tolist() == [-2.0, 4.0, 2.0]  # -floor(x / y)
    with pytest.raises(typedops.TypedopsError) as info:
        (x // y).sum().backward()
    assert str(info.value).startswith("the derivative for 'core::floor_divide' is not implemented")


def test_floor_division_and_remainder_in_place() -> None:
    a = tensor([5.0, -7.5, 3.0])
    version = a._version
    a //= 2
    assert a.tolist() == [2.0, -4.0, 1.0] and a._version == version + 1
    b = tensor([5, -7, 3])
    b %= tensor([2, 2, -2])
    assert b.tolist() == [1, 1, -1] and b.dtype is ScalarType.int64
    with pytest.raises(TensorError) as cast_:
        c = tensor([1, 2])
        c //= 2.5
    assert str(cast_.value) == "result type float32 can't be cast to the desired output type int64"
    x = tensor([5.0, -7.5], requires_grad=True)
    y = x * 1
    y %= tensor([2.0, -2.0])
    y.sum().backward()
    assert x.grad is not None and x.grad.tolist() == [1.0, 1.0]


def test_a_number_as_self_of_the_arithmetic_functions() -> None:
    # Note [Numbers as self] in typedops/codegen/_api.py: as torch.sub(2, x); a wrapped
    # number, so x's dtype wins, and x's gradient flows through.
    x = typedops.tensor([1.0, 2.0, 4.0], requires_grad=True)
    assert core.sub(2, x).tolist() == [1.0, 0.0, -2.0]
    assert core.add(2, x, alpha=3).tolist() == [5.0, 8.0, 14.0]
    assert core.div(8, x).tolist() == [8.0, 4.0, 2.0]
    assert core.sub(self=2, other=x).tolist() == [1.0, 0.0, -2.0]
    ints = typedops.tensor([1, 2], dtype=typedops.ScalarType.int32)
    assert core.mul(3, ints).dtype is typedops.ScalarType.int32
    assert core.floor_divide(7, ints).tolist() == [7, 3]
    core.sub(2, x).sum().backward()
    assert x.grad is not None and x.grad.tolist() == [-1.0, -1.0, -1.0]
    with pytest.raises(ArgumentError) as info:
        core.eq(2, x)  # type: ignore[call-overload]  # refused, as the stubs say
    assert str(info.value) == "core::eq.Tensor: argument 'self' (Tensor): expected a Tensor, got int"
    # two numbers: both wrapped, on the CPU, as torch.sub(2, 3) (the stubs take a tensor in one place)
    two = core.sub(2, 3)  # type: ignore[call-overload]
    assert (two.tolist(), two.dtype, two.device.type) == (-1, typedops.ScalarType.int64, "cpu")
    assert core.mul(2, 0.5).dtype is typedops.ScalarType.float32  # type: ignore[call-overload]


def test_the_dtype_conversion_methods_are_typed_and_convert() -> None:
    # Note [Dtype conversion methods]: x.float() is x.to(float32); their stubs are generated
    from typedops.codegen._stubs import CONVERSION_METHODS
    from typedops.tensor import DTYPE_CONVERSIONS

    assert sorted(CONVERSION_METHODS) == sorted(DTYPE_CONVERSIONS)
    x = tensor([1.5, -2.5])
    assert x.float() is x and x.long().tolist() == [1, -2] and x.long().dtype is ScalarType.int64
    assert x.bool().tolist() == [True, True] and x.half().dtype is ScalarType.float16
