"""torch.func-style function transforms: ``grad`` and ``grad_and_value`` (docs/func.md),
with ``vmap`` and ``force_fallback`` from the batching layer (docs/vmap.md).

``grad`` is built on the autograd engine (typedops.autograd): each call differentiates with
respect to lifted copies of its arguments, so the caller's tensors are never changed, and
it records its own backward pass only when an enclosing level can use it (Note [When grad
records its own backward] in _grad.py). Inside ``vmap`` it differentiates the physical
tensors, with unbatched arguments made batched first (Note [grad inside vmap] in _lift.py).
"""

from ..batching import force_fallback, vmap
from ._grad import ArgNums, grad, grad_and_value
from ._messages import FuncError

__all__ = ["grad", "grad_and_value", "vmap", "force_fallback", "ArgNums", "FuncError"]
