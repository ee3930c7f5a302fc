"""Computed dispatch tables (issue 4): precedence, fallthrough, fallbacks, key extraction.

Note [Table precedence] in typedops/dispatch/_operator.py is the specification; each rule
and nuance has its own test here. Every test uses its own namespace and scopes its
registrations with ``with Library(...)``.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from typing import Any, Optional

import pytest

from typedops import (
    Device,
    DispatchKey,
    DispatchKeySet,
    Library,
    NoKernelError,
    OperatorHandle,
    Tensor,
    boxed,
    dispatcher,
    exclude_keys,
    fallthrough,
    include_keys,
    tensor,
)

from typedops.dispatch._kernel import KernelKind, Registration
from typedops.dispatch._operator import SlotRule

K = DispatchKey
CEA = K.CompositeExplicitAutograd
CIA = K.CompositeImplicitAutograd
BoxedFn = Callable[[OperatorHandle, DispatchKeySet, list[Any]], None]


@pytest.fixture
def ns(request: pytest.FixtureRequest) -> str:
    return "tbl_" + re.sub(r"\W", "_", request.node.name)


def cpu_t() -> Tensor:
    # Requiring grad, so the tensor carries its Autograd key (Note [Autograd keys only on
    # tensors that require grad] in typedops/tensor/_tensor.py) and calls meet the
    # autograd slots these tests are about.
    return tensor([1.0], requires_grad=True)


def meta_t() -> Tensor:
    return tensor([1.0], device="meta", requires_grad=True)


def returning(label: str) -> Callable[[Tensor], str]:
    """An unboxed kernel for ``f(Tensor x) -> str`` that returns ``label``."""

    def kernel(x: Tensor) -> str:
        return label

    kernel.__qualname__ = label
    return kernel


def pushing(label: str) -> BoxedFn:
    """A boxed kernel or fallback that pops the op's arguments and pushes ``label``."""

    def fallback(op: OperatorHandle, keys: DispatchKeySet, stack: list[Any]) -> None:
        del stack[len(stack) - len(op.schema.arguments) :]
        stack.append(label)

    fallback.__qualname__ = label
    return fallback


def next_line() -> str:
    """``file:line`` of the line after the caller's: put it right above a registration."""
    frame = sys._getframe(1)
    return f"{frame.f_code.co_filename}:{frame.f_lineno + 1}"


F = "f(Tensor x) -> str"


# -- one test per precedence rule ------------------------------------------------------


def test_direct_kernel_beats_composite_explicit(ns: str) -> None:
    with Library(ns, "DEF") as lib:
        op = lib.define(F)
        lib.impl("f", returning("cpu"), "CPU")
        lib.impl("f", returning("cea"), CEA)
        assert op(cpu_t()) == "cpu"
        assert op(meta_t()) == "cea"


def test_direct_kernel_beats_composite_implicit(ns: str) -> None:
    with Library(ns, "DEF") as lib:
        op = lib.define(F)
        lib.impl("f", returning("meta"), "Meta")
        lib.impl("f", returning("cia"), CIA)
        assert op(meta_t()) == "meta"
        assert op(cpu_t()) == "cia"


def test_composite_explicit_beats_composite_implicit_for_backend_keys(ns: str) -> None:
    with Library(ns, "DEF") as lib:
        op = lib.define(F)
        lib.impl("f", returning("cia"), CIA)
        lib.impl("f", returning("cea"), CEA)
        assert op(cpu_t()) == "cea"
        assert op(meta_t()) == "cea"
        with include_keys(K.PrivateUse2):
            assert op(cpu_t()) == "cea"


def test_composite_implicit_serves_backend_and_autograd_keys(ns: str) -> None:
    with Library(ns, "DEF") as lib:
        op = lib.define(F)
        lib.impl("f", returning("cia"), CIA)
        assert op(cpu_t()) == "cia"
        assert op(meta_t()) == "cia"
        table = op.dump_table()
        for key in ("AutogradCPU", "AutogradMeta", "AutogradOther", "CPU", "Meta", "PrivateUse3"):
            assert re.search(rf"^  {key} +composite \[CompositeImplicitAutograd\]: ", table, re.M), key


def test_composite_implicit_runs_at_the_autograd_key(ns: str) -> None:
    seen: list[DispatchKeySet] = []

    def cia(keys: DispatchKeySet, x: Tensor) -> str:
        seen.append(keys)
        return "cia"

    with Library(ns, "DEF") as lib:
        op = lib.define(F)
        lib.impl("f", cia, CIA, with_keys=True)
        assert op(cpu_t()) == "cia"
        assert seen == [DispatchKeySet([K.AutogradCPU, K.CPU])]


def test_composite_implicit_beats_the_autograd_alias(ns: str) -> None:
    with Library(ns, "DEF") as lib:
        op = lib.define(F)
        lib.impl("f", returning("autograd"), K.Autograd)
        lib.impl("f", returning("cia"), CIA)
        # no backend kernel: the autograd key decomposes
        assert op(cpu_t()) == "cia"
        assert op(meta_t()) == "cia"


def test_composite_implicit_not_used_for_autograd_key_when_its_backend_has_a_kernel(ns: str) -> None:
    with Library(ns, "DEF") as lib:
        op = lib.define(F)
        lib.impl("f", returning("cpu"), "CPU")
        lib.impl("f", returning("cia"), CIA)
        # AutogradCPU goes to autograd's fallback, which runs the CPU kernel ...
        assert op(cpu_t()) == "cpu"
        # ... while AutogradMeta, whose backend has no kernel, still decomposes.
        assert op(meta_t()) == "cia"
        table = op.dump_table()
        assert re.search(r"^  AutogradCPU +fallback: boxed _autograd_fallback at ", table, re.M)
        assert re.search(r"^  AutogradMeta +composite \[CompositeImplicitAutograd\]", table, re.M)
        # With an Autograd kernel, AutogradCPU takes it rather than the composite.
        lib.impl("f", returning("autograd"), K.Autograd)
        assert op(cpu_t()) == "autograd"
        assert op(meta_t()) == "cia"


def test_composite_implicit_not_used_for_autograd_keys_when_op_has_composite_explicit(ns: str) -> None:
    seen: list[DispatchKeySet] = []

    def cea(keys: DispatchKeySet, x: Tensor) -> str:
        seen.append(keys)
        return "cea"

    with Library(ns, "DEF") as lib:
        op = lib.define(F)
        lib.impl("f", returning("cia"), CIA)
        lib.impl("f", cea, CEA, with_keys=True)
        assert op(cpu_t()) == "cea"
        assert op(meta_t()) == "cea"
        # the autograd keys fell through: the composite ran at the backend key
        assert seen == [DispatchKeySet([K.CPU]), DispatchKeySet([K.Meta])]
        lib.impl("f", returning("autograd"), K.Autograd)
        assert op(cpu_t()) == "autograd"


def test_autograd_alias_serves_every_autograd_key(ns: str) -> None:
    seen: list[DispatchKeySet] = []

    def autograd(keys: DispatchKeySet, x: Tensor) -> str:
        seen.append(keys)
        below: str = op.redispatch(keys, x)
        return "autograd+" + below

    with Library(ns, "DEF") as lib:
        op = lib.define(F)
        lib.impl("f", autograd, K.Autograd, with_keys=True)
        lib.impl("f", returning("cpu"), "CPU")
        lib.impl("f", returning("meta"), "Meta")
        assert op(cpu_t()) == "autograd+cpu"
        assert op(meta_t()) == "autograd+meta"
        assert seen == [DispatchKeySet([K.AutogradCPU, K.CPU]), DispatchKeySet([K.AutogradMeta, K.Meta])]
        table = op.dump_table()
        for key in ("AutogradOther", "AutogradCPU", "AutogradMeta", "AutogradPrivateUse3"):
            assert re.search(rf"^  {key} +kernel \[Autograd alias\]: unboxed ", table, re.M), key


def test_direct_autograd_kernel_beats_the_autograd_alias(ns: str) -> None:
    with Library(ns, "DEF") as lib:
        op = lib.define(F)
        lib.impl("f", returning("autograd"), K.Autograd)
        lib.impl("f", returning("autogradcpu"), K.AutogradCPU)
        assert op(cpu_t()) == "autogradcpu"
        assert op(meta_t()) == "autograd"


def test_autograd_alias_beats_a_backend_fallback(ns: str) -> None:
    with Library(ns, "DEF") as lib, Library(ns, "IMPL") as impl:
        op = lib.define(F)
        lib.impl("f", returning("cpu"), "CPU")
        impl.fallback(pushing("fallback"), K.AutogradCPU)
        assert op(cpu_t()) == "fallback"
        with Library(ns, "IMPL", K.Autograd) as autograd:
            autograd.impl("f", returning("autograd"))
            assert op(cpu_t()) == "autograd"
        assert op(cpu_t()) == "fallback"


def test_composite_beats_a_backend_fallback(ns: str) -> None:
    with Library(ns, "DEF") as lib, Library(ns, "IMPL") as impl:
        op = lib.define(F)
        impl.fallback(pushing("fallback"), K.CPU)
        assert op(cpu_t()) == "fallback"
        with Library(ns, "FRAGMENT") as frag:
            frag.impl("f", returning("cia"), CIA)
            assert op(cpu_t()) == "cia"
        with Library(ns, "FRAGMENT") as frag:
            frag.impl("f", returning("cea"), CEA)
            assert op(cpu_t()) == "cea"
        assert op(cpu_t()) == "fallback"


def test_backend_fallback_beats_missing(ns: str) -> None:
    with Library(ns, "DEF") as lib:
        op = lib.define(F)
        with pytest.raises(NoKernelError):
            op(cpu_t())
        with Library("_", "IMPL") as everywhere:
            everywhere.fallback(pushing("global"), K.CPU)
            assert op(cpu_t()) == "global"
        with pytest.raises(NoKernelError):
            op(cpu_t())
        assert re.search(r"^  CPU +missing$", op.dump_table(), re.M)


def test_direct_kernel_beats_a_backend_fallback(ns: str) -> None:
    with Library(ns, "DEF") as lib, Library(ns, "IMPL") as impl:
        op = lib.define(F)
        impl.fallback(pushing("fallback"), K.CPU)
        lib.impl("f", returning("cpu"), "CPU")
        assert op(cpu_t()) == "cpu"


# -- the empty key set -------------------------------------------------------------------


def test_empty_key_set_takes_composite_explicit_first(ns: str) -> None:
    def cea(n: int) -> str:
        return "cea"

    def cia(n: int) -> str:
        return "cia"

    with Library(ns, "DEF") as lib:
        op = lib.define("g(int n) -> str")
        lib.impl("g", cia, CIA)
        assert op(1) == "cia"
        with Library(ns, "FRAGMENT") as frag:
            frag.impl("g", cea, CEA)
            assert op(1) == "cea"
        assert op(1) == "cia"
        assert re.search(r"^  \(no keys\) +composite \[CompositeImplicitAutograd\]: unboxed ", op.dump_table(), re.M)


def test_empty_key_set_without_composite_is_no_kernel(ns: str) -> None:
    def cpu(n: int) -> str:
        return "cpu"

    with Library(ns, "DEF") as lib:
        op = lib.define("g(int n) -> str")
        lib.impl("g", cpu, "CPU")
        lib.impl("g", returning_int("autograd"), K.Autograd)
        with pytest.raises(NoKernelError) as excinfo:
            op(1)
        assert str(excinfo.value) == (
            f"{ns}::g was called with no dispatch key: it has no tensor arguments and no "
            "BackendSelect, CompositeExplicitAutograd or CompositeImplicitAutograd kernel. "
            "Kernels are registered for: CPU, Autograd. Register one, e.g. "
            "lib.impl('g', fn, 'CompositeExplicitAutograd')."
        )
        assert excinfo.value.key is None
        assert excinfo.value.keys == DispatchKeySet()
        assert excinfo.value.op == f"{ns}::g"


def returning_int(label: str) -> Callable[[int], str]:
    def kernel(n: int) -> str:
        return label

    return kernel


def test_optional_tensor_given_none_uses_the_empty_slot(ns: str) -> None:
    def cea(x: Optional[Tensor]) -> str:
        return "cea"

    def cpu(x: Optional[Tensor]) -> str:
        return "cpu"

    with Library(ns, "DEF") as lib:
        op = lib.define("h(Tensor? x) -> str")
        lib.impl("h", cea, CEA)
        lib.impl("h", cpu, "CPU")
        assert op(None) == "cea"
        assert op(cpu_t()) == "cpu"


# -- fallthrough ----------------------------------------------------------------------------


def test_fallthrough_kernel_skips_the_key_for_that_op_only(ns: str) -> None:
    seen: list[DispatchKeySet] = []

    def cpu(keys: DispatchKeySet, x: Tensor) -> str:
        seen.append(keys)
        return "cpu"

    with Library(ns, "DEF") as lib, Library(ns, "IMPL") as impl:
        skips = lib.define("skips(Tensor x) -> str")
        stops = lib.define("stops(Tensor x) -> str")
        for name in ("skips", "stops"):
            lib.impl(name, cpu, "CPU", with_keys=True)
        impl.fallback(pushing("tracer fallback"), K.Tracer)
        lib.impl("skips", fallthrough, K.Tracer)
        with include_keys(K.Tracer):
            assert stops(cpu_t()) == "tracer fallback"
            assert skips(cpu_t()) == "cpu"
        # The mask removed Tracer before the key was picked: the kernel never saw it,
        # and nothing ran at the Tracer key.
        assert seen == [DispatchKeySet([K.CPU])]
        assert re.search(r"^  Tracer +fallthrough \(kernel at .*\)$", skips.dump_table(), re.M)
        assert re.search(r"^  Tracer +fallback: boxed tracer fallback at ", stops.dump_table(), re.M)


def test_fallthrough_kernel_for_a_backend_key(ns: str) -> None:
    with Library(ns, "DEF") as lib:
        op = lib.define(F)
        lib.impl("f", returning("cpu"), "CPU")
        lib.impl("f", fallthrough, "Meta")
        # a CPU and a Meta tensor: Meta outranks CPU but falls through
        op2 = lib.define("g(Tensor x, Tensor y) -> str")

        def cpu2(x: Tensor, y: Tensor) -> str:
            return "cpu"

        lib.impl("g", cpu2, "CPU")
        lib.impl("g", fallthrough, "Meta")
        assert op2(cpu_t(), meta_t()) == "cpu"
        with pytest.raises(NoKernelError):
            op(meta_t())  # nothing below Meta for a meta-only call: the empty slot


def test_fallthrough_fallback_skips_the_key_for_its_namespace(ns: str) -> None:
    seen: list[DispatchKeySet] = []

    def cpu(keys: DispatchKeySet, x: Tensor) -> str:
        seen.append(keys)
        return "cpu"

    with Library(ns, "DEF") as lib, Library(ns + "_other", "DEF") as other:
        op = lib.define(F)
        op_other = other.define(F)
        lib.impl("f", cpu, "CPU", with_keys=True)
        other.impl("f", cpu, "CPU", with_keys=True)
        with include_keys(K.PrivateUse1):
            with pytest.raises(NoKernelError):
                op(cpu_t())
            with Library(ns, "IMPL") as impl:
                impl.fallback(fallthrough, K.PrivateUse1)
                assert op(cpu_t()) == "cpu"
                assert seen == [DispatchKeySet([K.CPU])]
                assert re.search(r"^  PrivateUse1 +fallthrough \(fallback at .*\)$", op.dump_table(), re.M)
                with pytest.raises(NoKernelError):
                    op_other(cpu_t())  # another namespace is not affected
            with pytest.raises(NoKernelError):
                op(cpu_t())


def test_user_fallback_replaces_a_builtin_fallthrough(ns: str) -> None:
    with Library(ns, "DEF") as lib:
        op = lib.define(F)
        lib.impl("f", returning("cpu"), "CPU")
        with include_keys(K.Profiler):
            assert op(cpu_t()) == "cpu"
            with Library("_", "IMPL", K.Profiler) as everywhere:
                everywhere.fallback(pushing("profiler"))
                assert op(cpu_t()) == "profiler"
            assert op(cpu_t()) == "cpu"  # the built-in fallthrough is back


def test_a_fallback_can_be_a_plain_or_a_marked_boxed_function(ns: str) -> None:
    with Library(ns, "DEF") as lib, Library(ns, "IMPL") as impl:
        op = lib.define(F)
        impl.fallback(boxed(pushing("marked")), K.CPU)
        impl.fallback(pushing("plain"), K.Meta)
        assert op(cpu_t()) == "marked"
        assert op(meta_t()) == "plain"


# -- namespace and global fallbacks --------------------------------------------------------


def test_namespace_fallback_wins_over_the_global_one(ns: str) -> None:
    with Library(ns, "DEF") as lib, Library(ns + "_other", "DEF") as other:
        op = lib.define(F)
        op_other = other.define(F)
        lib.impl("f", returning("cpu"), "CPU")
        other.impl("f", returning("cpu"), "CPU")
        with Library("_", "IMPL") as everywhere, Library(ns, "IMPL") as mine:
            everywhere.fallback(pushing("global"), K.Tracer)
            assert op(cpu_t()) == "cpu"  # Tracer is not in the key set yet
            with include_keys(K.Tracer):
                assert op(cpu_t()) == "global"
                assert op_other(cpu_t()) == "global"
                mine.fallback(pushing("namespace"), K.Tracer)
                assert op(cpu_t()) == "namespace"
                assert op_other(cpu_t()) == "global"
        with include_keys(K.Tracer):
            assert op(cpu_t()) == op_other(cpu_t()) == "cpu"


def test_namespace_fallback_registered_before_the_global_one_still_wins(ns: str) -> None:
    with Library(ns, "DEF") as lib, Library(ns, "IMPL", K.Tracer) as mine:
        op = lib.define(F)
        mine.fallback(pushing("namespace"))
        with Library("_", "IMPL", K.Tracer) as everywhere, include_keys(K.Tracer):
            everywhere.fallback(pushing("global"))
            assert op(cpu_t()) == "namespace"
            mine.remove()
            assert op(cpu_t()) == "global"


def test_fallback_registered_after_the_first_call_is_used(ns: str) -> None:
    with Library(ns, "DEF") as lib:
        op = lib.define(F)
        lib.impl("f", returning("cpu"), "CPU")
        with include_keys(K.Autocast):
            assert op(cpu_t()) == "cpu"  # tables computed and cached
            with Library(ns, "IMPL", K.Autocast) as impl:
                impl.fallback(pushing("autocast"))
                assert op(cpu_t()) == "autocast"
            assert op(cpu_t()) == "cpu"


def test_fallback_redispatches_below_its_key(ns: str) -> None:
    calls: list[str] = []

    def tracer(op: OperatorHandle, keys: DispatchKeySet, stack: list[Any]) -> None:
        calls.append(f"tracer {keys!r}")
        op.redispatch_boxed(keys, stack)
        stack[-1] = "traced " + stack[-1]

    with Library(ns, "DEF") as lib, Library(ns, "IMPL", K.Tracer) as impl:
        op = lib.define(F)
        lib.impl("f", returning("cpu"), "CPU")
        impl.fallback(tracer)
        with include_keys(K.Tracer):
            assert op(cpu_t()) == "traced cpu"
            stack: list[Any] = [cpu_t()]
            op.call_boxed(stack)
            assert stack == ["traced cpu"]
        assert calls == ["tracer DispatchKeySet(Tracer, AutogradCPU, CPU)"] * 2


# -- key extraction ------------------------------------------------------------------------


def test_every_tensor_argument_form_contributes_its_keys(ns: str) -> None:
    seen: list[DispatchKeySet] = []

    def kernel(
        keys: DispatchKeySet,
        a: Tensor,
        b: Optional[Tensor],
        c: list[Tensor],
        d: list[Optional[Tensor]],
        n: int,
        *,
        e: Optional[Tensor],
    ) -> str:
        seen.append(keys)
        return keys.highest().name

    schema = "f(Tensor a, Tensor? b, Tensor[] c, Tensor?[] d, int n, *, Tensor? e=None) -> str"
    with Library(ns, "DEF") as lib, Library(ns, "IMPL") as impl:
        op = lib.define(schema)
        lib.impl("f", kernel, "CPU", with_keys=True)
        lib.impl("f", kernel, "Meta", with_keys=True)
        impl.fallback(fallthrough, K.PrivateUse1)  # not carried by any tensor
        c, m = cpu_t(), meta_t()
        assert op(c, None, [], [], 0) == "CPU"
        assert op(c, m, [], [], 0) == "Meta"  # Tensor? given a tensor
        assert op(c, None, [c, m], [], 0) == "Meta"  # Tensor[]
        assert op(c, None, [c], [None, m, None], 0) == "Meta"  # Tensor?[]
        assert op(c, None, [], [None], 0) == "CPU"
        assert op(c, None, [], [], 0, e=m) == "Meta"  # keyword-only Tensor?
        assert op(m, None, [], [], 0) == "Meta"
        assert set(seen) == {DispatchKeySet([K.CPU]), DispatchKeySet([K.Meta, K.CPU]), DispatchKeySet([K.Meta])}
        # the boxed entry reads the same positions off the stack
        cases: list[tuple[list[Any], str]] = [
            ([c, None, [], [], 0, None], "CPU"),
            ([c, m, [], [], 0, None], "Meta"),
            ([c, None, [m], [], 0, None], "Meta"),
            ([c, None, [], [m], 0, None], "Meta"),
            ([c, None, [], [], 0, m], "Meta"),
        ]
        for args, expected in cases:
            stack = list(args)
            op.call_boxed(stack)
            assert stack == [expected]


def test_only_tensor_arguments_contribute_keys(ns: str) -> None:
    def cea(x: Optional[Tensor], n: int, device: Device) -> str:
        return "no keys"

    with Library(ns, "DEF") as lib:
        op = lib.define("f(Tensor? x, int n, Device device) -> str")
        lib.impl("f", cea, CEA)
        assert op(None, 3, Device("meta")) == "no keys"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((3, None, [], []), "argument 'a' (Tensor): expected a Tensor, got int"),
        ((None, None, [], []), "argument 'a' (Tensor): expected a Tensor, got None"),
        (([], "x", [], []), "argument 'a' (Tensor): expected a Tensor, got list"),
        (("T", "x", [], []), "argument 'b' (Tensor?): expected a Tensor or None, got str"),
        (("T", None, None, []), "argument 'c' (Tensor[]): expected a list of Tensors, got None"),
        (("T", None, 5, []), "argument 'c' (Tensor[]): expected a list of Tensors, got int"),
        (("T", None, ["T", None], []), "argument 'c' (Tensor[]): element 1 is None, not a Tensor"),
        (("T", None, [], [None, 2]), "argument 'd' (Tensor?[]): element 1 is int, not a Tensor"),
        (("T", None, [], 7), "argument 'd' (Tensor?[]): expected a list of Tensors, got int"),
    ],
)
def test_a_non_tensor_in_a_tensor_position_is_a_type_error(
    ns: str, args: tuple[Any, ...], message: str
) -> None:
    """Unboxed and boxed calls name the argument, its type and the bad value ("T": a tensor)."""

    def kernel(a: Tensor, b: Optional[Tensor], c: list[Tensor], d: list[Optional[Tensor]]) -> str:
        return "ran"

    def real(value: Any) -> Any:
        if isinstance(value, list):
            return [real(v) for v in value]
        return cpu_t() if value == "T" else value

    values = [real(a) for a in args]
    with Library(ns, "DEF") as lib:
        op = lib.define("f(Tensor a, Tensor? b, Tensor[] c, Tensor?[] d) -> str")
        lib.impl("f", kernel, CEA)
        with pytest.raises(TypeError) as excinfo:
            op(*values)
        assert str(excinfo.value) == f"{ns}::f: {message}"
        stack = list(values)
        with pytest.raises(TypeError) as excinfo:
            op.call_boxed(stack)
        assert str(excinfo.value) == f"{ns}::f.call_boxed(): {message}"
        assert stack == values


# -- BackendSelect -------------------------------------------------------------------------

_BACKEND_OF_DEVICE = {"cpu": K.CPU, "meta": K.Meta}


def test_backend_select_picks_the_backend_from_a_device_argument(ns: str) -> None:
    seen: list[tuple[str, DispatchKeySet]] = []

    def backend_select(keys: DispatchKeySet, n: int, device: Device) -> Tensor:
        seen.append(("BackendSelect", keys))
        backend = DispatchKeySet([_BACKEND_OF_DEVICE[device.type]])
        result: Tensor = op.redispatch(keys | backend, n, device)
        return result

    def cpu(keys: DispatchKeySet, n: int, device: Device) -> Tensor:
        seen.append(("CPU", keys))
        return tensor([0.0] * n)

    def meta(keys: DispatchKeySet, n: int, device: Device) -> Tensor:
        seen.append(("Meta", keys))
        return tensor([0.0] * n, device="meta")

    with Library(ns, "DEF") as lib:
        op = lib.define("zeros(int n, Device device) -> Tensor")
        lib.impl("zeros", cpu, "CPU", with_keys=True)
        lib.impl("zeros", meta, "Meta", with_keys=True)
        # without a BackendSelect kernel the key set is empty: no backend is chosen
        with pytest.raises(NoKernelError, match="was called with no dispatch key"):
            op(2, Device("cpu"))
        lib.impl("zeros", backend_select, K.BackendSelect, with_keys=True)
        a = op(2, Device("cpu"))
        b = op(3, Device("meta"))
        assert (a.device, a.shape, a.is_meta) == (Device("cpu"), (2,), False)
        assert (b.device, b.shape, b.is_meta) == (Device("meta"), (3,), True)
        assert seen == [
            ("BackendSelect", DispatchKeySet([K.BackendSelect])),
            ("CPU", DispatchKeySet([K.CPU])),
            ("BackendSelect", DispatchKeySet([K.BackendSelect])),
            ("Meta", DispatchKeySet([K.Meta])),
        ]
        assert re.search(r"^  BackendSelect +kernel: unboxed .*backend_select, takes keys at ", op.dump_table(), re.M)


def test_backend_select_is_skipped_by_ops_with_tensors(ns: str) -> None:
    with Library(ns, "DEF") as lib:
        op = lib.define(F)
        lib.impl("f", returning("cpu"), "CPU")
        with Library("_", "IMPL", K.BackendSelect) as everywhere:
            # the global include set always holds BackendSelect; a global fallback for it
            # therefore serves even ops with tensors
            everywhere.fallback(pushing("backend select"))
            assert op(cpu_t()) == "backend select"
        assert op(cpu_t()) == "cpu"
        with exclude_keys(K.BackendSelect):
            assert op(cpu_t()) == "cpu"


# -- dump and dump_table -------------------------------------------------------------------


def test_dump_lists_schema_and_every_registration_with_source(ns: str) -> None:
    @boxed
    def meta_kernel(op: OperatorHandle, keys: DispatchKeySet, stack: list[Any]) -> None:
        del stack[-2:]
        stack.append("meta")

    with Library(ns, "DEF") as lib:
        defined = next_line()
        op = lib.define("f(Tensor x, int n=2) -> str")
        assert op.dump() == f"{ns}::f(Tensor x, int n=2) -> str\n  defined at {defined}"
        cpu_at = next_line()
        lib.impl("f", returning_n("cpu_kernel"), "CPU")
        override_at = next_line()
        lib.impl("f", returning_n("cpu_override"), "CPU", allow_override=True)
        meta_at = next_line()
        lib.impl("f", meta_kernel, "Meta")
        autograd_at = next_line()
        lib.impl("f", autograd_n, K.Autograd, with_keys=True)
        tracer_at = next_line()
        lib.impl("f", fallthrough, "Tracer")
        local = "test_dump_lists_schema_and_every_registration_with_source.<locals>"
        assert op.dump() == "\n".join(
            [
                f"{ns}::f(Tensor x, int n=2) -> str",
                f"  defined at {defined}",
                f"  CPU: unboxed cpu_override at {override_at}",
                f"  CPU: unboxed cpu_kernel at {cpu_at} (overridden)",
                f"  Meta: boxed {local}.meta_kernel at {meta_at}",
                f"  Tracer: fallthrough at {tracer_at}",
                f"  Autograd: unboxed autograd_n, takes keys at {autograd_at}",
            ]
        )
        assert op(meta_t()) == op(cpu_t()) == "autograd"
        with exclude_keys([K.AutogradCPU, K.AutogradMeta]):
            assert op(meta_t()) == "meta"
            assert op(cpu_t()) == "cpu_override"


def returning_n(label: str) -> Callable[[Tensor, int], str]:
    def kernel(x: Tensor, n: int) -> str:
        return label

    kernel.__qualname__ = label
    return kernel


def autograd_n(keys: DispatchKeySet, x: Tensor, n: int) -> str:
    return "autograd"


def test_dump_table_marks_every_slot(ns: str) -> None:
    with Library(ns, "DEF") as lib, Library(ns, "IMPL") as impl:
        op = lib.define(F)
        cpu_at = next_line()
        lib.impl("f", returning("cpu_kernel"), "CPU")
        cea_at = next_line()
        lib.impl("f", returning("explicit"), CEA)
        tracer_at = next_line()
        lib.impl("f", fallthrough, K.Tracer)
        fallback_at = next_line()
        impl.fallback(pushing("profiler_fallback"), K.Profiler)
        autocast_at = next_line()
        impl.fallback(fallthrough, K.Autocast)
        autograd_at = next_line()
        lib.impl("f", returning("autograd_kernel"), K.Autograd)
        builtin = "fallthrough (fallback at <typedops built-in>)"
        # The Python key is served by the dispatch modes' fallback (typedops.modes, issue 15).
        python = re.findall(r"^fallback _ Python: (.*)$", dispatcher.dump_state(), re.M)[-1]
        assert "python_fallback" in python
        cea = f"composite [CompositeExplicitAutograd]: unboxed explicit at {cea_at}"
        alias = f"kernel [Autograd alias]: unboxed autograd_kernel at {autograd_at}"
        rows = [
            # the batching layer's for-loop fallback serves every op (typedops.batching, issue 14)
            ("Batched", f"fallback: boxed fallback at {dispatcher.fallbacks_for(ns)[K.Batched].source}"),
            ("Autocast", f"fallthrough (fallback at {autocast_at})"),
            ("Profiler", f"fallback: boxed profiler_fallback at {fallback_at}"),
            ("Tracer", f"fallthrough (kernel at {tracer_at})"),
            ("AutogradPrivateUse3", alias),
            ("AutogradPrivateUse2", alias),
            ("AutogradPrivateUse1", alias),
            ("AutogradMeta", alias),
            ("AutogradCPU", alias),
            ("AutogradOther", alias),
            # autograd's ADInplaceOrView fallback serves only ops that write an argument
            ("ADInplaceOrView", f"fallthrough (fallback at {dispatcher.fallbacks_for(ns)[K.ADInplaceOrView].source})"),
            ("Python", f"fallback: {python}"),
            ("BackendSelect", builtin),
            ("PrivateUse3", cea),
            ("PrivateUse2", cea),
            ("PrivateUse1", cea),
            ("Meta", cea),
            ("CPU", f"kernel: unboxed cpu_kernel at {cpu_at}"),
            ("(no keys)", cea),
        ]
        expected = f"computed dispatch table for {ns}::f:\n" + "\n".join(
            f"  {label:<19}  {slot}" for label, slot in rows
        )
        assert op.dump_table() == expected


def test_dump_table_shows_missing(ns: str) -> None:
    with Library(ns, "DEF") as lib:
        op = lib.define(F)
        table = op.dump_table().splitlines()
        assert table[0] == f"computed dispatch table for {ns}::f:"
        missing = [row.split()[0] for row in table[1:] if row.endswith("  missing")]
        assert missing == ["PrivateUse3", "PrivateUse2", "PrivateUse1", "Meta", "CPU", "(no"]


def test_dispatcher_state_lists_ops_and_fallbacks(ns: str) -> None:
    with Library(ns, "DEF") as lib, Library(ns, "IMPL", K.Tracer) as impl:
        op = lib.define(F)
        at = next_line()
        impl.fallback(pushing("tracer_fb"))
        state = dispatcher.dump_state()
        assert f"fallback {ns} Tracer: boxed tracer_fb at {at}" in state.splitlines()
        assert op.dump() in state
        assert op.dump_table() in state


def test_registrations_are_immutable_and_compared_by_identity() -> None:
    def kernel(x: Tensor) -> Tensor:
        return x

    first = Registration(DispatchKey.CPU, kernel, KernelKind.unboxed, False, "here:1")
    second = Registration(DispatchKey.CPU, kernel, KernelKind.unboxed, False, "here:1")
    assert first != second and first == first
    assert len({first, second}) == 2 and [first, second].index(second) == 1
    assert (first.key, first.fn, first.kind, first.with_keys, first.source) == (
        DispatchKey.CPU, kernel, KernelKind.unboxed, False, "here:1"
    )  # fmt: skip
    with pytest.raises(AttributeError):
        first.source = "elsewhere:2"  # type: ignore[misc]


def test_each_registration_records_its_kernel_kind(ns: str) -> None:
    with Library(ns, "DEF") as lib, Library(ns, "IMPL") as impl:
        op = lib.define(F)
        lib.impl("f", returning("cpu"), "CPU")
        lib.impl("f", boxed(pushing("meta")), "Meta")
        lib.impl("f", fallthrough, K.Tracer)
        impl.fallback(pushing("profiler"), K.Profiler)
        registrations = op._entry.registrations
        kinds = {key.name: stack[-1].kind for key, stack in registrations.items()}
        assert kinds == {"CPU": KernelKind.unboxed, "Meta": KernelKind.boxed, "Tracer": KernelKind.fallthrough}
        assert dispatcher.fallbacks_for(ns)[K.Profiler].kind is KernelKind.boxed
        assert [r.describe() for r in (registrations[K.CPU][-1], registrations[K.Tracer][-1])] == [
            "unboxed cpu", "fallthrough"
        ]  # fmt: skip


def test_each_slot_names_the_precedence_rule_that_filled_it(ns: str) -> None:
    # Note [Table precedence], one rule per slot.
    with Library(ns, "DEF") as lib, Library(ns, "IMPL") as impl:
        op = lib.define(F)
        lib.impl("f", returning("cpu"), "CPU")
        lib.impl("f", returning("implicit"), CIA)
        lib.impl("f", returning("autograd"), K.Autograd)
        impl.fallback(pushing("profiler"), K.Profiler)
        slots = op._entry.slots()
        rules = {key.name: slots[key + 1][1] for key in (K.CPU, K.Meta, K.AutogradCPU, K.Profiler, K.Python)}
        assert rules == {
            "CPU": SlotRule.kernel,
            "Meta": SlotRule.composite_implicit,
            "AutogradCPU": SlotRule.autograd_alias,
            "Profiler": SlotRule.fallback,
            "Python": SlotRule.fallback,  # the dispatch modes' global fallback
        }
        assert slots[0][1] is SlotRule.composite_implicit
        lib.impl("f", returning("explicit"), CEA)
        slots = op._entry.slots()
        assert slots[0][1] is slots[K.Meta + 1][1] is SlotRule.composite_explicit
    with Library(ns, "DEF") as lib:
        slots = lib.define(F)._entry.slots()
        assert slots[0] == (None, SlotRule.missing) and slots[K.CPU + 1] == (None, SlotRule.missing)


def test_a_fallback_limited_by_only_for_serves_only_the_ops_it_accepts(ns: str) -> None:
    calls: list[str] = []

    def tracer(op: OperatorHandle, keys: DispatchKeySet, stack: list[Any]) -> None:
        calls.append(op.schema.name)
        op.redispatch_boxed(keys, stack)

    def only_g(schema: Any, keys: Any) -> bool:
        return bool(schema.name == "g")

    with Library(ns, "DEF") as lib, Library(ns, "IMPL") as impl:
        f = lib.define("f(Tensor x) -> str")
        g = lib.define("g(Tensor x) -> str")
        lib.impl("f", returning("f"), "CPU")
        lib.impl("g", returning("g"), "CPU")
        impl.fallback(boxed(tracer, only_for=only_g), K.Tracer)
        with include_keys(K.Tracer):
            assert (f(tensor([1.0])), g(tensor([1.0]))) == ("f", "g")
        assert calls == ["g"]
        assert re.search(r"^  Tracer +fallthrough \(fallback at ", f.dump_table(), re.M)
        assert re.search(r"^  Tracer +fallback: boxed \S*tracer at ", g.dump_table(), re.M)


def test_unboxed_slots_serve_what_redispatch_calls_and_follow_new_registrations(ns: str) -> None:
    from typedops.dispatch import unboxed_slots

    with Library(ns, "DEF") as lib:
        op = lib.define(F)
        lib.impl("f", returning("cpu"), "CPU")
        slots = unboxed_slots(op)
        x = cpu_t()
        below = int(DispatchKeySet([K.CPU, K.ADInplaceOrView]))
        keys = DispatchKeySet.from_bits(below | (1 << K.AutogradOther))
        assert op(x) == "cpu" and slots.cache[below](x) == op.redispatch(keys, x) == "cpu"
        lib.impl("f", returning("python"), "Python")  # a registration replaces the cache
        python = below | (1 << K.Python)
        assert slots.cache[python](x) == op.redispatch(DispatchKeySet.from_bits(python | (1 << K.AutogradOther)), x) == "python"
        assert slots.cache[below](x) == "cpu"
