"""The generated functional API's overload choosers (typedops/codegen/_api.py)."""

from __future__ import annotations

from typedops import core, tensor
from typedops.codegen._api import chooser_lines
from typedops.schema import parse_schema


def test_an_overload_that_takes_fewer_positional_arguments_than_the_others_require() -> None:
    short = parse_schema("ns::sum(Tensor self, *, ScalarType? dtype=None) -> Tensor")
    long = parse_schema("ns::sum.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor")
    lines = chooser_lines("sum", [short, long], ["short.call", "long.call"], "_C")
    assert lines[2:] == [
        "    if len(args) <= 1 and 'dim' not in kwargs:",
        "        return short.call(*args, **kwargs)",
        "    return _choose('ns::sum', _C, args, kwargs)",
    ]


def test_no_arity_test_when_another_overload_could_take_as_few_arguments() -> None:
    a = parse_schema("ns::f(Tensor self, int x=0) -> Tensor")
    b = parse_schema("ns::f.y(Tensor self, bool y=False) -> Tensor")
    assert chooser_lines("f", [a, b], ["a", "b"], "_C")[2:] == ["    return _choose('ns::f', _C, args, kwargs)"]


def test_the_core_sum_chooser_still_reaches_every_overload() -> None:
    x = tensor([[1.0, 2.0], [3.0, 4.0]])
    assert core.sum(x).tolist() == 10.0 and core.sum(x, dtype=None).tolist() == 10.0
    assert core.sum(x, [0]).tolist() == [4.0, 6.0] and core.sum(x, dim=[1]).tolist() == [3.0, 7.0]
    assert core.sum(self=x).tolist() == 10.0 and x.sum().tolist() == 10.0
