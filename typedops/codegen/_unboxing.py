"""Static unboxing wrappers: what a dispatcher-free program interpreter calls.

Note [Static unboxing wrappers]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Write-up 004 (shared/seeds/) has the lite interpreter call, for each op, a generated
wrapper that picks a backend by static dispatch (the highest of the backends chosen at
generation time among the tensor arguments' key bits) and calls that backend's kernel --
its own, else the CompositeExplicitAutograd one, else the CompositeImplicitAutograd one,
as the static functional API does (_static.py). An op whose yaml entry keeps
``device_check: ExactSame`` first checks, when its key bits hold two backend keys, that
its tensors share one device, with the dispatcher's own check (Note [One device per call]
in dispatch/_entry.py): both flavors refuse what eager refuses. No dispatcher, no table,
no schema.

Each op gets two wrappers:

- the **unboxed** one, named as the op's handle (``add__Tensor(self, other, alpha)``),
  takes every argument positionally, in schema order -- keyword-only ones too, with no
  defaults: the program interpreter fills defaults at load time -- passes them to the
  kernel as its signature takes them, and returns what the kernel returns (a tuple for
  several returns). A lowered run calls it (Note [Lowered runs] in
  typedops/programs/_lowering.py): a call costs this one frame above the kernel's;
- the **boxed** one (``_boxed_add__Tensor(stack)``) calls the unboxed one on the stack's
  values (one per schema argument, in schema order) and leaves the returns on the stack,
  for the interpreter's stack loop.

The module registers both wrappers of each op by its full name in the runtime's table
(``typedops.runtime.register_static_wrappers``; ``static_wrapper(name)`` gives a
``StaticEntry``), the counterpart of the JIT op registry
in the write-up, which ``typedops.load(path, flavor="static")`` reads. The bundled core
library ships one for CPU and Meta (``typedops/core/_generated/unboxing.py``); a library
generated with ``--static-dispatch KEYS`` gets one for those keys.
"""

from __future__ import annotations

from ..vocabulary import BACKEND_KEYS
from ..dispatch import DispatchKey
from ..boxing import python_name
from ._layout import Group, layout
from ._model import OpEntry, Options
from ._registration import kernel_modules
from ._static import bits_expr, kernel_for
from ._text import Section, module_text, runtime

__all__ = ["unboxing_module"]

_BACKENDS = sum(1 << k for k in BACKEND_KEYS)


def _device_check(entry: OpEntry, bits: list[str], names: list[str]) -> list[str]:
    """An ExactSame op's check that its tensors share one device, made as the dispatcher
    makes it (Note [One device per call] in dispatch/_entry.py) when its key bits hold two
    backend keys: an op that can take two or more tensors only."""
    if not entry.device_check or (len(bits) < 2 and not any("_list_bits" in b for b in bits)):
        return []
    refs = [names[i] for i, a in enumerate(entry.schema.arguments) if bits_expr(a.type, "") is not None]
    tensors = ", ".join(refs) + ("," if len(refs) == 1 else "")
    return [
        f"    if _b & {_BACKENDS} & ((_b & {_BACKENDS}) - 1):  # tensors of two devices",
        f"        _b = _one_device({entry.schema.full_name!r}, _b, ({tensors}))",
    ]


def _unboxed(entry: OpEntry, backends: tuple[DispatchKey, ...], modules: dict[str, str]) -> list[str]:
    """The op's unboxed static wrapper: every argument positionally, in schema order."""
    schema = entry.schema
    names = [python_name(a.name) for a in schema.arguments]
    positional = len(schema.positional)
    args = names[:positional] + [f"{n}={n}" for n in names[positional:]]
    bits = [e for a, n in zip(schema.arguments, names) if (e := bits_expr(a.type, n)) is not None]
    device = next((n for a, n in zip(schema.arguments, names) if a.name == "device"), None)
    lines = ["", ""]
    lines += layout(Group(f"def {entry.attr_name}(", tuple(f"{n}: Any" for n in names)), suffix=" -> Any:")
    lines.append(f"    # {schema.full_name}")
    if bits:
        lines.append(f"    _b = {' | '.join(bits)}")
        lines += _device_check(entry, bits, names)
    elif device is not None:
        lines.append(f"    _b = _device_bits({device})")
    else:
        lines.append(f"    _b = {1 << DispatchKey.CPU}")
    for backend in sorted(backends, reverse=True):
        kernel = kernel_for(entry, backend)
        if kernel is None:
            continue
        keys = [f"_DispatchKeySet.from_bits({1 << backend})"] if kernel.with_keys else []
        lines.append(f"    if _b & {1 << backend}:  # {backend.name}")
        lines += layout(Group(f"return {modules[kernel.ref.module]}.{kernel.ref.attribute}(", (*keys, *args)), "        ")
    names_of_backends = ", ".join(b.name for b in backends)
    lines.append(f"    raise _no_static_kernel({schema.full_name!r}, _b, {names_of_backends!r})")
    return lines


def _boxed(entry: OpEntry) -> list[str]:
    """The op's boxed static wrapper: its unboxed one on the stack's values."""
    returns = len(entry.schema.returns)
    call = f"{entry.attr_name}(*stack)"
    if returns == 0:
        body = [f"    {call}", "    stack.clear()"]
    else:
        body = [f"    stack[:] = ({call},)" if returns == 1 else f"    stack[:] = {call}"]
    return ["", "", f"def {_boxed_name(entry)}(stack: list[Any]) -> None:", *body]


def _boxed_name(entry: OpEntry) -> str:
    return f"_boxed_{entry.attr_name}"


def unboxing_module(entries: list[OpEntry], options: Options, backends: tuple[DispatchKey, ...]) -> str:
    """The module of static unboxing wrappers for ``entries`` over ``backends`` (Note
    [Static unboxing wrappers]); importing it registers them."""
    entries = [e for e in entries if e.defines and e.kernels]
    modules = kernel_modules(entries)
    imports = [
        *runtime(
            "Any", "list_bits as _list_bits", "device_bits as _device_bits", "no_static_kernel as _no_static_kernel",
            "one_device as _one_device",
            "DispatchKeySet as _DispatchKeySet", "register_static_wrappers as _register_static_wrappers",
        ),
        *(f"import {module} as {alias}" for module, alias in modules.items()),
    ]
    names = ", ".join(b.name for b in backends)
    lines = [f"# -- each op's unboxed and boxed static wrapper, dispatch to {names}"]
    for entry in entries:
        lines += _unboxed(entry, backends, modules)
        lines += _boxed(entry)
    table = "".join(f"\n    {e.schema.full_name!r}: ({_boxed_name(e)}, {e.attr_name})," for e in entries)
    lines += ["", "", f"_register_static_wrappers({names!r}, {{{table}\n}})"]
    what = (
        f"static unboxing wrappers (dispatch to {names}) for the program interpreter's dispatcher-free "
        "flavor; importing this module registers them (Note [Static unboxing wrappers] in typedops/codegen/_unboxing.py)"
    )
    return module_text(options, what, [Section(imports, lines)])
