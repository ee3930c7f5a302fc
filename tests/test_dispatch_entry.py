"""The generated entry points (dispatch/_entry.py): argument names never meet ours.

Note [Generated names never meet argument names]: a schema argument may be named like any
local, parameter or global the generated entries use; the kernel must still receive the
value passed for it, on every entry point.
"""

from __future__ import annotations

import inspect

from typing import Any

import pytest

from typedops import DispatchKey, DispatchKeySet, Library, Tensor, boxed, include_keys, tensor
from typedops.boxing import call_shape
from typedops.dispatch._entry import entry_source
from typedops.schema import parse_schema
from typedops.vocabulary import ArgumentValueError

OURS = ["_b", "_op", "_ks", "_s", "_tls_sets", "_tls_active", "_list_bits", "_optional_list_bits", "_op_bad_args", "_traced",
        "_op_overflow"]


def _second_argument(op: Any, keys: DispatchKeySet, stack: list[Any]) -> None:
    stack[:] = [stack[1]]


@pytest.mark.parametrize("name", OURS)
def test_an_argument_named_like_a_generated_name_reaches_the_kernel(name: str) -> None:
    with Library("entry_names", "FRAGMENT") as lib:
        handle = lib.define(f"f(Tensor x, int {name}, Tensor[] ys) -> int")
        lib.impl("f", boxed(_second_argument), "CPU")
        x, ys = tensor([1.0]), [tensor([2.0])]
        assert handle(x, 42, ys) == 42
        assert handle(x, ys=ys, **{name: 42}) == 42
        stack: list[Any] = [x, 42, ys]
        handle.call_boxed(stack)
        assert stack == [42]
        with include_keys(DispatchKey.Tracer):  # the per-context sets are read too
            assert handle(x, 42, ys) == 42
        assert handle.redispatch(DispatchKeySet([DispatchKey.Tracer, DispatchKey.CPU]), x, 42, ys) == 42


def test_a_keyword_only_argument_named_like_the_overflow_check_reaches_the_kernel() -> None:
    """``call`` names ``_op_overflow`` when the kernel fails (Note [Ints too large for their
    argument]): a keyword-only argument of that name is the user's, and ours makes way."""

    def failing(x: Tensor, *, _op_overflow: int) -> Tensor:
        raise OverflowError(f"kernel got {_op_overflow}")

    with Library("entry_overflow", "FRAGMENT") as lib:
        handle = lib.define("f(Tensor x, *, int _op_overflow) -> Tensor")
        lib.impl("f", failing, "CPU")
        with pytest.raises(OverflowError, match=r"^kernel got 7$"):
            handle(tensor([1.0]), _op_overflow=7)
        with pytest.raises(ArgumentValueError, match=r"argument '_op_overflow' \(int\): expected int, got 9223372036854775808"):
            handle(tensor([1.0]), _op_overflow=2**63)


def test_ours_are_renamed_not_the_users() -> None:
    """Positional arguments are placeholders in the source (renamed on the compiled code);
    keyword-only ones keep their names, and ours and the placeholders make way."""
    text = entry_source(call_shape(parse_schema("f(Tensor x, int _b, *, int _tls_active, int _p0) -> int")), False)
    assert "    def call(_p0_, _p1, *, _tls_active, _p0):" in text
    assert "        return _op.cache[_b](_p0_, _p1, _tls_active=_tls_active, _p0=_p0)" in text
    assert "        if _tls_active_['_tls_active']:" in text


def test_a_shape_without_clashes_keeps_the_plain_names() -> None:
    text = entry_source(call_shape(parse_schema("f(Tensor x, int b) -> int")), False)
    assert "        return _op.cache[_b](_p0, _p1)" in text
    assert "_entry_globals" not in text


def test_positional_names_are_not_part_of_the_shape() -> None:
    """Note [Wrapper cache]: ops differing only in positional names share compiled code,
    and each entry still takes its own names."""
    first, second = (call_shape(parse_schema(f"f(Tensor {a}, int {b}=1) -> Tensor")) for a, b in (("x", "n"), ("y", "m")))
    assert first == second
    with Library("entry_names", "DEF") as lib:
        handles = [lib.define(f"f{i}(Tensor {a}, int {b}=1) -> int") for i, (a, b) in enumerate((("x", "n"), ("y", "_b")))]
        for i, handle in enumerate(handles):
            lib.impl(f"f{i}", boxed(_second_argument), "CPU")
        x = tensor([1.0])
        assert handles[0](x=x, n=5) == 5 and handles[1](y=x, _b=6) == 6
        assert str(inspect.signature(handles[1].call)) == "(y, _b=1)"
        assert handles[0].call.__code__.co_code == handles[1].call.__code__.co_code


def test_two_arguments_with_one_python_name_are_refused() -> None:
    with pytest.raises(ArgumentValueError) as info:
        call_shape(parse_schema("ns::f(int lambda, int lambda_) -> ()"))
    assert str(info.value) == (
        "arguments 'lambda' and 'lambda_' of ns::f would both be the Python parameter 'lambda_' (a Python "
        "keyword gets a trailing '_'); rename one"
    )


# -- Note [One device per call] ---------------------------------------------------------------
MIXED = (
    "Expected all tensors to be on the same device, but found at least two devices, cpu and meta! "
    "({op} takes tensors of one device; move them to one device first)"
)


def test_an_in_place_op_never_writes_a_real_tensor_through_another_devices_kernel() -> None:
    from typedops import ops
    from typedops.vocabulary import TensorError

    cpu, meta = tensor([1.0, 2.0]), tensor([1.0, 2.0], device="meta")
    with pytest.raises(TensorError) as info:
        ops.core.add_.Tensor(cpu, meta)
    assert str(info.value) == MIXED.format(op="core::add_.Tensor")
    assert cpu.tolist() == [1.0, 2.0] and cpu._version == 0


@pytest.mark.parametrize(
    ("call", "op"),
    [
        (lambda c, m: __import__("typedops").core.add(c, m), "core::add.Tensor"),
        (lambda c, m: __import__("typedops").core.cat([c, m]), "core::cat"),
        (lambda c, m: __import__("typedops").core.matmul(c, m), "core::matmul"),
        (lambda c, m: __import__("typedops").core.where(tensor([True, False]), c, m), "core::where.self"),
    ],
)
def test_mixed_devices_raise_on_every_path(call: Any, op: str) -> None:
    from typedops.vocabulary import TensorError

    with pytest.raises(TensorError) as info:
        call(tensor([1.0, 2.0]), tensor([1.0, 2.0], device="meta"))
    assert str(info.value) == MIXED.format(op=op)


def test_a_boxed_mixed_call_leaves_the_stack_as_given() -> None:
    from typedops import ops
    from typedops.vocabulary import TensorError

    cpu, meta = tensor([1.0]), tensor([1.0], device="meta")
    stack: list[Any] = [cpu, meta]  # alpha omitted: filled, then taken back
    with pytest.raises(TensorError):
        ops.core.add.Tensor.call_boxed(stack)
    assert stack == [cpu, meta]


def test_a_zero_dim_cpu_tensor_joins_another_device_as_a_number() -> None:
    from typedops import core

    result = core.add(tensor([1.0, 2.0], device="meta"), tensor(3.0))
    assert result.device.type == "meta" and result.shape == (2,)
    assert core.add(tensor([1.0, 2.0]), tensor(3.0)).tolist() == [4.0, 5.0]


def test_copy_between_devices_is_allowed_by_its_yaml_device_check() -> None:
    import typedops.core  # noqa: F401 -- installs the methods

    meta = tensor([0.0, 0.0], device="meta")
    assert meta.copy_(tensor([1.0, 2.0])) is meta  # device_check: NoCheck in the core yaml


# -- Note [Unboxed calls check like boxed ones] -------------------------------------------------
def test_a_lone_int_for_an_int1_list_is_broadcast_on_every_path() -> None:
    import typedops

    # untyped here: the stubs' typing of a lone int for 'int[1]?' is issue 12's
    core: Any = typedops.core
    ops: Any = typedops.ops
    t: Any = tensor([[1.0, 2.0], [3.0, 4.0]])
    assert ops.core.sum.dim_IntList(t, 0).tolist() == [4.0, 6.0]  # torch: [4., 6.]; it was 10.0
    assert ops.core.sum.dim_IntList(t, 1).tolist() == [3.0, 7.0]  # it crashed in the kernel
    assert core.sum(t, 0).tolist() == [4.0, 6.0]
    assert t.sum(1).tolist() == [3.0, 7.0]
    stack: list[Any] = [t, 0]
    ops.core.sum.dim_IntList.call_boxed(stack)
    assert stack[0].tolist() == [4.0, 6.0]
    assert ops.core.sum.dim_IntList(t, [0, 1]).item() == 10.0  # a list's size is a hint, as in torch


def test_a_lone_int_for_a_sized_list_becomes_that_many_copies_and_a_bool_does_not() -> None:
    """Note [A lone int for a sized list]: the unboxed entry converts an exact int itself,
    to what the full check would give; a bool still meets the full check's refusal."""
    from typedops.vocabulary import ArgumentError

    seen: list[Any] = []

    def kernel(x: Tensor, s: Any, t: Any = None) -> Tensor:
        seen.append((s, t))
        return x

    with Library("lone", "FRAGMENT") as lib:
        handle = lib.define("pair(Tensor x, int[2] s, int[1]? t=None) -> Tensor")
        lib.impl(handle, kernel, DispatchKey.CPU, check=False)
        x = tensor([1.0])
        assert handle.call(x, 3) is x and handle.call(x, [4, 5], 6) is x and handle.call(x, (7,), t=None) is x
        assert seen == [([3, 3], None), ([4, 5], [6]), ((7,), None)]
        with pytest.raises(ArgumentError) as info:
            handle.call(x, True)
        assert str(info.value) == "lone::pair(): argument 's' (int[2]): expected a list (int[2]), got bool"


def _scaled(x: Tensor, n: int, s: float) -> Tensor:
    assert type(n) is int and type(s) in (int, float), (n, s)  # what the kernel may rely on
    return x


@pytest.mark.parametrize(
    ("n", "s", "message"),
    [
        (2.5, 1.0, "checked::scaled(): argument 'n' (int): expected int, got float"),
        (2, "1", "checked::scaled(): argument 's' (float): expected float, got str"),
        (True, 1.0, "checked::scaled(): argument 'n' (int): expected int, got bool"),
    ],
)
def test_an_unboxed_call_refuses_what_the_schema_refuses(n: Any, s: Any, message: str) -> None:
    from typedops import op
    from typedops.vocabulary import ArgumentError

    with Library("checked", "FRAGMENT") as lib:
        scaled = op("checked::scaled", lib=lib)(_scaled)
        typed = scaled.handle.typed(_scaled)
        x = tensor([1.0])
        for call in (scaled, typed, scaled.handle, scaled.handle.call):
            with pytest.raises(ArgumentError) as info:
                call(x, n, s)
            assert str(info.value) == message
        with pytest.raises(ArgumentError) as info:  # by name: overload resolution explains
            getattr(__import__("typedops").ops, "checked").scaled(x, n, s)
        assert str(info.value).startswith("no overload of checked::scaled takes these arguments.")
        assert scaled(x, 2, 3) is x  # an int for a float is fine, as in the boxed path
