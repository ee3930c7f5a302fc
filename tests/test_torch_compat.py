"""typedops' schema parser against PyTorch's, over every schema PyTorch ships.

Needs torch (``make compat``). The corpora are the 2,584 ``func:`` lines of
native_functions.yaml and the ~4,400 operator schemas TorchScript registers.

One JIT schema is refused on purpose: ``static_runtime::clamp_nan_to_num`` names two
arguments ``posinf``. torch accepts that (its parser does not check names); typedops
refuses it, because an argument must be addressable by name.
"""

from __future__ import annotations

from typing import Any, Final

import pytest

from tests.corpus import jit_schemas, native_function_schemas
from typedops.schema import FunctionSchema, SchemaParseError, parse_schema

pytestmark = pytest.mark.compat

torch = pytest.importorskip("torch", reason="compares with PyTorch; needs the compat extra: make compat")

NATIVE_FUNCTION_COUNT: Final = 2584
# JIT schemas with a repeated argument name: torch accepts them, typedops refuses them.
DUPLICATE_NAME_SCHEMAS: Final = ["static_runtime::clamp_nan_to_num"]


@pytest.fixture(scope="module")
def native() -> list[str]:
    schemas = native_function_schemas()
    assert schemas is not None, "torch is installed but torchgen's native_functions.yaml is missing"
    return schemas


@pytest.fixture(scope="module")
def jit() -> list[str]:
    schemas = jit_schemas()
    assert schemas is not None
    return schemas


def _torch_parse(text: str) -> Any:
    return torch._C.parse_schema(text)


def _has_duplicate_argument_names(text: str) -> bool:
    names = [arg.name for arg in _torch_parse(text).arguments]
    return len(set(names)) != len(names)


@pytest.fixture(scope="module")
def jit_parsed(jit: list[str]) -> list[tuple[str, FunctionSchema]]:
    """Every JIT schema typedops parses, with its parse (the duplicate-name one left out)."""
    return [(s, parse_schema(s)) for s in jit if not _has_duplicate_argument_names(s)]


# -- native_functions.yaml -----------------------------------------------------------------


def test_native_functions_print_back_exactly(native: list[str]) -> None:
    """All 2,584 yaml func lines parse and print back character for character."""
    assert len(native) == NATIVE_FUNCTION_COUNT
    changed = [s for s in native if str(parse_schema(s)) != s]
    assert changed == []


# -- TorchScript's registered schemas ------------------------------------------------------


def test_only_duplicate_argument_names_are_refused(jit: list[str]) -> None:
    """typedops refuses exactly the JIT schemas that repeat an argument name, and there is one."""
    refused = []
    for s in jit:
        try:
            parse_schema(s)
        except SchemaParseError as error:
            assert "appears twice" in error.reason, error
            refused.append(s)
    duplicates = [s for s in jit if _has_duplicate_argument_names(s)]
    assert refused == duplicates
    assert [str(_torch_parse(s).name) for s in refused] == DUPLICATE_NAME_SCHEMAS


def test_jit_schemas_print_back_exactly(jit_parsed: list[tuple[str, FunctionSchema]]) -> None:
    """Our printing of each JIT schema is the text torch printed."""
    assert [s for s, ours in jit_parsed if str(ours) != s] == []


def test_torch_reads_our_printing_as_the_same_schema(jit_parsed: list[tuple[str, FunctionSchema]]) -> None:
    """torch.parse_schema(str(ours)) == torch.parse_schema(s) for every JIT schema we accept."""
    different = [s for s, ours in jit_parsed if _torch_parse(str(ours)) != _torch_parse(s)]
    assert different == []


def _torch_facts(schema: Any) -> tuple[object, ...]:
    """What torch's model says about a schema, in the shape of ``_our_facts``."""
    args = [
        (a.name, a.kwarg_only, a.alias_info is not None and a.alias_info.is_write, a.has_default_value())
        for a in schema.arguments
    ]
    return (schema.name, schema.overload_name, args, len(schema.returns))


def _our_facts(schema: FunctionSchema) -> tuple[object, ...]:
    kwarg_only = [False] * len(schema.positional) + [True] * len(schema.kwarg_only)
    args = [
        (a.name, kw, a.is_write, a.has_default) for a, kw in zip(schema.arguments, kwarg_only)
    ]
    return (schema.qualified_name, schema.overload_name, args, len(schema.returns))


def test_model_agrees_with_torch(jit_parsed: list[tuple[str, FunctionSchema]]) -> None:
    """Per JIT schema: the name, then per argument its name, kwarg-only flag, whether it is
    written (alias ``!``) and whether it has a default, then the number of returns."""
    disagreeing = [s for s, ours in jit_parsed if _our_facts(ours) != _torch_facts(_torch_parse(s))]
    assert disagreeing == []


# -- where torch is lenient and typedops is not -----------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "f(Tensor x, Tensor x) -> Tensor",  # an argument name used twice
        "f(int a, *, *, int b) -> Tensor",  # two '*' markers
        "f(Tensor? ? x) -> Tensor",  # optional twice
    ],
)
def test_torch_accepts_what_we_refuse(text: str) -> None:
    """torch parses these; typedops refuses them with SchemaParseError."""
    _torch_parse(text)
    with pytest.raises(SchemaParseError):
        parse_schema(text)
