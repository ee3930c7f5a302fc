"""``typedops.ops``: operators by name, ``ops.<namespace>.<name>.<overload>``."""

from __future__ import annotations

import difflib
import weakref
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from ..vocabulary import ArgumentError, OperatorAttributeError, OperatorNotFoundError
from ..boxing import mismatch, plain_number, python_name
from ..schema import FunctionSchema
from ._dispatcher import Dispatcher, dispatcher
from ._handle import OperatorHandle
from ._messages import (
    CANDIDATE,
    DID_YOU_MEAN,
    NO_OVERLOAD_BINDS,
    NO_OVERLOAD_LEFT,
    NO_SUCH_NAMESPACE_OPERATOR,
    NO_SUCH_OVERLOAD,
)

__all__ = ["ops", "OpNamespace", "OpOverloadPacket", "binding_problem", "call_overload", "register_bundled_library"]


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
        problem = mismatch(arg.type, plain_number(arg.type, value))  # Note [Numbers that are not Python's]
        if problem is not None:
            return f"argument '{arg.name}': {problem}"
    given = {python_name(a.name) for a in positional[: len(args)]}
    for name, value in kwargs.items():
        if name in given:
            return f"got argument {name!r} twice"
        problem = mismatch(by_name[name].type, plain_number(by_name[name].type, value))
        if problem is not None:
            return f"argument '{by_name[name].name}': {problem}"
    for arg in schema.arguments:
        pname = python_name(arg.name)
        if pname not in given and pname not in kwargs and not arg.has_default:
            return f"missing argument '{arg.name}'"
    return None


# Note [Cached op attributes]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~
# ``ops.core.add.Tensor`` is three attribute loads on every call, so each level keeps
# what it resolved as a real attribute (in the instance ``__dict__``, where CPython finds
# it before ``__getattr__`` runs): ``ops`` its namespaces, a namespace its packets, a
# packet its overloads' handles. The dispatcher calls ``_Ops.forget`` with an op's
# qualified name whenever an overload of it is defined or removed; ``forget`` drops that
# packet's cached attributes, so the next load looks again (and raises for a removed
# one). While a namespace or a packet is in use it stays one object: ``ops`` and a
# namespace hold their namespaces and packets weakly, and strongly only through the
# attribute caches, which ``forget`` empties -- so a program defining and removing ops
# with ever new names, or in ever new namespaces, keeps none of them (issue 11).
#
# The three loads still cost ~40 ns more than they would on classes without
# ``__getattr__`` (measured on CPython 3.11.7: ~55 ns against ~16 ns for the chain):
# 3.11 specializes an attribute load only on a type whose lookup is the generic one,
# and on a module only when its dict has no ``__getattr__`` (checked: exact
# ``types.ModuleType`` namespaces with a PEP 562 ``__getattr__`` load no faster than
# these classes). Either hook is what gives a missing name our error (and makes
# namespaces and lazily loaded libraries on first use), and no hook-free object can
# raise anything but a bare ``AttributeError`` on a miss, so the hooks stay.
# Note [out=None]
# ~~~~~~~~~~~~~~~
# PyTorch's Python functions take ``out=None`` as no ``out`` at all: ``torch.add(a, b,
# out=None)`` is ``torch.add(a, b)``. So does every overloaded name here: the generated
# choosers (typedops/codegen/_api.py, _merged.py) and ``choose`` below, which serves
# ``ops.<ns>.<name>(...)`` too (PyTorch's ``torch.ops`` packets refuse ``out=None``;
# here one rule serves both). An argument counts as an out argument when some overload
# writes into it by that name (``Tensor(a!) out``); a None given for it is dropped
# before the overload is chosen. An out overload called by its own handle
# (``ops.core.add.out``) still requires its tensor, as PyTorch's does.
def _without_absent_outs(
    candidates: Iterable[tuple[FunctionSchema, Callable[..., Any]]], kwargs: dict[str, Any]
) -> dict[str, Any]:
    """``kwargs`` without the out arguments given as None (Note [out=None])."""
    absent = [k for k, v in kwargs.items() if v is None]
    if not absent:
        return kwargs
    outs = {python_name(a.name) for schema, _ in candidates for a in schema.out_arguments}
    if not outs.intersection(absent):
        return kwargs
    return {k: v for k, v in kwargs.items() if v is not None or k not in outs}


def call_overload(
    name: str,
    candidates: Iterable[tuple[FunctionSchema, Callable[..., Any]]],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> Any:
    """Call the first candidate whose schema binds ``args`` and ``kwargs`` -- the one
    overload-resolution rule, used by ``ops.<ns>.<name>(...)`` and by the generated
    functional API when its quick tests cannot tell the overloads apart."""
    candidates = tuple(candidates)
    if kwargs:
        kwargs = _without_absent_outs(candidates, kwargs)
    reasons: list[tuple[FunctionSchema, str]] = []
    for schema, fn in candidates:
        problem = binding_problem(schema, args, kwargs)
        if problem is None:
            return fn(*args, **kwargs)
        reasons.append((schema, problem))  # formatted only if no candidate binds
    lines = "\n".join(CANDIDATE.format(schema=schema, problem=problem) for schema, problem in reasons)
    raise ArgumentError(NO_OVERLOAD_BINDS.format(name=name, reasons=lines))


class OpOverloadPacket:
    """All overloads of ``ns::name``. Calling it picks the first overload, in definition
    order, whose schema binds the arguments."""

    __slots__ = ("_name", "_dispatcher", "__dict__", "__weakref__")

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
                setattr(self, overload, entry.handle)  # See Note [Cached op attributes]
                return entry.handle
        overloads = ", ".join(self.overloads()) or "none"
        raise OperatorAttributeError(NO_SUCH_OVERLOAD.format(name=self._name, overload=overload, overloads=overloads))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        entries = self._dispatcher.overloads(self._name)
        if not entries:
            raise OperatorNotFoundError(NO_OVERLOAD_LEFT.format(name=self._name))
        return call_overload(self._name, [(e.schema, e.call) for e in entries], args, kwargs)

    def __repr__(self) -> str:
        return f"<OpOverloadPacket {self._name} ({', '.join(self.overloads())})>"


class OpNamespace:
    """``ops.<namespace>``: attribute access gives that namespace's operators."""

    __slots__ = ("_namespace", "_dispatcher", "_packets", "__dict__", "__weakref__")

    def __init__(self, namespace: str, dispatcher_: Dispatcher) -> None:
        self._namespace = namespace
        self._dispatcher = dispatcher_
        # weakly: the attribute cache holds them (See Note [Cached op attributes])
        self._packets: weakref.WeakValueDictionary[str, OpOverloadPacket] = weakref.WeakValueDictionary()

    def forget(self, name: str) -> None:
        """Drop what is cached for op ``name`` (See Note [Cached op attributes])."""
        self.__dict__.pop(name, None)
        packet = self._packets.get(name)
        if packet is not None:
            packet.__dict__.clear()

    def __getattr__(self, name: str) -> OpOverloadPacket:
        if name.startswith("__"):
            raise AttributeError(name)  # a Python protocol probe, not an op lookup
        qualified = f"{self._namespace}::{name}"
        if not self._dispatcher.overloads(qualified):
            known = sorted({h.schema.name for h in self._dispatcher.all_ops() if h.schema.namespace == self._namespace})
            close = difflib.get_close_matches(name, known, n=3)
            hint = DID_YOU_MEAN.format(names=" or ".join(close)) if close else ""
            raise OperatorAttributeError(NO_SUCH_NAMESPACE_OPERATOR.format(namespace=self._namespace, name=name, hint=hint))
        packet = self._packets.get(name)
        if packet is None:
            packet = OpOverloadPacket(qualified, self._dispatcher)
            self._packets[name] = packet
        setattr(self, name, packet)  # See Note [Cached op attributes]
        return packet

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
# tensors (measured: two reads cost 2x as much with the hook). Instead the package puts a
# stand-in under each name the library installs, which loads it (Note [Methods that load
# the core library] in typedops/__init__.py).
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
        # weakly: the attribute cache holds them (See Note [Cached op attributes])
        self._namespaces: weakref.WeakValueDictionary[str, OpNamespace] = weakref.WeakValueDictionary()
        dispatcher_.add_overloads_listener(self.forget)

    def forget(self, qualified_name: str) -> None:
        """Drop what is cached for ``ns::name`` (See Note [Cached op attributes])."""
        namespace, _, name = qualified_name.rpartition("::")
        cached = self._namespaces.get(namespace)
        if cached is not None:
            cached.forget(name)
            if not cached.__dict__:  # no packet cached in it: nor is it, in ops
                self.__dict__.pop(namespace, None)

    def __getattr__(self, namespace: str) -> OpNamespace:
        if namespace.startswith("__"):
            raise AttributeError(namespace)  # a Python protocol probe, not an op lookup
        load_lazy_library(namespace)  # See Note [Loading the core library]
        cached = self._namespaces.get(namespace)
        if cached is None:
            cached = OpNamespace(namespace, self._dispatcher)
            self._namespaces[namespace] = cached
        setattr(self, namespace, cached)  # See Note [Cached op attributes]
        return cached

    def __dir__(self) -> list[str]:
        return self._dispatcher.namespaces()


if TYPE_CHECKING:
    # ops.core.<name>.<overload> with the schemas' signatures: generated into
    # _ops_typing.pyi. See Note [Typing what core installs] in typedops/codegen/_stubs.py.
    from ._ops_typing import Ops

    ops: Ops
else:
    ops = _Ops(dispatcher)
