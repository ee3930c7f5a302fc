"""Validating op yaml entries into ``OpEntry`` records, with ``file:line`` errors.

Note [Nothing unvalidated reaches source]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Generated modules are Python source, so a crafted yaml could try to smuggle code in
through any text field. The generator writes only: names that passed an identifier check
(op, overload and argument names are checked by the schema model, and op and overload
names must not be Python keywords), kernel references that are dotted identifiers *and*
resolved to a function defined in the named module, dispatch keys that are
``DispatchKey`` members, and every other value (default literals, alias sets) through
``repr()`` of a value the schema parser accepted. Text in comments (an op's schema, the
command in the header) goes through ``comment_text`` (_layout.py), which escapes every
character that could end a comment early.

Note [PyTorch's own yaml]
~~~~~~~~~~~~~~~~~~~~~~~~~
The yaml is PyTorch's ``native_functions.yaml`` syntax, so PyTorch's file as it ships
must generate. Its entries carry fields for PyTorch's C++ code generator (``structured``,
``tags``, ``autogen``, ...): those are listed by name in ``_PYTORCH_FIELDS`` and read and
ignored; any other unknown field is still an error (a misspelt ``variant:`` must not be
ignored). Its ``dispatch:`` names C++ kernels, which ``--schemas-only`` does not resolve
(Note [Schemas only]). Its schemas use types typedops has no class for (``DeviceIndex``,
``Storage``, ...) and defaults only PyTorch's sized lists take (``int[2] stride=[]``):
the generator needs a schema that stubs can type (``untyped_base``) and that the
dispatcher can call, not the exact Python signature ``signature_from_schema`` makes.

Note [Schemas only]
~~~~~~~~~~~~~~~~~~~
``schemas_only`` generates the registration of the schemas with no kernels, the typed
functional API, the methods and the stubs. ``dispatch:`` must still be a mapping of text
to text, but its keys and kernels are neither checked nor imported (PyTorch's are C++
names under keys typedops lacks), and ``with_keys`` is ignored with them. An entry that
only adds kernels to an existing op (``func: core::add.Tensor``) has nothing to generate
and is refused. A ``variants: method`` whose name Tensor defines itself (PyTorch's ``dim``,
``numel``, ``item``, ``is_contiguous``, ``storage_offset``, ``_version``) is refused with
kernels (it would replace Tensor's own for every tensor); without kernels it is left out,
the op keeps its function and handle, and the generated module lists it in a comment --
Tensor's own method does what the op's kernels would, where a kernel-less method could
only raise ``NoKernelError``. Calling such an op raises ``NoKernelError`` until kernels are registered
(``Library(ns, "IMPL").impl(...)``); a fallback or the Meta key can serve them.
"""

from __future__ import annotations

import importlib
import inspect
import keyword
from pathlib import Path
from typing import Any, Final, cast

from ..vocabulary import SchemaInferenceError, SchemaMismatchError, SchemaParseError
from ..batching import RULE_FAMILIES
from ..dispatch import DispatchKey, check_kernel_signature
from ..schema import FunctionSchema, parse_schema
from ..tensor import TENSOR_OWN_NAMES
from ._messages import (
    NO_STUB_TYPE,
    SCHEMAS_ONLY_KERNELS_ONLY,
    VARARG_SCHEMA,
    NO_CORE_YAML,
    BAD_DEVICE_CHECK,
    VMAP_DOES_NOT_FIT,
    VMAP_KERNELS_ONLY,
    VMAP_UNKNOWN_FAMILY,
    BAD_REFERENCE,
    BAD_SCHEMA,
    DISPATCH_NOT_MAPPING,
    DUPLICATE_KEY,
    DUPLICATE_OP,
    KERNELS_ONLY_NEEDS_DISPATCH,
    KERNEL_IMPORT,
    KERNEL_MISMATCH,
    KERNEL_MISSING,
    KERNEL_NOT_FUNCTION,
    KEYWORD_NAME,
    DEFAULT_OVERLOAD,
    PRIVATE_ARGUMENT,
    METHOD_NEEDS_SELF,
    METHOD_REPLACES_TENSOR_ATTRIBUTE,
    METHOD_SELF_NOT_FIRST_OVERLOADED,
    MISSING_FUNC,
    NAME_CLASH,
    NOT_A_LIST,
    NOT_A_MAPPING,
    NOT_TEXT,
    NO_KERNELS_MODULE,
    NO_SUCH_CORE_OP,
    OP_LIST_ITEM,
    OP_LIST_UNKNOWN,
    UNKNOWN_FIELD,
    UNKNOWN_KEY,
    UNKNOWN_VARIANT,
    WITH_KEYS_UNUSED,
    WRONG_NAMESPACE,
)
from ._model import CodegenError, Kernel, KernelRef, OpEntry, Options, Variant, self_index
from ._text import untyped_base
from ._yaml import Located, LocatedList, load_yaml

__all__ = ["load_entries", "load_core_schemas", "load_op_list", "check_dotted"]

_FIELDS: Final = ("func", "variants", "dispatch", "with_keys", "device_check", "vmap")
# The other fields of PyTorch's native_functions.yaml (those torchgen's NativeFunction
# reads, torch 2.13): read and ignored. See Note [PyTorch's own yaml].
_PYTORCH_FIELDS: Final = frozenset({
    "autogen", "category_override", "cpp_no_default_args", "device_guard", "manual_cpp_binding",
    "manual_kernel_registration", "precomputed", "python_module", "structured", "structured_delegate",
    "structured_inherits", "tags", "ufunc_inner_loop", "use_const_ref_for_mutable_tensors",
})  # fmt: skip
_VARIANTS: Final = {v.value: v for v in Variant}


def _kind(value: object) -> str:
    return "a mapping" if isinstance(value, dict) else "a list" if isinstance(value, list) else repr(value)


def check_dotted(ref: str) -> bool:
    """Whether ``ref`` is ``name`` or ``a.b.name`` with every part a non-keyword ASCII identifier."""
    parts = ref.split(".")
    return all(p.isidentifier() and p.isascii() and not keyword.iskeyword(p) for p in parts)


def _full_name(text: str, namespace: str) -> str:
    return text if "::" in text else f"{namespace}::{text}"


def _names_before_self(entry: OpEntry) -> list[str]:
    return [a.name for a in entry.schema.positional[: self_index(entry.schema)]]


def load_core_schemas(path: Path) -> dict[str, FunctionSchema]:
    """The schemas declared by the core yaml (namespace ``core``), by full name; no kernels load."""
    label = str(path)
    data = load_yaml(path, label)
    result: dict[str, FunctionSchema] = {}
    items = cast("list[object]", data) if isinstance(data, list) else []
    for item in items:
        func = cast("dict[str, object]", item).get("func") if isinstance(item, dict) else None
        if isinstance(func, str) and "(" in func:
            try:
                schema = _namespaced(parse_schema(func), "core")
            except (SchemaParseError, ValueError):
                continue
            result[schema.full_name] = schema
    return result


def _namespaced(schema: FunctionSchema, namespace: str) -> FunctionSchema:
    if schema.namespace:
        return schema
    return FunctionSchema(
        schema.name, namespace=namespace, overload_name=schema.overload_name,
        positional=schema.positional, kwarg_only=schema.kwarg_only, returns=schema.returns,
        is_vararg=schema.is_vararg, is_varret=schema.is_varret,
    )  # fmt: skip


class _Validator:
    def __init__(self, label: str, options: Options, core_path: Path) -> None:
        self.label = label
        self.options = options
        self.core_path = core_path
        self.core: dict[str, FunctionSchema] | None = None
        self.modules: dict[str, Any] = {}

    def fail(self, template: str, line: int, **fields: object) -> CodegenError:
        return CodegenError(template.format(label=self.label, line=line, **fields))

    def entries(self, data: Any) -> list[OpEntry]:
        if not isinstance(data, list):
            line = data.line if isinstance(data, Located) else 1
            raise self.fail(NOT_A_LIST, line, kind=_kind(data))
        assert isinstance(data, LocatedList)
        result: list[OpEntry] = []
        seen: dict[str, int] = {}
        for item, line in zip(data, data.item_lines):
            entry = self.entry(item, line)
            name = entry.schema.full_name
            if name in seen:
                raise self.fail(DUPLICATE_OP, line, name=name, first=seen[name])
            seen[name] = line
            clash = next((e for e in result if e.attr_name == entry.attr_name), None)
            if clash is not None:
                raise self.fail(NAME_CLASH, line, name=name, other=clash.schema.full_name, attr=entry.attr_name)
            result.append(entry)
        self.check_method_overloads(result)
        return result

    def check_method_overloads(self, entries: list[OpEntry]) -> None:
        """A method whose ``self`` is not first moves it back to its place, so every method
        overload of its name takes ``self`` after the same arguments (``where.self`` and
        ``where.ScalarOther``); see Note [Methods with self not first] in _api.py."""
        methods: dict[str, list[OpEntry]] = {}
        for entry in entries:
            if entry.method:
                methods.setdefault(entry.schema.name, []).append(entry)
        for base, members in methods.items():
            moved = next((e for e in members if self_index(e.schema)), None)
            if moved is None:
                continue
            before = _names_before_self(moved)
            other = next((e for e in members if _names_before_self(e) != before), None)
            if other is not None:
                listed = ", ".join(repr(n) for n in before)
                raise self.fail(METHOD_SELF_NOT_FIRST_OVERLOADED, moved.line, name=moved.schema.full_name,
                                before=listed, base=base, other=other.schema.full_name)  # fmt: skip

    def entry(self, item: Any, line: int) -> OpEntry:
        if not isinstance(item, Located):
            raise self.fail(NOT_A_MAPPING, line, kind=_kind(item))
        for key in item:
            if key not in _FIELDS and key not in _PYTORCH_FIELDS:
                raise self.fail(UNKNOWN_FIELD, item.line_of(key), field=key)
        if "func" not in item:
            raise self.fail(MISSING_FUNC, item.line)
        func = item["func"]
        func_line = item.line_of("func")
        if not isinstance(func, str):
            raise self.fail(NOT_TEXT, func_line, field="func", kind=_kind(func))
        if "(" not in func:
            return self.kernels_only(item, func.strip(), func_line)
        schema = self.schema(func, func_line)
        function, method, own_method = self.variants(item, schema)
        kernels = self.kernels(item, schema)
        return OpEntry(schema, func_line, function, method, kernels, device_check=self.device_check(item),
                       tensor_own_method=own_method, vmap=self.vmap_rule(item, schema))  # fmt: skip

    def vmap_rule(self, item: Located, schema: FunctionSchema) -> str | None:
        """The batching rule family (``vmap: pointwise``): a known family that fits the
        schema (Note [Rule families] in batching/_rules.py)."""
        if "vmap" not in item:
            return None
        raw, line = item["vmap"], item.line_of("vmap")
        if not isinstance(raw, str):
            raise self.fail(NOT_TEXT, line, field="vmap", kind=_kind(raw))
        family = RULE_FAMILIES.get(raw)
        if family is None:
            raise self.fail(VMAP_UNKNOWN_FAMILY, line, name=raw, known=", ".join(sorted(RULE_FAMILIES)))
        problem = family.fits(schema)
        if problem is not None:
            raise self.fail(VMAP_DOES_NOT_FIT, line, name=raw, op=schema.full_name, problem=problem)
        return raw

    def device_check(self, item: Located) -> bool:
        """PyTorch's field: ``NoCheck`` lets the op take tensors of several devices."""
        raw = item.get("device_check", "ExactSame")
        if raw not in ("NoCheck", "ExactSame"):
            raise self.fail(BAD_DEVICE_CHECK, item.line_of("device_check"), value=raw)
        return bool(raw == "ExactSame")

    def schema(self, func: str, line: int) -> FunctionSchema:
        try:
            schema = parse_schema(func)
        except SchemaParseError as error:
            raise self.fail(BAD_SCHEMA, line, reason=str(error).splitlines()[0]) from None
        except ValueError as error:
            raise self.fail(BAD_SCHEMA, line, reason=str(error)) from None
        want = self.options.namespace
        if schema.namespace and schema.namespace != want:
            raise self.fail(WRONG_NAMESPACE, line, name=schema.full_name, ns=schema.namespace, want=want)
        schema = _namespaced(schema, want)
        # An overload may be a keyword (PyTorch's random_.from): it names no Python function,
        # and the stubs leave its packet attribute out (getattr reaches it).
        if keyword.iskeyword(schema.name):
            raise self.fail(KEYWORD_NAME, line, what="operator name", name=schema.name)
        if schema.overload_name == "default":
            raise self.fail(DEFAULT_OVERLOAD, line, name=schema.name)
        # Generated functions take the schema's argument names as parameters, and their
        # bodies use '_'-names of their own (key bits, kernel module aliases, defaults).
        private = next((a.name for a in schema.arguments if a.name.startswith("_")), None)
        if private is not None:
            raise self.fail(PRIVATE_ARGUMENT, line, argument=private, name=schema.full_name)
        self.check_stub_types(schema, line)
        return schema

    def check_stub_types(self, schema: FunctionSchema, line: int) -> None:
        """Every argument and return has a stub annotation (Note [PyTorch's own yaml])."""
        if schema.is_vararg or schema.is_varret:
            raise self.fail(VARARG_SCHEMA, line, name=schema.full_name)
        subjects = [(f"argument '{a.name}'", a.type) for a in schema.arguments]
        subjects += [(f"return {i}", r.type) for i, r in enumerate(schema.returns)]
        for subject, type_ in subjects:
            if untyped_base(type_) is not None:
                raise self.fail(NO_STUB_TYPE, line, subject=subject, name=schema.full_name, type=type_)

    def variants(self, item: Located, schema: FunctionSchema) -> tuple[bool, bool, bool]:
        """Whether the op is a function, a method, and a method left out because Tensor
        defines the name itself (only under ``schemas_only``, Note [Schemas only])."""
        raw = item.get("variants", Variant.function.value)
        line = item.line_of("variants")
        if not isinstance(raw, str):
            raise self.fail(NOT_TEXT, line, field="variants", kind=_kind(raw))
        chosen: set[Variant] = set()
        for word in raw.split(","):
            variant = _VARIANTS.get(word.strip())
            if variant is None:
                raise self.fail(UNKNOWN_VARIANT, line, variant=word.strip())
            chosen.add(variant)
        method = Variant.method in chosen
        if method:
            index = self_index(schema)
            if index is None or str(schema.positional[index].type) != "Tensor":
                raise self.fail(METHOD_NEEDS_SELF, line, name=schema.full_name)
            if schema.name in TENSOR_OWN_NAMES:
                if self.options.schemas_only:
                    return Variant.function in chosen, False, True
                raise self.fail(METHOD_REPLACES_TENSOR_ATTRIBUTE, line, name=schema.full_name, attr=schema.name)
        return Variant.function in chosen, method, False

    def kernels_only(self, item: Located, name: str, line: int) -> OpEntry:
        full = _full_name(name, self.options.namespace)
        if self.options.schemas_only:
            raise self.fail(SCHEMAS_ONLY_KERNELS_ONLY, line, name=full)
        if "dispatch" not in item or "variants" in item:
            raise self.fail(KERNELS_ONLY_NEEDS_DISPATCH, line, name=full)
        if "vmap" in item:
            raise self.fail(VMAP_KERNELS_ONLY, item.line_of("vmap"), op=full)
        if self.core is None:  # read only when a yaml adds kernels to existing ops
            if not self.core_path.exists():
                raise self.fail(NO_CORE_YAML, line, name=full, core=self.core_path)
            self.core = load_core_schemas(self.core_path)
        schema = self.core.get(full)
        if schema is None:
            raise self.fail(NO_SUCH_CORE_OP, line, name=full, core=self.core_path.name)
        return OpEntry(schema, line, False, False, self.kernels(item, schema), defines=False)

    def kernels(self, item: Located, schema: FunctionSchema) -> tuple[Kernel, ...]:
        dispatch = item.get("dispatch", Located())
        if not isinstance(dispatch, Located):
            raise self.fail(DISPATCH_NOT_MAPPING, item.line_of("dispatch"), kind=_kind(dispatch))
        if self.options.schemas_only:
            return self.unresolved_kernels(dispatch)
        with_keys = self.with_keys(item)
        result: list[Kernel] = []
        for keys_text, ref in dispatch.items():
            line = dispatch.line_of(keys_text)
            if not isinstance(keys_text, str):
                raise self.fail(UNKNOWN_KEY, line, key=keys_text)
            if not isinstance(ref, str):
                raise self.fail(NOT_TEXT, line, field=f"dispatch: {keys_text}", kind=_kind(ref))
            kernel_ref, fn = self.resolve(ref.strip(), line)
            for key_name in (k.strip() for k in keys_text.split(",")):
                key = DispatchKey.__members__.get(key_name)
                if key is None:
                    raise self.fail(UNKNOWN_KEY, line, key=key_name)
                if any(k.key is key for k in result):
                    raise self.fail(DUPLICATE_KEY, line, key=key.name, name=schema.full_name)
                keyed = key in with_keys
                try:
                    check_kernel_signature(schema, fn, with_keys=keyed)
                except (SchemaMismatchError, SchemaInferenceError) as error:
                    raise self.fail(
                        KERNEL_MISMATCH, line, ref=ref, key=key.name, name=schema.full_name, reason=str(error)
                    ) from None
                result.append(Kernel(key, kernel_ref, keyed))
        for key in with_keys:
            if not any(k.key is key for k in result):
                raise self.fail(WITH_KEYS_UNUSED, item.line_of("with_keys"), key=key.name, name=schema.full_name)
        return tuple(result)

    def unresolved_kernels(self, dispatch: Located) -> tuple[Kernel, ...]:
        """``dispatch:`` under ``schemas_only``: text to text, not resolved (Note [Schemas only])."""
        for keys_text, ref in dispatch.items():
            line = dispatch.line_of(keys_text)
            if not isinstance(keys_text, str):
                raise self.fail(UNKNOWN_KEY, line, key=keys_text)
            if not isinstance(ref, str):
                raise self.fail(NOT_TEXT, line, field=f"dispatch: {keys_text}", kind=_kind(ref))
        return ()

    def with_keys(self, item: Located) -> frozenset[DispatchKey]:
        raw = item.get("with_keys", [])
        line = item.line_of("with_keys")
        names: object = [raw] if isinstance(raw, str) else raw
        if not isinstance(names, list):
            raise self.fail(NOT_TEXT, line, field="with_keys", kind=_kind(raw))
        keys: set[DispatchKey] = set()
        for name in cast("list[object]", names):
            key = DispatchKey.__members__.get(name) if isinstance(name, str) else None
            if key is None:
                raise self.fail(UNKNOWN_KEY, line, key=name)
            keys.add(key)
        return frozenset(keys)

    def resolve(self, ref: str, line: int) -> tuple[KernelRef, Any]:
        if not ref or not check_dotted(ref):
            raise self.fail(BAD_REFERENCE, line, ref=ref)
        module_name, _, attribute = ref.rpartition(".")
        if not module_name:
            if self.options.kernels_module is None:
                raise self.fail(NO_KERNELS_MODULE, line, ref=ref)
            module_name = self.options.kernels_module
        module = self.modules.get(module_name)
        if module is None:
            try:
                module = importlib.import_module(module_name)
            except Exception as error:  # noqa: BLE001 -- any failure is reported with file:line
                raise self.fail(
                    KERNEL_IMPORT, line, module=module_name, ref=ref, error=f"{type(error).__name__}: {error}"
                ) from None
            self.modules[module_name] = module
        if not hasattr(module, attribute):
            raise self.fail(KERNEL_MISSING, line, module=module_name, attribute=attribute)
        fn = getattr(module, attribute)
        defined_in = getattr(fn, "__module__", None) or ""
        if not inspect.isfunction(fn) or not (defined_in == module_name or defined_in.startswith(module_name + ".")):
            kind = f"a {type(fn).__name__}" if not inspect.isfunction(fn) else f"a function from {defined_in!r}"
            raise self.fail(KERNEL_NOT_FUNCTION, line, ref=ref, kind=kind, module=module_name)
        return KernelRef(module_name, attribute), fn


def load_entries(path: Path, options: Options, core_path: Path) -> list[OpEntry]:
    """The validated entries of the op yaml at ``path``; ``CodegenError`` on the first problem.
    ``core_path`` is the core yaml, read when an entry adds kernels to a core op."""
    label = options.source_label
    return _Validator(label, options, core_path).entries(load_yaml(path, label))


def load_op_list(path: Path, namespace: str, known: dict[str, OpEntry], source: str) -> set[str]:
    """Full names listed in an op-list yaml (``- core::add.Tensor`` or ``- add.Tensor``)."""
    label = str(path)
    data = load_yaml(path, label)
    if not isinstance(data, LocatedList):
        raise CodegenError(OP_LIST_ITEM.format(label=label, line=getattr(data, "line", 1), kind=_kind(data)))
    chosen: set[str] = set()
    for item, line in zip(data, data.item_lines):
        if not isinstance(item, str):
            raise CodegenError(OP_LIST_ITEM.format(label=label, line=line, kind=_kind(item)))
        name = _full_name(item.strip(), namespace)
        if name.endswith(".default"):
            name = name[: -len(".default")]
        if name not in known:
            raise CodegenError(OP_LIST_UNKNOWN.format(label=label, line=line, name=name, source=source))
        chosen.add(name)
    return chosen
