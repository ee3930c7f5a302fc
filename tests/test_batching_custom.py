"""``register_vmap`` (typedops/batching/_custom.py): rules for @op and Library ops, checked
at registration, called with the physical tensors, in_dims and info; the static side is in
tests/static/vmap_rules.py."""

from __future__ import annotations

import re
import warnings
from typing import Any

import numpy as np
import pytest

from typedops import Library, Tensor, op, tensor, vmap
from typedops.batching import force_fallback
from typedops.dispatch import InDims, VmapInfo
from typedops.vocabulary import ArgumentError, RegistrationError


def arr(*shape: int) -> Tensor:
    return tensor(np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape))


@op("vmap_custom::scale")
def scale(x: Tensor, factor: float, *, shift: float = 0.0) -> Tensor:
    return Tensor.from_numpy(x.numpy() * factor + shift)


calls: list[tuple[VmapInfo, InDims]] = []


def scale_rule(info: VmapInfo, in_dims: InDims, x: Tensor, factor: float, *, shift: float = 0.0) -> tuple[Tensor, int | None]:
    calls.append((info, in_dims))
    return scale(x, factor, shift=shift), in_dims[0]


registration = scale.register_vmap(scale_rule)


def test_the_rule_gets_info_in_dims_and_physical_tensors() -> None:
    calls.clear()
    x = arr(2, 3)
    out = vmap(lambda a: scale(a, 2.0, shift=1.0), in_dims=1, randomness="same")(x)
    np.testing.assert_allclose(out.numpy(), (x.numpy() * 2 + 1).T)
    assert calls == [(VmapInfo(batch_size=3, randomness="same"), (1, None, None))]


def test_the_rule_is_not_called_on_plain_tensors_and_yields_to_force_fallback() -> None:
    calls.clear()
    x = arr(2, 3)
    np.testing.assert_allclose(scale(x, 3.0).numpy(), x.numpy() * 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with force_fallback():
            out = vmap(lambda a: scale(a, 3.0))(x)
    np.testing.assert_allclose(out.numpy(), x.numpy() * 3)
    assert calls == []


def test_tensor_lists_get_a_list_of_in_dims() -> None:
    with Library("vmap_custom_lists", "DEF") as lib:
        handle = lib.define("total(Tensor[] xs) -> Tensor")
        seen: list[Any] = []

        def total(xs: list[Tensor]) -> Tensor:
            return Tensor.from_numpy(np.sum([x.numpy() for x in xs], axis=0))

        def rule(info: VmapInfo, in_dims: InDims, xs: list[Tensor]) -> tuple[Tensor, int]:
            seen.append(in_dims)
            moved = [x if d == 0 else Tensor.from_numpy(np.broadcast_to(x.numpy(), (info.batch_size, *x.shape)).copy()) for x, d in zip(xs, in_dims[0])]
            return total(moved), 0

        lib.impl("total", total, "CPU")
        handle.register_vmap(rule)
        a, b = arr(3, 2), arr(2)
        out = vmap(lambda p: handle([p, b]))(a)
        np.testing.assert_allclose(out.numpy(), a.numpy() + b.numpy())
        assert seen == [([0, None],)]


def test_registration_checks_the_rule_against_the_schema() -> None:
    def wrong(info: VmapInfo, in_dims: InDims, x: Tensor) -> tuple[Tensor, int]:
        return x, 0

    with pytest.raises(RegistrationError) as error:
        scale.register_vmap(wrong)  # type: ignore[arg-type]
    assert str(error.value) == (
        "register_vmap: the rule test_registration_checks_the_rule_against_the_schema.<locals>.wrong does not "
        "fit vmap_custom::scale: too many positional arguments. A vmap rule takes (info, in_dims, x, factor, *, "
        "shift) -- the op's arguments after info and in_dims -- and returns (result, out_dims)"
    )
    with pytest.raises(RegistrationError, match=re.escape("register_vmap: the rule for vmap_custom::scale must be a function, not int")):
        scale.register_vmap(3)  # type: ignore[arg-type]


def identity(x: Tensor) -> Tensor:
    return x


def plus_one(x: Tensor) -> Tensor:
    return Tensor.from_numpy(x.numpy() + 1)


def test_a_rule_that_returns_the_wrong_shape_of_answer() -> None:
    with Library("vmap_custom_bad", "DEF") as lib:
        handle = lib.define("f(Tensor x) -> Tensor")
        lib.impl("f", identity, "CPU")
        handle.register_vmap(lambda info, in_dims, x: x)
        with pytest.raises(ArgumentError, match=re.escape("the vmap rule of vmap_custom_bad::f must return a pair (result, out_dims), got Tensor")):
            vmap(handle)(arr(2, 2))
    with Library("vmap_custom_bad2", "DEF") as lib:
        handle = lib.define("f(Tensor x) -> Tensor")
        lib.impl("f", identity, "CPU")
        handle.register_vmap(lambda info, in_dims, x: (x, (0, 1)))
        with pytest.raises(ArgumentError, match=re.escape("the vmap rule of vmap_custom_bad2::f returned out_dims=(0, 1) for a result of 1 tensor(s)")):
            vmap(handle)(arr(2, 2))


def total(x: Tensor) -> Tensor:
    return Tensor.from_numpy(np.asarray(x.numpy().sum(), dtype=np.float32))


@pytest.mark.parametrize(
    ("kernel", "out_dim", "rank"),
    [(identity, 2, 2), (identity, 7, 2), (identity, -3, 2), (total, 0, 0), (total, -1, 0)],
)
def test_a_rule_out_dim_must_be_a_dimension_of_its_result(kernel: Any, out_dim: int, rank: int) -> None:
    with Library("vmap_custom_range", "DEF") as lib:
        handle = lib.define("f(Tensor x) -> Tensor")
        lib.impl("f", kernel, "CPU")
        handle.register_vmap(lambda info, in_dims, x: (handle(x), out_dim))
        with pytest.raises(ArgumentError) as caught:
            vmap(handle)(arr(4, 3))
    assert str(caught.value) == (
        f"the vmap rule of vmap_custom_range::f returned out_dim={out_dim} for a result of rank {rank}: the batch "
        f"dimension must be one of the result's dimensions ({-rank} <= out_dim < {rank}); return the result with "
        "the batch in it, or out_dims=None for a result that is the same for every sample"
    )


@pytest.mark.parametrize("out_dim", [0, 1, -1, -2])
def test_a_rule_out_dim_may_count_from_the_end(out_dim: int) -> None:
    with Library("vmap_custom_neg", "DEF") as lib:
        handle = lib.define("f(Tensor x) -> Tensor")
        lib.impl("f", identity, "CPU")
        handle.register_vmap(lambda info, in_dims, x: (handle(x.t().contiguous() if in_dims[0] != out_dim % 2 else x), out_dim))
        out = vmap(handle)(arr(2, 3))
    assert out.shape == (2, 3)
    np.testing.assert_array_equal(out.numpy(), arr(2, 3).numpy())


def test_removing_the_registration_brings_back_the_fallback() -> None:
    x = arr(2, 3)
    with Library("vmap_custom_rm", "DEF") as lib:
        handle = lib.define("g(Tensor x) -> Tensor")
        lib.impl("g", plus_one, "CPU")
        reg = handle.register_vmap(lambda info, in_dims, x: (handle(x), in_dims[0]))
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            vmap(handle)(x)
        reg.remove()
        with pytest.warns(UserWarning, match="the batching rule for vmap_custom_rm::g"):
            np.testing.assert_allclose(vmap(handle)(x).numpy(), x.numpy() + 1)
    assert registration is not None
