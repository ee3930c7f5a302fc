"""Named results of the core library's functions and methods, as ``torch.return_types``.

Note [Named results]
~~~~~~~~~~~~~~~~~~~~
An op whose schema names every one of its several returns (``max.dim(...) -> (Tensor
values, Tensor indices)``) gives a tuple with those names from its core function and
Tensor method: ``x.max(0).values``, ``core.min(x, 1).indices``, and it still unpacks as
a pair. The class is named after the op (``return_types.max``), one per op name, as
PyTorch's are. Its op handles (``ops.core.max.dim``), the boxed convention, kernels,
traces and programs keep plain tuples, as ``torch.ops.aten.max.dim`` does; so do ops of
other namespaces (a ``torch.library`` op returns a plain tuple too). The generated
functions and methods wrap the entry's tuple (codegen/_api.py ``named_lines``; a
``--static-dispatch`` build's chooser wraps its static function's, codegen/_static.py
``_named_wrapper``), and their stubs return the class, so a type checker sees ``.values`` as a Tensor. A single-overload
function or method with named returns is not wrapped yet (the core library has none); a
test checks that every schema with named returns has its class here, fields in order.
"""

from __future__ import annotations

from typing import NamedTuple

from ..tensor import Tensor

__all__ = ["max", "min"]


class max(NamedTuple):  # noqa: A001 -- torch.return_types.max
    """``max.dim``'s result: the largest values along the dim and their indices."""

    values: Tensor
    indices: Tensor


class min(NamedTuple):  # noqa: A001 -- torch.return_types.min
    """``min.dim``'s result: the smallest values along the dim and their indices."""

    values: Tensor
    indices: Tensor
