"""Autograd against PyTorch (``make compat``): gradients of every differentiable core op
(several variants each), second derivatives of the pointwise ops, a 200-step MLP training
loop, and version-counter errors on the same programs."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from typedops import ScalarType, Tensor, core, ops, tensor
from typedops.autograd import AutogradError, grad

pytestmark = pytest.mark.compat
torch = pytest.importorskip("torch", reason="compares with PyTorch; needs the compat extra: make compat")

RNG = np.random.default_rng(2026)
Fn = Callable[..., Any]


def arrays(*shapes: tuple[int, ...], low: float = -1.0, high: float = 1.0) -> list[np.ndarray[Any, Any]]:
    return [RNG.uniform(low, high, size=s).astype(np.float32) for s in shapes]


# name, typedops fn, torch fn, inputs (float32 arrays; all require grad)
CASES: list[tuple[str, Fn, Fn, Callable[[], list[np.ndarray[Any, Any]]]]] = [
    ("add", lambda a, b: core.add(a, b), lambda a, b: torch.add(a, b), lambda: arrays((2, 3), (2, 3))),
    ("add broadcast alpha", lambda a, b: core.add(a, b, alpha=3), lambda a, b: torch.add(a, b, alpha=3),
     lambda: arrays((4, 1, 3), (2, 1))),
    ("add scalar", lambda a: core.add(a, 2.5), lambda a: torch.add(a, 2.5), lambda: arrays((3,))),
    ("sub alpha", lambda a, b: core.sub(a, b, alpha=0.5), lambda a, b: torch.sub(a, b, alpha=0.5),
     lambda: arrays((2, 3), (3,))),
    ("mul", lambda a, b: a * b, lambda a, b: a * b, lambda: arrays((2, 3), (1, 3))),
    ("mul scalar", lambda a: a * 4.0, lambda a: a * 4.0, lambda: arrays((5,))),
    ("div", lambda a, b: a / b, lambda a, b: a / b, lambda: [*arrays((2, 3)), *arrays((3,), low=0.5, high=2)]),
    ("rdiv", lambda a: 2.0 / a, lambda a: 2.0 / a, lambda: arrays((3,), low=0.5, high=2)),
    ("pow", lambda a: a ** 3, lambda a: a ** 3, lambda: arrays((4,))),
    ("pow fractional", lambda a: a ** 1.5, lambda a: a ** 1.5, lambda: arrays((4,), low=0.5, high=2)),
    ("remainder", lambda a, b: a % (b + 2.0), lambda a, b: a % (b + 2.0), lambda: arrays((2, 3), (3,))),
    # (2.5 % x: torch has no derivative for remainder.Scalar_Tensor; ours is remainder.Tensor's)
    ("maximum", core.maximum, torch.maximum, lambda: arrays((2, 3), (3,))),
    ("minimum", core.minimum, torch.minimum, lambda: arrays((2, 3), (2, 3))),
    ("neg", lambda a: -a, lambda a: -a, lambda: arrays((3,))),
    ("abs", core.abs, torch.abs, lambda: arrays((6,))),
    *[(name, getattr(core, name), getattr(torch, name), lambda: arrays((2, 3), low=0.2, high=0.9))
      for name in ["exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "reciprocal",
                   "sigmoid", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "relu"]],
    ("relu mixed signs", core.relu, torch.relu, lambda: arrays((8,))),
    ("threshold_backward", lambda g, a: core.threshold_backward(g, a, 0.3),
     lambda g, a: torch.ops.aten.threshold_backward(g, a, 0.3), lambda: arrays((2, 3), (2, 3))),
    ("where", lambda a, b: core.where(core.gt(a, 0.0), a, b), lambda a, b: torch.where(a > 0, a, b),
     lambda: arrays((2, 3), (3,))),
    ("sum", core.sum, torch.sum, lambda: arrays((2, 3))),
    ("sum dim", lambda a: core.sum(a, [1]), lambda a: torch.sum(a, [1]), lambda: arrays((2, 3))),
    ("sum dims keepdim", lambda a: ops.core.sum.dim_IntList(a, [0, 2], True), lambda a: torch.sum(a, [0, 2], True),
     lambda: arrays((2, 3, 4))),
    ("mean", core.mean, torch.mean, lambda: arrays((2, 3))),
    ("mean dim keepdim", lambda a: core.mean(a, [-1], True), lambda a: torch.mean(a, [-1], True),
     lambda: arrays((2, 3))),
    ("amax", lambda a: core.amax(a, [1]), lambda a: torch.amax(a, [1]), lambda: arrays((3, 4))),
    ("amax ties", lambda a: core.amax(a * 0.0 + 1.0, [0]), lambda a: torch.amax(a * 0.0 + 1.0, [0]),
     lambda: arrays((3, 2))),
    ("max dim", lambda a: core.max(a, 1)[0], lambda a: torch.max(a, 1)[0], lambda: arrays((3, 4))),
    ("max dim keepdim", lambda a: core.max(a, 0, True)[0], lambda a: torch.max(a, 0, True)[0],
     lambda: arrays((3, 4))),
    ("max", core.max, torch.max, lambda: arrays((3, 4))),
    ("max ties", lambda a: (a * 0.0 + core.ones([3]) * 2.0).max() * a, lambda a: (a * 0.0 + torch.ones([3]) * 2.0).max() * a,
     lambda: arrays((3,))),
    ("max ties of a NaN", lambda a: core.max(a * tensor([1.0, float("nan"), float("nan")])),
     lambda a: torch.max(a * torch.tensor([1.0, float("nan"), float("nan")])), lambda: arrays((3,))),
    ("min", lambda a: a.min(), lambda a: a.min(), lambda: arrays((3, 4))),
    ("min ties", lambda a: core.min(a * 0.0), lambda a: torch.min(a * 0.0), lambda: arrays((2, 2))),
    ("min dim", lambda a: core.min(a, 1)[0], lambda a: torch.min(a, 1)[0], lambda: arrays((3, 4))),
    ("min dim keepdim", lambda a: a.min(-1, True)[0], lambda a: a.min(-1, True)[0], lambda: arrays((3, 4))),
    ("squeeze all", lambda a: a.squeeze() * 2.0, lambda a: a.squeeze() * 2.0, lambda: arrays((1, 3, 1, 2))),
    ("matmul", lambda a, b: a @ b, lambda a, b: a @ b, lambda: arrays((2, 3), (3, 4))),
    ("matmul batched broadcast", lambda a, b: a @ b, lambda a, b: a @ b, lambda: arrays((2, 2, 3), (3, 2))),
    ("matmul matrix-vector", lambda a, b: a @ b, lambda a, b: a @ b, lambda: arrays((2, 3), (3,))),
    ("matmul vector-matrix", lambda a, b: a @ b, lambda a, b: a @ b, lambda: arrays((3,), (2, 3, 2))),
    ("matmul dot", lambda a, b: a @ b, lambda a, b: a @ b, lambda: arrays((3,), (3,))),
    ("mm", core.mm, torch.mm, lambda: arrays((2, 3), (3, 2))),
    ("view", lambda a: a.view([3, 2]), lambda a: a.view(3, 2), lambda: arrays((2, 3))),
    ("reshape", lambda a: core.reshape(a, [-1]), lambda a: torch.reshape(a, [-1]), lambda: arrays((2, 3))),
    ("permute", lambda a: core.permute(a, [2, 0, 1]), lambda a: a.permute(2, 0, 1), lambda: arrays((2, 3, 2))),
    ("transpose", lambda a: core.transpose(a, 0, -1), lambda a: a.transpose(0, -1), lambda: arrays((2, 3))),
    ("t", core.t, torch.t, lambda: arrays((2, 3))),
    ("select", lambda a: core.select(a, 0, -1), lambda a: a.select(0, -1), lambda: arrays((3, 2))),
    ("slice step", lambda a: core.slice(a, 1, 1, None, 2), lambda a: a[:, 1::2], lambda: arrays((2, 6))),
    ("unsqueeze", lambda a: core.unsqueeze(a, -1), lambda a: a.unsqueeze(-1), lambda: arrays((2, 3))),
    ("squeeze", lambda a: core.squeeze(a, 1), lambda a: a.squeeze(1), lambda: arrays((2, 1, 3))),
    ("expand", lambda a: a.expand([4, 3]), lambda a: a.expand(4, 3), lambda: arrays((1, 3))),
    ("flatten", lambda a: core.flatten(a, 1), lambda a: torch.flatten(a, 1), lambda: arrays((2, 3, 2))),
    ("contiguous", lambda a: core.transpose(a, 0, 1).contiguous(), lambda a: a.t().contiguous(),
     lambda: arrays((2, 3))),
    ("as_strided", lambda a: core.as_strided(a, [2, 2], [1, 2], 1), lambda a: torch.as_strided(a, (2, 2), (1, 2), 1),
     lambda: arrays((6,))),
    ("as_strided overlapping", lambda a: core.as_strided(a, [3, 2], [1, 1]),
     lambda a: torch.as_strided(a, (3, 2), (1, 1)), lambda: arrays((4,))),
    ("clone", core.clone, torch.clone, lambda: arrays((3,))),
    ("cat", lambda a, b: core.cat([a, b], 0), lambda a, b: torch.cat([a, b], 0), lambda: arrays((1, 3), (2, 3))),
    ("stack", lambda a, b: core.stack([a, b], 1), lambda a, b: torch.stack([a, b], 1), lambda: arrays((3,), (3,))),
    ("views chained", lambda a: core.select(core.transpose(a.view([2, 3]), 0, 1), 0, 1) * 2,
     lambda a: a.view(2, 3).transpose(0, 1).select(0, 1) * 2, lambda: arrays((6,))),
    ("in-place on a non-leaf", lambda a, b: (a * 1).mul_(b).add_(a).exp_(),
     lambda a, b: (a * 1).mul_(b).add_(a).exp_(), lambda: arrays((3,), (3,))),
    ("in-place unary", lambda a: core.sin_(a * 2), lambda a: (a * 2).sin_(), lambda: arrays((3,))),
    ("copy_ into a non-leaf", lambda a, b: (a * 1).copy_(b) * a, lambda a, b: (a * 1).copy_(b) * a,
     lambda: arrays((3,), (3,))),
    ("fill_", lambda a: (a * 1).fill_(2.0) * a, lambda a: (a * 1).fill_(2.0) * a, lambda: arrays((3,))),
]  # fmt: skip


def _ours(fn: Fn, data: list[np.ndarray[Any, Any]]) -> tuple[Any, list[Any]]:
    xs = [tensor(d, requires_grad=True) for d in data]
    out = fn(*xs)
    weights = tensor(np.linspace(0.5, 1.5, out.numel(), dtype=np.float32).reshape(out.shape))
    (out * weights).sum().backward()
    return out.detach().numpy(), [None if x.grad is None else x.grad.numpy() for x in xs]


def _theirs(fn: Fn, data: list[np.ndarray[Any, Any]]) -> tuple[Any, list[Any]]:
    xs = [torch.tensor(d, requires_grad=True) for d in data]
    out = fn(*xs)
    weights = torch.tensor(np.linspace(0.5, 1.5, out.numel(), dtype=np.float32).reshape(tuple(out.shape)))
    (out * weights).sum().backward()
    return out.detach().numpy(), [None if x.grad is None else x.grad.numpy() for x in xs]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_gradients_equal_torch(case: tuple[str, Fn, Fn, Callable[[], list[Any]]]) -> None:
    _, ours, theirs, make = case
    data = make()
    out, grads = _ours(ours, data)
    t_out, t_grads = _theirs(theirs, data)
    np.testing.assert_allclose(out, t_out, rtol=1e-5, atol=1e-6)
    for g, tg in zip(grads, t_grads):
        assert (g is None) == (tg is None)
        if g is not None:
            np.testing.assert_allclose(g, tg, rtol=1e-5, atol=1e-6)


POINTWISE = ["exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "reciprocal", "sigmoid",
             "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "abs", "neg"]  # fmt: skip


@pytest.mark.parametrize("name", POINTWISE)
def test_second_derivatives_of_pointwise_ops_equal_torch(name: str) -> None:
    (data,) = arrays((5,), low=0.2, high=0.9)
    x = tensor(data, requires_grad=True)
    (g,) = grad(getattr(core, name)(x).sum(), [x], create_graph=True)
    assert g is not None
    # A constant first derivative (neg; abs away from 0) may have no graph here while
    # torch's has one that gives zeros: both mean a zero second derivative.
    gg = grad(g.sum(), [x], allow_unused=True)[0] if g.requires_grad else None
    tx = torch.tensor(data, requires_grad=True)
    (tg,) = torch.autograd.grad(getattr(torch, name)(tx).sum(), [tx], create_graph=True)
    tgg = torch.autograd.grad(tg.sum(), [tx], allow_unused=True)[0] if tg.requires_grad else None
    np.testing.assert_allclose(g.detach().numpy(), tg.detach().numpy(), rtol=1e-5, atol=1e-6)
    ours = np.zeros(5, dtype=np.float32) if gg is None else gg.numpy()
    theirs = np.zeros(5, dtype=np.float32) if tgg is None else tgg.numpy(force=True)
    np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(("a_op", "b_op"), [("mul", "mul"), ("div", "div"), ("matmul", "matmul")])
def test_second_derivatives_of_binary_ops_equal_torch(a_op: str, b_op: str) -> None:
    xa, ya = arrays((2, 2), (2, 2), low=0.5, high=1.5)
    x, y = tensor(xa, requires_grad=True), tensor(ya, requires_grad=True)
    out = getattr(core, a_op)(x, y)
    gx, gy = grad((out * out).sum(), [x, y], create_graph=True)
    assert gx is not None and gy is not None
    (ggx,) = grad((gx * gy).sum(), [x])
    tx, ty = torch.tensor(xa, requires_grad=True), torch.tensor(ya, requires_grad=True)
    t_out = getattr(torch, b_op)(tx, ty)
    tgx, tgy = torch.autograd.grad((t_out * t_out).sum(), [tx, ty], create_graph=True)
    (tggx,) = torch.autograd.grad((tgx * tgy).sum(), [tx])
    assert ggx is not None
    np.testing.assert_allclose(ggx.numpy(), tggx.numpy(), rtol=1e-4, atol=1e-5)


# Views: f(x) = sum(w * view(x)**3) has a second derivative that reaches x only through the
# recorded backward of the view (and, for in-place ops on views, of CopySlices and
# AsStridedBackward0).
VIEWS: list[tuple[str, Fn, Fn, tuple[int, ...]]] = [
    ("view", lambda a: a.view([3, 2]), lambda a: a.view(3, 2), (2, 3)),
    ("reshape", lambda a: core.reshape(a, [-1]), lambda a: a.reshape(-1), (2, 3)),
    ("permute", lambda a: core.permute(a, [2, 0, 1]), lambda a: a.permute(2, 0, 1), (2, 3, 2)),
    ("transpose", lambda a: core.transpose(a, 0, 1), lambda a: a.transpose(0, 1), (2, 3)),
    ("t", core.t, torch.t, (2, 3)),
    ("select", lambda a: core.select(a, 1, -1), lambda a: a.select(1, -1), (2, 3)),
    ("slice step", lambda a: core.slice(a, 1, 1, None, 2), lambda a: a[:, 1::2], (2, 5)),
    ("unsqueeze", lambda a: core.unsqueeze(a, 0), lambda a: a.unsqueeze(0), (2, 3)),
    ("squeeze", lambda a: core.squeeze(a, 1), lambda a: a.squeeze(1), (2, 1, 3)),
    ("expand", lambda a: a.expand([4, 3]), lambda a: a.expand(4, 3), (1, 3)),
    ("flatten", lambda a: core.flatten(a), lambda a: a.flatten(), (2, 3)),
    ("as_strided", lambda a: core.as_strided(a, [2, 2], [1, 2], 1), lambda a: a.as_strided((2, 2), (1, 2), 1), (6,)),
    ("as_strided overlapping", lambda a: core.as_strided(a, [3, 2], [1, 1]), lambda a: a.as_strided((3, 2), (1, 1)),
     (4,)),
    ("views chained", lambda a: core.select(core.transpose(a.view([2, 3]), 0, 1), 0, 1),
     lambda a: a.view(2, 3).transpose(0, 1).select(0, 1), (6,)),
    ("in-place on a view", lambda a: (lambda c: (core.select(c, 0, 0).mul_(core.select(a, 0, 1)), c)[1])(a * 1),
     lambda a: (lambda c: (c.select(0, 0).mul_(a.select(0, 1)), c)[1])(a * 1), (2, 3)),
    ("in-place mul reads the original self", lambda a: (a * 1).mul_(a * 2), lambda a: (a * 1).mul_(a * 2), (3,)),
]  # fmt: skip


@pytest.mark.parametrize("case", VIEWS, ids=[c[0] for c in VIEWS])
def test_second_derivatives_through_views_equal_torch(case: tuple[str, Fn, Fn, tuple[int, ...]]) -> None:
    _, ours, theirs, shape = case
    (data,) = arrays(shape, low=0.3, high=1.2)

    def second(m: Any, view: Fn, x: Any) -> Any:
        out = view(x)
        w = m.tensor(np.linspace(0.5, 1.5, out.numel(), dtype=np.float32).reshape(tuple(out.shape)))
        differentiate: Fn = grad if m is not torch else torch.autograd.grad
        (g,) = differentiate(((out * out * out) * w).sum(), [x], create_graph=True)
        (gg,) = differentiate((g * g).sum(), [x])
        return g.detach().numpy(), gg.detach().numpy()

    import typedops

    g, gg = second(typedops, ours, tensor(data, requires_grad=True))
    tg, tgg = second(torch, theirs, torch.tensor(data, requires_grad=True))
    np.testing.assert_allclose(g, tg, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gg, tgg, rtol=1e-4, atol=1e-5)


# -- a small training loop --------------------------------------------------------------------


def test_mlp_training_loop_follows_torch_step_by_step() -> None:
    """3-layer MLP, SGD, 200 steps on a fixed synthetic regression task: the same losses."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((32, 8)).astype(np.float32)
    y = (np.sin(x.sum(axis=1, keepdims=True)) + 0.1 * x[:, :1]).astype(np.float32)
    sizes = [(8, 16), (16, 16), (16, 1)]
    init = [(rng.standard_normal(s) / np.sqrt(s[0])).astype(np.float32) for s in sizes]
    init += [np.zeros(s[1], dtype=np.float32) for s in sizes]
    lr = 0.05

    params = [tensor(p.copy(), requires_grad=True) for p in init]
    tparams = [torch.tensor(p.copy(), requires_grad=True) for p in init]
    xs, ys, txs, tys = tensor(x), tensor(y), torch.tensor(x), torch.tensor(y)
    ours: list[float] = []
    theirs: list[float] = []
    for _ in range(200):
        h = xs
        th = txs
        for i in range(3):
            h = h @ params[i] + params[3 + i]
            th = th @ tparams[i] + tparams[3 + i]
            if i < 2:
                h, th = core.tanh(h), torch.tanh(th)
        loss = core.mean((h - ys) * (h - ys))
        t_loss = ((th - tys) * (th - tys)).mean()
        loss.backward()
        t_loss.backward()
        ours.append(loss.item())
        theirs.append(t_loss.item())
        with typedops_no_grad():
            for p in params:
                assert p.grad is not None
                p.sub_(p.grad * lr)
                p.grad = None
        with torch.no_grad():
            for tp in tparams:
                assert tp.grad is not None
                tp.sub_(tp.grad * lr)
                tp.grad = None
    np.testing.assert_allclose(ours, theirs, rtol=1e-4)
    assert ours[-1] < ours[0] / 2  # it learned something


def typedops_no_grad() -> Any:
    from typedops import no_grad

    return no_grad()


# -- version counters: errors where torch raises them --------------------------------------------

# Each program takes the library (core or torch), a leaf x and a 0-dim tensor two == 2.
PROGRAMS: list[tuple[str, Fn]] = [
    ("saved input changed", lambda m, x, two: (lambda a: (m.sin(a), a.mul_(two))[0])(x * 1)),
    ("saved output changed", lambda m, x, two: (lambda r: (r * 1, r.mul_(two))[0])(m.exp(x * 1))),
    ("other operand changed", lambda m, x, two: (lambda a, b: (a * b, b.add_(two))[0])(x * 1, x * 2)),
    ("in-place chain", lambda m, x, two: m.sin_(m.tanh_(x * 2))),
    ("view of a saved tensor changed", lambda m, x, two: (lambda a: (m.sin(a), m.select(a, 0, 0).mul_(two))[0])(x * 1)),
    ("not saved: add", lambda m, x, two: (lambda a: (a + x, a.mul_(two))[0])(x * 1)),
    ("not saved: sum", lambda m, x, two: (lambda a: (m.sum(a), a.mul_(two))[0])(x * 1)),
    ("not saved: only the shape", lambda m, x, two: (lambda a: (a.expand([3, 2]), a.mul_(two))[0])(x * 1)),
    ("saved tensor's base changed", lambda m, x, two: (lambda a: (m.sin(m.select(a, 0, 1)), a.mul_(two))[0])(x * 1)),
]  # fmt: skip


def _outcome(run: Callable[[], Any]) -> str:
    try:
        run()
    except RuntimeError as error:
        match = re.search(r"is at version (\d+); expected version (\d+)", str(error))
        return f"version {match[1]} vs {match[2]}" if match else f"other error: {error}"
    return "ok"


@pytest.mark.parametrize("program", PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_version_errors_fire_where_torch_raises(program: tuple[str, Fn]) -> None:
    _, body = program
    data = np.array([0.5, 1.5], dtype=np.float32)

    def ours() -> None:
        body(core, tensor(data, requires_grad=True), tensor(2.0)).sum().backward()

    def theirs() -> None:
        body(torch, torch.tensor(data, requires_grad=True), torch.tensor(2.0)).sum().backward()

    assert _outcome(ours) == _outcome(theirs)


def _views_program(m: Any, x: Any, three: Any) -> tuple[Any, str, str]:
    a = x * 1
    v = m.select(a, 0, 1)
    w = m.narrow(a, 0, 0, 2) if m is torch else m.slice(a, 0, 0, 2)  # stale after the in-place ops
    v.mul_(three)
    m.exp_(m.select(m.transpose(m.reshape(a, [3, 1]), 0, 1), 0, 0))  # a view of a view
    y = (m.sin(a) * a).sum() + (w * w).sum() + v * 2
    y.backward()
    return x.grad.numpy(), a.grad_fn.name().rpartition("::")[2], v.grad_fn.name()


def test_in_place_on_views_rebases_the_base_as_torch_does() -> None:
    data = np.array([0.5, 1.5, 2.5], dtype=np.float32)
    grads, base_fn, view_fn = _views_program(core, tensor(data, requires_grad=True), tensor(3.0))
    t_grads, t_base_fn, t_view_fn = _views_program(torch, torch.tensor(data, requires_grad=True), torch.tensor(3.0))
    np.testing.assert_allclose(grads, t_grads, rtol=1e-5, atol=1e-6)
    assert (base_fn, view_fn) == (t_base_fn, t_view_fn) == ("CopySlices", "AsStridedBackward0")


def test_in_place_on_a_view_of_a_leaf_errors_where_torch_does() -> None:
    message = "a view of a leaf Variable that requires grad is being used in an in-place operation"
    with pytest.raises(RuntimeError, match=message):
        torch.tensor([1.0, 2.0], requires_grad=True).select(0, 0).mul_(2)
    with pytest.raises(AutogradError, match=message):
        core.select(tensor([1.0, 2.0], requires_grad=True), 0, 0).mul_(tensor(2.0))


def test_leaf_in_place_error_where_torch_raises() -> None:
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place operation"):
        torch.tensor([1.0], requires_grad=True).add_(1)
    leaf = "a leaf Variable that requires grad is being used in an in-place operation"
    with pytest.raises(AutogradError, match=leaf):
        tensor([1.0], requires_grad=True).add_(tensor([1.0]))


def test_version_numbers_match_torch() -> None:
    x, tx = tensor([1.0]), torch.tensor([1.0])
    for _ in range(3):
        x.add_(tensor([1.0]))
        tx.add_(1)
    core.sub_(x, tensor([1.0])) if hasattr(core, "sub_") else x.sub_(tensor([1.0]))
    tx.sub_(1)
    core.select(x, 0, 0).mul_(tensor(2.0))
    tx.select(0, 0).mul_(2)
    assert x._version == tx._version
    Tensor  # noqa: B018 -- imported for the annotations above


# -- backward(inputs=...), grad(), hooks: the same results and errors as torch's -----------------


def _inputs_program(m: Any, backward_grad: Fn) -> list[Any]:
    x, w = m.tensor([1.0, 2.0], requires_grad=True), m.tensor([3.0, 4.0], requires_grad=True)
    z = m.tensor([5.0], requires_grad=True)
    h = x * w
    h.retain_grad()
    x.register_hook(lambda g: g * 2)
    y = (h * h).sum()
    y.backward(inputs=[x, z], retain_graph=True)
    seen = [x.grad, w.grad, z.grad, h.grad]
    y.backward(inputs=h, retain_graph=True)
    seen += [x.grad, h.grad]
    seen += list(backward_grad(y, [z, w], retain_graph=True, materialize_grads=True))
    seen += list(backward_grad(y, [z, x], retain_graph=True, allow_unused=True))
    return [None if g is None else g.detach().numpy().tolist() for g in seen]


def test_backward_with_inputs_and_grad_equal_torch() -> None:
    import typedops

    assert _inputs_program(typedops, grad) == _inputs_program(torch, torch.autograd.grad)


# Leaves' AccumulateGrad nodes run as soon as their gradient is complete, as PyTorch's do
# (they have its engine's highest priority): hooks on leaves and non-leaves fire in torch's order.
HOOK_ORDER_PROGRAMS: list[tuple[str, Fn]] = [
    ("two leaves of one op", lambda w, u, v: (w * u).sum()),
    ("a leaf used twice", lambda w, u, v: (w * u + v * w).sum()),
    ("a chain", lambda w, u, v: ((w * 2).exp() * u + v).sum()),
    ("leaves at both ends", lambda w, u, v: ((w * v) * ((u * 3) * v)).sum()),
]  # fmt: skip


def _hook_order(m: Any, program: Fn) -> list[str]:
    order: list[str] = []
    leaves = [m.tensor([0.5, -1.0], requires_grad=True) for _ in range(3)]

    def hooked(name: str, t: Any) -> Any:
        t.register_hook(lambda g: order.append(name))
        return t

    for name, leaf in zip("wuv", leaves):
        hooked(name, leaf)
    w, u, v = leaves
    hooked("loss-input", program(w, u, v) * 1.0).sum().backward()
    return order


@pytest.mark.parametrize("program", HOOK_ORDER_PROGRAMS, ids=[p[0] for p in HOOK_ORDER_PROGRAMS])
def test_hooks_run_in_torch_order(program: tuple[str, Fn]) -> None:
    import typedops

    ours, theirs = _hook_order(typedops, program[1]), _hook_order(torch, program[1])
    assert ours == theirs and {"loss-input", "w", "u"} <= set(ours)


AUTOGRAD_ERRORS: list[tuple[str, Fn]] = [
    ("empty inputs to backward", lambda m, x: (x * 2).sum().backward(inputs=[])),
    ("empty inputs to grad", lambda m, x: m.autograd.grad((x * 2).sum(), [])),
    ("an input that does not require grad", lambda m, x: m.autograd.grad((x * 2).sum(), [m.tensor([1.0])])),
    ("an unused input", lambda m, x: m.autograd.grad((x * 2).sum(), [m.tensor([1.0], requires_grad=True)])),
    ("a hook changing the shape", lambda m, x: (x.register_hook(lambda g: g.sum()), (x * 2).sum().backward())),
    ("backward of a non-scalar", lambda m, x: (x * 2).backward()),
    ("backward of what does not require grad", lambda m, x: m.tensor([1.0]).sum().backward()),
    ("backward twice", lambda m, x: (lambda y: (y.backward(retain_graph=False), y.backward()))((x * x).sum())),
    ("a hook on what does not require grad", lambda m, x: m.tensor([1.0]).register_hook(lambda g: g)),
    ("retain_grad on what does not require grad", lambda m, x: m.tensor([1.0]).retain_grad()),
    ("a .grad of another shape", lambda m, x: setattr(x, "grad", m.tensor([1.0, 2.0, 3.0]))),
]  # fmt: skip


@pytest.mark.parametrize("program", AUTOGRAD_ERRORS, ids=[p[0] for p in AUTOGRAD_ERRORS])
def test_autograd_errors_fire_where_torch_raises(program: tuple[str, Fn]) -> None:
    """Both raise a RuntimeError, and ours starts with the words of torch's message (up to
    the fix we add, and with torch's capitalization of its first word)."""
    import typedops

    _, body = program
    with pytest.raises(RuntimeError) as theirs:
        body(torch, torch.tensor([1.0, 2.0], requires_grad=True))
    with pytest.raises(RuntimeError) as ours:
        body(typedops, tensor([1.0, 2.0], requires_grad=True))
    words = re.split(r"[.:;(]", str(theirs.value))[0].strip()
    assert str(ours.value).lower().startswith(words.lower()), (str(ours.value), str(theirs.value))


# -- complex gradients: PyTorch's conjugate convention ----------------------------------------


def carrays(*shapes: tuple[int, ...]) -> list[np.ndarray[Any, Any]]:
    return [(RNG.uniform(0.2, 0.9, size=s) + 1j * RNG.uniform(0.2, 0.9, size=s)).astype(np.complex64) for s in shapes]


COMPLEX_CASES: list[tuple[str, Fn, Fn, Callable[[], list[np.ndarray[Any, Any]]]]] = [
    *[(name, getattr(core, name), getattr(torch, name), lambda: carrays((2, 3)))
      for name in ["exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "reciprocal",
                   "sigmoid", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "abs"]],
    ("neg", lambda a: -a, lambda a: -a, lambda: carrays((3,))),
    ("mul broadcast", lambda a, b: a * b, lambda a, b: a * b, lambda: carrays((2, 3), (3,))),
    ("div", lambda a, b: a / b, lambda a, b: a / b, lambda: carrays((2, 3), (2, 3))),
    ("add alpha", lambda a, b: core.add(a, b, alpha=3), lambda a, b: torch.add(a, b, alpha=3),
     lambda: carrays((3,), (3,))),
    ("pow", lambda a: a ** 3, lambda a: a ** 3, lambda: carrays((4,))),
    ("matmul", lambda a, b: a @ b, lambda a, b: a @ b, lambda: carrays((2, 3), (3, 2))),
    ("matmul vector", lambda a, b: a @ b, lambda a, b: a @ b, lambda: carrays((2, 3), (3,))),
    ("matmul dot", lambda a, b: a @ b, lambda a, b: a @ b, lambda: carrays((3,), (3,))),
    ("mm", core.mm, torch.mm, lambda: carrays((2, 3), (3, 2))),
    ("sum dim", lambda a: core.sum(a, [1]), lambda a: torch.sum(a, [1]), lambda: carrays((2, 3))),
    ("mean", core.mean, torch.mean, lambda: carrays((2, 3))),
    ("select of a transpose", lambda a: core.select(core.transpose(a, 0, 1), 0, 1),
     lambda a: a.transpose(0, 1).select(0, 1), lambda: carrays((2, 3))),
    ("as_strided overlapping", lambda a: core.as_strided(a, [3, 2], [1, 1]),
     lambda a: torch.as_strided(a, (3, 2), (1, 1)), lambda: carrays((4,))),
    ("cat", lambda a, b: core.cat([a, b], 0), lambda a, b: torch.cat([a, b], 0), lambda: carrays((1, 3), (2, 3))),
    ("in-place on a non-leaf", lambda a, b: (a * 1).mul_(b).exp_(), lambda a, b: (a * 1).mul_(b).exp_(),
     lambda: carrays((3,), (3,))),
    ("a real and a complex input", lambda a, b: a * b, lambda a, b: a * b,
     lambda: [arrays((3,))[0], *carrays((3,))]),
]  # fmt: skip


def _vjp(m: Any, fn: Fn, data: list[np.ndarray[Any, Any]]) -> list[Any]:
    xs = [m.tensor(d, requires_grad=True) for d in data]
    out = fn(*xs)
    n = out.numel()
    weights = (np.linspace(0.5, 1.5, n) + 1j * np.linspace(-1.0, 0.7, n)).reshape(tuple(out.shape))
    if not out.dtype.is_complex:
        weights = weights.real
    out.backward(m.tensor(weights.astype(np.complex64 if out.dtype.is_complex else np.float32)))
    return [x.grad.numpy() for x in xs]


@pytest.mark.parametrize("case", COMPLEX_CASES, ids=[c[0] for c in COMPLEX_CASES])
def test_complex_gradients_equal_torch(case: tuple[str, Fn, Fn, Callable[[], list[Any]]]) -> None:
    import typedops

    _, ours, theirs, make = case
    data = make()
    for g, tg in zip(_vjp(typedops, ours, data), _vjp(torch, theirs, data)):
        assert g.dtype == tg.dtype
        np.testing.assert_allclose(g, tg, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", ["exp", "sin", "tanh", "reciprocal", "abs", "sqrt"])
def test_complex_second_derivatives_equal_torch(name: str) -> None:
    import typedops

    (data,) = carrays((3,))

    def second(m: Any, differentiate: Fn) -> tuple[Any, Any]:
        z = m.tensor(data, requires_grad=True)
        out = getattr(m, name)(z) if m is torch else getattr(core, name)(z)
        w = m.tensor(np.array([1 + 0.5j, 0.3 - 1j, -0.7 + 0.2j], dtype=np.complex64))
        if not out.dtype.is_complex:
            w = m.tensor(np.array([1.0, 0.3, -0.7], dtype=np.float32))
        (g,) = differentiate([out], [z], [w], create_graph=True)
        (gg,) = differentiate([g], [z], [m.tensor(np.array([0.5 - 1j, 1 + 1j, 0.25j], dtype=np.complex64))])
        return g.detach().numpy(), gg.numpy()

    g, gg = second(typedops, grad)
    tg, tgg = second(torch, torch.autograd.grad)
    np.testing.assert_allclose(g, tg, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(gg, tgg, rtol=1e-4, atol=1e-5)


def test_complex_errors_where_torch_raises() -> None:
    import typedops

    for m in (torch, typedops):
        z = m.tensor(np.array([1 + 1j], dtype=np.complex64), requires_grad=True)
        with pytest.raises(RuntimeError, match="grad can be implicitly created only for real scalar outputs"):
            (z * z).sum().backward()
        with pytest.raises(RuntimeError, match="For complex Tensors, both grad_output and output are required to have"):
            (z * z).backward(m.tensor(np.array([1.0], dtype=np.float32)))


MEAN_DTYPES = ["float16", "float32", "float64", "complex64", "complex128"]


@pytest.mark.parametrize("name", MEAN_DTYPES)
@pytest.mark.parametrize("dim", [None, [1], [0, -1], []])
def test_mean_values_dtypes_and_nodes_match_torch(name: str, dim: list[int] | None) -> None:
    data = RNG.uniform(-1, 1, size=(3, 4)).astype(name)
    ours_in, theirs_in = Tensor.from_numpy(data).requires_grad_(), torch.tensor(data, requires_grad=True)
    ours = core.mean(ours_in) if dim is None else core.mean(ours_in, dim, True)
    theirs = torch.mean(theirs_in) if dim is None else torch.mean(theirs_in, dim, True)
    assert str(ours.dtype).rpartition(".")[2] == str(theirs.dtype).rpartition(".")[2]
    assert ours.grad_fn is not None and theirs.grad_fn is not None
    assert ours.grad_fn.name() == theirs.grad_fn.name()
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=2e-3, atol=1e-6)
    ours.sum().abs().backward() if name.startswith("complex") else ours.sum().backward()
    theirs.sum().abs().backward() if name.startswith("complex") else theirs.sum().backward()
    assert ours_in.grad is not None and theirs_in.grad is not None
    np.testing.assert_allclose(ours_in.grad.numpy(), theirs_in.grad.numpy(), rtol=2e-3, atol=1e-6)


def test_mean_dtype_argument_and_integer_inputs_as_torch() -> None:
    data = RNG.uniform(-1, 1, size=(2, 3)).astype(np.float32)
    ours = core.mean(tensor(data), dtype=ScalarType.float64)
    theirs = torch.mean(torch.tensor(data), dtype=torch.float64)
    assert ours.dtype is ScalarType.float64 and theirs.dtype is torch.float64
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)
    with pytest.raises(RuntimeError) as t_info:
        torch.mean(torch.tensor([1, 2]))
    with pytest.raises(RuntimeError) as info:
        core.mean(tensor([1, 2]))
    assert str(info.value) == str(t_info.value).replace("Long", "int64")


@pytest.mark.parametrize("dtype", ["int64", "int32", "bool", "uint8", "float64", "complex64"])
def test_casts_record_like_torch(dtype: str) -> None:
    ours = tensor([1.5, 2.5], requires_grad=True).to(getattr(ScalarType, dtype))
    theirs = torch.tensor([1.5, 2.5], requires_grad=True).to(getattr(torch, dtype))
    assert ours.requires_grad == theirs.requires_grad
    assert (ours.grad_fn is None) == (theirs.grad_fn is None)


@pytest.mark.parametrize("dtype", ["int64", "bool", "float64"])
@pytest.mark.parametrize("dims", [None, [0]])
def test_sum_to_a_chosen_dtype_records_or_raises_like_torch(dtype: str, dims: list[int] | None) -> None:
    def outcome(x: Any, kind: Any) -> str:
        try:
            out = x.sum(dtype=kind) if dims is None else x.sum(dims, dtype=kind)
        except RuntimeError:
            return "raises"
        return f"requires_grad={out.requires_grad}"

    ours = outcome(tensor([1.5, 2.5], requires_grad=True), getattr(ScalarType, dtype))
    assert ours == outcome(torch.tensor([1.5, 2.5], requires_grad=True), getattr(torch, dtype))


def test_func_grad_of_a_cast_to_int_equals_torch() -> None:
    from typedops.func import grad as func_grad

    ours = func_grad(lambda x: (x * 2).sum().to(ScalarType.int64))(tensor([1.5, 2.5]))
    theirs = torch.func.grad(lambda x: (x * 2).sum().to(torch.int64))(torch.tensor([1.5, 2.5]))
    assert ours.tolist() == theirs.tolist()
