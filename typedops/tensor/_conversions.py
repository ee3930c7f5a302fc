"""``x.float()``, ``x.long()``, ... on ``Tensor``: Note [Dtype conversion methods]."""

from __future__ import annotations

from typing import Any, Final

from ..vocabulary import MemoryFormat, ScalarType
from ._tensor import Tensor

__all__ = ["DTYPE_CONVERSIONS"]


# Note [Dtype conversion methods]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# ``x.float()``, ``x.long()``, ``x.bool()``... are ``x.to(dtype)``, as torch's (``x`` itself
# when it has that dtype already), with torch's ``memory_format`` keyword. They are set on the class after its body: a method
# named ``float`` or ``int`` in the body would shadow the builtin in the body's own
# annotations for a type checker. Their types are in the generated ``_methods.pyi``
# (codegen/_stubs.py ``CONVERSION_METHODS``, checked against this table by a test).
DTYPE_CONVERSIONS: Final = {
    "float": ScalarType.float32, "double": ScalarType.float64, "half": ScalarType.float16,
    "bfloat16": ScalarType.bfloat16, "long": ScalarType.int64, "int": ScalarType.int32,
    "short": ScalarType.int16, "char": ScalarType.int8, "byte": ScalarType.uint8, "bool": ScalarType.bool,
    "cfloat": ScalarType.complex64, "cdouble": ScalarType.complex128,
}  # fmt: skip


def _conversion(name: str, dtype: ScalarType) -> Any:
    def convert(self: Tensor, memory_format: MemoryFormat | None = None) -> Tensor:
        return self.to(dtype, memory_format=memory_format)

    convert.__name__ = convert.__qualname__ = name
    convert.__doc__ = f"``self.to({dtype.name})`` (Note [Dtype conversion methods])."
    return convert


for _name, _dtype in DTYPE_CONVERSIONS.items():
    setattr(Tensor, _name, _conversion(_name, _dtype))
