"""Overloads that are another core op under the name PyTorch also gives it.

``max.other``/``min.other`` (``x.max(y)``, ``core.min(x, y)``) are ``maximum``/``minimum``:
the same values, dtypes, layouts, gradients and vmap rule, so each is a
``CompositeImplicitAutograd`` kernel calling the other op through the dispatcher, and
autograd, batching, tracing and the meta kernels see that op's call.
"""

from __future__ import annotations

from ...tensor import Tensor
from ._common import call_op

__all__ = ["max_other_composite", "min_other_composite"]


def max_other_composite(self: Tensor, other: Tensor) -> Tensor:
    result: Tensor = call_op("maximum")(self, other)
    return result


def min_other_composite(self: Tensor, other: Tensor) -> Tensor:
    result: Tensor = call_op("minimum")(self, other)
    return result
