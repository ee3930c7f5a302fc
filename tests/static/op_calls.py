"""Op calls mypy must accept, and calls it must refuse (expected errors in comments).

Checked by tests/test_static_typing.py, which runs mypy --strict and pyright (strict) on
this file and compares their messages with the comments line by line: '# E:' (error) and
'# N:' (note) for mypy, '# P:' (error) and '# PI:' (information) for pyright.
"""

from __future__ import annotations

from collections.abc import Sequence

from typedops import Tensor, dispatcher, op, tensor
from typedops.schema import parse_schema


@op("static_calls::scale")
def scale(x: Tensor, factor: float, *, bias: float = 0.0) -> Tensor:
    return x


@op("static_calls::split")
def split(x: Tensor, sizes: Sequence[int]) -> tuple[Tensor, Tensor]:
    return x, x


x = tensor([1.0])

# Accepted.
y: Tensor = scale(x, 2.0)
scale(x, 2, bias=1.0)
scale(x=x, factor=2.0)
a, b = split(x, [1, 2])
scale.call_boxed([x, 2.0])
print(scale.schema.full_name, scale.name, scale.overload_name)

# Refused.
scale(x, "2") # E: Argument 2 to "__call__" of "TypedOperatorHandle" has incompatible type "str"; expected "float"  [arg-type]  # P: Argument of type "Literal['2']" cannot be assigned to parameter "factor" of type "float" in function "__call__"  [reportArgumentType]
scale(x) # E: Missing positional argument "factor" in call to "__call__" of "TypedOperatorHandle"  [call-arg]  # P: Argument missing for parameter "factor"  [reportCallIssue]
scale(x, 2.0, 3.0) # E: Too many positional arguments for "__call__" of "TypedOperatorHandle"  [call-arg]  # N: "__call__" defined in "typedops.dispatch._typed"  # P: Expected 2 positional arguments  [reportCallIssue]
scale(x, 2.0, scales=1.0) # E: Unexpected keyword argument "scales" for "__call__" of "TypedOperatorHandle"  [call-arg]  # N: "__call__" defined in "typedops.dispatch._typed"  # P: No parameter named "scales"  [reportCallIssue]
scale(x, 2.0, 1.0) # E: Too many positional arguments for "__call__" of "TypedOperatorHandle"  [call-arg]  # N: "__call__" defined in "typedops.dispatch._typed"  # P: Expected 2 positional arguments  [reportCallIssue]
s: str = scale(x, 2.0) # E: Incompatible types in assignment (expression has type "Tensor", variable has type "str")  [assignment]  # P: Type "Tensor" is not assignable to declared type "str"  [reportAssignmentType]
c, d, e = split(x, [1]) # E: Need more than 2 values to unpack (3 expected)  [misc]  # P: Expression with type "tuple[Tensor, Tensor]" cannot be assigned to target tuple  [reportAssignmentType]  # P: Type of "e" is unknown  [reportUnknownVariableType]
split(x, 3) # E: Argument 2 to "__call__" of "TypedOperatorHandle" has incompatible type "int"; expected "Sequence[int]"  [arg-type]  # P: Argument of type "Literal[3]" cannot be assigned to parameter "sizes" of type "Sequence[int]" in function "__call__"  [reportArgumentType]
scale.no_such_attribute # E: "Op[[Tensor, float, DefaultNamedArg(float, 'bias')], Tensor]" has no attribute "no_such_attribute"  [attr-defined]  # P: Cannot access attribute "no_such_attribute" for class "Op[(x: Tensor, factor: float, *, bias: float = 0), Tensor]"  [reportAttributeAccessIssue]  # P: Type of "no_such_attribute" is unknown  [reportUnknownMemberType]

reveal_type(scale) # N: Revealed type is "typedops.custom_ops._op.Op[[x: typedops.tensor._tensor.Tensor, factor: float, *, bias: float =], typedops.tensor._tensor.Tensor]"  # PI: Type of "scale" is "Op[(x: Tensor, factor: float, *, bias: float = 0), Tensor]"
reveal_type(split(x, [1])) # N: Revealed type is "tuple[typedops.tensor._tensor.Tensor, typedops.tensor._tensor.Tensor]"  # PI: Type of "split(x, [1])" is "tuple[Tensor, Tensor]"


def prototype(x: Tensor, factor: float, *, bias: float = 0.0) -> Tensor:
    raise NotImplementedError


typed = dispatcher.find_schema_or_throw("static_calls::scale").typed(prototype)
typed(x, 2.0)
typed(x, factor="2") # E: Argument "factor" to "__call__" of "TypedOperatorHandle" has incompatible type "str"; expected "float"  [arg-type]  # P: Argument of type "Literal['2']" cannot be assigned to parameter "factor" of type "float" in function "__call__"  [reportArgumentType]
reveal_type(typed) # N: Revealed type is "typedops.dispatch._typed.TypedOperatorHandle[[x: typedops.tensor._tensor.Tensor, factor: float, *, bias: float =], typedops.tensor._tensor.Tensor]"  # PI: Type of "typed" is "TypedOperatorHandle[(x: Tensor, factor: float, *, bias: float = 0), Tensor]"
parse_schema(3) # E: Argument 1 to "parse_schema" has incompatible type "int"; expected "str"  [arg-type]  # P: Argument of type "Literal[3]" cannot be assigned to parameter "text" of type "str" in function "parse_schema"  [reportArgumentType]
