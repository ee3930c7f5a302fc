"""Every message the batching layer raises or warns with, in one place (mypy's
message_registry is the model).

Each keeps the words of PyTorch's error of the same meaning (torch.vmap's and functorch's
batching code), so users can search for them, and ends with the fix.
"""

from __future__ import annotations

from typing import Final

from ..vocabulary import TensorError

__all__ = ["VmapError"]


class VmapError(TensorError):
    """An operation that cannot run under ``vmap`` (a ``RuntimeError``, as PyTorch's are)."""


# -- vmap's arguments (ValueError, as torch.vmap's) ----------------------------------------
BAD_RANDOMNESS: Final = (
    "Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness!r}"
)
BAD_CHUNK_SIZE: Final = "vmap: chunk_size should be None or greater than 0. (got {chunk_size!r})"
NO_INPUTS: Final = (
    "vmap({fn})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you are trying to "
    "vmap over a function with no inputs. The latter is unsupported."
)
IN_DIMS_TYPE: Final = (
    "vmap({fn}, in_dims={in_dims!r}, ...)(<inputs>): expected `in_dims` to be int or a "
    "(potentially nested) tuple matching the structure of inputs, got: {kind}."
)
IN_DIMS_STRUCTURE: Final = (
    "vmap({fn}, in_dims={in_dims!r}, ...)(<inputs>): in_dims is not compatible with the "
    "structure of `inputs`. in_dims has structure {dims_structure} but inputs has structure "
    "{inputs_structure}: give one in_dim per argument (a tuple), nested like the argument"
)
IN_DIM_NOT_INT: Final = (
    "vmap({fn}, in_dims={in_dims!r}, ...)(<inputs>): Got in_dim={in_dim!r} for an input but "
    "in_dim must be either an integer dimension or None."
)
IN_DIM_NOT_TENSOR: Final = (
    "vmap({fn}, in_dims={in_dims!r}, ...)(<inputs>): Got in_dim={in_dim} for an input but the "
    "input is of type {kind}. We cannot vmap over non-Tensor arguments, please use None as the "
    "respective in_dim"
)
IN_DIM_RANGE: Final = (
    "vmap({fn}, in_dims={in_dims!r}, ...)(<inputs>): Got in_dim={in_dim} for some input, but "
    "that input is a Tensor of dimensionality {ndim} so expected in_dim to satisfy "
    "-{ndim} <= in_dim < {ndim}."
)
NOTHING_TO_MAP: Final = (
    "vmap: Expected at least one Tensor to vmap over: every in_dim is None or no argument is a "
    "tensor. Give the batched argument an int in_dim"
)
BATCH_SIZES: Final = (
    "vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
    "{sizes} for the mapped dimension (arguments {names})"
)
OUT_DIMS_TYPE: Final = (
    "vmap({fn}, ..., out_dims={out_dims!r}): `out_dims` must be an int, None or a python "
    "collection of ints representing where in the outputs the vmapped dimension should appear."
)
OUT_DIMS_STRUCTURE: Final = (
    "vmap({fn}, ..., out_dims={out_dims!r})(<inputs>): out_dims is not compatible with the "
    "structure of `outputs`. out_dims has structure {dims_structure} but outputs has structure "
    "{outputs_structure}."
)
OUT_NOT_TENSOR: Final = (
    "vmap({fn}, ...): `{fn}` must only return Tensors, got type {kind}. Did you mean to set "
    "out_dims= to None for output?"
)
OUT_DIM_NONE_BATCHED: Final = (
    "vmap({fn}, ...): `{fn}` can not return a BatchedTensor when out_dim is None: the output "
    "differs across the batch, so give it an int out_dim"
)
OUT_DIM_RANGE: Final = (
    "vmap({fn}, ..., out_dims={out_dims!r}): out_dim {out_dim} is out of range for an output of "
    "{ndim} dimensions plus the batch dimension (expected -{rank} <= out_dim < {rank})"
)

# -- what cannot run on a batched tensor ---------------------------------------------------
ITEM: Final = (
    "vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over "
    "calling .item() on a Tensor, please try to rewrite what you're doing with other "
    "operations (e.g. where() instead of an if on a value)."
)
CONTROL_FLOW: Final = (
    "vmap: It looks like you're attempting to use a Tensor in some data-dependent control "
    "flow. We don't support that yet: each sample of the batch may take another branch. "
    "Rewrite the branch with where(condition, a, b)."
)
DATA_ACCESS: Final = (
    "vmap: {what} reads the data of a batched tensor, which holds the whole batch; inside "
    "vmap a function sees one sample and may only call operators on it. Compute with "
    "operators, or return the tensor from the vmapped function and read it there"
)
ESCAPED: Final = (
    "vmap: a batched tensor of vmap level {level} was used after that vmap returned (it "
    "escaped, e.g. kept in a global or a closure). Return tensors from the vmapped function "
    "instead of storing them"
)

EXPAND_NEW_MINUS_ONE: Final = (
    "expand: -1 is not allowed in a leading, non-existing dimension {dim} of a sample (inside vmap "
    "the sample has {rank} dimensions); give that dimension's size"
)

# -- randomness ------------------------------------------------------------------------------
RANDOM_ERROR: Final = (
    "vmap: called random operation while in randomness error mode. Please either use the "
    "'same' or 'different' randomness flags on vmap or perform the randomness operation out "
    "of vmap (op {op})"
)

# -- the fallback and in-place ops ---------------------------------------------------------
FALLBACK_SLOW: Final = (
    "There is a performance drop because we have not yet implemented the batching rule for "
    "{op}: vmap runs it once per sample and stacks the results (the for-loop fallback). "
    "Register a rule with register_vmap, or declare one in the op's yaml (vmap:)"
)
FALLBACK_RESIZE: Final = (
    "Batching rule not implemented for {op}: the fallback path cannot resize a batched out= "
    "tensor per sample (a sample of shape {before} had to be resized). Give out= the per-sample "
    "result's shape, or call the out-of-place op"
)
FALLBACK_VIEW: Final = (
    "Batching rule not implemented for {op}: the fallback path doesn't work on view ops (its "
    "per-sample results would be stacked into a copy, no longer aliasing the input). "
    "Register a rule with register_vmap, or call a copying op instead"
)
FALLBACK_NO_RETURNS: Final = (
    "Batching rule not implemented for {op}: the fallback path does not support operations "
    "with no returns or non-Tensor returns (return {index} is {kind}). Register a rule with "
    "register_vmap"
)
FALLBACK_EMPTY: Final = (
    "The fallback path does not support vmap over dims of size 0 ({op}). Register a rule with "
    "register_vmap, or skip the call for an empty batch"
)
INPLACE: Final = (
    "vmap: {op}(self, *extra_args) is not possible because there exists a Tensor `other` in "
    "extra_args that has more elements than `self`. This happened due to `other` being "
    "vmapped over but `self` not being vmapped over in a vmap. Please try to use out-of-place "
    "operators instead of {op}. If said operator is being called inside the typedops "
    "library, please file a bug report instead."
)

# -- rules -------------------------------------------------------------------------------------
RULE_SIGNATURE: Final = (
    "register_vmap: the rule {rule} does not fit {op}: {problem}. A vmap rule takes (info, "
    "in_dims{params}) -- the op's arguments after info and in_dims -- and returns (result, out_dims)"
)
RULE_NOT_CALLABLE: Final = "register_vmap: the rule for {op} must be a function, not {kind}"
RULE_RESULT: Final = (
    "the vmap rule of {op} must return a pair (result, out_dims), got {kind}"
)
RULE_OUT_DIMS: Final = (
    "the vmap rule of {op} returned out_dims={out_dims!r} for a result of {count} tensor(s): "
    "give an int or None per output (a tuple for several)"
)
RULE_OUT_DIM_RANGE: Final = (
    "the vmap rule of {op} returned out_dim={dim} for a result of rank {rank}: the batch "
    "dimension must be one of the result's dimensions ({low} <= out_dim < {rank}); return the "
    "result with the batch in it, or out_dims=None for a result that is the same for every sample"
)
UNKNOWN_RULE: Final = "unknown batching rule family {name!r}; known: {known}"
RULE_DOES_NOT_FIT: Final = "the batching rule family {family!r} does not fit {op}: {problem}"
