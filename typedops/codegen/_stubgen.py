"""``typedops stubgen MODULE... --out DIR``: stubs for the op namespaces modules register.

Ops defined with ``@op`` or ``Library`` exist only once their module runs, so the stubs
come from the dispatcher: import the modules, take the operators that appeared, and
write a section per namespace into ``typedops_namespaces.pyi`` (Note [Stubs for ops and
methods] in _stubs.py). A namespace's section that ``typedops codegen --stubs`` wrote from
a yaml is kept: it also has the yaml's Tensor methods.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from pathlib import Path

from ..dispatch import dispatcher
from ..schema import FunctionSchema
from ._model import CodegenError
from ._messages import CANNOT_IMPORT, CORE_SKIPPED, NOTHING_REGISTERED
from ._stubs import INDEX_FILE, namespace_section, project_stub, read_sections

__all__ = ["stubgen"]



def _key(schema: FunctionSchema) -> tuple[str, str]:
    return schema.qualified_name, schema.overload_name


def stubgen(modules: Sequence[str], out: Path) -> tuple[dict[Path, str], list[str]]:
    """The stub files (path -> text) for the namespaces ``modules`` register, and notes on
    what was left out. Nothing is written (``write_files`` does that)."""
    before = {_key(handle.schema) for handle in dispatcher.all_ops()}
    for module in modules:
        try:
            importlib.import_module(module)
        except Exception as error:  # the user's module may raise anything while importing
            raise CodegenError(CANNOT_IMPORT.format(module=module, error=f"{type(error).__name__}: {error}")) from error
    notes: list[str] = []
    by_namespace: dict[str, list[FunctionSchema]] = {}
    for handle in dispatcher.all_ops():
        schema = handle.schema
        if _key(schema) in before:
            continue
        if schema.namespace == "core":
            notes.append(CORE_SKIPPED.format(name=schema.full_name))
            continue
        by_namespace.setdefault(schema.namespace, []).append(schema)
    if not by_namespace:
        raise CodegenError(NOTHING_REGISTERED.format(modules=", ".join(modules)))
    path = out / INDEX_FILE
    sections = read_sections(path)
    for namespace, schemas in by_namespace.items():
        if _from_a_yaml(sections.get(namespace, "")):
            notes.append(f"{path}: kept the section of {namespace} (typedops codegen --stubs wrote it from a yaml, "
                         "with its Tensor methods)")  # fmt: skip
            continue
        sections[namespace] = namespace_section(namespace, f"from {', '.join(modules)} by typedops stubgen", schemas, {})
    files = {path: project_stub(sections)}
    for path, text in files.items():
        compile(text, str(path), "exec")  # a generator bug must not reach the disk
    return files, notes


def _from_a_yaml(section: str) -> bool:
    first = section.partition("\n")[0]
    return first.endswith(" by typedops codegen")
