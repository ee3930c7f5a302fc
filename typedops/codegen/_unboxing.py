"""Static unboxing wrappers: what a dispatcher-free program interpreter calls.

Note [Static unboxing wrappers]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Write-up 004 (shared/seeds/) has the lite interpreter call, for each op, a generated
wrapper that takes the op's arguments off the boxed stack, picks a backend by static
dispatch (the highest of the backends chosen at generation time among the tensor
arguments' key bits) and calls that backend's kernel -- its own, else the
CompositeExplicitAutograd one, else the CompositeImplicitAutograd one, as the static
functional API does (_static.py) -- then leaves the returns on the stack. An op whose
yaml entry keeps ``device_check: ExactSame`` first checks, when its key bits hold two
backend keys, that its tensors share one device, with the dispatcher's own check (Note
[One device per call] in dispatch/_entry.py): both flavors refuse what eager refuses. No dispatcher,
no table, no schema: the stack holds one value per schema argument, in schema order (the
program interpreter fills defaults at load time), and the wrapper indexes it.

The module registers its wrappers by the ops' full names in the runtime's table
(``typedops.runtime.register_static_wrappers``), the counterpart of the JIT op registry
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


def _device_check(entry: OpEntry, bits: list[str]) -> list[str]:
    """An ExactSame op's check that its tensors share one device, made as the dispatcher
    makes it (Note [One device per call] in dispatch/_entry.py) when its key bits hold two
    backend keys: an op that can take two or more tensors only."""
    if not entry.device_check or (len(bits) < 2 and not any("_list_bits" in b for b in bits)):
        return []
    refs = [f"stack[{i}]" for i, a in enumerate(entry.schema.arguments) if bits_expr(a.type, "") is not None]
    tensors = ", ".join(refs) + ("," if len(refs) == 1 else "")
    return [
        f"    if _b & {_BACKENDS} & ((_b & {_BACKENDS}) - 1):  # tensors of two devices",
        f"        _b = _one_device({entry.schema.full_name!r}, _b, ({tensors}))",
    ]


def _wrapper(entry: OpEntry, backends: tuple[DispatchKey, ...], modules: dict[str, str]) -> list[str]:
    schema = entry.schema
    positional = len(schema.positional)
    args = [f"stack[{i}]" for i in range(positional)]
    args += [f"{python_name(a.name)}=stack[{positional + i}]" for i, a in enumerate(schema.kwarg_only)]
    bits = [e for i, a in enumerate(schema.arguments) if (e := bits_expr(a.type, f"stack[{i}]")) is not None]
    device = next((i for i, a in enumerate(schema.arguments) if a.name == "device"), None)
    lines = ["", "", f"def {entry.attr_name}(stack: list[Any]) -> None:", f"    # {schema.full_name}"]
    if bits:
        lines.append(f"    _b = {' | '.join(bits)}")
        lines += _device_check(entry, bits)
    elif device is not None:
        lines.append(f"    _b = _device_bits(stack[{device}])")
    else:
        lines.append(f"    _b = {1 << DispatchKey.CPU}")
    returns = len(schema.returns)
    for backend in sorted(backends, reverse=True):
        kernel = kernel_for(entry, backend)
        if kernel is None:
            continue
        keys = [f"_DispatchKeySet.from_bits({1 << backend})"] if kernel.with_keys else []
        call = Group(f"{modules[kernel.ref.module]}.{kernel.ref.attribute}(", (*keys, *args))
        lines.append(f"    if _b & {1 << backend}:  # {backend.name}")
        if returns == 0:
            lines += layout(call, "        ")
            lines += ["        stack.clear()", "        return"]
        else:
            prefix, suffix = ("stack[:] = (", ",)") if returns == 1 else ("stack[:] = ", "")
            lines += layout(call, "        ", prefix=prefix, suffix=suffix)
            lines.append("        return")
    names = ", ".join(b.name for b in backends)
    lines.append(f"    raise _no_static_kernel({schema.full_name!r}, _b, {names!r})")
    return lines


def unboxing_module(entries: list[OpEntry], options: Options, backends: tuple[DispatchKey, ...]) -> str:
    """The module of static unboxing wrappers for ``entries`` over ``backends`` (Note
    [Static unboxing wrappers]); importing it registers them."""
    entries = [e for e in entries if e.defines and e.kernels]
    modules = kernel_modules(entries)
    imports = [
        "from collections.abc import Iterable",
        *runtime(
            "Any", "Device as _Device", "keys_for_device as _keys_for_device", "no_static_kernel as _no_static_kernel",
            "one_device as _one_device",
            "DispatchKeySet as _DispatchKeySet", "register_static_wrappers as _register_static_wrappers",
        ),
        *(f"import {module} as {alias}" for module, alias in modules.items()),
    ]
    lines = [
        "def _list_bits(tensors: Iterable[Any]) -> int:",
        "    bits = 0",
        "    for t in tensors:",
        "        if t is not None:",
        "            bits |= t.key_bits",
        "    return bits",
        "",
        "",
        "def _device_bits(device: Any) -> int:",
        f"    return {1 << DispatchKey.CPU} if device is None else int(_keys_for_device(_Device.parse(device)))",
    ]
    for entry in entries:
        lines += _wrapper(entry, backends, modules)
    names = ", ".join(b.name for b in backends)
    table = "".join(f"\n    {e.schema.full_name!r}: {e.attr_name}," for e in entries)
    lines += ["", "", f"_register_static_wrappers({names!r}, {{{table}\n}})"]
    what = (
        f"static unboxing wrappers (dispatch to {names}) for the program interpreter's dispatcher-free "
        "flavor; importing this module registers them (Note [Static unboxing wrappers] in typedops/codegen/_unboxing.py)"
    )
    return module_text(options, what, [Section(imports, lines)])
