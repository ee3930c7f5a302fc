"""Calls of the bundled core library that mypy must accept or refuse (see test_static_typing.py).

``typedops.ops.core`` and the Tensor methods are typed by the generated stubs
typedops/dispatch/_ops_typing.pyi (``ops`` is declared as its ``Ops``) and
typedops/tensor/_methods.pyi (``Tensor`` derives from its ``TensorMethods`` under
TYPE_CHECKING); ``typedops.core.<name>`` by typedops/core/_generated/__init__.pyi.
"""

from __future__ import annotations

import numpy as np

import typedops
from typedops import MemoryFormat, Tensor, core, ops, tensor

x = tensor([1.0, 2.0])
c = x.gt(1.5)

# typedops.ops.core: overloads by name, and the packet's overloaded call.
a: Tensor = ops.core.add.Tensor(x, x, alpha=2)
ops.core.add(x, 2.0)
ops.core.where.self(c, x, x)
typedops.ops.core.sum.dim_IntList(x, [0], keepdim=True)
ops.core.transpose.int(x, 0, 1)
ops.core.add.Tensor(x, 2.0) # E: Argument 2 to "__call__" of "_op_add__Tensor" has incompatible type "float"; expected "Tensor"  [arg-type]  # P: Argument of type "float" cannot be assigned to parameter "other" of type "Tensor" in function "__call__"  [reportArgumentType]
ops.core.mul.Scalar(x, x) # E: Argument 2 to "__call__" of "_op_mul__Scalar" has incompatible type "Tensor"; expected "bool | int | float | complex"  [arg-type]  # P: Argument of type "Tensor" cannot be assigned to parameter "other" of type "Scalar" in function "__call__"  [reportArgumentType]
# Unknown names in a namespace with stubs are static errors (AttributeError at run time).
ops.core.nosuchop # E: "Namespace" has no attribute "nosuchop"  [attr-defined]  # P: Cannot access attribute "nosuchop" for class "Namespace"  [reportAttributeAccessIssue]  # P: Type of "nosuchop" is unknown  [reportUnknownMemberType]
ops.core.add.nosuch # E: "_packet_add" has no attribute "nosuch"  [attr-defined]  # P: Cannot access attribute "nosuch" for class "_packet_add"  [reportAttributeAccessIssue]  # P: Type of "nosuch" is unknown  [reportUnknownMemberType]
ops.core.add.overloads()
reveal_type(ops.core.max.dim(x, 0)) # N: Revealed type is "tuple[typedops.tensor._tensor.Tensor, typedops.tensor._tensor.Tensor]"  # PI: Type of "ops.core.max.dim(x, 0)" is "tuple[Tensor, Tensor]"
ops.other.anything  # other namespaces stay untyped

# Tensor methods, including where (self is not the schema's first argument).
b: Tensor = x.add(x, alpha=2)
x.add(1)
x.where(c, x)
# A Python number as a tensor operand: the .Scalar overloads (Note [Scalar overloads]).
x.sub(2)
x.div(2.5)
x.ne(2)
x.lt(2)
x.le(2)
x.ge(2)
x.add_(2)
x.sub_(2)
x.mul_(2)
x.div_(2)
x.where(c, 0.0)
core.sub(x, 2)
core.div(x, 2)
core.where(c, x, 0.0)
core.where(c, 1.0, x)
core.where(c, 1.0, 0.0)
ops.core.sub(x, 2)
ops.core.where(c, x, 0.0)
x.contiguous(memory_format=MemoryFormat.channels_last)
x.sum(dtype=None)
x.where(c) # E: No overload variant of "where" of "TensorMethods" matches argument type "Tensor"  [call-overload]  # N: Possible overload variants:  # N:     def where(self, condition: Tensor, other: Tensor) -> Tensor  # N:     def where(self, condition: Tensor, other: bool | int | float | complex) -> Tensor  # P: No overloads for "where" match the provided arguments  [reportCallIssue]
x.add("1") # E: No overload variant of "add" of "TensorMethods" matches argument type "str"  [call-overload]  # N: Possible overload variants:  # N:     def add(self, other: Tensor, *, alpha: bool | int | float | complex = ...) -> Tensor  # N:     def add(self, other: bool | int | float | complex, alpha: bool | int | float | complex = ...) -> Tensor  # P: Argument of type "Literal['1']" cannot be assigned to parameter "other" of type "Scalar" in function "add"  [reportArgumentType]  # P: No overloads for "add" match the provided arguments  [reportCallIssue]
x.neg(1) # E: Too many arguments for "neg" of "TensorMethods"  [call-arg]  # P: Expected 0 positional arguments  [reportCallIssue]
x.no_such_method() # E: "Tensor" has no attribute "no_such_method"  [attr-defined]  # P: Cannot access attribute "no_such_method" for class "Tensor"  [reportAttributeAccessIssue]  # P: Type of "no_such_method" is unknown  [reportUnknownMemberType]

# The functional API.
d: Tensor = core.add(x, x, alpha=2)
core.where(c, x, x)
core.zeros([2, 3], dtype=None)
# What the runtime accepts (Note [Stubs type what runs]): tuples for lists, a device's
# name, a lone int for a sized int list.
core.empty((2,), device="meta")
x.sum(0)
core.mean(x, 0, keepdim=True)
# A number as self of add, sub, mul, div and floor_divide, as torch's (Note [Numbers as self]).
rsub: Tensor = core.sub(2, x)
core.add(2.5, x, alpha=2)
core.floor_divide(7, x)
# ... and beside out= in either position, as torch's: there is no .Scalar_out overload.
written: Tensor = core.mul(x, 2, out=x)
core.sub(2, x, alpha=3, out=x)
core.eq(2, x) # E: No overload variant of "eq" matches argument types "int", "Tensor"  [call-overload]  # N: Possible overload variants:  # N:     def eq(self: Tensor, other: Tensor) -> Tensor  # N:     def eq(self: Tensor, other: bool | int | float | complex) -> Tensor  # P: Argument of type "Literal[2]" cannot be assigned to parameter "self" of type "Tensor" in function "eq"  [reportArgumentType]  # P: No overloads for "eq" match the provided arguments  [reportCallIssue]
# Python's number types as dtypes, and sizes one by one (Note [Sizes as varargs]).
core.ones([2], dtype=float)
x.sum(dtype=int)
x.to(complex)
tensor([1], dtype=bool)
x.view(2, 1)
x.view([2, 1])
x.reshape(-1)
x.permute(0)
x.expand(3, 2, implicit=False)
number: complex = float(x) + int(x) + complex(x)
largest: Tensor = x.max()
smallest: Tensor = core.min(x)
pair: tuple[Tensor, Tensor] = x.min(0)
# max.dim and min.dim name their results, as torch.return_types (Note [Named results]).
best: Tensor = x.max(0).values
where_best: Tensor = core.min(x, 0, keepdim=True).indices
x.max(0).nosuch # E: "max" has no attribute "nosuch"  [attr-defined]  # P: Cannot access attribute "nosuch" for class "max"  [reportAttributeAccessIssue]  # P: Type of "nosuch" is unknown  [reportUnknownMemberType]
larger: Tensor = x.max(x)
core.min(x, other=x)
x.squeeze()
floored: Tensor = x // 2 + 7 % x - x % x
floored //= 2
floored %= x
core.sum(x, 0, out=x)
core.sum(x, 0, out=None)
core.ones([2], dtype=str) # E: Argument "dtype" to "ones" has incompatible type "type[str]"; expected "ScalarType | type[float] | type[int] | type[bool] | type[complex] | None"  [arg-type]  # P: Argument of type "type[str]" cannot be assigned to parameter "dtype" of type "DType | None" in function "ones"  [reportArgumentType]  # P: No overloads for "ones" match the provided arguments  [reportCallIssue]
core.empty((2,), device=0) # E: No overload variant of "empty" matches argument types "tuple[int]", "int"  [call-overload]  # N: Possible overload variants:  # N:     def empty(*size: int, dtype: ScalarType | type[float] | type[int] | type[bool] | type[complex] | None = ..., layout: Layout | None = ..., device: Device | str | None = ..., pin_memory: bool | None = ..., memory_format: MemoryFormat | None = ...) -> Tensor  # N:     def empty(size: Sequence[int], *, dtype: ScalarType | type[float] | type[int] | type[bool] | type[complex] | None = ..., layout: Layout | None = ..., device: Device | str | None = ..., pin_memory: bool | None = ..., memory_format: MemoryFormat | None = ...) -> Tensor  # P: Argument of type "Literal[0]" cannot be assigned to parameter "device" of type "Device | str | None" in function "empty"  [reportArgumentType]  # P: No overloads for "empty" match the provided arguments  [reportCallIssue]
core.where(c, x) # E: No overload variant of "where" matches argument types "Tensor", "Tensor"  [call-overload]  # N: Possible overload variants:  # N:     def where(condition: Tensor, self: Tensor, other: Tensor) -> Tensor  # N:     def where(condition: Tensor, self: Tensor, other: bool | int | float | complex) -> Tensor  # N:     def where(condition: Tensor, self: bool | int | float | complex, other: Tensor) -> Tensor  # N:     def where(condition: Tensor, self: bool | int | float | complex, other: bool | int | float | complex) -> Tensor  # P: No overloads for "where" match the provided arguments  [reportCallIssue]
s: str = core.neg(x) # E: Incompatible types in assignment (expression has type "Tensor", variable has type "str")  [assignment]  # P: Type "Tensor" is not assignable to declared type "str"  [reportAssignmentType]

# The operators (Note [Tensor operators]): tensors and Python numbers, reflected, in place.
e: Tensor = x + x * 2 - 1 / x
f: Tensor = 2 - x @ x
g: Tensor = (x ** 2 == x) != (x < 1.5)
x += 1
x -= x
h: Tensor = -abs(x)
x + "1" # E: Unsupported operand types for + ("Tensor" and "str")  [operator]  # P: Operator "+" not supported for types "Tensor" and "Literal['1']"  [reportOperatorIssue]
powers: Tensor = x ** x + 2 ** x
converted: Tensor = x.float().long().bool().half().double()
x ** "2" # E: Unsupported operand types for ** ("Tensor" and "str")  [operator]  # P: Operator "**" not supported for types "Tensor" and "Literal['2']"  [reportOperatorIssue]
x @ 2 # E: Unsupported operand types for @ ("Tensor" and "int")  [operator]  # P: Operator "@" not supported for types "Tensor" and "Literal[2]"  [reportOperatorIssue]
t: str = x > 1 # E: Incompatible types in assignment (expression has type "Tensor", variable has type "str")  [assignment]  # P: Type "Tensor" is not assignable to declared type "str"  [reportAssignmentType]
{x: 1}  # hashable, by identity

# Factories take sizes as one sequence or one by one (Note [Sizes as varargs]), and
# PyTorch's dtype names.
z: Tensor = core.zeros(2, 3, dtype=typedops.float64) + core.ones([2, 3], dtype=typedops.long) + core.randn(3)
core.empty(2, 2, device="meta", dtype=typedops.bool)
core.zeros(2, 3.0) # E: No overload variant of "zeros" matches argument types "int", "float"  [call-overload]  # N: Possible overload variants:  # N:     def zeros(size: Sequence[int], *, dtype: ScalarType | type[float] | type[int] | type[bool] | type[complex] | None = ..., layout: Layout | None = ..., device: Device | str | None = ..., pin_memory: bool | None = ...) -> Tensor  # N:     def zeros(*size: int, dtype: ScalarType | type[float] | type[int] | type[bool] | type[complex] | None = ..., layout: Layout | None = ..., device: Device | str | None = ..., pin_memory: bool | None = ...) -> Tensor  # P: Argument of type "float" cannot be assigned to parameter "size" of type "int" in function "zeros"  [reportArgumentType]

# Indexing (Note [Basic indexing]): ints, slices, None, ..., tensors and lists; numbers or tensors assigned.
r: Tensor = x[0] + x[1:, None, ...][x > 0] + x[[0, 1]]
x[0] = 1.0
x[x > 1] = x
x["a"] # E: Invalid index type "str" for "Tensor"; expected type "SupportsIndex | slice[Any, Any, Any] | EllipsisType | Tensor | list[Any] | None | tuple[SupportsIndex | slice[Any, Any, Any] | EllipsisType | Tensor | list[Any] | None, ...]"  [index]  # P: Argument of type "Literal['a']" cannot be assigned to parameter "index" of type "Index" in function "__getitem__"  [reportArgumentType]
x[0] = np.float32(2.0)  # numpy's numbers too (Note [Numbers that are not Python's])
