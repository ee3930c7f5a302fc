"""The code generator's messages, in one place (``Final`` format strings, mypy's
``message_registry`` is the model): each named for what went wrong, formatted only when
the error is raised. Messages about a yaml entry start with its ``file:line``."""

from __future__ import annotations

from typing import Final

# -- op yaml entries -----------------------------------------------------------------------------
NOT_A_LIST: Final = "{label}:{line}: an op yaml is a list of entries ('- func: ...'), not {kind}"
NOT_A_MAPPING: Final = "{label}:{line}: each entry is a mapping with a 'func:' field, not {kind}"
UNKNOWN_FIELD: Final = (
    "{label}:{line}: unknown field {field!r} (an entry has: func, variants, dispatch, with_keys, device_check, vmap)"
)
BAD_DEVICE_CHECK: Final = "{label}:{line}: device_check is NoCheck or ExactSame, not {value!r}"
VMAP_UNKNOWN_FAMILY: Final = "{label}:{line}: vmap: unknown batching rule family {name!r} (known: {known})"
VMAP_DOES_NOT_FIT: Final = "{label}:{line}: vmap: the batching rule family {name!r} does not fit {op}: {problem}"
VMAP_KERNELS_ONLY: Final = (
    "{label}:{line}: vmap: {op} is defined elsewhere; declare its batching rule on the entry that defines it"
)
MISSING_FUNC: Final = "{label}:{line}: entry has no 'func:' field; write 'func: name(Tensor self) -> Tensor'"
NOT_TEXT: Final = "{label}:{line}: '{field}' must be text, not {kind}"
DISPATCH_NOT_MAPPING: Final = "{label}:{line}: 'dispatch' maps keys to kernels ('CPU: my_kernel'), not {kind}"
BAD_SCHEMA: Final = "{label}:{line}: invalid schema: {reason}"
WRONG_NAMESPACE: Final = (
    "{label}:{line}: {name} is in namespace {ns!r} but this yaml generates namespace {want!r}; "
    "drop the namespace or pass --namespace {ns}"
)
KEYWORD_NAME: Final = "{label}:{line}: {what} {name!r} is a Python keyword; generated functions cannot use it"
DEFAULT_OVERLOAD: Final = (
    "{label}:{line}: overload name 'default' names the overload without a name; write '{name}(...)' "
    "instead of '{name}.default(...)'"
)
PRIVATE_ARGUMENT: Final = (
    "{label}:{line}: argument {argument!r} of {name} starts with '_', which generated code keeps for its own "
    "names (a parameter so named would shadow them); rename the argument"
)
DUPLICATE_OP: Final = "{label}:{line}: {name} is declared twice (first at line {first})"
NAME_CLASH: Final = (
    "{label}:{line}: {name} and {other} would both be named {attr!r} in generated code; rename an overload"
)
UNKNOWN_VARIANT: Final = "{label}:{line}: unknown variant {variant!r} (use function, method)"
METHOD_NEEDS_SELF: Final = (
    "{label}:{line}: {name} has variant 'method', so it needs a positional argument 'Tensor self'"
)
METHOD_REPLACES_TENSOR_ATTRIBUTE: Final = (
    "{label}:{line}: {name} has variant 'method', which would replace Tensor's own {attr!r} "
    "for every tensor; drop 'method' from its variants or rename the op"
)
UNKNOWN_KEY: Final = "{label}:{line}: unknown dispatch key {key!r}"
DUPLICATE_KEY: Final = "{label}:{line}: dispatch key {key} is given twice for {name}"
BAD_REFERENCE: Final = (
    "{label}:{line}: kernel reference {ref!r} must be an identifier (an attribute of the "
    "kernels module) or a dotted path 'package.module.function'"
)
NO_KERNELS_MODULE: Final = (
    "{label}:{line}: kernel reference {ref!r} is a bare name but no kernels module was "
    "given; pass --kernels MODULE or write 'package.module.{ref}'"
)
KERNEL_IMPORT: Final = "{label}:{line}: cannot import module {module!r} for kernel {ref!r}: {error}"
KERNEL_MISSING: Final = "{label}:{line}: module {module!r} has no kernel {attribute!r}"
KERNEL_NOT_FUNCTION: Final = (
    "{label}:{line}: kernel {ref!r} is {kind}, not a Python function defined in module {module!r}"
)
KERNEL_MISMATCH: Final = "{label}:{line}: kernel {ref!r} for {key} does not fit {name}: {reason}"
WITH_KEYS_UNUSED: Final = "{label}:{line}: with_keys names {key}, which has no kernel in 'dispatch:' of {name}"
NO_CORE_YAML: Final = (
    "{label}:{line}: {name} adds kernels to an existing op, but the core yaml {core} does not exist; "
    "pass --core-yaml PATH"
)
NO_SUCH_CORE_OP: Final = "{label}:{line}: {name} is not an operator of the core yaml {core}"
KERNELS_ONLY_NEEDS_DISPATCH: Final = (
    "{label}:{line}: {name} names an existing op without a schema, so it only adds kernels; "
    "give it a 'dispatch:' mapping (variants are not allowed)"
)
OP_LIST_ITEM: Final = "{label}:{line}: an op list holds names such as 'core::add.Tensor', not {kind}"
OP_LIST_UNKNOWN: Final = "{label}:{line}: {name} is not declared in {source}"

# -- the generator's options and its output ------------------------------------------------------
NOT_A_BACKEND_KEY: Final = "--static-dispatch: {name!r} is not a backend key (use some of {backends})"
BAD_NAMESPACE_OPTION: Final = "--namespace {namespace!r} must be an identifier such as 'core' or 'myops'"
FUNCTION_NAME_TAKEN: Final = (
    "{label}: op {op} cannot be a function named {name!r}: the generated module uses that name "
    "itself; rename the op, or drop 'function' from its variants"
)

# -- reading yaml --------------------------------------------------------------------------------
CANNOT_READ: Final = "{label}: cannot read the file ({error})"
MALFORMED_YAML_AT: Final = "{label}:{line}: malformed yaml: {problem}"
MALFORMED_YAML: Final = "{label}: malformed yaml: {error}"

# -- typedops stubgen and a yaml's methods -------------------------------------------------------
CANNOT_IMPORT: Final = "cannot import module {module!r}: {error}"
NOTHING_REGISTERED: Final = (
    "importing {modules} registered no operators outside the core namespace; name the modules that "
    "define your ops (with @op or Library), e.g. typedops stubgen mypkg.ops --out typings"
)
CORE_SKIPPED: Final = "{name}: ops added to the core namespace are not typed (core's stubs ship with typedops)"
UNTYPED_METHOD: Final = (
    "{label}:{line}: {name} has variant 'method', but without --stubs DIR type checkers cannot see "
    "the Tensor methods of a library other than core; pass --stubs DIR (see docs/operators.md), or drop "
    "'method' and call the functional API instead ({function}(x, ...))"
)
METHOD_SELF_NOT_FIRST_OVERLOADED: Final = (
    "{label}:{line}: {name} takes 'self' after {before}, so every overload of {base!r} with variant "
    "'method' must take it after the same arguments (not {other})"
)
VARARG_SCHEMA: Final = "{label}:{line}: {name} takes or returns '...', which generated functions cannot type"
NO_STUB_TYPE: Final = (
    "{label}:{line}: {subject} of {name} has type '{type}', which generated stubs cannot type "
    "(a type variable, Dict, Future, Any...); declare the op with Python's @op or define() instead"
)
SCHEMAS_ONLY_KERNELS_ONLY: Final = (
    "{label}:{line}: {name} only adds kernels to an existing op, and --schemas-only registers no kernels; "
    "drop the entry or the option"
)
SCHEMAS_ONLY_WITH: Final = "--schemas-only registers no kernels, so {option} has nothing to do; drop one of them"

# -- derivatives.yaml ------------------------------------------------------------------------------
DERIVATIVES_NOT_A_LIST: Final = "{label}:1: expected a list of '- name: ...' entries"
DERIVATIVE_NAME_NOT_TEXT: Final = "{label}:{line}: 'name' must be the op's schema text"
DERIVATIVE_NO_SUCH_OP: Final = '{label}:{line}: no op in the library has the schema {schema!r}'
OUTPUT_DIFFERENTIABILITY_LENGTH: Final = '{label}:{line}: output_differentiability must list one true/false per output ({count})'
FORMULA_NOT_TEXT: Final = '{where}: the formula for {input!r} must be an expression (text)'
FORMULA_NOT_ALLOWED: Final = '{where}: {what} is not allowed in a formula (see Note [Validated formulas])'
DERIVATIVE_NOT_A_MAPPING: Final = "{label}:{line}: each entry is a mapping with a 'name:' (the op's schema)"
DERIVATIVE_TWICE: Final = '{label}:{line}: {op} has two entries'
DERIVATIVE_NAME_NOT_A_SCHEMA: Final = "{label}:{line}: 'name' is not a schema: {error}"
DERIVATIVE_NOT_AN_ARGUMENT: Final = '{label}:{line}: {key!r} is not an argument of {op}'
DERIVATIVE_NO_GRADIENT: Final = '{label}:{line}: argument {key!r} of type {type} has no gradient'
FORMULA_NOT_PYTHON: Final = '{where}: the formula for {input!r} is not a Python expression: {error}'
DERIVATIVES_CORE_ONLY: Final = "{label}: derivatives are generated for the core library only (namespace 'core')"
PROGRAM_RUN_FAILED: Final = (
    "--ops-from {label}: running the program on fake tensors of its inputs' shapes, to find the ops its "
    "kernels call, failed: {error}; trace and save it again on inputs it runs on, or leave it out and "
    "name its ops with --ops"
)
