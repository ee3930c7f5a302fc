"""Calls of a generated op library that mypy must accept or refuse (see test_static_typing.py).

The functional API is typed by the .pyi files written next to the generated modules
(tests/data/demo_generated/__init__.pyi); ``typedops.ops.demo`` and the Tensor methods by
tests/data/stubs/typedops_namespaces.pyi (its section for demo), found through mypy_path
and pyright's stubPath.
"""

from __future__ import annotations

import tests.data.demo_generated as demo
from typedops import Device, Tensor, ops, tensor

x = tensor([1.0])

# The functional API: overloads, defaults, out=, lists, optionals, enums.
y: Tensor = demo.add(x, x)
demo.add(x, 2.0, 3)
demo.add(x, x, alpha=2, out=x)
demo.add(x, x, out=None)  # no out, as in PyTorch (Note [out=None])
demo.add(x, 2.0, out=None)
demo.cat([x, x], dim=0)
demo.clamp(x, max=1.0)
demo.full([2, 2], 1.0, device=Device("meta"))
demo.add(x, "2") # E: No overload variant of "add" matches argument types "Tensor", "str"  [call-overload]  # N: Possible overload variants:  # N:     def add(self: Tensor, other: Tensor, *, alpha: bool | int | float | complex = ..., out: None = ...) -> Tensor  # N:     def add(self: Tensor, other: bool | int | float | complex, alpha: bool | int | float | complex = ..., *, out: None = ...) -> Tensor  # N:     def add(self: Tensor, other: Tensor, *, alpha: bool | int | float | complex = ..., out: Tensor) -> Tensor  # P: Argument of type "Literal['2']" cannot be assigned to parameter "other" of type "Scalar" in function "add"  [reportArgumentType]  # P: No overloads for "add" match the provided arguments  [reportCallIssue]
demo.twice(x, x) # E: Too many arguments for "twice"  [call-arg]  # P: Expected 1 positional argument  [reportCallIssue]
demo.cat(x) # E: Argument 1 to "cat" has incompatible type "Tensor"; expected "Sequence[Tensor]"  [arg-type]  # P: Argument of type "Tensor" cannot be assigned to parameter "tensors" of type "Sequence[Tensor]" in function "cat"  [reportArgumentType]
demo.full([2], 1.0, dtype="float") # E: Argument "dtype" to "full" has incompatible type "str"; expected "ScalarType | type[float] | type[int] | type[bool] | type[complex] | None"  [arg-type]  # P: Argument of type "Literal['float']" cannot be assigned to parameter "dtype" of type "DType | None" in function "full"  [reportArgumentType]
s: str = demo.twice(x) # E: Incompatible types in assignment (expression has type "Tensor", variable has type "str")  [assignment]  # P: Type "Tensor" is not assignable to declared type "str"  [reportAssignmentType]


# typedops.ops.demo.<name>.<overload>(...) and the packet's overloaded call, typed by
# tests/data/stubs/typedops_namespaces.pyi (written by codegen --stubs).
ops.demo.add.Tensor(x, x, alpha=2)
ops.demo.add(x, 1.0)
ops.demo.cat.default([x], 1)
ops.demo.add.Scalar(x, x)  # E: Argument 2 to "__call__" of "_demo_op_add__Scalar" has incompatible type "Tensor"; expected "bool | int | float | complex"  [arg-type]  # P: Argument of type "Tensor" cannot be assigned to parameter "other" of type "Scalar" in function "__call__"  [reportArgumentType]
reveal_type(ops.demo.add.out)  # N: Revealed type is "typedops_namespaces._demo_op_add__out"  # PI: Type of "ops.demo.add.out" is "_demo_op_add__out"
ops.demo.twice.default.schema.full_name
ops.demo.nosuchop  # E: "_demo_Namespace" has no attribute "nosuchop"  [attr-defined]  # P: Cannot access attribute "nosuchop" for class "_demo_Namespace"  [reportAttributeAccessIssue]  # P: Type of "nosuchop" is unknown  [reportUnknownMemberType]
ops.other_namespace.anything  # namespaces without stubs stay dynamic
# The Tensor methods the demo yaml adds (add and clamp are core's too: typed as core's).
r: Tensor = x.twice()
x.add(2)
x.add_(x)
x.clamp(min=0)
x.twice(1)  # E: Too many arguments for "twice" of "_demo_TensorMethods"  [call-arg]  # P: Expected 0 positional arguments  [reportCallIssue]
