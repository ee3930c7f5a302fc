"""Dispatch modes and fake tensors: ``with MyMode():`` sends every op call of the block
to ``MyMode.__typedops_dispatch__`` through one boxed fallback on the ``Python`` key (as
torch's ``TorchDispatchMode``); ``FakeTensorMode`` runs ops for shapes, dtypes and
strides only, on meta-backed tensors that remember their device (docs/modes.md).
"""

from ._fake import FakeTensor, FakeTensorMode
from ._messages import FakeTensorError, NoFakeRuleError
from ._mode import DispatchMode, current_modes, dispatch_on_class

__all__ = [
    "DispatchMode",
    "current_modes",
    "dispatch_on_class",
    "FakeTensorMode",
    "FakeTensor",
    "FakeTensorError",
    "NoFakeRuleError",
]
