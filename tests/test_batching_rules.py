"""The core library's batching rules (typedops/batching/_rules.py, _view_rules.py): every op
the yaml declares a rule for gives, under vmap, what a loop over the samples gives, and so
does the for-loop fallback forced on; a property test over random ops and batch placements;
nested vmap; rules keep views aliasing; the fallback's own cases."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from typedops import Tensor, core, ops, tensor, vmap
from typedops.batching import RULE_FAMILIES, VmapError, force_fallback
from typedops.vocabulary import MemoryFormat, ScalarType

YAML = Path(__file__).resolve().parent.parent / "typedops" / "core" / "native_functions.yaml"
DECLARED: dict[str, str] = {
    e["func"].partition("(")[0]: e["vmap"] for e in yaml.safe_load(YAML.read_text()) if "vmap" in e
}
B = 3
RNG = np.random.default_rng(0)


def arr(*shape: int) -> np.ndarray[Any, Any]:
    return RNG.uniform(0.1, 0.9, size=shape).astype(np.float32)


def op(name: str) -> Any:
    base, _, overload = name.partition(".")
    return getattr(getattr(ops.core, base), overload or "default")


def stacked(fn: Callable[..., Any], inputs: list[Any], in_dims: tuple[Any, ...]) -> Any:
    """fn over each sample, stacked: what vmap must give."""
    outs = []
    for i in range(B):
        sample = [x if d is None else core.select(x, d, i) for x, d in zip(inputs, in_dims)]
        outs.append(fn(*sample))
    if isinstance(outs[0], tuple):
        return tuple(core.stack([o[k] for o in outs], 0) for k in range(len(outs[0])))
    return core.stack(outs, 0)


def close(a: Any, b: Any) -> None:
    if isinstance(a, tuple):
        assert isinstance(b, tuple) and len(a) == len(b)
        for x, y in zip(a, b):
            close(x, y)
        return
    assert a.shape == b.shape, (a.shape, b.shape)
    assert a.dtype == b.dtype
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)


@contextmanager
def quiet() -> Iterator[None]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def unary(name: str) -> tuple[Callable[..., Any], list[Any], tuple[Any, ...]]:
    if name.endswith("_"):
        return (lambda a: op(name)(a.clone())), [tensor(arr(B, 2, 4))], (0,)
    return op(name), [tensor(arr(2, B, 4))], (1,)


# name -> (per-sample function, inputs, in_dims): each op called with batched and unbatched
# operands, batch dimensions not always first.
def cases() -> dict[str, tuple[Callable[..., Any], list[Any], tuple[Any, ...]]]:
    x, y, v, m = tensor(arr(B, 2, 4)), tensor(arr(2, 4, B)), tensor(arr(4)), tensor(arr(B, 4, 5))
    x1, x2 = tensor(arr(2, B, 4)), tensor(arr(2, 4, B))
    cond = tensor(arr(B, 2, 4) > 0.5)
    table: dict[str, tuple[Callable[..., Any], list[Any], tuple[Any, ...]]] = {
        "add.Tensor": (lambda a, b: op("add.Tensor")(a, b, alpha=2), [x, y], (0, 2)),
        "add_.Tensor": (lambda a, b: op("add_.Tensor")(a.clone(), b), [x, v], (0, None)),
        "add.Scalar": (lambda a: op("add.Scalar")(a, 2.5, 2), [x], (0,)),
        "sub.Tensor": (lambda a, b: op("sub.Tensor")(a, b, alpha=1), [v, x], (None, 0)),
        "sub_.Tensor": (lambda a, b: op("sub_.Tensor")(a.clone(), b, alpha=1), [x, y], (0, 2)),
        "mul.Tensor": (op("mul.Tensor"), [x, y], (0, 2)),
        "mul_.Tensor": (lambda a, b: op("mul_.Tensor")(a.clone(), b), [x, y], (0, 2)),
        "mul.Scalar": (lambda a: op("mul.Scalar")(a, 3), [x], (0,)),
        "div.Tensor": (op("div.Tensor"), [v, x], (None, 0)),
        "div_.Tensor": (lambda a, b: op("div_.Tensor")(a.clone(), b), [x, v], (0, None)),
        "pow.Tensor_Scalar": (lambda a: op("pow.Tensor_Scalar")(a, 2), [x], (0,)),
        "floor_divide": (op("floor_divide"), [x, v], (0, None)),
        "floor_divide.Scalar": (lambda a: op("floor_divide.Scalar")(a, 0.25), [x], (0,)),
        "remainder.Tensor": (op("remainder.Tensor"), [v, x], (None, 0)),
        "remainder.Scalar": (lambda a: op("remainder.Scalar")(a, 0.25), [x], (0,)),
        "floor_divide_.Tensor": (lambda a, b: op("floor_divide_.Tensor")(a.clone(), b), [x, v], (0, None)),
        "floor_divide_.Scalar": (lambda a: op("floor_divide_.Scalar")(a.clone(), 0.25), [x], (0,)),
        "remainder_.Tensor": (lambda a, b: op("remainder_.Tensor")(a.clone(), b), [x, y], (0, 2)),
        "remainder_.Scalar": (lambda a: op("remainder_.Scalar")(a.clone(), 0.25), [x], (0,)),
        "maximum": (op("maximum"), [x, y], (0, 2)),
        "bitwise_and.Tensor": (op("bitwise_and.Tensor"), [x > 1, y > 1], (0, 2)),
        "bitwise_or.Tensor": (op("bitwise_or.Tensor"), [x > 1, y < 1], (0, 2)),
        "bitwise_xor.Tensor": (op("bitwise_xor.Tensor"), [(x * 4).to(ScalarType.int64), v.to(ScalarType.int64)],
                               (0, None)),  # fmt: skip
        "bitwise_not": (op("bitwise_not"), [(x1 * 4).to(ScalarType.int64)], (1,)),
        "bitwise_and_.Tensor": (lambda a, b: op("bitwise_and_.Tensor")(a.clone(), b), [x > 1, y > 1], (0, 2)),
        "bitwise_or_.Tensor": (lambda a, b: op("bitwise_or_.Tensor")(a.clone(), b), [x > 1, v > 1], (0, None)),
        "bitwise_xor_.Tensor": (lambda a, b: op("bitwise_xor_.Tensor")(a.clone(), b),
                                [(x * 4).to(ScalarType.int64), v.to(ScalarType.int64)], (0, None)),  # fmt: skip
        "pow_.Scalar": (lambda a: op("pow_.Scalar")(a.clone(), 2), [x], (0,)),
        "pow_.Tensor": (lambda a, b: op("pow_.Tensor")(a.clone(), b), [x, y], (0, 2)),
        "pow.Tensor_Tensor": (op("pow.Tensor_Tensor"), [x, y], (0, 2)),
        "clamp": (lambda a: op("clamp")(a, 0.3, 0.7), [x1], (1,)),
        "minimum": (op("minimum"), [x, y], (0, 2)),
        "relu": (op("relu"), [x], (0,)),
        "threshold_backward": (lambda g, a: op("threshold_backward")(g, a, 0.5), [x, y], (0, 2)),
        "fill_.Scalar": (lambda a: op("fill_.Scalar")(a.clone(), 2.0), [x], (0,)),
        "zero_": (lambda a: op("zero_")(a.clone()), [x], (0,)),
        "where.self": (op("where.self"), [cond, x, v], (0, 0, None)),
        "eq.Scalar": (lambda a: op("eq.Scalar")(a, 0.5), [x], (0,)),
        "gt.Scalar": (lambda a: op("gt.Scalar")(a, 0.5), [x], (0,)),
        "add_.Scalar": (lambda a: op("add_.Scalar")(a.clone(), 2.5, 2), [x], (0,)),
        "sub.Scalar": (lambda a: op("sub.Scalar")(a, 2.5, 2), [x], (0,)),
        "sub_.Scalar": (lambda a: op("sub_.Scalar")(a.clone(), 2, 1), [x], (0,)),
        "mul_.Scalar": (lambda a: op("mul_.Scalar")(a.clone(), 3), [x], (0,)),
        "div.Scalar": (lambda a: op("div.Scalar")(a, 4), [x], (0,)),
        "div_.Scalar": (lambda a: op("div_.Scalar")(a.clone(), 0.5), [x], (0,)),
        "ne.Scalar": (lambda a: op("ne.Scalar")(a, 0.5), [x], (0,)),
        "lt.Scalar": (lambda a: op("lt.Scalar")(a, 0.5), [x], (0,)),
        "le.Scalar": (lambda a: op("le.Scalar")(a, 0.5), [x], (0,)),
        "ge.Scalar": (lambda a: op("ge.Scalar")(a, 0.5), [x], (0,)),
        "where.ScalarSelf": (lambda c, b: op("where.ScalarSelf")(c, 2.0, b), [cond, x], (0, 0)),
        "where.ScalarOther": (lambda c, a: op("where.ScalarOther")(c, a, 0), [cond, v], (0, None)),
        "where.Scalar": (lambda c: op("where.Scalar")(c, 1.0, 0.0), [cond], (0,)),
        "sum": (lambda a: op("sum")(a, dtype=None), [x1], (1,)),
        "sum.dim_IntList": (lambda a: op("sum.dim_IntList")(a, [-1, 0], True, dtype=None), [x2], (2,)),
        "mean": (lambda a: op("mean")(a, dtype=None), [x], (0,)),
        "mean.dim": (lambda a: op("mean.dim")(a, [1], False, dtype=None), [x], (0,)),
        "amax": (lambda a: op("amax")(a, [], False), [x], (0,)),
        "max.dim": (lambda a: op("max.dim")(a, -1, True), [x1], (1,)),
        "min.dim": (lambda a: op("min.dim")(a, 0, False), [x1], (1,)),
        "argmax": (lambda a: op("argmax")(a, None, False), [x], (0,)),
        "matmul": (op("matmul"), [x, m], (0, 0)),
        "mm": (op("mm"), [m, tensor(arr(5, 2))], (0, None)),
        "view": (lambda a: op("view")(a, [8]), [x], (0,)),
        "reshape": (lambda a: op("reshape")(a, [4, -1]), [x1], (1,)),
        "permute": (lambda a: op("permute")(a, [1, 0]), [x2], (2,)),
        "transpose.int": (lambda a: op("transpose.int")(a, 0, -1), [x], (0,)),
        "t": (op("t"), [x1], (1,)),
        "select.int": (lambda a: op("select.int")(a, -1, 2), [x], (0,)),
        "slice.Tensor": (lambda a: op("slice.Tensor")(a, 1, 1, 3, 1), [x], (0,)),
        "unsqueeze": (lambda a: op("unsqueeze")(a, -1), [x], (0,)),
        "squeeze.dim": (lambda a: op("squeeze.dim")(a, 0), [tensor(arr(B, 1, 4))], (0,)),
        "squeeze": (op("squeeze"), [tensor(arr(1, B, 1, 4))], (1,)),  # the batch dim's size-1 neighbours only
        "expand": (lambda a: op("expand")(a, [2, 2, 4], implicit=False), [x1], (1,)),
        "flatten.using_ints": (lambda a: op("flatten.using_ints")(a, 0, -1), [x], (0,)),
        "contiguous": (lambda a: op("contiguous")(a, memory_format=MemoryFormat.contiguous_format), [x2], (2,)),
        "clone": (lambda a: op("clone")(a, memory_format=None), [x1], (1,)),
        "copy_": (lambda a, b: op("copy_")(a.clone(), b, False), [x, v], (0, None)),
        "cat": (lambda a, b: op("cat")([a, b, a], 1), [x, tensor(arr(2, 4))], (0, None)),
        "stack": (lambda a, b: op("stack")([a, b], -1), [x, tensor(arr(2, 4))], (0, None)),
        "zeros_like": (lambda a: op("zeros_like")(a, dtype=None, layout=None, device=None, pin_memory=None,
                                                  memory_format=None), [x1], (1,)),  # fmt: skip
        "ones_like": (lambda a: op("ones_like")(a, dtype=None, layout=None, device=None, pin_memory=None,
                                                memory_format=None), [x1], (1,)),  # fmt: skip
        "empty_like": (lambda a: op("empty_like")(a, dtype=ScalarType.float64, layout=None, device=None,
                                                  pin_memory=None, memory_format=None), [x1], (1,)),  # fmt: skip
        "full_like": (lambda a: op("full_like")(a, 2.5, dtype=None, layout=None, device=None, pin_memory=None,
                                                memory_format=None), [x1], (1,)),  # fmt: skip
        "_to_copy": (lambda a: op("_to_copy")(a, dtype=ScalarType.float64), [x], (0,)),
        "to.dtype": (lambda a: op("to.dtype")(a, ScalarType.float64, False, False, None), [x], (0,)),
    }
    for name in ("eq.Tensor", "ne.Tensor", "lt.Tensor", "le.Tensor", "gt.Tensor", "ge.Tensor"):
        table[name] = (op(name), [x, y], (0, 2))
    for name, family in DECLARED.items():
        if family == "pointwise" and name not in table:
            table[name] = unary(name)
    return table


CASES = cases()
RANDOM = {"randn"}  # not comparable sample by sample: tests/test_batching.py::test_randomness_modes


def test_every_declared_rule_has_a_case() -> None:
    assert set(DECLARED) - RANDOM == set(CASES)
    assert set(DECLARED.values()) <= set(RULE_FAMILIES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_rule_equals_the_loop_and_the_forced_fallback(name: str) -> None:
    fn, inputs, in_dims = CASES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a rule, not the fallback
        batched = vmap(fn, in_dims=in_dims)(*inputs)
    expected = stacked(fn, inputs, in_dims)
    close(batched, expected)
    with quiet(), force_fallback():
        close(vmap(fn, in_dims=in_dims)(*inputs), expected)


@pytest.mark.parametrize("name", ["add.Tensor", "matmul", "sum.dim_IntList", "permute", "cat", "where.self"])
def test_rules_nest(name: str) -> None:
    fn, inputs, in_dims = CASES[name]
    # the same inputs with an extra outer batch dimension of 2 in front
    outer = [x if d is None else core.stack([x, x.clone()], 0) for x, d in zip(inputs, in_dims)]
    inner_dims = tuple(None if d is None else d for d in in_dims)
    outer_dims = tuple(None if d is None else 0 for d in in_dims)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = vmap(vmap(fn, in_dims=inner_dims), in_dims=outer_dims)(*outer)
    expected = core.stack(
        [stacked(fn, [x if d is None else core.select(x, 0, j) for x, d in zip(outer, in_dims)], in_dims)
         for j in range(2)], 0)  # fmt: skip
    close(result, expected)


def test_view_rules_keep_aliasing() -> None:
    x = tensor(arr(B, 2, 4))
    vmap(lambda a: op("select.int")(op("transpose.int")(a, 0, 1), 0, 1).fill_(7.0))(x)
    assert (x.numpy()[:, :, 1] == 7.0).all() and (x.numpy()[:, :, 0] != 7.0).all()


def test_dims_are_checked_against_one_sample() -> None:
    x = tensor(arr(B, 2, 4))
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of \[-2, 1\], but got -3\)"):
        vmap(lambda a: a.sum(-3))(x)
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)"):
        vmap(lambda a: op("transpose.int")(a, 0, 2))(x)


MATMUL_0D = r"both arguments to matmul need to be at least 1D, but they are {}D and {}D"


def test_matmul_of_zero_dim_samples_raises_what_each_sample_raises() -> None:
    m = core.arange(6.0).view([2, 3])
    with pytest.raises(RuntimeError, match=MATMUL_0D.format(0, 2)):
        vmap(lambda a: core.matmul(a, m))(tensor([1.0, 1.0]))
    with pytest.raises(RuntimeError, match=MATMUL_0D.format(0, 0)):
        vmap(core.matmul)(tensor([1.0, 2.0]), tensor([3.0, 4.0]))
    with pytest.raises(RuntimeError, match=MATMUL_0D.format(1, 0)):
        vmap(lambda b: core.matmul(tensor([1.0, 2.0]), b))(tensor([1.0, 2.0]))


def test_expand_refuses_minus_one_for_a_new_dimension() -> None:
    x = tensor(arr(B, 3))
    with pytest.raises(VmapError, match=r"expand: -1 is not allowed in a leading, non-existing dimension 0 of a sample \(inside vmap the sample has 1 dimensions\)"):
        vmap(lambda a: op("expand")(a, [-1, 3], implicit=False))(x)
    assert vmap(lambda a: op("expand")(a, [2, -1], implicit=False))(x).shape == (B, 2, 3)


# -- the fallback ------------------------------------------------------------------------------
def test_the_fallback_warns_once_per_op_and_loops() -> None:
    from typedops import op as define

    @define("vmap_rules_test::twice")
    def twice(x: Tensor) -> Tensor:
        return Tensor.from_numpy(x.numpy() * 2)

    x = tensor(arr(B, 4))
    with pytest.warns(UserWarning, match="the batching rule for vmap_rules_test::twice: vmap runs it once per sample"):
        out = vmap(twice)(x)
    np.testing.assert_allclose(out.numpy(), x.numpy() * 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        vmap(twice)(x)  # warned once only


def test_the_fallback_handles_tuple_returns_lists_and_in_place() -> None:
    from typedops import op as define

    @define("vmap_rules_test::parts")
    def parts(xs: list[Tensor]) -> tuple[Tensor, Tensor]:
        total = np.sum([t.numpy() for t in xs], axis=0)
        return Tensor.from_numpy(total), Tensor.from_numpy(total * 0 + len(xs))

    @define("vmap_rules_test::bump", mutates_args=["x"])
    def bump(x: Tensor) -> None:
        x.numpy()[...] += 1

    a, b = tensor(arr(B, 4)), tensor(arr(4))
    with quiet():
        total, count = vmap(lambda p, q: parts([p, q, p]), in_dims=(0, None))(a, b)
    np.testing.assert_allclose(total.numpy(), 2 * a.numpy() + b.numpy(), rtol=1e-6)
    assert count.shape == (B, 4)
    before = a.numpy().copy()
    with quiet():
        with pytest.raises(VmapError, match="fallback path does not support operations with no returns"):
            vmap(bump)(a)
    np.testing.assert_array_equal(a.numpy(), before)


def test_the_fallback_refuses_views_and_unbatched_writes() -> None:
    x = tensor(arr(B, 4, 4))
    with quiet(), pytest.raises(VmapError, match=r"Batching rule not implemented for core::as_strided: the fallback path doesn't work on view ops"):
        vmap(lambda a: op("as_strided")(a, [2], [1], None))(x)
    out = tensor(arr(4, 4))
    with quiet(), pytest.raises(VmapError, match=r"vmap: core::add.out\(self, \*extra_args\) is not possible"):
        vmap(lambda a: op("add.out")(a, a, alpha=1, out=out))(x)


def test_out_variants_write_each_sample() -> None:
    x = tensor(arr(B, 4))
    out = tensor(np.zeros((B, 4), dtype=np.float32))
    with quiet():
        vmap(lambda a, o: op("exp.out")(a, out=o))(x, out)
    np.testing.assert_allclose(out.numpy(), np.exp(x.numpy()), rtol=1e-6)


def test_an_out_variant_that_must_resize_its_sample_is_refused_and_out_is_kept() -> None:
    # Note [Writes that resize]: each sample's out is a view of the batch; resizing it
    # would write across the other samples and leave the batch's shape (silently wrong).
    x = tensor(arr(B, 4))
    out = tensor(np.full((B, 1), 7.0, dtype=np.float32))
    with quiet(), pytest.raises(VmapError) as info:
        vmap(lambda a, o: op("exp.out")(a, out=o))(x, out)
    assert str(info.value) == (
        "Batching rule not implemented for core::exp.out: the fallback path cannot resize a batched out= "
        "tensor per sample (a sample of shape [1] had to be resized). Give out= the per-sample result's "
        "shape, or call the out-of-place op"
    )
    assert out.shape == (B, 1)
    np.testing.assert_array_equal(out.numpy(), np.full((B, 1), 7.0, dtype=np.float32))
    wide = tensor(np.full((B, 6), 3.0, dtype=np.float32))  # a larger sample: resized down, as badly
    with quiet(), pytest.raises(VmapError, match=r"a sample of shape \[6\] had to be resized"):
        vmap(lambda a, o: op("add.out")(a, a, alpha=1, out=o))(x, wide)
    np.testing.assert_array_equal(wide.numpy(), np.full((B, 6), 3.0, dtype=np.float32))


# -- property: random ops, random batch placement --------------------------------------------------
_UNARY = ["neg", "exp", "sigmoid", "tanh", "relu", "abs", "sqrt"]
_SHAPED: dict[str, Callable[[Tensor], Tensor]] = {
    "sum0": lambda a: a.sum(0),
    "sum_keep": lambda a: op("sum.dim_IntList")(a, [-1], True, dtype=None),
    "amax": lambda a: op("amax")(a, [0], False),
    "transpose": lambda a: op("transpose.int")(a, 0, 1),
    "reshape": lambda a: op("reshape")(a, [-1]),
    "unsqueeze": lambda a: op("unsqueeze")(a, 1),
    "matmul_t": lambda a: core.matmul(a, op("transpose.int")(a, 0, 1)),
    "select": lambda a: op("select.int")(a, 1, 0),
    "cat_self": lambda a: op("cat")([a, a], -1),
}


@settings(max_examples=40, deadline=None)
@given(
    steps=st.lists(st.sampled_from(_UNARY + ["add_w", "mul_self"]), min_size=1, max_size=4),
    shaped=st.sampled_from(sorted(_SHAPED)),
    in_dim=st.integers(-3, 2),
    size=st.integers(1, 4),
)
def test_vmap_equals_stacking_the_samples(steps: list[str], shaped: str, in_dim: int, size: int) -> None:
    w = tensor(arr(3))

    def f(a: Tensor) -> Tensor:
        for step in steps:
            a = a + w if step == "add_w" else a * a if step == "mul_self" else op(step)(a)
        return _SHAPED[shaped](a)

    shape = [2, 3]
    shape.insert(in_dim % 3, size)
    x = tensor(arr(*shape))
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("error")  # the fallback's slow-path warning must not fire: rules ran
        result = vmap(f, in_dims=in_dim)(x)
        expected = core.stack([f(core.select(x, in_dim, i)) for i in range(size)], 0)
    close(result, expected)  # exp chains may overflow to inf or nan alike in both (assert_allclose: NaN == NaN)


# -- 0-dim samples: Note [Dims of 0-dim samples] in _view_rules.py ---------------------------
ZERO_DIM_CASES: dict[str, Callable[[Any], Any]] = {
    "squeeze(0)": lambda a: op("squeeze.dim")(a, 0),
    "squeeze(-1)": lambda a: op("squeeze.dim")(a, -1),
    "squeeze(1)": lambda a: op("squeeze.dim")(a, 1),
    "transpose(0, -1)": lambda a: op("transpose.int")(a, 0, -1),
    "transpose(-1, -1)": lambda a: op("transpose.int")(a, -1, -1),
    "transpose(0, 1)": lambda a: op("transpose.int")(a, 0, 1),
    "select(0, 0)": lambda a: op("select.int")(a, 0, 0),
    "slice(0)": lambda a: op("slice.Tensor")(a, 0, 0, 1, 1),
    "unsqueeze(0)": lambda a: op("unsqueeze")(a, 0),
    "unsqueeze(-1)": lambda a: op("unsqueeze")(a, -1),
    "unsqueeze(2)": lambda a: op("unsqueeze")(a, 2),
    "sum([0])": lambda a: op("sum.dim_IntList")(a, [0]),
    "sum([-1], keepdim)": lambda a: op("sum.dim_IntList")(a, [-1], True),
    "sum()": lambda a: op("sum")(a),
    "mean([0])": lambda a: op("mean.dim")(a, [0]),
    "amax([0])": lambda a: op("amax")(a, [0]),
    "max(0)": lambda a: op("max.dim")(a, 0),
    "argmax(0)": lambda a: op("argmax")(a, 0),
    "permute([])": lambda a: op("permute")(a, []),
    "view([1])": lambda a: op("view")(a, [1]),
    "reshape([])": lambda a: op("reshape")(a, []),
    "expand([3])": lambda a: op("expand")(a, [3], implicit=False),
    "flatten": lambda a: op("flatten.using_ints")(a, 0, -1),
    "t": lambda a: op("t")(a),
    "cat": lambda a: op("cat")([a, a], 0),
    "stack": lambda a: op("stack")([a, a], 0),
}


def _outcome(call: Callable[[], Any]) -> Any:
    """A call's result, or its error's type and message."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the fallback's slow-loop warning
            return call()
    except Exception as error:  # noqa: BLE001 -- the error is the outcome compared
        return (type(error), str(error))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(sorted(ZERO_DIM_CASES)), min_size=1, max_size=3), st.integers(1, 3))
def test_vmap_of_zero_dim_samples_equals_the_loop(steps: list[str], size: int) -> None:
    def f(a: Any) -> Any:
        for step in steps:
            a = ZERO_DIM_CASES[step](a)
            a = a[0] if isinstance(a, tuple) else a
        return a

    x = tensor(arr(size))
    ours = _outcome(lambda: vmap(f)(x))
    expected = _outcome(lambda: core.stack([f(core.select(x, 0, i)) for i in range(size)], 0))
    if isinstance(expected, tuple):
        assert ours == expected
    else:
        close(ours, expected)


def test_dim_rules_on_zero_dim_samples_keep_aliasing() -> None:
    x = tensor([1.0, 2.0])
    vmap(lambda a: op("transpose.int")(op("squeeze.dim")(a, 0), 0, -1).add_(tensor(1.0)))(x)
    assert x.tolist() == [2.0, 3.0]


# -- randomness with chunk_size: Note [Same draws across chunks] in _levels.py -----------------
def _draws(a: Any) -> Any:
    return op("randn")([2]) + op("randn")([3]).sum() * 0 + a * 0


@pytest.mark.parametrize("chunk_size", [1, 2, 4])
def test_same_randomness_draws_once_across_chunks(chunk_size: int) -> None:
    from typedops.core.kernels import manual_seed

    manual_seed(5)
    rows = vmap(_draws, randomness="same", chunk_size=chunk_size)(core.zeros([5])).tolist()
    assert all(row == rows[0] for row in rows)
    after = op("randn")([2]).tolist()
    manual_seed(5)
    unchunked = vmap(_draws, randomness="same")(core.zeros([5])).tolist()
    assert rows == unchunked and op("randn")([2]).tolist() == after  # the generator advanced as without chunks


def test_different_randomness_with_chunks_draws_as_without() -> None:
    from typedops.core.kernels import manual_seed

    manual_seed(5)
    chunked = vmap(lambda a: op("randn")([2]) + a * 0, randomness="different", chunk_size=2)(core.zeros([5])).tolist()
    manual_seed(5)
    assert chunked == vmap(lambda a: op("randn")([2]) + a * 0, randomness="different")(core.zeros([5])).tolist()
    assert len({tuple(row) for row in chunked}) == 5
