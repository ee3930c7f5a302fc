"""Schema parsing: typedops vs PyTorch's C++ parser vs torchgen's Python parser.

Issue 2: <= 10 us per distinct schema over the 2,584 native_functions.yaml strings
(torch C++ ~5 us, torchgen ~75 us on the reference machine). Every pass parses every
string afresh: typedops' interning tables are cleared before each pass (types, and
since issue 10 whole argument and return texts, Note [Shared arguments]: within a pass,
a text seen before is not parsed again), and torchgen is given no cache either.
"""

from __future__ import annotations

from typing import Any

from benchmarks._harness import Report, timing, optional_import
from typedops.schema import _canonical
from typedops.schema import parse_schema
from tests.corpus import native_function_schemas


def run() -> Report:
    schemas = native_function_schemas()
    report = Report(
        title=f"Parse {len(schemas) if schemas else 0} native_functions.yaml schemas (per schema)",
        unit="us",
        baseline="typedops parse_schema",
        target="<= 10 us per schema; torch C++ ~5 us, torchgen ~75 us (reference machine)",
    )
    if not schemas:
        report.add("typedops parse_schema", None, "needs torch (bench extra) for the yaml")
        return report
    n = len(schemas)

    def ours() -> None:
        _canonical.clear_type_table()
        for s in schemas:
            parse_schema(s)

    report.add("typedops parse_schema", timing(ours, number=1, repeat=7).scaled(1 / n))
    torch: Any = optional_import("torch")
    if torch is not None:
        cpp = torch._C.parse_schema

        def torch_cpp() -> None:
            for s in schemas:
                cpp(s)

        report.add("torch._C.parse_schema (C++)", timing(torch_cpp, number=1, repeat=7).scaled(1 / n))
    model: Any = optional_import("torchgen.model")
    if model is not None:

        def torchgen() -> None:
            for s in schemas:
                model.FunctionSchema.parse(s)

        report.add("torchgen FunctionSchema.parse", timing(torchgen, number=1, repeat=3).scaled(1 / n))
    return report
