"""typedops.func against torch.func (``make compat``): grad and grad_and_value on the same
data (argnums, pytrees, has_aux, second order), and per-sample gradients of a small MLP's
loss, ``vmap(grad(loss), in_dims=(None, 0, 0))``, against torch.func's."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from typedops import Tensor, core, tensor
from typedops.func import force_fallback, grad, grad_and_value, vmap

pytestmark = pytest.mark.compat
torch = pytest.importorskip("torch", reason="compares with PyTorch; needs the compat extra: make compat")

RNG = np.random.default_rng(14)


def arrays(*shapes: tuple[int, ...]) -> list[np.ndarray[Any, Any]]:
    return [RNG.uniform(-1.0, 1.0, size=s).astype(np.float32) for s in shapes]


def ours(a: np.ndarray[Any, Any]) -> Tensor:
    return tensor(a)


def theirs(a: np.ndarray[Any, Any]) -> Any:
    return torch.from_numpy(a.copy())


def to_numpy(tree: Any) -> Any:
    """A nest of tensors (ours or torch's) as the same nest of numpy arrays."""
    if isinstance(tree, dict):
        return {k: to_numpy(v) for k, v in tree.items()}
    if isinstance(tree, (list, tuple)):
        return type(tree)(to_numpy(v) for v in tree)
    if isinstance(tree, Tensor):
        return tree.numpy()
    if isinstance(tree, torch.Tensor):
        return tree.detach().numpy()
    return tree


def assert_close(a: Any, b: Any) -> None:
    if isinstance(a, dict):
        assert list(a) == list(b)
        for k in a:
            assert_close(a[k], b[k])
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b)
        for x, y in zip(a, b):
            assert_close(x, y)
    elif isinstance(a, np.ndarray):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    else:
        assert a == b


def mlp_loss(lib: Any) -> Callable[..., Any]:
    """A 2-layer MLP's mean squared error, written once for both libraries."""

    def loss(params: dict[str, Any], x: Any, y: Any) -> Any:
        h = lib.tanh(x @ params["w1"] + params["b1"])
        out = h @ params["w2"] + params["b2"]
        return ((out - y) * (out - y)).mean()

    return loss


# name, function for both (given the library), argnums, has_aux, input arrays
CASES: list[tuple[str, Callable[[Any], Callable[..., Any]], Any, bool, Callable[[], list[Any]]]] = [
    ("pointwise", lambda lib: lambda a: (lib.sin(a) * a).sum(), 0, False, lambda: arrays((5,))),
    ("matmul argnums tuple", lambda lib: lambda a, b: (a @ b).sum(), (0, 1), False, lambda: arrays((2, 3), (3, 4))),
    ("negative argnums", lambda lib: lambda a, b: (lib.exp(a) * b).mean(), -1, False, lambda: arrays((3,), (3,))),
    ("broadcast", lambda lib: lambda a, b: ((a + b) * (a + b)).sum(), (0, 1), False, lambda: arrays((2, 3), (3,))),
    ("reduction dim", lambda lib: lambda a: lib.amax(a, [1]).sum(), 0, False, lambda: arrays((3, 4))),
    ("has_aux", lambda lib: lambda a: ((a * a).sum(), a * 2), 0, True, lambda: arrays((4,))),
    ("unused argument", lambda lib: lambda a, b: (a * a).sum(), (0, 1), False, lambda: arrays((2,), (3,))),
    ("mlp dict params", lambda lib: mlp_loss(lib), 0, False,
     lambda: [dict(zip(["w1", "b1", "w2", "b2"], arrays((4, 8), (8,), (8, 3), (3,))))] + arrays((5, 4), (5, 3))),
]  # fmt: skip


def _inputs(values: list[Any], make: Callable[[np.ndarray[Any, Any]], Any]) -> list[Any]:
    return [{k: make(v) for k, v in x.items()} if isinstance(x, dict) else make(x) for x in values]


@pytest.mark.parametrize("transform", ["grad", "grad_and_value"])
@pytest.mark.parametrize(("name", "fn", "argnums", "has_aux", "data"), CASES, ids=[c[0] for c in CASES])
def test_grad_equals_torch_func(
    transform: str, name: str, fn: Callable[[Any], Callable[..., Any]], argnums: Any, has_aux: bool, data: Callable[[], list[Any]]
) -> None:
    values = data()
    mine = {"grad": grad, "grad_and_value": grad_and_value}[transform](fn(core), argnums=argnums, has_aux=has_aux)
    peer = getattr(torch.func, transform)(fn(torch), argnums=argnums, has_aux=has_aux)
    assert_close(to_numpy(mine(*_inputs(values, ours))), to_numpy(peer(*_inputs(values, theirs))))


def test_second_derivatives_equal_torch_func() -> None:
    (a,) = arrays((4,))

    def f(lib: Any) -> Callable[[Any], Any]:
        return lambda x: (lib.sin(x) * x * x).sum()

    mine = grad(lambda x: grad(f(core))(x).sum())(ours(a))
    peer = torch.func.grad(lambda x: torch.func.grad(f(torch))(x).sum())(theirs(a))
    np.testing.assert_allclose(mine.numpy(), peer.numpy(), rtol=1e-5, atol=1e-6)


def test_closed_over_tensors_requiring_grad_behave_as_in_torch() -> None:
    """torch.func.grad composes with plain autograd: a closed-over tensor that requires grad
    gets its gradient through the transform's result."""
    x, w = arrays((3,), (3,))
    w_ours, w_theirs = tensor(w, requires_grad=True), torch.from_numpy(w.copy()).requires_grad_()
    g_ours = grad(lambda a: (a * a * w_ours).sum())(ours(x))
    g_theirs = torch.func.grad(lambda a: (a * a * w_theirs).sum())(theirs(x))
    assert g_ours.requires_grad == g_theirs.requires_grad
    g_ours.sum().backward()
    g_theirs.sum().backward()
    assert w_ours.grad is not None
    np.testing.assert_allclose(w_ours.grad.numpy(), w_theirs.grad.numpy(), rtol=1e-6)


@pytest.mark.filterwarnings("ignore:There is a performance drop")
@pytest.mark.parametrize("forced", [False, True], ids=["rules", "fallback forced"])
def test_per_sample_gradients_of_an_mlp_equal_torch_func(forced: bool) -> None:
    params = dict(zip(["w1", "b1", "w2", "b2"], arrays((4, 8), (8,), (8, 3), (3,))))
    x, y = arrays((16, 4), (16, 3))
    peer = torch.func.vmap(torch.func.grad(mlp_loss(torch)), in_dims=(None, 0, 0))
    expected = to_numpy(peer(_inputs([params], theirs)[0], theirs(x), theirs(y)))
    mine = vmap(grad(mlp_loss(core)), in_dims=(None, 0, 0))
    with force_fallback() if forced else contextlib.nullcontext():
        got = to_numpy(mine(_inputs([params], ours)[0], ours(x), ours(y)))
    assert_close(got, expected)


def test_per_sample_gradients_with_batched_params_and_a_nested_vmap_equal_torch_func() -> None:
    """Params batched too (an ensemble), and a vmap around the per-sample vmap."""
    w, x = arrays((2, 3, 4), (2, 5, 3))

    def f(lib: Any) -> Callable[[Any, Any], Any]:
        return lambda w_, a: lib.tanh(a @ w_).sum()

    def nest(vm: Any, gr: Any, lib: Any) -> Any:
        return vm(vm(gr(f(lib)), in_dims=(None, 0)), in_dims=(0, 0))

    got = nest(vmap, grad, core)(ours(w), ours(x))
    expected = nest(torch.func.vmap, torch.func.grad, torch)(theirs(w), theirs(x))
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-5, atol=1e-6)
