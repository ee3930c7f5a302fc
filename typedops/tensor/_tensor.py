"""``Tensor``: a strided view of a shared storage that carries its dispatch keys.

A tensor is a ``Storage`` (a flat numpy buffer, or none on the meta device) seen through
a shape, element strides and a storage offset, as in PyTorch. Views share the storage
and its version counter (Note [Shared version counter] in _storage.py). Ops are not
methods here: the code generator installs them. What lives here is what kernels need
to build and inspect tensors: allocation, views, resizing and the version counter.

The dispatcher never imports this module: it reads ``.key_bits`` from whatever
tensor-typed arguments a schema names. numpy is imported only inside functions, so
``import typedops`` stays fast.

Note [Wrap and unwrap]
~~~~~~~~~~~~~~~~~~~~~~
Kernels and the functionality layers move between tensors and numpy arrays with two
cheap calls: ``array_of(t)`` is ``t``'s elements as a numpy array (the cached view, Note
[Cached numpy view]; kernels must not reshape it in place or keep writing to it after
returning), and ``Tensor._from_array(array, dtype, device)`` makes a new tensor that
*owns* ``array``: no copy, no checks. The caller guarantees that ``array`` is a fresh,
C-contiguous ``numpy.ndarray`` (not a numpy scalar) whose numpy dtype stores ``dtype``,
and that nothing else keeps writing to it -- a kernel's own result. ``_from_array0`` is
the same for a 0-dim ``array`` (a full reduction's result), without reading its shape or
looking up its strides. ``wrap_array`` is the checked form (it copies and casts).

Note [Tensor fields with class defaults]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
The fields every tensor reads on the plain path are slots, set by the constructors. The
fields the functionality layers will use -- ``_grad`` (behind the ``grad`` property, which
checks what is assigned), ``_output_nr``,
``_autograd_meta``, ``is_wrapped_number``, ``_batch_level`` and ``_batch_value`` -- are
*class-level defaults*: Tensor has a ``__dict__`` slot, which CPython creates only on the
first write of such a field, so a plain tensor pays neither a store when it is made nor
a dict. Reading a default costs a few nanoseconds more than reading a slot; writing one
makes that tensor's dict. ``grad_fn`` is the exception, a slot the constructors set to
None: every recorded op writes it on its result, and as a default that write made a dict
per result (about 40 ns of each recorded op), for one store per tensor made. (``requires_grad`` is the tensor's Autograd key bit: Note
[Autograd keys only on tensors that require grad].)
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, Final, cast, overload

from ..boxing import python_number
from ..vocabulary import (
    AUTOGRAD_KEYS,
    ArgumentError,
    DType,
    ArgumentOverflowError,
    ArgumentValueError,
    Device,
    DispatchKey,
    DispatchKeySet,
    MemoryFormat,
    OutOfMemoryError,
    PYTHON_TYPE_DTYPES,
    ScalarType,
    TensorError,
    UnsupportedError,
    autograd_key_for,
)
from ._messages import (
    ITERATE_SCALAR,
    LEN_OF_SCALAR,
    MT_NEEDS_MATRICES,
    EMPTY_TOO_BIG_FOR_NUMPY,
    GRAD_MISMATCH,
    GRAD_NOT_TENSOR,
    INT_OVERFLOW,
    OPERAND_OVERFLOW,
    SIZE_OVERFLOW,
    NO_AUTOGRAD,
    NON_LEAF_REQUIRES_GRAD,
    REQUIRES_GRAD_DTYPE,
    AMBIGUOUS_BOOL,
    AMBIGUOUS_BOOL_EMPTY,
    COMPLEX_TO_REAL,
    INF_TO_INTEGER_FIX,
    NAN_TO_INTEGER_FIX,
    NOT_AN_INDEX,
    NOT_AN_INTEGER,
    NOT_ONE_ELEMENT,
    NUMPY_REQUIRES_GRAD,
    BAD_NUMPY_STRIDES,
    DTYPE_FIX_ANY,
    DTYPE_FIX_NAMED,
    DTYPE_NOT_SCALAR_TYPE,
    NOT_RECTANGULAR,
    OUT_OF_MEMORY,
    READ_ONLY_WRITE,
    DATA_IFF_NOT_META,
    DATA_SHAPE_MISMATCH,
    IS_CONTIGUOUS_PRESERVE,
    NEGATIVE_DIMENSION,
    NO_DATA,
    NO_NUMPY_STORAGE,
    NOT_A_SCALAR,
    NOT_TENSOR_DATA,
    UNKNOWN_NUMPY_DTYPE,
    UNKNOWN_NUMPY_DTYPE_USE,
)
from ._indexing import Index, index_into, write_into
from ._storage import Storage
from ._strides import (
    contiguous_strides,
    is_channels_last_strides,
    is_contiguous_strides,
    numel_of,
    strides_for_format,
    wrap_dim,
)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["Tensor", "tensor", "array_of"]

_BACKEND_FOR_DEVICE: Final = {
    "cpu": DispatchKey.CPU,
    "meta": DispatchKey.Meta,
    "privateuseone": DispatchKey.PrivateUse1,
}

_NUMPY_NAMES: Final = {
    ScalarType.uint8: "uint8", ScalarType.int8: "int8", ScalarType.int16: "int16",
    ScalarType.int32: "int32", ScalarType.int64: "int64", ScalarType.float16: "float16",
    ScalarType.float32: "float32", ScalarType.float64: "float64",
    ScalarType.complex64: "complex64", ScalarType.complex128: "complex128",
    ScalarType.bool: "bool",
}  # fmt: skip
_FROM_NUMPY_NAME: Final = {v: k for k, v in _NUMPY_NAMES.items()}

_META: Final = Device.parse("meta")  # the canonical devices: Note [Canonical devices] in vocabulary
_INT64_MAX: Final = 2**63 - 1
_CPU: Final = Device.parse("cpu")
CPU: Final = _CPU  # the CPU device the hot constructors recognise by identity (_CPU_KEY_BITS)


def keys_for_device(device: Device) -> DispatchKeySet:
    """The keys a tensor on ``device`` carries while it does not require grad: its backend
    and ADInplaceOrView (Note [Autograd keys only on tensors that require grad])."""
    backend = _BACKEND_FOR_DEVICE[device.type]
    return DispatchKeySet((backend, DispatchKey.ADInplaceOrView))


# Note [Autograd keys only on tensors that require grad]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# A tensor carries its backend's Autograd key (AutogradCPU for a CPU tensor) only while it
# requires grad: ``requires_grad`` *is* that bit. Setting it sets the bit, and the autograd
# layer sets it on the results of recorded ops. So a call on tensors that do not require
# grad never reaches an autograd kernel: its key set has no Autograd key to dispatch to.
# (PyTorch gives every tensor the key and lets the autograd kernel find out that nothing
# requires grad; see docs/autograd.md for why typedops does not.)

# The key bits of a plain tensor, per device type: built once, read by every constructor.
DEVICE_KEY_BITS: Final = {kind: int(keys_for_device(Device(kind))) for kind in _BACKEND_FOR_DEVICE}
# A CPU tensor's bits, for the hot constructors: ``device is _CPU`` (the one ``Device("cpu")``
# that from_numpy and the kernels' results carry) is cheaper than ``DEVICE_KEY_BITS[device.type]``;
# another equal Device object takes the dict path and gets the same bits.
_CPU_KEY_BITS: Final = DEVICE_KEY_BITS["cpu"]
# The Autograd key bit a tensor on each device type gains when it requires grad.
AUTOGRAD_BIT_FOR_DEVICE: Final = {
    kind: 1 << autograd_key_for(backend) for kind, backend in _BACKEND_FOR_DEVICE.items()
}
AUTOGRAD_BITS: Final = sum(1 << k for k in AUTOGRAD_KEYS)

# Functions the autograd layer installs (it sits above this layer): name -> function.
AUTOGRAD_METHODS: Final[dict[str, Any]] = {}


def _autograd_method(name: str) -> Any:
    fn = AUTOGRAD_METHODS.get(name)
    if fn is None:
        raise TensorError(NO_AUTOGRAD.format(name=name))
    return fn


def set_requires_grad(t: Tensor, value: bool) -> None:
    """Set or clear ``t``'s Autograd key bit (Note [Autograd keys only on tensors that require grad])."""
    if value:
        if not (t._dtype.is_floating_point or t._dtype.is_complex):
            raise TensorError(REQUIRES_GRAD_DTYPE.format(dtype=t._dtype.name))
        t.key_bits |= AUTOGRAD_BIT_FOR_DEVICE[t._device.type]
    else:
        if t.grad_fn is not None:
            raise TensorError(NON_LEAF_REQUIRES_GRAD)
        t.key_bits &= ~AUTOGRAD_BITS

# Contiguous strides by shape, for wrapping results (see contiguous_strides_cached).
_CONTIGUOUS: dict[tuple[int, ...], tuple[int, ...]] = {}
_CONTIGUOUS_LIMIT: Final = 4096
# ``shape``'s contiguous strides if remembered, else None: one C call, for hot paths that
# test whether a tensor's strides are exactly the contiguous ones (clearing keeps the dict).
cached_contiguous_strides: Final = _CONTIGUOUS.get


def contiguous_strides_cached(shape: tuple[int, ...]) -> tuple[int, ...]:
    """``contiguous_strides(shape)``, remembered for up to 4096 shapes (then forgotten)."""
    strides = _CONTIGUOUS.get(shape)
    if strides is None:
        if len(_CONTIGUOUS) >= _CONTIGUOUS_LIMIT:
            _CONTIGUOUS.clear()
        strides = _CONTIGUOUS[shape] = contiguous_strides(shape)
    return strides


def backend_key_for_device(device: Device) -> DispatchKey:
    """The backend key that serves ``device`` (``cpu`` -> ``CPU``, ``meta`` -> ``Meta``)."""
    return _BACKEND_FOR_DEVICE[device.type]


if TYPE_CHECKING:
    # The generated core methods (x.add(y), x.where(c, y)) for the type checker only; at
    # run time typedops.core installs them. See Note [Typing what core installs] in
    # typedops/codegen/_stubs.py.
    from ._methods import TensorMethods as _TensorMethods
else:
    _TensorMethods = object


class Tensor(_TensorMethods):
    """An n-dimensional strided view of a storage, with a dtype, a device and dispatch keys.

    ``Tensor(array, dtype=..., shape=..., device=...)`` wraps a numpy array (or None on
    the meta device); ``Tensor.from_numpy`` shares an array's memory. Kernels make views
    with ``make_view`` and new tensors with ``empty_tensor``.
    """

    # key_bits is the dispatcher's view of the tensor: the bit mask of its keys (see
    # Note [Key priority] in vocabulary/_keys.py); .keys shows it as a DispatchKeySet.
    # _array and _array_buffer: Note [Cached numpy view]. __dict__: Note [Tensor fields
    # with class defaults].
    __slots__ = (
        "_storage", "_shape", "_strides", "_offset", "_dtype", "_device",
        "key_bits", "_array", "_array_buffer", "grad_fn", "__dict__",
    )  # fmt: skip

    # See Note [Tensor fields with class defaults].
    is_wrapped_number: bool = False
    _grad: Tensor | None = None  # read and written through the grad property
    _output_nr: int = 0  # which output of grad_fn this tensor is
    _autograd_meta: Any = None  # per-tensor autograd state, made by the autograd layer
    _batch_level: int | None = None  # the vmap level of a batching wrapper
    _batch_value: Tensor | None = None  # the tensor a batching wrapper holds

    # numpy defers to a Tensor beside its scalars and arrays (``np.float32(2) * x`` is
    # ``x.__rmul__``), as it does for torch's: without this it would take a Tensor, which
    # has a length and items, for a sequence and build an object array of its elements.
    __array_priority__ = 1000

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> npt.NDArray[Any]:
        """``np.asarray(x)``: ``x.numpy()`` (refused for a tensor that requires grad, as
        torch's), converted to ``dtype`` if given."""
        array = self.numpy()
        return array if dtype is None else array.astype(dtype, copy=False)

    # The operators call ops and return tensors, so == is not identity: hash by identity
    # as torch does (installing __eq__ later would not reset it, but say it here).
    __hash__ = object.__hash__  # pyright: ignore[reportAssignmentType] -- the generated __eq__ would set it to None

    def __getstate__(self) -> tuple[dict[str, Any] | None, dict[str, Any]]:
        """What copy, deepcopy and pickle keep: everything but the cached numpy view, which
        a copy rebuilds over its own storage (Note [Cached numpy view])."""
        storage_of(self)  # a copy's cached view is rebuilt from the storage
        slots = {name: getattr(self, name) for name in _STATE_SLOTS}
        slots["_array"] = slots["_array_buffer"] = None
        return (self.__dict__ or None), slots

    def __init__(
        self,
        data: npt.NDArray[Any] | None,
        *,
        dtype: ScalarType,
        shape: tuple[int, ...],
        device: Device,
        requires_grad: bool = False,
    ) -> None:
        if (data is None) != (device.type == "meta"):
            raise ArgumentValueError(DATA_IFF_NOT_META)
        numel = numel_of(shape)
        if data is not None:
            if tuple(data.shape) != tuple(shape):
                raise ArgumentValueError(DATA_SHAPE_MISMATCH.format(data_shape=tuple(data.shape), shape=shape))
            data = data.reshape(-1) if data.flags.c_contiguous else data.copy().reshape(-1)
        self._init(Storage(data, numel), shape, contiguous_strides(shape), 0, dtype, device)
        if requires_grad:
            self.requires_grad = True

    def _init(
        self,
        storage: Storage,
        shape: tuple[int, ...],
        strides: tuple[int, ...],
        offset: int,
        dtype: ScalarType,
        device: Device,
    ) -> None:
        self._storage: Storage | None = storage  # None: Note [Storage made on demand]
        self._shape = shape
        self._strides = strides
        self._offset = offset
        self._dtype = dtype
        self._device = device
        self.key_bits: int = DEVICE_KEY_BITS[device.type]
        self.grad_fn: Any = None  # a slot: Note [Tensor fields with class defaults]
        self._array: npt.NDArray[Any] | None = None
        self._array_buffer: npt.NDArray[Any] | None = None

    @classmethod
    def _from_parts(
        cls,
        storage: Storage,
        shape: tuple[int, ...],
        strides: tuple[int, ...],
        offset: int,
        dtype: ScalarType,
        device: Device,
    ) -> Tensor:
        t = cls.__new__(cls)
        t._init(storage, shape, strides, offset, dtype, device)
        return t

    @staticmethod
    def _from_array(array: npt.NDArray[Any], dtype: ScalarType, device: Device = _CPU) -> Tensor:
        """A new tensor owning ``array`` (no copy, no checks): Note [Wrap and unwrap].
        Its storage is made when first needed (Note [Storage made on demand])."""
        t = _new_tensor(Tensor)
        t._storage = None
        t._shape = shape = array.shape
        strides = _CONTIGUOUS.get(shape)  # not `or`: a 0-dim tensor's strides () are falsy
        t._strides = strides if strides is not None else contiguous_strides_cached(shape)
        t._offset = 0
        t._dtype = dtype
        t._device = device
        t.key_bits = _CPU_KEY_BITS if device is _CPU else DEVICE_KEY_BITS[device.type]
        t.grad_fn = None
        t._array = array  # _array_buffer is set with the storage: Note [Storage made on demand]
        return t

    @staticmethod
    def _from_array0(array: npt.NDArray[Any], dtype: ScalarType, device: Device = _CPU) -> Tensor:
        """``_from_array`` for a 0-dim ``array`` (a full reduction's result), without reading
        its shape or looking up its strides: both are ``()``."""
        t = _new_tensor(Tensor)
        t._storage = None
        t._shape = t._strides = ()
        t._offset = 0
        t._dtype = dtype
        t._device = device
        t.key_bits = _CPU_KEY_BITS if device is _CPU else DEVICE_KEY_BITS[device.type]
        t.grad_fn = None
        t._array = array
        return t

    @classmethod
    def from_numpy(cls, array: npt.NDArray[Any]) -> Tensor:
        """A CPU tensor sharing ``array``'s memory (and its strides)."""
        import numpy as np

        dtype = _FROM_NUMPY_NAME.get(array.dtype.name)
        if dtype is None:
            known = ", ".join(sorted(_FROM_NUMPY_NAME))
            raise ArgumentError(UNKNOWN_NUMPY_DTYPE_USE.format(name=array.dtype.name, known=known))
        itemsize = array.itemsize
        if any(s < 0 or s % itemsize for s in array.strides):
            raise ArgumentValueError(BAD_NUMPY_STRIDES.format(strides=array.strides))
        shape = tuple(int(n) for n in array.shape)
        strides = tuple(int(s) // itemsize for s in array.strides)
        span = 0 if 0 in shape else 1 + sum((n - 1) * s for n, s in zip(shape, strides))
        flat = np.lib.stride_tricks.as_strided(array, shape=(span,), strides=(itemsize,))
        return cls._from_parts(Storage(flat, span), shape, strides, 0, dtype, _CPU)

    # -- autograd (the autograd layer installs what it does: AUTOGRAD_METHODS) ------------
    @property
    def requires_grad(self) -> bool:
        """Whether gradients are recorded for this tensor: its Autograd key bit."""
        return self.key_bits & AUTOGRAD_BITS != 0

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        set_requires_grad(self, value)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        set_requires_grad(self, requires_grad)
        return self

    @property
    def grad(self) -> Tensor | None:
        """The gradient backward() accumulated into this tensor, or None."""
        return self._grad

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        if value is not None:
            check_grad(self, value)
        self._grad = value

    @property
    def is_leaf(self) -> bool:
        """True for tensors no recorded op made (grad_fn is None)."""
        return self.grad_fn is None

    def backward(
        self,
        gradient: Tensor | None = None,
        retain_graph: bool | None = None,
        create_graph: bool = False,
        inputs: Tensor | Sequence[Tensor] | None = None,
    ) -> None:
        """Accumulate the gradients of this tensor into the ``.grad`` of the leaves it depends
        on (of ``inputs`` only, when given)."""
        _autograd_method("backward")(self, gradient, retain_graph, create_graph, inputs)

    def detach(self) -> Tensor:
        """A view of the same data that does not require grad and has no history."""
        result: Tensor = _autograd_method("detach")(self)
        return result

    def retain_grad(self) -> None:
        """Keep this non-leaf tensor's gradient in ``.grad`` during backward."""
        _autograd_method("retain_grad")(self)

    @property
    def retains_grad(self) -> bool:
        """Whether ``retain_grad()`` was called on this non-leaf tensor."""
        return bool(getattr(self._autograd_meta, "retains_grad", False))

    def register_hook(self, hook: Any) -> Any:
        """Call ``hook(grad)`` with this tensor's gradient; a returned tensor replaces it."""
        return _autograd_method("register_hook")(self, hook)

    # -- what the dispatcher and users read -----------------------------------------------
    @property
    def keys(self) -> DispatchKeySet:
        """The dispatch keys this tensor contributes to every call it is passed to."""
        return DispatchKeySet.from_bits(self.key_bits)

    @property
    def dtype(self) -> ScalarType:
        return self._dtype

    @property
    def shape(self) -> tuple[int, ...]:
        return self._shape

    @property
    def device(self) -> Device:
        return self._device

    @property
    def ndim(self) -> int:
        return len(self._shape)

    def dim(self) -> int:
        return len(self._shape)

    def numel(self) -> int:
        return numel_of(self._shape)

    def __getitem__(self, index: Index) -> Tensor:
        """A view of the elements ``index`` picks (Note [Basic indexing] in _indexing.py)."""
        return index_into(self, index, Tensor)

    def __setitem__(self, index: Index, value: Tensor | complex | np.number[Any] | np.bool_) -> None:
        """Write ``value`` into the elements ``index`` picks (Note [Basic indexing])."""
        write_into(self, index, value, Tensor)

    # Note [Tensors as sequences]
    # ~~~~~~~~~~~~~~~~~~~~~~~~~~~~
    # As torch's: ``len(x)`` is the size of dim 0, iterating gives the views ``x.select(0,
    # i)``, ``reversed(x)`` is ``x.flip(0)`` (a copy), ``x.T`` reverses the dims (a 2-D
    # tensor's transpose) and ``x.mT`` swaps the last two; a 0-dim tensor has no length and
    # no items. The views come from the core ops (``select``, ``permute``, ``transpose``),
    # so autograd, vmap and traces see them.
    def __len__(self) -> int:
        if not self._shape:
            raise ArgumentError(LEN_OF_SCALAR)
        return self._shape[0]

    def __iter__(self) -> Iterator[Tensor]:
        if not self._shape:
            raise ArgumentError(ITERATE_SCALAR)
        return (self.select(0, i) for i in range(self._shape[0]))

    def __reversed__(self) -> Tensor:
        """The rows in reverse order, ``x.flip(0)`` (a 0-dim tensor itself), as torch's."""
        return self.flip([0]) if self._shape else self

    @property
    def T(self) -> Tensor:
        """The dims reversed (Note [Tensors as sequences])."""
        return self.permute(list(range(len(self._shape) - 1, -1, -1)))

    @property
    def mT(self) -> Tensor:
        """The last two dims swapped: a batch of matrices transposed (Note [Tensors as
        sequences]); a 0-dim tensor's is a view of it, as torch's, a 1-dim one's an error."""
        if len(self._shape) < 2:
            if self._shape:
                raise TensorError(MT_NEEDS_MATRICES.format(ndim=len(self._shape)))
            return self.permute([])
        return self.transpose(-2, -1)

    @property
    def is_meta(self) -> bool:
        storage = self._storage
        return storage is not None and storage.buffer is None

    # -- layout -------------------------------------------------------------------------
    @overload
    def size(self, dim: None = None) -> tuple[int, ...]: ...
    @overload
    def size(self, dim: int) -> int: ...
    def size(self, dim: int | None = None) -> tuple[int, ...] | int:
        """The shape, or the size of one dimension."""
        return self._shape if dim is None else self._shape[wrap_dim(dim, self.ndim)]

    @overload
    def stride(self, dim: None = None) -> tuple[int, ...]: ...
    @overload
    def stride(self, dim: int) -> int: ...
    def stride(self, dim: int | None = None) -> tuple[int, ...] | int:
        """The strides in elements, or the stride of one dimension."""
        return self._strides if dim is None else self._strides[wrap_dim(dim, self.ndim)]

    def storage_offset(self) -> int:
        return self._offset

    @property
    def storage(self) -> Storage:
        """The storage this tensor views (shared with every view of it)."""
        return storage_of(self)

    def is_contiguous(self, memory_format: MemoryFormat = MemoryFormat.contiguous_format) -> bool:
        """Whether the elements are dense in ``memory_format``'s order (size-1 dims ignored)."""
        if memory_format is MemoryFormat.contiguous_format:
            return is_contiguous_strides(self._shape, self._strides)
        if memory_format is MemoryFormat.preserve_format:
            raise ArgumentValueError(IS_CONTIGUOUS_PRESERVE)
        return is_channels_last_strides(self._shape, self._strides, memory_format)

    @property
    def _version(self) -> int:
        """Bumped by every in-place op on this tensor or any view of its storage."""
        storage = self._storage
        return 0 if storage is None else storage.version

    # -- data ---------------------------------------------------------------------------
    # Note [Cached numpy view]
    # ~~~~~~~~~~~~~~~~~~~~~~~~
    # A tensor keeps the numpy array that views its elements in ``_array``, made on first
    # use (or handed over by ``_from_array``), with the storage buffer it was made from in
    # ``_array_buffer``. The array shares the storage's memory, so writes through any
    # view of the storage show in it. It is stale only when
    # - the storage's buffer was replaced (``resize_`` growing a storage): every tensor
    #   on that storage then sees ``_array_buffer is not storage.buffer`` and rebuilds; or
    # - the tensor's own geometry changed (``resize_``), which clears its ``_array``.
    # Nothing else changes a tensor's shape, strides or offset after it is made.
    # ``numpy()`` hands users a new array object over the same memory, so setting
    # ``.shape`` on what it returns cannot corrupt the cache.
    def _fresh_array(self) -> npt.NDArray[Any]:
        """Build, cache and return the numpy view of this tensor (Note [Cached numpy view])."""
        storage = storage_of(self)
        buffer = storage.buffer
        if buffer is None:
            raise TensorError(NO_DATA)
        import numpy as np

        shape, offset = self._shape, self._offset
        if offset == 0 and buffer.shape == shape and is_contiguous_strides(shape, self._strides):
            array = buffer  # a tensor over its whole storage
        else:
            flat = storage.data
            assert flat is not None
            itemsize = flat.itemsize
            if numel_of(shape) == 0:
                check_numpy_holds(shape, itemsize)  # an expanded empty tensor may be too big
                array = flat[:0].reshape(shape)
            else:
                strides = tuple(s * itemsize for s in self._strides)
                array = np.ndarray(shape, flat.dtype, flat, offset * itemsize, strides)
        self._array = array
        self._array_buffer = buffer
        return array

    # Note [numpy() of a tensor that requires grad]
    # ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
    # As torch's, ``numpy()`` refuses a tensor that requires grad while grad mode is on:
    # the array's memory is the tensor's, and what is computed from it escapes autograd.
    # ``detach().numpy()`` says the user knows; so does ``numpy(force=True)``, and so does
    # ``no_grad()``. Grad mode lives in the autograd layer, above this one: it installs
    # ``is_grad_enabled`` in AUTOGRAD_METHODS (without it, grad mode is on). The test costs
    # a tensor that does not require grad one bit test.
    def numpy(self, *, force: bool = False) -> npt.NDArray[Any]:
        """The elements as a numpy array sharing this tensor's memory (writes show through).
        Refused for a tensor that requires grad (Note [numpy() of a tensor that requires
        grad]) unless ``force`` is True."""
        if self.key_bits & AUTOGRAD_BITS and not force:
            enabled = AUTOGRAD_METHODS.get("is_grad_enabled")
            if enabled is None or enabled():
                raise TensorError(NUMPY_REQUIRES_GRAD)
        view: npt.NDArray[Any] = array_of(self).view()
        return view

    def tolist(self) -> Any:
        return array_of(self).tolist()

    def item(self) -> Any:
        """The one element of a one-element tensor, as a Python number."""
        if self.numel() != 1:
            raise TensorError(NOT_A_SCALAR.format(numel=self.numel()))
        return array_of(self).reshape(()).item()

    def __bool__(self) -> bool:
        """The truth of a one-element tensor (``if a == b:`` needs it, as in torch)."""
        numel = self.numel()
        if numel != 1:
            raise TensorError(AMBIGUOUS_BOOL_EMPTY if numel == 0 else AMBIGUOUS_BOOL)
        return bool(self.item())

    # Python's number conversions of a one-element tensor, as torch's: float(), int() and
    # complex() take any dtype (a complex value only with a zero imaginary part for the
    # first two; int() truncates toward zero), operator.index() (``range(t)``,
    # ``items[t]``) integer and bool tensors only.
    def _one_value(self) -> Any:
        numel = self.numel()
        if numel != 1:
            raise ArgumentValueError(NOT_ONE_ELEMENT.format(numel=numel))
        return self.item()

    def __float__(self) -> float:
        return float(_real_value(self._one_value(), "double"))

    def __int__(self) -> int:
        value = _real_value(self._one_value(), "int64_t")
        if isinstance(value, float) and not math.isfinite(value):
            if math.isnan(value):
                raise ArgumentValueError(NOT_AN_INTEGER.format(value="NaN", fix=NAN_TO_INTEGER_FIX))
            raise ArgumentOverflowError(NOT_AN_INTEGER.format(value="infinity", fix=INF_TO_INTEGER_FIX))
        return int(value)

    def __complex__(self) -> complex:
        return complex(self._one_value())

    def __index__(self) -> int:
        dtype = self._dtype
        if dtype.is_floating_point or dtype.is_complex or self.numel() != 1:
            raise ArgumentError(NOT_AN_INDEX.format(dtype=dtype.name, numel=self.numel()))
        return int(self.item())

    def __format__(self, format_spec: str) -> str:
        """A 0-dim tensor formats as its value (``f"{loss:.3f}"``), as PyTorch's does; any
        other tensor only with an empty spec (its repr), else Python's TypeError."""
        if not self._shape and self._device.type != "meta" and type(self) is Tensor:
            return format(self.item(), format_spec)
        return object.__format__(self, format_spec)

    def __repr__(self) -> str:
        grad = ""
        if self.grad_fn is not None:
            grad = f", grad_fn=<{self.grad_fn.name()}>"
        elif self.requires_grad:
            grad = ", requires_grad=True"
        if self.is_meta:
            return f"tensor(..., shape={self._shape}, dtype={self._dtype.name}, device='meta'{grad})"
        return f"tensor({array_of(self).tolist()!r}, dtype={self._dtype.name}{grad})"


def _real_value(value: Any, target: str) -> Any:
    """A one-element tensor's ``value`` as a real number for ``float()`` or ``int()``
    (``target`` names the type in the message): a complex value's real part when its
    imaginary part is zero, as torch converts it."""
    if isinstance(value, complex):
        if value.imag:
            raise TensorError(COMPLEX_TO_REAL.format(type=target, value=value))
        return value.real
    return value


_STATE_SLOTS: Final = tuple(n for n in Tensor.__slots__ if n not in ("_array", "_array_buffer", "__dict__"))
_new_tensor: Final = object.__new__
_new_storage: Final = object.__new__


# Note [Storage made on demand]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# A tensor made by ``_from_array`` owns its array alone: nothing else can see its memory
# yet, its version is 0, and its cached view is the array itself. So it has no Storage
# object (``_storage is None``) until something needs one -- a view of it, an in-place
# write, ``.storage``, ``resize_``, a copy -- and ``storage_of`` then makes it, with the
# array as its buffer. Most results of small ops are used and dropped without that, and
# a Storage per result is a tenth of such an op's cost. Code in this module reads
# ``_storage`` through ``storage_of`` wherever it may be None. Such a tensor's
# ``_array_buffer`` slot is not set either (one store less per result): it is read only
# where ``_storage`` is not None, and ``storage_of`` sets it with the storage.
def storage_of(t: Tensor) -> Storage:
    """``t``'s storage, made now if ``t`` has none yet (Note [Storage made on demand])."""
    storage = t._storage
    if storage is None:
        array = t._array
        assert array is not None, "a tensor without a storage owns its array"
        storage = t._storage = _new_storage(Storage)
        storage.buffer = t._array_buffer = array
        storage._flat = None
        storage.size = array.size
        storage.version = 0
    return storage


def alias_of(t: Tensor) -> Tensor:
    """A new tensor over ``t``'s elements: the same storage (made now if ``t`` had none) and
    so the same version counter, the same cached numpy view, no history and no Autograd
    key. Autograd saves an op's output as one (Note [Saved outputs without a cycle] in
    typedops/autograd/_graph.py)."""
    storage = t._storage if t._array is None else storage_of(t)
    alias = _new_tensor(Tensor)
    alias._storage = storage
    alias._shape = t._shape
    alias._strides = t._strides
    alias._offset = t._offset
    alias._dtype = t._dtype
    alias._device = t._device
    alias.key_bits = t.key_bits & ~AUTOGRAD_BITS
    alias.grad_fn = None
    alias._array = t._array
    alias._array_buffer = t._array_buffer
    return alias


def array_of(t: Tensor) -> npt.NDArray[Any]:
    """``t``'s elements as its cached numpy view: Note [Wrap and unwrap] (kernels only;
    users call ``t.numpy()``). Raises ``RuntimeError`` for a meta tensor."""
    array = t._array
    if array is None:
        return t._fresh_array()
    storage = t._storage
    if storage is not None and t._array_buffer is not storage.buffer:
        return t._fresh_array()
    return array


# -- helpers for kernels -------------------------------------------------------------------
# The numpy dtype objects by ScalarType, each made on its first use (``import typedops``
# skips numpy): a dict lookup, where ``np.dtype(name)`` costs about 0.3 us a call.
_NUMPY_DTYPES: Final[dict[ScalarType, np.dtype[Any]]] = {}


def numpy_dtype(dtype: ScalarType) -> np.dtype[Any]:
    """The numpy dtype that stores ``dtype`` (bfloat16 has none)."""
    found = _NUMPY_DTYPES.get(dtype)
    return found if found is not None else _numpy_dtype_made(dtype)


def _numpy_dtype_made(dtype: ScalarType) -> np.dtype[Any]:
    import numpy as np

    name = _NUMPY_NAMES.get(dtype)
    if name is None:
        raise ArgumentError(NO_NUMPY_STORAGE.format(dtype=dtype.name))
    made = _NUMPY_DTYPES[dtype] = np.dtype(name)
    return made


def scalar_type_of(array: npt.NDArray[Any]) -> ScalarType:
    """The ScalarType that stores numpy ``array``'s dtype."""
    dtype = _FROM_NUMPY_NAME.get(array.dtype.name)
    if dtype is None:
        raise ArgumentError(UNKNOWN_NUMPY_DTYPE.format(name=array.dtype.name))
    return dtype


def empty_tensor(
    shape: Sequence[int],
    dtype: ScalarType,
    device: Device,
    memory_format: MemoryFormat = MemoryFormat.contiguous_format,
    dense_strides: Sequence[int] | None = None,
) -> Tensor:
    """A new tensor with uninitialized (zeroed, on CPU) data laid out in ``memory_format``,
    or with ``dense_strides`` (strides that fill exactly ``numel`` elements, as a
    non-overlapping and dense tensor's do: ``is_non_overlapping_and_dense``)."""
    size = tuple(int(n) for n in shape)
    for n in size:
        if n < 0:
            raise TensorError(NEGATIVE_DIMENSION.format(n=n, size=list(size)))
    strides = strides_for_format(size, memory_format) if dense_strides is None else tuple(dense_strides)
    numel = numel_of(size)
    if numel * dtype.itemsize > _INT64_MAX or any(n > _INT64_MAX for n in size):  # as PyTorch, meta tensors too
        raise TensorError(SIZE_OVERFLOW.format(size=list(size)))
    data = None
    if device.type != "meta":
        if not numel:
            check_numpy_holds(size, dtype.itemsize)
        import numpy as np

        np_dtype = numpy_dtype(dtype)
        try:
            data = np.zeros(numel, dtype=np_dtype)
        except MemoryError:
            nbytes = numel * np_dtype.itemsize
            raise OutOfMemoryError(OUT_OF_MEMORY.format(size=list(size), dtype=dtype.name, nbytes=nbytes)) from None
    return Tensor._from_parts(Storage(data, numel), size, strides, 0, dtype, device)


def check_numpy_holds(shape: Sequence[int], itemsize: int) -> None:
    """Refuse an empty shape numpy cannot make: it multiplies the non-zero sizes by the
    element size and refuses a product beyond int64 (``zeros([2**62, 0])``), with a bare
    ValueError; PyTorch makes such a tensor. Only shapes without elements get here."""
    nbytes = itemsize
    for n in shape:
        nbytes *= n or 1
    if nbytes > _INT64_MAX:
        raise UnsupportedError(EMPTY_TOO_BIG_FOR_NUMPY.format(shape=list(shape), nbytes=nbytes))


def empty_meta(shape: Sequence[int], dtype: ScalarType) -> Tensor:
    """A meta tensor of the given shape and dtype."""
    return empty_tensor(shape, dtype, _META)


def check_grad(self: Tensor, grad: Any) -> None:
    """Refuse a ``.grad`` that is not a tensor of ``self``'s shape, dtype and device, as torch does."""
    if not isinstance(grad, Tensor):
        raise ArgumentError(GRAD_NOT_TENSOR.format(type=type(grad).__name__))
    if grad._shape == self._shape and grad._dtype is self._dtype and grad._device is self._device:
        return  # the common case (every accumulation of backward), without the texts below
    for what, got, expected in (
        ("size", list(grad._shape), list(self._shape)),
        ("dtype", grad._dtype.name, self._dtype.name),
        ("device", str(grad._device), str(self._device)),
    ):
        if got != expected:
            raise TensorError(GRAD_MISMATCH.format(what=what, got=got, expected=expected))


def wrap_array(array: npt.NDArray[Any], dtype: ScalarType | None = None, device: Device = _CPU) -> Tensor:
    """A new contiguous tensor holding ``array``'s values (cast to ``dtype`` if given)."""
    import numpy as np

    target = numpy_dtype(dtype) if dtype is not None else array.dtype
    flat = np.array(array, dtype=target, order="C", copy=True).reshape(-1)
    shape = tuple(int(n) for n in np.shape(array))
    chosen = dtype if dtype is not None else scalar_type_of(flat)
    return Tensor._from_parts(Storage(flat, flat.size), shape, contiguous_strides(shape), 0, chosen, device)


def make_view(self: Tensor, shape: Sequence[int], strides: Sequence[int], offset: int) -> Tensor:
    """A view of ``self``'s storage with its own shape, strides and storage offset.
    (``view_with`` below sets the same fields: keep the two in step.)"""
    view = _new_tensor(Tensor)
    storage = self._storage
    view._storage = storage if storage is not None else storage_of(self)
    view._shape = shape if type(shape) is tuple else tuple(shape)
    view._strides = strides if type(strides) is tuple else tuple(strides)
    view._offset = offset
    view._dtype = self._dtype
    view._device = device = self._device
    view.key_bits = _CPU_KEY_BITS if device is _CPU else DEVICE_KEY_BITS[device.type]
    view.grad_fn = None
    view._array = None
    view._array_buffer = None
    return view


def view_with(self: Tensor, shape: tuple[int, ...], strides: tuple[int, ...]) -> Tensor:
    """``make_view(self, shape, strides, self.storage_offset())`` for a shape and strides
    that are tuples already (the view kernels' cached geometry: Note [View geometry caches]
    in typedops/core/kernels/_views.py), without converting them: ~20 ns less a view."""
    view = _new_tensor(Tensor)
    storage = self._storage
    view._storage = storage if storage is not None else storage_of(self)
    view._shape = shape
    view._strides = strides
    view._offset = self._offset
    view._dtype = self._dtype
    view._device = device = self._device
    view.key_bits = _CPU_KEY_BITS if device is _CPU else DEVICE_KEY_BITS[device.type]
    view.grad_fn = None
    view._array = None
    view._array_buffer = None
    return view


def read_only_error(written: Sequence[Tensor], op: str) -> TensorError | None:
    """The error for a call of ``op`` whose write failed, when one of the ``written``
    tensors' memory is read-only (``Tensor.from_numpy`` of a read-only array); else None."""
    for t in written:
        storage = t._storage
        buffer = None if storage is None else storage.buffer
        if buffer is not None and not buffer.flags.writeable:
            return TensorError(READ_ONLY_WRITE.format(op=op))
    return None


def bump_version(self: Tensor) -> None:
    """Record an in-place write to ``self`` (seen by every view: Note [Shared version counter])."""
    storage_of(self).version += 1


def resize_(self: Tensor, shape: Sequence[int]) -> None:
    """Give ``self`` a new contiguous shape, growing its storage if it is too small."""
    size = tuple(int(n) for n in shape)
    if size == self._shape:
        return
    numel = numel_of(size)
    needed = self._offset + numel
    storage = storage_of(self)
    self._array = None  # its geometry changes (Note [Cached numpy view])
    if needed > storage.size:
        if storage.data is not None:
            import numpy as np

            grown = np.zeros(needed, dtype=storage.data.dtype)
            grown[: storage.size] = storage.data
            storage.data = grown
        storage.size = needed
    self._shape = size
    self._strides = contiguous_strides(size)


def adopt_geometry(self: Tensor, view: Tensor) -> None:
    """Give ``self`` the shape, strides and storage offset of ``view``, a view of the same
    storage (an in-place or ``out=`` op ran on ``view`` standing for ``self``)."""
    if view._storage is not storage_of(self):
        raise AssertionError("adopt_geometry: not a view of the same storage")
    if (view._shape, view._strides, view._offset) != (self._shape, self._strides, self._offset):
        self._array = None  # its geometry changes (Note [Cached numpy view])
        self._shape, self._strides, self._offset = view._shape, view._strides, view._offset


# Note [Wrapped numbers on the fast path]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# Every Python number passed as ``Scalar`` (``a + 2.0``, ``add.Scalar``) is wrapped, so
# ``wrapped_scalar`` is on the hot path of such calls. A bool, int, float or complex
# (exactly those types) for the CPU device takes one dict lookup by ``type(value)`` for
# its ScalarType and numpy dtype, ``numpy.array`` and the ``_from_array0`` stores inline;
# the table is filled by the first call (numpy is imported only inside functions). Any
# other number (a subclass: ``numpy.float64`` is a float, an IntEnum is an int) or device
# takes ``_wrapped_scalar_any``, the same result by isinstance tests. Marking the tensor
# writes its ``is_wrapped_number`` default (Note [Tensor fields with class defaults]):
# that makes its ``__dict__``, about 10 ns.
_WRAPPED_KINDS: Final[dict[type, tuple[ScalarType, np.dtype[Any]]]] = {}
_np_array: Any = None  # numpy.array, bound with _WRAPPED_KINDS


def wrapped_scalar(value: complex, device: Device) -> Tensor:
    """A 0-dim tensor for a Python number passed as ``Scalar``, marked as a *wrapped
    number*: it holds the exact value (float64, complex128 or int64) but takes part in
    type promotion as the default dtype of its kind (float32, complex64), as in PyTorch.
    See Note [Wrapped numbers on the fast path]."""
    kind = _WRAPPED_KINDS.get(type(value))
    if kind is None or device is not _CPU:
        return _wrapped_scalar_any(value, device)
    dtype, np_dtype = kind
    try:
        array = _np_array(value, np_dtype)
    except OverflowError:  # an int beyond int64 (an entry names its op: Note [Ints too large for their argument])
        raise ArgumentOverflowError(OPERAND_OVERFLOW.format(bits=cast(int, value).bit_length())) from None
    t = _new_tensor(Tensor)  # Tensor._from_array0(array, dtype), inline
    t._storage = None
    t._shape = t._strides = ()
    t._offset = 0
    t._dtype = dtype
    t._device = _CPU
    t.key_bits = _CPU_KEY_BITS
    t.grad_fn = None
    t._array = array
    t.is_wrapped_number = True
    return t


def _wrapped_scalar_any(value: complex, device: Device) -> Tensor:
    """``wrapped_scalar`` for any number and device; fills ``_WRAPPED_KINDS``."""
    global _np_array
    import numpy as np

    if not _WRAPPED_KINDS:
        _np_array = np.array
        for kind, scalar_type in ((bool, ScalarType.bool), (int, ScalarType.int64),
                                  (float, ScalarType.float64), (complex, ScalarType.complex128)):  # fmt: skip
            _WRAPPED_KINDS[kind] = (scalar_type, numpy_dtype(scalar_type))
    value = python_number(value)  # np.float32(2): the Python number it holds (Note [Numbers that are not Python's])
    if isinstance(value, bool):
        dtype = ScalarType.bool
    elif isinstance(value, int):
        dtype = ScalarType.int64
    elif isinstance(value, float):
        dtype = ScalarType.float64
    else:
        dtype = ScalarType.complex128
    if device.type == "meta":
        if dtype is ScalarType.int64 and not -_INT64_MAX - 1 <= cast(int, value) <= _INT64_MAX:
            raise ArgumentOverflowError(OPERAND_OVERFLOW.format(bits=cast(int, value).bit_length()))
        t = empty_meta((), dtype)
    else:
        try:
            array = np.array(value, dtype=numpy_dtype(dtype))
        except OverflowError:  # as in wrapped_scalar
            raise ArgumentOverflowError(OPERAND_OVERFLOW.format(bits=cast(int, value).bit_length())) from None
        t = Tensor._from_array(array, dtype, device)
    t.is_wrapped_number = True
    return t


def _not_a_scalar_type(dtype: object) -> str:
    """``DTYPE_NOT_SCALAR_TYPE`` for ``dtype``, naming the member it means when there is one."""
    import numpy as np

    if isinstance(dtype, str):
        got, name = f"the str {dtype!r}", dtype
    else:
        try:
            name = np.dtype(cast(Any, dtype)).name
            got = f"numpy dtype {name!r}"
        except TypeError:
            got, name = f"a {type(dtype).__name__}", ""
    fix = DTYPE_FIX_NAMED.format(name=name) if name in ScalarType.__members__ else DTYPE_FIX_ANY
    return DTYPE_NOT_SCALAR_TYPE.format(got=got, fix=fix)


def _check_int_range(data: Any) -> None:
    """Refuse a Python int beyond int64 in ``data`` (numpy made it an object array)."""
    stack: list[object] = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, (list, tuple)):
            stack.extend(cast("list[object] | tuple[object, ...]", item))
        elif type(item) is int and not -_INT64_MAX - 1 <= item <= _INT64_MAX:
            # str() of an int stops at 4,300 digits (a ValueError): a long one is shown by its size
            shown = item if item.bit_length() <= 80 else f"an int of {item.bit_length()} bits"
            raise TensorError(INT_OVERFLOW.format(value=shown))


def tensor(
    data: Any,
    *,
    dtype: DType | None = None,
    device: str | Device = "cpu",
    requires_grad: bool = False,
) -> Tensor:
    """A tensor from nested sequences, a number, a numpy array or another tensor's data.

    ``dtype`` defaults to int64 for integers, bool for bools, float32 for floats and
    complex64 for complex numbers, as in PyTorch; a numpy array or scalar, or a tensor,
    keeps its own dtype (if typedops has it). On ``device="meta"`` only the shape and
    dtype are kept. ``dtype`` is a ``ScalarType`` or one of Python's number types
    (``float`` is float64, as in torch): a string or a numpy dtype is refused
    with ``ArgumentError`` naming the member to pass, as torch.tensor refuses them.
    """
    import numpy as np

    given = cast(object, dtype)  # a caller without a type checker may pass anything
    if type(given) is type:  # dtype=float: Note [Python types as dtypes] in vocabulary/_dtypes.py
        given = PYTHON_TYPE_DTYPES.get(given, given)
    if given is not None and not isinstance(given, ScalarType):
        raise ArgumentError(_not_a_scalar_type(given))
    dtype = given
    dev = Device.parse(device)
    if isinstance(data, Tensor):
        data = array_of(data)
    try:
        array = np.asarray(data)
    except ValueError:
        if not isinstance(data, (list, tuple)):
            raise
        raise ArgumentValueError(NOT_RECTANGULAR) from None
    if array.dtype.kind == "u" and array.size and int(array.max()) > _INT64_MAX:
        raise TensorError(INT_OVERFLOW.format(value=int(array.max())))  # numpy chose uint64
    if array.dtype.kind == "O":
        _check_int_range(data)
    if dtype is None:
        # numpy arrays and scalars (and tensors) keep their dtype, as torch.tensor's do;
        # Python data, and numpy dtypes typedops lacks (uint16...), take the default of their kind.
        from_numpy: bool = isinstance(data, (np.ndarray, np.generic))
        kept = _FROM_NUMPY_NAME.get(array.dtype.name) if from_numpy else None
        kind = array.dtype.kind
        inferred = kept or {"b": ScalarType.bool, "i": ScalarType.int64, "u": ScalarType.int64,
                            "f": ScalarType.float32, "c": ScalarType.complex64}.get(kind)  # fmt: skip
        if inferred is None:
            raise ArgumentError(NOT_TENSOR_DATA.format(kind_name=type(data).__name__, kind=kind))
        dtype = inferred
    shape = tuple(int(s) for s in array.shape)
    result = empty_tensor(shape, dtype, dev) if dev.type == "meta" else wrap_array(array, dtype, dev)
    if requires_grad:
        set_requires_grad(result, True)
    return result
