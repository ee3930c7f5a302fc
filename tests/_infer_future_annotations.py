"""Kernels whose annotations are strings (PEP 563), for tests/test_schema_infer.py.

Every annotation here reaches ``infer_schema`` as text and must be resolved in *this*
module: ``T`` below names ``Tensor`` only here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Optional

from typedops import Device, MemoryFormat, Scalar, ScalarType, SymInt
from typedops import Tensor as T

if TYPE_CHECKING:
    from typedops import Layout  # not importable at run time: inference must say so

__all__ = ["conv", "mixed", "pair", "quoted_inside", "unresolvable", "type_checking_only"]


def conv(
    input: T,
    weight: T,
    bias: T | None = None,
    stride: tuple[SymInt, SymInt] = (1, 1),
    *,
    groups: int = 1,
    memory_format: MemoryFormat = MemoryFormat.contiguous_format,
) -> T:
    raise NotImplementedError


def mixed(
    xs: list[Optional[T]],
    sizes: Optional[list[int]],
    scale: Scalar = 2,
    dims: Sequence[int] = (),
    options: dict[str, float] | None = None,
    dtype: ScalarType | None = None,
    device: Device = Device("meta"),
) -> tuple[T, list[int]]:
    raise NotImplementedError


def pair(x: T) -> tuple[T, T]:
    raise NotImplementedError


def unresolvable(x: T, y: Tensr) -> T:  # type: ignore[name-defined]  # on purpose
    raise NotImplementedError


def type_checking_only(x: T, layout: Layout) -> T:
    raise NotImplementedError


def quoted_inside(xs: list["T"], n: "SymInt") -> T:  # noqa: UP037  # a string in a string
    raise NotImplementedError
