"""``BatchedTensor``: one sample's view of a tensor that holds a whole batch.

Note [Batched tensors]
~~~~~~~~~~~~~~~~~~~~~~
Inside ``vmap(f)``, ``f`` sees each batched argument as a ``BatchedTensor``: a ``Tensor``
whose shape, strides and dtype are one sample's (the *logical* tensor), holding the
*physical* tensor (the whole batch, in ``_batch_value``), the dimension of the physical
tensor that runs over the batch (``_batch_dim``) and its vmap level (``_batch_level``,
Note [Levels] in _levels.py). These are the class-level fields Tensor reserves for
batching (Note [Tensor fields with class defaults] in tensor/_tensor.py), made slots
here: a plain tensor reads ``_batch_level`` as the class default None, a batched one
from its slot.

Its key set is the physical tensor's plus ``Batched``, the highest-priority key, so every
op called with one meets the batching layer first: a rule or the fallback unwraps the
physical tensors, calls the op on them, and wraps the result. Autograd therefore records
on the physical tensors. The physical tensor may itself be batched at a lower level
(nested vmap). Making one is a handful of attribute stores; unwrapping is two loads.

A batched tensor has no data of its own: reading it (``numpy()``, ``item()``, ``bool()``,
a kernel's ``array_of``) raises PyTorch's vmap errors instead of returning the batch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final, NoReturn

from ..dispatch import DispatchKey
from ..tensor import Tensor
from ._levels import RUNNING
from ._messages import CONTROL_FLOW, DATA_ACCESS, ESCAPED, ITEM, VmapError

if TYPE_CHECKING:
    import numpy.typing as npt

    from ..tensor import Storage

__all__ = ["BatchedTensor", "BATCHED_BIT", "make_batched", "is_batched", "batched_at", "live_level", "escaped"]

BATCHED_BIT: Final = 1 << DispatchKey.Batched
_new: Final = object.__new__


class BatchedTensor(Tensor):
    """A sample of a batch inside ``vmap``: Note [Batched tensors]."""

    __slots__ = ("_batch_level", "_batch_value", "_batch_dim")  # pyright: ignore[reportIncompatibleVariableOverride] -- see below

    # Set by make_batched. A batched tensor always has a level and a value: the slots
    # narrow Tensor's class defaults (None for plain tensors) on purpose.
    _batch_level: int  # pyright: ignore[reportIncompatibleVariableOverride] -- narrowed on purpose
    _batch_value: Tensor  # pyright: ignore[reportIncompatibleVariableOverride] -- narrowed on purpose
    _batch_dim: int

    # -- no data of its own --------------------------------------------------------------
    def _fresh_array(self) -> npt.NDArray[Any]:
        raise VmapError(DATA_ACCESS.format(what="a kernel"))

    def numpy(self, *, force: bool = False) -> npt.NDArray[Any]:
        raise VmapError(DATA_ACCESS.format(what="numpy()"))

    def tolist(self) -> Any:
        raise VmapError(DATA_ACCESS.format(what="tolist()"))

    def item(self) -> Any:
        raise VmapError(ITEM)

    def __bool__(self) -> bool:
        raise VmapError(CONTROL_FLOW)

    @property
    def storage(self) -> Storage:
        raise VmapError(DATA_ACCESS.format(what="storage"))

    @property
    def is_meta(self) -> bool:
        return self._batch_value.is_meta

    @property
    def _version(self) -> int:
        return self._batch_value._version

    @property
    def requires_grad(self) -> bool:
        return self._batch_value.requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        self._batch_value.requires_grad = value
        self.key_bits = self._batch_value.key_bits | BATCHED_BIT

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        self.requires_grad = requires_grad
        return self

    def detach(self) -> Tensor:
        return make_batched(self._batch_value.detach(), self._batch_dim, self._batch_level)

    def __repr__(self) -> str:
        return f"BatchedTensor(lvl={self._batch_level}, bdim={self._batch_dim}, value={self._batch_value!r})"


def make_batched(physical: Tensor, bdim: int, level: int) -> BatchedTensor:
    """The sample view of ``physical`` whose dimension ``bdim`` (non-negative) runs over
    the batch of vmap level ``level`` (no checks: callers pass a valid dimension)."""
    t: BatchedTensor = _new(BatchedTensor)
    if bdim:
        shape = physical._shape
        strides = physical._strides
        t._shape = shape[:bdim] + shape[bdim + 1 :]
        t._strides = strides[:bdim] + strides[bdim + 1 :]
    else:  # what rules return: one slice each
        t._shape = physical._shape[1:]
        t._strides = physical._strides[1:]
    t._offset = physical._offset
    t._storage = None
    t._dtype = physical._dtype
    t._device = physical._device
    t.key_bits = physical.key_bits | BATCHED_BIT
    t.grad_fn = None  # a slot of Tensor's (Note [Tensor fields with class defaults])
    t._array = None
    t._array_buffer = None
    t._batch_value = physical
    t._batch_dim = bdim
    t._batch_level = level
    return t


def is_batched(value: object) -> bool:
    """Whether ``value`` is a batched tensor (of any level)."""
    return isinstance(value, BatchedTensor)


def batched_at(value: object, level: int) -> tuple[Tensor, int] | None:
    """``(physical, batch dim)`` when ``value`` is batched at ``level``, else None."""
    if isinstance(value, BatchedTensor) and value._batch_level == level:
        return value._batch_value, value._batch_dim
    return None


def live_level(number: int) -> int:
    """``number`` when its vmap is running, else the escaped-tensor error (Note [Levels];
    hot rules test ``number not in RUNNING`` inline and call ``escaped``)."""
    if number not in RUNNING:
        escaped(number)
    return number


def escaped(number: int) -> NoReturn:
    """The error of a batched tensor of level ``number`` used after its vmap returned."""
    raise VmapError(ESCAPED.format(level=number))
