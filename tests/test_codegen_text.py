"""Annotations in generated stubs type what the runtime accepts (Note [Stubs type what runs]
in typedops/codegen/_text.py): each case pairs the annotation with a value the runtime's
argument check takes for that type, so a stub that refused it would refuse correct code."""

from __future__ import annotations

from typing import Any

import pytest

from typedops import Device, Generator
from typedops.boxing import mismatch
from typedops.codegen._text import annotation
from typedops.schema import parse_schema

CASES = [
    # (schema type, argument annotation, prefixed argument annotation, a value the runtime takes)
    ("int[1]?", "int | Sequence[int] | None", "_builtins.int | _Sequence[_builtins.int] | None", 0),
    ("int[2]", "int | Sequence[int]", "_builtins.int | _Sequence[_builtins.int]", 1),
    ("SymInt[]", "Sequence[SymInt]", "_Sequence[_t.SymInt]", (2, 3)),
    ("Device?", "Device | str | None", "_t.Device | _builtins.str | None", "meta"),
    ("Device", "Device | str", "_t.Device | _builtins.str", Device("cpu")),
    ("Scalar", "Scalar", "_t.Scalar", 2.5),
    ("Generator?", "Generator | None", "_t.Generator | None", Generator()),
    ("Tensor[]", "Sequence[Tensor]", "_Sequence[_t.Tensor]", ()),
]


@pytest.mark.parametrize(("text", "plain", "prefixed", "value"), CASES, ids=[c[0] for c in CASES])
def test_argument_annotations_take_what_the_runtime_takes(text: str, plain: str, prefixed: str, value: Any) -> None:
    type_ = parse_schema(f"f({text} a) -> ()").arguments[0].type
    assert annotation(type_, argument=True) == plain
    assert annotation(type_, argument=True, prefix="_t.") == prefixed
    assert mismatch(type_, value) is None


def test_results_are_what_kernels_return() -> None:
    returns = parse_schema("f() -> (int[], Device, Tensor[])").returns
    assert [annotation(r.type, argument=False) for r in returns] == ["list[int]", "Device", "list[Tensor]"]
