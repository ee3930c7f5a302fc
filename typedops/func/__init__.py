"""torch.func-style function transforms: ``grad`` and ``grad_and_value`` (docs/func.md).

Built on the autograd engine (typedops.autograd): each call differentiates with respect
to lifted copies of its arguments, so the caller's tensors are never changed, and it
records its own backward pass only when an enclosing level can use it (Note [When grad
records its own backward] in _grad.py).
"""

from ._grad import ArgNums, grad, grad_and_value
from ._messages import FuncError

__all__ = ["grad", "grad_and_value", "ArgNums", "FuncError"]
