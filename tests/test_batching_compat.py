"""vmap against torch.vmap (``make compat``): every core op that takes a tensor, called through
``typedops.ops.core`` and ``torch.ops.aten`` (the core schemas are aten's), vmapped over each
tensor argument's batch dimension (0, 1, -1 and None mixes) and nested twice, on the same
data; and the forced fallback on the same calls."""

from __future__ import annotations

import contextlib
import itertools
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from typedops import TypedopsError, ops, tensor, vmap
from typedops.batching import force_fallback
from typedops.vocabulary import MemoryFormat, ScalarType

pytestmark = pytest.mark.compat
torch = pytest.importorskip("torch", reason="compares with PyTorch; needs the compat extra: make compat")

RNG = np.random.default_rng(14)
YAML = Path(__file__).resolve().parent.parent / "typedops" / "core" / "native_functions.yaml"


class T:
    """A tensor argument: a sample of this shape (float32 in (0.1, 0.9), or bool)."""

    def __init__(self, *shape: int, kind: str = "f") -> None:
        self.shape = shape
        self.kind = kind


OUT = "out"  # an out= argument: zeros like the first tensor argument, made inside the function


# op -> (positional arguments, keyword arguments, whether the first tensor is written in place)
Case = tuple[list[Any], dict[str, Any], bool]
CASES: dict[str, Case] = {
    "add.Tensor": ([T(2, 3), T(3)], {"alpha": 2}, False),
    "add_.Tensor": ([T(2, 3), T(3)], {"alpha": 2}, True),
    "add.out": ([T(2, 3), T(2, 3)], {"alpha": 1, "out": OUT}, False),
    "add.Scalar": ([T(2, 3), 1.5, 2], {}, False),
    "sub.Tensor": ([T(3), T(2, 3)], {"alpha": 1}, False),
    "sub_.Tensor": ([T(2, 3), T(2, 3)], {"alpha": 1}, True),
    "sub.out": ([T(2, 3), T(2, 3)], {"alpha": 1, "out": OUT}, False),
    "mul.Tensor": ([T(2, 3), T(2, 1)], {}, False),
    "mul_.Tensor": ([T(2, 3), T(3)], {}, True),
    "mul.out": ([T(2, 3), T(2, 3)], {"out": OUT}, False),
    "mul.Scalar": ([T(2, 3), 3], {}, False),
    "div.Tensor": ([T(2, 3), T(3)], {}, False),
    "div_.Tensor": ([T(2, 3), T(3)], {}, True),
    "div.out": ([T(2, 3), T(2, 3)], {"out": OUT}, False),
    "pow.Tensor_Scalar": ([T(2, 3), 2], {}, False),
    "floor_divide": ([T(2, 3), T(3)], {}, False),
    "floor_divide.Scalar": ([T(2, 3), 0.25], {}, False),
    "remainder.Tensor": ([T(2, 3), T(3)], {}, False),
    "remainder.Scalar": ([T(2, 3), 0.25], {}, False),
    "floor_divide_.Tensor": ([T(2, 3), T(3)], {}, True),
    "floor_divide_.Scalar": ([T(2, 3), 0.25], {}, True),
    "remainder_.Tensor": ([T(2, 3), T(3)], {}, True),
    "remainder_.Scalar": ([T(2, 3), 0.25], {}, True),
    "maximum": ([T(2, 3), T(3)], {}, False),
    "minimum": ([T(2, 3), T(3)], {}, False),
    "max.other": ([T(2, 3), T(3)], {}, False),
    "bitwise_and.Tensor": ([T(2, 3, kind="b"), T(3, kind="b")], {}, False),
    "bitwise_or.Tensor": ([T(2, 3, kind="b"), T(3, kind="b")], {}, False),
    "bitwise_xor.Tensor": ([T(2, 3, kind="b"), T(3, kind="b")], {}, False),
    "bitwise_not": ([T(2, 3, kind="b")], {}, False),
    **{f"bitwise_{n}_.Tensor": ([T(2, 3, kind="b"), T(3, kind="b")], {}, True) for n in ("and", "or", "xor")},
    **{f"bitwise_{n}.Scalar": ([T(2, 3, kind="b"), True], {}, False) for n in ("and", "or", "xor")},
    "pow_.Scalar": ([T(2, 3), 2], {}, True),
    "masked_fill.Scalar": ([T(2, 3), T(3, kind="b"), -1.5], {}, False),
    "flip": ([T(2, 3, 4)], {"dims": [0, -1]}, False),
    "new_zeros": ([T(2, 3), [4, 1]], {}, False),
    "new_ones": ([T(2, 3), [2]], {}, False),
    "new_full": ([T(2, 3), [3], 1.5], {}, False),
    "masked_fill_.Scalar": ([T(2, 3), T(3, kind="b"), -1.5], {}, True),
    "pow_.Tensor": ([T(2, 3), T(3)], {}, True),
    "pow.Tensor_Tensor": ([T(2, 3), T(3)], {}, False),
    "clamp": ([T(2, 3), 0.3, 0.7], {}, False),
    "softmax.int": ([T(2, 3), 1], {"dtype": None}, False),
    "all": ([T(2, 3, kind="b")], {}, False),
    "any": ([T(2, 3, kind="b")], {}, False),
    "all.dim": ([T(2, 3, kind="b"), 1, False], {}, False),
    "any.dim": ([T(2, 3, kind="b"), -1, True], {}, False),
    "log_softmax.int": ([T(2, 3), -1], {"dtype": None}, False),
    "min.other": ([T(2, 3), T(3)], {}, False),
    "neg": ([T(2, 3)], {}, False),
    "abs": ([T(2, 3)], {}, False),
    "relu": ([T(2, 3)], {}, False),
    "threshold_backward": ([T(2, 3), T(3), 0.5], {}, False),
    "fill_.Scalar": ([T(2, 3), 2.5], {}, True),
    "zero_": ([T(2, 3)], {}, True),
    "eq.Scalar": ([T(2, 3), 0.5], {}, False),
    "gt.Scalar": ([T(2, 3), 0.5], {}, False),
    "where.self": ([T(2, 3, kind="b"), T(2, 3), T(3)], {}, False),
    "add_.Scalar": ([T(2, 3), 1.5, 2], {}, True),
    "sub.Scalar": ([T(2, 3), 1.5, 2], {}, False),
    "sub_.Scalar": ([T(2, 3), 2], {}, True),
    "mul_.Scalar": ([T(2, 3), 3], {}, True),
    "div.Scalar": ([T(2, 3), 4], {}, False),
    "div_.Scalar": ([T(2, 3), 0.5], {}, True),
    "ne.Scalar": ([T(2, 3), 0.5], {}, False),
    "lt.Scalar": ([T(2, 3), 0.5], {}, False),
    "le.Scalar": ([T(2, 3), 0.5], {}, False),
    "ge.Scalar": ([T(2, 3), 0.5], {}, False),
    "where.ScalarSelf": ([T(2, 3, kind="b"), 2.0, T(3)], {}, False),
    "where.ScalarOther": ([T(2, 3, kind="b"), T(2, 3), 0], {}, False),
    "where.Scalar": ([T(2, 3, kind="b"), 1.0, 0.0], {}, False),
    "sum": ([T(2, 3)], {"dtype": None}, False),
    "sum.dim_IntList": ([T(2, 3, 4), [0, -1], True], {"dtype": None}, False),
    # the out tensor is made like the input: a reduction over size-1 dims keeps its shape
    # (under vmap, the fallback cannot resize a batched out=; torch.vmap refuses out= ops)
    "sum.IntList_out": ([T(2, 1, 3, 1), [1, -1], True], {"dtype": None, "out": OUT}, False),
    "mean": ([T(2, 3)], {"dtype": None}, False),
    "mean.dim": ([T(2, 3), [1], False], {"dtype": None}, False),
    "amax": ([T(2, 3), [], False], {}, False),
    "max.dim": ([T(2, 3), -1, True], {}, False),
    "max": ([T(2, 3)], {}, False),
    "min": ([T(2, 3)], {}, False),
    "min.dim": ([T(2, 3), 0, False], {}, False),
    "argmax": ([T(2, 3), None, False], {}, False),
    "matmul": ([T(2, 3), T(3, 4)], {}, False),
    "mm": ([T(2, 3), T(3, 4)], {}, False),
    "detach": ([T(2, 3)], {}, False),
    "view": ([T(2, 3), [3, 2]], {}, False),
    "reshape": ([T(2, 3), [-1]], {}, False),
    "permute": ([T(2, 3, 4), [2, 0, 1]], {}, False),
    "transpose.int": ([T(2, 3), 0, 1], {}, False),
    "t": ([T(2, 3)], {}, False),
    "select.int": ([T(2, 3), 1, -1], {}, False),
    "slice.Tensor": ([T(2, 5), 1, 1, 4, 2], {}, False),
    "unsqueeze": ([T(2, 3), 1], {}, False),
    "squeeze.dim": ([T(2, 1, 3), 1], {}, False),
    "squeeze": ([T(2, 1, 3, 1)], {}, False),
    "expand": ([T(3, 1), [2, 3, 4]], {"implicit": False}, False),
    "flatten.using_ints": ([T(2, 3, 4), 1, 2], {}, False),
    "contiguous": ([T(2, 3)], {"memory_format": MemoryFormat.contiguous_format}, False),
    "clone": ([T(2, 3)], {"memory_format": None}, False),
    "copy_": ([T(2, 3), T(3), False], {}, True),
    "cat": ([[T(2, 3), T(1, 3)], 0], {}, False),
    "stack": ([[T(2, 3), T(2, 3)], -1], {}, False),
    "zeros_like": ([T(2, 3)], {"dtype": None, "layout": None, "device": None, "pin_memory": None,
                               "memory_format": None}, False),  # fmt: skip
    "ones_like": ([T(2, 3)], {"dtype": None, "layout": None, "device": None, "pin_memory": None,
                              "memory_format": None}, False),  # fmt: skip
    "full_like": ([T(2, 3), 2.5], {"dtype": None, "layout": None, "device": None, "pin_memory": None,
                                   "memory_format": None}, False),  # fmt: skip
    "_to_copy": ([T(2, 3)], {"dtype": ScalarType.float64}, False),
    "to.dtype": ([T(2, 3), ScalarType.float64, False, False, None], {}, False),
}
for _name in ("eq.Tensor", "ne.Tensor", "lt.Tensor", "le.Tensor", "gt.Tensor", "ge.Tensor"):
    CASES[_name] = ([T(2, 3), T(3)], {}, False)
_UNARY = ("exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "reciprocal", "sigmoid", "sin",
          "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh")  # fmt: skip
for _name in _UNARY:
    CASES[_name] = ([T(2, 3)], {}, False)
    CASES[f"{_name}_"] = ([T(2, 3)], {}, True)
    CASES[f"{_name}.out"] = ([T(2, 3)], {"out": OUT}, False)

# Core ops left out, and why.
LEFT_OUT = {
    "remainder.Scalar_Tensor": "its tensor is its second argument: compared through remainder.Tensor, which it calls",
    "pow.Scalar": "its tensor is its second argument: compared through pow.Tensor_Tensor, which it calls",
    **{f"bitwise_{n}.Scalar_Tensor": f"its tensor is its second argument: compared through bitwise_{n}.Tensor, which it calls"
       for n in ("and", "or", "xor")},
    **{name: "torch.vmap raises on some placements (the tensor batched at -1, or only the mask batched) where "
             "the per-sample result exists: compared with the loop in tests/test_batching.py"
       for name in ("masked_fill.Tensor", "masked_fill_.Tensor")},
    **{name: "its indices are a Tensor?[] list, which this table's maker cannot batch: compared per sample in "
             "tests/test_batching.py" for name in ("index.Tensor", "index_put", "index_put_")},
    **{name: "torch.vmap refuses it (no batching rule for this out= op); the for-loop fallback runs it here"
       for name in ("floor_divide.out", "remainder.Tensor_out", "remainder.Scalar_out")},
    "new_empty": "its values are uninitialized in torch; its shape and dtype are new_zeros' (compared)",
    "empty_like": "its values are uninitialized in torch: its shapes under vmap are tests/test_batching_rules.py's",
    "as_strided": "refused under vmap: no rule, and the fallback refuses views (docs/vmap.md)",
    "randn": "random: compared by its randomness modes in tests/test_batching.py",
    **{name: "a factory: no tensor argument to map over" for name in (
        "empty.memory_format", "empty_strided", "zeros", "ones", "full", "scalar_tensor", "arange", "arange.start_step", "eye", "eye.m",
        "linspace")},
}  # fmt: skip


def test_every_core_op_is_compared_or_left_out_with_a_reason() -> None:
    names = {e["func"].partition("(")[0] for e in yaml.safe_load(YAML.read_text())}
    assert names == set(CASES) | set(LEFT_OUT)


def _tensors(args: list[Any]) -> list[T]:
    found: list[T] = []
    for a in args:
        if isinstance(a, T):
            found.append(a)
        elif isinstance(a, list):
            found.extend(x for x in a if isinstance(x, T))
    return found


def _placements(count: int) -> list[tuple[int | None, ...]]:
    """Batch dims for ``count`` tensor arguments: all 0, all 1, all -1, one batched among
    unbatched ones, and one unbatched among batched ones."""
    found: list[tuple[int | None, ...]] = [(0,) * count, (1,) * count, (-1,) * count]
    for i in range(count):
        found.append(tuple(d if j == i else None for j in range(count) for d in [0 if i % 2 else -1]))
        if count > 1:
            found.append(tuple(None if j == i else 1 for j in range(count)))
    return list(dict.fromkeys(found))


def _physical(sample: np.ndarray[Any, Any], dims: list[int | None], sizes: list[int]) -> np.ndarray[Any, Any]:
    """``sample`` repeated (with changes) over batch dims inserted innermost level first."""
    data = sample
    for d, size in zip(dims, sizes):
        if d is None:
            continue
        stacked = np.stack([data * (1 + 0.1 * k) if data.dtype != bool else np.roll(data, k) for k in range(size)])
        data = np.moveaxis(stacked, 0, d if d >= 0 else data.ndim + 1 + d)
    return data


def _convert(value: Any) -> Any:
    if isinstance(value, ScalarType):
        return getattr(torch, value.name)
    if isinstance(value, MemoryFormat):
        return getattr(torch, value.name)
    return value


def _function(name: str, args: list[Any], kwargs: dict[str, Any], inplace: bool, lib: str) -> Callable[..., Any]:
    base, _, overload = name.partition(".")
    writes_out = kwargs.get("out") == OUT
    if lib == "torch" and writes_out:
        # torch.vmap refuses out= ops ("the fallback path doesn't work on out= or view ops"):
        # compare with its functional op, which computes the same values.
        overload = "Tensor" if base in ("add", "sub", "mul", "div") else "dim_IntList" if base == "sum" else ""
        kwargs = {k: v for k, v in kwargs.items() if k != "out"}
    handle = getattr(getattr(ops.core if lib == "typedops" else torch.ops.aten, base), overload or "default")

    def f(*tensors: Any) -> Any:
        it = iter(tensors)

        def fill(a: Any) -> Any:
            if isinstance(a, T):
                return next(it)
            if isinstance(a, list):
                return [fill(x) for x in a]
            return a if lib == "typedops" else _convert(a)

        call_args = [fill(a) for a in args]
        call_kwargs = {k: fill(v) for k, v in kwargs.items()}
        first = tensors[0]
        if inplace:
            call_args[0] = call_args[0].clone()
        if call_kwargs.get("out") == OUT:
            call_kwargs["out"] = first * 0 if lib == "typedops" else torch.zeros_like(first)
        return handle(*call_args, **call_kwargs)

    return f


def _compare(ours: Any, theirs: Any) -> None:
    if isinstance(theirs, (tuple, list)):
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            _compare(a, b)
        return
    expected = theirs.detach().numpy()
    assert ours.shape == expected.shape
    assert ours.dtype.name == str(theirs.dtype).removeprefix("torch.")
    np.testing.assert_allclose(ours.numpy(), expected, rtol=1e-5, atol=1e-6)


def _run(name: str, dims_per_level: list[tuple[int | None, ...]], sizes: list[int], fallback: bool = False) -> None:
    args, kwargs, inplace = CASES[name]
    samples = [RNG.uniform(0.1, 0.9, size=t.shape) > 0.5 if t.kind == "b" else
               RNG.uniform(0.1, 0.9, size=t.shape).astype(np.float32) for t in _tensors(args)]  # fmt: skip
    physical = [_physical(s, [dims[i] for dims in dims_per_level], sizes) for i, s in enumerate(samples)]
    ours_fn, theirs_fn = _function(name, args, kwargs, inplace, "typedops"), _function(name, args, kwargs, inplace, "torch")
    ours_v, theirs_v = ours_fn, theirs_fn
    for dims in dims_per_level:
        ours_v = vmap(ours_v, in_dims=dims)
        theirs_v = torch.vmap(theirs_v, in_dims=dims)
    out_unbatched = kwargs.get("out") == OUT and dims_per_level[0][0] is None
    try:
        theirs = theirs_v(*(torch.from_numpy(np.ascontiguousarray(p)) for p in physical))
    except RuntimeError:
        theirs = None  # then ours must refuse too (an in-place write into an unbatched tensor, a view)
    if out_unbatched:
        theirs = None  # out= like an unbatched input: torch refuses such writes, so must we
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with force_fallback() if fallback else contextlib.nullcontext():
            if theirs is None:
                with pytest.raises(TypedopsError):
                    ours_v(*(tensor(p) for p in physical))
                return
            ours = ours_v(*(tensor(p) for p in physical))
    _compare(ours, theirs)


def _valid(name: str, dims: tuple[int | None, ...]) -> bool:
    return any(d is not None for d in dims) and not (1 in dims and any(len(t.shape) == 0 for t in _tensors(CASES[name][0])))


PARAMS = [(name, dims) for name in sorted(CASES) for dims in _placements(len(_tensors(CASES[name][0]))) if _valid(name, dims)]


@pytest.mark.parametrize(("name", "dims"), PARAMS, ids=[f"{n}-{d}" for n, d in PARAMS])
def test_vmap_equals_torch_vmap(name: str, dims: tuple[int | None, ...]) -> None:
    _run(name, [dims], [3])


@pytest.mark.parametrize("name", sorted(CASES))
def test_nested_twice_equals_torch_vmap(name: str) -> None:
    count = len(_tensors(CASES[name][0]))
    inner = (0,) * count
    outer = tuple(-1 if i % 2 == 0 else None for i in range(count)) if count > 1 else (-1,)
    _run(name, [inner, outer], [2, 3])
    for first, second in itertools.islice(itertools.product(_placements(count), repeat=2), 0, 4):
        if _valid(name, first) and _valid(name, second):
            _run(name, [first, second], [2, 3])


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_forced_fallback_equals_torch_vmap(name: str) -> None:
    count = len(_tensors(CASES[name][0]))
    _run(name, [(0,) * count], [3], fallback=True)


def test_backward_through_vmap_equals_torch() -> None:
    x = RNG.uniform(-1, 1, size=(5, 3)).astype(np.float32)
    w = RNG.uniform(-1, 1, size=(3, 4)).astype(np.float32)
    b = RNG.uniform(-1, 1, size=(4,)).astype(np.float32)

    def loss_with(matmul: Callable[[Any, Any], Any]) -> Callable[..., Any]:
        def loss(sample: Any, weight: Any, bias: Any) -> Any:
            return ((matmul(sample, weight) + bias).tanh() * matmul(sample, weight)).sum(0)

        return loss

    ours_w, ours_b = tensor(w, requires_grad=True), tensor(b, requires_grad=True)
    ours_loss = loss_with(ops.core.matmul.default)
    vmap(ours_loss, in_dims=(0, None, None))(tensor(x), ours_w, ours_b).sum().backward()
    theirs_w, theirs_b = torch.from_numpy(w).requires_grad_(), torch.from_numpy(b).requires_grad_()
    theirs_loss = loss_with(torch.matmul)
    torch.vmap(theirs_loss, in_dims=(0, None, None))(torch.from_numpy(x), theirs_w, theirs_b).sum().backward()
    assert ours_w.grad is not None and ours_b.grad is not None
    _compare(ours_w.grad, theirs_w.grad)
    _compare(ours_b.grad, theirs_b.grad)


@pytest.mark.parametrize(("left", "right"), [("float64", "float32"), ("int64", "float32"), ("float32", "int64")])
def test_zero_dim_samples_promote_like_torch(left: str, right: str) -> None:
    scalars = np.array([1, 2, 3]).astype(left)  # a batch of 0-dim samples
    vector = np.array([0.5, 1.5]).astype(right)

    def f(mul: Callable[[Any, Any], Any], vec: Any) -> Callable[[Any], Any]:
        return lambda s: mul(s, vec)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = vmap(f(ops.core.mul.Tensor, tensor(vector)))(tensor(scalars))
    theirs = torch.vmap(f(torch.mul, torch.from_numpy(vector)))(torch.from_numpy(scalars))
    _compare(ours, theirs)


@pytest.mark.parametrize("case", ["sample @ matrix", "sample @ sample", "vector @ sample"])
def test_matmul_of_zero_dim_samples_raises_like_torch(case: str) -> None:
    def run(matmul: Callable[[Any, Any], Any], make: Callable[[Any], Any], vmap_: Callable[..., Any]) -> str:
        m, v, s = make(np.arange(6.0).reshape(2, 3)), make(np.array([1.0, 2.0])), make(np.array([3.0, 4.0]))
        fns: dict[str, tuple[Callable[..., Any], tuple[Any, ...]]] = {
            "sample @ matrix": (lambda a: matmul(a, m), (s,)),
            "sample @ sample": (matmul, (s, v)),
            "vector @ sample": (lambda b: matmul(v, b), (s,)),
        }
        fn, args = fns[case]
        with pytest.raises(RuntimeError) as info:
            vmap_(fn)(*args)
        return str(info.value)

    assert run(ops.core.matmul.default, tensor, vmap) == run(torch.matmul, torch.from_numpy, torch.vmap)


ZERO_DIM_STEPS: dict[str, tuple[Callable[[Any], Any], Callable[[Any], Any]]] = {
    "squeeze(0)": (lambda a: ops.core.squeeze.dim(a, 0), lambda a: a.squeeze(0)),
    "squeeze(-1)": (lambda a: ops.core.squeeze.dim(a, -1), lambda a: a.squeeze(-1)),
    "transpose(0, -1)": (lambda a: ops.core.transpose.int(a, 0, -1), lambda a: a.transpose(0, -1)),
    "transpose(0, 1)": (lambda a: ops.core.transpose.int(a, 0, 1), lambda a: a.transpose(0, 1)),
    "select(0, 0)": (lambda a: ops.core.select.int(a, 0, 0), lambda a: a.select(0, 0)),
    "unsqueeze(-1)": (lambda a: ops.core.unsqueeze.default(a, -1), lambda a: a.unsqueeze(-1)),
    "sum([0])": (lambda a: ops.core.sum.dim_IntList(a, [0]), lambda a: a.sum([0])),
    "mean([-1])": (lambda a: ops.core.mean.dim(a, [-1]), lambda a: a.mean([-1])),
    "amax([0])": (lambda a: ops.core.amax.default(a, [0]), lambda a: a.amax([0])),
    "permute([])": (lambda a: ops.core.permute.default(a, []), lambda a: a.permute([])),
    "cat": (lambda a: ops.core.cat.default([a, a], 0), lambda a: torch.cat([a, a], 0)),
}


def _ours(fn: Callable[[Any], Any], x: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the fallback's slow-loop warning (reductions of 0-dim samples)
        return vmap(fn)(tensor(x))


@pytest.mark.parametrize("step", sorted(ZERO_DIM_STEPS))
def test_vmap_of_zero_dim_samples_equals_torch(step: str) -> None:
    """Against torch's own loop over the samples, and torch.vmap where it agrees with that
    loop (torch.vmap raises for squeeze(-1) of a 0-dim sample, which torch itself takes)."""
    ours_fn, theirs_fn = ZERO_DIM_STEPS[step]
    x = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    try:
        theirs = torch.stack([theirs_fn(s) for s in torch.from_numpy(x)])
    except (RuntimeError, IndexError):
        with pytest.raises((RuntimeError, IndexError)):
            _ours(ours_fn, x)
        with pytest.raises((RuntimeError, IndexError)):
            torch.vmap(theirs_fn)(torch.from_numpy(x))
        return
    ours = _ours(ours_fn, x)
    _compare(ours, theirs)
    if step != "squeeze(-1)":
        _compare(ours, torch.vmap(theirs_fn)(torch.from_numpy(x)))


@pytest.mark.parametrize("randomness", ["same", "different"])
def test_chunked_randomness_matches_torch_in_kind(randomness: str) -> None:
    """The generators differ, so: which rows are equal, and chunked equal to unchunked."""

    def rows(run: Callable[..., Any], seed: Callable[[int], Any], randn: Callable[[list[int]], Any], zeros: Any, chunk: int | None) -> list[tuple[float, ...]]:
        seed(0)
        return [tuple(r) for r in run(lambda a: randn([2]) + a * 0, randomness=randomness, chunk_size=chunk)(zeros).tolist()]

    from typedops.core.kernels import manual_seed

    ours = [rows(vmap, manual_seed, ops.core.randn.default, ops.core.zeros.default([4]), c) for c in (1, 3, None)]
    theirs = [rows(torch.vmap, torch.manual_seed, lambda s: torch.randn(s), torch.zeros(4), c) for c in (1, 3, None)]
    for o, t in zip(ours, theirs):
        assert len(set(o)) == len(set(t))
    assert (ours[0] == ours[1] == ours[2]) == (theirs[0] == theirs[1] == theirs[2])
