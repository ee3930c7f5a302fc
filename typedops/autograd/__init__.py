"""Reverse-mode automatic differentiation on typedops' dispatch keys (docs/autograd.md).

A tensor that requires grad carries its backend's Autograd key; a call with such a tensor
reaches the op's autograd kernel (generated from the core library's derivatives.yaml, or
registered with ``register_autograd``), which runs the op below autograd and records a
``Node``. ``backward()``/``grad()`` walk the recorded graph. Grad mode is the thread- and
task-local exclude set of the Autograd keys.
"""

from ._custom import BackwardContext, install_registrar, register_autograd
from ._engine import backward, grad
from ._grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from ._gradcheck import gradcheck, gradgradcheck
from ._graph import (
    NODE_SEQUENCE,
    AccumulateGrad,
    Node,
    SavedTensor,
    check_inplace,
    edge_of,
    mark_view,
    rebase_view,
    save,
    save_output,
    set_history,
    unpack,
    unpack_saved,
    unpack_output,
    WITH_AUTOGRAD,
)
from ._linear import conj, linear_map, real
from ._messages import AutogradError
from ._methods import RemovableHandle, install_methods
from ._record import (
    AUTOGRAD_OTHER_BIT,
    BELOW_AUTOGRAD,
    BELOW_AUTOGRAD_MASK,
    DIFFERENTIABLE_DTYPES,
    add_output_meta,
    below_autograd,
    install_fallbacks,
    not_implemented,
    out_not_differentiable,
    register_autograd_kernels,
    undifferentiable_dtype,
)

__all__ = [
    # the user surface
    "backward",
    "grad",
    "no_grad",
    "enable_grad",
    "set_grad_enabled",
    "is_grad_enabled",
    "gradcheck",
    "gradgradcheck",
    "AutogradError",
    "Node",
    "AccumulateGrad",
    "RemovableHandle",
    "register_autograd",
    "BackwardContext",
    # differentiable helpers computed in numpy under a recorded node (derivative formulas)
    "linear_map",
    "conj",
    "real",
    # what generated autograd kernels call (re-exported by typedops.runtime)
    "SavedTensor",
    "add_output_meta",
    "below_autograd",
    "BELOW_AUTOGRAD",
    "BELOW_AUTOGRAD_MASK",
    "NODE_SEQUENCE",
    "AUTOGRAD_OTHER_BIT",
    "check_inplace",
    "edge_of",
    "mark_view",
    "rebase_view",
    "not_implemented",
    "DIFFERENTIABLE_DTYPES",
    "undifferentiable_dtype",
    "out_not_differentiable",
    "register_autograd_kernels",
    "save",
    "save_output",
    "set_history",
    "unpack",
    "unpack_saved",
    "unpack_output",
    "WITH_AUTOGRAD",
]

install_methods()
install_registrar()
_FALLBACKS = install_fallbacks()
