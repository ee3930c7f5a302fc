"""The dispatcher's messages, in one place (``Final`` format strings, mypy's
``message_registry`` is the model): each named for what went wrong, formatted only when
the error is raised (never on a dispatch path)."""

from __future__ import annotations

from typing import Final

# -- finding operators ---------------------------------------------------------------------------
NO_SUCH_OPERATOR: Final = "no operator {name!r} is defined"
DID_YOU_MEAN: Final = "; did you mean {names}?"
NAMES_HAVE_NAMESPACES: Final = "{stop} Operator names include their namespace, as in 'myops::scale'."
NO_SUCH_OVERLOAD: Final = "{name} has no overload {overload!r}; it has: {overloads}"
NO_OVERLOAD_LEFT: Final = "operator {name} no longer has any overload"
NO_SUCH_NAMESPACE_OPERATOR: Final = "namespace {namespace!r} has no operator {name!r}{hint}"
OPERATOR_REMOVED: Final = (
    "operator {name} was removed (the library that defined it was closed); define it again "
    "(for an @op function: apply @op again) and {then} the new one"
)

# -- defining and registering ------------------------------------------------------------------
BAD_LIBRARY_KIND: Final = "Library kind must be one of {kinds}, not {kind!r}"
BAD_NAMESPACE: Final = "namespace {ns!r} must be an identifier (or '_' for fallbacks of every namespace)"
GLOBAL_NAMESPACE_IMPL_ONLY: Final = "namespace '_' takes only IMPL libraries, for fallbacks of every namespace"
SECOND_DEF_LIBRARY: Final = (
    "namespace {ns!r} already has a DEF library (created at {first}); "
    "add operators to it with Library({ns!r}, 'FRAGMENT')"
)
ALREADY_DEFINED: Final = (
    "operator {name} is already defined (at {source}) as {schema}; pick another overload name, "
    "e.g. '{qualified}.{overload}(...)'"
)
ALREADY_DEFINED_WHERE: Final = "operator {name} is already defined{where}"
DEFINED_TWICE_IN_BATCH: Final = " (twice in this batch)"
DEFINE_OTHER_NAMESPACE: Final = (
    "cannot define {name} in a library for namespace {ns!r}; drop the namespace or use Library({other!r}, ...)"
)
DEFINE_OTHER_NAMESPACE_UNCHECKED: Final = (
    "cannot define {name} in a library for namespace {ns!r}; use Library({other!r}, 'FRAGMENT')"
)
IMPL_CANNOT_DEFINE: Final = (
    "{library} is an IMPL library and cannot define operators; use Library({ns!r}, 'DEF') or 'FRAGMENT'"
)
IMPL_OTHER_NAMESPACE: Final = (
    "{library} registers kernels for namespace {ns!r}, not for {name}; use Library({other!r}, 'IMPL')"
)
KERNEL_TWICE: Final = (
    "{name} already has a {key} kernel (registered at {source}); pass allow_override=True to "
    "replace it while this registration lives, or remove the first one"
)
FALLBACK_TWICE: Final = (
    "{scope} already has a {key} fallback (registered at {source}); pass allow_override=True to replace it"
)
FALLBACK_NEEDS_KEY: Final = "{library} has no key; pass one: lib.fallback(fn, 'Tracer')"
FALLBACK_ALIAS_KEY: Final = "fallbacks are registered for runtime keys, not the alias key {key}"
FALLBACK_NOT_A_FUNCTION: Final = "a fallback is a function fn(op, keys, stack), not {kind}"
BOXED_NOT_A_FUNCTION: Final = "boxed() takes a function fn(op, keys, stack), not {kind}"
KERNEL_NOT_A_FUNCTION: Final = (
    "a kernel is a typed function, typedops.boxed(fn) or typedops.fallthrough, not {kind}"
)

# -- kernel signatures ---------------------------------------------------------------------------
WITH_KEYS_NO_PARAMETERS: Final = (
    "{name} is registered with_keys=True, so its first parameter receives the dispatch key set; "
    "it has no parameters"
)
SIGNATURE_MISMATCH: Final = "{what} {name} does not match {schema}:\n  {differences}"
MISSING_PARAMETER: Final = "argument {index} '{name}' ({type}): the {what} has no such parameter"
OTHER_PARAMETER_NAME: Final = "argument {index}: the schema calls it '{name}', the {what} '{got}'"
OTHER_PARAMETER_TYPE: Final = "argument '{name}': schema type {type}, {what} annotation gives {got}"
OTHER_DEFAULT: Final = "argument '{name}': {expected}, {got}"
OWNER_HAS_NO_DEFAULT: Final = "the {owner} has no default"
OWNER_DEFAULT_IS: Final = "the {owner}'s default is {default}"
EXTRA_PARAMETER: Final = "argument {index} '{name}' ({type}): the schema has no such argument"
KEYWORD_ONLY_IN_KERNEL: Final = "argument '{name}' is positional in the schema but keyword-only in the {what}"
POSITIONAL_IN_PROTOTYPE: Final = "argument '{name}' is keyword-only in the schema but positional in the prototype"
OTHER_RETURNS: Final = "returns: schema ({expected}), {what} ({got})"

# -- calls ---------------------------------------------------------------------------------------
NO_OVERLOAD_BINDS: Final = "no overload of {name} takes these arguments. Candidates:\n{reasons}"
CANDIDATE: Final = "  {schema}: {problem}"
BAD_TENSOR_ARGUMENT: Final = "{where}: argument '{name}' ({type}): {problem}"
BAD_TENSOR_SOMEWHERE: Final = "{op}: a tensor argument is not a Tensor"
BOXED_CALL: Final = "{op}.call_boxed()"
EXPECTED_TENSOR: Final = "expected a Tensor, got {got}"
EXPECTED_TENSOR_OR_NONE: Final = "expected a Tensor or None, got {got}"
EXPECTED_TENSOR_LIST: Final = "expected a list of Tensors, got {got}"
ELEMENT_NOT_TENSOR: Final = "element {index} is {got}, not a Tensor"
BAD_BOXED_ARGUMENT: Final = "{op}.call_boxed(): argument '{name}' ({type}): {problem}"
BAD_UNBOXED_ARGUMENT: Final = "{op}(): argument '{name}' ({type}): {problem}"
# An int too large for its argument (Note [Ints are int64] in boxing/_ivalue.py).
OVERFLOW_BOXED: Final = "{op}.call_boxed(): argument '{name}' ({type}): {problem}; pass {fix}"
OVERFLOW_UNBOXED: Final = "{op}(): argument '{name}' ({type}): {problem}; pass {fix}"
OVERFLOW_FIX_INT: Final = "an int within that range"
OVERFLOW_FIX_SCALAR: Final = "an int within that range, or a float"
STACK_TOO_LONG: Final = (
    "{op}.{entry}(): the stack holds {have} values, but the op takes {want} argument(s) "
    "({signature}); the stack must hold exactly the arguments"
)
STACK_MISSING: Final = "{op}.{entry}(): missing argument(s) {names}; the stack holds {have} value(s) for ({signature})"
EMPTY_TENSOR_LIST: Final = (
    "{op}: expected a non-empty list of Tensors for argument '{arg}' (with no tensor, the call "
    "has nothing to dispatch on); pass at least one tensor"
)
NO_DISPATCH_KEY: Final = (
    "{op} was called with no dispatch key: it has no tensor arguments and no BackendSelect, "
    "CompositeExplicitAutograd or CompositeImplicitAutograd kernel. Kernels are registered "
    "for: {names}. Register one, e.g. lib.impl({name!r}, fn, 'CompositeExplicitAutograd')."
)
NO_KERNEL: Final = (
    "{op} has no kernel for dispatch key {key} (computed key set: {keys!r}). Kernels are "
    "registered for: {names}. Register one with lib.impl({name!r}, fn, {key!r}), or a "
    "fallback with Library('_', 'IMPL').fallback(fn, {key!r})."
)
MIXED_DEVICES: Final = (
    "Expected all tensors to be on the same device, but found at least two devices, {a} and {b}! "
    "({op} takes tensors of one device; move them to one device first)"
)
ONE_KEY_LIBRARY: Final = (
    "{library} registers for {own} only, not {key}; omit the key, or register through "
    "Library({ns!r}, 'IMPL', {key!r})"
)
SCOPED_FALLBACK_TAKEN: Final = (
    "{user} serves the {key} key with its own fallback, but {error}. "
    "Remove that fallback (or leave its Library block) before using {user}"
)
AUTOGRAD_NOT_LOADED: Final = 'register_autograd needs the autograd layer: import typedops.autograd first'
BATCHING_NOT_LOADED: Final = 'register_vmap needs the batching layer: import typedops (or typedops.batching) first'
