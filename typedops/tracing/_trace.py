"""``typedops.trace``: run a function with the Tracer key on and record its op calls.

Note [Tracing at the outermost call]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
One boxed fallback on ``DispatchKey.Tracer`` serves every op (Note [Fallbacks registered
while in use] in dispatch/_scoped.py). While a trace runs, its thread and task include the
Tracer key and a context variable holds the recorder. The fallback turns each argument on
the stack into a ``Value`` -- refusing anything that is neither a tensor nor a constant
before the op runs -- then clears the recorder for the duration of the call, so the calls
a kernel makes itself (a composite op's parts, a factory's backend call) are not recorded:
the program holds what the traced function called. With ``decompose=True`` an op that
runs its ``CompositeImplicitAutograd`` kernel is not recorded; the recorder stays on, and
the calls that kernel makes are recorded in its place.

A tensor is known by identity: the example inputs, then each recorded result. A tensor
the recorder has not seen (made from data inside the function, not by an op) becomes a
``TensorConstant``. The recorder keeps every tensor it has seen alive, so an identity is
never reused during the trace.
"""

from __future__ import annotations

import contextvars
import inspect
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Final, cast

from ..vocabulary import DispatchKey, DispatchKeySet
from ..schema import Argument
from ..tensor import Tensor, array_of
from ..dispatch import OperatorHandle, ScopedFallback, include_keys
from . import _messages as msg
from ._program import Program
from ._values import (
    CONSTANT_TYPES,
    Call,
    Constant,
    ConstantInput,
    Input,
    InputRef,
    ListOf,
    OutputKind,
    ResultRef,
    TensorConstant,
    TensorInput,
    Value,
    storage_dtype,
)

__all__ = ["trace"]

_CIA: Final = DispatchKey.CompositeImplicitAutograd
_CEA: Final = DispatchKey.CompositeExplicitAutograd


class _Recorder:
    __slots__ = ("decompose", "known", "alive", "calls")

    def __init__(self, decompose: bool) -> None:
        self.decompose = decompose
        self.known: dict[int, Value] = {}  # id(tensor) -> its value (Note [Tracing at the outermost call])
        self.alive: list[Any] = []
        self.calls: list[Call] = []

    def remember(self, t: Tensor, value: Value) -> None:
        self.known[id(t)] = value
        self.alive.append(t)

    def value_of(self, value: Any, describe: Callable[[Any], str]) -> Value:
        """``value`` as a program value; ``describe(value)`` words the refusal."""
        if isinstance(value, Tensor):
            known = self.known.get(id(value))
            return known if known is not None else tensor_constant(value)
        if value is None:
            return Constant(None)
        for kind in CONSTANT_TYPES:
            if isinstance(value, kind):
                # numpy's float64 is a float: record the builtin value.
                return Constant(value if type(value) is kind else _exactly(kind, value))
        if isinstance(value, (list, tuple)):
            items = cast("Sequence[object]", value)
            return ListOf(tuple(self.value_of(v, describe) for v in items))
        raise msg.TraceError(describe(value))

    def record(self, op: OperatorHandle, args: list[Value], results: Sequence[Any]) -> None:
        index = len(self.calls)
        self.calls.append(Call(op.name, op.overload_name, str(op.schema), tuple(args), len(results)))
        for position, result in enumerate(results):
            if isinstance(result, Tensor):
                self.remember(result, ResultRef(index, position))


def _exactly(kind: type, value: Any) -> Any:
    """``value``, an instance of a subclass of the builtin ``kind``, as a ``kind``."""
    return kind(value)


def tensor_constant(t: Tensor) -> TensorConstant:
    """``t`` as a constant: its elements copied once into bytes (Note [Tensor constants are bytes])."""
    data = None if t.is_meta else array_of(t).astype(storage_dtype(t.dtype), copy=False).tobytes()
    return TensorConstant(t.dtype, tuple(t.shape), t.device, data, t.is_wrapped_number)


_RECORDER: Final = contextvars.ContextVar["_Recorder | None"]("typedops_tracer", default=None)


def _decomposes(op: OperatorHandle, keys: DispatchKeySet) -> bool:
    """Whether the call runs ``op``'s CompositeImplicitAutograd kernel (Note [Table
    precedence]: a backend kernel or a CompositeExplicitAutograd one comes first)."""
    if not op.has_kernel_for(_CIA) or op.has_kernel_for(_CEA):
        return False
    backend = keys.highest_backend()
    return backend is None or not op.has_kernel_for(backend)


def _not_a_constant(op: OperatorHandle, argument: Argument) -> Callable[[Any], str]:
    def describe(value: Any) -> str:
        return msg.NOT_A_CONSTANT.format(
            op=op.full_name, arg=argument.name, kind=type(value).__name__, constants=msg.CONSTANTS
        )

    return describe


def _tracer_fallback(op: OperatorHandle, keys: DispatchKeySet, stack: list[Any]) -> None:
    recorder = _RECORDER.get()
    if recorder is None or (recorder.decompose and _decomposes(op, keys)):
        op.redispatch_boxed(keys, stack)
        return
    arguments = op.schema.arguments
    base = len(stack) - len(arguments)
    args = [recorder.value_of(v, _not_a_constant(op, a)) for v, a in zip(stack[base:], arguments)]
    token = _RECORDER.set(None)  # Note [Tracing at the outermost call]
    try:
        op.redispatch_boxed(keys, stack)
    finally:
        _RECORDER.reset(token)
    recorder.record(op, args, stack[base:])


_FALLBACK: Final = ScopedFallback(DispatchKey.Tracer, _tracer_fallback, "typedops.trace")
_TRACER_ON: Final = include_keys(DispatchKey.Tracer)


def trace(fn: Callable[..., Any], *example_inputs: Any, decompose: bool = False, **kwargs: Any) -> Program:
    """Call ``fn(*example_inputs, **kwargs)`` and return the ``Program`` of its op calls.

    Tensor inputs become the program's inputs; any other input is a constant the program
    is specialized to. Every op call is recorded at the boxed level with its arguments as
    inputs, earlier results or constants; calls made inside kernels are not, unless
    ``decompose=True``, which records a CompositeImplicitAutograd op's parts instead of
    the op. Python control flow runs once, on the examples: a branch on a tensor's
    values is baked in (see docs/tracing.md).
    """
    if not callable(fn):
        raise msg.TraceError(msg.NOT_TRACING.format(kind=type(fn).__name__))
    recorder = _Recorder(decompose)
    inputs = _inputs(recorder, fn, example_inputs, kwargs)
    _FALLBACK.acquire()
    token = _RECORDER.set(recorder)
    try:
        with _TRACER_ON:
            result = fn(*example_inputs, **kwargs)
    finally:
        _RECORDER.reset(token)
        _FALLBACK.release()
    outputs, kind = _outputs(recorder, result)
    return Program(inputs, tuple(recorder.calls), outputs, kind)


def _input_names(fn: Callable[..., Any], count: int) -> list[str]:
    try:
        parameters: Iterable[inspect.Parameter] = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        parameters = ()  # a builtin without a signature
    positional = [p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return [positional[i] if i < len(positional) else f"input{i}" for i in range(count)]


def _inputs(
    recorder: _Recorder, fn: Callable[..., Any], args: Sequence[Any], kwargs: dict[str, Any]
) -> tuple[Input, ...]:
    names = _input_names(fn, len(args)) + list(kwargs)
    inputs: list[Input] = []
    for index, (name, value) in enumerate(zip(names, [*args, *kwargs.values()])):
        if isinstance(value, Tensor):
            if id(value) not in recorder.known:
                recorder.remember(value, InputRef(index))
            inputs.append(TensorInput(name, value.dtype, tuple(value.shape), value.device))
        else:
            if _holds_tensor(value):  # a constant holds no tensor: it would refer to one
                raise msg.TraceError(msg.TENSOR_IN_INPUT.format(name=name, kind=type(value).__name__))

            def describe(v: Any, name: str = name) -> str:
                return msg.BAD_INPUT.format(name=name, kind=type(v).__name__, constants=msg.CONSTANTS)

            inputs.append(ConstantInput(name, recorder.value_of(value, describe)))
    return tuple(inputs)


def _holds_tensor(value: Any) -> bool:
    """Whether ``value``, a non-tensor input, is a list or tuple holding a tensor at any depth."""
    if isinstance(value, (list, tuple)):
        return any(isinstance(v, Tensor) or _holds_tensor(v) for v in cast("Sequence[object]", value))
    return False


def _outputs(recorder: _Recorder, result: Any) -> tuple[tuple[Value, ...], OutputKind]:
    def describe(v: Any) -> str:
        return msg.BAD_OUTPUT.format(what=f"a {type(v).__name__}")

    if result is None:
        return (), OutputKind.none
    if isinstance(result, (tuple, list)):
        values: list[Value] = []
        for item in cast("Sequence[object]", result):
            if isinstance(item, (tuple, list)):
                nested = cast("Sequence[object]", item)
                raise msg.TraceError(msg.BAD_OUTPUT.format(what=f"a nested {type(nested).__name__}"))
            values.append(recorder.value_of(item, describe))
        return tuple(values), OutputKind.tuple if isinstance(result, tuple) else OutputKind.list
    return (recorder.value_of(result, describe),), OutputKind.single
