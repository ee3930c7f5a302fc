"""``typedops.ops``: operators by name, ``ops.<namespace>.<name>.<overload>``."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..vocabulary import ArgumentError, OperatorAttributeError, OperatorNotFoundError
from ..boxing import mismatch, python_name
from ..schema import FunctionSchema
from ._dispatcher import Dispatcher, dispatcher
from ._handle import OperatorHandle

__all__ = ["ops", "OpNamespace", "OpOverloadPacket", "binding_problem", "register_bundled_library"]


def binding_problem(schema: FunctionSchema, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str | None:
    """Why ``schema`` cannot take these arguments (None when it can)."""
    positional = schema.positional
    if len(args) > len(positional):
        return f"takes {len(positional)} positional argument(s), got {len(args)}"
    by_name = {python_name(a.name): a for a in schema.arguments}
    unknown = [k for k in kwargs if k not in by_name]
    if unknown:
        return f"has no argument {unknown[0]!r}"
    for arg, value in zip(positional, args):
        problem = mismatch(arg.type, value)
        if problem is not None:
            return f"argument '{arg.name}': {problem}"
    given = {python_name(a.name) for a in positional[: len(args)]}
    for name, value in kwargs.items():
        if name in given:
            return f"got argument {name!r} twice"
        problem = mismatch(by_name[name].type, value)
        if problem is not None:
            return f"argument '{by_name[name].name}': {problem}"
    for arg in schema.arguments:
        pname = python_name(arg.name)
        if pname not in given and pname not in kwargs and not arg.has_default:
            return f"missing argument '{arg.name}'"
    return None


class OpOverloadPacket:
    """All overloads of ``ns::name``. Calling it picks the first overload, in definition
    order, whose schema binds the arguments."""

    def __init__(self, qualified_name: str, dispatcher_: Dispatcher) -> None:
        self._name = qualified_name
        self._dispatcher = dispatcher_

    def overloads(self) -> list[str]:
        """Overload names in definition order; ``"default"`` stands for the unnamed one."""
        return [e.schema.overload_name or "default" for e in self._dispatcher.overloads(self._name)]

    def __getattr__(self, overload: str) -> OperatorHandle:
        if overload.startswith("__"):
            raise AttributeError(overload)  # a Python protocol probe, not an op lookup
        wanted = "" if overload == "default" else overload
        for entry in self._dispatcher.overloads(self._name):
            if entry.schema.overload_name == wanted:
                return entry.handle
        raise OperatorAttributeError(
            f"{self._name} has no overload {overload!r}; it has: {', '.join(self.overloads()) or 'none'}"
        )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        entries = self._dispatcher.overloads(self._name)
        reasons: list[str] = []
        for entry in entries:
            problem = binding_problem(entry.schema, args, kwargs)
            if problem is None:
                return entry.call(*args, **kwargs)
            reasons.append(f"  {entry.schema}: {problem}")
        if not entries:
            raise OperatorNotFoundError(f"operator {self._name} no longer has any overload")
        raise ArgumentError(
            f"no overload of {self._name} takes these arguments. Candidates:\n" + "\n".join(reasons)
        )

    def __repr__(self) -> str:
        return f"<OpOverloadPacket {self._name} ({', '.join(self.overloads())})>"


class OpNamespace:
    """``ops.<namespace>``: attribute access gives that namespace's operators."""

    def __init__(self, namespace: str, dispatcher_: Dispatcher) -> None:
        self._namespace = namespace
        self._dispatcher = dispatcher_

    def __getattr__(self, name: str) -> OpOverloadPacket:
        if name.startswith("__"):
            raise AttributeError(name)  # a Python protocol probe, not an op lookup
        qualified = f"{self._namespace}::{name}"
        if not self._dispatcher.overloads(qualified):
            known = sorted({h.schema.name for h in self._dispatcher.all_ops() if h.schema.namespace == self._namespace})
            close = difflib.get_close_matches(name, known, n=3)
            hint = f"; did you mean {' or '.join(close)}?" if close else ""
            raise OperatorAttributeError(f"namespace {self._namespace!r} has no operator {name!r}{hint}")
        return OpOverloadPacket(qualified, self._dispatcher)

    def __dir__(self) -> list[str]:
        return sorted({h.schema.name for h in self._dispatcher.all_ops() if h.schema.namespace == self._namespace})

    def __repr__(self) -> str:
        return f"<ops namespace {self._namespace!r}>"


# Note [Loading the core library]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# ``import typedops`` does not import the bundled core library: registering its ops and
# importing its kernels would put ``import typedops`` over its budget (1.3x ``import
# numpy``; see benchmarks/bench_codegen_import.py). ``import typedops.core`` loads it, and
# so does the first use of ``typedops.core`` (a module ``__getattr__`` in typedops/__init__)
# or of ``typedops.ops.core`` (here); loading it installs the Tensor methods (``x.add(y)``).
# The dispatcher does not know the library: the package registers a loader for its
# namespace (``register_bundled_library`` in typedops/__init__.py), so the import graph
# keeps pointing down.
# Tensor has no ``__getattr__`` hook for a missing method on purpose: a class with one
# pays for it on *every* attribute load, and each dispatch reads ``key_bits`` from its
# tensors (measured: two reads cost 2x as much with the hook).
_BUNDLED: dict[str, Callable[[], object]] = {}


def register_bundled_library(namespace: str, load: Callable[[], object]) -> None:
    """Have the first ``ops.<namespace>`` call ``load()`` (which imports the library that
    registers the namespace's ops) -- see Note [Loading the core library]."""
    _BUNDLED[namespace] = load


def load_lazy_library(namespace: str) -> bool:
    """Load the bundled library for ``namespace`` if one is registered and not loaded
    yet; True when this call loaded it."""
    load = _BUNDLED.get(namespace)
    if load is None:
        return False
    load()
    del _BUNDLED[namespace]
    return True


class _Ops:
    """``typedops.ops``: ``ops.<namespace>`` for every namespace with operators."""

    def __init__(self, dispatcher_: Dispatcher) -> None:
        self._dispatcher = dispatcher_

    def __getattr__(self, namespace: str) -> OpNamespace:
        if namespace.startswith("__"):
            raise AttributeError(namespace)  # a Python protocol probe, not an op lookup
        load_lazy_library(namespace)  # See Note [Loading the core library]
        return OpNamespace(namespace, self._dispatcher)

    def __dir__(self) -> list[str]:
        return self._dispatcher.namespaces()


if TYPE_CHECKING:
    # ops.core.<name>.<overload> with the schemas' signatures: generated into
    # _ops_typing.pyi. See Note [Typing what core installs] in typedops/codegen/_stubs.py.
    from ._ops_typing import Ops

    ops: Ops
else:
    ops = _Ops(dispatcher)
