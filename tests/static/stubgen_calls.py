"""Calls of a project's own ops that the checkers must accept or refuse (see tests/static_checks.py).

tests/data/user_ops.py defines namespace ``userops`` with ``@op`` and ``Library``;
``typedops stubgen tests.data.user_ops --out tests/data/stubs`` wrote the stubs that type
``typedops.ops.userops`` (its section of tests/data/stubs/typedops_namespaces.pyi). The ``@op`` functions themselves need no stubs.
"""

from __future__ import annotations

from tests.data import user_ops
from typedops import Tensor, ops, tensor

x = tensor([1.0])

# The @op function itself, and the same op through typedops.ops.
y: Tensor = user_ops.scale(x, 2.0)
z: Tensor = ops.userops.scale(x, 2.0, bias=1.0)
ops.userops.scale.default(x, 2.0)
a, b = ops.userops.split(x, (1, 2))
ops.userops.shift(x)
ops.userops.shift.dims(x, 1, device="meta")
ops.userops.shift.overloads()
ops.userops.scale(x, "2")  # E: Argument 2 to "__call__" of "_userops_packet_scale" has incompatible type "str"; expected "float"  [arg-type]  # P: Argument of type "Literal['2']" cannot be assigned to parameter "factor" of type "float" in function "__call__"  [reportArgumentType]
ops.userops.scale.default(x)  # E: Missing positional argument "factor" in call to "__call__" of "_userops_op_scale__default"  [call-arg]  # P: Argument missing for parameter "factor"  [reportCallIssue]
ops.userops.split(x, [1])[2]  # E: Tuple index out of range  [misc]  # P: Index 2 is out of range for type tuple[Tensor, Tensor]  [reportGeneralTypeIssues]
ops.userops.nosuchop  # E: "_userops_Namespace" has no attribute "nosuchop"  [attr-defined]  # P: Cannot access attribute "nosuchop" for class "_userops_Namespace"  [reportAttributeAccessIssue]  # P: Type of "nosuchop" is unknown  [reportUnknownMemberType]
s: str = ops.userops.shift.default(x)  # E: Incompatible types in assignment (expression has type "Tensor", variable has type "str")  [assignment]  # P: Type "Tensor" is not assignable to declared type "str"  [reportAssignmentType]
