"""grad and vmap composed both ways: per-sample gradients (arguments batched or not at
each level, any batch dimension, nested vmaps), grad of vmap, backward through vmap, the
fallback forced, higher order under vmap -- each against the same computation per sample."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from typedops import ScalarType, Tensor, core, tensor
from typedops.func import force_fallback, grad, grad_and_value, vmap

F64 = ScalarType.float64
RNG = np.random.default_rng(1414)


def t(values: Any, requires_grad: bool = False) -> Tensor:
    return tensor(np.asarray(values, dtype=np.float64), dtype=F64, requires_grad=requires_grad)


def randn(*shape: int) -> np.ndarray[Any, Any]:
    return RNG.standard_normal(shape)


def loss(params: dict[str, Tensor], x: Tensor, y: Tensor) -> Tensor:
    """A 2-layer MLP's squared error on one sample."""
    h = core.tanh(x @ params["w1"] + params["b1"])
    out = h @ params["w2"] + params["b2"]
    d = out - y
    result: Tensor = (d * d).mean()
    return result


def mlp_params() -> dict[str, np.ndarray[Any, Any]]:
    return {"w1": randn(3, 5) / 2, "b1": randn(5), "w2": randn(5, 2) / 2, "b2": randn(2)}


def tensors(arrays: dict[str, np.ndarray[Any, Any]]) -> dict[str, Tensor]:
    return {k: t(v) for k, v in arrays.items()}


def close(a: Tensor, b: np.ndarray[Any, Any]) -> None:
    np.testing.assert_allclose(a.numpy(), b, rtol=1e-10, atol=1e-12)


def test_per_sample_gradients_equal_a_loop_over_samples() -> None:
    p, x, y = mlp_params(), randn(6, 3), randn(6, 2)
    per_sample = vmap(grad(loss), in_dims=(None, 0, 0))(tensors(p), t(x), t(y))
    for k in p:
        expected = np.stack([grad(loss)(tensors(p), t(x[i]), t(y[i]))[k].numpy() for i in range(6)])
        assert per_sample[k].shape == (6, *p[k].shape)
        close(per_sample[k], expected)


@pytest.mark.filterwarnings("ignore:There is a performance drop")
def test_per_sample_gradients_with_the_fallback_forced_equal_the_rules() -> None:
    p, x, y = mlp_params(), randn(4, 3), randn(4, 2)
    fast = vmap(grad(loss), in_dims=(None, 0, 0))(tensors(p), t(x), t(y))
    with force_fallback():
        slow = vmap(grad(loss), in_dims=(None, 0, 0))(tensors(p), t(x), t(y))
    for k in p:
        close(slow[k], fast[k].numpy())


def test_unbatched_arguments_get_per_sample_gradients_not_their_sum() -> None:
    w, x = t([1.0, 2.0]), t([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]])
    g = vmap(grad(lambda w, a: (w * w * a).sum()), in_dims=(None, 0))(w, x)
    assert g.tolist() == [[0.0, 4.0], [4.0, 12.0], [8.0, 20.0]]  # 2 * w * x[i], per row
    gw, gx = vmap(grad(lambda w, a: (w * a).sum(), argnums=(0, 1)), in_dims=(None, 0))(w, x)
    assert gw.tolist() == x.tolist() and gx.tolist() == [[1.0, 2.0]] * 3


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 2), st.sampled_from([None, 0, 1]), st.integers(1, 4))
def test_vmap_of_grad_equals_stacked_grads_for_any_batch_dimension(in_dim: int, w_dim: int | None, batch: int) -> None:
    """The batch may sit in any dimension of the batched argument, and the other argument
    may be batched too or not."""
    x = randn(*[batch if d == in_dim else 2 for d in range(3)])
    w = randn(2, 2) if w_dim is None else randn(*([batch, 2, 2] if w_dim == 0 else [2, batch, 2]))

    def f(a: Tensor, b: Tensor) -> Tensor:
        result: Tensor = (core.sin(a) * (a @ b)).sum()
        return result

    ga, gb = vmap(grad(f, argnums=(0, 1)), in_dims=(in_dim, w_dim))(t(x), t(w))
    for i in range(batch):
        xi = np.take(x, i, axis=in_dim)
        wi = w if w_dim is None else np.take(w, i, axis=w_dim)
        ea, eb = grad(f, argnums=(0, 1))(t(xi), t(wi))
        np.testing.assert_allclose(ga.numpy()[i], ea.numpy(), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(gb.numpy()[i], eb.numpy(), rtol=1e-10, atol=1e-12)


def test_nested_vmap_of_grad_is_per_sample_at_both_levels() -> None:
    w, x = randn(3), randn(2, 4, 3)  # an outer batch of 2, an inner of 4

    def f(w_: Tensor, a: Tensor) -> Tensor:
        result: Tensor = (w_ * w_ * core.exp(a)).sum()
        return result

    inner = vmap(grad(f), in_dims=(None, 0))
    g = vmap(inner, in_dims=(None, 0))(t(w), t(x))
    assert g.shape == (2, 4, 3)
    close(g, 2 * w * np.exp(x))
    g_outer_batched_w = vmap(inner, in_dims=(0, 0))(t(np.stack([w, 2 * w])), t(x))
    close(g_outer_batched_w, 2 * np.stack([w, 2 * w])[:, None, :] * np.exp(x))


def test_grad_of_vmap_and_backward_through_vmap_equal_the_unbatched_computation() -> None:
    x = randn(5, 3)

    def per_row(a: Tensor) -> Tensor:
        result: Tensor = (core.sin(a) * a).sum()
        return result

    g = grad(lambda a: vmap(per_row)(a).sum())(t(x))
    close(g, np.sin(x) + x * np.cos(x))

    xr = t(x, requires_grad=True)
    vmap(per_row)(xr).sum().backward()
    xs = t(x, requires_grad=True)
    (core.sin(xs) * xs).sum().backward()
    assert xr.grad is not None and xs.grad is not None
    close(xr.grad, xs.grad.numpy())


def test_vmap_of_second_order_grad() -> None:
    x = randn(4, 3)

    def cube(a: Tensor) -> Tensor:
        result: Tensor = (a * a * a).sum()
        return result

    def d1(a: Tensor) -> Tensor:
        g: Tensor = grad(cube)(a)
        return g.sum()

    close(vmap(grad(d1))(t(x)), 6 * x)


def test_grad_through_per_sample_gradients() -> None:
    """An enclosing grad differentiates through vmap(grad(...)) with unbatched params: the
    materialized batch is an expand the outer level records."""
    w, x = randn(3), randn(4, 3)

    def total(w_: Tensor) -> Tensor:
        per_sample: Tensor = vmap(grad(lambda v, a: (v * v * a).sum()), in_dims=(None, 0))(w_, t(x))
        return per_sample.sum()

    close(grad(total)(t(w)), 2 * x.sum(0))  # d/dw sum_i 2 w x_i


def test_grad_and_value_and_aux_under_vmap_are_per_sample() -> None:
    x = randn(4, 3)

    def f(a: Tensor) -> tuple[Tensor, Tensor]:
        s: Tensor = (a * a).sum()
        return s, a * 3.0

    g, (value, aux) = vmap(grad_and_value(f, has_aux=True))(t(x))
    close(g, 2 * x)
    close(value, (x * x).sum(1))
    close(aux, 3 * x)
    assert not g.requires_grad and not value.requires_grad and not aux.requires_grad


def test_the_callers_tensors_are_untouched_under_vmap() -> None:
    p, x, y = tensors(mlp_params()), t(randn(3, 3)), t(randn(3, 2))
    vmap(grad(loss, argnums=(0, 1)), in_dims=(None, 0, 0))(p, x, y)
    for v in [*p.values(), x, y]:
        assert not v.requires_grad and v.grad is None and v.grad_fn is None


def test_vmap_and_force_fallback_are_reexported() -> None:
    import typedops.batching as batching

    assert vmap is batching.vmap and force_fallback is batching.force_fallback


def test_grad_of_a_non_scalar_sample_under_vmap_names_the_sample_shape() -> None:
    from typedops.func import FuncError

    with pytest.raises(FuncError, match=r"returned a tensor with 1 dims \(shape \[3\]\)"):
        vmap(grad(lambda a: a * 2))(t(randn(4, 3)))
