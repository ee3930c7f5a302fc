"""Batching rules: per-op kernels on ``Batched`` that batch an op with one call on the
physical tensors instead of one call per sample.

Note [Rule families]
~~~~~~~~~~~~~~~~~~~~
The core library declares each op's rule in its yaml (``vmap: pointwise``), by *family*:
ops of one family batch the same way, so one builder makes the rule of each from the op's
schema. ``RULE_FAMILIES`` maps a family's name to its builder and to a check that the
family fits a schema (the code generator refuses a declaration that does not fit). A rule
is an unboxed kernel taking the key set first; it

- finds the highest vmap level among its tensor arguments (none: the call passes on below
  ``Batched``, which is how calls on plain tensors inside vmap cost one hop);
- under ``force_fallback()`` hands the call to the fallback (Note [Forcing the fallback]);
- moves each batched physical tensor's batch dimension to the front, adjusts the op's
  dimension arguments to the physical tensors, and calls the op once, *below* ``Batched``
  with the call's own key set (``redispatch``) -- or from the top when a physical tensor is
  itself batched at a lower level (nested vmap), so that level batches it in turn;
- wraps the result, batched at the front.

Dimension arguments are checked against one sample's rank, so an out-of-range ``dim``
raises the error it raises without vmap instead of reaching the batch dimension.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from ..dispatch import DispatchKey, DispatchKeySet, Library, OperatorHandle
from ..schema import FunctionSchema
from ..tensor import Tensor, wrap_dim
from ..vocabulary import RegistrationError
from ._core import core_op, movedim, pad_to_rank, probe, to_front
from ._fallback import _open_blocks, forced, level_of, run_fallback
from ._levels import RUNNING, SAME_DRAWS, SameDraws, current_levels
from ._messages import INPLACE, RANDOM_ERROR, RULE_DOES_NOT_FIT, UNKNOWN_RULE, VmapError
from ._tensor import BATCHED_BIT, BatchedTensor, escaped, make_batched
from ._view_rules import VIEW_FAMILIES, Family, call_below, tensor_positions

__all__ = ["RULE_FAMILIES", "register_vmap_rules", "rule_for"]

Kernel = Callable[..., Any]


# -- pointwise ---------------------------------------------------------------------------
def _fits_pointwise(schema: FunctionSchema) -> str | None:
    if any(str(a.type) != "Tensor" for a in schema.arguments if "Tensor" in str(a.type)):
        return "its tensor arguments must all be plain Tensor"
    if any(str(a.type) == "Tensor" for a in schema.kwarg_only):
        return "a keyword-only tensor (out=) is written per sample by the fallback instead"
    if len(schema.returns) != 1 or str(schema.returns[0].type) != "Tensor":
        return "it must return one Tensor"
    if not tensor_positions(schema):
        return "it has no tensor argument"
    return None


def _pointwise(handle: OperatorHandle) -> Kernel:
    """Element-wise ops with broadcasting: batched operands of lower rank get size-1
    dimensions after the batch dimension, unbatched ones broadcast as they are. An op that
    writes ``self`` needs ``self`` batched when anything else is (PyTorch's in-place error)."""
    schema = handle.schema
    positions = tensor_positions(schema)
    written = next((i for i, a in enumerate(schema.positional) if a.is_write), None)
    name = schema.full_name
    if positions == [0]:
        return _pointwise_unary(handle, written == 0)
    if positions == [0, 1]:
        return _pointwise_binary(handle, written == 0)

    def rule(keys: DispatchKeySet, *args: Any, **kwargs: Any) -> Any:
        if _open_blocks and forced():
            return run_fallback(handle, keys, args, kwargs)
        level = 0
        rank = 0
        for i in positions:
            a = args[i]
            if type(a) is BatchedTensor and a._batch_level > level:
                level = a._batch_level
            if len(a._shape) > rank:
                rank = len(a._shape)
        if not level:
            return handle.redispatch(keys, *args, **kwargs)
        if level not in RUNNING:
            escaped(level)
        if rank and len({args[i]._dtype for i in positions}) > 1 and any(
            not args[i]._shape and type(args[i]) is BatchedTensor and args[i]._batch_level == level for i in positions
        ):
            return run_fallback(handle, keys, args, kwargs)  # Note [Zero-dim samples promote]
        new = list(args)
        nested = False
        for i in positions:
            a = args[i]
            if type(a) is BatchedTensor and a._batch_level == level:
                p = a._batch_value
                if a._batch_dim:
                    p = movedim(p, a._batch_dim, 0)
                if len(a._shape) < rank:
                    p = pad_to_rank(p, rank)
                new[i] = p
            elif i == written:
                raise VmapError(INPLACE.format(op=name))
            else:
                p = a
            if p.key_bits & BATCHED_BIT:
                nested = True
        out = handle.call(*new, **kwargs) if nested else handle.redispatch(keys, *new, **kwargs)
        return args[written] if written is not None else make_batched(out, 0, level)

    return rule


# Note [Zero-dim samples promote]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# Type promotion gives a 0-dim tensor less say than a tensor with dimensions: a float64
# scalar times a float32 vector is float32. A batch of 0-dim samples is a 1-d physical
# tensor, which would promote as a tensor with dimensions (float64). So when a 0-dim
# *batched* operand meets an operand with dimensions and another dtype, the rule leaves the call to
# the fallback, which computes each sample exactly as written (and warns that it is slow).

# The two commonest shapes of pointwise op, one and two leading tensors, written out: the
# rule runs on every batched element-wise call (each loop and list above costs ~0.3 us).
def _pointwise_unary(handle: OperatorHandle, writes: bool) -> Kernel:
    def rule(keys: DispatchKeySet, *args: Any, **kwargs: Any) -> Any:
        a = args[0]
        if type(a) is not BatchedTensor:
            return handle.redispatch(keys, *args, **kwargs)
        if _open_blocks and forced():
            return run_fallback(handle, keys, args, kwargs)
        if a._batch_level not in RUNNING:
            escaped(a._batch_level)
        p = a._batch_value
        if a._batch_dim:
            p = movedim(p, a._batch_dim, 0)
        if p.key_bits & BATCHED_BIT:
            out = handle.call(p, *args[1:], **kwargs)
        else:
            out = handle.redispatch(keys, p, *args[1:], **kwargs)
        return a if writes else make_batched(out, 0, a._batch_level)

    return rule


def _pointwise_binary(handle: OperatorHandle, writes: bool) -> Kernel:
    name = handle.schema.full_name

    def rule(keys: DispatchKeySet, *args: Any, **kwargs: Any) -> Any:
        a, b = args[0], args[1]
        la = a._batch_level if type(a) is BatchedTensor else 0
        lb = b._batch_level if type(b) is BatchedTensor else 0
        level = la if la > lb else lb
        if not level:
            return handle.redispatch(keys, *args, **kwargs)
        if _open_blocks and forced():
            return run_fallback(handle, keys, args, kwargs)
        if level not in RUNNING:
            escaped(level)
        rank = len(a._shape) if len(a._shape) > len(b._shape) else len(b._shape)
        if rank and ((la == level and not a._shape) or (lb == level and not b._shape)) and a._dtype is not b._dtype:
            return run_fallback(handle, keys, args, kwargs)  # Note [Zero-dim samples promote]
        if la == level:
            pa = a._batch_value
            if a._batch_dim:
                pa = movedim(pa, a._batch_dim, 0)
            if len(a._shape) < rank:
                pa = pad_to_rank(pa, rank)
        elif writes:
            raise VmapError(INPLACE.format(op=name))
        else:
            pa = a
        if lb == level:
            pb = b._batch_value
            if b._batch_dim:
                pb = movedim(pb, b._batch_dim, 0)
            if len(b._shape) < rank:
                pb = pad_to_rank(pb, rank)
        else:
            pb = b
        if (pa.key_bits | pb.key_bits) & BATCHED_BIT:
            out = handle.call(pa, pb, *args[2:], **kwargs)
        else:
            out = handle.redispatch(keys, pa, pb, *args[2:], **kwargs)
        return a if writes else make_batched(out, 0, level)

    return rule


# -- reductions ----------------------------------------------------------------------------
def _dim_index(schema: FunctionSchema) -> int | None:
    return next((i for i, a in enumerate(schema.positional) if a.name == "dim"), None)


def _fits_reduction(schema: FunctionSchema) -> str | None:
    if tensor_positions(schema) != [0] or any("Tensor" in str(a.type) for a in schema.arguments[1:]):
        return "it must take one Tensor, first"
    index = _dim_index(schema)
    if index is not None and str(schema.positional[index].type) not in ("int", "int[]", "int[1]?", "int?", "int[1]"):
        return "its 'dim' must be int, int?, int[] or int[1]?"
    if index is None and (schema.name not in _DIM_OVERLOADS or schema.positional[1:]):
        return "without 'dim' it must be a full reduction of an op with a dim overload (sum)"
    if any(str(r.type) != "Tensor" for r in schema.returns):
        return "it must return tensors"
    return None


# A full reduction (no dim) runs as its op's overload over dims 1.. of the physical tensor.
_DIM_OVERLOADS: Final = {"sum": "dim_IntList", "mean": "dim"}


def _reduction(handle: OperatorHandle) -> Kernel:
    """Reductions over ``dim`` (an int or a list; None or [] meaning every dimension) with
    ``keepdim``: the dims shift past the batch dimension. A sample of rank 0 loops."""
    schema = handle.schema
    index = _dim_index(schema)
    is_list = index is not None and "[" in str(schema.positional[index].type)
    single = len(schema.returns) == 1

    def rule(keys: DispatchKeySet, *args: Any, **kwargs: Any) -> Any:
        self = args[0]
        if type(self) is not BatchedTensor:
            return handle.redispatch(keys, *args, **kwargs)
        if (_open_blocks and forced()) or not self._shape:
            return run_fallback(handle, keys, args, kwargs)
        level = self._batch_level
        if level not in RUNNING:
            escaped(level)
        p = to_front(self._batch_value, self._batch_dim)
        rank = len(self._shape)
        target = handle
        new = list(args)
        if index is None:
            target = core_op(schema.name, _DIM_OVERLOADS[schema.name])
            new = [p, list(range(1, rank + 1)), False]
        else:
            dim = args[index]
            if dim is None and not is_list:  # argmax-like: a reduction of the flattened sample
                return run_fallback(handle, keys, args, kwargs)
            if dim is None or (is_list and not dim):
                dims = list(range(1, rank + 1))
            else:
                dims = [wrap_dim(d, rank) + 1 for d in (dim if is_list else (dim,))]
            new[0] = p
            new[index] = dims if is_list else dims[0]
        out = call_below(target, keys, new, kwargs)
        if single:
            return make_batched(out, 0, level)
        return tuple(make_batched(o, 0, level) for o in out)

    return rule


# -- matmul and mm -------------------------------------------------------------------------
def _fits_matmul(schema: FunctionSchema) -> str | None:
    if [str(a.type) for a in schema.arguments] != ["Tensor", "Tensor"]:
        return "it must take (Tensor, Tensor)"
    return None


def _matmul(handle: OperatorHandle) -> Kernel:
    """``matmul`` (and ``mm``, whose 2-d operands it handles) on physical tensors: Note
    [Batched matmul] in docs/vmap.md walks through the cases."""
    matmul = handle if handle.schema.name == "matmul" else None

    def rule(keys: DispatchKeySet, *args: Any, **kwargs: Any) -> Any:
        x, y = args
        level = max(x._batch_level or 0, y._batch_level or 0)  # class default None for plain tensors
        if not level:
            return handle.redispatch(keys, *args)
        if (_open_blocks and forced()) or (matmul is None and (x.ndim != 2 or y.ndim != 2)):
            return run_fallback(handle, keys, args, kwargs)  # mm's own error, per sample
        if level not in RUNNING:
            escaped(level)
        op = matmul or core_op("matmul")
        out, bdim = _batched_matmul(op, keys, x, y, level)
        return make_batched(out, bdim, level)

    return rule


def _batched_matmul(op: OperatorHandle, keys: DispatchKeySet, x: Tensor, y: Tensor, level: int) -> tuple[Tensor, int]:
    xb = type(x) is BatchedTensor and x._batch_level == level
    yb = type(y) is BatchedTensor and y._batch_level == level
    rx, ry = x.ndim, y.ndim
    px = to_front(x._batch_value, x._batch_dim) if isinstance(x, BatchedTensor) and xb else x
    py = to_front(y._batch_value, y._batch_dim) if isinstance(y, BatchedTensor) and yb else y
    if rx == 0 or ry == 0:  # matmul's own error for the samples (the physical tensors have dims)
        probe(op, [x, y])
        raise AssertionError("matmul accepted a 0-dim operand")
    if xb and yb:
        if rx == 1 and ry == 1:  # a dot per sample: (B,1,k) @ (B,k,1)
            product = call_below(op, keys, [core_op("unsqueeze").call(px, 1), core_op("unsqueeze").call(py, 2)], {})
            return core_op("reshape").call(product, [px.shape[0]]), 0
        rank = max(rx, ry, 2)
        if rx == 1:
            px = core_op("unsqueeze").call(px, 1)
        if ry == 1:
            py = core_op("unsqueeze").call(py, 2)
        out = call_below(op, keys, [pad_to_rank(px, rank), pad_to_rank(py, rank)], {})
        if rx == 1 or ry == 1:
            out = core_op("squeeze", "dim").call(out, -2 if rx == 1 else -1)
        return out, 0
    if xb:
        if rx == 1:  # rows of the batch as a matrix: (B,k) @ (..., k, m) -> (..., B, m)
            out = call_below(op, keys, [px, py], {})
            return out, (out.ndim - 2 if ry >= 2 else 0)
        return call_below(op, keys, [pad_to_rank(px, max(rx, ry)), py], {}), 0
    if ry == 1:  # x @ each sample's vector: x @ y.T -> (..., n, B)
        out = call_below(op, keys, [px, core_op("transpose", "int").call(py, 0, 1)], {})
        return out, out.ndim - 1
    return call_below(op, keys, [px, pad_to_rank(py, max(rx, ry))], {}), 0


# -- random ops ----------------------------------------------------------------------------
def _fits_random(schema: FunctionSchema) -> str | None:
    if tensor_positions(schema) or not schema.positional or str(schema.positional[0].type) != "SymInt[]":
        return "it must be a factory taking its size first (randn)"
    return None


def _random(handle: OperatorHandle) -> Kernel:
    """A random factory inside vmap: ``randomness="error"`` raises, "same" draws one tensor,
    "different" draws one per sample of every such level (Note [Randomness] in docs/vmap.md)."""
    name = handle.schema.full_name

    def rule(keys: DispatchKeySet, size: Any, *args: Any, **kwargs: Any) -> Any:
        levels = current_levels()
        if any(level.randomness == "error" for level in levels):
            raise VmapError(RANDOM_ERROR.format(op=name))
        different = [level for level in levels if level.randomness == "different"]
        if not different:
            same = SAME_DRAWS.get()
            if same is None:
                return handle.redispatch(keys, size, *args, **kwargs)
            return _same_draw(same, handle, keys, size, args, kwargs)
        out = handle.redispatch(keys, [*(level.batch_size for level in different), *size], *args, **kwargs)
        for level in different:  # outermost first: each wrap peels one leading dimension
            out = make_batched(out, 0, level.level)
        return out

    return rule


def _same_draw(same: SameDraws, handle: OperatorHandle, keys: DispatchKeySet, size: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """A "same" draw in a chunked vmap: Note [Same draws across chunks] in _levels.py."""
    key = (handle.schema.full_name, list(size), args, kwargs)
    clone = core_op("clone")
    if same.cursor < len(same.draws) and same.draws[same.cursor][0] == key:
        out = clone.call(same.draws[same.cursor][1])
    else:
        out = handle.redispatch(keys, size, *args, **kwargs)
        del same.draws[same.cursor :]
        same.draws.append((key, clone.call(out)))
    same.cursor += 1
    return out


# -- composite ops ------------------------------------------------------------------------
def _fits_composite(schema: FunctionSchema) -> str | None:
    return None


def _composite(handle: OperatorHandle) -> Kernel:
    """A CompositeImplicitAutograd op: its composite kernel runs on the batched tensors and
    the ops it calls are batched (what the fallback does for such ops, declared). It
    unwraps nothing, but checks the level (Note [Levels]) as the fallback does: a kernel
    that calls no op (``contiguous`` of a contiguous tensor returns it) checks none."""

    def rule(keys: DispatchKeySet, *args: Any, **kwargs: Any) -> Any:
        if not handle.has_kernel_for(DispatchKey.CompositeImplicitAutograd):
            raise AssertionError(f"{handle.schema.full_name} declares vmap: composite without such a kernel")
        level = level_of((*args, *kwargs.values()))
        if level and level not in RUNNING:
            escaped(level)
        return handle.redispatch(keys, *args, **kwargs)

    return rule


RULE_FAMILIES: Final[dict[str, Family]] = {
    "pointwise": Family(_pointwise, _fits_pointwise),
    "reduction": Family(_reduction, _fits_reduction),
    "matmul": Family(_matmul, _fits_matmul),
    "random": Family(_random, _fits_random),
    "composite": Family(_composite, _fits_composite),
    **VIEW_FAMILIES,
}


def rule_for(family: str, handle: OperatorHandle) -> Kernel:
    """The rule of ``handle``'s op in ``family``; ``RegistrationError`` when the family is
    unknown or does not fit the op's schema."""
    found = RULE_FAMILIES.get(family)
    if found is None:
        raise RegistrationError(UNKNOWN_RULE.format(name=family, known=", ".join(sorted(RULE_FAMILIES))))
    problem = found.fits(handle.schema)
    if problem is not None:
        raise RegistrationError(RULE_DOES_NOT_FIT.format(family=family, op=handle.schema.full_name, problem=problem))
    return found.build(handle)


def register_vmap_rules(library: Library, rules: list[tuple[OperatorHandle, str]]) -> None:
    """Register each op's rule of its family on ``Batched`` (generated registration calls
    this with the yaml's ``vmap:`` declarations)."""
    for handle, family in rules:
        library.impl(handle, rule_for(family, handle), DispatchKey.Batched, with_keys=True, check=False)

