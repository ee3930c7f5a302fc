"""Boxed and unboxed calls agree: for ops of many generated signatures, calling
``op(*args)`` and ``op.call_boxed(stack)`` runs the kernel with the same arguments and
gives the same results."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Optional

from hypothesis import given, settings
from hypothesis import strategies as st

from typedops import Library, Scalar, Tensor, op, tensor

_fresh = itertools.count()


@dataclass(frozen=True)
class Param:
    annotation: str  # as written in the kernel
    values: st.SearchStrategy[Any]
    default: str | None = None  # Python source of a default, if any


def _tensors() -> st.SearchStrategy[Tensor]:
    return st.lists(st.floats(-5, 5, allow_nan=False), min_size=1, max_size=3).map(tensor)


_PARAMS: list[Param] = [
    Param("Tensor", _tensors()),
    Param("Optional[Tensor]", st.none() | _tensors(), "None"),
    Param("int", st.integers(-9, 9), "1"),
    Param("float", st.floats(-9, 9, allow_nan=False), "0.5"),
    Param("bool", st.booleans(), "False"),
    Param("str", st.sampled_from(["sum", "mean", ""]), '"sum"'),
    Param("Scalar", st.integers(-3, 3) | st.floats(-3, 3, allow_nan=False), "2"),
    Param("Sequence[int]", st.lists(st.integers(-3, 3), max_size=3), "()"),
    Param("list[Tensor]", st.lists(_tensors(), min_size=1, max_size=2)),
    Param("Optional[int]", st.none() | st.integers(0, 5), "None"),
    Param("tuple[int, int]", st.tuples(st.integers(0, 4), st.integers(0, 4))),
]
_RETURNS = ["Tensor", "None", "int", "tuple[Tensor, int]", "list[int]"]


def _plain(value: Any) -> Any:
    """A comparable form of a value: tensors become their data, sequences lists."""
    if isinstance(value, Tensor):
        return ("tensor", value.tolist())
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


@dataclass
class Case:
    params: list[Param]
    kwarg_only_from: int
    returns: str


@st.composite
def cases(draw: st.DrawFn) -> Case:
    params = draw(st.lists(st.sampled_from(_PARAMS), min_size=1, max_size=5))
    # A parameter with a default may not precede one without, among the positional ones.
    kwarg_only_from = draw(st.integers(0, len(params)))
    positional = params[:kwarg_only_from]
    first_default = next((i for i, p in enumerate(positional) if p.default is not None), None)
    if first_default is not None:
        tail = positional[first_default:]
        positional = positional[:first_default] + [
            p if p.default is not None else _PARAMS[1] for p in tail
        ]
        params = positional + params[kwarg_only_from:]
    return Case(params, kwarg_only_from, draw(st.sampled_from(_RETURNS)))


def _kernel_source(case: Case) -> str:
    parts = []
    for i, p in enumerate(case.params):
        if i == case.kwarg_only_from:
            parts.append("*")
        default = f" = {p.default}" if p.default is not None else ""
        parts.append(f"p{i}: {p.annotation}{default}")
    names = ", ".join(f"p{i}" for i in range(len(case.params)))
    body = {
        "Tensor": "return out",
        "None": "return None",
        "int": "return 7",
        "tuple[Tensor, int]": "return out, 8",
        "list[int]": "return [7, 9]",
    }[case.returns]
    return (
        f"def kernel({', '.join(parts)}) -> {case.returns}:\n"
        f"    seen.append(({names},))\n"
        f"    {body}\n"
    )


@settings(max_examples=60, deadline=None)
@given(case=cases(), data=st.data())
def test_boxed_and_unboxed_calls_agree(case: Case, data: st.DataObject) -> None:
    seen: list[tuple[Any, ...]] = []
    namespace: dict[str, Any] = {
        "Tensor": Tensor, "Optional": Optional, "Sequence": Sequence, "Scalar": Scalar,
        "seen": seen, "out": tensor([42.0]),
    }  # fmt: skip
    exec(_kernel_source(case), namespace)
    ns = f"boxing_props_{next(_fresh)}"
    with Library(ns, "FRAGMENT") as lib:
        f = op(f"{ns}::f", lib=lib)(namespace["kernel"])
        values = [data.draw(p.values) for p in case.params]
        positional = values[: case.kwarg_only_from]
        keywords = {f"p{i}": v for i, v in enumerate(values) if i >= case.kwarg_only_from}

        unboxed = f(*positional, **keywords)
        stack = list(values)
        f.call_boxed(stack)

        expected_stack: list[Any]
        if case.returns == "None":
            expected_stack = []
        elif case.returns == "tuple[Tensor, int]":
            expected_stack = list(unboxed)
        else:
            expected_stack = [unboxed]
        assert _plain(stack) == _plain(expected_stack)
        assert len(seen) == 2
        assert _plain(seen[0]) == _plain(seen[1])
