"""The Tensor operators the core library installs (typedops/codegen/_operators.py, Note
[Tensor operators]): values, dtypes, broadcasting, reflected and in-place forms, and
property tests that they agree with numpy."""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import typedops.core  # noqa: F401 -- installs the operators
from typedops import Library, ScalarType, Tensor, dispatcher, tensor
from typedops.codegen._operators import OPERATOR_NAMESPACE, operators
from typedops.dispatch import DispatchKey, OperatorHandle, boxed, include_keys

F32 = ScalarType.float32


def test_binary_operators_values_and_dtypes() -> None:
    a, b = tensor([1.0, 2.0, 4.0]), tensor([2.0, 2.0, 2.0])
    assert (a + b).tolist() == [3.0, 4.0, 6.0] and (a - b).tolist() == [-1.0, 0.0, 2.0]
    assert (a * b).tolist() == [2.0, 4.0, 8.0] and (a / b).tolist() == [0.5, 1.0, 2.0]
    assert (a ** 2).tolist() == [1.0, 4.0, 16.0] and (a @ b).tolist() == 14.0
    assert (-a).tolist() == [-1.0, -2.0, -4.0] and abs(-a).tolist() == [1.0, 2.0, 4.0]
    i = tensor([1, 2, 3])
    assert (i + 2).dtype is ScalarType.int64 and (i + 2.5).dtype is F32  # wrapped numbers
    assert (i / 2).dtype is F32 and (i * True).tolist() == [1, 2, 3]
    assert (tensor([1.0], dtype=ScalarType.float16) + 2.5).dtype is ScalarType.float16
    assert (i + tensor([0.5])).tolist() == [1.5, 2.5, 3.5]


def test_broadcasting() -> None:
    col, row = tensor([[1.0], [2.0]]), tensor([10.0, 20.0, 30.0])
    assert (col + row).shape == (2, 3) and (col * row).tolist() == [[10.0, 20.0, 30.0], [20.0, 40.0, 60.0]]
    with pytest.raises(RuntimeError) as info:
        tensor([1.0, 2.0]) + tensor([1.0, 2.0, 3.0])
    assert str(info.value) == (
        "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0"
    )


def test_reflected_operators() -> None:
    a = tensor([1.0, 2.0, 4.0])
    assert (1 + a).tolist() == [2.0, 3.0, 5.0] and (3 * a).tolist() == [3.0, 6.0, 12.0]
    assert (1 - a).tolist() == [0.0, -1.0, -3.0] and (4 / a).tolist() == [4.0, 2.0, 1.0]
    assert (2 < a).tolist() == [False, False, True]  # Python reflects it to a > 2
    assert (1 - tensor([1, 2])).dtype is ScalarType.int64


def test_comparisons_return_bool_tensors_and_tensors_hash_by_identity() -> None:
    a, b = tensor([1.0, 2.0, 3.0]), tensor([3.0, 2.0, 1.0])
    for op, expected in (
        (operator.eq, [False, True, False]), (operator.ne, [True, False, True]),
        (operator.lt, [True, False, False]), (operator.le, [True, True, False]),
        (operator.gt, [False, False, True]), (operator.ge, [False, True, True]),
    ):  # fmt: skip
        result = op(a, b)
        assert result.dtype is ScalarType.bool and result.tolist() == expected
    assert (a == 2).tolist() == [False, True, False]
    # Neither a tensor nor a number: the operators return NotImplemented, and Python
    # compares by identity (the stub types every == as a Tensor, as torch's does).
    other: object = "a"
    assert operator.eq(a, other) is False and operator.ne(a, None) is True
    assert hash(a) == object.__hash__(a) and {a: 1, b: 2}[a] == 1


def test_in_place_operators_write_into_the_tensor_and_bump_its_version() -> None:
    a = tensor([1.0, 2.0])
    view = a.view([2])
    storage, version = a.storage, a._version
    a += tensor([1.0, 1.0])
    a -= 1
    a *= 3
    a /= 2
    assert a.storage is storage and a._version == version + 4 and view._version == a._version
    assert view.tolist() == [1.5, 3.0]
    i = tensor([1, 2])
    with pytest.raises(RuntimeError) as info:
        i += 0.5
    assert str(info.value) == "result type float32 can't be cast to the desired output type int64"
    assert i.tolist() == [1, 2] and i._version == 0


def test_unsupported_operands_give_python_type_errors() -> None:
    a = tensor([1.0])
    with pytest.raises(TypeError, match=r"unsupported operand type\(s\) for \*\* or pow\(\): 'Tensor' and 'str'"):
        a ** "2"  # type: ignore[operator]  # noqa: B018
    with pytest.raises(TypeError, match=r"unsupported operand type\(s\) for @: 'Tensor' and 'int'"):
        a @ 2  # type: ignore[operator]  # noqa: B018
    with pytest.raises(TypeError, match=r"unsupported operand type\(s\) for \+: 'Tensor' and 'str'"):
        a + "1"  # type: ignore[operator]  # noqa: B018


def test_operators_go_through_the_dispatcher() -> None:
    seen: list[str] = []

    def intercept(handle: OperatorHandle, keys: Any, stack: list[Any]) -> None:
        seen.append(handle.full_name)
        handle.redispatch_boxed(keys, stack)

    a = tensor([1.0, 2.0])
    with Library("core", "IMPL") as lib, include_keys(DispatchKey.Tracer):
        lib.fallback(boxed(intercept), DispatchKey.Tracer)
        result = -(a + 1) @ a
        a += a
    assert result.tolist() == -8.0 and a.tolist() == [2.0, 4.0]
    assert seen == ["core::add.Tensor", "core::neg", "core::matmul", "core::add_.Tensor"]


def test_only_the_core_library_generates_operators() -> None:
    from typedops.codegen._generate import DEFAULT_CORE_YAML
    from typedops.codegen._model import Options
    from typedops.codegen._validate import load_entries

    options = Options("core", "typedops.core.kernels", "native_functions.yaml", "test")
    entries = load_entries(DEFAULT_CORE_YAML, options, DEFAULT_CORE_YAML)
    found = {method: entry.schema.full_name for method, _, entry, _ in operators(entries, OPERATOR_NAMESPACE)}
    assert found["__add__"] == "core::add.Tensor" and found["__iadd__"] == "core::add_.Tensor"
    assert found["__pow__"] == "core::pow.Tensor_Scalar" and found["__rpow__"] == "core::pow.Tensor_Tensor"
    assert found["__neg__"] == "core::neg"
    assert found["__rfloordiv__"] == "core::floor_divide" and found["__mod__"] == "core::remainder.Tensor"
    assert found["__ifloordiv__"] == "core::floor_divide_.Tensor" and found["__imod__"] == "core::remainder_.Tensor"
    assert found["__and__"] == found["__rand__"] == "core::bitwise_and.Tensor" and found["__invert__"] == "core::bitwise_not"
    assert len(found) == 40
    assert operators(entries, "demo") == []
    assert operators([e for e in entries if e.schema.name != "matmul"], "core")[18][0] == "__pow__"


# -- properties: the operators agree with numpy -------------------------------------------
_FLOATS = st.floats(-1e3, 1e3, width=32, allow_nan=False)
_SHAPES = hnp.array_shapes(min_dims=0, max_dims=3, max_side=4)


@st.composite
def _operands(draw: st.DrawFn) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=4))
    a = draw(hnp.arrays(np.float32, shapes.input_shapes[0], elements=_FLOATS))
    b = draw(hnp.arrays(np.float32, shapes.input_shapes[1], elements=_FLOATS))
    return a, b


_BINARY: list[Callable[[Any, Any], Any]] = [
    operator.add, operator.sub, operator.mul, operator.eq, operator.ne,
    operator.lt, operator.le, operator.gt, operator.ge,
]  # fmt: skip


@given(operands=_operands(), index=st.integers(0, len(_BINARY) - 1))
def test_binary_operators_equal_numpy(operands: tuple[Any, Any], index: int) -> None:
    a, b = operands
    op = _BINARY[index]
    result = op(Tensor.from_numpy(a), Tensor.from_numpy(b))
    expected = np.asarray(op(a, b))
    assert result.shape == expected.shape
    np.testing.assert_array_equal(result.numpy(), expected)
    assert result.dtype is (ScalarType.bool if expected.dtype == np.bool_ else F32)


@given(array=hnp.arrays(np.float32, _SHAPES, elements=_FLOATS), scalar=st.integers(-5, 5) | _FLOATS)
def test_operators_with_python_numbers_equal_numpy(array: np.ndarray[Any, Any], scalar: float) -> None:
    t = Tensor.from_numpy(array)
    for ours, theirs in (
        (t + scalar, array + np.float32(scalar)), (scalar - t, np.float32(scalar) - array),
        (t * scalar, array * np.float32(scalar)), (t > scalar, array > np.float32(scalar)),
    ):  # fmt: skip
        np.testing.assert_array_equal(ours.numpy(), np.asarray(theirs))


@given(array=hnp.arrays(np.float32, _SHAPES, elements=_FLOATS), other=_FLOATS)
def test_in_place_add_equals_numpy_and_bumps_the_version_once(array: np.ndarray[Any, Any], other: float) -> None:
    t = Tensor.from_numpy(array.copy())
    version = t._version
    t += other
    np.testing.assert_array_equal(t.numpy(), array + np.float32(other))
    assert t._version == version + 1


def test_in_place_fast_path_broadcasts_into_self_and_refuses_a_larger_shape() -> None:
    a = tensor([[1.0, 2.0], [3.0, 4.0]])
    a += tensor([10.0, 20.0])
    a *= a  # overlapping operands: numpy reads before it writes
    assert a.tolist() == [[121.0, 484.0], [169.0, 576.0]] and a._version == 2
    row = tensor([1.0, 2.0])
    with pytest.raises(RuntimeError) as info:
        row += tensor([[1.0, 2.0], [3.0, 4.0]])
    assert str(info.value) == "output with shape [2] doesn't match the broadcast shape [2, 2]"
    assert row.tolist() == [1.0, 2.0] and row._version == 0


def test_floating_tensors_with_python_numbers_keep_their_dtype() -> None:
    for dtype in (ScalarType.float16, F32, ScalarType.float64):
        t = tensor([1.0, 2.0], dtype=dtype)
        for result in (t + 1, t * 2.5, t + True, 3 * t, t - 2):
            assert result.dtype is dtype
        assert (t > 1.5).tolist() == [False, True] and (t == 1).dtype is ScalarType.bool
    assert (tensor([1.0]) + 0.1).tolist() == [np.float32(1.0) + np.float32(0.1)]
    assert (tensor([1.0]) + 1j).dtype is ScalarType.complex64  # complex numbers take the plan
