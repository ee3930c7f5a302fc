"""Inputs and outputs of ``typedops program run``: an ``.npz`` of arrays in, printed
values or an ``.npz`` out.

An input archive names each array by the program's input name (``np.savez(path, x=...)``)
or by position (``np.savez(path, a, b)`` writes ``arr_0``, ``arr_1``); it is read with
``allow_pickle=False``, so it holds numbers only. A program's non-tensor inputs are the
values it was traced with (it is specialized to them), so they are not read.
"""

from __future__ import annotations

import importlib
import zipfile
from pathlib import Path
from collections.abc import Sequence
from typing import Any, cast

from typing_extensions import assert_never

from ..tensor import Tensor
from ..tracing import ConstantInput, Program, TensorInput
from ..vocabulary import TypedopsError
from . import _messages as msg
from ._interpreter import traced_value

__all__ = ["import_modules", "read_inputs", "format_outputs", "write_outputs", "outputs_of"]


def import_modules(modules: Sequence[str]) -> None:
    """Import ``modules`` in order (``typedops program run --import``), so the ops they
    register (``@op``, ``Library``) are there when the program is loaded; a module that
    fails to import is a ``ProgramError`` naming it."""
    for module in modules:
        try:
            importlib.import_module(module)
        except Exception as error:  # the user's module may raise anything while importing
            raise msg.ProgramError(msg.CANNOT_IMPORT.format(module=module, error=f"{type(error).__name__}: {error}")) from error


def read_inputs(program: Program, path: Path) -> list[Any]:
    """The program's inputs: tensors from the archive at ``path``, traced values for the rest."""
    import numpy as np

    try:
        with np.load(path, allow_pickle=False) as archive:
            arrays = {name: archive[name] for name in archive.files}
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as error:
        raise msg.ProgramError(msg.BAD_INPUTS_FILE.format(path=path, error=error)) from error
    tensors = [spec for spec in program.inputs if isinstance(spec, TensorInput)]
    by_position = all(name.startswith("arr_") for name in arrays) and bool(arrays)
    expected = [f"arr_{i}" for i in range(len(tensors))] if by_position else [s.name for s in tensors]
    missing = [name for name in expected if name not in arrays]
    extra = sorted(set(arrays) - set(expected))
    if missing or extra:
        raise msg.ProgramError(msg.INPUTS_DO_NOT_FIT.format(
            path=path, expected=", ".join(expected) or "none", got=", ".join(sorted(arrays)) or "none"))  # fmt: skip
    values: list[Any] = []
    position = 0
    for spec in program.inputs:
        match spec:
            case TensorInput():
                name = expected[position]
                position += 1
                try:
                    values.append(Tensor.from_numpy(np.ascontiguousarray(arrays[name])))
                except TypedopsError as error:
                    raise msg.ProgramError(msg.BAD_INPUT_ARRAY.format(path=path, name=name, error=error)) from error
            case ConstantInput():
                values.append(traced_value(spec.value))
            case _:
                assert_never(spec)
    return values


def outputs_of(result: Any) -> list[Any]:
    """A run's result as a list of outputs (one for a single value, none for None)."""
    if result is None:
        return []
    if isinstance(result, (tuple, list)):
        items: Sequence[object] = cast("Sequence[object]", result)
        return list(items)
    return [result]


def format_outputs(outputs: list[Any]) -> str:
    """One line an output: ``output0: Tensor(float32[2, 3]) [[...], ...]``."""
    lines: list[str] = []
    for index, value in enumerate(outputs):
        if isinstance(value, Tensor):
            shape = ", ".join(str(n) for n in value.shape)
            lines.append(f"output{index}: Tensor({value.dtype.name}[{shape}]) {value.tolist()}")
        else:
            lines.append(f"output{index}: {value!r}")
    return "\n".join(lines)


def write_outputs(outputs: list[Any], path: Path) -> None:
    """The outputs as ``output0``, ``output1``... arrays in an ``.npz`` at ``path``."""
    import numpy as np

    arrays = {f"output{i}": np.asarray(v.numpy(force=True) if isinstance(v, Tensor) else v) for i, v in enumerate(outputs)}
    save: Any = np.savez  # its stub types keyword arrays as its own options
    save(path, **arrays)
