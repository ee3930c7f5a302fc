"""The generated entry points (dispatch/_entry.py): argument names never meet ours.

Note [Generated names never meet argument names]: a schema argument may be named like any
local, parameter or global the generated entries use; the kernel must still receive the
value passed for it, on every entry point.
"""

from __future__ import annotations

import inspect

from typing import Any

import pytest

from typedops import Device, DispatchKey, DispatchKeySet, Library, Tensor, boxed, exclude_keys, include_keys, tensor
from typedops.dispatch import selects_backend_by_device
from typedops.tensor import backend_key_for_device
from typedops.vocabulary import NoKernelError
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


def test_the_several_backends_table_says_whether_two_backend_bits_are_set() -> None:
    from typedops.dispatch._entry import _BACKENDS, _SEVERAL_BACKENDS
    from typedops.vocabulary import BACKEND_KEYS

    assert len(_SEVERAL_BACKENDS) == _BACKENDS + 1
    for bits in range(1 << (max(BACKEND_KEYS) + 3)):  # every backend mix, with keys above them
        backends = sum(1 for k in BACKEND_KEYS if bits >> k & 1)
        assert _SEVERAL_BACKENDS[bits & _BACKENDS] is (backends > 1), bits
    source = entry_source(call_shape(parse_schema("f(Tensor a, Tensor b) -> Tensor")), False)
    assert f"_SEVERAL_BACKENDS[_b & {_BACKENDS}]" in source


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


def test_a_range_for_a_sized_list_is_its_items_on_every_path() -> None:
    # A range passes the argument check as a sequence of ints; it was taken for a lone
    # value and repeated ([range(0, 2)]), which failed inside the kernel.
    import typedops

    core: Any = typedops.core
    ops: Any = typedops.ops
    t: Any = tensor([[1.0, 2.0], [3.0, 4.0]])
    assert core.sum(t, range(2)).item() == 10.0
    assert t.sum(range(1, 2), True).tolist() == [[3.0], [7.0]]
    assert core.amax(t, range(1)).tolist() == [3.0, 4.0]
    stack: list[Any] = [t, range(2), False, None]
    ops.core.sum.dim_IntList.call_boxed(stack)
    assert stack[0].item() == 10.0


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


# -- Note [Factories in one hop]


def _factory_library(lib: Library, marked: bool, calls: list[str]) -> Any:
    """``make(int n, *, Device? device=None) -> int``: a BackendSelect kernel (marked
    ``selects_backend_by_device`` or not) that redispatches to ``device``'s backend, and
    CPU and Meta kernels; each records that it ran."""

    handle = lib.define("make(int n, *, Device? device=None) -> int")

    def select(keys: DispatchKeySet, n: int, *, device: Device | None) -> int:
        calls.append("BackendSelect")
        backend = backend_key_for_device(Device.parse(device) if device is not None else Device("cpu"))
        result: int = handle.redispatch(DispatchKeySet([DispatchKey.BackendSelect, backend]), n, device=device)
        return result

    def cpu(n: int, *, device: Device | None) -> int:
        calls.append("CPU")
        return n

    def meta(n: int, *, device: Device | None) -> int:
        calls.append("Meta")
        return -n

    lib.impl("make", selects_backend_by_device(select) if marked else select, "BackendSelect", with_keys=True)
    lib.impl("make", cpu, "CPU")
    lib.impl("make", meta, "Meta")
    return handle


@pytest.mark.parametrize("marked", [True, False])
def test_a_marked_backend_select_kernel_is_skipped_by_unboxed_calls_only(marked: bool) -> None:

    calls: list[str] = []
    with Library("one_hop", "FRAGMENT") as lib:
        make = _factory_library(lib, marked, calls)
        hops = [] if marked else ["BackendSelect"]
        for device, backend, result in ((None, "CPU", 3), ("cpu", "CPU", 3), (Device("meta"), "Meta", -3)):
            calls.clear()
            assert make(3, device=device) == result
            assert calls == [*hops, backend]
            calls.clear()
            stack: list[Any] = [3, device]
            make.call_boxed(stack)  # the boxed path takes both hops
            assert stack == [result] and calls == ["BackendSelect", backend]


def test_a_hinted_call_keeps_every_other_behaviour() -> None:

    calls: list[str] = []
    with Library("one_hop_rest", "FRAGMENT") as lib:
        make = _factory_library(lib, True, calls)
        seen: list[DispatchKeySet] = []

        def observe(op: Any, keys: DispatchKeySet, stack: list[Any]) -> None:
            seen.append(keys)
            op.redispatch_boxed(keys, stack)

        lib.fallback(observe, "Tracer")
        with include_keys(DispatchKey.Tracer):  # a key above BackendSelect: both hops, as before
            assert make(2) == 2
        assert seen == [DispatchKeySet([DispatchKey.Tracer, DispatchKey.BackendSelect])]
        assert calls == ["BackendSelect", "CPU"]
        calls.clear()
        with exclude_keys(DispatchKey.BackendSelect), pytest.raises(NoKernelError):  # no key at all
            make(2)
        assert calls == []
        with pytest.raises(ArgumentValueError, match="unknown device type 'gpu'"):  # no hint: the kernel says why
            make(2, device="gpu")
        assert calls == ["BackendSelect"]


def test_an_op_without_backend_select_ignores_the_hint() -> None:

    with Library("one_hop_none", "FRAGMENT") as lib:
        make = lib.define("make(int n, *, Device? device=None) -> int")

        def cpu(n: int, *, device: Device | None) -> int:
            return n

        lib.impl("make", cpu, "CPU")
        with pytest.raises(NoKernelError):  # the call's key set is empty, as it always was
            make(1)
        lib.impl("make", cpu, "CompositeExplicitAutograd")
        assert make(1, device="meta") == 1


def test_core_factories_go_to_their_backend_in_one_hop() -> None:
    from typedops import core
    from typedops.core import _generated as generated

    zeros = generated.zeros__default._entry
    assert core.zeros([2]).tolist() == [0.0, 0.0] and core.zeros([2], device="meta").is_meta
    slots = {bits: getattr(fn, "__name__", "") for bits, fn in zeros.cache.items()}
    assert {"zeros_cpu", "factory_meta"} <= set(slots.values())
    assert "zeros_backend_select" not in str(list(zeros.cache.values()))


def test_every_core_default_passes_the_check_its_identity_test_skips() -> None:
    """An unboxed entry accepts an argument that *is* its default without its type test
    (``_default_first``): so every default of those check kinds must pass that test."""
    from typedops.boxing import shape_and_defaults
    from typedops.dispatch._entry import _DEFAULT_PASSES, _GLOBALS, _check_expr

    checked = 0
    for entry in typedops_core_entries():
        shape, defaults = shape_and_defaults(entry.schema)
        values = iter(defaults)
        for index, arg in enumerate(shape.args):
            if not arg.has_default:
                continue
            value = next(values)
            if arg.check.optional or arg.check.kind not in _DEFAULT_PASSES:
                continue
            test = _check_expr(arg.check, index, "v")
            assert test is not None and eval(test, {"v": value, **_GLOBALS}), (entry.full_name, arg, value)
            checked += 1
    assert checked > 20  # alpha=1, keepdim=False, dim=-1... (25 when written)


def typedops_core_entries() -> list[Any]:
    import typedops.core  # noqa: F401  # registers the core library
    from typedops import dispatcher

    return [op._entry for op in dispatcher.all_ops() if op.full_name.startswith("core::")]
