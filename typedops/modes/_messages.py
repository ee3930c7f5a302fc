"""The modes package's errors and messages, in one place."""

from __future__ import annotations

from typing import Final

from ..vocabulary import TypedopsError

__all__ = ["FakeTensorError", "NoFakeRuleError"]


class FakeTensorError(TypedopsError, RuntimeError):
    """An op under ``FakeTensorMode`` given what fake tensors cannot stand for: a real
    tensor, or fake tensors on different devices."""


class NoFakeRuleError(FakeTensorError, NotImplementedError):
    """An op with no Meta kernel or ``register_fake`` rule, called under ``FakeTensorMode``.
    ``op`` is its full name."""

    def __init__(self, message: str, op: str) -> None:
        self.op = op
        super().__init__(message)


NO_FAKE_RULE: Final = (
    "{op} has no fake rule, so FakeTensorMode cannot run it{why}: register one that computes "
    "the result's shape and dtype without data, with Library({ns!r}, 'IMPL').impl({name!r}, fn, 'Meta') "
    "or, for an @op operator, @{name}.register_fake (build results with typedops.tensor.empty_meta)"
)
READ_DATA: Final = " (its kernel ran on meta tensors and read their data)"
REAL_TENSOR: Final = (
    "{op} was given a real tensor (argument {arg!r}) under FakeTensorMode; make it fake first "
    "with mode.from_tensor(t), or create the mode with FakeTensorMode(allow_non_fake_inputs=True)"
)
DEVICES: Final = "{op} was given fake tensors on different devices ({devices}); move them to one device"
