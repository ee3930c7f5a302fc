"""opcheck's error and messages, in one place."""

from __future__ import annotations

from typing import Final

from ..vocabulary import TypedopsError

__all__ = ["OpCheckError"]


class OpCheckError(TypedopsError, AssertionError):
    """An op whose schema or rules do not tell the truth about its kernel. ``op`` is its
    full name, ``check`` the failing check (``test_schema``, ...)."""

    def __init__(self, message: str, op: str, check: str) -> None:
        self.op = op
        self.check = check
        super().__init__(message)


FAILED: Final = "opcheck({op}): {check} failed: {problem}"
UNKNOWN_CHECK: Final = "opcheck has no check {name!r}; its checks are {names}"
UNDECLARED_MUTATION: Final = (
    "it changed argument {arg!r} ({how}), but the schema does not declare that: declare it "
    "Tensor(a!) {arg} (for an @op operator: mutates_args=({arg!r},)), or work on a copy"
)
UNUSED_MUTATION: Final = (
    "the schema declares argument {arg!r} written (Tensor(a!)), but the kernel left its values "
    "unchanged: drop the '!' (for an @op operator: mutates_args), or write the argument"
)
UNDECLARED_ALIAS: Final = (
    "result {index} shares memory with argument {arg!r}, but the schema does not say so: return a "
    "new tensor (a copy), or declare the alias (Tensor(a) {arg} -> Tensor(a))"
)
FAKE_DIFFERS: Final = (
    "result {index}: the fake rule gives {fake}, the kernel gives {real}: make the Meta kernel "
    "(register_fake) compute what the kernel computes"
)
FAKE_COUNT: Final = "the fake rule returns {fake} value(s), the kernel {real}"
BOXED_DIFFERS: Final = (
    "the boxed call (call_boxed) gives {boxed}, the unboxed call gives {unboxed}: the kernel must "
    "not depend on how it was called (check its defaults and list conversions)"
)
AUTOGRAD_DIFFERS: Final = (
    "differentiating by argument {arg!r} (float64 copies of the arguments): {error}. Fix the "
    "op's autograd rule (its derivatives.yaml formula, or the backward given to register_autograd), "
    "or leave this check out (test_utils) for an op not meant to be differentiated"
)
AUTOGRAD_NO_FLOAT64: Final = (
    "the op failed on float64 copies of its floating arguments, which gradcheck needs ({error}): let "
    "the kernel take float64, or leave this check out (test_utils)"
)
STATIC_DIFFERS: Final = (
    "the statically dispatched function {fn} {what} {static}, the dispatcher {dynamic}: the static "
    "build calls the kernel it was generated with, the dispatcher another (one registered since, or "
    "a key above the backends). Regenerate the static build (typedops codegen --static-dispatch) "
    "from the yaml naming the kernel the dispatcher has, or register that kernel in the yaml"
)
VMAP_DIFFERS: Final = (
    "under vmap (a batch of 2 along a new dimension 0 of each positional tensor argument) the "
    "op's batching rule {rule}, the for-loop fallback {loop}: fix the batching rule (the vmap: "
    "family of its yaml entry, or the rule given to register_vmap), or drop it so the fallback "
    "serves the op"
)
NOT_AN_OP: Final = "opcheck takes an OperatorHandle or an @op operator, not a {kind}"
