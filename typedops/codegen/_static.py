"""The static-dispatch flavor of the functional API: kernels called directly.

Each op becomes a function with the op's exact parameters that ORs the ``key_bits`` of
its tensor arguments, tests the backend bits chosen at generation time from the highest
priority down, and calls that backend's kernel (its own, else the
CompositeExplicitAutograd one, else the CompositeImplicitAutograd one) -- no dispatcher,
no table. A factory (no tensor arguments) takes its backend from a ``device`` argument,
else CPU. Defaults are the schema's, computed at import and bound as default arguments.
"""

from __future__ import annotations

from ..boxing import python_name
from ..dispatch import DispatchKey
from ..schema import BaseType, ListType, OptionalType, Type
from ._api import COMMON_IMPORTS, chooser_lines, group
from ._layout import Group, layout
from ._model import Kernel, OpEntry, Options, Variant
from ._registration import kernel_modules
from ._text import RETURN_TYPES_IMPORT, Section, all_names, named_result, runtime

__all__ = ["static_functions_section", "kernel_for", "bits_expr"]


def bits_expr(type_: Type, var: str) -> str | None:
    """The expression of the key bits of argument ``var`` of ``type_`` (None: it holds no tensor)."""
    if isinstance(type_, BaseType) and type_.name == "Tensor":
        return f"{var}.key_bits"
    if isinstance(type_, OptionalType) and type_.elem == BaseType("Tensor"):
        return f"({var}.key_bits if {var} is not None else 0)"
    if isinstance(type_, ListType) and type_.is_tensor_like():
        return f"_list_bits({var})"
    if isinstance(type_, OptionalType) and type_.is_tensor_like():
        return f"(_list_bits({var}) if {var} is not None else 0)"
    return None


def kernel_for(entry: OpEntry, backend: DispatchKey) -> Kernel | None:
    by_key = {k.key: k for k in entry.kernels}
    for key in (backend, DispatchKey.CompositeExplicitAutograd, DispatchKey.CompositeImplicitAutograd):
        if key in by_key:
            return by_key[key]
    return None


def _static_function(entry: OpEntry, fn_name: str, backends: tuple[DispatchKey, ...], modules: dict[str, str]) -> list[str]:
    schema = entry.schema
    params: list[str] = []
    defaults: list[str] = []
    for index, arg in enumerate(schema.arguments):
        name = python_name(arg.name)
        if index == len(schema.positional):
            params.append("*")
        if arg.has_default:
            default = f"_d_{fn_name}_{index}"
            defaults.append(f"{default} = _default_value({entry.attr_name}.schema.arguments[{index}])")
            params.append(f"{name}: Any = {default}")
        else:
            params.append(f"{name}: Any")
    call_args = [python_name(a.name) for a in schema.positional]
    call_args += [f"{python_name(a.name)}={python_name(a.name)}" for a in schema.kwarg_only]
    bits = [e for a in schema.arguments if (e := bits_expr(a.type, python_name(a.name))) is not None]
    lines = ["", "", *defaults, *(["", ""] if defaults else [])]
    lines += layout(Group(f"def {fn_name}(", tuple(params)), suffix=" -> Any:")
    if bits:
        lines.append(f"    _b = {' | '.join(bits)}")
    elif any(a.name == "device" for a in schema.arguments):
        lines.append("    _b = _device_bits(device)")
    else:
        lines.append(f"    _b = {1 << DispatchKey.CPU}")
    for backend in sorted(backends, reverse=True):
        kernel = kernel_for(entry, backend)
        if kernel is None:
            continue
        fn = f"{modules[kernel.ref.module]}.{kernel.ref.attribute}"
        keys = [f"_DispatchKeySet.from_bits({1 << backend})"] if kernel.with_keys else []
        lines.append(f"    if _b & {1 << backend}:  # {backend.name}")
        lines += layout(Group(f"return {fn}(", (*keys, *call_args)), "        ")
    names = ", ".join(b.name for b in backends)
    lines.append(f"    raise _no_static_kernel({schema.full_name!r}, _b, {names!r})")
    return lines


def static_functions_section(entries: list[OpEntry], options: Options) -> Section:
    """The functional API calling kernels directly, for ``options.static_dispatch`` backends."""
    groups = group(entries, Variant.function)
    # The registration section's aliases (numbered over every entry): the two sections
    # share one module, so one name must mean one kernel module.
    modules = kernel_modules(entries)
    backends = ", ".join(k.name for k in options.static_dispatch)
    imports = [
        *COMMON_IMPORTS,
        *runtime(
            "list_bits as _list_bits", "device_bits as _device_bits", "default_value as _default_value",
            "no_static_kernel as _no_static_kernel", "DispatchKeySet as _DispatchKeySet",
            "static_entry_points as _static_entry_points",
        ),
        *(f"import {module} as {alias}" for module, alias in modules.items()),
    ]
    lines = [
        f"# -- the typed functional API, static dispatch to {backends} (types in __init__.pyi)",
        *all_names(groups),
        "_MISSING: Any = object()",
        "_NUMBERS = (int, float, complex)",
    ]
    entry_points: list[str] = []
    named = False
    for name, members in groups.items():
        targets = [name if len(members) == 1 else f"_{e.attr_name}" for e in members]
        for entry, target in zip(members, targets):
            lines += _static_function(entry, target, options.static_dispatch, modules)
            entry_points.append(f"    {entry.schema.full_name!r}: {target},")
        if len(members) > 1:
            # The chooser calls each function, or a wrapper naming its results, as the
            # dispatched API's does (Note [Named results] in typedops/core/return_types.py);
            # opcheck compares the function itself.
            called = [_named_wrapper(e, t, lines) for e, t in zip(members, targets)]
            named = named or called != targets
            table = f"_CANDIDATES_{name}"
            pairs = "".join(f"\n    ({e.attr_name}.schema, {t})," for e, t in zip(members, called))
            lines += ["", "", f"{table} = ({pairs}\n)", "", ""]
            lines += chooser_lines(name, [e.schema for e in members], called, table)
    # Each op's function, for opcheck's test_static_dispatch (Note [opcheck's static
    # dispatch check] in typedops/testing/_static.py).
    lines += ["", "", "_static_entry_points({", *entry_points, "})"]
    return Section([*imports, *([RETURN_TYPES_IMPORT] if named else [])], lines)


def _named_wrapper(entry: OpEntry, target: str, lines: list[str]) -> str:
    """The name to call for ``entry``'s static function ``target``: ``target`` itself, or
    (for a core op with named results) a wrapper, appended to ``lines``, that returns them
    as its ``typedops.core.return_types`` class, as the dispatched API does."""
    cls = named_result(entry.schema)
    if cls is None:
        return target
    wrapper = f"_named{target}"
    lines += [
        "",
        "",
        f"def {wrapper}(*args: Any, **kwargs: Any) -> Any:",
        f'    """{entry.schema.full_name}\'s results as return_types.{cls} (Note [Named results])."""',
        f"    return _return_types.{cls}._make({target}(*args, **kwargs))",
    ]
    return wrapper
