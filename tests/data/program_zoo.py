"""The program zoo (issue 16, write-up 004's test plan): functions built only from core ops
and ``@op`` ops, with example inputs, to be traced, saved, loaded in a fresh process, run
in both flavors and compared with eager execution.

Importing this module defines its ``@op`` ops (namespace ``zoo``), as a process that
loads a zoo program must.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from typedops import Tensor, core, op, ops, tensor

__all__ = ["ZOO", "EXACT", "inputs_for", "weights"]


@op("zoo::gelu")
def gelu(x: Tensor) -> Tensor:
    """The tanh approximation of GELU, from core ops (an ``@op`` op with a composite body)."""
    inner = core.mul(core.add(x, core.mul(core.mul(core.mul(x, x), x), 0.044715)), 0.7978845608)
    return core.mul(core.mul(x, 0.5), core.add(core.tanh(inner), 1.0))


@op("zoo::scale_shift")
def scale_shift(x: Tensor, scale: float, shift: int) -> Tensor:
    return core.add(core.mul(x, scale), shift)


def _array(*shape: int, seed: int, scale: float = 1.0) -> Tensor:
    data = np.random.default_rng(seed).standard_normal(shape).astype(np.float32) * scale
    return tensor(data.tolist())


def weights(seed: int, *shape: int) -> Tensor:
    return _array(*shape, seed=seed, scale=0.2)


_MLP = [(weights(10 + i, 8, 8), weights(20 + i, 8)) for i in range(3)]


def mlp(x: Tensor) -> Tensor:
    for index, (w, b) in enumerate(_MLP):
        x = core.add(core.matmul(x, w), b)
        if index < len(_MLP) - 1:
            x = core.relu(x)
    return x


_WQ, _WK, _WV = weights(1, 8, 8), weights(2, 8, 8), weights(3, 8, 8)


def _layer_norm(x: Tensor) -> Tensor:
    mean = core.mean(x, [-1], True)
    centered = core.sub(x, mean)
    var = core.mean(core.mul(centered, centered), [-1], True)
    return core.mul(centered, core.rsqrt(core.add(var, 1e-5)))


def attention(x: Tensor) -> Tensor:
    """A layer norm, then single-head self-attention with a softmax from core ops, then an
    ``@op`` GELU and a residual connection."""
    h = _layer_norm(x)
    q, k, v = core.matmul(h, _WQ), core.matmul(h, _WK), core.matmul(h, _WV)
    scores = core.mul(core.matmul(q, core.transpose(k, -2, -1)), 8**-0.5)
    shifted = core.sub(scores, core.amax(scores, [-1], True))
    e = core.exp(shifted)
    weights_ = core.div(e, core.sum(e, [-1], True))
    return core.add(x, gelu(core.matmul(weights_, v)))


def statistics(x: Tensor) -> tuple[Tensor, ...]:
    """Reductions: sums, means, extremes, arg-extremes, a variance, a normalized range."""
    total = core.sum(x)
    mean = core.mean(x, [0])
    var = core.mean(core.pow(core.sub(x, mean), 2), [0])
    top, where = core.max(x, 1)
    spread = core.sub(core.amax(x, [1]), core.neg(core.amax(core.neg(x), [1])))
    return total, mean, var, top, where, core.argmax(x), spread


def integer_statistics(x: Tensor) -> tuple[Tensor, ...]:
    """The same on int64 (exact): sums, extremes, comparisons, a where."""
    total = core.sum(x, [1])
    top, where = core.max(x, 0)
    clipped = core.where(core.gt(x, 3), x, core.mul(x, 2))
    return total, top, where, core.maximum(clipped, core.neg(x)), scale_shift(x, 1.0, 7)


def views_and_inplace(x: Tensor) -> tuple[Tensor, Tensor]:
    """Views of a fresh tensor written in place; the base sees the writes. (The in-place
    ops are method-only: called through ``ops.core``, since a test elsewhere may install
    another library's methods of the same names.)"""
    base = core.clone(x)
    row = core.select(base, 0, 1)
    ops.core.mul_.Tensor(row, tensor([10.0, 10.0, 10.0]))
    part = core.slice(base, 1, 0, 2)
    ops.core.add_.Tensor(part, core.ones([4, 2]))
    flat = core.reshape(core.transpose(base, 0, 1), [-1])
    grown = ops.core.expand.default(core.unsqueeze(flat, 0), [2, 12])
    ops.core.sub_.Tensor(base, core.ones([1]))
    return base, ops.core.contiguous.default(grown)


def lists(a: Tensor, b: Tensor) -> Tensor:
    """List arguments: cat and stack of inputs and results."""
    both = core.cat([a, b, core.mul(a, b)], 0)
    stacked = core.stack([a, b], 1)
    return core.add(core.sum(stacked, [1]), core.sum(core.reshape(both, [3, -1]), [0]))


def tuples(x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """Tuple returns: an op's (values, indices) and the function's own tuple."""
    values, indices = core.max(x, -1)
    low, low_at = core.max(core.neg(x), 1, True)
    low = core.squeeze(low, 1)
    return core.add(values, core.neg(low)), indices, low_at


ZOO: dict[str, Callable[..., Any]] = {
    "mlp": mlp,
    "attention": attention,
    "statistics": statistics,
    "integer_statistics": integer_statistics,
    "views_and_inplace": views_and_inplace,
    "lists": lists,
    "tuples": tuples,
}
EXACT = {"integer_statistics", "views_and_inplace", "lists"}  # integer or exactly representable results


def inputs_for(name: str, seed: int) -> list[Tensor]:
    """Inputs for zoo function ``name`` (the seed varies them between tracing and running)."""
    if name == "mlp":
        return [_array(4, 8, seed=seed)]
    if name == "attention":
        return [_array(5, 8, seed=seed)]
    if name in ("statistics", "tuples"):
        return [_array(6, 5, seed=seed)]
    if name == "integer_statistics":
        return [tensor(np.random.default_rng(seed).integers(-9, 9, (4, 5)).tolist())]
    if name == "views_and_inplace":
        return [tensor(np.arange(12.0).reshape(4, 3).tolist())]
    if name == "lists":
        rng = np.random.default_rng(seed)
        return [tensor(rng.integers(-5, 5, 6).tolist()), tensor(rng.integers(-5, 5, 6).tolist())]
    raise KeyError(name)
