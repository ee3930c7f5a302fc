"""Generated dispatch entry points: the code every operator call runs.

For each op four functions are generated (per signature shape, see Note [Wrapper cache]):

- ``call(*schema args)``: the unboxed entry. It ORs the key sets of exactly the
  tensor-bearing arguments (their positions are known from the schema), adds the global
  include set, applies the thread-local sets only if some thread has them open (Note
  [Thread-local keys]), masks out fallthrough keys, and calls the slot of the highest
  key -- passing the key set first to kernels that take it (boxed kernels through their
  boxing wrapper, unboxed ones registered ``with_keys``).
- ``redispatch(keys, *args)``: the same, continuing below the highest key of ``keys``.
- ``call_boxed(stack)`` and ``redispatch_boxed(keys, stack)``: the boxed path, reading
  the tensor arguments off the stack at the same schema positions.

When ``TYPEDOPS_SHOW_DISPATCH_TRACE=1`` is set at import, the generated code also prints
each dispatch (see _trace.py); otherwise it contains no tracing at all.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Final, NamedTuple, TypeVar

from typing_extensions import assert_never

from ..vocabulary import BACKEND_KEYS, NUM_RUNTIME_KEYS, ArgumentError, BoundedCache, Device, Layout, MemoryFormat
from ..vocabulary import ScalarType, TensorError, TypedopsError
from ..tensor import backend_key_for_device
from ..boxing import ArgCheck, CallShape, CheckKind, TensorUse
from ..boxing import bad_returns, install, mismatch, positional_names, renamed, wrong_tuple
from ..tensor import tensors_in
from ._messages import MIXED_DEVICES
from ._arguments import boxed_argument_error, check_overflow, explain_bad_tensors, fill_stack_defaults, fix_arguments
from ..vocabulary import DispatchKey
from ._trace import TRACE_ENABLED, traced_call, traced_call_boxed
from ._tls import keep_flag_in, local_sets

if TYPE_CHECKING:
    from ._operator import OperatorEntry

__all__ = [
    "make_entries", "entry_source", "GLOBAL_INCLUDE", "check_devices", "one_device", "DEVICE_HINT_SHIFT",
    "selects_backend_by_device", "backend_by_device",
]  # fmt: skip

# Keys every call's key set includes (ops with no tensor argument pick their backend at
# BackendSelect; every other op falls through it).
GLOBAL_INCLUDE: Final = 1 << DispatchKey.BackendSelect

# Note [Factories in one hop]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~
# A factory (no tensor argument) is called with the key set {BackendSelect}; its
# BackendSelect kernel reads ``device`` and redispatches to that device's backend -- a
# second pass through an entry function and a slot cache, the larger part of a small
# ``zeros``. PyTorch's generated BackendSelect kernels compute that key from the
# arguments in one line of C++. Here a BackendSelect kernel marked
# ``selects_backend_by_device`` promises to do nothing else: redispatch the same op to
# the backend of ``device`` (None: CPU, the default device). So the unboxed entry of an
# op with no tensor argument and a keyword-only ``Device? device`` puts the backend of
# ``device`` into the bits it looks up as a *hint*: the backend's key bit shifted above
# every runtime key (``DEVICE_HINT_SHIFT``), which no key set holds and every table mask
# clears. A slot cache that meets a hint in a call whose chosen slot is such a marked
# BackendSelect kernel serves the call with the slot of the hinted backend's keys alone,
# what the kernel's redispatch would reach; in every other case (no marked kernel, a
# key above BackendSelect from the context's include set, BackendSelect excluded) the
# hint changes nothing. The hint is computed after the argument checks; a device no
# backend serves gives no hint, and the kernel reports it as before. Boxed calls,
# redispatches and traced entries take the two hops.
#
# Such an entry starts its key set after the checks, as one literal when ``device`` is
# None (``{BackendSelect}`` and the CPU hint: a constant of the code, where computing it
# made a new int object on every call, ~20 ns of a ~600 ns ``zeros``), and then applies
# the context's include and exclude sets. The order makes no difference: those sets hold
# runtime keys only, below every hint bit.
DEVICE_HINT_SHIFT: Final = NUM_RUNTIME_KEYS
_NO_DEVICE_HINT: Final = 1 << (DEVICE_HINT_SHIFT + DispatchKey.CPU)
_SELECTORS: Final[weakref.WeakSet[Callable[..., Any]]] = weakref.WeakSet()
_F = TypeVar("_F", bound=Callable[..., Any])


def selects_backend_by_device(fn: _F) -> _F:
    """Mark a BackendSelect kernel that only redispatches its op to the backend of its
    ``device`` argument (None: CPU), so unboxed calls may go there directly (Note
    [Factories in one hop]). Returns ``fn``."""
    _SELECTORS.add(fn)
    return fn


def backend_by_device(fn: Callable[..., Any]) -> bool:
    """Whether ``fn`` is marked ``selects_backend_by_device``."""
    return fn in _SELECTORS


def _device_hint(device: Any) -> int:
    """The hint bits for ``device`` (a Device or its text), or 0 when no backend serves it."""
    try:
        backend = backend_key_for_device(Device.parse(device))
    except (TypedopsError, KeyError, AttributeError, TypeError):
        return 0
    return 1 << (DEVICE_HINT_SHIFT + backend)


def _device_hinted(shape: CallShape) -> str | None:
    """The name of the ``device`` argument whose backend the unboxed entry of ``shape``
    hints (Note [Factories in one hop]), or None."""
    if any(a.tensors is not TensorUse.none for a in shape.args):
        return None
    for a in shape.kwarg_only:
        if a.name == "device" and a.check.kind is CheckKind.device:
            return a.name
    return None


# Note [One device per call]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~
# The key set of a call whose tensors sit on two devices holds two backend keys, and the
# higher one wins: a CPU tensor added in place to a meta tensor got the Meta kernel,
# which wrote NaNs over real data. PyTorch checks devices in the wrappers its code
# generator writes around each op of native_functions.yaml (``device_check: ExactSame``,
# the default; ``NoCheck`` for ops such as ``copy_`` that move data between devices),
# and not for custom ops. typedops does the same: an op marked with ``check_devices``
# (generated registration marks every ExactSame op of its yaml) is checked by its entry
# points. An entry whose op can take two or more tensors tests, after computing the key
# set, whether it holds more than one backend key (an AND and a tuple index:
# ``_SEVERAL_BACKENDS``). Only then does it look at the op and the tensors: as in PyTorch, a 0-dim CPU
# tensor may join tensors of another device (it acts as a number), and its CPU keys are
# dropped; any other mix raises PyTorch's "Expected all tensors to be on the same
# device" error, naming the op. Unchecked ops dispatch to the highest backend key, as
# the dispatcher always has (and as PyTorch's dispatcher does).
_BACKENDS: Final = sum(1 << k for k in BACKEND_KEYS)
# Whether the backend bits ``bits & _BACKENDS`` hold more than one key, by those bits: the
# entries' two-device test is one ``&`` and a tuple index (four int operations spelled
# out, ``b & m & ((b & m) - 1)``, cost ~18 ns more on every call of a two-tensor op).
assert _BACKENDS < 256, "the backend keys are the lowest few bits (Note [Key priority])"
_SEVERAL_BACKENDS: Final = tuple(bool(bits & _BACKENDS & ((bits & _BACKENDS) - 1)) for bits in range(_BACKENDS + 1))
_CPU_KEYS: Final = (1 << DispatchKey.CPU) | (1 << DispatchKey.AutogradCPU)


def _mixed_devices(op: OperatorEntry, bits: int, values: Iterable[Any], stack: list[Any] | None = None, filled: int = 0) -> int:
    """The key set of a call whose tensors carry two backend keys: without the CPU keys
    of 0-dim CPU tensors when the rest share one device, else PyTorch's error (a boxed
    call's stack is first given back as it came)."""
    if not op.device_check:
        return bits  # not a checked op (Note [One device per call]): the highest backend wins
    try:
        return one_device(op.full_name, bits, values)
    except TensorError:
        if stack is not None:
            _unfill(stack, filled)
        raise


def one_device(name: str, bits: int, values: Iterable[Any]) -> int:
    """The key bits ``bits`` of a call of the op ``name`` on ``values`` (tensors, lists of
    tensors, None) whose bits hold two backend keys, checked as an ExactSame op's (Note
    [One device per call]): without the CPU keys of 0-dim CPU tensors when the rest share
    one device, else PyTorch's error. Static unboxing wrappers call it too."""
    tensors = tensors_in(values)
    devices = list(dict.fromkeys(str(t.device) for t in tensors if not (t.device.type == "cpu" and not t.shape)))
    if len(devices) == 1 and devices[0] != "cpu":
        return bits & ~_CPU_KEYS
    every = list(dict.fromkeys(str(t.device) for t in tensors))
    if len(every) < 2:
        return bits  # one declared device (fake tensors keep theirs over meta storage)
    raise TensorError(MIXED_DEVICES.format(a=every[0], b=every[1], op=name))


def check_devices(*handles: Any) -> None:
    """Have each handle's op refuse tensors of several devices (0-dim CPU tensors aside), as
    PyTorch's generated wrappers do for ``device_check: ExactSame`` ops (Note [One device
    per call]); generated registration calls it for its yaml's ExactSame ops."""
    for handle in handles:
        handle._entry.device_check = True


def _may_mix(refs: list[tuple[str, TensorUse]]) -> bool:
    """Whether an op's arguments can hold tensors of two devices (Note [One device per call])."""
    uses = [use for _, use in refs if use is not TensorUse.none]
    return len(uses) > 1 or any(use in (TensorUse.list, TensorUse.optional_list) for use in uses)


def _list_bits(tensors: Iterable[Any]) -> int:
    bits = 0
    for t in tensors:
        bits |= t.key_bits
    return bits


def _optional_list_bits(tensors: Iterable[Any] | None) -> int:
    bits = 0
    if tensors is not None:
        for t in tensors:
            if t is not None:
                bits |= t.key_bits
    return bits


# Note [Generated names never meet argument names]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# The unboxed entries take the schema's arguments under their own names, and their bodies
# use names of ours: locals (``_b``, ``_ks``), ``make``'s parameter ``_op`` and globals
# of the generated namespace (``_apply``, ``_tls_active``...). A schema may name an
# argument ``_b`` too (any ASCII identifier is a valid argument name), and a parameter
# shadows any of ours, so the kernel would receive the key bits instead of the value.
#
# Positional arguments are not in the source at all: it calls them by placeholders
# (``_p0``...), and each op gets the compiled code with the placeholders renamed to its
# argument names (``renamed``, Note [Generated source]): in bytecode a local is a slot
# number, and globals and closure cells have tables of their own, so a parameter called
# ``_apply`` or ``_op`` shadows nothing, and a local of ours sharing its name is renamed
# in the copy. This keeps positional names out of the shape (Note [Wrapper cache]).
#
# Keyword-only arguments are in the source (the kernel is called with them by keyword).
# ``_Names`` holds the names the bodies use; for a shape whose keyword-only arguments
# take one of them, ``_names_for`` renames *ours* (never the user's) by appending '_'
# until free, and ``make`` binds each renamed global or parameter to its new name first.
# The flag ``_tls_active`` changes at run time, so a renamed one is read through the
# namespace. Placeholders avoid both kinds of names the same way.
class _Names(NamedTuple):
    op: str = "_op"
    b: str = "_b"
    ks: str = "_ks"
    tls: str = "_tls_active"
    sets: str = "_tls_sets"
    s: str = "_s"
    bad_args: str = "_op_bad_args"
    list_bits: str = "_list_bits"
    optional_list_bits: str = "_optional_list_bits"
    traced: str = "_traced"
    mixed: str = "_mixed_devices"
    several: str = "_SEVERAL_BACKENDS"
    fix: str = "_op_fix_args"
    overflow: str = "_op_overflow"
    fits: str = "_fits"
    scalars: str = "_SCALARS"
    complexes: str = "_COMPLEXES"
    ints: str = "_INTS"
    scalar_type: str = "_ScalarType"
    layout: str = "_Layout"
    memory_format: str = "_MemoryFormat"
    device: str = "_Device"
    device_hint: str = "_device_hint"


_DEFAULT_NAMES: Final = _Names()


def _names_for(shape: CallShape) -> _Names:
    taken = {a.name for a in shape.args}
    if taken.isdisjoint(_DEFAULT_NAMES):
        return _DEFAULT_NAMES
    chosen: list[str] = []
    for name in _DEFAULT_NAMES:
        while name in taken:
            name += "_"
        taken.add(name)
        chosen.append(name)
    return _Names(*chosen)


def _source_names(shape: CallShape, names: _Names) -> tuple[str, ...]:
    """The name each argument of ``shape`` has in the source: a placeholder for a
    positional one, its own for a keyword-only one (Note [Generated names never meet
    argument names])."""
    taken = {a.name for a in shape.kwarg_only} | set(names)
    result: list[str] = []
    for index, arg in enumerate(shape.args):
        if arg.kwarg_only:
            result.append(arg.name)
            continue
        name = f"_p{index}"
        while name in taken:
            name += "_"
        result.append(name)
    return tuple(result)


def _renames(names: _Names) -> list[str]:
    """``make``'s first lines: bind each renamed name of ours (Note [Generated names never
    meet argument names])."""
    lines: list[str] = []
    for field, new, old in zip(_Names._fields, names, _DEFAULT_NAMES):
        if new != old and field not in ("b", "ks", "s"):  # those three are the entries' own locals
            lines.append(f"    {new} = {'_entry_globals' if old == '_tls_active' else old}")
    return lines


def _tls_test(names: _Names) -> str:
    return f"{names.tls}['_tls_active']" if names.tls != _DEFAULT_NAMES.tls else names.tls


def _extract(use: TensorUse, ref: str, names: _Names = _DEFAULT_NAMES) -> str | None:
    if use is TensorUse.tensor:
        return f"{ref}.key_bits"
    if use is TensorUse.optional:
        return f"({ref}.key_bits if {ref} is not None else 0)"
    if use is TensorUse.list:
        return f"{names.list_bits}({ref})"
    if use is TensorUse.optional_list:
        return f"{names.optional_list_bits}({ref})"
    return None


def _local_lines(names: _Names) -> list[str]:
    """Apply this context's include and exclude sets to ``_b`` when some block is open
    anywhere: the sets' getter is read in line (``_s`` is the tuple of Note
    [Order-independent exits]) rather than through a function, which would add a frame
    to every call made under a block (dispatch modes, ``no_grad``, profiling)."""
    b, s = names.b, names.s
    return [
        f"        if {_tls_test(names)}:",
        f"            {s} = {names.sets}()",
        f"            {b} = ({b} | {s}[0]) & ~{s}[1]",
    ]


def _key_lines(
    refs: list[tuple[str, TensorUse]], on_error: str, names: _Names = _DEFAULT_NAMES, *, boxed: bool = False
) -> list[str]:
    parts = [e for ref, use in refs if (e := _extract(use, ref, names)) is not None]
    b = names.b
    if not parts:
        return [f"        {b} = {GLOBAL_INCLUDE}", *_local_lines(names)]
    lines = [
        "        try:",
        f"            {b} = {' | '.join(parts)} | {GLOBAL_INCLUDE}",
        "        except (AttributeError, TypeError):",
        f"            raise {on_error} from None",
    ]
    if _may_mix(refs):
        tensor_refs = ", ".join(ref for ref, use in refs if use is not TensorUse.none)
        lines += [
            f"        if {names.several}[{b} & {_BACKENDS}]:",
            f"            {b} = {names.mixed}({names.op}, {b}, ({tensor_refs},){', stack, _filled' if boxed else ''})",
        ]
    return lines + _local_lines(names)


# Note [Direct boxed calls]
# ~~~~~~~~~~~~~~~~~~~~~~~~~
# call_boxed has already unpacked and checked the arguments, and the stack holds exactly
# them. So when no argument is list-typed (lists may need converting to the kernel's own
# sequence type, which the unboxing wrapper does), it calls the op's *unboxed* slot with
# the unpacked values and writes the result back: one call instead of three (slot
# partial, unboxing wrapper, kernel). A boxed kernel reached this way runs through its
# boxing wrapper, so it still sees a stack of the arguments. redispatch_boxed always takes
# the boxed path: a fallback's stack may hold more than the call's arguments.
def _direct_boxed(shape: CallShape) -> bool:
    return not any(
        a.tensors in (TensorUse.list, TensorUse.optional_list) or a.check.kind in _NOT_DIRECT
        for a in shape.args
    )


_NOT_DIRECT: Final = (CheckKind.slow, CheckKind.int_list)  # may need converting for the kernel


def _exact_type_test(kind: CheckKind, v: str, n: _Names) -> str:
    """The exact-type test of a base-type check kind, on generated name ``v``."""
    if kind is CheckKind.int:
        return f"type({v}) is int"
    if kind is CheckKind.float:
        return f"(type({v}) is float or type({v}) is int)"
    if kind is CheckKind.bool:
        return f"type({v}) is bool"
    if kind is CheckKind.scalar:
        return f"type({v}) in {n.scalars}"
    if kind is CheckKind.complex:
        return f"type({v}) in {n.complexes}"
    if kind is CheckKind.str:
        return f"type({v}) is str"
    if kind is CheckKind.scalar_type:
        return f"type({v}) is {n.scalar_type}"
    if kind is CheckKind.layout:
        return f"type({v}) is {n.layout}"
    if kind is CheckKind.memory_format:
        return f"type({v}) is {n.memory_format}"
    if kind is CheckKind.device:
        return f"(type({v}) is {n.device} or type({v}) is str)"
    if kind is CheckKind.tensor or kind is CheckKind.none or kind is CheckKind.slow or kind is CheckKind.int_list:
        raise AssertionError(f"check kind {kind.name} is not an exact-type test")
    assert_never(kind)


def _check_expr(check: ArgCheck, index: int, ref: str, n: _Names = _DEFAULT_NAMES) -> str | None:
    """A fast *accept* test for an argument; None when nothing is to check."""
    kind = check.kind
    if kind is CheckKind.tensor or kind is CheckKind.none:
        return None
    if kind is CheckKind.slow:
        return f"{n.fits}({n.op}, {index}, {ref})"
    if kind is CheckKind.int_list:
        # Exact ints in a list or tuple. One or two of them (a shape, a dim list) are
        # tested item by item: about 40 ns, where the set test over map(type, ...) takes
        # about 130; longer lists take that C-level set and type test.
        items = (
            f"(len({ref}) == 1 and type({ref}[0]) is int)"
            f" or (len({ref}) == 2 and type({ref}[0]) is int and type({ref}[1]) is int)"
            f" or {n.ints}.issuperset(map(type, {ref}))"
        )
        test = f"((type({ref}) is list or type({ref}) is tuple) and ({items}))"
    else:
        test = _exact_type_test(kind, ref, n)
    return f"({ref} is None or {test})" if check.optional else test


# The check kinds whose schema defaults always pass their exact-type test: the schema
# parser makes ``Scalar alpha=1`` an int, ``bool keepdim=False`` a bool, and so on.
_DEFAULT_PASSES: Final = frozenset({
    CheckKind.int, CheckKind.float, CheckKind.bool, CheckKind.scalar, CheckKind.complex, CheckKind.str,
    CheckKind.scalar_type, CheckKind.layout, CheckKind.memory_format, CheckKind.device,
})  # fmt: skip


def _default_first(shape: CallShape, index: int, ref: str, test: str) -> str:
    """``test`` for argument ``index``, first asking whether the value is the argument's
    own default (``make``'s ``_d`` parameter), which passes: an identity test costs a
    third of a type test, and most calls leave ``alpha=1`` and the like as they are. Not
    for optional arguments (their default None is tested first already), nor for kinds
    whose default may need converting, nor when a keyword-only argument takes the name."""
    arg = shape.args[index]
    if not arg.has_default or arg.check.optional or arg.check.kind not in _DEFAULT_PASSES:
        return test
    default = f"_d{sum(a.has_default for a in shape.args[:index])}"
    if any(a.name == default for a in shape.kwarg_only):
        return test
    return f"({ref} is {default} or {test})"


def _value_checks(shape: CallShape, names: _Names, params: tuple[str, ...]) -> list[str]:
    """The unboxed entries' argument checks: exact-type accept tests, and when one fails,
    the full check, which converts what the schema converts (a lone int for ``int[1]``)
    or raises ``ArgumentError`` (Note [Unboxed calls check like boxed ones]). ``params``
    are the arguments' names in the source (``_source_names``)."""
    checked = [
        (i, p, _default_first(shape, i, p, test))
        for i, (a, p) in enumerate(zip(shape.args, params))
        if (test := _check_expr(a.check, i, p, names)) is not None
    ]
    if not checked:
        return []
    tests = " and ".join(test for _, _, test in checked)
    refs = "".join(f"{p}, " for _, p, _ in checked)
    indices = "".join(f"{i}, " for i, _, _ in checked)
    return [
        *_lone_int_lines(shape, params),
        f"        if not ({tests}):",
        f"            {refs}= {names.fix}({names.op}, ({indices}), ({refs}))",
    ]


# Note [A lone int for a sized list]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# A sized int list (``int[1] dim``) takes a lone int for the list of that many copies of
# it, as in PyTorch: ``x.sum(0)`` is ``x.sum([0])``. The full check (``fix_arguments``)
# converts it, at about 1.5 us a call; the unboxed entry converts an exact int itself
# first, one type test, and the list then passes the fast check. It builds what
# ``canonical`` builds, so the kernel receives the same value either way; anything
# else (a bool, which an int list refuses, or an int subclass) still takes the full check.
def _lone_int_lines(shape: CallShape, params: tuple[str, ...]) -> list[str]:
    lines: list[str] = []
    for a, p in zip(shape.args, params):
        if a.check.kind is CheckKind.int_list and a.check.size is not None:
            copies = f"[{p}]" if a.check.size == 1 else f"[{p}] * {a.check.size}"
            lines += [f"        if type({p}) is int:", f"            {p} = {copies}"]
    return lines


def entry_source(shape: CallShape, trace: bool) -> str:
    """Source of ``make(_op, *defaults)`` returning the four entry functions."""
    names = _names_for(shape)
    params = _source_names(shape, names)
    lines = [f"def make(_op{''.join(', ' + d for d in _defaults(shape))}):", *_renames(names)]
    lines += _call(shape, trace, names, params)
    lines += _redispatch(shape, trace, names, params)
    lines += _call_boxed(shape, trace)
    lines += _redispatch_boxed(shape, trace)
    lines += ["    return call, redispatch, call_boxed, redispatch_boxed", ""]
    return "\n".join(lines)


# -- pieces the four entry points share


def _defaults(shape: CallShape) -> list[str]:
    """The parameters of ``make`` that carry the defaults' values (``_d0``...), in argument order."""
    return [f"_d{i}" for i in range(sum(a.has_default for a in shape.args))]


def _signature(shape: CallShape, names: tuple[str, ...]) -> str:
    """The unboxed entries' parameters (``names``, see ``_source_names``), defaulted to
    ``make``'s ``_d`` parameters."""
    params: list[str] = []
    d = iter(_defaults(shape))
    star = False
    for arg, name in zip(shape.args, names):
        if arg.kwarg_only and not star:
            params.append("*")
            star = True
        params.append(f"{name}={next(d)}" if arg.has_default else name)
    return ", ".join(params)


def _unboxed_dispatch(shape: CallShape, trace: bool, label: str, names: _Names, params: tuple[str, ...]) -> list[str]:
    """Call the unboxed slot of the key set ``_b`` with the entry's own arguments."""
    op, b = names.op, names.b
    positional = [p for a, p in zip(shape.args, params) if not a.kwarg_only]
    if trace:
        kw = "{" + ", ".join(f"{a.name!r}: {a.name}" for a in shape.kwarg_only) + "}"
        return [f"        return {names.traced}({op}, {label!r}, {b}, ({''.join(p + ', ' for p in positional)}), {kw})"]
    call_args = ", ".join(positional + [f"{a.name}={a.name}" for a in shape.kwarg_only])
    return [f"        return {op}.cache[{b}]({call_args})"]


def _boxed_dispatch(trace: bool, label: str) -> list[str]:
    """Call the boxed slot of the key set ``_b`` on ``stack``."""
    if trace:
        return [f"        _traced_boxed(_op, {label!r}, _b, stack)"]
    return ["        _op.boxed_cache[_b](stack)"]


# The key set below the highest key of _ks. XOR clears the top bit, with int's own
# operator (it stays in C).
_BELOW: Final = "        {b} = {ks} ^ (1 << ({ks}.bit_length() - 1)) if {ks} else 0"


# -- the four entry points


def _call(shape: CallShape, trace: bool, names: _Names, params: tuple[str, ...]) -> list[str]:
    """``call(*schema args)``: key set from the tensor arguments, then the unboxed slot."""
    values = "(" + "".join(f"{p}, " for p in params) + ")"  # every argument, in schema order
    device = None if trace else _device_hinted(shape)
    if device is None:
        refs = [(p, a.tensors) for a, p in zip(shape.args, params)]
        keys = _key_lines(refs, f"{names.bad_args}({names.op}, {values})", names)
        head = [*keys, *_value_checks(shape, names, params)]
    else:  # no tensor argument: Note [Factories in one hop]
        head = [
            *_value_checks(shape, names, params),
            f"        {names.b} = {GLOBAL_INCLUDE | _NO_DEVICE_HINT} if {device} is None"
            f" else {GLOBAL_INCLUDE} | {names.device_hint}({device})",
            *_local_lines(names),
        ]
    return [
        f"    def call({_signature(shape, params)}):",
        *head,
        "        try:",
        *[f"    {line}" for line in _unboxed_dispatch(shape, trace, "call", names, params)],
        "        except Exception:",  # Note [Ints too large for their argument] in _arguments.py
        f"            {names.overflow}({names.op}, {values})",
        "            raise",
    ]


def _redispatch(shape: CallShape, trace: bool, names: _Names, params: tuple[str, ...]) -> list[str]:
    """``redispatch(keys, *schema args)``: the unboxed slot below the highest key of ``keys``."""
    sig = _signature(shape, params)
    return [
        f"    def redispatch({names.ks}{', ' if sig else ''}{sig}):",
        _BELOW.format(b=names.b, ks=names.ks),
        *_unboxed_dispatch(shape, trace, "redispatch", names, params),
    ]


def _call_boxed(shape: CallShape, trace: bool) -> list[str]:
    """``call_boxed(stack)``: defaults filled, arguments unpacked and checked, then the boxed
    slot -- or, where Note [Direct boxed calls] allows, the unboxed one."""
    n = len(shape.args)
    locals_ = [f"_a{i}" for i in range(n)]
    checks = [c for i, a in enumerate(shape.args) if (c := _check_expr(a.check, i, locals_[i])) is not None]
    lines = [
        "    def call_boxed(stack):",
        "        _filled = 0",
        f"        if len(stack) != {n}:",
        "            _filled = _arity(_op, stack)",
    ]
    if n:
        lines.append(f"        {', '.join(locals_)}, = stack")
    stack_refs = [(local, a.tensors) for local, a in zip(locals_, shape.args)]
    lines += _key_lines(stack_refs, "_op_bad_stack(_op, stack, _filled)", boxed=True)
    if checks:
        lines.append(f"        if not ({' and '.join(checks)}):")
        lines.append("            _check_stack(_op, stack, _filled)")
    if trace or not _direct_boxed(shape):
        tail = _boxed_dispatch(trace, "call_boxed")
        tail.append(f"        if len(stack) != {shape.returns}:")
        tail.append(f"            raise _bad_returns(_op, stack, {shape.returns})")
    else:
        tail = _direct_call(shape, locals_)
    return [
        *lines,
        "        try:",
        *[f"    {line}" for line in tail],
        "        except BaseException as _e:",
        f"            _boxed_failed(_op, stack, _filled, ({''.join(f'{v}, ' for v in locals_)}), _e)",
        "            raise",
    ]


def _direct_call(shape: CallShape, locals_: list[str]) -> list[str]:
    """call_boxed's unboxed slot call on the unpacked ``locals_``, its result written back to
    the stack (see Note [Direct boxed calls])."""
    local_args = ", ".join(
        [locals_[i] for i, a in enumerate(shape.args) if not a.kwarg_only]
        + [f"{a.name}={locals_[i]}" for i, a in enumerate(shape.args) if a.kwarg_only]
    )
    call = f"_op.cache[_b]({local_args})"
    if shape.returns == 0:
        return [f"        {call}", "        stack.clear()"]
    if shape.returns == 1:
        # clear() and append() cost less than a slice assignment (measured).
        return [f"        _r = {call}", "        stack.clear()", "        stack.append(_r)"]
    return [
        f"        _r = {call}",
        f"        if len(_r) != {shape.returns}:",
        f"            raise _wrong_tuple(_op, _r, {shape.returns})",
        "        stack.clear()",
        "        stack.extend(_r)",
    ]


def _redispatch_boxed(shape: CallShape, trace: bool) -> list[str]:
    """``redispatch_boxed(keys, stack)``: the boxed slot below the highest key of ``keys``.
    Omitted trailing defaults are filled, as call_boxed does; a longer stack is allowed (see
    Note [Direct boxed calls]: a fallback's stack may hold more than the arguments)."""
    return [
        "    def redispatch_boxed(_ks, stack):",
        f"        if len(stack) < {len(shape.args)}:",
        "            _arity(_op, stack, 'redispatch_boxed')",
        _BELOW.format(b="_b", ks="_ks"),
        *_boxed_dispatch(trace, "redispatch_boxed"),
    ]


def _bad_args(op: OperatorEntry, values: tuple[Any, ...]) -> ArgumentError:
    return explain_bad_tensors(op, {a.name: v for a, v in zip(op.schema.arguments, values)})


def _bad_stack(op: OperatorEntry, stack: list[Any], filled: int) -> ArgumentError:
    names = [a.name for a in op.schema.arguments]
    error = explain_bad_tensors(op, dict(zip(names, stack)), boxed=True)
    _unfill(stack, filled)
    return error


def _unfill(stack: list[Any], filled: int) -> None:
    """Take back the defaults a boxed call appended, so a refused call leaves the stack as given."""
    if filled:
        del stack[-filled:]


def _check_stack(op: OperatorEntry, stack: list[Any], filled: int) -> None:
    error = boxed_argument_error(op, stack)
    if error is not None:
        _unfill(stack, filled)
        raise error


def _boxed_failed(op: OperatorEntry, stack: list[Any], filled: int, values: tuple[Any, ...], error: BaseException) -> None:
    """call_boxed's kernel raised ``error`` on the arguments ``values``. Note [A failed
    boxed call keeps its arguments] (boxing/_wrappers.py): the kernel's failure gives the
    arguments back; take back the defaults this call filled in too. The error may come
    from an argument too large: Note [Ints too large for their argument] in _arguments.py."""
    if len(stack) == len(values):
        _unfill(stack, filled)
    if isinstance(error, Exception):
        check_overflow(op, values, boxed=True)


def _fits(op: OperatorEntry, index: int, value: Any) -> bool:
    return mismatch(op.schema.arguments[index].type, value) is None


def _arity(op: OperatorEntry, stack: list[Any], entry: str = "call_boxed") -> int:
    return fill_stack_defaults(op, stack, entry)


# One namespace for all generated entry code: the thread-local flag is kept current in
# it (see Note [Thread-local keys]).
_GLOBALS: Final[dict[str, Any]] = {
    "_tls_sets": local_sets,
    "_list_bits": _list_bits,
    "_optional_list_bits": _optional_list_bits,
    "_op_bad_args": _bad_args,
    "_op_bad_stack": _bad_stack,
    "_arity": _arity,
    "_bad_returns": bad_returns,
    "_wrong_tuple": wrong_tuple,
    "_check_stack": _check_stack,
    "_fits": _fits,
    "_op_fix_args": fix_arguments,
    "_op_overflow": check_overflow,
    "_boxed_failed": _boxed_failed,
    "_INTS": frozenset({int}),
    "_SCALARS": frozenset({int, float, bool, complex}),
    "_COMPLEXES": frozenset({int, float, complex}),
    "_ScalarType": ScalarType,
    "_Layout": Layout,
    "_MemoryFormat": MemoryFormat,
    "_Device": Device,
    "_traced": traced_call,
    "_mixed_devices": _mixed_devices,
    "_SEVERAL_BACKENDS": _SEVERAL_BACKENDS,
    "_traced_boxed": traced_call_boxed,
    "_device_hint": _device_hint,
}


_GLOBALS["_entry_globals"] = _GLOBALS  # for a renamed flag: Note [Generated names never meet argument names]
keep_flag_in(_GLOBALS)


# Compiled factories by shape, and their copies with the positional parameters renamed
# by (shape, names): both bounded (Note [Wrapper cache], Note [Generated source]).
_FACTORIES_LIMIT: Final = 1024
_factories: Final[BoundedCache[tuple[CallShape, bool], Callable[..., Any]]] = BoundedCache(
    _FACTORIES_LIMIT, "dispatch entry factories by shape"
)
# Renamed copies are cheap to make (no compilation) and ops of one library share their
# argument names (``self``, ``other``): a small cache serves them.
_named: Final[BoundedCache[tuple[CallShape, bool, tuple[str, ...]], Callable[..., Any]]] = BoundedCache(
    256, "dispatch entry factories by shape and positional names"
)


def _factory(shape: CallShape, trace: bool, positional: tuple[str, ...]) -> Callable[..., Any]:
    """``make`` for ``shape``, its entries taking the positional arguments as ``positional``."""
    key = (shape, trace, positional)
    known = _named.get(key)
    if known is not None:
        return known
    compiled = _factories.get((shape, trace))
    if compiled is None:
        source = entry_source(shape, trace)
        compiled = _factories.put((shape, trace), install(source, _GLOBALS, f"dispatch entry {shape.describe()}", "make"))
    placeholders = _source_names(shape, _names_for(shape))
    names = {p: n for p, n, a in zip(placeholders, positional, shape.args) if p != n and not a.kwarg_only}
    return _named.put(key, renamed(compiled, names))


def make_entries(op: OperatorEntry) -> tuple[Callable[..., Any], ...]:
    """The four entry functions for ``op``, from the compiled factory of its shape."""
    make = _factory(op.shape, TRACE_ENABLED, positional_names(op.schema))
    functions: tuple[Callable[..., Any], ...] = make(op, *op.defaults)
    call = functions[0]
    call.__name__ = call.__qualname__ = op.schema.name
    return functions
