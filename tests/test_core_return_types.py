"""Named results (typedops/core/return_types.py, Note [Named results]): the core functions
and methods of an op naming its returns give a tuple with those names; its op handle and
the boxed convention keep a plain tuple; every such core schema has its class."""

from __future__ import annotations

from pathlib import Path

import typedops
from typedops import core, ops, tensor
from typedops.core import return_types
from typedops.func import grad, vmap
from typedops.schema import parse_schema

_X = [[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]]


def test_max_and_min_over_a_dim_name_their_values_and_indices() -> None:
    x = tensor(_X)
    for result, cls in ((x.max(1), return_types.max), (core.max(x, 1), return_types.max),
                        (x.min(dim=0), return_types.min), (core.min(x, 0, True), return_types.min)):  # fmt: skip
        assert type(result) is cls and len(result) == 2
        values, indices = result
        assert result.values is values and result.indices is indices
    assert x.max(1).values.tolist() == [5.0, 7.0] and x.max(1).indices.tolist() == [1, 0]
    assert core.min(x, 0, keepdim=True).values.shape == (1, 3)
    assert repr(x.min(0)).startswith("min(values=tensor([1.0, 0.0, 2.0]")


def test_the_op_handles_and_the_boxed_convention_keep_plain_tuples() -> None:
    x = tensor(_X)
    assert type(ops.core.max.dim(x, 1)) is tuple and type(ops.core.min(x, 0)) is tuple
    stack: list[object] = [x, 1, False]
    ops.core.max.dim.call_boxed(stack)
    assert len(stack) == 2 and all(isinstance(t, typedops.Tensor) for t in stack)


def test_named_results_flow_through_vmap_and_grad() -> None:
    x = tensor(_X)
    batched = vmap(lambda t: t.max(0))(x)
    assert type(batched) is return_types.max and batched.values.tolist() == [5.0, 7.0]
    assert grad(lambda t: t.max(1).values.sum())(x).tolist() == [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]


def test_every_core_schema_naming_its_returns_has_its_class_with_those_fields() -> None:
    import yaml

    with open(Path(core.__file__).parent / "native_functions.yaml", encoding="utf-8") as f:
        entries = yaml.safe_load(f)
    named: dict[str, tuple[str, ...]] = {}
    for entry in entries:
        schema = parse_schema(entry["func"])
        if len(schema.returns) > 1 and all(r.name for r in schema.returns):
            named.setdefault(schema.name, tuple(r.name or "" for r in schema.returns))
    assert named == {"max": ("values", "indices"), "min": ("values", "indices")}
    for name, fields in named.items():
        assert getattr(return_types, name)._fields == fields
    assert sorted(return_types.__all__) == sorted(named)


def test_x_max_y_and_x_min_y_are_maximum_and_minimum() -> None:
    x, y = tensor(_X), tensor([[2.0, 2.0, 2.0], [2.0, 2.0, 2.0]])
    assert x.max(y).tolist() == core.maximum(x, y).tolist() == [[2.0, 5.0, 2.0], [7.0, 2.0, 3.0]]
    assert core.min(x, y).tolist() == core.minimum(x, y).tolist() == [[1.0, 2.0, 2.0], [2.0, 0.0, 2.0]]
    assert core.max(x, other=y).tolist() == x.max(y).tolist()
    # ties share the gradient, as maximum's (and torch's max.other's) does
    assert grad(lambda t: t.max(tensor(_X)).sum())(x).tolist() == [[0.5, 0.5, 0.5], [0.5, 0.5, 0.5]]
