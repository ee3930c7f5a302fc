"""``register_autograd``: backward rules for ops defined outside derivatives.yaml.

Note [Custom backward rules]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~
``op.register_autograd(backward, setup_context=None)`` (on an ``@op`` op, a typed handle or
an ``OperatorHandle``) registers an autograd kernel for the op at the ``Autograd`` key.
The op's *differentiable inputs* are its ``Tensor`` and ``Tensor?`` arguments, in schema
order. When some of them require grad (and grad mode is on) the kernel runs the op below
autograd with the Autograd keys excluded (its kernels may call ops freely), calls
``setup_context(ctx, inputs, output)``, and records a node. Its backward calls
``backward(ctx, grad)`` -- ``grad`` shaped like the op's result: one tensor, or a tuple for
an op returning several -- which returns one gradient per differentiable input (None
allowed; a single one may be returned bare).

Registration checks what can be checked before any call: ``backward`` takes exactly
``(ctx, grad)``, ``setup_context`` exactly ``(ctx, inputs, output)``, and a ``tuple[...]``
return annotation has one entry per differentiable input. The static types come from the
op's ``R`` (see ``TypedOperatorHandle.register_autograd``): mypy refuses a rule whose
gradient parameter does not fit the op's result, or that takes the wrong number of them.

A saved output is kept as an alias without its history once the node exists, and ``ctx``
points at its node only while the rule runs: neither makes a cycle through the node, so a
dropped graph is freed by reference counting (Note [Saved outputs without a cycle] in
_graph.py).
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Sequence
from typing import Any, cast

from ..dispatch import RULE_REGISTRARS, DispatchKey, DispatchKeySet, Library, OperatorHandle, bound_to_keys
from ..schema import BaseType, FunctionSchema, OptionalType
from ..tensor import Tensor, alias_of
from ..vocabulary import ArgumentError, RegistrationError
from ._grad_mode import no_grad
from ._graph import Node, SavedTensor, edge_of, set_history, unpack, unpack_output
from ._messages import (
    CTX_NOT_OUTPUT,
    CTX_SAVE_TYPE,
    RULE_NO_TENSOR_INPUT,
    RULE_RESULT_COUNT,
    RULE_SETUP,
    RULE_SIGNATURE,
    AutogradError,
)
from ._record import below_autograd, check_written

__all__ = ["BackwardContext", "register_autograd", "install_registrar"]


def _differentiable(schema: FunctionSchema) -> list[int]:
    """Positions (in ``schema.arguments``) of the Tensor and Tensor? arguments."""
    found: list[int] = []
    for i, arg in enumerate(schema.arguments):
        t = arg.type.elem if isinstance(arg.type, OptionalType) else arg.type
        if isinstance(t, BaseType) and t.name == "Tensor":
            found.append(i)
    return found


class BackwardContext:
    """``ctx`` of a custom rule: ``save_for_backward``, ``saved_tensors``,
    ``needs_input_grad``, ``mark_non_differentiable`` (PyTorch's names)."""

    __slots__ = ("_needs", "_saved", "_node", "_non_differentiable", "__dict__")

    def __init__(self, needs: tuple[bool, ...]) -> None:
        self._needs = needs
        self._saved: tuple[SavedTensor | None, ...] = ()
        self._node: Node | None = None
        self._non_differentiable: list[Tensor] = []

    @property
    def needs_input_grad(self) -> tuple[bool, ...]:
        return self._needs

    def save_for_backward(self, *tensors: Tensor | None) -> None:
        for index, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):  # pyright: ignore[reportUnnecessaryIsInstance] -- untyped callers
                raise ArgumentError(CTX_SAVE_TYPE.format(type=type(t).__name__, index=index))
        self._saved = tuple(None if t is None else SavedTensor(t, -1) for t in tensors)

    @property
    def saved_tensors(self) -> tuple[Tensor, ...]:
        node = self._node
        assert node is not None, "saved_tensors is read in backward"
        return tuple(
            unpack(s, node) if s is None or s.output_nr < 0 else unpack_output(s.tensor, s.version, node, s.output_nr)
            for s in self._saved
        )

    def _forget_outputs(self, node: Node, outputs: Sequence[Any]) -> None:
        """Keep each saved output of ``node`` as an alias without its history (Note [Saved
        outputs without a cycle] in _graph.py; ``saved_tensors`` restores the history when
        grad mode is on): saving the output itself made a cycle, node -> output -> node."""
        saved = list(self._saved)
        for index, s in enumerate(saved):
            nr = next((nr for nr, o in enumerate(outputs) if s is not None and s.tensor is o), -1)
            if s is not None and nr >= 0 and s.tensor.grad_fn is node:
                kept = saved[index] = SavedTensor(alias_of(s.tensor), nr)
                kept.version = s.version  # the same storage: the version when it was saved
        self._saved = tuple(saved)

    def mark_non_differentiable(self, *outputs: Tensor) -> None:
        self._non_differentiable.extend(outputs)


class CustomBackward(Node):
    """The node of an op with a registered rule."""

    __slots__ = ("op", "rule", "ctx", "single", "inputs", "_name_")

    def __init__(self, op: str, rule: Callable[..., Any], ctx: BackwardContext, single: bool, inputs: str) -> None:
        super().__init__()
        self.op, self.rule, self.ctx, self.single, self.inputs = op, rule, ctx, single, inputs
        self._name_ = f"{op.rpartition('::')[2].split('.')[0]}Backward"

    def name(self) -> str:
        return self._name_

    def apply(self, grads: list[Tensor | None]) -> Sequence[Tensor | None]:
        ctx = self.ctx
        ctx._node = self  # only while the rule runs: a node -> ctx -> node cycle otherwise
        try:
            result = self.rule(ctx, grads[0] if self.single else tuple(grads))
        finally:
            ctx._node = None
        results = cast("tuple[Tensor | None, ...]", result) if isinstance(result, tuple) else (result,)
        if len(results) != len(self.next_edges):
            raise AutogradError(
                RULE_RESULT_COUNT.format(
                    op=self.op, got=len(results), expected=len(self.next_edges), inputs=self.inputs
                )
            )
        return results

    def release(self) -> None:
        self.ctx._saved = tuple(None for _ in self.ctx._saved)
        self.released = True


def _check_rule(op: str, schema: FunctionSchema, backward: Any, setup_context: Any, inputs: list[int]) -> None:
    names = ", ".join(schema.arguments[i].name for i in inputs)
    grads = "grad" if len(schema.returns) == 1 else f"grads (a tuple of {len(schema.returns)})"

    def refuse(problem: str) -> RegistrationError:
        rule = getattr(backward, "__qualname__", repr(backward))
        return RegistrationError(RULE_SIGNATURE.format(rule=rule, op=op, problem=problem, grads=grads, inputs=names))

    if not callable(backward):
        raise refuse(f"it is a {type(backward).__name__}, not a function")
    if not inputs:
        raise RegistrationError(RULE_NO_TENSOR_INPUT.format(op=op))
    if _positional_count(backward) != 2:
        raise refuse(f"it takes {_positional_count(backward)} positional parameters, not 2 (ctx, grad)")
    declared = _tuple_length(backward)
    if declared is not None and declared != len(inputs):
        raise refuse(f"its return annotation has {declared} gradients for {len(inputs)} differentiable inputs")
    if setup_context is not None:
        if not callable(setup_context) or _positional_count(setup_context) != 3:
            fn = getattr(setup_context, "__qualname__", repr(setup_context))
            raise RegistrationError(
                RULE_SETUP.format(fn=fn, op=op, problem="it must take exactly 3 positional parameters")
            )


def _positional_count(fn: Any) -> int:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return -1
    if any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in params):
        return -1
    return sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty for p in params)


def _tuple_length(fn: Any) -> int | None:
    try:
        hints = typing.get_type_hints(fn)
    except Exception:  # noqa: BLE001 -- unresolvable annotations: nothing to check statically here
        return None
    ret = hints.get("return")
    if typing.get_origin(ret) is tuple:
        args = typing.get_args(ret)
        if args and args[-1] is not Ellipsis:
            return len(args)
    return None


def register_autograd(
    handle: OperatorHandle, backward: Callable[..., Any], *, setup_context: Callable[..., Any] | None = None
) -> Any:
    """Register ``backward`` (and ``setup_context``) as ``handle``'s rule: Note [Custom backward rules]."""
    schema = handle.schema
    op = schema.full_name
    inputs = _differentiable(schema)
    _check_rule(op, schema, backward, setup_context, inputs)
    names = ", ".join(schema.arguments[i].name for i in inputs)
    written = [i for i, a in enumerate(schema.arguments) if a.is_write]
    arg_names = [a.name for a in schema.arguments]
    single = len(schema.returns) == 1

    def bound(keys: DispatchKeySet) -> Callable[..., Any]:
        # the key set below autograd, once per key set: Note [Kernels bound to their keys]
        below = DispatchKeySet.from_bits(below_autograd(int(keys)))

        def kernel(*args: Any, **kwargs: Any) -> Any:
            values = [*args, *(kwargs[n] for n in arg_names[len(args) :])]
            edges = tuple(edge_of(values[i]) for i in inputs)
            if all(e is None for e in edges):
                return handle.redispatch(below, *args, **kwargs)
            if written:
                check_written(values, written, op)
            with no_grad():
                output = handle.redispatch(below, *args, **kwargs)
            ctx = BackwardContext(tuple(e is not None for e in edges))
            if setup_context is not None:
                setup_context(ctx, tuple(values), output)
            node = CustomBackward(op, backward, ctx, single, names)
            node.next_edges = edges
            outputs = [output] if single else list(output)
            for nr, out in enumerate(outputs):
                if isinstance(out, Tensor):
                    differentiable = out.dtype.is_floating_point or out.dtype.is_complex
                    if differentiable and not any(out is t for t in ctx._non_differentiable):
                        set_history(out, node, nr)
                    else:
                        node.out_meta += ((out.shape, out.dtype, out.device),)
            for index, t in enumerate(ctx._non_differentiable):
                if not any(t is o for o in outputs):
                    raise ArgumentError(CTX_NOT_OUTPUT.format(index=index))
            if ctx._saved:
                ctx._forget_outputs(node, outputs)
            return output

        return kernel

    library = Library(schema.namespace, "IMPL")
    library.impl(handle, bound_to_keys(bound), DispatchKey.Autograd, with_keys=True, check=False)
    return library


def install_registrar() -> None:
    RULE_REGISTRARS["autograd"] = register_autograd
