"""``eye`` and ``linspace``: factories of the identity matrix and of evenly spaced values.

Both are factories with a device argument, so they take the one dispatch hop of Note
[Factories in one hop] (dispatch/_entry.py): a ``BackendSelect`` kernel picks the CPU or
Meta kernel by ``device``. ``linspace`` computes as torch's CPU kernel does: in the result's
floating dtype, from ``start`` for the first half of the steps and back from ``end`` for
the rest (so both ends are exact), and in float64 truncated for an integer dtype. torch's
vectorized kernel rounds some values in between by SIMD lane, so a last bit can differ.
"""

from __future__ import annotations

from typing import Any, Optional, cast

from ...vocabulary import Device, Layout, Scalar, ScalarType, TensorError, UnsupportedError
from ...dispatch import DispatchKeySet, selects_backend_by_device
from ._common import call_op, meta_like, np_dtype, scalar_overflow
from ._factories import _backend, _check_layout, _make  # pyright: ignore[reportPrivateUsage] -- one package
from ._messages import EYE_NEGATIVE, LINSPACE_BOOL, LINSPACE_NEGATIVE, LINSPACE_NOT_REAL
from ...tensor import Tensor

__all__ = [
    "eye_backend_select", "eye_cpu", "eye_meta", "eye_m_backend_select", "eye_m_cpu", "eye_m_meta",
    "linspace_backend_select", "linspace_cpu", "linspace_meta",
]  # fmt: skip


def _eye_plan(n: int, m: int, dtype: Optional[ScalarType]) -> ScalarType:
    for name, value in (("n", n), ("m", m)):
        if value < 0:
            raise TensorError(EYE_NEGATIVE.format(name=name, n=value))
    return ScalarType.float32 if dtype is None else dtype


@selects_backend_by_device  # Note [Factories in one hop] in dispatch/_entry.py
def eye_backend_select(
    keys: DispatchKeySet, n: int, *, dtype: Optional[ScalarType], layout: Optional[Layout],
    device: Optional[Device], pin_memory: Optional[bool],
) -> Tensor:  # fmt: skip
    result: Tensor = call_op("eye").redispatch(
        _backend(device), n, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory
    )
    return result


def eye_cpu(
    n: int, *, dtype: Optional[ScalarType], layout: Optional[Layout], device: Optional[Device],
    pin_memory: Optional[bool],
) -> Tensor:  # fmt: skip
    return eye_m_cpu(n, n, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory)


def eye_meta(
    n: int, *, dtype: Optional[ScalarType], layout: Optional[Layout], device: Optional[Device],
    pin_memory: Optional[bool],
) -> Tensor:  # fmt: skip
    return eye_m_meta(n, n, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory)


@selects_backend_by_device
def eye_m_backend_select(
    keys: DispatchKeySet, n: int, m: int, *, dtype: Optional[ScalarType], layout: Optional[Layout],
    device: Optional[Device], pin_memory: Optional[bool],
) -> Tensor:  # fmt: skip
    result: Tensor = call_op("eye", "m").redispatch(
        _backend(device), n, m, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory
    )
    return result


def eye_m_cpu(
    n: int, m: int, *, dtype: Optional[ScalarType], layout: Optional[Layout], device: Optional[Device],
    pin_memory: Optional[bool],
) -> Tensor:  # fmt: skip
    import numpy as np

    chosen = _eye_plan(n, m, dtype)
    return _make((n, m), chosen, layout, device, fill=np.eye(n, m, dtype=np.int64))


def eye_m_meta(
    n: int, m: int, *, dtype: Optional[ScalarType], layout: Optional[Layout], device: Optional[Device],
    pin_memory: Optional[bool],
) -> Tensor:  # fmt: skip
    _check_layout(layout)
    return meta_like((n, m), _eye_plan(n, m, dtype))


def _linspace_plan(start: Scalar, end: Scalar, steps: int, dtype: Optional[ScalarType]) -> ScalarType:
    for name, value in (("start", start), ("end", end)):
        if isinstance(value, complex):
            raise TensorError(LINSPACE_NOT_REAL.format(name=name, value=value))
    if steps < 0:
        raise TensorError(LINSPACE_NEGATIVE)
    chosen = ScalarType.float32 if dtype is None else dtype
    if chosen is ScalarType.bool:
        raise UnsupportedError(LINSPACE_BOOL)
    for name, value in (("start", start), ("end", end)):  # as torch: an end the dtype cannot hold
        error = scalar_overflow(value, chosen, name)
        if error is not None:
            raise error
    return chosen


@selects_backend_by_device
def linspace_backend_select(
    keys: DispatchKeySet, start: Scalar, end: Scalar, steps: int, *, dtype: Optional[ScalarType],
    layout: Optional[Layout], device: Optional[Device], pin_memory: Optional[bool],
) -> Tensor:  # fmt: skip
    result: Tensor = call_op("linspace").redispatch(
        _backend(device), start, end, steps, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory
    )
    return result


def linspace_cpu(
    start: Scalar, end: Scalar, steps: int, *, dtype: Optional[ScalarType], layout: Optional[Layout],
    device: Optional[Device], pin_memory: Optional[bool],
) -> Tensor:  # fmt: skip
    import numpy as np

    chosen = _linspace_plan(start, end, steps, dtype)
    work: Any = np_dtype(chosen) if chosen.is_floating_point else np.dtype(np.float64)
    if chosen.is_floating_point:
        lo, hi = work.type(start), work.type(end)
    else:  # the ends in the integer dtype first, as torch's (0.5 is 0, -5 a uint8's 251), then stepped in float64
        lo, hi = (work.type(np.array(v).astype(np_dtype(chosen))) for v in (start, end))
    index = np.arange(steps)
    values: Any
    if steps > 1:
        step = (hi - lo) / work.type(steps - 1)
        halfway = steps // 2
        with np.errstate(invalid="ignore", over="ignore"):
            from_start = lo + step * index.astype(work)
            from_end = hi - step * (steps - 1 - index).astype(work)
            values = cast(Any, np.where(index < halfway, from_start, from_end))
    else:
        values = cast(Any, np.full(steps, lo, dtype=work))
    return _make((steps,), chosen, layout, device, fill=values.astype(work, copy=False))


def linspace_meta(
    start: Scalar, end: Scalar, steps: int, *, dtype: Optional[ScalarType], layout: Optional[Layout],
    device: Optional[Device], pin_memory: Optional[bool],
) -> Tensor:  # fmt: skip
    _check_layout(layout)
    return meta_like((steps,), _linspace_plan(start, end, steps, dtype))
