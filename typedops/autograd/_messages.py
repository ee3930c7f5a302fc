"""Every message the autograd layer raises, in one place (mypy's message_registry is the model).

Each says what PyTorch's error of the same meaning says (the phrases users search for are
kept) and then how to fix it.
"""

from __future__ import annotations

from typing import Final

from ..vocabulary import TensorError

__all__ = ["AutogradError"]


class AutogradError(TensorError):
    """An error of the autograd layer (a ``RuntimeError``, as PyTorch's are)."""


IMPLICIT_GRAD: Final = (
    "grad can be implicitly created only for scalar outputs; this tensor has shape {shape}. "
    "Pass gradient= (a tensor of that shape), or reduce it first, e.g. y.sum().backward()"
)
IMPLICIT_COMPLEX: Final = (
    "grad can be implicitly created only for real scalar outputs but got {dtype}. Pass gradient= "
    "(a tensor of the output's dtype), or make the loss real first"
)
GRAD_DTYPE: Final = (
    "For complex Tensors, both grad_output and output are required to have the same dtype. Mismatch "
    "in dtype: grad_output[{index}] has a dtype of {got} and output[{index}] has a dtype of {expected}. "
    "Pass a gradient of the output's dtype"
)
NO_GRAD_FN: Final = (
    "element {index} of tensors does not require grad and does not have a grad_fn: nothing "
    "recorded how it was computed. Set requires_grad=True on the inputs before computing it, "
    "and do not compute it under no_grad()"
)
FREED: Final = (
    "Trying to backward through the graph a second time (or to read saved tensors after they "
    "were freed): {node} freed its saved tensors when the first backward() or grad() ran. Pass "
    "retain_graph=True to the first call if the graph is needed again"
)
VERSION: Final = (
    "one of the variables needed for gradient computation has been modified by an inplace "
    "operation: [{what}], which is {role} of {node}, is at version {now}; expected version "
    "{saved} instead. Do not change it in place before backward(), or change a clone() of it"
)
LEAF_INPLACE: Final = (
    "a leaf Variable that requires grad is being used in an in-place operation ({op}). Change "
    "its data under typedops.no_grad(), or apply the operation to a clone()"
)
VIEW_INPLACE: Final = (
    "{op}: this op has no autograd support for in-place writes into a view of a tensor that "
    "requires grad (only generated core kernels rebase the view's base). Apply it to a clone() "
    "of the view, or to the base tensor"
)
VIEW_OF_LEAF_INPLACE: Final = (
    "a view of a leaf Variable that requires grad is being used in an in-place operation ({op}). "
    "Change the leaf's data under typedops.no_grad(), or apply the operation to a clone()"
)
OUT_NOT_DIFFERENTIABLE: Final = (
    "{op}(): functions with out=... arguments don't support automatic differentiation, but one "
    "of the arguments requires grad. Call the functional form, or call it under typedops.no_grad()"
)
UNDIFFERENTIABLE_DTYPE: Final = (
    "{op}(): autograd does not support outputs of dtype {dtype} (only floating point and complex "
    "tensors have gradients), but an input requires grad. Call it under typedops.no_grad() or on "
    "detach()ed inputs"
)
NOT_IMPLEMENTED: Final = (
    "the derivative for '{op}' is not implemented: {why}. Register one with "
    "register_autograd(backward) on the op, or call it under typedops.no_grad() / on detach()ed inputs"
)
NO_FORMULA: Final = "the op has no autograd rule"
YAML_NOT_IMPLEMENTED: Final = "derivatives.yaml marks the gradient of '{input}' not_implemented"
INVALID_GRAD_COUNT: Final = "function {node} returned {got} gradients; expected {expected} (one per input)"
INVALID_GRAD_SHAPE: Final = (
    "function {node} returned an invalid gradient at index {index}: got shape {got} but expected "
    "shape {expected}. A backward rule must return one gradient of each input's shape"
)
UNUSED_INPUT: Final = (
    "The differentiated Tensor at index {index} appears to not have been used in the graph. Pass "
    "allow_unused=True if that is expected (its gradient is then None), or materialize_grads=True (zeros)"
)
EMPTY_INPUTS: Final = "`inputs` argument to `{fn}()` cannot be empty. Pass the tensors to differentiate, or None"
MATERIALIZE_UNUSED: Final = (
    "Expected allow_unused to be True or not passed when materialize_grads=True, but got: "
    "allow_unused=False. Drop allow_unused=False"
)
HOOK_CHANGED: Final = (
    "hook '{hook}' has changed the {what} of value (was {was} got {got}): a hook must return None "
    "or a gradient of the same shape and dtype as the one it was given"
)
INPUT_NO_GRAD: Final = (
    "One of the differentiated Tensors does not require grad (input {index}). Set "
    "requires_grad=True on it before computing the outputs"
)
GRAD_OUTPUTS_COUNT: Final = "grad_outputs has {got} tensors for {expected} outputs; pass one per output (or None)"
GRAD_SHAPE: Final = (
    "Mismatch in shape: grad_output[{index}] has a shape of {got} and output[{index}] has a "
    "shape of {expected}; pass a gradient of the output's shape"
)
HOOK_NO_GRAD: Final = (
    "cannot register a hook on a tensor that doesn't require gradient; set requires_grad=True "
    "on it (or on the leaves it is computed from) first"
)
RETAIN_NO_GRAD: Final = "can't retain_grad on Tensor that has requires_grad=False; set requires_grad=True first"
NOT_CALLABLE_HOOK: Final = "register_hook() takes a function hook(grad) -> Tensor | None, not {type}"
CTX_SAVE_TYPE: Final = "save_for_backward() takes tensors (or None), not {type} (argument {index})"
CTX_NOT_OUTPUT: Final = "mark_non_differentiable() takes output tensors of this op; argument {index} is not one"
RULE_SIGNATURE: Final = (
    "the backward rule {rule} for {op} does not fit: {problem}. It must be "
    "backward(ctx, {grads}) returning one gradient (or None) per differentiable input: {inputs}"
)
RULE_SETUP: Final = (
    "setup_context {fn} for {op} does not fit: {problem}. It must be "
    "setup_context(ctx, inputs, output) -> None"
)
RULE_RESULT_COUNT: Final = (
    "the backward rule of {op} returned {got} gradients; it must return {expected} (one per "
    "differentiable input: {inputs}), None for an input without a gradient"
)
RULE_NO_TENSOR_INPUT: Final = "{op} has no Tensor input to differentiate; register_autograd needs at least one"
GRADCHECK_FAILED: Final = (
    "gradcheck failed for input {index}, element {element}: numerical {numerical} vs analytical "
    "{analytical} (atol={atol}, rtol={rtol}). Check the backward rule of the ops involved"
)
GRADCHECK_DTYPE: Final = (
    "gradcheck needs float64 (or complex128) inputs for finite differences to be accurate; input {index} "
    "is {dtype}. Convert it with .to(float64)"
)
GRADCHECK_NO_INPUT: Final = (
    "gradcheck expects at least one input tensor to require gradient, but none of them have "
    "requires_grad=True: set it on the inputs to check"
)
NO_BACKWARD: Final = "{node} has no backward"
