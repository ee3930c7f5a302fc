"""The torch-like Tensor API against torch 2.13 (make compat): numpy() of a tensor that
requires grad, truth and number conversions, Python types as dtypes, sizes as varargs."""

from __future__ import annotations

import contextlib
import math
import operator
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import typedops
from typedops import ScalarType, core, tensor
from typedops.tensor import DTYPE_CONVERSIONS

pytestmark = pytest.mark.compat
torch = pytest.importorskip("torch", reason="compares with PyTorch; needs the compat extra: make compat")


def _outcome(call: Any) -> tuple[str, Any]:
    """What ``call()`` gives: ('value', result) or ('error', the builtin classes it raises)."""
    try:
        return "value", call()
    except Exception as e:  # noqa: BLE001 -- we compare what each library raises
        builtins = (TypeError, ValueError, RuntimeError, OverflowError, IndexError)
        return "error", tuple(b.__name__ for b in builtins if isinstance(e, b))


def test_numpy_of_a_tensor_that_requires_grad_fails_as_torchs() -> None:
    ours = tensor([1.0], requires_grad=True)
    theirs = torch.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError) as a:
        ours.numpy()
    with pytest.raises(RuntimeError) as b:
        theirs.numpy()
    assert str(a.value) == str(b.value)
    assert ours.numpy(force=True).tolist() == theirs.numpy(force=True).tolist()
    with typedops.no_grad(), torch.no_grad():
        assert ours.numpy().tolist() == theirs.numpy().tolist()


def test_truth_of_empty_and_long_tensors_fails_as_torchs() -> None:
    for size in ([0], [2]):
        with pytest.raises(RuntimeError) as a:
            bool(core.ones(size))
        with pytest.raises(RuntimeError) as b:
            bool(torch.ones(size))
        assert str(a.value).startswith(str(b.value))


_VALUES: list[tuple[list[Any], str]] = [
    ([2.5], "float32"), ([-2.7], "float64"), ([[3]], "int64"), ([7], "int32"), ([True], "bool"), ([0.5], "float16"),
    ([1.5 + 0j], "complex64"), ([1.5 + 2j], "complex128"), ([math.nan], "float32"), ([math.inf], "float64"),
    ([1.0, 2.0], "float32"), ([1, 2], "int64"), ([], "float32"), ([], "int64"),
]  # fmt: skip


@pytest.mark.parametrize("convert", [float, int, complex, operator.index, bool])
@pytest.mark.parametrize(("data", "dtype"), _VALUES)
def test_number_conversions_match_torch(convert: Any, data: list[Any], dtype: str) -> None:
    ours = _outcome(lambda: convert(tensor(data, dtype=ScalarType[dtype])))
    theirs = _outcome(lambda: convert(torch.tensor(data, dtype=getattr(torch, dtype))))
    assert ours[0] == theirs[0]
    if ours[0] == "value":
        assert type(ours[1]) is type(theirs[1]) and repr(ours[1]) == repr(theirs[1])  # repr: nan is nan
    else:  # ours is also every builtin torch's is (int(inf): an OverflowError that is a ValueError too)
        assert set(theirs[1]) <= set(ours[1])


@pytest.mark.parametrize("given", [float, int, bool, complex])
def test_python_types_as_dtypes_match_torch(given: type) -> None:
    x, tx = core.ones([2, 3]), torch.ones([2, 3])
    pairs = [
        (core.ones([2], dtype=given), torch.ones([2], dtype=given)),
        (core.zeros([2], dtype=given), torch.zeros([2], dtype=given)),
        (core.full([2], 1, dtype=given), torch.full([2], 1, dtype=given)),
        (core.arange(3, dtype=given), torch.arange(3, dtype=given)) if given in (int, float) else (x, tx),
        (core.sum(x, dtype=given), torch.sum(tx, dtype=given)),
        (x.to(given), tx.to(given)),
        (tensor([1, 0], dtype=given), torch.tensor([1, 0], dtype=given)),
    ]
    for ours, theirs in pairs:
        assert ours.dtype.name == str(theirs.dtype).removeprefix("torch.")
        assert ours.tolist() == theirs.tolist()


@pytest.mark.parametrize(
    "call",
    [
        lambda x: x.view(2, 12), lambda x: x.view(24), lambda x: x.view([3, 8]), lambda x: x.view(-1, 4),
        lambda x: x.reshape(3, 8), lambda x: x.reshape(-1), lambda x: x.reshape((6, 4)),
        lambda x: x.permute(1, 0), lambda x: x.permute([1, 0]), lambda x: x.expand(2, 4, 6),
        lambda x: x.expand([2, -1, 6]), lambda x: x.view(5), lambda x: x.view(2.5), lambda x: x.permute(0),
    ],
)  # fmt: skip
def test_sizes_as_varargs_match_torch(call: Any) -> None:
    ours = _outcome(lambda: call(core.ones([4, 6])))
    theirs = _outcome(lambda: call(torch.ones([4, 6])))
    if ours[0] == theirs[0] == "value":
        assert ours[1].shape == tuple(theirs[1].shape)
    else:
        assert ours == theirs


_REDUCTIONS: list[tuple[str, Any]] = [
    ("max()", lambda x: x.max()), ("min()", lambda x: x.min()), ("core.max(x)", lambda x: (core if isinstance(x, typedops.Tensor) else torch).max(x)),
    ("min(1)", lambda x: x.min(1)), ("min(-1, True)", lambda x: x.min(-1, True)), ("max(0)", lambda x: x.max(0)),
    ("squeeze()", lambda x: x.squeeze()), ("squeeze(1)", lambda x: x.squeeze(1)),
    ("max(x * 2)", lambda x: x.max(x * 2)), ("min(other=x * 2)", lambda x: x.min(other=x * 2)),
    ("core.max(x, 1).values", lambda x: (core if isinstance(x, typedops.Tensor) else torch).max(x, 1).values),
    ("min(0).indices", lambda x: x.min(0).indices),
]  # fmt: skip


@pytest.mark.parametrize(("name", "call"), _REDUCTIONS, ids=[n for n, _ in _REDUCTIONS])
@pytest.mark.parametrize(
    "data",
    [[[1.0, 5.0, 5.0], [2.0, -1.0, 0.0]], [[3, 1, 2]], [[True, False]], [[1.0, math.nan]], [[2.5]], [[1 + 1j, 2j]],
     [[]]],
    ids=["float", "int", "bool", "nan", "one", "complex", "empty"],
)  # fmt: skip
def test_max_min_and_squeeze_match_torch(name: str, call: Any, data: Any) -> None:
    ours = _outcome(lambda: call(tensor(data)))
    theirs = _outcome(lambda: call(torch.tensor(data)))
    assert ours[0] == theirs[0], (ours, theirs)
    if ours[0] == "error":
        return  # (complex: torch raises NotImplementedError or RuntimeError, ours UnsupportedError)
    mine = ours[1] if isinstance(ours[1], tuple) else (ours[1],)
    other = theirs[1] if isinstance(theirs[1], tuple) else (theirs[1],)
    for a, b in zip(mine, other, strict=True):
        assert a.shape == tuple(b.shape) and a.dtype.name == str(b.dtype).removeprefix("torch.")
        assert repr(a.tolist()) == repr(b.tolist())


def test_core_max_and_min_of_every_element_match_torch() -> None:
    x = [[1.0, 7.0], [-3.0, 2.0]]
    assert core.max(tensor(x)).item() == torch.max(torch.tensor(x)).item()
    assert core.min(tensor(x)).item() == torch.min(torch.tensor(x)).item()
    assert core.squeeze(core.ones([1, 2, 1])).shape == tuple(torch.squeeze(torch.ones([1, 2, 1])).shape)


@pytest.mark.parametrize(
    ("dim", "keepdim", "dtype", "out_dtype", "out_shape"),
    [
        (0, False, None, "float32", [3]), ([0, 1], True, None, "float32", [1, 1]), (1, False, None, "int64", [2]),
        (1, False, "float64", "float64", [2]), (1, False, None, "float32", [5]), (-1, True, None, "float64", [0]),
    ],
)  # fmt: skip
def test_sum_into_out_matches_torch(dim: Any, keepdim: bool, dtype: str | None, out_dtype: str, out_shape: list[int]) -> None:
    data = [[1.5, 2.0, -1.0], [0.25, 3.0, 4.0]]
    out = core.zeros(out_shape, dtype=ScalarType[out_dtype])
    t_out = torch.zeros(out_shape, dtype=getattr(torch, out_dtype))
    chosen = None if dtype is None else ScalarType[dtype]
    with pytest.warns(UserWarning) if out_shape == [5] else contextlib.nullcontext():  # torch warns when it resizes
        theirs = torch.sum(torch.tensor(data), dim, keepdim, dtype=None if dtype is None else getattr(torch, dtype), out=t_out)
    ours = core.sum(tensor(data), dim, keepdim, dtype=chosen, out=out)
    assert ours is out and theirs is t_out
    assert out.shape == tuple(t_out.shape) and out.dtype.name == out_dtype and out.tolist() == t_out.tolist()


def test_sum_into_out_of_another_dtype_than_dtype_fails_as_torchs() -> None:
    with pytest.raises(RuntimeError) as a:
        core.sum(core.ones([2, 3]), 0, dtype=ScalarType.float64, out=core.zeros([3]))
    with pytest.raises(RuntimeError) as b:
        torch.sum(torch.ones([2, 3]), 0, dtype=torch.float64, out=torch.zeros([3]))
    assert str(a.value).startswith(str(b.value).replace("double", "float64").replace("float instead", "float32 instead"))


_DIVISIONS: list[tuple[list[Any], list[Any]]] = [
    ([5, -7, 3, -4, 0], [2, 2, -2, -3, 5]), ([5.5, -7.5, 3.0, -0.0, 1.0], [2.0, 2.0, -2.0, 3.0, 0.0]),
    ([5, 6], [1, 0]), ([True], [True]), ([1j], [2j]),
]  # fmt: skip


@pytest.mark.parametrize(("a", "b"), _DIVISIONS)
@pytest.mark.parametrize(
    "call",
    [lambda a, b: a // b, lambda a, b: a % b, lambda a, b: a // 2, lambda a, b: a % -3, lambda a, b: 7 // b,
     lambda a, b: 7 % b, lambda a, b: a // 2.5, lambda a, b: a % 0.75],
)  # fmt: skip
def test_floor_division_and_remainder_match_torch(a: list[Any], b: list[Any], call: Any) -> None:
    ours = _outcome(lambda: call(tensor(a), tensor(b)))
    theirs = _outcome(lambda: call(torch.tensor(a), torch.tensor(b)))
    assert ours[0] == theirs[0], (ours, theirs)
    if ours[0] == "value":
        assert ours[1].dtype.name == str(theirs[1].dtype).removeprefix("torch.")
        assert repr(ours[1].tolist()) == repr(theirs[1].tolist())


@pytest.mark.parametrize("name", ["max", "min"])
def test_per_sample_gradients_of_max_and_min_match_torch(name: str) -> None:
    """Under vmap too, the gradient of max()/min() is shared among the ties."""
    import warnings

    from typedops import vmap
    from typedops.func import grad

    data = [[1.0, 5.0, 5.0], [2.0, -1.0, -1.0], [0.5, 0.5, 0.5]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the for-loop fallback's performance warning
        ours = vmap(grad(lambda t: getattr(t, name)()))(tensor(data))
    theirs = torch.func.vmap(torch.func.grad(lambda t: getattr(t, name)()))(torch.tensor(data))
    assert ours.tolist() == theirs.tolist()


@pytest.mark.parametrize("op", ["//=", "%="])
@pytest.mark.parametrize(("a", "b"), [([5, -7, 3], [2, 2, -2]), ([5.5, -7.5, -0.0], [2.0, -2.0, 3.0]), ([1, 2], 2.5)])
def test_in_place_floor_division_and_remainder_match_torch(op: str, a: list[Any], b: Any) -> None:
    def run(lib: Any) -> tuple[str, Any]:
        x = lib.tensor(a)
        y = lib.tensor(b) if isinstance(b, list) else b
        def call() -> Any:
            nonlocal x
            if op == "//=":
                x //= y
            else:
                x %= y
            return x
        return _outcome(call)

    ours, theirs = run(typedops), run(torch)
    assert ours[0] == theirs[0]
    if ours[0] == "value":
        assert repr(ours[1].tolist()) == repr(theirs[1].tolist())


@settings(max_examples=200, deadline=None)
@given(
    shape=st.lists(st.sampled_from([0, 1, 2, 3]), min_size=0, max_size=4),
    data=st.data(),
    meta=st.booleans(),
)
def test_squeeze_keeps_the_kept_dims_strides_as_torch_does(shape: list[int], data: Any, meta: bool) -> None:
    # Empty and strided tensors too: squeeze() is one squeeze.dim per size-1 dim, not a view.
    strides = [data.draw(st.integers(0, 7)) for _ in shape]
    theirs = torch.as_strided(torch.zeros(64), shape, strides).squeeze()
    base = core.zeros([64], device="meta") if meta else core.zeros([64])
    ours = core.as_strided(base, shape, strides, 0).squeeze()
    assert (ours.shape, ours.stride()) == (tuple(theirs.shape), theirs.stride())


_NUMPY_INT_CALLS: list[tuple[str, Any]] = [
    ("zeros([np.int64(2), 3])", lambda m, x: m.zeros([np.int64(2), 3])),
    ("ones((np.uint8(2),))", lambda m, x: m.ones((np.uint8(2),))),
    ("view(np.int64(3), 2)", lambda m, x: x.view(np.int64(3), 2)),
    ("view([np.int32(-1)])", lambda m, x: x.view([np.int32(-1)])),
    ("sum(np.int64(0))", lambda m, x: x.sum(np.int64(0))),
    ("transpose(np.int32(0), 1)", lambda m, x: x.transpose(np.int32(0), 1)),
    ("max(np.int64(1)).values", lambda m, x: x.max(np.int64(1)).values),
    ("add(x, np.int64(2))", lambda m, x: m.add(x, np.int64(2))),
    ("zeros([np.array(2)])", lambda m, x: m.zeros([np.array(2)])),
    ("zeros([np.float64(2)])", lambda m, x: m.zeros([np.float64(2)])),
]  # fmt: skip


@pytest.mark.parametrize("call", [c for _, c in _NUMPY_INT_CALLS], ids=[n for n, _ in _NUMPY_INT_CALLS])
def test_numpy_integers_work_where_ints_do_as_in_torch(call: Any) -> None:
    # Note [Integers that are not ints] in typedops/boxing/_ivalue.py
    ours = _outcome(lambda: call(core, core.ones([2, 3])))
    theirs = _outcome(lambda: call(torch, torch.ones([2, 3])))
    assert ours[0] == theirs[0], (ours, theirs)
    assert (ours[0] == "value") == (call is not _NUMPY_INT_CALLS[-1][1]), ours  # a float size: refused by both
    if ours[0] == "value":
        assert ours[1].shape == tuple(theirs[1].shape) and all(type(n) is int for n in ours[1].shape)
        assert ours[1].tolist() == theirs[1].tolist()


@pytest.mark.parametrize(
    ("value", "spec"),
    [(3.14159, ".2f"), (7, "05d"), (True, ""), (-2.5, ""), (1 + 2j, ".1f"), (0.1, "e"), ([1.0, 2.0], ".2f"), ([1.0], "")],
)  # fmt: skip
def test_format_of_a_tensor_matches_torch(value: Any, spec: str) -> None:
    # a 0-dim tensor formats as its value; another only with an empty spec (then its repr,
    # which differs between the libraries), else Python's TypeError
    ours = _outcome(lambda: format(tensor(value), spec))
    theirs = _outcome(lambda: format(torch.tensor(value), spec))
    assert ours[0] == theirs[0], (ours, theirs)
    if isinstance(value, list):
        assert ours == (("value", repr(tensor(value))) if not spec else ("error", ("TypeError",)))
    else:
        assert ours == theirs


@pytest.mark.parametrize("data", [[[1, 2], [3, 4]], 3, [], [[[1.0, 2.0]], [[3.0, 4.0]]], [5]], ids=str)
@pytest.mark.parametrize("use", ["len", "iter", "T", "mT"])
def test_tensors_as_sequences_match_torch(use: str, data: Any) -> None:
    # Note [Tensors as sequences]
    calls: dict[str, Any] = {
        "len": lambda t: len(t), "iter": lambda t: [x.tolist() for x in t],
        "T": lambda t: (t.T.tolist(), tuple(t.T.shape), tuple(t.T.stride())),
        "mT": lambda t: (t.mT.tolist(), tuple(t.mT.shape)),
    }  # fmt: skip
    ours = _outcome(lambda: calls[use](tensor(data)))
    theirs = _outcome(lambda: calls[use](torch.tensor(data)))
    assert ours == theirs


_BITWISE: list[tuple[str, Any]] = [
    ("b & b", lambda m: m.tensor([True, False]) & m.tensor([True, True])),
    ("b | b", lambda m: m.tensor([True, False]) | m.tensor([False, False])),
    ("i ^ i", lambda m: m.tensor([5, 3]) ^ m.tensor([1, 1])),
    ("~b", lambda m: ~m.tensor([True, False])), ("~i", lambda m: ~m.tensor([0, 5])),
    ("b & True", lambda m: m.tensor([True, False]) & True), ("3 & i", lambda m: 3 & m.tensor([5, 6])),
    ("b & i", lambda m: m.tensor([True, False]) & m.tensor([3, 3])),
    ("broadcast |", lambda m: m.tensor([[1], [2]]) | m.tensor([4, 8])),
    ("mask", lambda m: (m.tensor([1.0, 2.0, 3.0]) > 1) & (m.tensor([1.0, 2.0, 3.0]) < 3)),
    ("f & f", lambda m: m.tensor([1.0]) & m.tensor([1.0])),
    ("bitwise_xor", lambda m: m.bitwise_xor(m.tensor([6]), m.tensor([3]))),
    ("bitwise_not", lambda m: m.bitwise_not(m.tensor([True]))),
]  # fmt: skip


@pytest.mark.parametrize("call", [c for _, c in _BITWISE], ids=[n for n, _ in _BITWISE])
def test_bitwise_ops_match_torch(call: Any) -> None:
    ours = _outcome(lambda: call(typedops if hasattr(typedops, "bitwise_xor") else _Lib()))
    theirs = _outcome(lambda: call(torch))
    if theirs[0] == "value":
        assert ours[0] == "value", ours
        assert ours[1].tolist() == theirs[1].tolist()
        assert ours[1].dtype.name == str(theirs[1].dtype).removeprefix("torch.")
    else:
        assert ours == theirs  # a float operand: NotImplementedError, a RuntimeError, in both


class _Lib:
    """``typedops.tensor`` beside the core functions, as ``torch`` has both."""

    tensor = staticmethod(tensor)

    def __getattr__(self, name: str) -> Any:
        return getattr(core, name)


_POWER_DTYPES = ("int64", "int32", "uint8", "float32", "float64", "bool")


@settings(max_examples=200, deadline=None)
@given(
    bases=st.lists(st.integers(-3, 3), min_size=1, max_size=4), exponents=st.lists(st.integers(-3, 3), min_size=1, max_size=4),
    dtypes=st.tuples(st.sampled_from(_POWER_DTYPES), st.sampled_from(_POWER_DTYPES)),
    form=st.sampled_from(["x ** y", "core.pow", "x.pow(y)", "number ** y", "x ** number"]),
)  # fmt: skip
def test_pow_of_tensors_and_numbers_matches_torch(
    bases: list[int], exponents: list[int], dtypes: tuple[str, str], form: str
) -> None:
    # pow.Tensor_Tensor and pow.Scalar (Note [Integer powers] in typedops/core/kernels/_power.py)
    n = min(len(bases), len(exponents))
    ours_x, theirs_x = tensor(bases[:n], dtype=ScalarType[dtypes[0]]), torch.tensor(bases[:n]).to(getattr(torch, dtypes[0]))
    ours_y, theirs_y = tensor(exponents[:n], dtype=ScalarType[dtypes[1]]), torch.tensor(exponents[:n]).to(getattr(torch, dtypes[1]))
    calls: dict[str, Any] = {
        "x ** y": lambda lib, x, y: x ** y, "core.pow": lambda lib, x, y: lib.pow(x, y), "x.pow(y)": lambda lib, x, y: x.pow(y),
        "number ** y": lambda lib, x, y: bases[0] ** y, "x ** number": lambda lib, x, y: x ** exponents[0],
    }  # fmt: skip
    ours = _outcome(lambda: calls[form](core, ours_x, ours_y))
    theirs = _outcome(lambda: calls[form](torch, theirs_x, theirs_y))
    assert ours[0] == theirs[0], (ours, theirs)
    if ours[0] == "value":
        assert ours[1].dtype.name == str(theirs[1].dtype).removeprefix("torch.")
        assert ours[1].tolist() == pytest.approx(theirs[1].tolist(), rel=1e-6, nan_ok=True)


def test_pow_gradients_match_torch() -> None:
    values = ([0.0, 2.0, 0.5, 3.0], [0.0, 3.0, -1.5, 0.5])
    ours = [tensor(v, requires_grad=True) for v in values]
    theirs = [torch.tensor(v, requires_grad=True) for v in values]
    (ours[0] ** ours[1]).sum().backward()
    (theirs[0] ** theirs[1]).sum().backward()
    for a, b in zip(ours, theirs):
        assert a.grad is not None and b.grad is not None
        assert a.grad.tolist() == pytest.approx(b.grad.tolist(), rel=1e-6)
    w, tw = tensor([1.0, 2.0], requires_grad=True), torch.tensor([1.0, 2.0], requires_grad=True)
    (2.5 ** w).sum().backward()
    (2.5 ** tw).sum().backward()
    assert w.grad is not None and w.grad.tolist() == pytest.approx(tw.grad.tolist(), rel=1e-6)


_CLAMP_BOUNDS = st.one_of(st.none(), st.integers(-3, 3), st.floats(-3, 3, allow_nan=False).map(lambda v: round(v, 1)),
                          st.just(float("nan")), st.just(-1000))  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(
    values=st.lists(st.integers(-4, 4), min_size=1, max_size=4), low=_CLAMP_BOUNDS, high=_CLAMP_BOUNDS,
    dtype=st.sampled_from(["int64", "int8", "uint8", "float32", "float64", "bool"]), form=st.sampled_from(["function", "method"]),
)  # fmt: skip
def test_clamp_matches_torch(values: list[int], low: Any, high: Any, dtype: str, form: str) -> None:
    ours_x = tensor(values, dtype=ScalarType.int64).to(ScalarType[dtype])
    theirs_x = torch.tensor(values).to(getattr(torch, dtype))
    if form == "function":
        ours = _outcome(lambda: core.clamp(ours_x, low, high))
        theirs = _outcome(lambda: torch.clamp(theirs_x, low, high))
    else:
        ours = _outcome(lambda: ours_x.clamp(min=low, max=high))
        theirs = _outcome(lambda: theirs_x.clamp(min=low, max=high))
    assert ours[0] == theirs[0], (ours, theirs)
    if ours[0] == "value":
        assert ours[1].dtype.name == str(theirs[1].dtype).removeprefix("torch.")
        assert ours[1].tolist() == pytest.approx(theirs[1].tolist(), nan_ok=True)


def test_clamp_gradient_matches_torch() -> None:
    values = [0.5, 1.0, 1.5, 2.0, 3.0, float("nan")]
    x, tx = tensor(values, requires_grad=True), torch.tensor(values, requires_grad=True)
    (x.clamp(1.0, 2.0) * 3).sum().backward()
    (tx.clamp(1.0, 2.0) * 3).sum().backward()
    assert x.grad is not None and x.grad.tolist() == tx.grad.tolist()
    y, ty = tensor(values, requires_grad=True), torch.tensor(values, requires_grad=True)
    y.clamp(max=1.5).sum().backward()
    ty.clamp(max=1.5).sum().backward()
    assert y.grad is not None and y.grad.tolist() == ty.grad.tolist()


@pytest.mark.parametrize("name", sorted(DTYPE_CONVERSIONS))
@pytest.mark.parametrize("data", [[1.7, -2.2, 0.0], [3, -1], [True, False]], ids=["float", "int", "bool"])
def test_dtype_conversion_methods_match_torch(name: str, data: Any) -> None:
    # Note [Dtype conversion methods]
    ours = _outcome(lambda: getattr(tensor(data), name)())
    theirs = _outcome(lambda: getattr(torch.tensor(data), name)())
    if name == "bfloat16":  # numpy has no bfloat16: typedops refuses it with its own error
        assert ours[0] == "error"
        return
    assert ours[0] == theirs[0] == "value"
    assert ours[1].dtype.name == str(theirs[1].dtype).removeprefix("torch.")
    assert ours[1].tolist() == theirs[1].tolist()
    x = tensor(data)
    assert getattr(x, name)() is x or x.dtype is not DTYPE_CONVERSIONS[name]  # no copy when the dtype is x's



_LIKE: list[tuple[str, Any]] = [
    ("ones_like", lambda lib, x, dt: lib.ones_like(x)), ("ones_like int", lambda lib, x, dt: lib.ones_like(x, dtype=dt)),
    ("full_like", lambda lib, x, dt: lib.full_like(x, 2.5)), ("full_like int", lambda lib, x, dt: lib.full_like(x, 2.5, dtype=dt)),
    ("full_like bool", lambda lib, x, dt: lib.full_like(x, True)), ("empty_like shape", lambda lib, x, dt: lib.zeros_like(lib.empty_like(x))),
    ("full_like overflow", lambda lib, x, dt: lib.full_like(x, 1e300)),
]  # fmt: skip


@pytest.mark.parametrize("call", [c for _, c in _LIKE], ids=[n for n, _ in _LIKE])
@pytest.mark.parametrize("channels_last", [False, True])
def test_like_factories_match_torch(call: Any, channels_last: bool) -> None:
    ours_x, theirs_x = core.ones([2, 3, 2, 2]), torch.ones([2, 3, 2, 2])
    if channels_last:
        ours_x = ours_x.permute([0, 2, 3, 1]).contiguous().permute([0, 3, 1, 2])
        theirs_x = theirs_x.permute([0, 2, 3, 1]).contiguous().permute([0, 3, 1, 2])
    ours = _outcome(lambda: call(core, ours_x, ScalarType.int64))
    theirs = _outcome(lambda: call(torch, theirs_x, torch.int64))
    assert ours[0] == theirs[0], (ours, theirs)
    if ours[0] == "value":
        assert ours[1].tolist() == theirs[1].tolist() and ours[1].stride() == theirs[1].stride()
        assert ours[1].dtype.name == str(theirs[1].dtype).removeprefix("torch.")


@settings(max_examples=100, deadline=None)
@given(
    values=st.lists(st.floats(-50, 50, allow_nan=False, width=32), min_size=6, max_size=6),
    dim=st.integers(-2, 1), name=st.sampled_from(["softmax", "log_softmax"]), form=st.sampled_from(["function", "method"]),
)  # fmt: skip
def test_softmax_and_its_gradient_match_torch(values: list[float], dim: int, name: str, form: str) -> None:
    ours_x = tensor(values, requires_grad=True)
    theirs_x = torch.tensor(values, requires_grad=True)
    ours_in, theirs_in = ours_x.view([2, 3]), theirs_x.view(2, 3)
    ours = getattr(core, name)(ours_in, dim) if form == "function" else getattr(ours_in, name)(dim)
    theirs = getattr(torch, name)(theirs_in, dim) if form == "function" else getattr(theirs_in, name)(dim)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-5, atol=1e-6)
    weights = [1.0, -2.0, 0.5, 3.0, 0.0, 1.5]
    (ours * tensor(weights).view([2, 3])).sum().backward()
    (theirs * torch.tensor(weights).view(2, 3)).sum().backward()
    assert ours_x.grad is not None and theirs_x.grad is not None
    np.testing.assert_allclose(ours_x.grad.numpy(), theirs_x.grad.numpy(), rtol=1e-4, atol=1e-5)


def test_softmax_refuses_integers_and_converts_with_dtype_as_torch() -> None:
    ours = _outcome(lambda: core.softmax(tensor([1, 2]), 0))
    theirs = _outcome(lambda: torch.softmax(torch.tensor([1, 2]), 0))
    assert ours == theirs == ("error", ("RuntimeError",))  # NotImplementedError in both
    np.testing.assert_allclose(core.softmax(tensor([1, 2]), 0, dtype=ScalarType.float64).numpy(),
                               torch.softmax(torch.tensor([1, 2]), 0, dtype=torch.float64).numpy())  # fmt: skip


@pytest.mark.parametrize(
    "data", [[1.0, 0.0], [2, 3], [True, False], [], [[1, 0], [1, 1]], [math.nan], [[0, 0], [0, 0]]], ids=str
)
@pytest.mark.parametrize("dtype", [None, "uint8", "bool"])
@pytest.mark.parametrize("call", ["all()", "any()", "all(0)", "any(-1, True)", "core.any(x, dim=0)"])
def test_all_and_any_match_torch(data: Any, dtype: str | None, call: str) -> None:
    def run(lib: Any, make: Any, dtypes: Any) -> Any:
        x = make(data) if dtype is None else make(data).to(getattr(dtypes, dtype))
        calls: dict[str, Any] = {"all()": lambda: x.all(), "any()": lambda: x.any(), "all(0)": lambda: x.all(0),
                                 "any(-1, True)": lambda: x.any(-1, True),
                                 "core.any(x, dim=0)": lambda: lib.any(x, dim=0)}  # fmt: skip
        return calls[call]()

    ours = _outcome(lambda: run(core, tensor, ScalarType))
    theirs = _outcome(lambda: run(torch, torch.tensor, torch))
    assert ours[0] == theirs[0], (ours, theirs)
    if ours[0] == "value":
        assert ours[1].tolist() == theirs[1].tolist()
        assert ours[1].dtype.name == str(theirs[1].dtype).removeprefix("torch.")


@settings(max_examples=150, deadline=None)
@given(
    start=st.one_of(st.integers(-20, 20), st.floats(-5, 5, allow_nan=False).map(lambda v: round(v, 3))),
    end=st.one_of(st.integers(-20, 20), st.floats(-5, 5, allow_nan=False).map(lambda v: round(v, 3))),
    steps=st.integers(-1, 12), dtype=st.sampled_from([None, "float64", "int64", "int32"]),
)  # fmt: skip
def test_linspace_matches_torch(start: Any, end: Any, steps: int, dtype: str | None) -> None:
    # Both ends exact and the same dtypes; the values in between within rounding: torch's
    # vectorized kernel rounds by SIMD lane (so an integer dtype, which truncates, may
    # differ by 1 where a value lands next to an integer).
    ours = _outcome(lambda: core.linspace(start, end, steps, dtype=None if dtype is None else ScalarType[dtype]))
    theirs = _outcome(lambda: torch.linspace(start, end, steps, dtype=None if dtype is None else getattr(torch, dtype)))
    assert ours[0] == theirs[0], (ours, theirs)
    if ours[0] == "value":
        assert ours[1].dtype.name == str(theirs[1].dtype).removeprefix("torch.")
        mine, torchs = ours[1].tolist(), theirs[1].tolist()
        assert mine[:1] == torchs[:1] and mine[-1:] == torchs[-1:]
        integral = dtype in ("int64", "int32")
        assert mine == pytest.approx(torchs, rel=0 if integral else 1e-6, abs=1 if integral else 1e-6)


@pytest.mark.parametrize("size", [(3,), (0,), (2, 3), (4, 1), (-1,), (2, -1)], ids=str)
@pytest.mark.parametrize("dtype", [None, "int64", "bool", "float64"])
def test_eye_matches_torch(size: tuple[int, ...], dtype: str | None) -> None:
    ours = _outcome(lambda: core.eye(*size, dtype=None if dtype is None else ScalarType[dtype]))
    theirs = _outcome(lambda: torch.eye(*size, dtype=None if dtype is None else getattr(torch, dtype)))
    assert ours[0] == theirs[0], (ours, theirs)
    if ours[0] == "value":
        assert ours[1].tolist() == theirs[1].tolist()
        assert ours[1].dtype.name == str(theirs[1].dtype).removeprefix("torch.")


_FACTORY_CALLS = [
    ("zeros(2, 3)", lambda m: m.zeros(2, 3)), ("ones(4)", lambda m: m.ones(4)), ("zeros([2, 3])", lambda m: m.zeros([2, 3])),
    ("zeros_like(empty(2, 2))", lambda m: m.zeros_like(m.empty(2, 2))), ("zeros((2,), dtype=long)", lambda m: m.zeros((2,), dtype=m.long)),
    ("ones(2, 1, dtype=float64)", lambda m: m.ones(2, 1, dtype=m.float64)), ("zeros(np.int64(2))", lambda m: m.zeros(np.int64(2))),
    ("zeros(size=[2])", lambda m: m.zeros(size=[2])), ("randn(2, 3).abs() * 0", lambda m: m.randn(2, 3).abs() * 0),
    ("zeros(2.0)", lambda m: m.zeros(2.0)), ("zeros(2, 3.0)", lambda m: m.zeros(2, 3.0)), ("zeros([2], 3)", lambda m: m.zeros([2], 3)),
    ("zeros(True)", lambda m: m.zeros(True)), ("zeros()", lambda m: m.zeros()),
]  # fmt: skip


class _Factories:
    """typedops' factories and dtype names where torch has them (typedops.core.zeros, typedops.long)."""

    def __getattr__(self, name: str) -> Any:
        return getattr(core, name) if hasattr(core, name) else getattr(typedops, name)


def test_dtype_names_are_torchs() -> None:
    names = ["uint8", "int8", "int16", "short", "int32", "int", "int64", "long", "float16", "half", "bfloat16",
             "float32", "float", "float64", "double", "complex64", "cfloat", "complex128", "cdouble", "bool"]  # fmt: skip
    for name in names:
        ours = getattr(typedops, name)
        assert isinstance(ours, ScalarType) and ours.name == str(getattr(torch, name)).removeprefix("torch."), name


@pytest.mark.parametrize("name", ["floor_divide", "remainder"])
@pytest.mark.parametrize("other", [3, -2.5, "tensor"])
def test_floor_divide_and_remainder_write_out_as_torchs(name: str, other: Any) -> None:
    values, out_values = [7, -7, 5, 0], [0, 0, 0, 0]
    ours_other = tensor([3, -2, 4, 1]) if other == "tensor" else other
    theirs_other = torch.tensor([3, -2, 4, 1]) if other == "tensor" else other
    for dtype in ("int64", "float32"):
        ours_out = tensor(out_values, dtype=ScalarType[dtype])
        theirs_out = torch.tensor(out_values, dtype=getattr(torch, dtype))
        ours = _outcome(lambda: getattr(core, name)(tensor(values), ours_other, out=ours_out))
        theirs = _outcome(lambda: getattr(torch, name)(torch.tensor(values), theirs_other, out=theirs_out))
        assert ours[0] == theirs[0], (ours, theirs)
        if ours[0] == "value":
            assert ours[1] is ours_out and ours_out.tolist() == theirs_out.tolist(), (name, other, dtype)


def _alias_after(m: Any, make: Any, update: Any) -> Any:
    """``make()``'s tensor, read through an alias after ``update`` wrote into the name."""
    x = make(m)
    alias = x
    update(x)
    return alias


_CALLS = [
    # factories take sizes one by one (Note [Sizes as varargs] in typedops/codegen/_api.py)
    *_FACTORY_CALLS,
    # the in-place operators write into the tensor (an alias sees it), as torch's
    ("m &= mask", lambda m: _alias_after(m, lambda m: m.tensor([1, 2, 3]) > 1, lambda x: x.__iand__(m.tensor([True, False, True])))),
    ("m |= 4", lambda m: _alias_after(m, lambda m: m.tensor([1, 2]), lambda x: x.__ior__(4))),
    ("m ^= m", lambda m: _alias_after(m, lambda m: m.tensor([1, 6]), lambda x: x.__ixor__(m.tensor([3, 3])))),
    ("x **= 2", lambda m: _alias_after(m, lambda m: m.tensor([1.0, 2.0]), lambda x: x.__ipow__(2))),
    ("x **= y", lambda m: _alias_after(m, lambda m: m.tensor([1.0, 2.0]), lambda x: x.__ipow__(m.tensor([3.0, 0.5])))),
    ("int **= -1", lambda m: _alias_after(m, lambda m: m.tensor([2]), lambda x: x.__ipow__(-1))),
    ("bool &= int", lambda m: _alias_after(m, lambda m: m.tensor([True]), lambda x: x.__iand__(m.tensor([3])))),
    ("x **= y broadcast", lambda m: _alias_after(m, lambda m: m.tensor([2.0]), lambda x: x.__ipow__(m.tensor([1.0, 2.0])))),
    # the bitwise functions take numbers
    ("bitwise_and(t, 1)", lambda m: m.bitwise_and(m.tensor([1, 3]), 1)),
    ("t.bitwise_or(2)", lambda m: m.tensor([1, 3]).bitwise_or(2)),
    ("bitwise_xor(1, t)", lambda m: m.bitwise_xor(1, m.tensor([1, 3]))),
    # softmax: empty dims, contiguous results
    ("softmax over an empty dim", lambda m: m.zeros([2, 0]).softmax(1)),
    ("log_softmax of nothing", lambda m: m.zeros([0]).log_softmax(0)),
    ("softmax of a transpose", lambda m: m.tensor([[1.0, 2.0], [3.0, 5.0]]).t().softmax(1)),
    # preserve_format keeps strides
    ("zeros_like of a transpose", lambda m: m.zeros_like(m.zeros([2, 3]).t())),
    ("full_like of a permute", lambda m: m.full_like(m.zeros([2, 3, 4]).permute([2, 0, 1]), 1)),
    ("double of a transpose", lambda m: m.zeros([2, 3]).t().double()),
    ("ones_like of a gapped view", lambda m: m.ones_like(m.zeros([4, 6]).as_strided([2, 3], [12, 2]))),
    ("empty_strided", lambda m: m.zeros_like(m.empty_strided([2, 3], [1, 2]))),
    ("empty_strided lengths", lambda m: m.empty_strided([2], [1, 1])),
    # clamp and linspace edges
    ("clamp(min=1j)", lambda m: m.tensor([1.0, -1.0]).clamp(min=1j)),
    ("int clamp(min=1j)", lambda m: m.tensor([1, -1]).clamp(min=1j)),
    ("clamp(min=0.5+0j)", lambda m: m.tensor([1.0, -1.0]).clamp(min=complex(0.5, 0))),
    ("bool clamp", lambda m: m.tensor([True, False]).clamp(max=True)),
    ("clamp keeps -0.0 at min=0.0", lambda m: m.tensor([-0.0, 0.0, -1.0]).clamp(min=0.0)),
    ("clamp keeps 0.0 at max=-0.0", lambda m: m.tensor([-0.0, 0.0, 1.0]).clamp(max=-0.0)),
    ("linspace beyond float16", lambda m: m.linspace(0, 1e6, 3, dtype=m.float16)),
    ("linspace beyond float32", lambda m: m.linspace(0, 1e39, 2)),
    ("linspace bool", lambda m: m.linspace(0, 1, 3, dtype=m.bool)),
    ("eye(2, -1)", lambda m: m.eye(2, -1)),
    # masked_fill: self's dtype, the mask broadcast, torch's refusals
    ("int masked_fill(7.9)", lambda m: m.tensor([1, 2, 3]).masked_fill(m.tensor([True, False, True]), 7.9)),
    ("masked_fill(0-dim tensor)", lambda m: m.tensor([[1.0, 2.0], [3.0, 4.0]]).masked_fill(m.tensor([True, False]), m.tensor(0.5))),
    ("masked_fill broadcast", lambda m: m.tensor([1.0, 2.0]).masked_fill(m.tensor([[True], [False]]), 0)),
    ("masked_fill int mask", lambda m: m.tensor([1.0, 2.0]).masked_fill(m.tensor([1, 0]), 0)),
    ("masked_fill 1-dim value", lambda m: m.tensor([1.0, 2.0]).masked_fill(m.tensor([True, False]), m.tensor([1.0, 2.0]))),
    ("masked_fill_ alias", lambda m: _alias_after(m, lambda m: m.tensor([1.0, 2.0, 3.0]), lambda x: x.masked_fill_(x > 1, -1))),
    # numpy's numbers beside the operators (numpy defers to the tensor: __array_priority__)
    ("t + np.int64", lambda m: m.tensor([1, 2, 3]) + np.int64(2)),
    ("np.float32 * t", lambda m: np.float32(2) * m.tensor([1, 2, 3])),
    ("t - np.bool_", lambda m: m.tensor([1.0, 2.0]) - np.bool_(True)),
    ("np.int64 - t", lambda m: np.int64(5) - m.tensor([1, 2])),
    ("t &= np.int64", lambda m: _alias_after(m, lambda m: m.tensor([1, 2, 3]), lambda x: x.__iand__(np.int64(2)))),
    ("t **= np.int64", lambda m: _alias_after(m, lambda m: m.tensor([1, 2, 3]), lambda x: x.__ipow__(np.int64(2)))),
    # integer pow and linspace as torch's
    ("uint8 ** 300", lambda m: m.tensor([2]).to(m.uint8) ** 300),
    ("linspace int64 from floats", lambda m: m.linspace(0.5, 3.7, 5, dtype=m.int64)),
    ("linspace uint8 from -5", lambda m: m.linspace(-5, 5, 11, dtype=m.uint8)),
    # x.new_zeros and kin: x's dtype and device unless given, sizes one by one too
    ("int new_zeros(2, 3)", lambda m: m.tensor([1, 2]).new_zeros(2, 3)),
    ("new_full float into int", lambda m: m.tensor([1, 2]).new_full((2,), 7.9)),
    ("new_ones(dtype=float64)", lambda m: m.tensor([1, 2]).new_ones([2], dtype=m.float64)),
    # review12: 0-dim masks, overflow and fitting in advanced writes, index dtypes, numpy
    ("x[uint8 0-dim]", lambda m: m.zeros(2, 2)[m.tensor(1, dtype=m.uint8)]),
    ("x[np.array(True)]", lambda m: m.tensor([[1.0, 2.0, 3.0]])[np.array(True)]),
    ("x[idx] = 300 into uint8", lambda m: _alias_after(m, lambda m: m.tensor([0, 0], dtype=m.uint8),
                                                       lambda x: x.__setitem__(m.tensor([0]), 300))),
    ("x[idx] = [[5, 6]]", lambda m: _alias_after(m, lambda m: m.tensor([0.0, 0.0, 0.0]),
                                                 lambda x: x.__setitem__(m.tensor([0, 1]), m.tensor([[5.0, 6.0]])))),
    ("x[int16 index]", lambda m: m.tensor([1.0, 2.0])[m.tensor([1], dtype=m.int16)]),
    ("x[::10]", lambda m: m.tensor([1.0, 2.0, 3.0, 4.0, 5.0])[::10]),
    ("np.asarray(x) + 1", lambda m: m.tensor(np.asarray(m.tensor([1.0, 2.0])) + 1)),
    # flip and reversed
    ("flip([0, -1])", lambda m: m.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]).flip([0, -1])),
    ("flip([0, 0])", lambda m: m.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]).flip([0, 0])),
    ("flip of 0-dim", lambda m: m.tensor(2.0).flip([])),
    ("reversed", lambda m: m.stack(list(reversed(m.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]))))),
    # numpy scalars where torch takes numbers
    ("clamp(max=np.float32)", lambda m: m.tensor([1.0, 2.0]).clamp(max=np.float32(0.5))),
    ("full(np.float32)", lambda m: m.full([2], np.float32(0.5))),
    ("fill_(np.float16)", lambda m: m.zeros([2]).fill_(np.float16(2))),
    ("add(np.float32)", lambda m: m.tensor([1.0]).add(np.float32(0.5))),
    ("view(np.int64)", lambda m: m.zeros([2, 3]).view(np.int64(6))),
    ("reshape(np.int64(-1))", lambda m: m.zeros([2, 3]).reshape(np.int64(-1))),
]  # fmt: skip


@pytest.mark.parametrize("call", [c for _, c in _CALLS], ids=[n for n, _ in _CALLS])
def test_calls_give_what_torchs_give(call: Any) -> None:
    ours, theirs = _outcome(lambda: call(_Factories())), _outcome(lambda: call(torch))
    assert ours[0] == theirs[0], (ours, theirs)
    if ours[0] == "value":
        assert ours[1].shape == tuple(theirs[1].shape) and ours[1].dtype.name == str(theirs[1].dtype)[6:]
        assert ours[1].stride() == theirs[1].stride()
        assert np.allclose(ours[1].numpy(), theirs[1].detach().numpy(), rtol=1e-6)
        assert (np.signbit(ours[1].numpy()) == np.signbit(theirs[1].detach().numpy())).all()  # -0.0 too


_INDICES = [
    0, -1, (1, 2), (1, 2, 3), (slice(None), 1), (Ellipsis, 2), None, (slice(None), None, slice(1, 3)), slice(1, None),
    slice(None, None, 2), (slice(1, 3), slice(None, None, 2), slice(-2, None)), (Ellipsis, None), Ellipsis, (), True,
    False, (0, Ellipsis, 0), 5, (0, 0, 0, 0), slice(None, None, 0), 1.5, -4, slice(10, 20), (slice(None), slice(-100, 100)),
    (None, Ellipsis, None, 0), np.int64(1),
    # advanced: lists and arrays (Note [Advanced indexing] in typedops/core/kernels/_index.py)
    [0, 2], (slice(None), [1, 3]), ([0, 1], [1, 2]), np.array([2, 0]), ([0, 1], slice(None), [1, 2]), (1, [0, 3]),
    ([[0], [2]], [1, 3]), [True, False, True], [-1, -3], (slice(1, None), [0, 0, 1]), [0, 5], (None, [0, 1]),
]  # fmt: skip


@pytest.mark.parametrize("index", _INDICES, ids=[repr(i) for i in _INDICES])
def test_basic_indexing_gives_torchs_views(index: Any) -> None:
    # Note [Basic indexing] in typedops/tensor/_indexing.py
    values = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    ours = _outcome(lambda: tensor(values.tolist())[index])
    theirs = _outcome(lambda: torch.tensor(values)[index])
    assert ours[0] == theirs[0], (ours, theirs)
    if ours[0] == "value":
        got, want = ours[1], theirs[1]
        assert (got.shape, got.stride()) == (tuple(want.shape), want.stride())
        assert got.storage_offset() == want.storage_offset() and got.tolist() == want.tolist()
