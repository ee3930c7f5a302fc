"""``generate``: an op yaml -> the text of every generated file, in memory.

Note [One module per library]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
A generated library is one package with one module, ``__init__.py``: the registration
(pre-built schemas, ``LIBRARY._define_generated``), then the typed functional API, then
the Tensor methods and ``install()``, which it calls. Its types are in ``__init__.pyi``.
Importing a module costs ~0.2 ms on the project machines whatever it holds (finding,
reading and unmarshalling its code) -- as much as registering eight ops -- so the library
used to spend most of a small build's import in its four modules. One module keeps a
selective build's import close to the cost of its ops. The sections share one namespace,
so function names are checked against everything else the module binds.
"""

from __future__ import annotations

import ast
from pathlib import Path
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from ..dispatch import DispatchKey
from ._derivatives import CORE_HELPERS, load_derivatives
from ._derivatives_source import autograd_module
from ._bootstrap import core_kernels_alone
from ._api import functions_section, group, library_stub, methods_section
from ._messages import (
    BAD_NAMESPACE_OPTION,
    FUNCTION_NAME_TAKEN,
    DERIVATIVES_CORE_ONLY,
    NOT_A_BACKEND_KEY,
    SCHEMAS_ONLY_WITH,
    UNTYPED_METHOD,
)
from ._model import HEADER, CodegenError, OpEntry, Options, Variant, sizes_as_varargs
from ._registration import registration_section
from ._static import static_functions_section
from ._program_ops import ops_of_programs
from ._unboxing import unboxing_module
from ._stubs import INDEX_FILE, bundled_stubs, methods_of, namespace_section, project_stub, read_sections
from ._text import Section, module_text
from ._validate import load_entries, load_op_list

__all__ = ["generate", "obsolete_files", "DEFAULT_CORE_YAML", "PACKAGE"]

if TYPE_CHECKING:
    from ..programs import CompiledProgram
    from ..tracing import Program

PACKAGE = Path(__file__).resolve().parent.parent
DEFAULT_CORE_YAML = PACKAGE / "core" / "native_functions.yaml"
# The backends of the bundled library's static unboxing wrappers (Note [Static unboxing wrappers]).
_BUNDLED_STATIC: Final = (DispatchKey.CPU, DispatchKey.Meta)
# The derivatives of a library's ops, read from beside its op yaml (docs/autograd.md).
DERIVATIVES_NAME = "derivatives.yaml"


def _static_keys(text: str | None) -> tuple[DispatchKey, ...]:
    if not text:
        return ()
    keys: list[DispatchKey] = []
    for name in (n.strip() for n in text.split(",")):
        key = DispatchKey.__members__.get(name)
        if key is None or not key.is_backend:
            backends = ", ".join(k.name for k in DispatchKey if k.is_backend)
            raise CodegenError(NOT_A_BACKEND_KEY.format(name=name, backends=backends))
        keys.append(key)
    return tuple(sorted(set(keys)))


def generate(
    yaml_path: Path,
    out: Path,
    *,
    namespace: str,
    kernels: str | None = None,
    stubs: Path | None = None,
    core_yaml: Path | None = None,
    static_dispatch: str | None = None,
    ops_list: Path | None = None,
    programs: Sequence[tuple[str, Program | CompiledProgram]] | None = None,
    command: str = "",
    bundled: Path | None = None,
    schemas_only: bool = False,
) -> dict[Path, str]:
    """The generated files (path -> text) for the op yaml at ``yaml_path``.

    ``bundled`` (the typedops package folder, ``PACKAGE``) generates the library the
    package bundles: its stubs go into that folder, beside the objects they type (Note
    [Typing what core installs] in _stubs.py). ``schemas_only`` registers the schemas
    with no kernels (Note [Schemas only] in _validate.py). ``ops_list`` (an op-list yaml)
    and ``programs`` (``(label, program)`` pairs, a ``Program`` or the ``CompiledProgram``
    ``typedops.load`` returns; Note [Ops a program needs] in _program_ops.py) choose the
    ops of a selective build.

    Nothing is written: ``write_files`` does that, so a failure leaves no half-done output.
    """
    if not (namespace.isidentifier() and namespace.isascii()):
        raise CodegenError(BAD_NAMESPACE_OPTION.format(namespace=namespace))
    if schemas_only and (kernels is not None or static_dispatch):
        option = "--kernels" if kernels is not None else "--static-dispatch"
        raise CodegenError(SCHEMAS_ONLY_WITH.format(option=option))
    if kernels is None and namespace == "core" and not schemas_only:
        kernels = "typedops.core.kernels"
    options = Options(
        namespace=namespace,
        kernels_module=kernels,
        source_label=yaml_path.name,
        command=command or f"typedops codegen {yaml_path.name} --namespace {namespace}",
        static_dispatch=_static_keys(static_dispatch),
        schemas_only=schemas_only,
    )
    # Regenerating the bundled library, its kernels import without typedops/core/__init__
    # until the files are made: Note [Regenerating the core library] in _bootstrap.py
    with core_kernels_alone(kernels if bundled is not None else None):
        entries = load_entries(yaml_path, options, core_yaml or DEFAULT_CORE_YAML)
        selective = ops_list is not None or programs is not None
        if selective:
            known: dict[str, OpEntry] = {e.schema.full_name: e for e in entries}
            chosen: set[str] = set()
            if ops_list is not None:
                chosen = load_op_list(ops_list, namespace, known, options.source_label)
            if programs is not None:
                chosen |= ops_of_programs(programs)  # those of other namespaces are not this yaml's
            entries = [e for e in entries if e.schema.full_name in chosen]
        functions = (static_functions_section if options.static_dispatch else functions_section)(entries, options)
        others = [registration_section(entries, options), methods_section(entries, options)]
        _check_function_names(functions, others, group(entries, Variant.function), options)
        module = module_text(
            options,
            "the generated op library: importing it registers the ops, and binds the typed "
            "functional API and the Tensor methods; types in __init__.pyi",
            [others[0], functions, others[1]],
        )
        files: dict[Path, str] = {}
        files[out / "__init__.py"] = module
        derivatives_yaml = yaml_path.parent / DERIVATIVES_NAME
        if derivatives_yaml.is_file() and not selective and not options.static_dispatch:
            files[out / "autograd.py"] = _autograd_text(derivatives_yaml, entries, options)
            files[out / "autograd.pyi"] = (
                f"# {HEADER} from {DERIVATIVES_NAME} -- do not edit.\n"
                "# autograd.py registers the library's autograd kernels when imported; nothing in it is public API.\n"
            )
        unboxing_keys = options.static_dispatch or (_BUNDLED_STATIC if bundled is not None else ())
        if unboxing_keys:
            files[out / "unboxing.py"] = unboxing_module(entries, options, unboxing_keys)
            files[out / "unboxing.pyi"] = (
                f"# {HEADER} -- do not edit.\n"
                "# unboxing.py registers the library's static unboxing wrappers when imported; "
                "nothing in it is public API.\n"
            )
        files[out / "__init__.pyi"] = library_stub(entries, options)
        if stubs is not None:
            section = namespace_section(namespace, f"from {options.source_label} by typedops codegen",
                                        [e.schema for e in entries if e.defines], methods_of(entries))  # fmt: skip
            files[stubs / INDEX_FILE] = project_stub({**read_sections(stubs / INDEX_FILE), namespace: section})
        elif namespace != "core":
            _refuse_untyped_methods(entries, options)
        if bundled is not None:
            files.update(bundled_stubs(entries, options, bundled))
        for path, text in files.items():
            compile(text, str(path), "exec")  # a generator bug must not reach the disk
        return files




def _refuse_untyped_methods(entries: list[OpEntry], options: Options) -> None:
    """A yaml's methods need its stubs: without them every ``x.method()`` would be a
    checker's error on correct code (Note [Stubs for ops and methods] in _stubs.py)."""
    for entry in entries:
        if entry.method:
            raise CodegenError(UNTYPED_METHOD.format(
                label=options.source_label, line=entry.line, name=entry.schema.full_name, function=entry.schema.name,
            ))  # fmt: skip


def _autograd_text(path: Path, entries: list[OpEntry], options: Options) -> str:
    """The library's autograd kernels from the derivatives.yaml beside its op yaml (the core
    library's only, for now: its formulas call the core helpers)."""
    if options.namespace != "core":
        raise CodegenError(DERIVATIVES_CORE_ONLY.format(label=path.name))
    functions = frozenset(e.schema.name for e in entries if e.function) | CORE_HELPERS
    derivatives = load_derivatives(path, entries, functions)
    return autograd_module(
        derivatives,
        entries,
        functions,
        source_label=path.name,
        package="typedops.core._generated",
        helpers="typedops.core._derivatives",
    )


def _check_function_names(
    api: Section, others: list[Section], functions: dict[str, list[OpEntry]], options: Options
) -> None:
    """Refuse a function name that the generated module binds to something else.

    The library is one module (Note [One module per library]), so the functional API
    shares its namespace with the op handles, the kernel modules' aliases, the imports and
    the helpers: an op named ``install`` or ``LIBRARY`` would be shadowed by them, or
    shadow them. A function's name may be bound once by the API's own code -- its chooser,
    its static-dispatch function, or its wrapper taking sizes as varargs -- and nowhere
    else; a dispatched single-overload function is bound on first use by ``__getattr__``,
    so any binding of its name hides it.
    """
    everything_else = _bound_names([*others, Section(api.imports, [])])
    in_api = _bound_names([Section([], api.body)])
    for name, members in functions.items():
        wrapped = sizes_as_varargs(members[0].schema, method=False) is not None
        own = 1 if len(members) > 1 or options.static_dispatch or wrapped else 0
        if everything_else.get(name, 0) or in_api.get(name, 0) > own:
            raise CodegenError(
                FUNCTION_NAME_TAKEN.format(label=options.source_label, op=members[0].schema.qualified_name, name=name)
            )


def _bound_names(sections: list[Section]) -> dict[str, int]:
    """How many module-level statements of ``sections`` bind each name."""
    bound: dict[str, int] = {}
    for section in sections:
        for node in ast.parse("\n".join([*section.imports, *section.body])).body:
            names: list[str] = []
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                names = [node.name]
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [(a.asname or a.name).partition(".")[0] for a in node.names]
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names = [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
            for name in names:
                bound[name] = bound.get(name, 0) + 1
    return bound


def obsolete_files(out: Path, files: dict[Path, str]) -> list[Path]:
    """Generated files in ``out`` that ``files`` no longer has (an older layout's modules):
    they would still be importable, so the writer removes them. Only files that start with
    the generated header are candidates; anything else in ``out`` is the user's."""
    if not out.is_dir():
        return []
    kept = {path.resolve() for path in files}
    found: list[Path] = []
    for path in sorted(out.iterdir()):
        if path.suffix in (".py", ".pyi") and path.resolve() not in kept and path.is_file():
            with path.open(encoding="utf-8", errors="replace") as handle:
                if handle.readline().startswith(f"# {HEADER} "):
                    found.append(path)
    return found
