"""vmap rules mypy and pyright must accept, and rules they must refuse (expected errors in
comments).

Checked by tests/test_static_typing.py: ``register_vmap``'s rule is typed from the op's
parameters ``P`` (``Callable[Concatenate[VmapInfo, InDims, P], tuple[Any, OutDims]]``), so a
rule whose arguments do not mirror the op's, or that does not return ``(result, out_dims)``,
is an error.
"""

from __future__ import annotations

from typedops import Tensor, op
from typedops.dispatch import InDims, VmapInfo


@op("static_vmap::scale")
def scale(x: Tensor, factor: float) -> Tensor:
    return x


@op("static_vmap::split")
def split(x: Tensor) -> tuple[Tensor, Tensor]:
    return x, x


def scale_rule(info: VmapInfo, in_dims: InDims, x: Tensor, factor: float) -> tuple[Tensor, int | None]:
    return scale(x, factor), in_dims[0]


def split_rule(info: VmapInfo, in_dims: tuple[int | None, ...], x: Tensor) -> tuple[tuple[Tensor, Tensor], tuple[int, int]]:
    return split(x), (0, 0)


def missing_factor(info: VmapInfo, in_dims: InDims, x: Tensor) -> tuple[Tensor, int]:
    return x, 0


def factor_as_str(info: VmapInfo, in_dims: InDims, x: Tensor, factor: str) -> tuple[Tensor, int]:
    return x, 0


def no_info(in_dims: InDims, x: Tensor, factor: float) -> tuple[Tensor, int]:
    return x, 0


def result_only(info: VmapInfo, in_dims: InDims, x: Tensor, factor: float) -> Tensor:
    return x


def out_dims_as_str(info: VmapInfo, in_dims: InDims, x: Tensor, factor: float) -> tuple[Tensor, str]:
    return x, "0"


# Accepted.
scale.register_vmap(scale_rule)
split.register_vmap(split_rule)

# Refused.
scale.register_vmap(missing_factor)  # E: Argument 1 to "register_vmap" of "TypedOperatorHandle" has incompatible type "Callable[[VmapInfo, tuple[Any, ...], Tensor], tuple[Tensor, int]]"; expected "Callable[[VmapInfo, tuple[Any, ...], Tensor, float], tuple[Any, int | tuple[int | None, ...] | None]]"  [arg-type]  # N: This is likely because "missing_factor" has named arguments: "info", "in_dims". Consider marking them positional-only  # P: Argument of type "(info: VmapInfo, in_dims: InDims, x: Tensor) -> tuple[Tensor, int]" cannot be assigned to parameter "rule" of type "(VmapInfo, InDims, x: Tensor, factor: float) -> tuple[Any, OutDims]" in function "register_vmap"  [reportArgumentType]
scale.register_vmap(factor_as_str)  # E: Argument 1 to "register_vmap" of "TypedOperatorHandle" has incompatible type "Callable[[VmapInfo, tuple[Any, ...], Tensor, str], tuple[Tensor, int]]"; expected "Callable[[VmapInfo, tuple[Any, ...], Tensor, float], tuple[Any, int | tuple[int | None, ...] | None]]"  [arg-type]  # N: This is likely because "factor_as_str" has named arguments: "info", "in_dims". Consider marking them positional-only  # P: Argument of type "(info: VmapInfo, in_dims: InDims, x: Tensor, factor: str) -> tuple[Tensor, int]" cannot be assigned to parameter "rule" of type "(VmapInfo, InDims, x: Tensor, factor: float) -> tuple[Any, OutDims]" in function "register_vmap"  [reportArgumentType]
scale.register_vmap(no_info)  # E: Argument 1 to "register_vmap" of "TypedOperatorHandle" has incompatible type "Callable[[tuple[Any, ...], Tensor, float], tuple[Tensor, int]]"; expected "Callable[[VmapInfo, tuple[Any, ...], Tensor, float], tuple[Any, int | tuple[int | None, ...] | None]]"  [arg-type]  # N: This is likely because "no_info" has named arguments: "in_dims", "x". Consider marking them positional-only  # P: Argument of type "(in_dims: InDims, x: Tensor, factor: float) -> tuple[Tensor, int]" cannot be assigned to parameter "rule" of type "(VmapInfo, InDims, x: Tensor, factor: float) -> tuple[Any, OutDims]" in function "register_vmap"  [reportArgumentType]
scale.register_vmap(result_only)  # E: Argument 1 to "register_vmap" of "TypedOperatorHandle" has incompatible type "Callable[[VmapInfo, tuple[Any, ...], Tensor, float], Tensor]"; expected "Callable[[VmapInfo, tuple[Any, ...], Tensor, float], tuple[Any, int | tuple[int | None, ...] | None]]"  [arg-type]  # N: This is likely because "result_only" has named arguments: "info", "in_dims". Consider marking them positional-only  # P: Argument of type "(info: VmapInfo, in_dims: InDims, x: Tensor, factor: float) -> Tensor" cannot be assigned to parameter "rule" of type "(VmapInfo, InDims, x: Tensor, factor: float) -> tuple[Any, OutDims]" in function "register_vmap"  [reportArgumentType]
scale.register_vmap(out_dims_as_str)  # E: Argument 1 to "register_vmap" of "TypedOperatorHandle" has incompatible type "Callable[[VmapInfo, tuple[Any, ...], Tensor, float], tuple[Tensor, str]]"; expected "Callable[[VmapInfo, tuple[Any, ...], Tensor, float], tuple[Any, int | tuple[int | None, ...] | None]]"  [arg-type]  # N: This is likely because "out_dims_as_str" has named arguments: "info", "in_dims". Consider marking them positional-only  # P: Argument of type "(info: VmapInfo, in_dims: InDims, x: Tensor, factor: float) -> tuple[Tensor, str]" cannot be assigned to parameter "rule" of type "(VmapInfo, InDims, x: Tensor, factor: float) -> tuple[Any, OutDims]" in function "register_vmap"  [reportArgumentType]
split.register_vmap(scale_rule)  # E: Argument 1 to "register_vmap" of "TypedOperatorHandle" has incompatible type "Callable[[VmapInfo, tuple[Any, ...], Tensor, float], tuple[Tensor, int | None]]"; expected "Callable[[VmapInfo, tuple[Any, ...], Tensor], tuple[Any, int | tuple[int | None, ...] | None]]"  [arg-type]  # N: This is likely because "scale_rule" has named arguments: "info", "in_dims". Consider marking them positional-only  # P: Argument of type "(info: VmapInfo, in_dims: InDims, x: Tensor, factor: float) -> tuple[Tensor, int | None]" cannot be assigned to parameter "rule" of type "(VmapInfo, InDims, x: Tensor) -> tuple[Any, OutDims]" in function "register_vmap"  [reportArgumentType]

