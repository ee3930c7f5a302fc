"""Ops a project defines in Python (namespace ``userops``): with ``@op``, and with
``Library`` from schema strings. ``typedops stubgen tests.data.user_ops --out tests/data/stubs``
types them for tests/static/stubgen_calls.py (``make codegen`` reruns it)."""

from __future__ import annotations

from collections.abc import Sequence

from typedops import Library, Tensor, op


@op("userops::scale")
def scale(x: Tensor, factor: float, *, bias: float = 0.0) -> Tensor:
    return x


@op("userops::split")
def split(x: Tensor, sizes: Sequence[int]) -> tuple[Tensor, Tensor]:
    return x, x


LIB = Library("userops", "FRAGMENT")
LIB.define("shift(Tensor self, int n=1) -> Tensor")
LIB.define("shift.dims(Tensor self, int[2] dims, Device? device=None) -> Tensor")
