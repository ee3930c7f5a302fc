"""typedops' schema language against PyTorch's, over every schema PyTorch ships.

Needs torch (``make compat``). The corpora are the 2,584 ``func:`` lines of
native_functions.yaml and the ~4,400 operator schemas TorchScript registers.

One JIT schema is refused on purpose: ``static_runtime::clamp_nan_to_num`` names two
arguments ``posinf``. torch accepts that (its parser does not check names); typedops
refuses it, because an argument must be addressable by name.

Also here: the differential fuzz of ``tests/schema_fuzz.py`` (one-character mutants of
every yaml schema, figures recorded in docs/schema.md), the re-spaced yaml schemas, and
``infer_schema`` against torch's own tables of the types ``torch.library.infer_schema``
supports.
"""

from __future__ import annotations

import functools
import operator
import random
import types
import typing
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

import pytest

from tests import schema_fuzz
from tests.corpus import jit_schemas, native_function_schemas
from tests.strategies import respace
from tests.test_schema_properties import check_respaced
from typedops.schema import FunctionSchema, SchemaParseError, is_backward_compatible_with, parse_schema

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


# The schemas torch registers when imported, read at collection: a test run earlier in the
# session may import more of torch (torch.func.grad imports torch._dynamo, which registers
# Python-side ops such as "_dtensor::...(PyObject mesh, ...)" that torch's own parser refuses).
_JIT_AT_IMPORT: Final = jit_schemas()


@pytest.fixture(scope="module")
def jit() -> list[str]:
    schemas = _JIT_AT_IMPORT
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
        "f(int x=0x10) -> ()",  # torch reads the default as 0
        "f(*) -> ()",  # a '*' with no keyword-only argument after it
        "f(complex x=1j) -> ()",  # an imaginary literal
    ],
)
def test_torch_accepts_what_we_refuse(text: str) -> None:
    """torch parses these; typedops refuses them with SchemaParseError (docs/schema.md's table)."""
    _torch_parse(text)
    with pytest.raises(SchemaParseError):
        parse_schema(text)


def test_we_accept_what_torch_refuses() -> None:
    """A MemoryFormat default by member name (docs/schema.md's table)."""
    text = "f(MemoryFormat x=preserve_format) -> ()"
    with pytest.raises(RuntimeError):
        _torch_parse(text)
    assert str(parse_schema(text)) == text


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("f(int[2] k) -> ()", "f(int[] k) -> ()"),
        ("f(int[2]? k) -> ()", "f(int[]? k) -> ()"),
        ("f(int[2] k) -> ()", "f(int[2]? k) -> ()"),
        ("f(int[] k) -> ()", "f(int[2] k) -> ()"),
        ("f(int[] k) -> ()", "f(int[]? k) -> ()"),
    ],
)
def test_sized_list_arguments_are_backward_compatible_as_torch_judges(old: str, new: str) -> None:
    theirs = _torch_parse(new).is_backward_compatible_with(_torch_parse(old))
    assert is_backward_compatible_with(parse_schema(old), parse_schema(new)) is theirs


# -- whitespace: every yaml schema, re-spaced, parses the same in both parsers ----------------


def test_respaced_native_functions_parse_the_same(native: list[str]) -> None:
    """Each func line, re-spaced around and inside its tokens (seeded), gives the same schema
    in typedops, and the same schema in torch as the line itself."""
    rng = random.Random(11)

    def no_newline(choices: Sequence[str]) -> str:
        return rng.choice([ws for ws in choices if "\n" not in ws])

    for text in native:
        check_respaced(text, respace(text, rng.choice))
        # torch's lexer ends a statement at a newline outside brackets (docs/schema.md)
        spaced = respace(text, no_newline)
        check_respaced(text, spaced)
        assert _torch_parse(spaced) == _torch_parse(text), spaced


# -- the differential fuzz ------------------------------------------------------------------

# Figures of ``tests.schema_fuzz.run`` over native_functions.yaml with seed 0, as
# docs/schema.md records them: distinct mutants, agreements, and each class of
# deliberate disagreement (see the table "Differences from PyTorch" there).
FUZZ_MUTANTS: Final = 469_840
FUZZ_AGREED: Final = 467_773
FUZZ_CLASSES: Final = {
    "default fits its type": 1068,
    "legacy '!'": 637,
    "one '?'": 117,
    "required after defaulted": 116,
    "type variables are identifiers": 111,
    "names must be unique": 9,
    "list size is a whole number": 9,
}
_DOCS: Final = Path(__file__).parent.parent / "docs" / "schema.md"


def test_differential_fuzz_against_torch(native: list[str]) -> None:
    """One-character mutants of every yaml schema: both parsers agree, or the disagreement
    is a deliberate one docs/schema.md lists, with the figures it records."""
    report = schema_fuzz.run(native, _torch_parse, seed=0)
    unexplained = {c: report.examples[c] for c in report.classes if c.startswith(schema_fuzz.UNEXPLAINED)}
    assert unexplained == {}
    assert (report.mutants, report.agreed, dict(report.classes)) == (FUZZ_MUTANTS, FUZZ_AGREED, FUZZ_CLASSES)
    docs = _DOCS.read_text()
    assert f"{FUZZ_MUTANTS:,} mutants" in docs and f"{FUZZ_AGREED:,} agree" in docs
    for cls, count in FUZZ_CLASSES.items():
        assert f"| {count:,} |" in docs and cls in docs, cls


# -- inference: a superset of torch.library.infer_schema --------------------------------------


def _ours(ann: Any) -> Any:
    """``ann`` with torch's classes replaced by typedops' own (Tensor, ScalarType, Device)."""
    from typedops import Device, ScalarType, Tensor

    swap = {torch.Tensor: Tensor, torch.dtype: ScalarType, torch.device: Device}
    if isinstance(ann, type) or ann is None:
        return swap.get(ann, ann)
    if getattr(ann, "__supertype__", None) is str:  # GroupName, a NewType of str
        return str
    args = tuple(_ours(a) for a in typing.get_args(ann))
    if isinstance(ann, types.UnionType):
        return functools.reduce(operator.or_, args)
    if isinstance(ann, types.GenericAlias):
        return types.GenericAlias(typing.get_origin(ann), args)
    return ann.copy_with(args)


def _inferred(param: Any, ret: Any) -> str:
    from typedops.schema import infer_schema

    def kernel(x):  # type: ignore[no-untyped-def]  # annotated below, from torch's tables
        raise NotImplementedError

    kernel.__annotations__ = {"x": _ours(param), "return": _ours(ret)}
    return str(infer_schema(kernel))


# typedops reads 'int' as 'int' where torch writes 'SymInt' (SymInt is opt-in:
# 'typedops.SymInt'); docs/schema-inference.md states it. Nothing else may differ.
def _as_torch_writes(schema_type: str) -> str:
    return schema_type.replace("int", "SymInt") if schema_type.startswith("int") else schema_type


def test_infer_accepts_every_parameter_type_torch_infers() -> None:
    SUPPORTED_PARAM_TYPES = pytest.importorskip("torch._library.infer_schema").SUPPORTED_PARAM_TYPES

    different = {}
    for ann, theirs in SUPPORTED_PARAM_TYPES.items():
        ours = _inferred(ann, None).removeprefix("kernel(").removesuffix(" x) -> ()")
        if _as_torch_writes(ours) != theirs:
            different[str(ann)] = (ours, theirs)
    assert different == {}


def test_infer_accepts_every_return_type_torch_infers() -> None:
    SUPPORTED_RETURN_TYPES = pytest.importorskip("torch._library.infer_schema").SUPPORTED_RETURN_TYPES

    different = {}
    for ann, theirs in SUPPORTED_RETURN_TYPES.items():
        ours = _inferred(int, ann).removeprefix("kernel(int x) -> ")
        if _as_torch_writes(ours) != theirs:
            different[str(ann)] = (ours, theirs)
    assert different == {}
