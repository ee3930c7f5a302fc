"""Checking an unboxed kernel's signature against the schema of its op.

PyTorch often accepts a kernel whose signature differs from the schema and fails (or
misbehaves) at call time; typedops infers the kernel's schema from its annotations and
refuses a mismatch at registration, naming each differing argument.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from ..vocabulary import SchemaInferenceError, SchemaMismatchError
from ..boxing import default_value
from ._messages import (
    EXTRA_PARAMETER,
    KEYWORD_ONLY_IN_KERNEL,
    MISSING_PARAMETER,
    OTHER_DEFAULT,
    OWNER_DEFAULT_IS,
    OWNER_HAS_NO_DEFAULT,
    OTHER_PARAMETER_NAME,
    OTHER_PARAMETER_TYPE,
    OTHER_RETURNS,
    POSITIONAL_IN_PROTOTYPE,
    SIGNATURE_MISMATCH,
    WITH_KEYS_NO_PARAMETERS,
)
from ..schema import (
    INT,
    SYM_INT,
    Argument,
    FunctionSchema,
    ListType,
    OptionalType,
    Type,
    infer_schema,
)

__all__ = ["check_kernel_signature"]


def _loose(type_: Type) -> Type:
    """The type with what a kernel may write differently folded away (SymInt~int, sizes)."""
    if type_ == SYM_INT:
        return INT
    if isinstance(type_, OptionalType):
        return OptionalType(_loose(type_.elem))
    if isinstance(type_, ListType):
        return ListType(_loose(type_.elem))
    return type_


def _without_first_parameter(fn: Callable[..., Any]) -> Callable[..., Any]:
    """A stand-in for ``fn`` whose signature lacks its first parameter (the key set)."""
    signature = inspect.signature(fn, eval_str=True)
    params = list(signature.parameters.values())
    if not params:
        raise SchemaInferenceError(WITH_KEYS_NO_PARAMETERS.format(name=getattr(fn, "__qualname__", fn)))

    def stand_in(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("only its signature is read")

    # inspect.signature() honours a __signature__ attribute, which function types do not declare.
    stand_in.__signature__ = signature.replace(parameters=params[1:])  # type: ignore[attr-defined]  # see above
    stand_in.__name__ = getattr(fn, "__name__", "kernel")
    stand_in.__qualname__ = getattr(fn, "__qualname__", stand_in.__name__)
    stand_in.__module__ = getattr(fn, "__module__", __name__)
    return stand_in


def check_kernel_signature(
    schema: FunctionSchema, fn: Callable[..., Any], *, with_keys: bool, prototype: bool = False
) -> None:
    """Raise ``SchemaMismatchError`` unless ``fn``'s annotations fit ``schema``.

    Names, positions and types must agree; a kernel may take ``int`` for ``SymInt``, a
    plain list for a sized one, and a keyword-only schema argument as an ordinary
    parameter (it is passed by keyword). A kernel's defaults are not compared: the
    op's schema supplies them.

    ``prototype=True`` checks a ``typed()`` prototype, whose signature is what a type
    checker holds calls to, so it must be the schema's exactly: keyword-only where the
    schema's argument is, and with the same defaults (a default the schema lacks would
    let a call through that fails at run time).
    """
    target = _without_first_parameter(fn) if with_keys else fn
    other = infer_schema(target, name=schema.full_name)
    what = "prototype" if prototype else "kernel"
    name = getattr(fn, "__qualname__", repr(fn))
    differences: list[str] = []

    def compare(expected: Argument, got: Argument | None, index: int) -> None:
        if got is None:
            differences.append(MISSING_PARAMETER.format(index=index, name=expected.name, type=expected.type, what=what))
            return
        if got.name != expected.name:
            differences.append(OTHER_PARAMETER_NAME.format(index=index, name=expected.name, what=what, got=got.name))
        elif _loose(got.type) != _loose(expected.type):
            differences.append(OTHER_PARAMETER_TYPE.format(name=expected.name, type=expected.type, what=what, got=got.type))
        elif prototype and not _same_default(got, expected):
            differences.append(
                OTHER_DEFAULT.format(name=expected.name, expected=_default(expected, "schema"), got=_default(got, what))
            )

    expected_all = schema.positional + schema.kwarg_only
    got_all = other.positional + other.kwarg_only
    for index, expected in enumerate(expected_all):
        compare(expected, got_all[index] if index < len(got_all) else None, index)
    for index in range(len(expected_all), len(got_all)):
        extra = got_all[index]
        differences.append(EXTRA_PARAMETER.format(index=index, name=extra.name, type=extra.type))
    positional = {a.name for a in schema.positional}
    for arg in other.kwarg_only:
        if arg.name in positional:
            differences.append(KEYWORD_ONLY_IN_KERNEL.format(name=arg.name, what=what))
    if prototype:
        keyword_only = {a.name for a in schema.kwarg_only}
        for arg in other.positional:
            if arg.name in keyword_only:
                differences.append(POSITIONAL_IN_PROTOTYPE.format(name=arg.name))
    expected_returns = [_loose(r.type) for r in schema.returns]
    got_returns = [_loose(r.type) for r in other.returns]
    if expected_returns != got_returns:
        schema_returns = ", ".join(str(r.type) for r in schema.returns)
        other_returns = ", ".join(str(r.type) for r in other.returns)
        differences.append(OTHER_RETURNS.format(expected=schema_returns, what=what, got=other_returns))
    if differences:
        raise SchemaMismatchError(
            SIGNATURE_MISMATCH.format(what=what, name=name, schema=schema, differences="\n  ".join(differences)),
            differences,
        )


def _same_default(a: Argument, b: Argument) -> bool:
    """Both without a default, or the same value however written (``.5`` and ``0.5``,
    ``1e-5`` and ``1e-05``, ``int[2] stride=1`` and ``[1, 1]``)."""
    if a.default is None or b.default is None:
        return a.default is b.default
    if a.default == b.default:
        return True
    try:
        return bool(default_value(a) == default_value(b))
    except (ValueError, LookupError, TypeError):  # a value this side cannot read is a difference
        return False


def _default(arg: Argument, owner: str) -> str:
    if arg.default is None:
        return OWNER_HAS_NO_DEFAULT.format(owner=owner)
    return OWNER_DEFAULT_IS.format(owner=owner, default=arg.default)
