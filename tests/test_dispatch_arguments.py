"""Arguments on the entries' slow paths (dispatch/_arguments.py): Note [Ints too large for
their argument] -- an int beyond int64 is refused with its argument's error on every path,
however the kernel failed on it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import typedops
from typedops import DispatchKey, Library, Tensor, tensor
from typedops.vocabulary import ArgumentError, ArgumentOverflowError, TypedopsError

core: Any = typedops.core  # untyped: the calls under test pass what the stubs refuse
ops: Any = typedops.ops

_OUTSIDE = st.integers(2**64, 2**200) | st.integers(-(2**200), -(2**63) - 1)
_RANGE = "outside int64's range (-2**63 to 2**63 - 1)"


def _shown(value: int) -> str:
    return str(value) if value.bit_length() <= 80 else f"an int of {value.bit_length()} bits"


def _alpha_message(value: int, where: str = "core::add.Tensor()") -> str:
    return (
        f"{where}: argument 'alpha' (Scalar): expected Scalar, got {_shown(value)}, {_RANGE}; "
        "pass an int within that range, or a float"
    )


def test_an_alpha_beyond_int64_is_refused_on_every_path() -> None:
    a = core.ones([2])
    calls: list[Callable[[], object]] = [
        lambda: core.add(a, a, alpha=10**400),
        lambda: ops.core.add.Tensor(a, a, alpha=10**400),
        lambda: ops.core.add.Tensor.call(a, a, alpha=10**400),
    ]
    for call in calls:
        with pytest.raises(ArgumentOverflowError) as info:
            call()
        assert str(info.value) == _alpha_message(10**400)
        assert info.value.__cause__ is None and info.value.__suppress_context__
    stack: list[Any] = [a, a, 10**400]
    with pytest.raises(ArgumentOverflowError) as info:
        ops.core.add.Tensor.call_boxed(stack)
    assert str(info.value) == _alpha_message(10**400, "core::add.Tensor.call_boxed()")
    assert stack == [a, a, 10**400]


@given(_OUTSIDE)
def test_every_kind_of_int_argument_beyond_int64_is_refused(value: int) -> None:
    a = core.ones([2])
    ai = core.ones([2], dtype=typedops.ScalarType.int64)
    cases: list[tuple[Callable[[], object], str, str, str, str, bool]] = [
        (lambda: core.add(ai, ai, alpha=value), "core::add.Tensor()", "alpha", "Scalar", "", True),
        (lambda: core.mul(a, value), "core::mul.Scalar()", "other", "Scalar", "", True),
        (lambda: core.full([2], value), "core::full()", "fill_value", "Scalar", "", True),
        (lambda: core.select(a, 0, value), "core::select.int()", "index", "SymInt", "", False),
        (lambda: core.sum(a, value), "core::sum.dim_IntList()", "dim", "int[1]?", "element 0: ", False),
        (lambda: core.reshape(a, [value]), "core::reshape()", "shape", "SymInt[]", "element 0: ", False),
        (lambda: core.zeros([1, value]), "core::zeros()", "size", "SymInt[]", "element 1: ", False),
    ]
    for call, where, name, type_, element, scalar in cases:
        with pytest.raises(ArgumentOverflowError) as info:
            call()
        base = type_.split("[")[0].rstrip("?")
        fix = "an int within that range, or a float" if scalar else "an int within that range"
        assert str(info.value) == (
            f"{where}: argument '{name}' ({type_}): {element}expected {base}, got {_shown(value)}, {_RANGE}; pass {fix}"
        )


def test_a_composite_op_names_the_op_called() -> None:
    """``mean.dim`` is CompositeImplicitAutograd: its ``sum.dim_IntList`` call fails first,
    and the outer entry, holding the same value, names the op the caller called."""
    with pytest.raises(ArgumentOverflowError) as info:
        core.mean(core.ones([2]), [2**70])
    assert str(info.value).startswith("core::mean.dim(): argument 'dim' (int[1]?): element 0: expected int")


def test_an_int_subclass_on_the_slow_path_gets_the_same_error() -> None:
    class Big(int):
        pass

    a = core.ones([2])
    with pytest.raises(ArgumentOverflowError) as info:
        core.add(a, a, alpha=Big(10**400))
    assert str(info.value) == _alpha_message(10**400)
    with pytest.raises(ArgumentOverflowError) as info:
        ops.core.add.Tensor.call_boxed([a, a, Big(10**400)])
    assert str(info.value) == _alpha_message(10**400, "core::add.Tensor.call_boxed()")


def test_an_int_beyond_int64_that_the_kernel_computes_with_is_kept() -> None:
    """PyTorch adds ``alpha=2**63`` to a float tensor (a uint64 Scalar): the kernel computes
    with it, so no check stands in the way."""
    a = core.ones([2])
    assert core.add(a, a, alpha=2**63).tolist() == [float(2**63 + 1)] * 2


def _overflowing(x: Tensor, n: int) -> Tensor:
    raise OverflowError("the kernel's own overflow")


def test_a_kernels_own_errors_go_on_unchanged() -> None:
    with Library("overflowing", "FRAGMENT") as lib:
        handle = lib.define("f(Tensor x, int n) -> Tensor")
        lib.impl(handle, _overflowing, DispatchKey.CPU)
        x = tensor([1.0])
        with pytest.raises(OverflowError, match=r"^the kernel's own overflow$") as info:
            handle(x, 2)
        assert not isinstance(info.value, TypedopsError)
        stack: list[Any] = [x, 2]
        with pytest.raises(OverflowError, match=r"^the kernel's own overflow$"):
            handle.call_boxed(stack)
        assert stack == [x, 2]
        with pytest.raises(ArgumentOverflowError) as refused:
            handle(x, 2**63)
        assert str(refused.value) == (
            f"overflowing::f(): argument 'n' (int): expected int, got {2**63}, {_RANGE}; pass an int within that range"
        )


def test_a_boxed_call_refused_after_filling_defaults_leaves_the_stack_as_given() -> None:
    a = core.ones([2])
    stack: list[Any] = [a, [2**70]]
    with pytest.raises(ArgumentOverflowError):
        ops.core.sum.dim_IntList.call_boxed(stack)
    assert stack == [a, [2**70]]


def test_other_argument_errors_keep_their_class() -> None:
    with pytest.raises(ArgumentError) as info:
        core.add(core.ones([2]), core.ones([2]), alpha="2")
    assert not isinstance(info.value, ArgumentOverflowError)


# -- against PyTorch (make compat) -------------------------------------------------------------
@pytest.mark.compat
def test_the_errors_are_those_pytorch_raises_for_the_same_calls() -> None:
    """PyTorch refuses a Scalar beyond uint64 with OverflowError and an int beyond int64 with
    ValueError; ArgumentOverflowError is both. By design typedops holds every int argument
    to int64 (Note [Ints are int64]), so a Scalar between 2**63 and 2**64 that a kernel
    cannot compute with is refused too, where PyTorch takes it as a uint64."""
    torch = pytest.importorskip("torch")
    a, t = core.ones([2]), torch.ones(2)
    pairs: list[tuple[Callable[[], object], Callable[[], object], type[Exception]]] = [
        (lambda: core.add(a, a, alpha=10**400), lambda: torch.add(t, t, alpha=10**400), OverflowError),
        (lambda: core.mul(a, 2**64), lambda: torch.mul(t, 2**64), OverflowError),
        (lambda: core.full([2], -(2**70)), lambda: torch.full([2], -(2**70)), OverflowError),
        (lambda: a + 10**400, lambda: t + 10**400, OverflowError),
        (lambda: core.sum(a, 2**63), lambda: torch.sum(t, 2**63), ValueError),
        (lambda: core.select(a, 0, 2**63), lambda: torch.select(t, 0, 2**63), ValueError),
    ]
    for ours, theirs, builtin in pairs:
        with pytest.raises(builtin):
            theirs()
        with pytest.raises(builtin):
            ours()
    assert core.add(a, a, alpha=2**63).tolist() == torch.add(t, t, alpha=2**63).tolist()
    assert (t + 2**63).tolist() == [float(2**63 + 1)] * 2  # a uint64 wrapped number
    with pytest.raises(ArgumentOverflowError):
        a + 2**63  # noqa: B018 -- held to int64 by design
