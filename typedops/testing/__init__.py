"""Testing ops: ``opcheck(op, args, kwargs)`` checks that an op's schema and rules tell
the truth about its kernel -- mutation, aliasing, the fake rule, boxed against unboxed
calls, the autograd rule against finite differences, static against dynamic dispatch
(docs/opcheck.md). Layers above add checks with ``register_check``.
"""

from ._messages import OpCheckError
from ._opcheck import Check, checks, opcheck, register_check
from ._static import register_static_functions, static_function

__all__ = [
    "opcheck",
    "OpCheckError",
    "register_check",
    "checks",
    "Check",
    "register_static_functions",
    "static_function",
]
