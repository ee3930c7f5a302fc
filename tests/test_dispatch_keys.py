"""Dispatch keys and key sets (issue 4): priority order, set algebra, iteration, repr."""

from __future__ import annotations

import re

import pytest

from typedops import DispatchKey, DispatchKeySet, exclude_keys, include_keys, tensor
from typedops.dispatch import (
    ALIAS_KEYS,
    AUTOGRAD_KEYS,
    BACKEND_KEYS,
    alias_expansion,
    autograd_key_for,
    backend_key_for,
    local_exclude,
    local_include,
)

K = DispatchKey
ALL_NAMES = (
    "CPU, Meta, PrivateUse1, PrivateUse2, PrivateUse3, BackendSelect, Python, ADInplaceOrView, "
    "AutogradOther, AutogradCPU, AutogradMeta, AutogradPrivateUse1, AutogradPrivateUse2, "
    "AutogradPrivateUse3, Tracer, Profiler, Autocast, Batched, Autograd, "
    "CompositeImplicitAutograd, CompositeExplicitAutograd"
)
RUNTIME_IN_PRIORITY_ORDER = [
    K.CPU, K.Meta, K.PrivateUse1, K.PrivateUse2, K.PrivateUse3,
    K.BackendSelect, K.Python, K.ADInplaceOrView,
    K.AutogradOther, K.AutogradCPU, K.AutogradMeta,
    K.AutogradPrivateUse1, K.AutogradPrivateUse2, K.AutogradPrivateUse3,
    K.Tracer, K.Profiler, K.Autocast, K.Batched,
]  # fmt: skip


# -- keys --------------------------------------------------------------------------------


def test_runtime_keys_are_in_priority_order_lowest_first() -> None:
    runtime = [k for k in DispatchKey if not k.is_alias]
    assert runtime == RUNTIME_IN_PRIORITY_ORDER
    assert [int(k) for k in runtime] == list(range(len(runtime)))


def test_functionality_keys_outrank_every_backend_key() -> None:
    functionality = [k for k in RUNTIME_IN_PRIORITY_ORDER if not k.is_backend]
    assert set(BACKEND_KEYS) == {K.CPU, K.Meta, K.PrivateUse1, K.PrivateUse2, K.PrivateUse3}
    assert all(k.is_backend for k in BACKEND_KEYS)
    assert min(functionality) > max(BACKEND_KEYS)
    # PyTorch's order among functionality keys.
    assert K.BackendSelect < K.Python < K.ADInplaceOrView < K.AutogradCPU < K.Tracer
    assert K.Tracer < K.Profiler < K.Autocast < K.Batched


def test_alias_keys() -> None:
    assert ALIAS_KEYS == (K.Autograd, K.CompositeImplicitAutograd, K.CompositeExplicitAutograd)
    assert all(k.is_alias and not k.is_backend for k in ALIAS_KEYS)
    assert not any(k.is_alias for k in RUNTIME_IN_PRIORITY_ORDER)


def test_alias_expansion() -> None:
    assert alias_expansion(K.Autograd) == AUTOGRAD_KEYS
    assert alias_expansion(K.CompositeExplicitAutograd) == BACKEND_KEYS
    assert alias_expansion(K.CompositeImplicitAutograd) == AUTOGRAD_KEYS + BACKEND_KEYS
    assert alias_expansion(K.Tracer) == (K.Tracer,)


def test_autograd_key_for_each_backend_and_back() -> None:
    pairs = {
        K.CPU: K.AutogradCPU,
        K.Meta: K.AutogradMeta,
        K.PrivateUse1: K.AutogradPrivateUse1,
        K.PrivateUse2: K.AutogradPrivateUse2,
        K.PrivateUse3: K.AutogradPrivateUse3,
    }
    for backend, autograd in pairs.items():
        assert autograd_key_for(backend) == autograd
        assert backend_key_for(autograd) == backend
    assert autograd_key_for(K.Tracer) == K.AutogradOther
    assert backend_key_for(K.AutogradOther) is None


def test_key_repr_and_str() -> None:
    assert repr(K.AutogradCPU) == "DispatchKey.AutogradCPU"
    assert str(K.AutogradCPU) == "AutogradCPU"
    assert f"{K.Tracer}" == "Tracer"


def test_parse_accepts_keys_and_names() -> None:
    assert DispatchKey.parse("Tracer") is K.Tracer
    assert DispatchKey.parse(K.Meta) is K.Meta
    assert DispatchKey.parse("CompositeExplicitAutograd") is K.CompositeExplicitAutograd


def test_parse_typo_suggests_the_near_key() -> None:
    with pytest.raises(ValueError) as excinfo:
        DispatchKey.parse("Tracr")
    assert str(excinfo.value) == f"unknown dispatch key 'Tracr'; did you mean 'Tracer'? (keys: {ALL_NAMES})"


def test_parse_without_a_near_key_lists_the_keys() -> None:
    with pytest.raises(ValueError) as excinfo:
        DispatchKey.parse("Zzzzzz")
    assert str(excinfo.value) == f"unknown dispatch key 'Zzzzzz' (keys: {ALL_NAMES})"


# -- key sets ----------------------------------------------------------------------------


def test_empty_key_set() -> None:
    empty = DispatchKeySet()
    assert len(empty) == 0
    assert not empty
    assert list(empty) == []
    assert repr(empty) == "DispatchKeySet()"
    with pytest.raises(ValueError, match=re.escape("an empty DispatchKeySet has no highest key")):
        empty.highest()
    assert empty.highest_backend() is None


def test_key_set_from_keys_names_and_a_single_key() -> None:
    a = DispatchKeySet([K.CPU, "AutogradCPU"])
    assert a == DispatchKeySet((K.AutogradCPU, K.CPU))
    assert DispatchKeySet(K.Tracer) == DispatchKeySet([K.Tracer])
    assert a.bits == (1 << K.CPU) | (1 << K.AutogradCPU)
    assert DispatchKeySet.from_bits(a.bits) == a
    assert isinstance(DispatchKeySet.from_bits(3), DispatchKeySet)
    # duplicates collapse
    assert len(DispatchKeySet([K.CPU, K.CPU, "CPU"])) == 1


def test_key_set_membership() -> None:
    s = DispatchKeySet([K.CPU, K.Tracer])
    assert K.CPU in s and K.Tracer in s
    assert K.Meta not in s
    assert K.Autograd not in s  # alias keys are never members
    assert 0 not in s


@pytest.mark.parametrize("alias", ALIAS_KEYS)
def test_alias_keys_are_refused_in_key_sets(alias: DispatchKey) -> None:
    expanded = ", ".join(k.name for k in alias_expansion(alias))
    message = (
        f"{alias.name} is an alias key and cannot be in a DispatchKeySet; "
        f"use the runtime keys it stands for ({expanded})"
    )
    with pytest.raises(ValueError, match=re.escape(message)):
        DispatchKeySet([K.CPU, alias])
    with pytest.raises(ValueError, match=re.escape(message)):
        DispatchKeySet([alias.name])


@pytest.mark.parametrize("method", ["add", "remove", "below"])
def test_alias_keys_are_refused_by_add_remove_below(method: str) -> None:
    s = DispatchKeySet([K.CPU])
    with pytest.raises(ValueError) as excinfo:
        getattr(s, method)(K.Autograd)
    assert str(excinfo.value) == "Autograd is an alias key; key sets hold runtime keys only"


def test_unknown_key_name_in_a_key_set() -> None:
    with pytest.raises(ValueError, match=re.escape("unknown dispatch key 'Cpu'")):
        DispatchKeySet(["Cpu"])


def test_union_intersection_difference_stay_key_sets() -> None:
    a = DispatchKeySet([K.CPU, K.AutogradCPU])
    b = DispatchKeySet([K.CPU, K.Tracer])
    union, inter, diff = a | b, a & b, a - b
    assert union == DispatchKeySet([K.CPU, K.AutogradCPU, K.Tracer])
    assert inter == DispatchKeySet([K.CPU])
    assert diff == DispatchKeySet([K.AutogradCPU])
    for result in (union, inter, diff):
        assert type(result) is DispatchKeySet
    # an int on the left still gives a key set
    assert type(0 | a) is DispatchKeySet and 0 | a == a
    assert type(a.bits & b) is DispatchKeySet


def test_add_and_remove_return_new_sets() -> None:
    a = DispatchKeySet([K.CPU])
    b = a.add(K.Tracer)
    assert a == DispatchKeySet([K.CPU])  # immutable: a is unchanged
    assert b == DispatchKeySet([K.CPU, K.Tracer])
    assert b.remove(K.CPU) == DispatchKeySet([K.Tracer])
    assert a.remove(K.Meta) == a  # removing an absent key is no error
    assert a.add(K.CPU) == a


def test_key_sets_are_immutable() -> None:
    s = DispatchKeySet([K.CPU])
    with pytest.raises((AttributeError, TypeError)):
        s.extra = 1  # type: ignore[attr-defined]
    with pytest.raises(AttributeError):
        s.bits = 5  # type: ignore[misc]
    t = s
    t |= DispatchKeySet([K.Meta])  # rebinding, not mutation
    assert s == DispatchKeySet([K.CPU])
    assert t == DispatchKeySet([K.CPU, K.Meta])


def test_key_sets_are_hashable_and_compare_by_keys() -> None:
    assert {DispatchKeySet([K.CPU, K.Meta]), DispatchKeySet([K.Meta, K.CPU])} == {DispatchKeySet([K.CPU, K.Meta])}


def test_highest_is_the_highest_priority_key() -> None:
    assert DispatchKeySet([K.CPU, K.AutogradCPU, K.BackendSelect]).highest() is K.AutogradCPU
    assert DispatchKeySet([K.CPU, K.Batched, K.Tracer]).highest() is K.Batched
    assert DispatchKeySet([K.Meta, K.CPU]).highest() is K.Meta
    assert DispatchKeySet([K.CPU]).highest() is K.CPU


def test_highest_backend() -> None:
    assert DispatchKeySet([K.CPU, K.AutogradCPU, K.Tracer]).highest_backend() is K.CPU
    assert DispatchKeySet([K.CPU, K.PrivateUse1, K.AutogradCPU]).highest_backend() is K.PrivateUse1
    assert DispatchKeySet([K.Tracer, K.AutogradCPU]).highest_backend() is None


def test_below_keeps_only_lower_priority_keys() -> None:
    s = DispatchKeySet([K.Batched, K.Tracer, K.AutogradCPU, K.BackendSelect, K.CPU])
    assert s.below(K.Tracer) == DispatchKeySet([K.AutogradCPU, K.BackendSelect, K.CPU])
    assert s.below(K.AutogradCPU) == DispatchKeySet([K.BackendSelect, K.CPU])
    assert s.below(K.CPU) == DispatchKeySet()
    # the key need not be in the set
    assert s.below(K.Python) == DispatchKeySet([K.BackendSelect, K.CPU])
    assert type(s.below(K.Tracer)) is DispatchKeySet


def test_iteration_goes_from_highest_priority_down() -> None:
    keys = [K.CPU, K.Batched, K.BackendSelect, K.AutogradCPU, K.Meta, K.Tracer]
    s = DispatchKeySet(keys)
    assert list(s) == sorted(keys, reverse=True)
    assert list(s) == [K.Batched, K.Tracer, K.AutogradCPU, K.BackendSelect, K.Meta, K.CPU]
    assert len(s) == 6


def test_every_runtime_key_round_trips() -> None:
    full = DispatchKeySet(RUNTIME_IN_PRIORITY_ORDER)
    assert list(full) == RUNTIME_IN_PRIORITY_ORDER[::-1]
    assert len(full) == len(RUNTIME_IN_PRIORITY_ORDER)
    for key in RUNTIME_IN_PRIORITY_ORDER:
        assert DispatchKeySet([key]).highest() is key
        assert list(DispatchKeySet([key])) == [key]


def test_repr_lists_keys_highest_first() -> None:
    s = DispatchKeySet([K.CPU, K.AutogradCPU, K.Tracer])
    assert repr(s) == "DispatchKeySet(Tracer, AutogradCPU, CPU)"
    assert str(s) == repr(s)


# -- tensors carry keys ------------------------------------------------------------------


def test_cpu_tensor_keys() -> None:
    t = tensor([1.0, 2.0])
    assert t.keys == DispatchKeySet([K.CPU, K.ADInplaceOrView])  # AutogradCPU only when it requires grad
    assert t.key_bits == int(t.keys)
    assert repr(t.keys) == "DispatchKeySet(ADInplaceOrView, CPU)"
    t.requires_grad_()
    assert repr(t.keys) == "DispatchKeySet(AutogradCPU, ADInplaceOrView, CPU)"


def test_meta_tensor_keys_and_no_data() -> None:
    t = tensor([[1, 2, 3]], device="meta")
    assert t.keys == DispatchKeySet([K.Meta, K.ADInplaceOrView])
    assert t.shape == (1, 3)
    assert t.is_meta
    assert str(t.device) == "meta"
    with pytest.raises(RuntimeError):
        t.numpy()


# -- bugs --------------------------------------------------------------------------------


def test_set_algebra_with_a_bare_key_uses_its_bit() -> None:
    # A DispatchKey is an IntEnum whose value is its bit *position* (Meta == 1); the
    # operators must treat it as the one-key set, not as the bit mask 1 (which is CPU).
    s = DispatchKeySet([K.CPU, K.Meta])
    assert DispatchKeySet() | K.Meta == DispatchKeySet([K.Meta])
    assert s - K.CPU == DispatchKeySet([K.Meta])
    assert s & K.Meta == DispatchKeySet([K.Meta])
    assert s - K.Tracer == s
    with pytest.raises(ValueError, match=re.escape("Autograd is an alias key; key sets hold runtime keys only")):
        s | K.Autograd


def test_a_single_key_name_is_one_key() -> None:
    assert DispatchKeySet("Tracer") == DispatchKeySet([K.Tracer])
    with include_keys("Tracer"):
        assert local_include() == DispatchKeySet([K.Tracer])
    with exclude_keys("Tracer"):
        assert local_exclude() == DispatchKeySet([K.Tracer])


def test_parse_suggests_a_key_differing_only_in_case() -> None:
    with pytest.raises(ValueError, match=re.escape("unknown dispatch key 'cpu'; did you mean 'CPU'?")):
        DispatchKey.parse("cpu")
