"""Bad input that used to escape the TypedopsError root (numpy's ValueError, an
AttributeError, Python's OverflowError, numpy's MemoryError, a NoKernelError that named
missing kernels): each is now a rooted error that also subclasses the builtin PyTorch
raises, with its message pinned here. Against torch: test_tensor_compat.py."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, cast

import numpy as np
import pytest

import typedops
from typedops import Library, ScalarType, Tensor, core, tensor
from typedops.vocabulary import (ArgumentError, ArgumentValueError, OutOfMemoryError, TensorError,
                                 TypedopsError)  # fmt: skip

_NOT_RECTANGULAR = ("tensor(): the nested sequences are not rectangular: every sequence at one depth must have the "
                    "same length, as in [[1, 2], [3, 4]]")  # fmt: skip


def _read_only() -> Tensor:
    array = np.arange(3, dtype=cast(Any, np.float32))
    array.setflags(write=False)
    return Tensor.from_numpy(array)


def _read_only_message(op: str) -> str:
    return (f"{op} writes into a tensor whose memory is read-only (Tensor.from_numpy shares the memory of a read-only "
            "numpy array); pass a writable array (array.copy(), or array.setflags(write=True) if you own its memory), "
            "or call the out-of-place op")  # fmt: skip


_CAT_EMPTY = ("core::cat: expected a non-empty list of Tensors for argument 'tensors' (with no tensor, the call has "
              "nothing to dispatch on); pass at least one tensor")  # fmt: skip


@pytest.mark.parametrize(
    ("call", "error", "builtin", "message"),
    [
        (lambda: tensor([[1], [1, 2]]), ArgumentValueError, ValueError, _NOT_RECTANGULAR),
        (lambda: tensor(([1.0], [2.0, 3.0])), ArgumentValueError, ValueError, _NOT_RECTANGULAR),
        (lambda: tensor([1.0], dtype=cast(Any, "float32")), ArgumentError, TypeError,
         "tensor(): dtype must be a typedops ScalarType, got the str 'float32'; pass dtype=ScalarType.float32"),
        (lambda: tensor([1.0], dtype=cast(Any, np.float32)), ArgumentError, TypeError,
         "tensor(): dtype must be a typedops ScalarType, got numpy dtype 'float32'; pass dtype=ScalarType.float32"),
        (lambda: tensor([1.0], dtype=cast(Any, np.dtype("int64"))), ArgumentError, TypeError,
         "tensor(): dtype must be a typedops ScalarType, got numpy dtype 'int64'; pass dtype=ScalarType.int64"),
        (lambda: tensor([1.0], dtype=cast(Any, "f4")), ArgumentError, TypeError,
         "tensor(): dtype must be a typedops ScalarType, got the str 'f4'; pass one of ScalarType's members, e.g. "
         "dtype=ScalarType.float32"),
        (lambda: core.arange(float("inf")), TensorError, RuntimeError, "unsupported range: 0 -> inf"),
        (lambda: core.arange(float("nan")), TensorError, RuntimeError, "unsupported range: 0 -> nan"),
        (lambda: core.arange(float("-inf"), 3.0, 1.0), TensorError, RuntimeError, "unsupported range: -inf -> 3.0"),
        (lambda: core.arange(0, 3, float("nan")), TensorError, RuntimeError, "arange: step must be a number, not nan"),
        (lambda: core.arange(float("inf"), device="meta"), TensorError, RuntimeError, "unsupported range: 0 -> inf"),
        (lambda: typedops.ops.core.expand.default(tensor([1.0]), [-2]), TensorError, RuntimeError,
         "expand: the size -2 at dimension 0 is negative; give a size of at least 0, or -1 to keep the tensor's size "
         "there"),
        (lambda: typedops.ops.core.add_.Tensor(_read_only(), tensor([1.0, 1.0, 1.0])), TensorError, RuntimeError,
         _read_only_message("core::add_.Tensor")),
        (lambda: typedops.ops.core.zero_.default(_read_only()), TensorError, RuntimeError, _read_only_message("core::fill_.Scalar")),
        (lambda: typedops.ops.core.copy_.default(_read_only(), tensor([1.0, 2.0, 3.0])), TensorError, RuntimeError,
         _read_only_message("core::copy_")),
        (lambda: core.add(tensor([1.0, 2.0, 3.0]), tensor([1.0, 2.0, 3.0]), out=_read_only()), TensorError,
         RuntimeError, _read_only_message("core::add.out")),
        (lambda: core.zeros([10**6] * 3), OutOfMemoryError, MemoryError,
         "not enough memory for a tensor of shape [1000000, 1000000, 1000000] and dtype float32 "
         "(4000000000000000000 bytes); make a smaller tensor, or one on device='meta' to work with its shape only"),
        (lambda: core.ones([10**6] * 3, dtype=ScalarType.float64), OutOfMemoryError, MemoryError,
         "not enough memory for a tensor of shape [1000000, 1000000, 1000000] and dtype float64 "
         "(8000000000000000000 bytes); make a smaller tensor, or one on device='meta' to work with its shape only"),
        (lambda: core.cat([]), ArgumentValueError, ValueError, _CAT_EMPTY),
        (lambda: core.cat([], dim=1), ArgumentValueError, ValueError, _CAT_EMPTY),
        (lambda: typedops.ops.core.cat.default.call_boxed([[], 0]), ArgumentValueError, ValueError, _CAT_EMPTY),
    ],
)  # fmt: skip
def test_bad_input_raises_a_rooted_error_that_is_also_the_builtin(
    call: Callable[[], Any], error: type[TypedopsError], builtin: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=f"^{re.escape(message)}$") as info:
        call()
    assert isinstance(info.value, builtin)


def test_a_read_only_tensor_is_still_read_and_shared_and_a_writable_copy_is_written() -> None:
    array = np.arange(3, dtype=cast(Any, np.float32))
    array.setflags(write=False)
    t = Tensor.from_numpy(array)
    assert (t + 1.0).tolist() == [1.0, 2.0, 3.0]
    copy = Tensor.from_numpy(array.copy())
    copy.add_(tensor([1.0, 1.0, 1.0]))
    assert copy.tolist() == [1.0, 2.0, 3.0] and t.tolist() == [0.0, 1.0, 2.0]
    before = t._version
    with pytest.raises(TensorError):
        t.add_(tensor([1.0, 1.0, 1.0]))
    assert t._version == before and array.tolist() == [0.0, 1.0, 2.0]  # nothing written, no version bump


def test_an_op_whose_only_tensors_are_an_empty_list_names_the_argument() -> None:
    """The dispatcher says so for any op (``cat`` is one): the call has no dispatch key."""
    library = Library("errors_rooted_test", "DEF")
    library.define("first(Tensor[] xs, int k=0) -> Tensor")

    def first(xs: list[Tensor], k: int) -> Tensor:
        return xs[k]

    library.impl("first", first, "CPU")
    try:
        handle = typedops.ops.errors_rooted_test.first.default
        message = ("errors_rooted_test::first: expected a non-empty list of Tensors for argument 'xs' (with no tensor, "
                   "the call has nothing to dispatch on); pass at least one tensor")  # fmt: skip
        with pytest.raises(ArgumentValueError, match=f"^{re.escape(message)}$"):
            handle([])
        with pytest.raises(ArgumentValueError, match=f"^{re.escape(message)}$"):
            handle.call_boxed([[], 0])
        assert handle([tensor([1.0])]).tolist() == [1.0]
    finally:
        library.remove()
