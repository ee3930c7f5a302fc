"""The tensor layer: storage, strides and ``Tensor`` over numpy, carrying its dispatch keys.

It sits above the schema and boxing layers and below the dispatcher (docs/architecture.md).
Importing it registers ``Tensor`` with the schema layer, which is how inference, Python
signatures and boxed value checks learn what a tensor is (Note [Tensor class by
registration] in typedops/schema/_classes.py). Kernels build and inspect tensors with the
helpers exported here.
"""

from typing import Final

from ..schema import register_tensor_class
from ._storage import Storage
from ._strides import (
    broadcast_shapes,
    contiguous_strides,
    infer_size,
    is_channels_last_strides,
    is_contiguous_strides,
    numel_of,
    strides_for_format,
    suggest_memory_format,
    is_non_overlapping_and_dense,
    dense_strides_like,
    elementwise_strides,
    view_strides,
    wrap_dim,
)
from ._messages import NO_DATA
from ._collect import tensors_in
from ._conversions import DTYPE_CONVERSIONS
from ._overlap import check_write, has_internal_overlap, partially_overlaps
from ._zeros import zeros_float32
from ._tensor import (
    AUTOGRAD_BIT_FOR_DEVICE,
    AUTOGRAD_BITS,
    AUTOGRAD_METHODS,
    CPU,
    DEVICE_KEY_BITS,
    Tensor,
    adopt_geometry,
    alias_of,
    array_of,
    backend_key_for_device,
    bump_version,
    read_only_error,
    contiguous_strides_cached,
    cached_contiguous_strides,
    empty_meta,
    empty_tensor,
    keys_for_device,
    make_view,
    view_with,
    numpy_dtype,
    resize_,
    scalar_type_of,
    set_requires_grad,
    tensor,
    wrap_array,
    wrapped_scalar,
)

register_tensor_class(Tensor)

# What Tensor defines itself (and inherits from object), taken before any op library
# installs methods: a generated library may not install a method under one of these
# names (it would replace numpy(), __repr__, ... for every tensor).
TENSOR_OWN_NAMES: Final = frozenset(dir(Tensor))

__all__ = [
    # tensors
    "Tensor",
    "tensor",
    "Storage",
    # making and changing tensors (for kernels)
    "empty_tensor",
    "alias_of",
    "array_of",
    "contiguous_strides_cached",
    "cached_contiguous_strides",
    "empty_meta",
    "wrap_array",
    "wrapped_scalar",
    "zeros_float32",
    "tensors_in",
    "make_view",
    "view_with",
    "resize_",
    "adopt_geometry",
    "bump_version",
    "read_only_error",
    "check_write",
    "has_internal_overlap",
    "partially_overlaps",
    "numpy_dtype",
    "scalar_type_of",
    "keys_for_device",
    "backend_key_for_device",
    "NO_DATA",
    "TENSOR_OWN_NAMES",
    "DTYPE_CONVERSIONS",
    # autograd's view of a tensor (Note [Autograd keys only on tensors that require grad])
    "AUTOGRAD_BITS",
    "AUTOGRAD_BIT_FOR_DEVICE",
    "AUTOGRAD_METHODS",
    "DEVICE_KEY_BITS",
    "CPU",
    "set_requires_grad",
    # shapes and strides
    "numel_of",
    "contiguous_strides",
    "strides_for_format",
    "is_contiguous_strides",
    "is_channels_last_strides",
    "suggest_memory_format",
    "is_non_overlapping_and_dense",
    "dense_strides_like",
    "elementwise_strides",
    "broadcast_shapes",
    "infer_size",
    "view_strides",
    "wrap_dim",
]
