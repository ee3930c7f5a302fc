"""Schema inference: typedops ``infer_schema`` vs ``torch.library.infer_schema``.

Issue 3: <= 20 us for a 5-parameter function (torch ~30 us) on the reference machine.
The same kernel is inferred with annotation objects (as torch gets it, with torch.Tensor
for Tensor) and with string annotations, as every module that starts with
``from __future__ import annotations`` -- this one included -- writes them. Every call
infers afresh: typedops keeps no schema per function, only the schema type of each
annotation object and the compiled code of each annotation string; torch keeps nothing.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Sequence
from typing import Any, Optional

from benchmarks._harness import Report, timing, optional_import
from typedops import Tensor
from typedops.schema import infer_schema


def scaled_sum(
    x: Tensor,
    y: Tensor,
    alpha: float = 1.0,
    dims: Optional[Sequence[int]] = None,
    out: Optional[Tensor] = None,
) -> Tensor:
    raise NotImplementedError


def _twin(annotations: dict[str, Any]) -> types.FunctionType:
    """``scaled_sum`` with other annotations (its own are strings here)."""
    fn = scaled_sum
    twin = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__)
    twin.__annotations__ = annotations
    return twin


def run() -> Report:
    report = Report(
        title="Infer the schema of a 5-parameter kernel (per call)",
        unit="us",
        baseline="typedops infer_schema",
        target="<= 20 us; torch.library.infer_schema ~30 us (reference machine)",
    )
    objects = typing.get_type_hints(scaled_sum, include_extras=True)
    with_objects = _twin(objects)
    strings = scaled_sum
    assert all(isinstance(a, str) for a in strings.__annotations__.values())
    note = str(infer_schema(with_objects))
    assert str(infer_schema(strings)) == note
    report.add("typedops infer_schema", timing(lambda: infer_schema(with_objects), number=20_000, repeat=7), note)
    report.add(
        "typedops, string annotations",
        timing(lambda: infer_schema(strings), number=20_000, repeat=7),
        "from __future__ import annotations",
    )
    torch: Any = optional_import("torch")
    if torch is None:
        report.add("torch.library.infer_schema", None, "needs torch (bench extra)")
        return report
    as_torch = {k: Optional[torch.Tensor] if k == "out" else v for k, v in objects.items()}
    as_torch.update(x=torch.Tensor, y=torch.Tensor)
    as_torch["return"] = torch.Tensor
    torch_kernel = _twin(as_torch)
    infer = torch.library.infer_schema
    report.add(
        "torch.library.infer_schema",
        timing(lambda: infer(torch_kernel, mutates_args=()), number=2_000, repeat=7),
        infer(torch_kernel, mutates_args=()),
    )
    return report
