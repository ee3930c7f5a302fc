"""The generated entry points (dispatch/_entry.py): argument names never meet ours.

Note [Generated names never meet argument names]: a schema argument may be named like any
local, parameter or global the generated entries use; the kernel must still receive the
value passed for it, on every entry point.
"""

from __future__ import annotations

from typing import Any

import pytest

from typedops import DispatchKey, DispatchKeySet, Library, boxed, include_keys, tensor
from typedops.boxing import call_shape
from typedops.dispatch._entry import entry_source
from typedops.schema import parse_schema
from typedops.vocabulary import ArgumentValueError

OURS = ["_b", "_op", "_ks", "_apply", "_tls_active", "_list_bits", "_optional_list_bits", "_op_bad_args", "_traced"]


def _second_argument(op: Any, keys: DispatchKeySet, stack: list[Any]) -> None:
    stack[:] = [stack[1]]


@pytest.mark.parametrize("name", OURS)
def test_an_argument_named_like_a_generated_name_reaches_the_kernel(name: str) -> None:
    with Library("entry_names", "FRAGMENT") as lib:
        handle = lib.define(f"f(Tensor x, int {name}, Tensor[] ys) -> int")
        lib.impl("f", boxed(_second_argument), "CPU")
        x, ys = tensor([1.0]), [tensor([2.0])]
        assert handle(x, 42, ys) == 42
        assert handle(x, ys=ys, **{name: 42}) == 42
        stack: list[Any] = [x, 42, ys]
        handle.call_boxed(stack)
        assert stack == [42]
        with include_keys(DispatchKey.Tracer):  # the per-context sets are read too
            assert handle(x, 42, ys) == 42
        assert handle.redispatch(DispatchKeySet([DispatchKey.Tracer, DispatchKey.CPU]), x, 42, ys) == 42


def test_ours_are_renamed_not_the_users() -> None:
    text = entry_source(call_shape(parse_schema("f(Tensor x, int _b, int _tls_active) -> int")), False)
    assert "    def call(x, _b, _tls_active):" in text
    assert "        return _op.cache[_b_](x, _b, _tls_active)" in text
    assert "        if _tls_active_['_tls_active']:" in text


def test_a_shape_without_clashes_keeps_the_plain_names() -> None:
    text = entry_source(call_shape(parse_schema("f(Tensor x, int b) -> int")), False)
    assert "        return _op.cache[_b](x, b)" in text
    assert "_entry_globals" not in text


def test_two_arguments_with_one_python_name_are_refused() -> None:
    with pytest.raises(ArgumentValueError) as info:
        call_shape(parse_schema("ns::f(int def, int def_) -> ()"))
    assert str(info.value) == (
        "arguments 'def' and 'def_' of ns::f would both be the Python parameter 'def_' (a Python "
        "keyword gets a trailing '_'); rename one"
    )
