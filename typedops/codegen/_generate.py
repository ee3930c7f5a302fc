"""``generate``: an op yaml -> the text of every generated file, in memory."""

from __future__ import annotations

from pathlib import Path

from ..dispatch import DispatchKey
from ._api import functions_source, functions_stub, group, init_source, init_stub, methods_source
from ._model import CodegenError, OpEntry, Options
from ._registration import registration_source
from ._static import static_functions_source
from ._stubs import ops_stub, stub_module_name
from ._validate import load_entries, load_op_list

__all__ = ["generate", "DEFAULT_CORE_YAML"]

DEFAULT_CORE_YAML = Path(__file__).resolve().parent.parent / "core" / "native_functions.yaml"


def _static_keys(text: str | None) -> tuple[DispatchKey, ...]:
    if not text:
        return ()
    keys = []
    for name in (n.strip() for n in text.split(",")):
        key = DispatchKey.__members__.get(name)
        if key is None or not key.is_backend:
            backends = ", ".join(k.name for k in DispatchKey if k.is_backend)
            raise CodegenError(f"--static-dispatch: {name!r} is not a backend key (use some of {backends})")
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
    command: str = "",
) -> dict[Path, str]:
    """The generated files (path -> text) for the op yaml at ``yaml_path``.

    Nothing is written: ``write_files`` does that, so a failure leaves no half-done output.
    """
    if not (namespace.isidentifier() and namespace.isascii()):
        raise CodegenError(f"--namespace {namespace!r} must be an identifier such as 'core' or 'myops'")
    if kernels is None and namespace == "core":
        kernels = "typedops.core.kernels"
    options = Options(
        namespace=namespace,
        kernels_module=kernels,
        source_label=yaml_path.name,
        command=command or f"typedops codegen {yaml_path.name} --namespace {namespace}",
        static_dispatch=_static_keys(static_dispatch),
    )
    entries = load_entries(yaml_path, options, core_yaml or DEFAULT_CORE_YAML)
    if ops_list is not None:
        known: dict[str, OpEntry] = {e.schema.full_name: e for e in entries}
        chosen = load_op_list(ops_list, namespace, known, options.source_label)
        entries = [e for e in entries if e.schema.full_name in chosen]
    files: dict[Path, str] = {}
    files[out / "__init__.py"] = init_source(entries, options, has_methods=bool(group(entries, "method")))
    files[out / "__init__.pyi"] = init_stub(entries, options)
    files[out / "_registration.py"] = registration_source(entries, options)
    if options.static_dispatch:
        files[out / "_functions.py"] = static_functions_source(entries, options)
    else:
        files[out / "_functions.py"] = functions_source(entries, options)
    files[out / "_functions.pyi"] = functions_stub(entries, options)
    if group(entries, "method"):
        files[out / "_methods.py"] = methods_source(entries, options)
    if stubs is not None:
        files[stubs / f"{stub_module_name(namespace)}.pyi"] = ops_stub(entries, options)
    for path, text in files.items():
        compile(text, str(path), "exec")  # a generator bug must not reach the disk
    return files
