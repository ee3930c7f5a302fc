"""The schema layer's messages, in one place (``Final`` format strings, mypy's
``message_registry`` is the model): each named for what went wrong, formatted only when
the error is raised. Schema inference comes first (its names keep their leading ``_``),
then the schema model, parsing and Python signatures."""

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
ERROR_AND_TYPE: Final = "{kind}: {error}"
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

# -- signatures from schemas (the reverse direction) --------------------------------------------
_NO_PYTHON_FORM: Final = (
    "{subject} of {schema} has type '{type}', which has no Python form; "
    f"signatures can be made for {_SUPPORTED}"
)
_SIZED_RETURN: Final = (
    "the return of {schema} has type '{type}', which has no Python form: a tuple return "
    "annotation means several returns; return 'list[...]' instead"
)
_NO_PYTHON_DEFAULT: Final = (
    "argument '{name}' of {schema} has default {text}, which is no value of type '{type}'"
)
_VARARG_SCHEMA: Final = "{schema} takes or returns '...', which a typed Python signature cannot"
_DEFAULT_ORDER: Final = (
    "argument '{name}' of {schema} has no default but follows one that has, which a "
    "Python signature allows only for keyword-only parameters"
)
_PYTHON_KEYWORD: Final = "argument '{name}' of {schema} is a Python keyword, so it cannot name a parameter"
ARGUMENT_SUBJECT: Final = "argument '{name}'"
THE_RETURN: Final = "the return"
NUMBERED_RETURN: Final = "return {index}"

# -- the tensor class --------------------------------------------------------------------------
_NOT_REGISTERED: Final = (
    "no tensor class is registered with the schema layer; import typedops (or "
    "typedops.tensor) before inferring schemas or boxing values"
)
NOT_REGISTERED_TWICE: Final = "the tensor class is already registered as {name}"

# -- the schema model ----------------------------------------------------------------------------
# The order rules of an argument list, as torch's parser enforces them.
DEFAULT_BEFORE_REQUIRED: Final = (
    "argument {name!r} has no default but follows {prev!r}, which has one; give {name!r} "
    "a default or make it keyword-only (after '*')"
)
# torch reads an alias annotation after the base type or a list suffix, not after '?'.
ALIAS_AFTER_OPTIONAL: Final = (
    "an alias annotation cannot follow '?'; write it after the base type, as in 'Tensor(a!)?'"
)
ALIAS_AFTER_OPTIONAL_AT: Final = ALIAS_AFTER_OPTIONAL + " (alias depth {depth} of type {type})"
VARARGS_WITH_DEFAULT: Final = (
    "'...' cannot follow arguments with defaults ({prev!r} has one); varargs take every "
    "argument by position"
)
ALIAS_TOO_DEEP: Final = "alias depth {depth} is deeper than the {count} '?'/'[]' suffixes of type {type}"
NOT_AN_IDENTIFIER: Final = "{kind} {name!r} is not an ASCII identifier"
NOT_A_LITERAL: Final = (
    "default {default!r} of argument {name!r} is not a schema literal; build it with "
    "typedops.schema.format_literal(value)"
)
LIST_DEFAULT_SPACING: Final = (
    "list default {default!r} of argument {name!r} is not in canonical spacing; write {canonical}"
)
DEFAULT_DOES_NOT_FIT: Final = "default {default} does not fit type '{type}' of argument {name!r}: {problem}"
NO_DEFAULT: Final = "argument {name!r} has no default"
ARGUMENT_TWICE: Final = "argument {name!r} appears twice in {schema}"
RETURN_NAME_TWICE: Final = "two returns of {schema} have the same name"
VARRET_WITH_RETURNS: Final = "a schema with '...' returns cannot also list returns"
NO_SUCH_ARGUMENT: Final = "{schema} has no argument {name!r} (it has: {names})"

# -- types -----------------------------------------------------------------------------------------
ALIAS_WITHOUT_NAMES: Final = "AliasInfo needs at least one alias set name in 'before'"
BAD_ALIAS_SET_NAME: Final = "alias set name {name!r} is not an identifier or '*'"
UNKNOWN_BASE_TYPE: Final = "unknown base type {name!r}; use one of {names}"
BAD_TYPE_VARIABLE: Final = "type variable {name!r} must be an ASCII identifier starting lower-case"
BUILTIN_TYPE_VARIABLE: Final = "{name!r} is a built-in type, not a type variable"
RESERVED: Final = "{name!r} is a reserved word of the schema language; it cannot name {what}"
BAD_CLASS_TYPE: Final = (
    "class type {name!r} must be a dotted path such as '__torch__.torch.classes.ns.Name'"
)
OPTIONAL_TWICE: Final = "'{elem}?' is optional twice; write '{elem}'"
NEGATIVE_LIST_SIZE: Final = "list size must be >= 0, not {size}"
EMPTY_TUPLE_TYPE: Final = "a tuple type needs at least one element type"

# -- default literals ------------------------------------------------------------------------------
_NO_DEFAULT: Final = "type '{name}' takes no default{but_none}"
_TYPE_VAR_DEFAULT: Final = "type variable '{name}' takes no default{but_none}{hint}"
_LONE_UNSIZED: Final = (
    "a lone value fits only a sized list such as '{elem}[2]'; write a list, as in [{text}]"
)
_NO_LIST_DEFAULT: Final = "a list of '{elem}' takes no list default{but_none}"
# torch's parser reads a list literal for a list, but not for an optional list.
_OPTIONAL_LIST: Final = "an optional list takes None or a lone value, not a list literal"
_INT_RANGE: Final = "integer {text} does not fit in 64 bits"
_FLOAT_RANGE: Final = "float {text} is out of range"
NO_SCHEMA_DEFAULT: Final = (
    "cannot write {value!r} of type {kind} as a schema default; "
    "use None, a bool, int, float, str, EnumDefault or a tuple of those"
)
NO_VALUE_OF_TYPE: Final = "{value} is no {type}"
SIZED_LIST_NEEDS: Final = "{type} needs {size} elements"
LONE_VALUE_UNSIZED: Final = "a lone value needs a sized list type to be broadcast"

# -- parsing ---------------------------------------------------------------------------------------
AT_COLUMN: Final = "{reason} (column {column})"
NOT_SCHEMA_TEXT: Final = "parse_schema() takes schema text (str), not {kind}"
_UNCLOSED_STRING: Final = "string default has no closing quote"
_UNCLOSED_LIST: Final = "list default has no closing ']'"
_BAD_ESCAPE: Final = (
    "unknown escape '{escape}' in a string default; the escapes are \\a \\b \\f \\n \\t \\v "
    "\\\\ \\' \\\" and octal \\000 to \\377"
)
_NESTED_LIST: Final = "list defaults do not nest; write a flat list such as [1, 2]"
_TOO_DEEP: Final = "types nest more than {depth} deep; a schema type nests a few levels at most"
_UNCLOSED_SUFFIX: Final = "'[' is not closed; a list suffix is '[]' or '[N]'"
_BAD_SIZE: Final = "a list size must be a whole number, as in 'int[2]', not {tok}"
_BIG_SIZE: Final = "a list size must fit in 64 bits, not {tok}"

# -- parse errors (the parser adds the column and a caret line) -----------------------------------
EXPECTED_OPERATOR_NAME: Final = "expected an operator name, found {found}"
NAMESPACE_NOT_ONE_IDENTIFIER: Final = "namespace {ns!r} must be one identifier"
EXPECTED_NAME_AFTER_NAMESPACE: Final = "expected an operator name after '::', found {found}"
TWO_DOTS_IN_NAME: Final = "operator name {name!r} has more than one '.'; write name.overload"
EXPECTED_OVERLOAD_NAME: Final = "expected an overload name after '.', found {found}"
EXPECTED_OPEN_PAREN: Final = "expected '(' after the operator name, found {found}"
EXPECTED_ARROW: Final = "expected '->' and the returns, found {found}"
TEXT_AFTER_RETURNS: Final = "unexpected {found} after the returns"
STAR_TWICE: Final = "'*' appears twice; keyword-only arguments take one '*'"
STAR_WITHOUT_KWARGS: Final = "'*' must be followed by keyword-only arguments"
VARARGS_NOT_LAST: Final = "'...' must be the last argument"
EXPECTED_ARGUMENT_NAME: Final = "expected an argument name after type '{type}', found {found}"
ARGUMENT_NAME_TWICE: Final = "argument {name!r} appears twice; argument names must be unique"
TRAILING_COMMA: Final = "trailing ',' before ')'"
EXPECTED_ARGUMENT_END: Final = "expected ',' or ')' after argument {name!r}, found {found}"
RETURN_NAMED_TWICE: Final = "return name {name!r} appears twice"
EXPECTED_RETURN_END: Final = "expected ',' or ')' between returns, found {found}"
EXPECTED_DEFAULT: Final = "expected a default value for argument {name!r}, found {found}"
LONE_TYPE_ALIAS: Final = "a type on its own takes no alias annotation"
TEXT_AFTER_TYPE: Final = "unexpected {found} after the type"
EXPECTED_TYPE: Final = "expected a type, found {found}"
OPTIONAL_APPLIED_TWICE: Final = "'?' applied twice; '{type}' is already optional"
TWO_ALIAS_ANNOTATIONS: Final = "a type takes at most one alias annotation"
ALIAS_INSIDE: Final = "alias annotations inside {where} are not supported"
EXPECTED_TUPLE_END: Final = "expected ',' or ')' in tuple type, found {found}"
CONTAINER_NEEDS_PARENS: Final = "'{name}' needs its element types in parentheses, as in {example}"
EXPECTED_DICT_COMMA: Final = "expected ',' between the key and value types of Dict, found {found}"
EXPECTED_CONTAINER_END: Final = "expected ')' to close '{name}(', found {found}"
EXPECTED_ALIAS_END: Final = "expected ')' to close the alias annotation, found {found}"
EXPECTED_ALIAS_SET: Final = "expected an alias set name such as 'a' or '*', found {found}"
UNKNOWN_TYPE: Final = "unknown type {type}{hint}"
DID_YOU_MEAN_TYPE: Final = " (did you mean '{name}'?)"
BUILTIN_TYPES_ARE: Final = "; the built-in types are {names}"

# -- why a default literal does not fit its type (the parser and Argument add the argument) -------
NONE_NEEDS_OPTIONAL: Final = "only an optional type ('T?') takes None"
LIST_DEFAULT_NEEDS_LIST: Final = "a list default needs a list type"
BAD_LIST_ELEMENT: Final = "list element {item}: {problem}"
ONLY_NONE_DEFAULT: Final = "type '{type}' takes no default other than None"
NAMED_DEFAULTS_ARE: Final = "type '{name}' takes {allowed} as a named default"
ONE_OF_NAMES: Final = "one of {names}"
NO_BARE_NAMES: Final = "no bare names"
WRONG_LITERAL_KIND: Final = "type '{name}' takes {kinds} defaults, not {kind}"
DID_YOU_MEAN_DEFAULT_TYPE: Final = " (did you mean type '{name}'?)"
UNKNOWN_CLASS_TYPE: Final = "unknown type {type}; {problem}"
