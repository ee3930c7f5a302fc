"""``typedops.opcheck``: does an op's schema (and its rules) tell the truth about its kernel?

Note [opcheck's checks]
~~~~~~~~~~~~~~~~~~~~~~~
Each check is a function ``check(op, args, kwargs) -> problem text or None`` under a name,
run on fresh copies of the arguments (same shapes, strides and values, own storage):

- ``test_schema``: every tensor argument is compared before and after the call -- its
  elements and its version counter. A change to one the schema does not declare written
  (``Tensor(a!)``) is an undeclared mutation; a declared one left untouched is a false
  declaration. A result sharing memory with an argument must be declared an alias of it
  (the same alias set on both).
- ``test_faketensor``: the op runs under ``FakeTensorMode`` on fake copies; its Meta kernel
  (``register_fake`` rule) must exist and give the kernel's shapes, dtypes, strides and
  devices.
- ``test_boxed``: ``call_boxed`` with every argument on the stack gives what the unboxed
  call gives.
- ``test_autograd``: the op's autograd rule passes ``gradcheck`` on float64 copies of its
  floating arguments (Note [opcheck's autograd check] in _gradients.py).

- ``test_static_dispatch``: for an op a ``--static-dispatch`` build names, its statically
  dispatched function gives what the dispatcher gives (Note [opcheck's static dispatch
  check] in _static.py).

- ``test_vmap``: the op's batching rule gives what the for-loop fallback gives (Note
  [opcheck's vmap check] in _vmapping.py).

Layers above add their own with ``register_check``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final

from ..vocabulary import ArgumentError, ArgumentValueError
from ..schema import Argument, FunctionSchema
from ..boxing import default_value
from ..tensor import Tensor, array_of
from ..dispatch import OperatorHandle
from ..modes import FakeTensorMode, NoFakeRuleError
from . import _messages as msg
from ._gradients import check_autograd
from ._static import check_static_dispatch
from ._vmapping import check_vmap
from ._values import clone, describe, map_tensors, same_values, tensors_of

if TYPE_CHECKING:
    import numpy.typing as npt

__all__ = ["opcheck", "register_check", "checks", "Check"]

Check = Callable[[OperatorHandle, tuple[Any, ...], Mapping[str, Any]], "str | None"]
_CHECKS: Final[dict[str, Check]] = {}


def register_check(name: str, check: Check) -> Callable[[], None]:
    """Add ``check`` to opcheck's checks under ``name`` (Note [opcheck's checks]); returns
    the function that removes it again."""
    _CHECKS[name] = check

    def remove() -> None:
        if _CHECKS.get(name) is check:
            del _CHECKS[name]

    return remove


def checks() -> list[str]:
    """The names of every check, in the order they run."""
    return list(_CHECKS)


def opcheck(
    op: Any,
    args: Iterable[Any],
    kwargs: Mapping[str, Any] | None = None,
    *,
    test_utils: str | Iterable[str] | None = None,
    raise_exception: bool = True,
) -> dict[str, str]:
    """Run opcheck's checks (all, or the ``test_utils`` named) on ``op(*args, **kwargs)``,
    as ``torch.library.opcheck``: a dict from check name to ``"SUCCESS"`` or what failed;
    with ``raise_exception`` the first failure raises ``OpCheckError`` naming the op, the
    check and the fix."""
    handle = op if isinstance(op, OperatorHandle) else getattr(op, "handle", None)
    if not isinstance(handle, OperatorHandle):
        raise ArgumentError(msg.NOT_AN_OP.format(kind=type(op).__name__))
    names = list(_CHECKS) if test_utils is None else [test_utils] if isinstance(test_utils, str) else list(test_utils)
    for name in names:
        if name not in _CHECKS:
            raise ArgumentValueError(msg.UNKNOWN_CHECK.format(name=name, names=", ".join(_CHECKS)))
    arguments, keywords = tuple(args), dict(kwargs or {})
    results: dict[str, str] = {}
    for name in names:
        problem = _CHECKS[name](handle, arguments, keywords)
        if problem is None:
            results[name] = "SUCCESS"
            continue
        results[name] = problem
        if raise_exception:
            raise msg.OpCheckError(msg.FAILED.format(op=handle.full_name, check=name, problem=problem), handle.full_name, name)
    return results


# -- the checks -------------------------------------------------------------------------------
def _bound(schema: FunctionSchema, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> list[tuple[Argument, Any]]:
    """The arguments given, with the schema argument each is passed as."""
    pairs = list(zip(schema.positional, args))
    by_name = {a.name: a for a in schema.arguments}
    pairs += [(by_name[name], value) for name, value in kwargs.items() if name in by_name]
    return pairs


def _results(schema: FunctionSchema, result: Any) -> list[Any]:
    if len(schema.returns) == 1:
        return [result]
    return list(result) if schema.returns else []


def check_schema(op: OperatorHandle, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> str | None:
    schema = op.schema
    args, kwargs = clone(args), clone(kwargs)
    before: list[tuple[Argument, Tensor, npt.NDArray[Any] | None, int]] = []
    for argument, value in _bound(schema, args, kwargs):
        for t in tensors_of(value):
            snapshot = None if t.is_meta else array_of(t).copy()
            before.append((argument, t, snapshot, t.storage.version))
    result = op(*args, **kwargs)
    for argument, t, snapshot, version in before:
        values_changed = snapshot is not None and not same_values(Tensor.from_numpy(snapshot), t)
        bumped = t.storage.version != version
        # ADInplaceOrView bumps every declared-written argument itself (Note
        # [ADInplaceOrView]), so only its values can show whether the kernel wrote it.
        if argument.is_write and snapshot is not None and not values_changed:
            return msg.UNUSED_MUTATION.format(arg=argument.name)
        if not argument.is_write and (values_changed or bumped):
            how = "its values" if values_changed else "its version counter"
            return msg.UNDECLARED_MUTATION.format(arg=argument.name, how=how)
    for index, (ret, out) in enumerate(zip(schema.returns, _results(schema, result))):
        for t_out in tensors_of(out):
            for argument, t_in, _, _ in before:
                if t_out.storage is t_in.storage and not _declared_alias(ret.alias, argument.alias):
                    return msg.UNDECLARED_ALIAS.format(index=index, arg=argument.name)
    return None


def _declared_alias(ret: Any, arg: Any) -> bool:
    return ret is not None and arg is not None and bool(set(ret.before) & set(arg.before))


def _layout(t: Tensor) -> str:
    return f"shape {list(t.shape)}, dtype {t.dtype.name}, strides {list(t.stride())}, device {t.device}"


def check_faketensor(op: OperatorHandle, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> str | None:
    schema = op.schema
    real = _results(schema, op(*clone(args), **clone(kwargs)))
    mode = FakeTensorMode()
    fake_args, fake_kwargs = map_tensors(args, mode.from_tensor), map_tensors(dict(kwargs), mode.from_tensor)
    try:
        with mode:
            fake = _results(schema, op(*fake_args, **fake_kwargs))
    except NoFakeRuleError as error:
        return str(error)
    if len(fake) != len(real):
        return msg.FAKE_COUNT.format(fake=len(fake), real=len(real))
    for index, (f, r) in enumerate(zip(fake, real)):
        for ft, rt in zip(tensors_of(f), tensors_of(r)):
            if _layout(ft) != _layout(rt):
                return msg.FAKE_DIFFERS.format(index=index, fake=_layout(ft), real=_layout(rt))
    return None


def check_boxed(op: OperatorHandle, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> str | None:
    schema = op.schema
    unboxed = op(*clone(args), **clone(kwargs))
    boxed_args, boxed_kwargs = clone(args), clone(kwargs)
    stack = list(boxed_args)
    for argument in schema.arguments[len(stack):]:
        stack.append(boxed_kwargs[argument.name] if argument.name in boxed_kwargs else default_value(argument))
    op.call_boxed(stack)
    boxed = stack[0] if len(schema.returns) == 1 else tuple(stack) if schema.returns else None
    if not same_values(boxed, unboxed):
        return msg.BOXED_DIFFERS.format(boxed=describe(boxed), unboxed=describe(unboxed))
    return None


register_check("test_schema", check_schema)
register_check("test_faketensor", check_faketensor)
register_check("test_boxed", check_boxed)
register_check("test_autograd", check_autograd)
register_check("test_static_dispatch", check_static_dispatch)
register_check("test_vmap", check_vmap)
