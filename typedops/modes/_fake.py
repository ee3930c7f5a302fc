"""``FakeTensorMode``: run ops for shapes, dtypes and strides only, on meta-backed tensors
that remember the device they stand for.

Note [Fake tensors]
~~~~~~~~~~~~~~~~~~~
A ``FakeTensor`` is a meta tensor (no data; its storage, shape, strides and version
counter are real) whose ``device`` answers the device it pretends to be on, and whose key
set carries the ``Python`` key, so every op call on it reaches the mode's handler even
after the ``with`` block (Note [Tensor subclasses that dispatch] in _mode.py). The
handler runs the op on *plain* meta views of the fake tensors -- kernels read
``t.device`` to place what they make, and must see ``meta`` -- so each op runs its Meta
kernel (a ``register_fake`` rule is one), or decomposes through its
CompositeImplicitAutograd kernel into ops that do. Factories (and any op given a
``device``) run on the meta device and their results remember the device asked for;
other results take their inputs' fake device. A real tensor that wraps a Python number
(a composite kernel's scalar argument) joins as a meta number on no device, as torch lets
CPU scalars mix with any device. A result that is one of the plain views
(an in-place or ``out=`` op) is answered with the fake tensor it views, which takes
the view's shape, strides and offset: ``out=`` resizes, ``transpose_`` restrides.
"""

from __future__ import annotations

from typing import Any, Final, cast

from ..vocabulary import Device, DispatchKey, NoKernelError
from ..tensor import CPU, adopt_geometry, NO_DATA, Tensor, empty_meta, empty_tensor, keys_for_device, make_view, tensors_in
from ..dispatch import OperatorHandle
from . import _messages as msg
from ._mode import DispatchMode, dispatch_on_class

__all__ = ["FakeTensor", "FakeTensorMode"]

_META: Final = Device.parse("meta")
# The tensor layer's own CPU device: a real tensor made on a fake tensor's device (outside
# the mode) takes the constructors' ``device is CPU`` shortcut for its key bits.
_CPU: Final = CPU
_FAKE_KEY_BITS: Final = int(keys_for_device(_META)) | (1 << DispatchKey.Python)


class FakeTensor(Tensor):
    """A meta-backed tensor standing for one on ``fake_device`` (Note [Fake tensors])."""

    __slots__ = ()
    fake_device: Device = _CPU
    fake_mode: FakeTensorMode | None = None

    @property
    def device(self) -> Device:
        return self.fake_device

    @property
    def is_meta(self) -> bool:
        return self.fake_device.type == "meta"

    def __repr__(self) -> str:
        return f"FakeTensor(..., shape={self.shape}, dtype={self.dtype.name}, device='{self.fake_device}')"

    @classmethod
    def __typedops_dispatch__(
        cls, op: OperatorHandle, types: tuple[type, ...], args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        """A call on fake tensors outside any mode: their mode handles it."""
        mode = next((t.fake_mode for t in tensors_in((*args, *kwargs.values()), FakeTensor) if t.fake_mode is not None), None)
        if mode is None:
            mode = FakeTensorMode()
        return mode.__typedops_dispatch__(op, types, args, kwargs)


dispatch_on_class(FakeTensor)


def _make_fake(t: Tensor, device: Device, mode: FakeTensorMode) -> FakeTensor:
    """Turn the plain meta tensor ``t`` into a fake tensor, in place (same object)."""
    t.__class__ = FakeTensor
    assert isinstance(t, FakeTensor)
    t.fake_device = device
    t.fake_mode = mode
    t.key_bits = _FAKE_KEY_BITS
    return t


class FakeTensorMode(DispatchMode):
    """Inside ``with FakeTensorMode():`` factories make fake tensors and every op runs its
    Meta kernel or ``register_fake`` rule: shapes, dtypes and strides without data. An op
    with neither raises ``NoFakeRuleError``. A real tensor given to an op is refused unless
    ``allow_non_fake_inputs`` (then it is made fake, as ``from_tensor`` does)."""

    def __init__(self, *, allow_non_fake_inputs: bool = False) -> None:
        self.allow_non_fake_inputs = allow_non_fake_inputs

    def from_tensor(self, t: Tensor) -> FakeTensor:
        """A fake tensor with ``t``'s shape, strides, dtype and device (no data)."""
        if isinstance(t, FakeTensor):
            return t
        base = empty_tensor([t.storage.size], t.dtype, _META)
        view = make_view(base, t.shape, t.stride(), t.storage_offset())
        return _make_fake(view, t.device, self)

    def __typedops_dispatch__(
        self, op: OperatorHandle, types: tuple[type, ...], args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        fakes: dict[int, FakeTensor] = {}  # id(plain view) -> the fake tensor it views
        devices: list[Device] = []

        def unwrap(value: Any, name: str) -> Any:
            if isinstance(value, Tensor):
                if not isinstance(value, FakeTensor):
                    if value.is_meta:
                        return value
                    if value.is_wrapped_number:  # a Python number a composite kernel wrapped
                        number = empty_meta((), value.dtype)
                        number.is_wrapped_number = True
                        return number
                    if not self.allow_non_fake_inputs:
                        raise msg.FakeTensorError(msg.REAL_TENSOR.format(op=op.full_name, arg=name))
                    value = self.from_tensor(value)
                plain = make_view(value, value.shape, value.stride(), value.storage_offset())
                fakes[id(plain)] = value
                if value.fake_device not in devices:
                    devices.append(value.fake_device)
                return plain
            if isinstance(value, (list, tuple)):
                items = cast("list[object] | tuple[object, ...]", value)
                return type(items)(unwrap(v, name) for v in items)
            if name == "device":  # a factory's, or a copy's (to, _to_copy): the result's device
                if value is not None:
                    devices[:] = [Device.parse(value)]
                return _META if value is not None or not fakes else None
            return value

        schema = op.schema
        plain_args = tuple(unwrap(v, a.name) for v, a in zip(args, schema.positional))
        plain_kwargs = {k: unwrap(v, k) for k, v in kwargs.items()}
        if len(devices) > 1:
            raise msg.FakeTensorError(msg.DEVICES.format(op=op.full_name, devices=", ".join(map(str, devices))))
        device = devices[0] if devices else _CPU
        result = self._run(op, plain_args, plain_kwargs)
        return self._wrap(result, device, fakes)

    def _run(self, op: OperatorHandle, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        name = op.schema.name
        try:
            return op(*args, **kwargs)
        except NoKernelError as error:
            if error.key is not DispatchKey.Meta:
                raise
            missing = error.op.partition("::")
            raise msg.NoFakeRuleError(
                msg.NO_FAKE_RULE.format(op=error.op, why="", ns=missing[0], name=missing[2].partition(".")[0]),
                error.op,
            ) from None
        except RuntimeError as error:
            if str(error) != NO_DATA:
                raise
            raise msg.NoFakeRuleError(
                msg.NO_FAKE_RULE.format(op=op.full_name, why=msg.READ_DATA, ns=op.schema.namespace, name=name),
                op.full_name,
            ) from None

    def _wrap(self, result: Any, device: Device, fakes: dict[int, FakeTensor]) -> Any:
        if isinstance(result, Tensor):
            known = fakes.get(id(result))
            if known is not None:  # an in-place or out= op: it may have resized or restrided
                adopt_geometry(known, result)
                return known
            if isinstance(result, FakeTensor) or not result.is_meta:
                return result
            return _make_fake(result, device, self)
        if isinstance(result, tuple):
            return tuple(self._wrap(r, device, fakes) for r in cast("tuple[object, ...]", result))
        if isinstance(result, list):
            return [self._wrap(r, device, fakes) for r in cast("list[object]", result)]
        return result
