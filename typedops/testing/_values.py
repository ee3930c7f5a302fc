"""What opcheck's checks share: copying arguments, comparing results, describing them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, cast

from ..tensor import Tensor, array_of, make_view, wrap_array

__all__ = ["clone", "map_tensors", "tensors_of", "same_values", "close_values", "describe", "difference"]


def map_tensors(value: Any, fn: Callable[[Tensor], Any]) -> Any:
    if isinstance(value, Tensor):
        return fn(value)
    if isinstance(value, (list, tuple)):
        items = cast("list[object] | tuple[object, ...]", value)
        return type(items)(map_tensors(v, fn) for v in items)
    if isinstance(value, dict):
        return {k: map_tensors(v, fn) for k, v in cast("dict[object, object]", value).items()}
    return value


def _clone_tensor(t: Tensor) -> Tensor:
    """A copy with the same shape, strides, offset, dtype and device, on a storage of its own."""
    if t.is_meta:
        return t
    data = t.storage.data
    assert data is not None
    base = wrap_array(data.copy(), t.dtype, t.device)
    return make_view(base, t.shape, t.stride(), t.storage_offset())


def clone(value: Any) -> Any:
    return map_tensors(value, _clone_tensor)


def tensors_of(value: Any) -> list[Tensor]:
    found: list[Tensor] = []
    map_tensors(value, found.append)
    return found


def same_values(a: Any, b: Any) -> bool:
    """Whether two results are equal: tensors by dtype, shape and elements (NaN equals NaN)."""
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        if not (isinstance(a, Tensor) and isinstance(b, Tensor)):
            return False
        if a.dtype is not b.dtype or a.shape != b.shape:
            return False
        if a.is_meta or b.is_meta:
            return a.is_meta == b.is_meta
        import numpy as np

        x, y = array_of(a), array_of(b)
        return bool(np.array_equal(x, y, equal_nan=x.dtype.kind in "fc"))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        xs, ys = cast("Sequence[object]", a), cast("Sequence[object]", b)
        return len(xs) == len(ys) and all(same_values(x, y) for x, y in zip(xs, ys))
    return bool(a == b)


def describe(value: Any) -> str:
    if isinstance(value, Tensor):
        return f"a {value.dtype.name} tensor of shape {list(value.shape)}"
    if isinstance(value, (list, tuple)):
        return "(" + ", ".join(describe(v) for v in cast("Sequence[object]", value)) + ")"
    return repr(value)


def close_values(a: Any, b: Any, rtol: float = 1e-5, atol: float = 1e-6) -> bool:
    """``same_values`` up to floating-point rounding (``numpy.allclose``, NaN equals NaN)."""
    if isinstance(a, Tensor) and isinstance(b, Tensor) and not (a.is_meta or b.is_meta):
        import numpy as np

        if a.dtype is not b.dtype or a.shape != b.shape:
            return False
        return bool(np.allclose(array_of(a), array_of(b), rtol=rtol, atol=atol, equal_nan=True))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        xs: Sequence[object] = cast("Sequence[object]", a)
        ys: Sequence[object] = cast("Sequence[object]", b)
        return len(xs) == len(ys) and all(close_values(x, y, rtol, atol) for x, y in zip(xs, ys))
    return same_values(a, b)


def difference(a: Any, b: Any) -> str:
    """Where two results of the same layout differ: the largest difference of their values."""
    import numpy as np

    pairs = [(x, y) for x, y in zip(tensors_of(a), tensors_of(b)) if not (x.is_meta or y.is_meta)]
    if not pairs or any(x.shape != y.shape or x.dtype is not y.dtype for x, y in pairs):
        return ""
    if len(tensors_of(a)) != len(tensors_of(b)):
        return ""
    gaps = [float(np.max(np.abs(array_of(x) - array_of(y)), initial=0.0)) for x, y in pairs if x.dtype.name != "bool"]
    if not gaps:
        return " (values differ)"
    return f" (values differ by up to {max(gaps):.6g})"
