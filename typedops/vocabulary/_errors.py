"""The exception hierarchy: one root, each concrete error also a matching builtin.

Callers can catch ``TypedopsError`` for anything the library raises on bad input, or
the builtin (``ValueError``, ``TypeError``, ``LookupError``) when they only care
about the kind of mistake.
"""

from __future__ import annotations

__all__ = [
    "TypedopsError",
    "SchemaParseError",
    "SchemaError",
    "SchemaLookupError",
    "SchemaInferenceError",
    "SchemaMismatchError",
    "RegistrationError",
    "OperatorNotFoundError",
    "OperatorAttributeError",
    "NoKernelError",
    "ArgumentError",
    "ArgumentValueError",
    "ArgumentOverflowError",
    "StackError",
    "TensorError",
    "DimensionError",
    "UnsupportedError",
]


class TypedopsError(Exception):
    """Root of every error typedops raises on bad input."""


class SchemaParseError(TypedopsError, ValueError):
    """Schema text that does not follow the schema grammar.

    ``text`` is the schema as given, ``column`` the 1-based column of the offending
    token and ``reason`` the message without the caret display. ``str(error)`` shows
    all three::

        unknown type 'Tensr' at column 3 (did you mean 'Tensor'?)
          f(Tensr x) -> Tensor
            ^^^^^
    """

    def __init__(self, reason: str, text: str, column: int, width: int = 1) -> None:
        self.reason = reason
        self.text = text
        self.column = column
        self.width = max(1, width)
        super().__init__(self._render())

    def _render(self) -> str:
        # Columns are 1-based; the caret line is indented like the schema line.
        caret = " " * (self.column - 1) + "^" * self.width
        return f"{self.reason}\n  {self.text}\n  {caret}"


class SchemaError(TypedopsError, ValueError):
    """A schema object built directly (not parsed) that breaks a rule of the schema
    language: a bad name, a repeated argument, an alias set without names."""


class SchemaLookupError(TypedopsError, LookupError):
    """A schema asked for an argument (or a default) it does not have."""


class SchemaInferenceError(TypedopsError, TypeError):
    """A Python function whose signature cannot be turned into a schema."""


class SchemaMismatchError(TypedopsError, TypeError):
    """A kernel's signature does not match the schema of the op it is registered for.

    ``differences`` lists one line per differing argument or return.
    """

    def __init__(self, message: str, differences: list[str]) -> None:
        self.differences = differences
        super().__init__(message)


class RegistrationError(TypedopsError, ValueError):
    """A registration that would leave the registry inconsistent (a duplicate, a wrong kind)."""


class OperatorNotFoundError(TypedopsError, LookupError):
    """No operator has the name looked up; the message suggests near matches."""


class OperatorAttributeError(OperatorNotFoundError, AttributeError):
    """``ops.<namespace>.<name>.<overload>`` names nothing registered: an
    ``AttributeError`` too, so ``hasattr`` and ``getattr(..., default)`` work."""


class ArgumentError(TypedopsError, TypeError):
    """A value of the wrong type for an operator's or a typedops function's argument,
    or the wrong number of arguments."""


class ArgumentValueError(TypedopsError, ValueError):
    """An argument of the right type whose value is not allowed (a device string that
    names no device, a namespace that is not an identifier)."""


class ArgumentOverflowError(ArgumentValueError, OverflowError):
    """A Python int too large for the argument it is passed as (an ``int`` or ``Scalar``
    beyond int64: Note [Ints are int64] in boxing/_ivalue.py). Also an ``OverflowError``,
    which is what Python raises for an int too large to convert and what PyTorch raises
    for such a ``Scalar`` (it raises ``ValueError`` for such an ``int``: this is both)."""


class StackError(TypedopsError, IndexError):
    """A boxed stack holds fewer values than an operation on it needs."""


class TensorError(TypedopsError, RuntimeError):
    """What PyTorch reports as a ``RuntimeError`` from an op or a tensor: shapes that do
    not broadcast, a result dtype an in-place op cannot hold, data read from a meta tensor."""


class OutOfMemoryError(TypedopsError, MemoryError):
    """Not enough memory for a new tensor's elements (PyTorch reports a ``RuntimeError`` from
    its CPU allocator; this is a ``MemoryError``, which is what Python raises)."""


class DimensionError(TypedopsError, IndexError):
    """A dimension index out of range for a tensor's rank (PyTorch's ``IndexError``)."""


class UnsupportedError(TypedopsError, NotImplementedError):
    """A request typedops understands but does not implement yet (a sparse layout, a
    dtype with no numpy storage); the message says what is supported instead."""


class NoKernelError(TypedopsError, LookupError):
    """The key a call dispatched to has no kernel for the op.

    ``op`` is the operator's full name, ``keys`` the computed key set, ``key`` the key
    chosen (None when the set was empty) and ``available`` the keys that have kernels.
    """

    def __init__(self, message: str, op: str, keys: object, key: object, available: tuple[object, ...]) -> None:
        self.op = op
        self.keys = keys
        self.key = key
        self.available = available
        super().__init__(message)
