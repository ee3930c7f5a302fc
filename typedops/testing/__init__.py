"""Testing ops: ``opcheck(op, args, kwargs)`` checks that an op's schema and rules tell
the truth about its kernel -- mutation, aliasing, the fake rule, boxed against unboxed
calls (docs/opcheck.md). Layers above add checks with ``register_check``.
"""

from ._messages import OpCheckError
from ._opcheck import Check, checks, opcheck, register_check

__all__ = ["opcheck", "OpCheckError", "register_check", "checks", "Check"]
