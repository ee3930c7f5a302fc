"""``softmax`` and ``log_softmax`` over one dim, as composites of core ops.

Each is ``CompositeImplicitAutograd``: autograd, vmap, tracing and the meta kernels see the
ops it is made of, so it needs no rule of its own. The maximum along ``dim`` is
subtracted first (``exp`` of large values would overflow); it is detached, since the
result does not depend on it (the exact gradient through it is 0, and recording it would
only add rounding). ``dtype`` converts the input first, as torch's does; an integer or
bool input is refused, as torch refuses it. The result is contiguous, as torch's is, and a
tensor without elements gives one without elements (nothing to subtract).
"""

from __future__ import annotations

from typing import Optional

from ...vocabulary import ScalarType, UnsupportedError
from ...tensor import Tensor
from ._common import call_op
from ._messages import SOFTMAX_DTYPE

__all__ = ["softmax_composite", "log_softmax_composite"]


def _shifted(self: Tensor, dim: int, dtype: Optional[ScalarType], name: str) -> Tensor:
    x = self if dtype is None else call_op("to", "dtype")(self, dtype, False, False, None)
    if not x.dtype.is_floating_point:
        raise UnsupportedError(SOFTMAX_DTYPE.format(name=name, dtype=x.dtype.name))
    x = x.contiguous()  # the result is contiguous whatever the input's layout, as torch's
    if not x.numel():  # no maximum to subtract (amax refuses an empty dim); sum checks dim
        return x
    peak = call_op("detach")(call_op("amax")(x, [dim], True))
    shifted: Tensor = x - peak
    return shifted


def softmax_composite(self: Tensor, dim: int, dtype: Optional[ScalarType]) -> Tensor:
    exps: Tensor = _shifted(self, dim, dtype, "softmax").exp()
    result: Tensor = exps / call_op("sum", "dim_IntList")(exps, [dim], True, dtype=None)
    return result


def log_softmax_composite(self: Tensor, dim: int, dtype: Optional[ScalarType]) -> Tensor:
    shifted = _shifted(self, dim, dtype, "log_softmax")
    total: Tensor = call_op("sum", "dim_IntList")(shifted.exp(), [dim], True, dtype=None)
    result: Tensor = shifted - total.log()
    return result
