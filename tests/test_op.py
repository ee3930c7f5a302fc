"""Runtime behaviour of ``@op`` and of typed handles (``OperatorHandle.typed``).

What mypy accepts and refuses is checked in tests/static/op_calls.py; here, what the
functions they return do when called. Every test uses its own namespace (derived from
its name); ops defined without ``lib=`` are removed at teardown through ``owned``.
"""

from __future__ import annotations

import inspect
import re
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Callable, Literal, Optional

import pytest

import typedops
from typedops import (
    DispatchKey,
    DispatchKeySet,
    Library,
    Op,
    OperatorHandle,
    OperatorNotFoundError,
    RegistrationError,
    SchemaInferenceError,
    SchemaMismatchError,
    Tensor,
    TypedopsError,
    TypedOperatorHandle,
    dispatcher,
    include_keys,
    op,
    ops,
    tensor,
)
from typedops.dispatch import typed

K = DispatchKey
CEA = K.CompositeExplicitAutograd


@pytest.fixture
def ns(request: pytest.FixtureRequest) -> str:
    return "op_" + re.sub(r"\W", "_", request.node.name)


@pytest.fixture
def owned() -> Iterator[list[Library]]:
    """Libraries of ops defined without ``lib=``: append ``f.library``; removed at teardown."""
    libraries: list[Library] = []
    yield libraries
    for library in reversed(libraries):
        library.remove()


def next_line() -> str:
    """``file:line`` of the line after the caller's: put it right above a registration."""
    frame = sys._getframe(1)
    return f"{frame.f_code.co_filename}:{frame.f_lineno + 1}"


@contextmanager
def unchanged_state() -> Iterator[None]:
    before = dispatcher.dump_state()
    yield
    assert dispatcher.dump_state() == before


def cpu_t() -> Tensor:
    return tensor([1.0])


def meta_t() -> Tensor:
    return tensor([1.0], device="meta")


def removed(name: str) -> str:
    """The full-match pattern of calling a removed op."""
    return re.escape(
        f"operator {name} was removed (the library that defined it was closed); define it "
        "again (for an @op function: apply @op again) and call the new one"
    ) + "$"


# -- @op: definition, schema, identity ----------------------------------------------------


def test_op_defines_the_op_with_the_inferred_schema(ns: str, owned: list[Library]) -> None:
    at = next_line()
    @op(f"{ns}::scale")
    def scale(x: Tensor, factor: float, *, bias: float = 0.0) -> str:
        return f"scale factor={factor} bias={bias}"

    owned.append(scale.library)
    assert str(scale.schema) == f"{ns}::scale(Tensor x, float factor, *, float bias=0.0) -> str"
    handle = dispatcher.find_op(f"{ns}::scale")
    assert handle is not None and handle is scale.handle
    assert isinstance(handle, OperatorHandle)
    assert getattr(ops, ns).scale.default is handle
    assert dispatcher.find_schema_or_throw(f"{ns}::scale").schema is scale.schema
    # the op's generated entry *is* the function @op returned (Note [Typed handle calls])
    assert handle.call is scale
    assert scale.dump() == handle.dump() == (
        f"{ns}::scale(Tensor x, float factor, *, float bias=0.0) -> str\n"
        f"  defined at {at}\n"
        f"  CompositeExplicitAutograd: unboxed {scale.default_kernel.__qualname__} at {at}"
    )
    table = scale.dump_table()
    assert table == handle.dump_table()
    assert table.startswith(f"computed dispatch table for {ns}::scale:\n")
    for key in ("CPU", "Meta", "(no keys)"):
        assert f"  {key:<20} composite [CompositeExplicitAutograd]: unboxed {scale.default_kernel.__qualname__} at {at}" in table.splitlines()
    # calls dispatch (a CPU and a meta tensor both reach the composite kernel)
    assert scale(cpu_t(), 2.0) == "scale factor=2.0 bias=0.0"
    assert scale(meta_t(), 3.0, bias=1.0) == "scale factor=3.0 bias=1.0"
    assert scale(x=cpu_t(), factor=4) == "scale factor=4 bias=0.0"
    assert handle(cpu_t(), 5.0) == "scale factor=5.0 bias=0.0"


def test_op_attributes(ns: str, owned: list[Library]) -> None:
    at = next_line()
    @op(f"{ns}::f")
    def f(x: Tensor) -> str:
        """Says f."""
        return "f"

    owned.append(f.library)
    assert (f.name, f.overload_name) == (f"{ns}::f", "")
    # what functools.wraps would keep, except the name: docs, help() and signature work
    assert f.__doc__ == "Says f."
    assert f.__wrapped__ is f.default_kernel  # type: ignore[attr-defined]
    assert str(inspect.signature(f)) == "(x: 'Tensor') -> 'str'"  # this module's annotations are strings
    assert f.handle.full_name == f"{ns}::f"
    assert isinstance(f.library, Library)
    assert repr(f.library) == f"Library({ns!r}, 'FRAGMENT') at {at}"
    assert f.default_kernel.__name__ == "f"
    assert f.default_kernel(cpu_t()) == "f"  # the plain function, not the op
    assert f.default_kernel is not f
    function: Any = f
    assert (function.__name__, function.__qualname__, function.__module__) == ("f", f"{ns}::f", __name__)
    assert re.fullmatch(rf"<function {ns}::f at 0x[0-9a-f]+>", repr(f))


def test_op_with_an_overload_name(ns: str, owned: list[Library]) -> None:
    @op(f"{ns}::f")
    def f(x: Tensor) -> str:
        return "one"

    owned.append(f.library)

    @op(f"{ns}::f.two")
    def f_two(x: Tensor, y: Tensor) -> str:
        return "two"

    owned.append(f_two.library)
    assert str(f_two.schema) == f"{ns}::f.two(Tensor x, Tensor y) -> str"
    assert (f_two.name, f_two.overload_name) == (f"{ns}::f", "two")
    assert f_two.handle.full_name == f"{ns}::f.two"
    function: Any = f_two
    assert (function.__name__, function.__qualname__) == ("f", f"{ns}::f.two")
    assert re.fullmatch(rf"<function {ns}::f\.two at 0x[0-9a-f]+>", repr(f_two))
    assert dispatcher.find_op(f"{ns}::f", "two") is f_two.handle
    assert dispatcher.find_op(f"{ns}::f.two") is f_two.handle
    packet = getattr(ops, ns).f
    assert (packet.default, packet.two) == (f.handle, f_two.handle)
    assert (f(cpu_t()), f_two(cpu_t(), cpu_t())) == ("one", "two")


def test_op_and_typed_handle_are_runtime_checkable_protocols(ns: str) -> None:
    assert typedops.Op is Op and typedops.TypedOperatorHandle is TypedOperatorHandle
    assert typedops.op is op
    assert {"op", "Op", "TypedOperatorHandle"} <= set(typedops.__all__)
    with Library(ns, "FRAGMENT") as lib:

        @op(f"{ns}::f", lib=lib)
        def f(x: Tensor) -> str:
            return "f"

        assert isinstance(f, Op)
        assert isinstance(f, TypedOperatorHandle)
        # the plain function and the untyped handle are neither
        assert not isinstance(f.default_kernel, TypedOperatorHandle)
        assert not isinstance(f.handle, TypedOperatorHandle)
        assert not isinstance(f.handle, Op)


# -- @op: mutates_args ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mutates_args", "schema"),
    [
        ((), "f(Tensor x, Tensor? y, Tensor[] zs, int n) -> ()"),
        (("x",), "f(Tensor(a!) x, Tensor? y, Tensor[] zs, int n) -> ()"),
        (["zs", "y"], "f(Tensor x, Tensor(a!)? y, Tensor(b!)[] zs, int n) -> ()"),
        ("unknown", "f(Tensor(a!) x, Tensor(b!)? y, Tensor(c!)[] zs, int n) -> ()"),
    ],
)
def test_mutates_args_marks_tensor_parameters_as_written(
    ns: str, mutates_args: Sequence[str] | Literal["unknown"], schema: str
) -> None:
    with Library(ns, "FRAGMENT") as lib:

        @op(f"{ns}::f", mutates_args=mutates_args, lib=lib)
        def f(x: Tensor, y: Optional[Tensor], zs: list[Tensor], n: int) -> None:
            pass

        assert str(f.schema) == f"{ns}::{schema}"
        assert f(cpu_t(), None, [], 1) is None


@pytest.mark.parametrize(
    ("mutates_args", "message"),
    [
        (("y",), "mutates_args names 'y', but f() has no parameter 'y'; its parameters are: x, n"),
        (
            ("n",),
            "parameter 'n' of f() is in mutates_args but is annotated 'int'; only tensors "
            "(Tensor, Optional[Tensor], list[Tensor]) can be mutated; remove 'n' from mutates_args",
        ),
        (
            "x",
            "mutates_args takes parameter names or \"unknown\", not the string 'x'; write mutates_args=['x']",
        ),
        (["x", "x"], "mutates_args names 'x' twice for f(); name each mutated parameter once"),
    ],
)
def test_bad_mutates_args_are_refused_before_anything_is_defined(
    ns: str, mutates_args: Any, message: str
) -> None:
    def f(x: Tensor, n: int) -> None:
        pass

    with unchanged_state():
        with pytest.raises(SchemaInferenceError) as excinfo:
            op(f"{ns}::f", mutates_args=mutates_args)(f)
        assert str(excinfo.value) == message
    assert dispatcher.find_op(f"{ns}::f") is None


# -- @op: bad names and functions ---------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("noname", "@op needs a namespaced name such as 'myops::noname', not 'noname'"),
        ("::noname", "@op needs a namespaced name such as 'myops::noname', not '::noname'"),
    ],
)
def test_op_needs_a_namespace(name: str, message: str) -> None:
    with unchanged_state():
        with pytest.raises(ValueError) as excinfo:
            op(name)
        assert str(excinfo.value) == message


def test_op_of_an_unannotated_function(ns: str) -> None:
    def f(x, n: int) -> str:  # type: ignore[no-untyped-def]  # on purpose
        return ""

    with unchanged_state():
        with pytest.raises(SchemaInferenceError) as excinfo:
            op(f"{ns}::f")(f)
        assert str(excinfo.value) == "parameter 'x' of f() has no annotation; annotate it, e.g. 'x: Tensor'"


def test_defining_the_same_name_twice_is_refused(ns: str, owned: list[Library]) -> None:
    at = next_line()
    @op(f"{ns}::g")
    def g(x: Tensor) -> str:
        return "g"

    owned.append(g.library)

    def g_again(x: Tensor, y: int) -> str:
        return "g again"

    with unchanged_state():
        with pytest.raises(RegistrationError) as excinfo:
            op(f"{ns}::g")(g_again)
        assert str(excinfo.value) == (
            f"operator {ns}::g is already defined (at {at}) as {ns}::g(Tensor x) -> str; "
            f"pick another overload name, e.g. '{ns}::g.other(...)'"
        )
        with Library(ns, "FRAGMENT") as lib:
            with pytest.raises(RegistrationError, match=re.escape(f"operator {ns}::g is already defined")):
                op(f"{ns}::g", lib=lib)(g_again)
    assert g(cpu_t()) == "g"


# -- calling: boxed and redispatch --------------------------------------------------------------


def test_call_boxed_replaces_the_stack_with_the_results(ns: str) -> None:
    with Library(ns, "FRAGMENT") as lib:

        @op(f"{ns}::f", lib=lib)
        def f(x: Tensor, n: int = 2, *, alpha: float = 1.0) -> str:
            return f"n={n} alpha={alpha}"

        x = cpu_t()
        stack: list[Any] = [x, 5, 0.5]
        f.call_boxed(stack)
        assert stack == ["n=5 alpha=0.5"]
        stack = [x]  # trailing defaults are filled in
        f.call_boxed(stack)
        assert stack == ["n=2 alpha=1.0"]
        stack = [x, 7]
        f.handle.call_boxed(stack)
        assert stack == ["n=7 alpha=1.0"]


def test_redispatch_continues_below_the_highest_key(ns: str) -> None:
    with Library(ns, "FRAGMENT") as lib:

        @op(f"{ns}::f", lib=lib)
        def f(x: Tensor, n: int = 2) -> str:
            return f"cea n={n}"

        @f.register_kernel("CPU")
        def f_cpu(x: Tensor, n: int) -> str:
            return f"cpu n={n}"

        x = cpu_t()
        assert f(x) == "cpu n=2"
        assert f.redispatch(DispatchKeySet([K.Tracer, K.CPU]), x) == "cpu n=2"
        assert f.redispatch(DispatchKeySet([K.Tracer, K.CPU]), x, n=5) == "cpu n=5"
        # below CPU, the empty key set's slot: the composite kernel
        assert f.redispatch(DispatchKeySet([K.CPU]), x, 3) == "cea n=3"
        stack: list[Any] = [x, 4]
        f.redispatch_boxed(DispatchKeySet([K.Tracer, K.CPU]), stack)
        assert stack == ["cpu n=4"]
        stack = [x, 6]
        f.redispatch_boxed(DispatchKeySet([K.CPU]), stack)
        assert stack == ["cea n=6"]
        # as with call_boxed, trailing defaults may be left off, and a bad arity is named
        stack = [x]
        f.redispatch_boxed(DispatchKeySet([K.Tracer, K.CPU]), stack)
        assert stack == ["cpu n=2"]
        # a fallback's stack may hold its own values below the call's arguments
        stack = ["the fallback's", x, 3]
        f.redispatch_boxed(DispatchKeySet([K.Tracer, K.CPU]), stack)
        assert stack == ["the fallback's", "cpu n=3"]
        empty: list[Any] = []
        with pytest.raises(TypeError) as excinfo:
            f.redispatch_boxed(DispatchKeySet([K.CPU]), empty)
        assert str(excinfo.value) == (
            f"{ns}::f.redispatch_boxed(): missing argument(s) 'x'; the stack holds 0 value(s) for (Tensor x, int n=2)"
        )
        assert empty == []  # left as it was


def test_a_fallback_redispatches_through_the_op_function(ns: str) -> None:
    with Library(ns, "FRAGMENT") as lib, Library(ns, "IMPL", "Tracer") as impl:

        @op(f"{ns}::f", lib=lib)
        def f(x: Tensor, n: int = 2) -> str:
            return f"cea n={n}"

        def tracer(handle: OperatorHandle, keys: DispatchKeySet, stack: list[Any]) -> None:
            assert handle is f.handle
            x, n = stack[-2:]
            del stack[-2:]
            stack.append(f"traced {f.redispatch(keys, x, n)}")

        impl.fallback(tracer)
        assert f(cpu_t()) == "cea n=2"
        with include_keys(K.Tracer):
            assert f(cpu_t(), 3) == "traced cea n=3"
            stack: list[Any] = [cpu_t()]
            f.call_boxed(stack)
            assert stack == ["traced cea n=2"]


def cea(x: Tensor) -> str:
    """The composite kernel most tests below define their op with."""
    return "cea"


def f_cpu(x: Tensor) -> str:
    return "cpu"


def f_cpu2(x: Tensor) -> str:
    return "cpu2"


# -- register_kernel and register_fake ------------------------------------------------------------


def test_register_kernel_as_a_decorator(ns: str) -> None:
    with Library(ns, "FRAGMENT") as lib:
        f = op(f"{ns}::f", lib=lib)(cea)
        assert f(cpu_t()) == "cea"
        at = next_line()
        decorated = f.register_kernel("CPU")(f_cpu)
        assert decorated is f_cpu  # the function comes back unchanged
        # the CPU kernel beats the composite one for CPU tensors only
        assert (f(cpu_t()), f(meta_t())) == ("cpu", "cea")
        assert f"  CPU: unboxed {f_cpu.__qualname__} at {at}" in f.dump().splitlines()
        assert f"  {'CPU':<20} kernel: unboxed {f_cpu.__qualname__} at {at}" in f.dump_table().splitlines()
    # the kernel went into the op's library and left with it
    assert dispatcher.find_op(f"{ns}::f") is None


def test_register_kernel_direct_form_and_override(ns: str) -> None:
    with Library(ns, "FRAGMENT") as lib:
        f = op(f"{ns}::f", lib=lib)(cea)
        first = next_line()
        assert f.register_kernel(DispatchKey.CPU, f_cpu) is f_cpu
        assert f(cpu_t()) == "cpu"
        with unchanged_state():
            with pytest.raises(RegistrationError) as excinfo:
                f.register_kernel("CPU", f_cpu2)
            assert str(excinfo.value) == (
                f"{ns}::f already has a CPU kernel (registered at {first}); pass "
                "allow_override=True to replace it while this registration lives, or remove "
                "the first one"
            )
        assert f(cpu_t()) == "cpu"
        assert f.register_kernel(K.CPU, f_cpu2, allow_override=True) is f_cpu2
        assert f(cpu_t()) == "cpu2"
        assert "(overridden)" in f.dump()


def test_register_kernel_for_an_alias_key(ns: str) -> None:
    with Library(ns, "FRAGMENT") as lib:
        f = op(f"{ns}::f", lib=lib)(cea)
        @f.register_kernel(K.Autograd)
        def f_autograd(x: Tensor) -> str:
            return "autograd"

        # tensors that require grad carry their Autograd key
        assert (f(cpu_t().requires_grad_()), f(meta_t().requires_grad_())) == ("autograd", "autograd")


def test_register_kernel_with_an_unknown_key(ns: str) -> None:
    with Library(ns, "FRAGMENT") as lib:
        f = op(f"{ns}::f", lib=lib)(cea)
        with unchanged_state():
            with pytest.raises(ValueError, match=r"^unknown dispatch key 'CPUU'; did you mean 'CPU'\? \(keys: CPU, Meta, "):
                f.register_kernel("CPUU", f_cpu)


def f_renamed(x: Tensor, k: int) -> str:
    return ""


def f_wrong_type(x: Tensor, n: float) -> str:
    return ""


def f_wrong_return(x: Tensor, n: int) -> int:
    return 0


def f_missing(x: Tensor) -> str:
    return ""


@pytest.mark.parametrize("register", ["register_kernel", "register_fake"])
@pytest.mark.parametrize(
    ("kernel", "differences"),
    [
        (f_renamed, ["argument 1: the schema calls it 'n', the kernel 'k'"]),
        (f_wrong_type, ["argument 'n': schema type int, kernel annotation gives float"]),
        (f_wrong_return, ["returns: schema (str), kernel (int)"]),
        (f_missing, ["argument 1 'n' (int): the kernel has no such parameter"]),
    ],
)
def test_kernels_that_do_not_match_the_schema_are_refused(
    ns: str, register: str, kernel: Callable[..., Any], differences: list[str]
) -> None:
    with Library(ns, "FRAGMENT") as lib:

        @op(f"{ns}::f", lib=lib)
        def f(x: Tensor, n: int = 2) -> str:
            return "cea"

        with unchanged_state():
            with pytest.raises(SchemaMismatchError) as excinfo:
                if register == "register_kernel":
                    f.register_kernel("CPU", kernel)
                else:
                    f.register_fake(kernel)
            assert str(excinfo.value) == (
                f"kernel {kernel.__qualname__} does not match {ns}::f(Tensor x, int n=2) -> str:\n  "
                + "\n  ".join(differences)
            )
            assert excinfo.value.differences == differences
            error: BaseException = excinfo.value
            assert isinstance(error, TypedopsError) and isinstance(error, TypeError)
        assert f(cpu_t()) == f(meta_t()) == "cea"


def test_register_fake_is_the_meta_kernel(ns: str) -> None:
    with Library(ns, "FRAGMENT") as lib:

        @op(f"{ns}::f", lib=lib)
        def f(x: Tensor, n: int = 2) -> str:
            return "cea"

        def f_fake(x: Tensor, n: int) -> str:
            assert x.is_meta
            return f"fake n={n}"

        at = next_line()
        assert f.register_fake(f_fake) is f_fake
        assert f(meta_t()) == "fake n=2"
        assert f(meta_t(), 3) == "fake n=3"
        assert f(cpu_t()) == "cea"
        assert f"  Meta: unboxed {f_fake.__qualname__} at {at}" in f.dump().splitlines()
        stack: list[Any] = [meta_t()]
        f.call_boxed(stack)
        assert stack == ["fake n=2"]
        # a second fake kernel is refused unless it overrides
        with unchanged_state():
            with pytest.raises(RegistrationError) as excinfo:
                f.register_fake(f_fake)
            assert str(excinfo.value) == (
                f"{ns}::f already has a Meta kernel (registered at {at}); pass "
                "allow_override=True to replace it while this registration lives, or remove "
                "the first one"
            )
        def f_fake2(x: Tensor, n: int) -> str:
            return "fake2"

        assert f.register_fake(f_fake2, allow_override=True) is f_fake2
        assert f(meta_t()) == "fake2"

        def f_fake3(x: Tensor, n: int) -> str:
            return "fake3"

        f.register_kernel("Meta", f_fake3, allow_override=True)  # the same thing
        assert f(meta_t()) == "fake3"


# -- where the registrations live: lib= and f.library ----------------------------------------------


def test_lib_scopes_the_op(ns: str) -> None:
    with unchanged_state():
        with Library(ns, "FRAGMENT") as lib:
            f = op(f"{ns}::f", lib=lib)(cea)
            f.register_kernel("CPU", f_cpu)
            assert f.library is lib
            assert dispatcher.find_op(f"{ns}::f") is f.handle
            assert f(cpu_t()) == "cpu"
    assert dispatcher.find_op(f"{ns}::f") is None
    assert f.dump().splitlines()[1].endswith(" (removed: its library was closed)")
    with pytest.raises(AttributeError):
        getattr(ops, ns).f
    with pytest.raises(OperatorNotFoundError, match=removed(f"{ns}::f")):
        f(cpu_t())
    with pytest.raises(OperatorNotFoundError, match=removed(f"{ns}::f")):
        f.call_boxed([cpu_t()])
    with pytest.raises(OperatorNotFoundError, match=removed(f"{ns}::f")):
        f.redispatch(DispatchKeySet([K.Tracer, K.CPU]), cpu_t())
    with pytest.raises(OperatorNotFoundError, match=removed(f"{ns}::f")):
        f.redispatch_boxed(DispatchKeySet([K.Tracer, K.CPU]), [cpu_t()])
    with pytest.raises(OperatorNotFoundError) as excinfo:
        f.register_kernel("Meta", f_cpu)
    assert str(excinfo.value) == (
        f"operator {ns}::f was removed (the library that defined it was closed); define it "
        "again (for an @op function: apply @op again) and register on the new one"
    )
    # the name is free again, for a new op
    with Library(ns, "FRAGMENT") as lib:

        @op(f"{ns}::f", lib=lib)
        def f_again(x: Tensor, n: int) -> str:
            return "again"

        assert f_again(cpu_t(), 1) == "again"
        with pytest.raises(OperatorNotFoundError, match=removed(f"{ns}::f")):
            f(cpu_t())


def test_library_remove_undoes_the_definition(ns: str) -> None:
    with unchanged_state():

        @op(f"{ns}::f")
        def f(x: Tensor) -> str:
            return "cea"

        def f_meta(x: Tensor) -> str:
            return "meta"

        f.register_fake(f_meta)
        assert f.library.kind == "FRAGMENT" and f.library.ns == ns
        assert dispatcher.find_op(f"{ns}::f") is f.handle
        f.library.remove()
        assert dispatcher.find_op(f"{ns}::f") is None
        f.library.remove()  # a second remove does nothing
    with pytest.raises(OperatorNotFoundError, match=removed(f"{ns}::f")):
        f(cpu_t())


def test_handle_remove_undoes_the_definition(ns: str, owned: list[Library]) -> None:
    with unchanged_state():

        @op(f"{ns}::f")
        def f(x: Tensor) -> str:
            return "cea"

        owned.append(f.library)
        f.handle.remove()
        assert dispatcher.find_op(f"{ns}::f") is None
    with pytest.raises(OperatorNotFoundError, match=removed(f"{ns}::f")):
        f(cpu_t())


def test_each_op_without_lib_has_its_own_library(ns: str, owned: list[Library]) -> None:
    @op(f"{ns}::f")
    def f(x: Tensor) -> str:
        return "f"

    owned.append(f.library)

    @op(f"{ns}::g")
    def g(x: Tensor) -> str:
        return "g"

    owned.append(g.library)
    assert f.library is not g.library
    f.library.remove()
    assert dispatcher.find_op(f"{ns}::f") is None
    assert g(cpu_t()) == "g"


def test_lib_must_be_able_to_define_the_op(ns: str) -> None:
    def f(x: Tensor) -> str:
        return "f"

    with unchanged_state():
        at = next_line()
        with Library(ns, "IMPL") as impl:
            with pytest.raises(RegistrationError) as excinfo:
                op(f"{ns}::f", lib=impl)(f)
            assert str(excinfo.value) == (
                f"Library({ns!r}, 'IMPL') at {at} is an IMPL library and cannot define operators; "
                f"use Library({ns!r}, 'DEF') or 'FRAGMENT'"
            )
        with Library(ns + "_other", "FRAGMENT") as other:
            with pytest.raises(RegistrationError) as excinfo:
                op(f"{ns}::f", lib=other)(f)
            assert str(excinfo.value) == (
                f"cannot define {ns}::f in a library for namespace '{ns}_other'; use Library({ns!r}, 'FRAGMENT')"
            )
    assert dispatcher.find_op(f"{ns}::f") is None


def test_op_in_a_def_library(ns: str) -> None:
    with Library(ns, "DEF") as lib:
        lib.define("h(Tensor x) -> str")

        @op(f"{ns}::f", lib=lib)
        def f(x: Tensor) -> str:
            return "f"

        assert [h.full_name for h in dispatcher.all_ops() if h.name.startswith(f"{ns}::")] == [
            f"{ns}::h",
            f"{ns}::f",
        ]
        assert f(cpu_t()) == "f"
    assert dispatcher.find_op(f"{ns}::f") is None


# -- typed handles ------------------------------------------------------------------------------


H = "h(Tensor x, int n=2, *, float alpha=1.0) -> str"


def h_kernel(x: Tensor, n: int, *, alpha: float) -> str:
    return f"h n={n} alpha={alpha}"


def h_prototype(x: Tensor, n: int = 2, *, alpha: float = 1.0) -> str:
    raise NotImplementedError


def h_renamed(x: Tensor, m: int = 2, *, alpha: float = 1.0) -> str:
    raise NotImplementedError


def h_types(x: Tensor, n: float = 2, *, alpha: int = 1) -> str:
    raise NotImplementedError


def h_returns(x: Tensor, n: int = 2, *, alpha: float = 1.0) -> Tensor:
    raise NotImplementedError


def h_extra(x: Tensor, n: int = 2, *, alpha: float = 1.0, beta: float = 0.0) -> str:
    raise NotImplementedError


def h_short(x: Tensor) -> str:
    raise NotImplementedError


def h_no_defaults(x: Tensor, n: int, *, alpha: float) -> str:
    raise NotImplementedError


def h_other_default(x: Tensor, n: int = 3, *, alpha: float = 1.0) -> str:
    raise NotImplementedError


def h_all_positional(x: Tensor, n: int = 2, alpha: float = 1.0) -> str:
    raise NotImplementedError


def h_keyword_only_n(x: Tensor, *, n: int = 2, alpha: float = 1.0) -> str:
    raise NotImplementedError


def h_many(x: Tensor, m: int = 2, *, alpha: int = 1) -> Tensor:
    raise NotImplementedError


def test_typed_with_a_matching_prototype(ns: str) -> None:
    with Library(ns, "DEF") as lib:
        handle = lib.define(H)
        lib.impl("h", h_kernel, "CPU")
        t = handle.typed(h_prototype)
        assert t(cpu_t()) == "h n=2 alpha=1.0"
        assert t(cpu_t(), 3, alpha=0.5) == "h n=3 alpha=0.5"
        assert t(x=cpu_t(), n=4) == "h n=4 alpha=1.0"
        assert t.handle is handle
        assert t.schema is handle.schema
        assert str(t.schema) == f"{ns}::{H}"
        assert (t.name, t.overload_name) == (f"{ns}::h", "")
        assert t.dump() == handle.dump() and t.dump_table() == handle.dump_table()
        stack: list[Any] = [cpu_t(), 5]
        t.call_boxed(stack)
        assert stack == ["h n=5 alpha=1.0"]
        assert t.redispatch(DispatchKeySet([K.Tracer, K.CPU]), cpu_t(), alpha=2.0) == "h n=2 alpha=2.0"
        stack = [cpu_t(), 6, 0.25]
        t.redispatch_boxed(DispatchKeySet([K.Tracer, K.CPU]), stack)
        assert stack == ["h n=6 alpha=0.25"]
        function: Any = t
        assert (function.__name__, function.__qualname__) == ("h", f"{ns}::h")
        assert re.fullmatch(rf"<function {ns}::h at 0x[0-9a-f]+>", repr(t))
        function_t: Any = t
        assert (function_t.__module__, function_t.__wrapped__) == (__name__, h_prototype)
        assert isinstance(t, TypedOperatorHandle)
        assert not isinstance(t, Op)  # no library, default_kernel, register_*
        # each call makes a new function (its own attributes)
        again = handle.typed(h_prototype)
        assert again is not t and again(cpu_t()) == t(cpu_t())
    with pytest.raises(OperatorNotFoundError, match=removed(f"{ns}::h")):
        t(cpu_t())


def test_typed_function_is_the_method(ns: str) -> None:
    with Library(ns, "DEF") as lib:
        handle = lib.define(H)
        lib.impl("h", h_kernel, CEA)
        t = typed(handle, h_prototype)
        assert t.handle is handle
        assert t(cpu_t(), 9) == "h n=9 alpha=1.0"
        with pytest.raises(SchemaMismatchError):
            typed(handle, h_renamed)


def test_typed_with_an_overload(ns: str) -> None:
    with Library(ns, "DEF") as lib:
        handle = lib.define("h.two(Tensor x, int n=2, *, float alpha=1.0) -> str")
        lib.impl("h.two", h_kernel, CEA)
        t = handle.typed(h_prototype)
        assert (t.name, t.overload_name) == (f"{ns}::h", "two")
        function: Any = t
        assert function.__qualname__ == f"{ns}::h.two"
        assert t(cpu_t()) == "h n=2 alpha=1.0"


@pytest.mark.parametrize(
    ("prototype", "differences"),
    [
        (h_renamed, ["argument 1: the schema calls it 'n', the prototype 'm'"]),
        (
            h_types,
            [
                "argument 'n': schema type int, prototype annotation gives float",
                "argument 'alpha': schema type float, prototype annotation gives int",
            ],
        ),
        (h_returns, ["returns: schema (str), prototype (Tensor)"]),
        (h_no_defaults, ["argument 'n': the schema's default is 2, the prototype has no default",
                         "argument 'alpha': the schema's default is 1.0, the prototype has no default"]),
        (h_other_default, ["argument 'n': the schema's default is 2, the prototype's default is 3"]),
        (h_all_positional, ["argument 'alpha' is keyword-only in the schema but positional in the prototype"]),
        (h_keyword_only_n, ["argument 'n' is positional in the schema but keyword-only in the prototype"]),
        (h_extra, ["argument 3 'beta' (float): the schema has no such argument"]),
        (
            h_short,
            [
                "argument 1 'n' (int): the prototype has no such parameter",
                "argument 2 'alpha' (float): the prototype has no such parameter",
            ],
        ),
        (
            h_many,
            [
                "argument 1: the schema calls it 'n', the prototype 'm'",
                "argument 'alpha': schema type float, prototype annotation gives int",
                "returns: schema (str), prototype (Tensor)",
            ],
        ),
    ],
)
def test_typed_with_a_mismatching_prototype(
    ns: str, prototype: Callable[..., Any], differences: list[str]
) -> None:
    with Library(ns, "DEF") as lib:
        handle = lib.define(H)
        with unchanged_state():
            with pytest.raises(SchemaMismatchError) as excinfo:
                handle.typed(prototype)
        assert str(excinfo.value) == (
            f"prototype {prototype.__qualname__} does not match {ns}::{H}:\n  " + "\n  ".join(differences)
        )
        assert excinfo.value.differences == differences


def test_typed_of_an_op_made_by_op_is_a_separate_function(ns: str) -> None:
    with Library(ns, "FRAGMENT") as lib:

        @op(f"{ns}::h", lib=lib)
        def h(x: Tensor, n: int = 2, *, alpha: float = 1.0) -> str:
            return f"h n={n} alpha={alpha}"

        t = h.handle.typed(h_prototype)
        assert t is not h
        assert t.handle is h.handle and t.schema is h.schema
        assert t(cpu_t(), 3) == h(cpu_t(), 3) == "h n=3 alpha=1.0"
        # same code, own attributes: the @op function's extras are not on the copy
        t_function: Any = t
        h_function: Any = h
        assert t_function.__code__ is h_function.__code__
        assert t_function.__dict__ is not h_function.__dict__
        assert not hasattr(t, "library") and not hasattr(t, "register_kernel")
        entry: object = h.handle.call
        assert entry is h_function  # typed() did not replace the op's entry

        @h.register_kernel("CPU")
        def h_cpu(x: Tensor, n: int, *, alpha: float) -> str:
            return "cpu"

        # both reach the same tables
        assert t(cpu_t()) == h(cpu_t()) == "cpu"


def test_typed_compares_default_values_not_their_spelling(ns: str) -> None:
    def prototype(x: Tensor, a: float = 0.5, e: float = 1e-05, r: str = "mean", s: Sequence[int] = (1, 1),
                  alpha: float = 1.0) -> Tensor:  # fmt: skip
        raise NotImplementedError

    def other(x: Tensor, a: float = 0.25, e: float = 1e-05, r: str = "mean", s: Sequence[int] = (1, 2),
              alpha: float = 1.0) -> Tensor:  # fmt: skip
        raise NotImplementedError

    with Library(ns, "DEF") as lib:
        handle = lib.define("k(Tensor x, float a=.5, float e=1e-5, str r='mean', int[2] s=1, float alpha=1) -> Tensor")
        assert handle.typed(prototype).schema is handle.schema
        with pytest.raises(SchemaMismatchError) as excinfo:
            handle.typed(other)
        assert excinfo.value.differences == [
            "argument 'a': the schema's default is .5, the prototype's default is 0.25",
            "argument 's': the schema's default is 1, the prototype's default is [1, 2]",
        ]


def test_typed_refuses_a_prototype_default_the_schema_lacks(ns: str) -> None:
    # mypy would accept t(x), which fails at run time: 'n' has no default in the schema.
    def prototype(x: Tensor, n: int = 2) -> str:
        raise NotImplementedError

    with Library(ns, "DEF") as lib:
        handle = lib.define("k(Tensor x, int n) -> str")
        with pytest.raises(SchemaMismatchError) as excinfo:
            handle.typed(prototype)
        assert excinfo.value.differences == ["argument 'n': the schema has no default, the prototype's default is 2"]


# -- unboxed and boxed calls agree --------------------------------------------------------------------


def test_unboxed_and_boxed_calls_agree(ns: str) -> None:
    x, y = cpu_t(), cpu_t()
    with Library(ns, "FRAGMENT") as lib:

        @op(f"{ns}::lists", lib=lib)
        def lists(
            xs: list[Tensor], sizes: Sequence[int], scale: Optional[float] = None, *, flag: bool = False
        ) -> tuple[Tensor, int, str]:
            return xs[-1], sum(sizes), f"scale={scale} flag={flag} n={len(xs)}"

        @op(f"{ns}::maybe", lib=lib)
        def maybe(x: Optional[Tensor], n: Optional[int] = None) -> Optional[Tensor]:
            return x if n is None else None

        log: list[str] = []

        @op(f"{ns}::nothing", lib=lib)
        def nothing(x: Tensor, *, label: str = "none") -> None:
            log.append(label)

        @op(f"{ns}::two", lib=lib)
        def two(x: Tensor, y: Tensor) -> tuple[Tensor, Tensor]:
            return y, x

        assert str(lists.schema) == (
            f"{ns}::lists(Tensor[] xs, int[] sizes, float? scale=None, *, bool flag=False) -> (Tensor, int, str)"
        )
        assert str(maybe.schema) == f"{ns}::maybe(Tensor? x, int? n=None) -> Tensor?"
        assert str(nothing.schema) == f"{ns}::nothing(Tensor x, *, str label=\"none\") -> ()"
        assert str(two.schema) == f"{ns}::two(Tensor x, Tensor y) -> (Tensor, Tensor)"

        def boxed(f: Any, *stack: Any) -> list[Any]:
            values = list(stack)
            f.call_boxed(values)
            return values

        # lists, optional and keyword-only arguments, several returns
        assert lists([x, y], [1, 2, 3]) == (y, 6, "scale=None flag=False n=2")
        assert boxed(lists, [x, y], [1, 2, 3]) == [y, 6, "scale=None flag=False n=2"]
        assert lists([x], (4,), 0.5, flag=True) == (x, 4, "scale=0.5 flag=True n=1")
        assert boxed(lists, [x], (4,), 0.5, True) == [x, 4, "scale=0.5 flag=True n=1"]
        assert lists([x], [], 2) == (x, 0, "scale=2 flag=False n=1")
        assert boxed(lists, [x], [], 2) == [x, 0, "scale=2 flag=False n=1"]
        # optional tensor and result
        assert maybe(x) is x and boxed(maybe, x)[0] is x
        assert maybe(None) is None and boxed(maybe, None) == [None]
        assert maybe(x, 1) is None and boxed(maybe, x, 1) == [None]
        # no returns: the stack is emptied
        assert nothing(x) is None and boxed(nothing, x) == []
        assert nothing(x, label="l") is None and boxed(nothing, x, "l") == []
        assert log == ["none", "none", "l", "l"]
        # a tuple of tensors
        assert two(x, y) == (y, x)
        result = boxed(two, x, y)
        assert len(result) == 2 and result[0] is y and result[1] is x


def test_an_op_out_overload_takes_out_none_as_no_out_through_its_packet(ns: str) -> None:
    """Note [out=None] in typedops/dispatch/_ops.py, for ops ``@op`` defines."""
    with Library(ns, "FRAGMENT") as lib:

        @op(f"{ns}::twice", lib=lib)
        def twice(x: Tensor) -> Tensor:
            return typedops.core.add(x, x)

        @op(f"{ns}::twice.out", mutates_args=["out"], lib=lib)
        def twice_out(x: Tensor, *, out: Tensor) -> None:
            typedops.core.add(x, x, out=out)

        x, out = tensor([1.0, 2.0]), tensor([0.0, 0.0])
        packet = getattr(ops, ns).twice
        assert packet(x, out=None).tolist() == [2.0, 4.0]
        assert packet(x, out=out) is None and out.tolist() == [2.0, 4.0]
