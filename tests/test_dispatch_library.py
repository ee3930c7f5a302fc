"""Registration, lookup and calling (issue 4): Library, handles, ops packets, errors.

Every test uses its own namespace (derived from its name) and scopes its registrations
with ``with Library(...)``, so nothing leaks between tests.
"""

from __future__ import annotations

import gc
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from typedops.dispatch import Boxed, bound_to_keys
from typedops import (
    DispatchKey,
    DispatchKeySet,
    Library,
    NoKernelError,
    OperatorHandle,
    OperatorNotFoundError,
    RegistrationError,
    RegistrationHandle,
    Scalar,
    SchemaInferenceError,
    SchemaMismatchError,
    SchemaParseError,
    SymInt,
    Tensor,
    TypedopsError,
    boxed,
    dispatcher,
    fallthrough,
    include_keys,
    ops,
    tensor,
)
from typedops.boxing import ArgCheck, CheckKind
from typedops.schema import parse_schema
from typedops.vocabulary import Layout, MemoryFormat, OperatorAttributeError, ScalarType

K = DispatchKey
CEA = K.CompositeExplicitAutograd
CIA = K.CompositeImplicitAutograd


@pytest.fixture
def ns(request: pytest.FixtureRequest) -> str:
    return "lib_" + re.sub(r"\W", "_", request.node.name)


def next_line() -> str:
    """``file:line`` of the line after the caller's: put it right above a registration."""
    frame = sys._getframe(1)
    return f"{frame.f_code.co_filename}:{frame.f_lineno + 1}"


def cpu_t() -> Tensor:
    return tensor([1.0])


def meta_t() -> Tensor:
    return tensor([1.0], device="meta")


# Kernels for 'f(Tensor x) -> str' and 'g(Tensor x, int n=2, *, float alpha=1.0) -> str'.
F = "f(Tensor x) -> str"
G = "g(Tensor x, int n=2, *, float alpha=1.0) -> str"


def f_cpu(x: Tensor) -> str:
    return "cpu"


def f_cpu2(x: Tensor) -> str:
    return "cpu2"


def f_meta(x: Tensor) -> str:
    return "meta"


def f_cia(x: Tensor) -> str:
    return "cia"


def g_kernel(x: Tensor, n: int, *, alpha: float) -> str:
    return f"g n={n} alpha={alpha}"


def g_keys(keys: DispatchKeySet, x: Tensor, n: int, *, alpha: float) -> str:
    return f"{keys!r} n={n} alpha={alpha}"


def pop_push(label: str) -> Any:
    def fn(op: OperatorHandle, keys: DispatchKeySet, stack: list[Any]) -> None:
        del stack[len(stack) - len(op.schema.arguments) :]
        stack.append(label)

    return fn


# -- Library kinds and namespaces --------------------------------------------------------


def test_second_def_library_names_the_first_ones_file_and_line(ns: str) -> None:
    first = next_line()
    with Library(ns, "DEF"):
        with pytest.raises(RegistrationError) as excinfo:
            Library(ns, "DEF")
        assert str(excinfo.value) == (
            f"namespace {ns!r} already has a DEF library (created at {first}); "
            f"add operators to it with Library({ns!r}, 'FRAGMENT')"
        )
        # FRAGMENT and IMPL libraries are fine
        with Library(ns, "FRAGMENT"), Library(ns, "IMPL"):
            pass
    # closing the first DEF library frees the namespace
    with Library(ns, "DEF"):
        pass


def test_def_claim_is_released_by_remove(ns: str) -> None:
    lib = Library(ns, "DEF")
    lib.remove()
    with Library(ns, "DEF"):
        pass


def test_impl_library_cannot_define(ns: str) -> None:
    at = next_line()
    with Library(ns, "IMPL", "CPU") as lib:
        with pytest.raises(RegistrationError) as excinfo:
            lib.define(F)
        assert str(excinfo.value) == (
            f"Library({ns!r}, 'IMPL', 'CPU') at {at} is an IMPL library and cannot define "
            f"operators; use Library({ns!r}, 'DEF') or 'FRAGMENT'"
        )


def test_fragment_defines_in_its_namespace(ns: str) -> None:
    with Library(ns, "DEF") as lib, Library(ns, "FRAGMENT") as frag:
        a = lib.define(F)
        b = frag.define(f"{ns}::h(Tensor x) -> str")
        assert (a.full_name, b.full_name) == (f"{ns}::f", f"{ns}::h")


def test_define_in_another_namespace_is_refused(ns: str) -> None:
    with Library(ns, "DEF") as lib:
        with pytest.raises(RegistrationError) as excinfo:
            lib.define("elsewhere::f(Tensor x) -> str")
        assert str(excinfo.value) == (
            f"cannot define elsewhere::f in a library for namespace {ns!r}; "
            "drop the namespace or use Library('elsewhere', ...)"
        )


def test_impl_for_another_namespace_is_refused(ns: str) -> None:
    with Library(ns, "DEF") as lib:
        lib.define(F)
        at = next_line()
        with Library(ns + "_x", "IMPL", "CPU") as other:
            with pytest.raises(RegistrationError) as excinfo:
                other.impl(f"{ns}::f", f_cpu)
            assert str(excinfo.value) == (
                f"Library('{ns}_x', 'IMPL', 'CPU') at {at} registers kernels for namespace "
                f"'{ns}_x', not for {ns}::f; use Library({ns!r}, 'IMPL')"
            )
        # the global IMPL library may name any namespace's op
        with Library("_", "IMPL") as everywhere:
            everywhere.impl(f"{ns}::f", f_cpu, "CPU")
            assert ops.__getattr__(ns).f(cpu_t()) == "cpu"


def test_redefinition_is_an_error(ns: str) -> None:
    with Library(ns, "DEF") as lib:
        at = next_line()
        lib.define(F)
        with pytest.raises(RegistrationError) as excinfo:
            lib.define("f(Tensor x, Tensor y) -> str")
        assert str(excinfo.value) == (
            f"operator {ns}::f is already defined (at {at}) as {ns}::f(Tensor x) -> str; "
            f"pick another overload name, e.g. '{ns}::f.other(...)'"
        )
        lib.define("f.two(Tensor x, Tensor y) -> str")
        with pytest.raises(RegistrationError, match=re.escape(f"e.g. '{ns}::f.two(...)'")):
            lib.define("f.two(Tensor x) -> str")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("ns", "BAD"), "Library kind must be one of DEF, FRAGMENT, IMPL, not 'BAD'"),
        (("my-ops", "DEF"), "namespace 'my-ops' must be an identifier (or '_' for fallbacks of every namespace)"),
        (("_", "DEF"), "namespace '_' takes only IMPL libraries, for fallbacks of every namespace"),
        (("_", "FRAGMENT"), "namespace '_' takes only IMPL libraries, for fallbacks of every namespace"),
    ],
)
def test_bad_library_arguments(args: tuple[Any, Any], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message) + "$"):
        Library(*args)


def test_bad_library_key() -> None:
    with pytest.raises(ValueError, match=re.escape("unknown dispatch key 'Tracr'; did you mean 'Tracer'?")):
        Library("whatever", "IMPL", "Tracr")


# -- impl: schema checks ------------------------------------------------------------------


def g_renamed(x: Tensor, m: int, *, alpha: float) -> str:
    return ""


def g_wrong_types(x: Tensor, n: float, *, alpha: int) -> str:
    return ""


def g_missing(x: Tensor) -> str:
    return ""


def g_extra(x: Tensor, n: int, *, alpha: float, beta: float) -> str:
    return ""


def g_keyword_only_n(x: Tensor, *, n: int, alpha: float) -> str:
    return ""


def g_returns_int(x: Tensor, n: int, *, alpha: float) -> int:
    return 0


def g_all_positional(x: Tensor, n: SymInt, alpha: float) -> str:
    return "positional"


@pytest.mark.parametrize(
    ("kernel", "differences"),
    [
        (g_renamed, ["argument 1: the schema calls it 'n', the kernel 'm'"]),
        (
            g_wrong_types,
            [
                "argument 'n': schema type int, kernel annotation gives float",
                "argument 'alpha': schema type float, kernel annotation gives int",
            ],
        ),
        (
            g_missing,
            [
                "argument 1 'n' (int): the kernel has no such parameter",
                "argument 2 'alpha' (float): the kernel has no such parameter",
            ],
        ),
        (g_extra, ["argument 3 'beta' (float): the schema has no such argument"]),
        (g_keyword_only_n, ["argument 'n' is positional in the schema but keyword-only in the kernel"]),
        (g_returns_int, ["returns: schema (str), kernel (int)"]),
    ],
)
def test_impl_schema_mismatch_names_the_differing_arguments(
    ns: str, kernel: Any, differences: list[str]
) -> None:
    with Library(ns, "DEF") as lib:
        lib.define(G)
        with pytest.raises(SchemaMismatchError) as excinfo:
            lib.impl("g", kernel, "CPU")
        assert str(excinfo.value) == (
            f"kernel {kernel.__qualname__} does not match {ns}::g(Tensor x, int n=2, *, float alpha=1.0) -> str:\n  "
            + "\n  ".join(differences)
        )
        assert excinfo.value.differences == differences
        error: BaseException = excinfo.value
        assert isinstance(error, TypedopsError) and isinstance(error, TypeError)
        # nothing was registered
        assert "  CPU: " not in dispatcher.find_schema_or_throw(f"{ns}::g").dump()


def test_impl_accepts_symint_as_int_and_keyword_only_as_positional(ns: str) -> None:
    with Library(ns, "DEF") as lib:
        op = lib.define(G)
        lib.impl("g", g_all_positional, "CPU")
        assert op(cpu_t(), 3, alpha=0.5) == "positional"


def test_with_keys_kernel_needs_a_first_parameter(ns: str) -> None:
    def no_params() -> str:
        return ""

    with Library(ns, "DEF") as lib:
        lib.define("k() -> str")
        with pytest.raises(SchemaInferenceError) as excinfo:
            lib.impl("k", no_params, CEA, with_keys=True)
        assert str(excinfo.value) == (
            f"{no_params.__qualname__} is registered with_keys=True, so its first parameter "
            "receives the dispatch key set; it has no parameters"
        )


def test_a_kernel_bound_to_keys_is_made_once_per_key_set_and_served_unwrapped(ns: str) -> None:
    made: list[DispatchKeySet] = []
    callers: list[str] = []

    def tagged_autograd(keys: DispatchKeySet) -> Any:
        made.append(keys)

        def serve(x: Tensor) -> str:
            callers.append(sys._getframe(1).f_code.co_name)
            result: str = op.redispatch(keys, x)
            return f"{keys.highest().name} over {result}"

        return serve

    with Library(ns, "DEF") as lib:
        op = lib.define(F)
        lib.impl("f", f_cpu, "CPU")
        kernel = bound_to_keys(tagged_autograd)  # takes (keys, *args, **kwargs): not checked against the schema
        lib.impl("f", kernel, K.Autograd, with_keys=True, check=False)
        x = cpu_t().requires_grad_()
        assert op(x) == op(x) == "AutogradCPU over cpu"
        assert made == [DispatchKeySet([K.AutogradCPU, K.CPU])]
        assert "kernel" not in callers  # the entry calls what the factory made, not the with-keys wrapper
        assert "tagged_autograd, takes keys" in op.dump()
        assert kernel(made[0], x) == "AutogradCPU over cpu" and callers[-1] == "kernel"
        stack: list[Any] = [x]
        op.call_boxed(stack)
        assert stack == ["AutogradCPU over cpu"]
        assert set(made) == {made[0]}


def test_an_unmarked_boxed_function_is_refused_by_inference(ns: str) -> None:
    def looks_boxed(op: OperatorHandle, keys: DispatchKeySet, stack: list[Any]) -> None:
        pass

    with Library(ns, "DEF") as lib:
        lib.define(F)
        with pytest.raises(SchemaInferenceError, match=re.escape("parameter 'op' of looks_boxed() is annotated 'OperatorHandle', which has no schema type")):
            lib.impl("f", looks_boxed, "CPU")


def test_impl_of_a_non_callable(ns: str) -> None:
    with Library(ns, "DEF") as lib:
        lib.define(F)
        with pytest.raises(TypeError) as excinfo:
            lib.impl("f", 3, "CPU")  # type: ignore[arg-type]
        assert str(excinfo.value) == "a kernel is a typed function, typedops.boxed(fn) or typedops.fallthrough, not int"
        with pytest.raises(TypeError) as excinfo:
            boxed(3)  # type: ignore[arg-type]
        assert str(excinfo.value) == "boxed() takes a function fn(op, keys, stack), not int"


def test_impl_of_an_unknown_op_suggests_near_names(ns: str) -> None:
    with Library(ns, "DEF") as lib:
        lib.define(F)
        with pytest.raises(OperatorNotFoundError) as excinfo:
            lib.impl("ff", f_cpu, "CPU")
        assert str(excinfo.value) == f"no operator '{ns}::ff' is defined; did you mean '{ns}::f'?"


# -- impl: keys and overrides ---------------------------------------------------------------


def test_impl_key_defaults_to_the_library_key_else_composite_implicit(ns: str) -> None:
    with Library(ns, "DEF") as lib:
        op = lib.define(F)
        lib.impl("f", f_cia)
        assert "  CompositeImplicitAutograd: unboxed f_cia at " in op.dump()
        with Library(ns, "IMPL", "Meta") as meta:
            meta.impl("f", f_meta)
            assert "  Meta: unboxed f_meta at " in op.dump()
            meta.impl("f", f_meta, "Meta", allow_override=True)  # its own key, named, is fine
            before = op.dump()
            # issue 11: a library made for one key registers for that key only, as in PyTorch
            with pytest.raises(RegistrationError) as info:
                meta.impl("f", f_cpu, "CPU")
            assert str(info.value) == (
                f"{meta!r} registers for Meta only, not CPU; omit the key, or register through "
                f"Library({ns!r}, 'IMPL', 'CPU')"
            )
            with pytest.raises(RegistrationError, match="registers for Meta only, not PrivateUse1"):
                meta.fallback(boxed(lambda op, keys, stack: None), "PrivateUse1")
            assert op.dump() == before
        assert op(meta_t()) == "cia"


def test_second_kernel_for_the_same_key_needs_allow_override(ns: str) -> None:
    with Library(ns, "DEF") as lib:
        op = lib.define(F)
        first = next_line()
        lib.impl("f", f_cpu, "Meta")
        with Library(ns, "IMPL", "Meta") as impl:
            with pytest.raises(RegistrationError) as excinfo:
                impl.impl("f", f_meta)
            assert str(excinfo.value) == (
                f"{ns}::f already has a Meta kernel (registered at {first}); pass "
                "allow_override=True to replace it while this registration lives, or remove "
                "the first one"
            )
            assert op(meta_t()) == "cpu"
            impl.impl("f", f_meta, allow_override=True)
            assert op(meta_t()) == "meta"
        assert op(meta_t()) == "cpu"  # the override ended with its library


def test_impl_default_key_of_a_cpu_library_is_cpu(ns: str) -> None:
    with Library(ns, "DEF") as lib, Library(ns, "IMPL", "CPU") as impl:
        op = lib.define(F)
        impl.impl("f", f_cpu)
        assert "  CPU: unboxed f_cpu at " in op.dump()
        with pytest.raises(NoKernelError):
            op(meta_t())  # a CIA registration would serve Meta too


def test_removing_the_overridden_kernel_keeps_the_override(ns: str) -> None:
    with Library(ns, "DEF") as lib:
        op = lib.define(F)
        first = lib.impl("f", f_cpu, "CPU")
        second = lib.impl("f", f_cpu2, "CPU", allow_override=True)
        first.remove()
        assert op(cpu_t()) == "cpu2"
        assert op.dump().count("  CPU: ") == 1
        second.remove()
        with pytest.raises(NoKernelError):
            op(cpu_t())
        # the key is free again: no override needed
        lib.impl("f", f_cpu, "CPU")
        assert op(cpu_t()) == "cpu"


def test_fallback_override_rules(ns: str) -> None:
    with Library(ns, "DEF") as lib:
        op = lib.define(F)
        lib.impl("f", f_cpu, "CPU")
        with Library("_", "IMPL", "Tracer") as g1, include_keys(K.Tracer):
            # a user fallback replaces the built-in fallthrough without allow_override
            at = next_line()
            g1.fallback(pop_push("first"))
            assert op(cpu_t()) == "first"
            with pytest.raises(RegistrationError) as excinfo:
                g1.fallback(pop_push("second"))
            assert str(excinfo.value) == (
                f"every namespace already has a Tracer fallback (registered at {at}); "
                "pass allow_override=True to replace it"
            )
            with Library("_", "IMPL", "Tracer") as g2:
                g2.fallback(pop_push("second"), allow_override=True)
                assert op(cpu_t()) == "second"
            assert op(cpu_t()) == "first"
            # per namespace, the same rule
            with Library(ns, "IMPL", "Tracer") as mine:
                mine_at = next_line()
                mine.fallback(pop_push("mine"))
                with pytest.raises(RegistrationError) as excinfo:
                    mine.fallback(pop_push("mine2"))
                assert str(excinfo.value) == (
                    f"namespace {ns!r} already has a Tracer fallback (registered at {mine_at}); "
                    "pass allow_override=True to replace it"
                )
                assert op(cpu_t()) == "mine"
        assert op(cpu_t()) == "cpu"


def test_fallback_argument_errors(ns: str) -> None:
    at = next_line()
    with Library(ns, "IMPL") as lib:
        with pytest.raises(ValueError) as value_error:
            lib.fallback(pop_push("x"))
        assert str(value_error.value) == (
            f"Library({ns!r}, 'IMPL') at {at} has no key; pass one: lib.fallback(fn, 'Tracer')"
        )
        with pytest.raises(RegistrationError) as registration_error:
            lib.fallback(pop_push("x"), K.Autograd)
        assert str(registration_error.value) == (
            "fallbacks are registered for runtime keys, not the alias key Autograd"
        )
        with pytest.raises(TypeError) as type_error:
            lib.fallback(3, "CPU")  # type: ignore[arg-type]
        assert str(type_error.value) == "a fallback is a function fn(op, keys, stack), not int"


# -- handles and scoped restoration -----------------------------------------------------------


def test_registration_handle_remove_is_idempotent(ns: str) -> None:
    with Library(ns, "DEF") as lib:
        op = lib.define(F)
        handle = lib.impl("f", f_cpu, "CPU")
        assert isinstance(handle, RegistrationHandle)
        assert [handle.active] == [True]  # (a list, so that mypy does not narrow .active)
        assert repr(handle) == f"<RegistrationHandle CPU kernel of {ns}::f>"
        assert op(cpu_t()) == "cpu"
        handle.remove()
        handle.remove()
        assert not handle.active
        assert repr(handle) == f"<RegistrationHandle CPU kernel of {ns}::f (removed)>"
        with pytest.raises(NoKernelError):
            op(cpu_t())
        # a new registration is not undone by the old handle
        lib.impl("f", f_cpu2, "CPU")
        handle.remove()
        assert op(cpu_t()) == "cpu2"
        fb = Library(ns, "IMPL", "Meta")
        fb_handle = fb.fallback(pop_push("meta fallback"))
        assert repr(fb_handle) == f"<RegistrationHandle Meta fallback for namespace {ns!r}>"
        assert op(meta_t()) == "meta fallback"
        fb_handle.remove()
        fb_handle.remove()
        fb.remove()  # the library's own undo of the removed handle does nothing
        with pytest.raises(NoKernelError):
            op(meta_t())


@contextmanager
def unchanged_state() -> Iterator[None]:
    before = dispatcher.dump_state()
    yield
    assert dispatcher.dump_state() == before


def test_leaving_a_library_restores_definitions_kernels_and_fallbacks(ns: str) -> None:
    with unchanged_state():
        with Library(ns, "DEF") as lib, Library(ns, "IMPL", "Tracer") as impl:
            lib.define(F)
            lib.define(G)
            lib.impl("f", f_cpu, "CPU")
            lib.impl("f", fallthrough, "Meta")
            lib.impl("g", boxed(pop_push("g")), CEA)
            impl.fallback(pop_push("tracer"))
            assert dispatcher.dump_state() != ""
        assert dispatcher.find_op(f"{ns}::f") is None


def test_leaving_a_library_restores_an_existing_op_exactly(ns: str) -> None:
    with Library(ns, "DEF") as lib:
        op = lib.define(F)
        lib.impl("f", f_cpu, "CPU")
        op(cpu_t())  # tables computed
        with unchanged_state():
            with Library(ns, "IMPL") as impl:
                impl.impl("f", f_cpu2, "CPU", allow_override=True)
                impl.impl("f", f_meta, "Meta")
                impl.impl("f", f_cia)
                impl.fallback(pop_push("fb"), "PrivateUse1")
                assert op(cpu_t()) == "cpu2"
        assert op(cpu_t()) == "cpu"


def test_leaving_restores_global_fallbacks_and_builtin_fallthroughs(ns: str) -> None:
    with Library(ns, "DEF") as lib:
        lib.define(F)
        with unchanged_state():
            with Library("_", "IMPL") as everywhere:
                everywhere.fallback(pop_push("tracer"), "Tracer")
                everywhere.fallback(fallthrough, "PrivateUse2")
                everywhere.fallback(pop_push("cpu"), "CPU")
                with Library("_", "IMPL") as again:
                    again.fallback(pop_push("tracer2"), "Tracer", allow_override=True)


def test_leaving_restores_after_an_exception(ns: str) -> None:
    class Boom(Exception):
        pass

    with unchanged_state():
        with pytest.raises(Boom):
            with Library(ns, "DEF") as lib, Library("_", "IMPL", "Profiler") as everywhere:
                lib.define(F)
                lib.impl("f", f_cpu, "CPU")
                everywhere.fallback(pop_push("p"))
                raise Boom
    with Library(ns, "DEF"):  # the namespace is free again
        pass


def test_libraries_closed_out_of_order_restore_the_state(ns: str) -> None:
    with Library(ns, "DEF") as lib:
        op = lib.define(F)
        with unchanged_state():
            a = Library(ns, "IMPL", "CPU")
            a.impl("f", f_cpu)
            b = Library(ns, "IMPL", "CPU")
            b.impl("f", f_cpu2, allow_override=True)
            a.remove()  # the overridden one goes first
            assert op(cpu_t()) == "cpu2"
            b.remove()


def test_closing_the_def_library_first_then_the_impl_library(ns: str) -> None:
    with unchanged_state():
        lib = Library(ns, "DEF")
        op = lib.define(F)
        impl = Library(ns, "IMPL", "CPU")
        impl.impl("f", f_cpu)
        impl_fb = Library(ns, "IMPL", "Tracer")
        impl_fb.fallback(pop_push("t"))
        lib.remove()
        impl.remove()
        impl_fb.remove()
    with pytest.raises(OperatorNotFoundError):
        op(cpu_t())


# -- finding ops ------------------------------------------------------------------------------


def test_find_op_and_find_schema_or_throw(ns: str) -> None:
    with Library(ns, "DEF") as lib:
        f = lib.define(F)
        f2 = lib.define("f.two(Tensor x, Tensor y) -> str")
        assert dispatcher.find_op(f"{ns}::f") is f
        assert dispatcher.find_op(f"{ns}::f", "two") is f2
        assert dispatcher.find_op(f"{ns}::f.two") is f2
        assert dispatcher.find_op(f"{ns}::f", "three") is None
        assert dispatcher.find_op("f") is None
        assert dispatcher.find_schema_or_throw(f"{ns}::f", "two") is f2
        assert (f2.name, f2.overload_name, f2.full_name) == (f"{ns}::f", "two", f"{ns}::f.two")
        assert repr(f2) == f"<OperatorHandle {ns}::f.two(Tensor x, Tensor y) -> str>"
        with pytest.raises(OperatorNotFoundError) as excinfo:
            dispatcher.find_schema_or_throw(f"{ns}::f", "tow")
        assert str(excinfo.value) == (
            f"no operator '{ns}::f.tow' is defined; did you mean '{ns}::f.two' or '{ns}::f'?"
        )
        error: BaseException = excinfo.value
        assert isinstance(error, LookupError) and isinstance(error, TypedopsError)
        with pytest.raises(OperatorNotFoundError) as excinfo:
            dispatcher.find_schema_or_throw("zzzz_nothing_like_it::qqq")
        assert str(excinfo.value) == "no operator 'zzzz_nothing_like_it::qqq' is defined"


def test_lookup_without_namespace_hints_at_namespaces() -> None:
    with pytest.raises(OperatorNotFoundError) as excinfo:
        dispatcher.find_schema_or_throw("qqq_unlike")
    assert str(excinfo.value) == (
        "no operator 'qqq_unlike' is defined. Operator names include their namespace, "
        "as in 'myops::scale'."
    )


def test_all_ops_in_definition_order(ns: str) -> None:
    with Library(ns, "DEF") as lib:
        a = lib.define("b_first(Tensor x) -> str")
        b = lib.define("a_second(Tensor x) -> str")
        c = lib.define("b_first.ov(Tensor x) -> str")
        mine = [h for h in dispatcher.all_ops() if h.schema.namespace == ns]
        assert mine == [a, b, c]
    assert not [h for h in dispatcher.all_ops() if h.schema.namespace == ns]


# -- ops namespace packets ----------------------------------------------------------------------


def add_tensor(x: Tensor, y: Tensor) -> str:
    return "Tensor"


def add_scalar(x: Tensor, y: Scalar) -> str:
    return "Scalar"


def add_int(x: int, y: int) -> str:
    return f"int {x}+{y}"


@contextmanager
def add_overloads(ns: str) -> Iterator[Any]:
    with Library(ns, "DEF") as lib:
        lib.define("add(Tensor x, Tensor y) -> str")
        lib.define("add.Scalar(Tensor x, Scalar y) -> str")
        lib.define("add.int(int x, int y=1) -> str")
        lib.impl("add", add_tensor, CEA)
        lib.impl("add.Scalar", add_scalar, CEA)
        lib.impl("add.int", add_int, CEA)
        yield getattr(ops, ns).add


def test_packet_overloads_and_handles(ns: str) -> None:
    with add_overloads(ns) as add:
        assert add.overloads() == ["default", "Scalar", "int"]
        assert add.default is dispatcher.find_op(f"{ns}::add")
        assert add.Scalar is dispatcher.find_op(f"{ns}::add", "Scalar")
        assert getattr(add, "int") is dispatcher.find_op(f"{ns}::add.int")
        assert repr(add) == f"<OpOverloadPacket {ns}::add (default, Scalar, int)>"
        with pytest.raises(AttributeError) as excinfo:
            add.Scaler
        assert str(excinfo.value) == f"{ns}::add has no overload 'Scaler'; it has: default, Scalar, int"


def test_packet_call_picks_the_first_binding_overload(ns: str) -> None:
    with add_overloads(ns) as add:
        t = cpu_t()
        assert add(t, t) == "Tensor"
        assert add(t, 2) == "Scalar"
        assert add(t, y=2.5) == "Scalar"
        assert add(3) == "int 3+1"
        assert add(3, y=4) == "int 3+4"


def test_packet_call_takes_definition_order_when_several_bind(ns: str) -> None:
    def s(x: Scalar) -> str:
        return "Scalar"

    def i(x: int) -> str:
        return "int"

    with Library(ns, "DEF") as lib:
        lib.define("p.a(Scalar x) -> str")
        lib.define("p.b(int x) -> str")
        lib.define("q.a(int x) -> str")
        lib.define("q.b(Scalar x) -> str")
        lib.impl("p.a", s, CEA)
        lib.impl("p.b", i, CEA)
        lib.impl("q.a", i, CEA)
        lib.impl("q.b", s, CEA)
        assert getattr(ops, ns).p(1) == "Scalar"
        assert getattr(ops, ns).q(1) == "int"
        assert getattr(ops, ns).q(1.5) == "Scalar"


def test_packet_call_takes_out_none_as_no_out(ns: str) -> None:
    """Note [out=None] in typedops/dispatch/_ops.py; the out overload's own handle still
    requires its tensor (as PyTorch's does)."""

    def plain(x: Tensor) -> str:
        return "plain"

    def into(x: Tensor, *, out: Tensor) -> str:
        return "out"

    with Library(ns, "DEF") as lib:
        lib.define("neg(Tensor x) -> str")
        lib.define("neg.out(Tensor x, *, Tensor(a!) out) -> str")
        lib.impl("neg", plain, CEA)
        lib.impl("neg.out", into, CEA)
        t, packet = cpu_t(), getattr(ops, ns).neg
        assert packet(t, out=None) == packet(t) == "plain" and packet(x=t, out=None) == "plain"
        assert packet(t, out=t) == "out"
        with pytest.raises(TypeError, match=re.escape("argument 'out' (Tensor): expected a Tensor, got None")):
            packet.out(t, out=None)
        with pytest.raises(TypeError, match=re.escape(f"  {ns}::neg(Tensor x) -> str: has no argument 'y'")):
            packet(t, y=None)  # only an out argument's None is dropped


@pytest.mark.parametrize(
    ("args", "kwargs", "reasons"),
    [
        (
            ("x",),
            {},
            [
                "argument 'x': expected Tensor, got str",
                "argument 'x': expected Tensor, got str",
                "argument 'x': expected int, got str",
            ],
        ),
        (("T",), {}, ["missing argument 'y'", "missing argument 'y'", "argument 'x': expected int, got Tensor"]),
        ((1, 2, 3), {}, ["takes 2 positional argument(s), got 3"] * 3),
        (("T",), {"z": 1}, ["has no argument 'z'"] * 3),
    ],
)
def test_packet_call_error_lists_every_candidate(
    ns: str, args: tuple[Any, ...], kwargs: dict[str, Any], reasons: list[str]
) -> None:
    values = [cpu_t() if a == "T" else a for a in args]
    with add_overloads(ns) as add:
        with pytest.raises(TypeError) as excinfo:
            add(*values, **kwargs)
        schemas = [
            f"{ns}::add(Tensor x, Tensor y) -> str",
            f"{ns}::add.Scalar(Tensor x, Scalar y) -> str",
            f"{ns}::add.int(int x, int y=1) -> str",
        ]
        assert str(excinfo.value) == f"no overload of {ns}::add takes these arguments. Candidates:\n" + "\n".join(
            f"  {schema}: {reason}" for schema, reason in zip(schemas, reasons)
        )


def test_ops_namespace_lookup_errors(ns: str) -> None:
    with add_overloads(ns):
        space = getattr(ops, ns)
        with pytest.raises(AttributeError) as excinfo:
            space.ad
        assert str(excinfo.value) == f"namespace {ns!r} has no operator 'ad'; did you mean add?"
        with pytest.raises(AttributeError) as excinfo:
            space.zzzz
        assert str(excinfo.value) == f"namespace {ns!r} has no operator 'zzzz'"
        assert dir(space) == ["add"]
        assert ns in dir(ops)
    assert ns not in dir(ops)


def test_ops_caches_follow_definitions_and_removals(ns: str) -> None:
    """What ``ops`` caches (Note [Cached op attributes] in dispatch/_ops.py) follows the
    registry: a held namespace or packet sees ops and overloads defined after it was
    made, and loses those removed."""
    space = getattr(ops, ns)  # made before the namespace has any op
    assert dir(space) == []
    with Library(ns, "DEF") as lib:
        f = lib.define(F)
        lib.impl("f", f_cpu, "CPU")
        packet = space.f
        assert packet is getattr(ops, ns).f and space is getattr(ops, ns)
        assert packet.default is f and packet(cpu_t()) == "cpu"
        with pytest.raises(AttributeError, match=f"^{ns}::f has no overload 'two'; it has: default$"):
            packet.two
        two = lib.define("f.two(Tensor x, int n) -> str")
        assert packet.two is two and packet.overloads() == ["default", "two"]
        two.remove()
        with pytest.raises(OperatorAttributeError, match=f"^{ns}::f has no overload 'two'; it has: default$"):
            packet.two
        f.remove()
        assert packet.overloads() == []
        with pytest.raises(OperatorAttributeError, match=f"^namespace {ns!r} has no operator 'f'$"):
            space.f
        again = lib.define(F)  # a new op: the held packet serves it
        assert packet.default is again and space.f is packet
    assert ns not in vars(ops) and "f" not in vars(space)  # nothing cached is left


# -- NoKernelError ----------------------------------------------------------------------------


def test_no_kernel_error_names_op_keys_key_and_available_kernels(ns: str) -> None:
    def autograd(keys: DispatchKeySet, x: Tensor) -> str:
        result: str = op.redispatch(keys, x)
        return result

    with Library(ns, "DEF") as lib:
        op = lib.define(F)
        lib.impl("f", f_cpu, "CPU")
        lib.impl("f", autograd, K.Autograd, with_keys=True)
        assert op(cpu_t()) == "cpu"
        with pytest.raises(NoKernelError) as excinfo:
            op(meta_t())
        error = excinfo.value
        base: BaseException = error
        assert isinstance(base, LookupError) and isinstance(base, TypedopsError)
        assert str(error) == (
            f"{ns}::f has no kernel for dispatch key Meta (computed key set: "
            "DispatchKeySet(Meta)). Kernels are registered for: CPU, Autograd. Register one "
            "with lib.impl('f', fn, 'Meta'), or a fallback with "
            "Library('_', 'IMPL').fallback(fn, 'Meta')."
        )
        assert error.op == f"{ns}::f"
        assert error.keys == DispatchKeySet([K.Meta])
        assert error.key is K.Meta
        assert error.available == (K.CPU, K.Autograd)


def test_no_kernel_error_for_an_included_key(ns: str) -> None:
    with Library(ns, "DEF") as lib:
        op = lib.define("f.ov(Tensor x) -> str")
        lib.impl("f.ov", f_cpu, "CPU")
        with include_keys(K.PrivateUse3):
            with pytest.raises(NoKernelError) as excinfo:
                op(cpu_t())
        assert str(excinfo.value) == (
            f"{ns}::f.ov has no kernel for dispatch key PrivateUse3 (computed key set: "
            "DispatchKeySet(PrivateUse3, CPU)). Kernels are registered for: CPU. Register one "
            "with lib.impl('f', fn, 'PrivateUse3'), or a fallback with "
            "Library('_', 'IMPL').fallback(fn, 'PrivateUse3')."
        )
        stack: list[Any] = [cpu_t()]
        with include_keys(K.PrivateUse3), pytest.raises(NoKernelError) as boxed_info:
            op.call_boxed(stack)
        assert str(boxed_info.value) == str(excinfo.value)


# -- calling boxed ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "fits", "goes_to_the_slow_check"),
    [
        (CheckKind.int, 3, True),
        (CheckKind.float, 3, "3.0"),
        (CheckKind.bool, False, 0),
        (CheckKind.scalar, 2j, "2"),
        (CheckKind.complex, 2.0, True),
        (CheckKind.str, "s", b"s"),
        (CheckKind.scalar_type, ScalarType.float32, "float32"),
        (CheckKind.layout, Layout.strided, 0),
        (CheckKind.memory_format, MemoryFormat.contiguous_format, 0),
        (CheckKind.device, "cpu", 0),
    ],
)
def test_every_exact_type_check_of_a_boxed_call(kind: CheckKind, fits: Any, goes_to_the_slow_check: Any) -> None:
    from typedops.dispatch._entry import _GLOBALS, _check_expr

    test = _check_expr(ArgCheck(kind), 0, "v")
    optional = _check_expr(ArgCheck(kind, optional=True), 0, "v")
    assert test is not None and optional is not None
    assert eval(test, dict(_GLOBALS), {"v": fits}) is True
    assert eval(test, dict(_GLOBALS), {"v": goes_to_the_slow_check}) is False
    assert eval(optional, dict(_GLOBALS), {"v": None}) is True and eval(test, dict(_GLOBALS), {"v": None}) is False


def test_checks_without_an_exact_type_test() -> None:
    from typedops.dispatch._entry import _check_expr

    assert _check_expr(ArgCheck(CheckKind.tensor), 0, "v") is None
    assert _check_expr(ArgCheck(CheckKind.none), 0, "v") is None
    assert _check_expr(ArgCheck(CheckKind.slow), 2, "_a2") == "_fits(_op, 2, _a2)"


def test_call_boxed_fills_trailing_defaults(ns: str) -> None:
    with Library(ns, "DEF") as lib:
        op = lib.define(G)
        lib.impl("g", g_kernel, "CPU")
        t = cpu_t()
        cases: list[tuple[list[Any], str]] = [
            ([t], "g n=2 alpha=1.0"),
            ([t, 5], "g n=5 alpha=1.0"),
            ([t, 5, 0.5], "g n=5 alpha=0.5"),
        ]
        for stack, expected in cases:
            op.call_boxed(stack)
            assert stack == [expected]
        assert op(t) == "g n=2 alpha=1.0"
        assert op(t, alpha=3.0) == "g n=2 alpha=3.0"


def test_call_boxed_arity_errors_leave_the_stack_untouched(ns: str) -> None:
    with Library(ns, "DEF") as lib:
        op = lib.define(G)
        lib.impl("g", g_kernel, "CPU")
        t = cpu_t()
        signature = "(Tensor x, int n=2, float alpha=1.0)"
        too_many = [t, 1, 2.0, "extra"]
        with pytest.raises(TypeError) as excinfo:
            op.call_boxed(too_many)
        assert str(excinfo.value) == (
            f"{ns}::g.call_boxed(): the stack holds 4 values, but the op takes 3 argument(s) "
            f"{signature}; the stack must hold exactly the arguments"
        )
        assert too_many == [t, 1, 2.0, "extra"]
        empty: list[Any] = []
        with pytest.raises(TypeError) as excinfo:
            op.call_boxed(empty)
        assert str(excinfo.value) == (
            f"{ns}::g.call_boxed(): missing argument(s) 'x'; the stack holds 0 value(s) for {signature}"
        )
        assert empty == []


@pytest.mark.parametrize(
    ("values", "problem"),
    [
        (["T", "x"], "argument 'n' (int): expected int, got str"),
        (["T", 1.5], "argument 'n' (int): expected int, got float"),
        (["T", 1, "y"], "argument 'alpha' (float): expected float, got str"),
        ([3], "argument 'x' (Tensor): expected a Tensor, got int"),
    ],
)
def test_call_boxed_type_errors_leave_the_stack_untouched(ns: str, values: list[Any], problem: str) -> None:
    with Library(ns, "DEF") as lib:
        op = lib.define(G)
        lib.impl("g", g_kernel, "CPU")
        t = cpu_t()
        given = [t if v == "T" else v for v in values]
        stack = list(given)
        with pytest.raises(TypeError) as excinfo:
            op.call_boxed(stack)
        assert str(excinfo.value) == f"{ns}::g.call_boxed(): {problem}"
        assert stack == given  # defaults appended for the check are taken back


def test_call_boxed_reports_every_missing_argument(ns: str) -> None:
    def k(x: Tensor, y: Tensor, n: int) -> str:
        return ""

    with Library(ns, "DEF") as lib:
        op = lib.define("h(Tensor x, Tensor y, int n=0) -> str")
        lib.impl("h", k, "CPU")
        stack: list[Any] = []
        with pytest.raises(TypeError) as excinfo:
            op.call_boxed(stack)
        assert str(excinfo.value) == (
            f"{ns}::h.call_boxed(): missing argument(s) 'x', 'y'; the stack holds 0 value(s) "
            "for (Tensor x, Tensor y, int n=0)"
        )
        assert stack == []


def test_boxed_kernel_called_both_ways(ns: str) -> None:
    seen: list[tuple[DispatchKeySet, list[Any]]] = []

    @boxed
    def kernel(op: OperatorHandle, keys: DispatchKeySet, stack: list[Any]) -> None:
        seen.append((keys, list(stack)))
        x, n, alpha = stack[-3:]
        del stack[-3:]
        stack.append(f"boxed n={n} alpha={alpha}")

    with Library(ns, "DEF") as lib:
        op = lib.define(G)
        lib.impl("g", kernel, "CPU")
        t = cpu_t()
        assert op(t, 4, alpha=0.25) == "boxed n=4 alpha=0.25"
        stack: list[Any] = [t]
        op.call_boxed(stack)
        assert stack == ["boxed n=2 alpha=1.0"]
        assert seen == [(DispatchKeySet([K.CPU]), [t, 4, 0.25]), (DispatchKeySet([K.CPU]), [t, 2, 1.0])]


def test_boxed_kernel_leaving_wrong_stack_on_unboxed_call(ns: str) -> None:
    @boxed
    def sloppy(op: OperatorHandle, keys: DispatchKeySet, stack: list[Any]) -> None:
        stack.append("forgot to pop")

    with Library(ns, "DEF") as lib:
        op = lib.define(F)
        lib.impl("f", sloppy, "CPU")
        with pytest.raises(TypeError) as excinfo:
            op(cpu_t())
        assert str(excinfo.value) == (
            f"boxed kernel of <OperatorHandle {ns}::f(Tensor x) -> str> left 2 value(s) on the "
            "stack, but its schema returns 1; a boxed kernel pops its arguments and pushes its returns"
        )


def test_with_keys_kernel_gets_the_key_set_both_ways(ns: str) -> None:
    with Library(ns, "DEF") as lib:
        op = lib.define(G)
        lib.impl("g", g_keys, "CPU", with_keys=True)
        assert op(cpu_t(), 3) == "DispatchKeySet(CPU) n=3 alpha=1.0"
        stack: list[Any] = [cpu_t(), 3, 2.0]
        op.call_boxed(stack)
        assert stack == ["DispatchKeySet(CPU) n=3 alpha=2.0"]
        with include_keys(K.PrivateUse1):
            lib.impl("g", g_keys, "PrivateUse1", with_keys=True)
            assert op(cpu_t()) == "DispatchKeySet(PrivateUse1, CPU) n=2 alpha=1.0"
        assert isinstance(op.call, type(g_keys))


# -- redispatch ---------------------------------------------------------------------------------


def test_redispatch_boxed_from_a_boxed_fallback(ns: str) -> None:
    log: list[str] = []

    def tracer(op: OperatorHandle, keys: DispatchKeySet, stack: list[Any]) -> None:
        log.append(f"tracer {op.full_name} {keys!r}")
        op.redispatch_boxed(keys, stack)
        stack[-1] = f"traced({stack[-1]})"

    with Library(ns, "DEF") as lib, Library(ns, "IMPL", "Tracer") as impl:
        op = lib.define(G)
        lib.impl("g", g_keys, "CPU", with_keys=True)
        impl.fallback(tracer)
        with include_keys(K.Tracer):
            assert op(cpu_t(), 1, alpha=0.5) == "traced(DispatchKeySet(CPU) n=1 alpha=0.5)"
            stack: list[Any] = [cpu_t()]
            op.call_boxed(stack)
            assert stack == ["traced(DispatchKeySet(CPU) n=2 alpha=1.0)"]
        assert log == [f"tracer {ns}::g DispatchKeySet(Tracer, CPU)"] * 2


def test_redispatch_unboxed_from_a_boxed_fallback(ns: str) -> None:
    def profiler(op: OperatorHandle, keys: DispatchKeySet, stack: list[Any]) -> None:
        x, n, alpha = stack[-3:]
        del stack[-3:]
        stack.append("profiled " + op.redispatch(keys, x, n, alpha=alpha))

    with Library(ns, "DEF") as lib, Library("_", "IMPL", "Profiler") as everywhere:
        op = lib.define(G)
        lib.impl("g", g_kernel, "CPU")
        everywhere.fallback(profiler)
        with include_keys(K.Profiler):
            assert op(cpu_t(), 7) == "profiled g n=7 alpha=1.0"


def test_a_boxed_fallback_with_an_unboxed_twin(ns: str) -> None:
    """Note [Unboxed twins of boxed kernels]: unboxed calls (and direct boxed calls) reach
    the twin with the arguments as Python arguments, defaults filled; redispatched boxed
    calls reach the boxed kernel with the stack."""
    seen: list[Any] = []

    def stacked(op: OperatorHandle, keys: DispatchKeySet, stack: list[Any]) -> None:
        seen.append(("boxed", len(stack)))
        op.redispatch_boxed(keys, stack)

    def twin(op: OperatorHandle, keys: DispatchKeySet, *args: Any, **kwargs: Any) -> Any:
        seen.append(("unboxed", args[1:], kwargs))
        return op.redispatch(keys, *args, **kwargs)

    with Library(ns, "DEF") as lib, Library(ns, "IMPL", "Tracer") as impl:
        op = lib.define(G)
        lib.impl("g", g_kernel, "CPU")
        impl.fallback(Boxed(stacked, unboxed=twin))
        with include_keys(K.Tracer):
            assert op(cpu_t()) == "g n=2 alpha=1.0"
            stack: list[Any] = [cpu_t(), 3]
            op.call_boxed(stack)
            assert stack == ["g n=3 alpha=1.0"]
            stack = [cpu_t(), 4, 0.5]
            op.redispatch_boxed(DispatchKeySet([K.Profiler, K.Tracer, K.CPU]), stack)
            assert stack == ["g n=4 alpha=0.5"]
    assert seen == [("unboxed", (2,), {"alpha": 1.0}), ("unboxed", (3,), {"alpha": 1.0}), ("boxed", 3)]


def test_redispatch_chain_through_several_keys(ns: str) -> None:
    log: list[str] = []

    def layer(name: str) -> Any:
        def fallback(op: OperatorHandle, keys: DispatchKeySet, stack: list[Any]) -> None:
            log.append(f"{name}: {keys!r}")
            op.redispatch_boxed(keys, stack)

        return fallback

    def autograd(keys: DispatchKeySet, x: Tensor) -> str:
        log.append(f"Autograd: {keys!r}")
        result: str = op.redispatch(keys, x)
        return result

    with Library(ns, "DEF") as lib, Library(ns, "IMPL") as impl:
        op = lib.define(F)
        lib.impl("f", f_meta, "Meta")
        lib.impl("f", autograd, K.Autograd, with_keys=True)
        impl.fallback(layer("Batched"), K.Batched)
        impl.fallback(layer("Tracer"), K.Tracer)
        with include_keys([K.Tracer, K.Batched]):
            assert op(meta_t().requires_grad_()) == "meta"
        assert log == [
            "Batched: DispatchKeySet(Batched, Tracer, AutogradMeta, Meta)",
            "Tracer: DispatchKeySet(Tracer, AutogradMeta, Meta)",
            "Autograd: DispatchKeySet(AutogradMeta, Meta)",
        ]


def test_redispatch_below_the_only_key_uses_the_empty_slot(ns: str) -> None:
    def cea(x: Tensor) -> str:
        return "cea"

    with Library(ns, "DEF") as lib:
        op = lib.define(F)
        lib.impl("f", f_cpu, "CPU")
        lib.impl("f", cea, CEA)
        assert op.redispatch(DispatchKeySet([K.Tracer, K.CPU]), cpu_t()) == "cpu"
        assert op.redispatch(DispatchKeySet([K.CPU]), cpu_t()) == "cea"
        stack: list[Any] = [cpu_t()]
        op.redispatch_boxed(DispatchKeySet([K.Meta, K.CPU]), stack)
        assert stack == ["cpu"]


# -- removed operators -----------------------------------------------------------------------


REMOVED = (
    "operator {ns}::f was removed (the library that defined it was closed); define it "
    "again (for an @op function: apply @op again) and call the new one"
)


def test_handles_of_a_removed_op_raise(ns: str) -> None:
    with Library(ns, "DEF") as lib:
        op = lib.define(F)
        lib.impl("f", f_cpu, "CPU")
        packet = getattr(ops, ns).f
        assert op(cpu_t()) == "cpu"
    message = re.escape(REMOVED.format(ns=ns)) + "$"
    with pytest.raises(OperatorNotFoundError, match=message):
        op(cpu_t())
    with pytest.raises(OperatorNotFoundError, match=message):
        op.redispatch(DispatchKeySet([K.Tracer, K.CPU]), cpu_t())
    with pytest.raises(OperatorNotFoundError, match=re.escape(f"operator {ns}::f no longer has any overload") + "$"):
        packet(cpu_t())
    assert dispatcher.find_op(f"{ns}::f") is None
    with pytest.raises(AttributeError):
        getattr(ops, ns).f
    # registering through the dead handle is refused, even after the op is defined again
    with Library(ns, "IMPL", "Meta") as impl:
        removed = f"operator {ns}::f was removed (the library that defined it was closed); define it again (for an @op function: apply @op again) and register on the new one"
        with pytest.raises(OperatorNotFoundError, match=re.escape(removed) + "$"):
            impl.impl(op, f_cpu)
        with Library(ns, "DEF") as again:
            again.define(F)
            with pytest.raises(OperatorNotFoundError, match=re.escape(removed) + "$"):
                impl.impl(op, f_cpu)


def test_a_handle_removed_before_its_first_call_raises(ns: str) -> None:
    """A handle's first call binds the op's entry function (Note [Handle calls without a
    frame] in dispatch/_handle.py); a removal before it still reaches the caller."""
    with Library(ns, "DEF") as lib:
        op = lib.define(F)
        lib.impl("f", f_cpu, "CPU")
        unbound = lib.define("g(Tensor x) -> str")
        lib.impl("g", f_cpu, "CPU")
        assert op(cpu_t()) == "cpu" and op(cpu_t()) == "cpu"
        assert op.call(cpu_t()) == "cpu"
    with pytest.raises(OperatorNotFoundError, match=re.escape(REMOVED.format(ns=ns)) + "$"):
        op(cpu_t())
    removed_g = REMOVED.format(ns=ns).replace(f"{ns}::f", f"{ns}::g")
    with pytest.raises(OperatorNotFoundError, match=re.escape(removed_g) + "$"):
        unbound(cpu_t())


def test_boxed_calls_of_a_removed_op_raise(ns: str) -> None:
    with Library(ns, "DEF") as lib:
        op = lib.define(F)
        lib.impl("f", f_cpu, "CPU")
        assert op(cpu_t()) == "cpu"
    message = re.escape(REMOVED.format(ns=ns)) + "$"
    with pytest.raises(OperatorNotFoundError, match=message):
        op.call_boxed([cpu_t()])
    with pytest.raises(OperatorNotFoundError, match=message):
        op.redispatch_boxed(DispatchKeySet([K.Tracer, K.CPU]), [cpu_t()])


def test_a_redefined_op_is_a_new_op(ns: str) -> None:
    with Library(ns, "DEF") as lib:
        old = lib.define(F)
        lib.impl("f", f_cpu, "CPU")
    with Library(ns, "DEF") as lib:
        new = lib.define(F)
        lib.impl("f", f_cpu2, "CPU")
        assert new is not old
        assert new(cpu_t()) == "cpu2"
        with pytest.raises(OperatorNotFoundError):
            old(cpu_t())


def _keys_of(handle: OperatorHandle) -> list[str]:
    return [line.split(":")[0].strip() for line in handle.dump().splitlines()[2:]]


def test_define_generated_registers_what_define_and_impl_would(ns: str) -> None:
    def add(self: Tensor, other: Tensor) -> str:
        return "add"

    def neg(self: Tensor) -> str:
        return "neg"

    before = dispatcher.dump_state()
    with Library(ns, "DEF") as lib:
        add_h, neg_h = lib._define_generated((
            (parse_schema(f"{ns}::add(Tensor self, Tensor other) -> str"), ((K.CPU, add, False), (K.Meta, add, False))),
            (parse_schema(f"{ns}::neg(Tensor self) -> str"), ((K.CompositeExplicitAutograd, neg, False),)),
        ))  # fmt: skip
        assert (add_h(cpu_t(), cpu_t()), neg_h(cpu_t())) == ("add", "neg")
        assert _keys_of(add_h) == ["CPU", "Meta"] and _keys_of(neg_h) == ["CompositeExplicitAutograd"]
        assert [h.full_name for h in dispatcher.all_ops() if h.schema.namespace == ns] == [f"{ns}::add", f"{ns}::neg"]
        neg_h.remove()  # one op's definition goes on its own
        assert dispatcher.find_op(f"{ns}::neg") is None and dispatcher.find_op(f"{ns}::add") is add_h
    assert dispatcher.dump_state() == before


def test_define_generated_refuses_a_taken_name_and_changes_nothing(ns: str) -> None:
    def f(self: Tensor) -> str:
        return "f"

    with Library(ns, "DEF") as lib:
        lib.define("f(Tensor self) -> str")
        state = dispatcher.dump_state()
        with pytest.raises(RegistrationError) as info:
            lib._define_generated((
                (parse_schema(f"{ns}::g(Tensor self) -> str"), ((K.CPU, f, False),)),
                (parse_schema(f"{ns}::f(Tensor self) -> str"), ((K.CPU, f, False),)),
            ))  # fmt: skip
        assert str(info.value).startswith(f"operator {ns}::f is already defined (at ")
        assert dispatcher.dump_state() == state


def test_define_many_defines_what_define_would_one_by_one(ns: str) -> None:
    before = dispatcher.dump_state()
    with Library(ns, "DEF") as lib:
        add, neg = lib.define_many(["add(Tensor self, Tensor other) -> Tensor", f"{ns}::neg(Tensor self) -> Tensor"])
        assert [add.full_name, neg.full_name] == [f"{ns}::add", f"{ns}::neg"]
        assert dispatcher.find_op(f"{ns}::add") is add and str(neg.schema) == f"{ns}::neg(Tensor self) -> Tensor"
        assert lib.define_many([]) == []
        neg.remove()  # one op's definition goes on its own
        assert dispatcher.find_op(f"{ns}::neg") is None and dispatcher.find_op(f"{ns}::add") is add
    assert dispatcher.dump_state() == before


@pytest.mark.parametrize(
    ("schemas", "error", "message"),
    [
        (["g(Tensor self) -> Tensor", "f(Tensr self) -> Tensor"], SchemaParseError, "unknown type 'Tensr'"),
        (["g(Tensor self) -> Tensor", "f(Tensor self) -> Tensor"], RegistrationError,
         "operator {ns}::f is already defined (at "),
        (["g(Tensor self) -> Tensor", "g(Tensor x) -> Tensor"], RegistrationError,
         "operator {ns}::g is already defined (twice in this batch)"),
        (["g(Tensor self) -> Tensor", "other::h(Tensor self) -> Tensor"], RegistrationError,
         "cannot define other::h in a library for namespace '{ns}'; drop the namespace or use Library('other', ...)"),
    ],
)  # fmt: skip
def test_define_many_refuses_the_whole_batch_and_changes_nothing(
    ns: str, schemas: list[str], error: type[Exception], message: str
) -> None:
    with Library(ns, "DEF") as lib:
        lib.define("f(Tensor self) -> Tensor")
        state = dispatcher.dump_state()
        with pytest.raises(error) as info:
            lib.define_many(schemas)
        assert str(info.value).startswith(message.format(ns=ns))
        assert dispatcher.dump_state() == state
        assert gc.isenabled()


def test_define_many_runs_with_the_collector_paused(ns: str) -> None:
    seen: list[bool] = []

    def schemas() -> Iterator[str]:  # parsed inside define_many, so it sees the pause
        for name in ("f", "g"):
            seen.append(gc.isenabled())
            yield f"{name}(Tensor self) -> Tensor"

    assert gc.isenabled()
    with Library(ns, "DEF") as lib:
        lib.define_many(schemas())
    assert seen == [False, False] and gc.isenabled()


def test_define_many_in_an_impl_library_is_refused(ns: str) -> None:
    with pytest.raises(RegistrationError, match="is an IMPL library and cannot define operators"):
        Library(ns, "IMPL").define_many(["f(Tensor self) -> Tensor"])


def test_define_generated_runs_with_the_collector_paused_and_restores_it_on_error(ns: str) -> None:
    seen: list[bool] = []

    def f(self: Tensor) -> str:
        return "f"

    def kernels() -> Iterator[tuple[DispatchKey, Any, bool]]:  # read inside the pause
        seen.append(gc.isenabled())
        yield (K.CPU, f, False)

    assert gc.isenabled()
    with Library(ns, "DEF") as lib:
        lib._define_generated(((parse_schema(f"{ns}::f(Tensor self) -> str"), list(kernels())),))
        assert seen == [True]  # list() ran outside; now a generator read inside
        with pytest.raises(RegistrationError):
            lib._define_generated(((parse_schema(f"{ns}::f(Tensor self) -> str"), kernels()),))  # type: ignore[arg-type]
        assert seen == [True, False] and gc.isenabled()


def test_overloads_follow_definitions_and_removals(ns: str) -> None:
    def names() -> list[str]:
        return [e.full_name for e in dispatcher.overloads(f"{ns}::f")]

    with Library(ns, "DEF") as lib:
        assert names() == []
        f = lib.define("f(Tensor x) -> Tensor")
        assert names() == [f"{ns}::f"]
        a, b = lib.define_many(["f.a(Tensor x, int n) -> Tensor", "f.b(Tensor x, float s) -> Tensor"])
        assert names() == [f"{ns}::f", f"{ns}::f.a", f"{ns}::f.b"]
        a.remove()
        assert names() == [f"{ns}::f", f"{ns}::f.b"]
        f.remove()
        assert names() == [f"{ns}::f.b"]
        c = lib.define("f.c(Tensor x) -> Tensor")
        assert names() == [f"{ns}::f.b", f"{ns}::f.c"]
        b.remove()
        c.remove()
        assert names() == []
