"""Every message the func package raises, in one place (mypy's message_registry is the model).

Each keeps the words a torch.func user searches for (``argnums``, ``has_aux``, "scalar
Tensor") and ends with how to fix the call.
"""

from __future__ import annotations

from typing import Final

from ..vocabulary import TensorError

__all__ = ["FuncError"]


class FuncError(TensorError):
    """What ``f`` returned does not fit the transform (a ``RuntimeError``, as torch.func's are)."""

ARGNUMS_TYPE: Final = (
    "{api}: argnums must be an int or a tuple of ints, got {type}. Name the positional "
    "arguments to differentiate, e.g. argnums=0 or argnums=(0, 2)"
)
ARGNUMS_EMPTY: Final = (
    "{api}: argnums must be non-empty; name at least one positional argument to differentiate"
)
ARGNUMS_DUPLICATE: Final = (
    "{api}: argnums elements must be unique, got {argnums} (after counting negative ones from "
    "the end); name each positional argument once"
)
ARGNUM_RANGE: Final = (
    "{api}: got argnums={argnum}, but f was called with only {count} positional inputs. "
    "argnums counts positional arguments from 0 (negative ones from the end); pass the "
    "differentiated tensors positionally, not as keywords"
)
NOT_A_TENSOR_INPUT: Final = (
    "{api}: the differentiated argument {where} must hold only Tensors (in tuples, lists "
    "and dicts), but it holds {type}. Differentiate with respect to tensors only: move other "
    "values to arguments outside argnums"
)
NOT_FLOAT_INPUT: Final = (
    "{api}: only floating-point and complex tensors can be differentiated, but argument "
    "{where} is a {dtype} tensor. Convert it first, e.g. x.to(ScalarType.float32)"
)
AUX_NOT_PAIR: Final = (
    "{api}: with has_aux=True, f must return a pair (output, aux), but it returned {what}. "
    "Return (loss, aux), or pass has_aux=False"
)
OUTPUT_NOT_TENSOR: Final = (
    "{api}: f must return a Tensor to be differentiated, but it returned {type}. Return the "
    "loss as a Tensor; return other values as aux with has_aux=True"
)
OUTPUT_NOT_SCALAR: Final = (
    "{api}: f must return a scalar Tensor (0 dims), but it returned a tensor with {ndim} "
    "dims (shape {shape}). Reduce it to the scalar to differentiate, e.g. with .sum() or .mean()"
)
