"""The registration section's schema entries (typedops/codegen/_registration.py): builder
calls that name only the fields that differ from their defaults, and rebuild any schema
exactly."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings

import typedops.runtime
from typedops.codegen._layout import flat
from typedops.codegen._registration import _Types, schema_node
from typedops.schema import FunctionSchema, parse_schema
from tests.strategies import function_schemas

_BUILDERS = {"_alias": "alias", "_argument": "argument", "_return": "make_return", "_schema": "schema"}


def _rebuild(schema: FunctionSchema) -> tuple[str, Any]:
    types = _Types()
    text = flat(schema_node(schema, types))
    namespace: dict[str, Any] = {alias: getattr(typedops.runtime, name) for alias, name in _BUILDERS.items()}
    namespace.update({f"_{name}": getattr(typedops.runtime, name) for name in typedops.runtime.__all__})
    exec("\n".join(types.lines), namespace)
    return text, eval(text, namespace)


def test_an_entry_names_the_fields_that_differ_from_their_defaults() -> None:
    schema = parse_schema("ns::f.o(Tensor(a -> *) self, int[] x=[], *, Tensor[](b!) out) -> Tensor(a) r")
    text, rebuilt = _rebuild(schema)
    assert text == (
        "_schema('f', 'ns', 'o', "
        "positional=(_argument('self', _t0, alias=_alias(('a',), after=('*',))), _argument('x', _t2, default='[]')), "
        "kwarg_only=(_argument('out', _t3, alias=_alias(('b',), is_write=True), alias_depth=1),), "
        "returns=(_return(_t0, name='r', alias=_alias(('a',))),))"
    )
    assert rebuilt == schema
    # varargs take no defaults (as in torch), so they get a schema of their own
    varargs = parse_schema("ns::g(Tensor self, ...) -> ...")
    text, rebuilt = _rebuild(varargs)
    assert text == "_schema('g', 'ns', '', positional=(_argument('self', _t0),), is_vararg=True, is_varret=True)"
    assert rebuilt == varargs


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(function_schemas())
def test_entries_rebuild_any_schema_exactly(schema: FunctionSchema) -> None:
    assert _rebuild(schema)[1] == schema
