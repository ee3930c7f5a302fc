"""Checking and completing call arguments on the slow paths (errors, short boxed stacks)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..vocabulary import ArgumentError
from ..boxing import TensorUse, default_value, mismatch, python_name, tensor_use, type_name

if TYPE_CHECKING:
    from ._operator import OperatorEntry

__all__ = ["explain_bad_tensors", "fill_stack_defaults", "boxed_argument_error"]


def _is_tensor(value: Any) -> bool:
    return isinstance(getattr(value, "key_bits", None), int)


def explain_bad_tensors(op: OperatorEntry, values: dict[str, Any], *, boxed: bool = False) -> TypeError:
    """The error for a call whose tensor-typed argument is not a tensor (or list of them)."""
    for arg in op.schema.arguments:
        if arg.name not in values and python_name(arg.name) not in values:
            continue
        value: Any = values.get(arg.name, values.get(python_name(arg.name)))
        use = tensor_use(arg.type)
        if use is TensorUse.tensor and not _is_tensor(value):
            problem = f"expected a Tensor, got {type_name(value)}"
        elif use is TensorUse.optional and value is not None and not _is_tensor(value):
            problem = f"expected a Tensor or None, got {type_name(value)}"
        elif use in (TensorUse.list, TensorUse.optional_list):
            allow_none = use is TensorUse.optional_list
            if value is None and allow_none:
                continue
            try:
                items = list[Any](value)  # pyright: ignore[reportArgumentType] -- None: the TypeError branch
            except TypeError:
                problem = f"expected a list of Tensors, got {type_name(value)}"
            else:
                bad = [i for i, v in enumerate(items) if not (_is_tensor(v) or (allow_none and v is None))]
                if not bad:
                    continue
                problem = f"element {bad[0]} is {type_name(items[bad[0]])}, not a Tensor"
        else:
            continue
        where = f"{op.full_name}.call_boxed()" if boxed else op.full_name
        return TypeError(f"{where}: argument '{arg.name}' ({arg.type}): {problem}")
    return TypeError(f"{op.full_name}: a tensor argument is not a Tensor")


def boxed_argument_error(op: OperatorEntry, stack: list[Any]) -> TypeError | None:
    """The error for the first stack value that does not fit its argument's schema type."""
    for arg, value in zip(op.schema.arguments, stack):
        problem = mismatch(arg.type, value)
        if problem is not None:
            return TypeError(
                f"{op.full_name}.call_boxed(): argument '{arg.name}' ({arg.type}): {problem}"
            )
    return None


def fill_stack_defaults(op: OperatorEntry, stack: list[Any], entry: str = "call_boxed") -> int:
    """Complete a boxed call whose stack omits trailing arguments that have defaults.

    Raises ``TypeError`` (leaving the stack as it was) when the stack holds too many
    values, or omits an argument that has no default; ``entry`` names the boxed entry
    point in the message.
    """
    args = op.schema.arguments
    have, want = len(stack), len(args)
    signature = ", ".join(str(a) for a in args)
    if have > want:
        raise ArgumentError(
            f"{op.full_name}.{entry}(): the stack holds {have} values, but the op takes "
            f"{want} argument(s) ({signature}); the stack must hold exactly the arguments"
        )
    missing = [a for a in args[have:] if not a.has_default]
    if missing:
        names = ", ".join(f"'{a.name}'" for a in missing)
        raise ArgumentError(
            f"{op.full_name}.{entry}(): missing argument(s) {names}; the stack holds "
            f"{have} value(s) for ({signature})"
        )
    stack.extend(default_value(a) for a in args[have:])
    return want - have
