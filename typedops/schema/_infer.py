"""Schema inference: a typed Python function -> ``FunctionSchema``.

``infer_schema(fn)`` reads ``fn``'s parameters, annotations and defaults and writes the
schema a kernel with that signature implements. The other direction,
``signature_from_schema``, lives in _python_signature.py.

Note [Inference speed]
~~~~~~~~~~~~~~~~~~~~~~
Inference runs once per registered kernel, on import, so it is kept cheap:

* a plain function's parameters are read from its code object, defaults and
  ``__annotations__`` directly; ``inspect.signature`` (several microseconds) is only
  used for other callables, or when ``__signature__``/``__wrapped__`` is set;
* the schema type of an annotation is cached per annotation *object* (a bounded cache,
  Note [Annotation cache]): typing caches ``Optional[X]`` and friends, so the same
  object recurs in every function that writes it;
* string annotations (``from __future__ import annotations``) are compiled once per
  string and evaluated in the function's module on every call; ``typing.get_type_hints``
  (slow) is the fallback for anything else (Note [String annotations]);
* schema objects are built with the parser's unchecked constructors, because
  everything they would check has been checked here.

Note [String annotations]
~~~~~~~~~~~~~~~~~~~~~~~~~
Under ``from __future__ import annotations`` every annotation is a string, and
``typing.get_type_hints`` costs ~40 us per function. The code object of a string does
not depend on the module, so it is compiled once and cached by the string; it is then
evaluated in the function's module globals on each call (so later rebinding of names is
seen, as with ``get_type_hints``). Anything unusual -- an evaluation error, a string
nested in an annotation (``list["Tensor"]``) -- goes through ``get_type_hints``, which
also finds the annotation at fault for the error message.

The class that annotations name ``Tensor`` with is registered by the tensor layer, which
sits above this one (Note [Tensor class by registration] in _classes.py); the tables that
name it are built on first use (``_classes``).
"""

from __future__ import annotations

import collections.abc
import enum
import functools
import inspect
import sys
import types
import typing
from collections.abc import Callable, Iterable
from typing import Annotated, Any, Final, Literal, Union, cast

from ..vocabulary import (
    SYM_INT_MARKER, BoundedCache, Device, Generator, Layout, MemoryFormat, ScalarType, SchemaInferenceError,
)
from ._defaults import DefaultValue, EnumDefault, default_mismatch, format_literal
from ._model import Argument, FunctionSchema, Return
from ._messages import (
    ERROR_AND_TYPE,
    _PARAM,
    _RETURN,
    _NO_ANNOTATION,
    _NO_RETURN_ANNOTATION,
    _VAR_POSITIONAL,
    _VAR_KEYWORD,
    _NO_SCHEMA_TYPE,
    _BECAUSE_OF,
    _HINT_SUPPORTED,
    _HINT_ANY,
    _HINT_BARE,
    _HINT_NONE,
    _HINT_UNION,
    _HINT_TUPLE,
    _HINT_DICT_KEY,
    _BAD_DEFAULT,
    _UNFIT_DEFAULT,
    _BAD_NONE_DEFAULT,
    _NO_LITERAL,
    _UNRESOLVED,
    _BAD_PARAM_NAME,
    _BAD_OP_NAME,
    _NO_FN_NAME,
    _NO_SIGNATURE,
    _MUTATES_STR,
    _MUTATES_TWICE,
    _MUTATES_UNKNOWN,
    _MUTATES_NOT_TENSOR,
)
from ._classes import tensor_class
from ._build import argument as _argument, make_return as _return, schema as _schema
from ._types import (
    BOOL, COMPLEX, DEVICE, FLOAT, INT, LAYOUT, MEMORY_FORMAT, SCALAR, SCALAR_TYPE, STR,
    SYM_INT, TENSOR, AliasInfo, BaseType, DictType, ListType, OptionalType, Type,
)  # fmt: skip

__all__ = ["infer_schema"]

# -- reading signatures -----------------------------------------------------------------
_EMPTY: Final[Any] = inspect.Parameter.empty
_POSITIONAL, _KEYWORD_ONLY, _VAR_ARGS, _VAR_KWARGS = range(4)
_CO_VARARGS: Final = inspect.CO_VARARGS
_CO_VARKEYWORDS: Final = inspect.CO_VARKEYWORDS
_KINDS: Final = {
    inspect.Parameter.POSITIONAL_ONLY: _POSITIONAL,
    inspect.Parameter.POSITIONAL_OR_KEYWORD: _POSITIONAL,
    inspect.Parameter.KEYWORD_ONLY: _KEYWORD_ONLY,
    inspect.Parameter.VAR_POSITIONAL: _VAR_ARGS,
    inspect.Parameter.VAR_KEYWORD: _VAR_KWARGS,
}
_Param = tuple[str, int, object, object]  # name, kind, annotation, default (or _EMPTY)


def _read_signature(fn: Callable[..., object]) -> tuple[list[_Param], object, bool]:
    """``fn``'s parameters in order, its return annotation (``_EMPTY`` when missing), and
    whether any annotation is a string."""
    if isinstance(fn, types.FunctionType):
        attrs = fn.__dict__
        if "__signature__" not in attrs and "__wrapped__" not in attrs:
            return _read_code(fn)
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError) as error:
        raise SchemaInferenceError(_NO_SIGNATURE.format(fn=fn, error=error)) from None
    params = [(p.name, _KINDS[p.kind], p.annotation, p.default) for p in sig.parameters.values()]
    ret = sig.return_annotation
    return params, ret, type(ret) is str or any(type(p[2]) is str for p in params)


def _read_code(fn: types.FunctionType) -> tuple[list[_Param], object, bool]:
    """The fast path of Note [Inference speed]: parameters straight from the code object."""
    code = fn.__code__
    names = code.co_varnames
    n_pos = code.co_argcount
    n_kw = code.co_kwonlyargcount
    annotations = fn.__annotations__
    defaults = fn.__defaults__ or ()
    first_default = n_pos - len(defaults)
    params: list[_Param] = []
    for i in range(n_pos):
        name = names[i]
        default = defaults[i - first_default] if i >= first_default else _EMPTY
        params.append((name, _POSITIONAL, annotations.get(name, _EMPTY), default))
    var = n_pos + n_kw
    if code.co_flags & _CO_VARARGS:
        params.append((names[var], _VAR_ARGS, _EMPTY, _EMPTY))
        var += 1
    if n_kw:
        kwdefaults = fn.__kwdefaults__ or {}
        for name in names[n_pos : n_pos + n_kw]:
            params.append((name, _KEYWORD_ONLY, annotations.get(name, _EMPTY), kwdefaults.get(name, _EMPTY)))
    if code.co_flags & _CO_VARKEYWORDS:
        params.append((names[var], _VAR_KWARGS, _EMPTY, _EMPTY))
    has_strings = str in map(type, annotations.values())
    return params, annotations.get("return", _EMPTY), has_strings


def _resolve_strings(
    fn: Callable[..., object], fn_name: str, params: list[_Param], ret: object, *, fast: bool
) -> tuple[list[_Param], object]:
    """Evaluate string annotations in ``fn``'s module (Note [String annotations])."""
    globalns = _module_globals(fn)
    if fast:
        try:
            evaluate = _evaluate
            resolved = [(n, k, evaluate(a, globalns) if type(a) is str else a, d) for n, k, a, d in params]
            return resolved, evaluate(ret, globalns) if type(ret) is str else ret
        except Exception:
            pass  # get_type_hints decides, and names the culprit
    raw = {p[0]: p[2] for p in params if p[2] is not _EMPTY}
    if ret is not _EMPTY:
        raw["return"] = ret
    try:
        hints = _type_hints(raw, globalns)
    except Exception:
        for key, value in raw.items():  # find the culprit, to name it
            try:
                _type_hints({key: value}, globalns)
            except Exception as error:
                subject = _subject(fn_name, None if key == "return" else key)
                raise SchemaInferenceError(_UNRESOLVED.format(
                    subject=subject, ann=_show(value), module=globalns.get("__name__", "?"),
                    error=ERROR_AND_TYPE.format(kind=type(error).__name__, error=error),
                )) from None
        raise
    params = [(n, k, a if a is _EMPTY else hints[n], d) for n, k, a, d in params]
    return params, ret if ret is _EMPTY else hints["return"]


def _module_globals(fn: Callable[..., object]) -> dict[str, Any]:
    """The namespace ``fn``'s string annotations are evaluated in: its module's globals."""
    if isinstance(fn, types.FunctionType) and "__wrapped__" not in fn.__dict__:
        return fn.__globals__
    globalns: dict[str, Any] | None = getattr(inspect.unwrap(fn), "__globals__", None)
    if globalns is None:
        module = sys.modules.get(getattr(fn, "__module__", None) or "")
        globalns = vars(module) if module is not None else {}
    return globalns


_compiled: Final[BoundedCache[str, types.CodeType]] = BoundedCache(2048, "compiled annotation strings")


def _evaluate(text: str, globalns: dict[str, Any]) -> object:
    """The fast path of Note [String annotations]: the string's cached code, evaluated."""
    code = _compiled.get(text)
    if code is None:
        code = compile(text, "<annotation>", "eval")
        _compiled.put(text, code)
    return eval(code, globalns)  # what get_type_hints does, minus its overhead


def _type_hints(raw: dict[str, object], globalns: dict[str, Any]) -> dict[str, Any]:
    holder = types.SimpleNamespace(__annotations__=raw)
    return typing.get_type_hints(holder, globalns=globalns, include_extras=True)


# -- annotation -> schema type ----------------------------------------------------------
class _NoSchemaType(Exception):
    """Internal: ``part`` of an annotation has no schema type; ``hint`` says what to write."""

    def __init__(self, part: object, hint: str) -> None:
        super().__init__(hint)
        self.part = part
        self.hint = hint


class _NeedsResolution(Exception):
    """Internal: an annotation holds a string or ForwardRef; resolve them and start again."""


_NONE_TYPE: Final = type(None)
# A union of these numbers (bool may join) is a Scalar: torch.types.Number is
# Union[int, float, bool]; complex may be in it too.
_SCALAR_UNIONS: Final = (frozenset({int, float}), frozenset({int, float, complex}))
_SEQUENCES: Final = frozenset({list, collections.abc.Sequence})
_MAPPINGS: Final = frozenset({dict, collections.abc.Mapping})
_BARE: Final = _SEQUENCES | _MAPPINGS | {tuple}
_DICT_KEYS: Final = frozenset({STR, INT, FLOAT, COMPLEX, BOOL, TENSOR})
_ENUMS: Final[dict[str, type[enum.Enum]]] = {
    "ScalarType": ScalarType, "Layout": Layout, "MemoryFormat": MemoryFormat,
}  # fmt: skip

# Note [Annotation cache]
# ~~~~~~~~~~~~~~~~~~~~~~~
# Two levels, both bounded caches (Note [Bounded caches] in vocabulary/_cache.py). The
# first is keyed by id(annotation) and keeps the annotation alive with its entry, so its
# id cannot be reused while the entry can hit; a hit hashes an int in C (hashing a typing
# alias runs Python code). The second is keyed by the annotation's value, so
# ``list[int]`` -- a new object in every function that writes it -- is converted once per
# process. Unhashable annotations skip the second.
_CACHE_LIMIT: Final = 2048
_T = typing.TypeVar("_T")


_types_by_id: Final[BoundedCache[int, Type]] = BoundedCache(_CACHE_LIMIT, "schema types by annotation id")
_types_by_value: Final[BoundedCache[object, Type]] = BoundedCache(_CACHE_LIMIT, "schema types by annotation")
_returns_by_id: Final[BoundedCache[int, tuple[Return, ...]]] = BoundedCache(
    _CACHE_LIMIT, "returns by annotation id"
)
_returns_by_value: Final[BoundedCache[object, tuple[Return, ...]]] = BoundedCache(
    _CACHE_LIMIT, "returns by annotation"
)


def _schema_type(ann: object) -> Type:
    """The schema type of annotation ``ann`` (Note [Annotation cache])."""
    known = _types_by_id.get(id(ann))
    if known is not None:
        return known
    return _cache_miss(ann, _types_by_id, _types_by_value, _convert)


def _returns(ann: object) -> tuple[Return, ...]:
    """The returns that return annotation ``ann`` stands for (Note [Annotation cache])."""
    known = _returns_by_id.get(id(ann))
    if known is not None:
        return known
    return _cache_miss(ann, _returns_by_id, _returns_by_value, _convert_returns)


def _cache_miss(
    ann: object, by_id: BoundedCache[int, _T], by_value: BoundedCache[object, _T],
    convert: Callable[[object], _T],
) -> _T:
    try:
        result = by_value.get(ann)
    except TypeError:  # unhashable, e.g. Annotated with a list in its metadata
        result = convert(ann)
    else:
        if result is None:
            result = by_value.put(ann, convert(ann))
    return by_id.put(id(ann), result, keep=ann)


@functools.cache
def _classes() -> dict[object, Type]:
    """Python class -> schema base type (built on first use: Note [Tensor class by registration])."""
    return {
        tensor_class(): TENSOR, int: INT, float: FLOAT, bool: BOOL, str: STR, complex: COMPLEX,
        ScalarType: SCALAR_TYPE, Layout: LAYOUT, Device: DEVICE, MemoryFormat: MEMORY_FORMAT,
        Generator: BaseType("Generator"),
    }  # fmt: skip


def _convert(ann: object) -> Type:
    if ann is Any:  # checked first: a class since Python 3.11
        raise _NoSchemaType(ann, _HINT_ANY)
    if isinstance(ann, type):
        base = _classes().get(ann)
        if base is not None:
            return base
        hint = _HINT_NONE if ann is _NONE_TYPE else _HINT_BARE if ann in _BARE else _HINT_SUPPORTED
        raise _NoSchemaType(ann, hint)
    if ann is None:
        raise _NoSchemaType(ann, _HINT_NONE)
    if isinstance(ann, (str, typing.ForwardRef)):
        raise _NeedsResolution
    origin = typing.get_origin(ann)
    args = typing.get_args(ann)
    if origin is Annotated:
        return SYM_INT if args[0] is int and SYM_INT_MARKER in args[1:] else _schema_type(args[0])
    if origin is Union or origin is types.UnionType:
        return _convert_union(ann, args)
    if origin is None or not args:
        raise _NoSchemaType(ann, _HINT_BARE if origin in _BARE else _HINT_SUPPORTED)
    if origin in _SEQUENCES:
        return ListType(_schema_type(args[0]))
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return ListType(_schema_type(args[0]))
        elems = {_schema_type(a) for a in args}
        if len(elems) != 1:
            raise _NoSchemaType(ann, _HINT_TUPLE)
        return ListType(elems.pop(), len(args))
    if origin in _MAPPINGS:
        key = _schema_type(args[0])
        if key not in _DICT_KEYS:
            raise _NoSchemaType(args[0], _HINT_DICT_KEY)
        return DictType(key, _schema_type(args[1]))
    raise _NoSchemaType(ann, _HINT_SUPPORTED)


def _is_scalar_union(members: list[Any]) -> bool:
    return frozenset(members) - {bool} in _SCALAR_UNIONS


def _convert_union(ann: object, args: tuple[Any, ...]) -> Type:
    rest = [a for a in args if a is not _NONE_TYPE]
    inner: Type
    if _is_scalar_union(rest):
        inner = SCALAR
    elif len(rest) == 1:
        inner = _schema_type(rest[0])
    else:
        raise _NoSchemaType(ann, _HINT_UNION)
    if len(rest) == len(args) or isinstance(inner, OptionalType):
        return inner
    return OptionalType(inner)


def _convert_returns(ann: object) -> tuple[Return, ...]:
    if ann is None or ann is _NONE_TYPE:
        return ()
    if typing.get_origin(ann) is tuple and ann is not typing.Tuple:
        args = typing.get_args(ann)
        if not (len(args) == 2 and args[1] is Ellipsis):  # tuple[X, ...] is one list
            return tuple(_return(_schema_type(a), None, None, 0) for a in args)
    return (_return(_schema_type(ann), None, None, 0),)


def _show(ann: object) -> str:
    """An annotation as a user would write it: ``Optional[Tensor]``, ``list[int]``."""
    if isinstance(ann, str):
        return ann
    if ann is None or ann is _NONE_TYPE:
        return "None"
    if ann is Ellipsis:
        return "..."
    if isinstance(ann, list):  # the parameter list of Callable[[...], R]
        return "[" + ", ".join(map(_show, cast("list[object]", ann))) + "]"
    if isinstance(ann, typing.ForwardRef):
        return ann.__forward_arg__
    origin = typing.get_origin(ann)
    args = typing.get_args(ann)
    if origin is Annotated:
        return "SymInt" if SYM_INT_MARKER in args[1:] else f"Annotated[{_show(args[0])}, ...]"
    if origin is Union or origin is types.UnionType:
        rest = [a for a in args if a is not _NONE_TYPE]
        shown = "Scalar" if _is_scalar_union(rest) else None
        if origin is types.UnionType:
            return " | ".join(map(_show, args)) if shown is None else f"{shown} | None"
        if shown is None and len(rest) > 1:
            shown = "Union[" + ", ".join(map(_show, rest)) + "]"
        shown = shown or _show(rest[0])
        return shown if len(rest) == len(args) else f"Optional[{shown}]"
    if origin is not None:
        name = str(getattr(ann, "_name", None) or getattr(origin, "__qualname__", origin))
        return f"{name}[{', '.join(map(_show, args)) or '()'}]" if args else name
    if isinstance(ann, type):
        return ann.__qualname__
    return repr(ann).replace("typing.", "")


# -- defaults ---------------------------------------------------------------------------
class _BadDefault(Exception):
    """Internal: a default that does not fit; ``template`` is the message to give."""

    def __init__(self, template: str, what: str = "") -> None:
        super().__init__(template)
        self.template = template
        self.what = what


_INT_NAMES: Final = frozenset({"int", "SymInt"})
_NUMBER_NAMES: Final = frozenset({"float", "complex", "Scalar"})


def _default_text(type_: Type, value: object) -> str:
    """The schema literal for default ``value`` of a parameter of ``type_``."""
    if value is None:
        if isinstance(type_, OptionalType):
            return "None"
        raise _BadDefault(_BAD_NONE_DEFAULT)
    text = format_literal(_default_value(type_, value))
    problem = default_mismatch(type_, text)  # the parser's rule, so the schema parses back
    if problem is not None:
        raise _BadDefault(_UNFIT_DEFAULT, problem)
    return text


def _default_value(type_: Type, value: object) -> DefaultValue:
    if isinstance(type_, OptionalType):
        type_ = type_.elem
    if isinstance(type_, BaseType):
        name = type_.name
        if isinstance(value, bool):
            if name == "bool" or name == "Scalar":
                return value
        elif isinstance(value, int):
            if name == "complex":
                return float(value)  # a complex default is written as a float, as torch reads it
            if name in _INT_NAMES or name in _NUMBER_NAMES:
                return int(value)
        elif isinstance(value, float):
            if name in _NUMBER_NAMES:
                return float(value)
        elif isinstance(value, str):
            if name == "str":
                return str(value)
        elif isinstance(value, complex):
            if name == "complex" or name == "Scalar":
                raise _BadDefault(_NO_LITERAL, "complex")
        elif isinstance(value, Device):
            if name == "Device":
                return str(value)
        elif isinstance(value, enum.Enum):
            if type(value) is _ENUMS.get(name):
                return EnumDefault(value.name)
        elif name == "Tensor":
            raise _BadDefault(_NO_LITERAL, "Tensor")
        raise _BadDefault(_BAD_DEFAULT)
    if isinstance(type_, ListType) and isinstance(value, (tuple, list)):
        items = cast("tuple[object, ...] | list[object]", value)
        if type_.size is not None and len(items) != type_.size:
            raise _BadDefault(_BAD_DEFAULT)
        elem = type_.elem
        inner = elem.elem if isinstance(elem, OptionalType) else elem
        if items and not isinstance(inner, BaseType):
            raise _BadDefault(_NO_LITERAL, "nested list")
        return tuple(_element_value(elem, v) for v in items)
    if isinstance(type_, DictType) and isinstance(value, dict):
        raise _BadDefault(_NO_LITERAL, "dict")
    raise _BadDefault(_BAD_DEFAULT)


def _element_value(elem: Type, value: object) -> DefaultValue:
    if value is None:
        if isinstance(elem, OptionalType):
            return None
        raise _BadDefault(_BAD_DEFAULT)
    return _default_value(elem, value)


# -- inference --------------------------------------------------------------------------
def _subject(fn_name: str, param: str | None) -> str:
    return _RETURN.format(fn=fn_name) if param is None else _PARAM.format(name=param, fn=fn_name)


def _refuse(fn_name: str, param: str | None, ann: object, problem: _NoSchemaType) -> SchemaInferenceError:
    part = "" if problem.part is ann else _BECAUSE_OF.format(part=_show(problem.part))
    return SchemaInferenceError(_NO_SCHEMA_TYPE.format(
        subject=_subject(fn_name, param), ann=_show(ann), part=part, hint=problem.hint
    ))


def _write_alias(index: int) -> AliasInfo:
    """``a!``, ``b!``, ... ``z!``, ``aa!``, ``ab!``, ...: the index-th mutated argument's set."""
    name = ""
    index += 1
    while index:
        index, letter = divmod(index - 1, 26)
        name = chr(ord("a") + letter) + name
    return AliasInfo((name,), (), True)


_WRITE_ALIASES: Final = tuple(_write_alias(i) for i in range(26))


def _split_name(name: str) -> tuple[str, str, str]:
    """``ns::op.overload`` -> ``(ns, op, overload)``; SchemaInferenceError if malformed."""
    namespace, sep, rest = name.partition("::")
    if not sep:
        namespace, rest = "", name
    op, dot, overload = rest.partition(".")
    if not (
        name.isascii() and op.isidentifier()
        and (namespace.isidentifier() or not sep) and (overload.isidentifier() or not dot)
    ):  # fmt: skip
        raise SchemaInferenceError(_BAD_OP_NAME.format(name=name))
    return namespace, op, overload


def _mutated(mutates_args: Iterable[str] | Literal["unknown"], fn_name: str, params: list[_Param]) -> frozenset[str] | None:
    """The names ``mutates_args`` marks mutable; None means every tensor parameter."""
    if isinstance(mutates_args, str):
        if mutates_args == "unknown":
            return None
        raise SchemaInferenceError(_MUTATES_STR.format(value=mutates_args))
    names = tuple(mutates_args)
    if not names:
        return frozenset()
    known = [p[0] for p in params if p[1] <= _KEYWORD_ONLY]
    if len(set(names)) != len(names):
        twice = next(name for name in names if names.count(name) > 1)
        raise SchemaInferenceError(_MUTATES_TWICE.format(name=twice, fn=fn_name))
    for name in names:
        if name not in known:
            raise SchemaInferenceError(_MUTATES_UNKNOWN.format(
                name=name, fn=fn_name, names=", ".join(known) or "none"
            ))
    return frozenset(names)


def infer_schema(
    fn: Callable[..., object],
    *,
    name: str | None = None,
    mutates_args: Iterable[str] | Literal["unknown"] = (),
) -> FunctionSchema:
    """The schema of the operator that kernel ``fn`` implements, read from its annotations.

    ``name`` defaults to ``fn.__name__``; ``ns::op.overload`` is split into its parts.
    ``mutates_args`` names the tensor parameters ``fn`` writes to (they become
    ``Tensor(a!)``, ``Tensor(b!)``, ... in parameter order); ``"unknown"`` marks every
    tensor parameter. Raises ``SchemaInferenceError`` naming the parameter at fault.
    """
    fn_name = getattr(fn, "__name__", None)
    if name is None:
        if not isinstance(fn_name, str) or not fn_name.isidentifier():
            raise SchemaInferenceError(_NO_FN_NAME.format(fn=fn))
        name = fn_name
    elif not isinstance(fn_name, str):
        fn_name = name
    parts = _split_name(name)
    params, ret, has_strings = _read_signature(fn)
    mutated = _mutated(mutates_args, fn_name, params)
    try:
        if has_strings:
            resolved, resolved_ret = _resolve_strings(fn, fn_name, params, ret, fast=True)
            return _build(fn_name, parts, resolved, resolved_ret, mutated)
        return _build(fn_name, parts, params, ret, mutated)
    except _NeedsResolution:  # a string inside an annotation, e.g. list["Tensor"]
        params, ret = _resolve_strings(fn, fn_name, params, ret, fast=False)
        return _build(fn_name, parts, params, ret, mutated)


# Note [Argument cache]
# ~~~~~~~~~~~~~~~~~~~~~
# A parameter's Argument depends only on its name, kind, annotation and default (and on
# whether it is mutated, which gives it an alias set counted per op: those are not
# cached). ``Argument`` is immutable, so schemas share one object per distinct parameter
# (``x: Tensor`` recurs across a library): a hit skips conversion and checks, and leaves
# nothing new for the garbage collector. Keyed like the annotation cache, by id with the
# annotation kept alive by the entry; defaults only when equal values are interchangeable (None and exact
# ints, bools and strings -- not floats, where -0.0 == 0.0, nor mutable values), with
# their type in the key (True == 1).
_PLAIN: Final = (int, bool, str)
_UNCACHED: Final[Any] = object()
_arguments: Final[BoundedCache[tuple[str, int, int, type, object], Argument]] = BoundedCache(
    _CACHE_LIMIT, "inferred arguments"
)


def _build(
    fn_name: str, parts: tuple[str, str, str], params: list[_Param], ret: object,
    mutated: frozenset[str] | None,
) -> FunctionSchema:
    positional: list[Any] = []
    kwarg_only: list[Any] = []
    n_written = 0
    for pname, kind, ann, default in params:
        writes = mutated is None or pname in mutated
        if not writes:  # Note [Argument cache]
            default_key = default if default is _EMPTY or default is None or type(default) in _PLAIN else _UNCACHED
            if default_key is not _UNCACHED:
                key = (pname, kind, id(ann), type(default), default_key)
                known = _arguments.get(key)
                if known is not None:
                    (positional if kind == _POSITIONAL else kwarg_only).append(known)
                    continue
        if kind >= _VAR_ARGS:
            template = _VAR_POSITIONAL if kind == _VAR_ARGS else _VAR_KEYWORD
            raise SchemaInferenceError(template.format(name=pname, fn=fn_name))
        if not pname.isascii():
            raise SchemaInferenceError(_BAD_PARAM_NAME.format(subject=_subject(fn_name, pname)))
        if ann is _EMPTY:
            raise SchemaInferenceError(_NO_ANNOTATION.format(subject=_subject(fn_name, pname), name=pname))
        try:
            type_ = _schema_type(ann)
        except _NoSchemaType as problem:
            raise _refuse(fn_name, pname, ann, problem) from None
        text = None
        if default is None and type(type_) is OptionalType:
            text = "None"
        elif default is not _EMPTY:
            try:
                text = _default_text(type_, default)
            except _BadDefault as bad:
                shown = _show(ann)
                optional = shown if isinstance(type_, OptionalType) else f"Optional[{shown}]"
                raise SchemaInferenceError(bad.template.format(
                    value=default, subject=_subject(fn_name, pname), ann=shown,
                    optional=optional, name=pname, what=bad.what,
                )) from None
        alias = None
        if writes:
            if type_.is_tensor_like():
                alias = _WRITE_ALIASES[n_written] if n_written < 26 else _write_alias(n_written)
                n_written += 1
            elif mutated is not None:
                raise SchemaInferenceError(_MUTATES_NOT_TENSOR.format(
                    subject=_subject(fn_name, pname), ann=_show(ann), name=pname
                ))
        argument = _argument(pname, type_, text, alias, 0)
        if not writes and default_key is not _UNCACHED:  # pyright: ignore[reportPossiblyUnboundVariable] -- bound when not writes
            _arguments.put(key, argument, keep=ann)  # pyright: ignore[reportPossiblyUnboundVariable] -- bound with default_key
        (positional if kind == _POSITIONAL else kwarg_only).append(argument)
    if ret is _EMPTY:
        raise SchemaInferenceError(_NO_RETURN_ANNOTATION.format(subject=_subject(fn_name, None), fn=fn_name))
    try:
        returns = _returns(ret)
    except _NoSchemaType as problem:
        raise _refuse(fn_name, None, ret, problem) from None
    namespace, op, overload = parts
    # Note [Shared argument tuples]; the builder keeps a tuple as it is given.
    return _schema(op, namespace, overload, _shared(positional), _shared(kwarg_only), returns, False, False)


# Note [Shared argument tuples]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# The ops of a library share their signatures, and so (Note [Argument cache]) their
# Argument objects: a tuple of the same Arguments is kept once too, and the returns
# tuple is the one the annotation cache holds -- two objects fewer for the garbage
# collector per ``@op``. Keyed by the Arguments' ids: the cached tuple holds them, so no
# other object can have one of those ids while the entry lives.
_argument_tuples: Final[BoundedCache[tuple[int, ...], tuple[Argument, ...]]] = BoundedCache(
    _CACHE_LIMIT, "inferred argument tuples"
)


def _shared(arguments: list[Argument]) -> tuple[Argument, ...]:
    if not arguments:
        return ()
    key = tuple(map(id, arguments))
    known = _argument_tuples.get(key)
    return known if known is not None else _argument_tuples.put(key, tuple(arguments))
