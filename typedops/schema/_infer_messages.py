"""The messages of schema inference, in one place (``Final`` format strings)."""

from __future__ import annotations

from typing import Final

# Every refusal names the parameter (or the return) and says what to write instead.
_SUPPORTED: Final = (
    "Tensor, int, SymInt, float, bool, str, complex, Scalar, ScalarType, Layout, Device, "
    "MemoryFormat or Generator, or Optional, list, Sequence, tuple or dict of those"
)
_PARAM: Final = "parameter '{name}' of {fn}()"
_RETURN: Final = "the return of {fn}()"
_NO_ANNOTATION: Final = "{subject} has no annotation; annotate it, e.g. '{name}: Tensor'"
_NO_RETURN_ANNOTATION: Final = (
    "{subject} has no annotation; annotate it, e.g. 'def {fn}(...) -> Tensor', "
    "or '-> None' if it returns nothing"
)
_VAR_POSITIONAL: Final = (
    "parameter '*{name}' of {fn}() takes any number of arguments, which an operator "
    "cannot; take a list instead, e.g. '{name}: list[Tensor]'"
)
_VAR_KEYWORD: Final = (
    "parameter '**{name}' of {fn}() takes any keyword arguments, which an operator "
    "cannot; declare each one after '*', e.g. '*, alpha: float = 1.0'"
)
_NO_SCHEMA_TYPE: Final = "{subject} is annotated '{ann}', which has no schema type{part}; {hint}"
_BECAUSE_OF: Final = " (because of '{part}')"
_HINT_SUPPORTED: Final = f"use {_SUPPORTED}"
_HINT_ANY: Final = "name the type it takes, e.g. 'Tensor'"
_HINT_BARE: Final = "say what it holds, e.g. 'list[int]'"
_HINT_NONE: Final = "None on its own is no parameter type; write 'Optional[X]' for an X that may be None"
_HINT_UNION: Final = (
    "an argument has one type: write 'Optional[X]' for X or None, 'Scalar' for any "
    "number, or register one overload per type"
)
_HINT_TUPLE: Final = (
    "a tuple must hold one type, e.g. 'tuple[int, int]'; use 'list[X]' for any length"
)
_HINT_DICT_KEY: Final = "dict keys must be str, int, float, complex, bool or Tensor"
_BAD_DEFAULT: Final = (
    "default {value!r} of {subject} does not fit its annotation '{ann}'; "
    "give a default of that type, or change the annotation"
)
_BAD_NONE_DEFAULT: Final = (
    "default None of {subject} does not fit its annotation '{ann}'; "
    "make it optional: '{name}: {optional} = None'"
)
_NO_LITERAL: Final = (
    "default {value!r} of {subject} cannot be written in a schema, which has no {what} "
    "literals; default to None ('{name}: {optional} = None') and pick the value in the "
    "kernel"
)
_UNFIT_DEFAULT: Final = (
    "default {value!r} of {subject} cannot be a schema default ({what}); default to None "
    "('{name}: {optional} = None') and pick the value in the kernel"
)
_UNRESOLVED: Final = (
    "{subject} is annotated '{ann}', which does not resolve in module {module} "
    "({error}); define or import the name there"
)
_BAD_PARAM_NAME: Final = (
    "{subject} is not an ASCII identifier, which a schema argument name must be; rename it"
)
_BAD_OP_NAME: Final = (
    "{name!r} is not an operator name; write 'op', 'op.overload' or 'ns::op.overload' "
    "with ASCII identifiers"
)
_NO_FN_NAME: Final = "{fn!r} has no usable __name__; pass the operator name, e.g. name='my_op'"
_NO_SIGNATURE: Final = "cannot read the signature of {fn!r} ({error}); pass a Python function"
_MUTATES_STR: Final = (
    "mutates_args takes parameter names or \"unknown\", not the string {value!r}; "
    "write mutates_args=[{value!r}]"
)
_MUTATES_UNKNOWN: Final = (
    "mutates_args names '{name}', but {fn}() has no parameter '{name}'; "
    "its parameters are: {names}"
)
_MUTATES_TWICE: Final = "mutates_args names '{name}' twice for {fn}(); name each mutated parameter once"
_MUTATES_NOT_TENSOR: Final = (
    "{subject} is in mutates_args but is annotated '{ann}'; only tensors (Tensor, "
    "Optional[Tensor], list[Tensor]) can be mutated; remove '{name}' from mutates_args"
)
# The reverse direction.
