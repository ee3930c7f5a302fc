"""The core op library (issue 6): the yaml, its kernels' signatures, and every op's
results against numpy, on CPU and Meta.

The ops come from the generated registration (``import typedops.core``), which claims
``Library("core", "DEF")`` once per process; a test checks it registers exactly the yaml's
schemas and kernels.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
import yaml

import typedops.core
import typedops.core.kernels as kernels
from typedops import Device, DispatchKey, MemoryFormat, OperatorHandle, ScalarType, Tensor, dispatcher, tensor
from typedops.dispatch._signature import check_kernel_signature
from typedops.schema import parse_schema
from typedops.vocabulary import TensorError

YAML = Path(typedops.core.__file__).parent / "native_functions.yaml"
ENTRIES: list[dict[str, Any]] = yaml.safe_load(YAML.read_text())
F32, F64, I64, I32, BOOL = ScalarType.float32, ScalarType.float64, ScalarType.int64, ScalarType.int32, ScalarType.bool
CL = MemoryFormat.channels_last


def resolve(ref: str) -> Callable[..., Any]:
    """A kernel reference: a bare name in typedops.core.kernels, or ``pkg.module.function``."""
    if "." not in ref:
        fn: Callable[..., Any] = getattr(kernels, ref)
        return fn
    module, _, name = ref.rpartition(".")
    found: Callable[..., Any] = getattr(importlib.import_module(module), name)
    return found


def registrations() -> Iterator[tuple[dict[str, Any], str, str]]:
    """(entry, key name, kernel reference) for every key of every entry."""
    for entry in ENTRIES:
        for keys, ref in entry["dispatch"].items():
            for key in keys.split(","):
                yield entry, key.strip(), ref


PAIRS = list(registrations())


@pytest.fixture(scope="module")
def core() -> Iterator[None]:
    """The generated core library (typedops/core/_generated), registered once per process
    by ``import typedops.core``; the kernels' op cache starts and ends empty."""
    kernels.clear_op_cache()
    yield
    kernels.clear_op_cache()


@pytest.mark.parametrize("entry", ENTRIES, ids=[e["func"].partition("(")[0] for e in ENTRIES])
def test_generated_registration_matches_the_yaml(entry: dict[str, Any]) -> None:
    schema = parse_schema("core::" + entry["func"])
    handle = dispatcher.find_schema_or_throw(schema.qualified_name, schema.overload_name)
    assert handle.schema == schema
    with_keys = set(entry.get("with_keys", ()))
    # (the autograd kernels come from derivatives.yaml: tests/test_autograd_codegen.py; the
    # batching rules from the yaml's vmap: field, tests/test_batching_rules.py)
    registered = [
        line for line in handle.dump().splitlines()[2:] if not line.strip().startswith(("Autograd:", "Batched:"))
    ]
    expected = []
    for keys, ref in entry["dispatch"].items():
        for key in (k.strip() for k in keys.split(",")):
            keyed = ", takes keys" if key in with_keys else ""
            expected.append(f"{key}: unboxed {resolve(ref).__name__}{keyed}")
    assert sorted(line.partition(" at ")[0].strip() for line in registered) == sorted(expected)


def op(name: str, overload: str = "") -> OperatorHandle:
    return dispatcher.find_schema_or_throw(f"core::{name}", overload)


def arr(t: Tensor) -> Any:
    return t.numpy()


def meta(t: Tensor) -> Tensor:
    result: Tensor = op("_to_copy")(t, device="meta")
    return result


# -- the yaml ----------------------------------------------------------------------------------
def test_the_library_is_big_enough() -> None:
    names = {entry["func"].partition("(")[0].partition(".")[0] for entry in ENTRIES}
    assert len(ENTRIES) >= 40 and len(names) >= 30, (len(ENTRIES), len(names))


@pytest.mark.parametrize("entry", ENTRIES, ids=[e["func"].partition("(")[0] for e in ENTRIES])
def test_entry_is_well_formed(entry: dict[str, Any]) -> None:
    assert set(entry) <= {"func", "variants", "dispatch", "with_keys", "device_check", "vmap"}
    assert entry.get("device_check", "ExactSame") in ("ExactSame", "NoCheck")
    schema = parse_schema("core::" + entry["func"])
    assert str(schema) == "core::" + entry["func"]
    assert {v.strip() for v in entry.get("variants", "function").split(",")} <= {"function", "method"}
    keys = [k.strip() for ks in entry["dispatch"] for k in ks.split(",")]
    assert all(isinstance(DispatchKey.parse(k), DispatchKey) for k in keys)
    assert set(entry.get("with_keys", ())) <= set(keys)


@pytest.mark.parametrize(
    ("entry", "key", "ref"), PAIRS, ids=[f"{e['func'].partition('(')[0]}-{k}" for e, k, _ in PAIRS]
)
def test_kernel_matches_schema(entry: dict[str, Any], key: str, ref: str) -> None:
    schema = parse_schema("core::" + entry["func"])
    check_kernel_signature(schema, resolve(ref), with_keys=key in entry.get("with_keys", ()))


def test_factories_select_their_backend() -> None:
    """Every op without a tensor argument picks its backend at BackendSelect (or is a
    composite of ops that do)."""
    for entry in ENTRIES:
        schema = parse_schema("core::" + entry["func"])
        if any("Tensor" in str(a.type) for a in schema.arguments):
            continue
        keys = {k.strip() for ks in entry["dispatch"] for k in ks.split(",")}
        assert "BackendSelect" in keys or keys == {"CompositeImplicitAutograd"}, entry["func"]
        if "BackendSelect" in keys:
            assert entry["with_keys"] == ["BackendSelect"]


# -- element-wise arithmetic ----------------------------------------------------------------
pytestmark = pytest.mark.usefixtures("core")


@pytest.mark.parametrize("device", ["cpu", Device("cpu")])
def test_factories_given_the_cpu_device_make_tensors_on_the_canonical_one(device: Any) -> None:
    """Note [Canonical devices] in typedops/vocabulary/_dtypes.py: ``device="cpu"`` (or an
    equal Device) makes tensors on the CPU device the constructors know by identity."""
    from typedops.core import arange, empty, full, ones, randn, zeros, zeros_like
    from typedops.tensor import CPU

    made = [
        zeros([2], device=device), ones([2], device=device), empty([2], device=device), randn([2], device=device),
        full([2], 1.0, device=device), arange(3, device=device), zeros_like(zeros([1]), device=device),
    ]  # fmt: skip
    assert all(t.device is CPU for t in made)
    meta = Device.parse("meta")
    assert zeros([2], device="meta").device is meta and ones([2], device=Device("meta")).device is meta


def test_add_broadcasts_with_alpha() -> None:
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.array([10.0, 20.0, 30.0], dtype=np.float32)
    out = op("add", "Tensor")(Tensor.from_numpy(a), Tensor.from_numpy(b), alpha=2)
    assert out.shape == (2, 3) and out.dtype is F32
    np.testing.assert_allclose(arr(out), a + 2 * b)


@pytest.mark.parametrize(
    ("left", "right", "expected"),
    [
        (tensor([1, 2]), tensor([0.5, 1.5]), F32),  # int + float -> the float
        (tensor([True, False]), tensor([1, 2]), I64),  # bool + int -> int64
        (tensor([1, 2], dtype=I32), tensor(3), I32),  # a 0-dim tensor does not widen
        (tensor([1, 2], dtype=I32), tensor(2.5), F32),  # ...unless its category is higher
        (tensor([1.0], dtype=F64), tensor([1.0]), F64),
        (tensor([1], dtype=ScalarType.uint8), tensor([1], dtype=ScalarType.int8), ScalarType.int16),
    ],
)
def test_add_promotes_like_pytorch(left: Tensor, right: Tensor, expected: ScalarType) -> None:
    assert op("add", "Tensor")(left, right).dtype is expected
    assert op("add", "Tensor")(meta(left), meta(right)).dtype is expected


def test_scalar_overloads_use_wrapped_numbers() -> None:
    ints = tensor([1, 2, 3])
    assert op("add", "Scalar")(ints, 2).dtype is I64
    halves = op("add", "Scalar")(ints, 0.5)
    assert halves.dtype is F32 and halves.tolist() == [1.5, 2.5, 3.5]
    assert op("mul", "Scalar")(tensor([1.0, 2.0], dtype=F64), 3).dtype is F64
    assert op("add", "Scalar")(ints, 1, 10).tolist() == [11, 12, 13]


def test_sub_is_add_with_negated_alpha() -> None:
    a, b = tensor([5.0, 7.0]), tensor([1.0, 2.0])
    assert op("sub", "Tensor")(a, b, alpha=2).tolist() == [3.0, 3.0]
    out = tensor([0.0, 0.0])
    assert op("sub", "out")(a, b, out=out) is out and out.tolist() == [4.0, 5.0]
    op("sub_", "Tensor")(a, b)
    assert a.tolist() == [4.0, 5.0]


def test_add_rejects_float_alpha_for_integers() -> None:
    with pytest.raises(RuntimeError) as info:
        op("add", "Tensor")(tensor([1]), tensor([2]), alpha=0.5)
    assert str(info.value) == "For integral input tensors, argument alpha must not be a floating point number."


# Note [Scalars in a tensor's dtype]
@pytest.mark.parametrize(
    ("dtype", "alpha", "low", "high"),
    [
        (ScalarType.float32, 1e300, -3.4028234663852886e38, 3.4028234663852886e38),
        (ScalarType.float16, -70000, -65504.0, 65504.0),
        (ScalarType.complex64, 1e39j, -3.4028234663852886e38, 3.4028234663852886e38),
        (ScalarType.int8, 128, -128, 127),
        (ScalarType.int32, -(2**40), -(2**31), 2**31 - 1),
        (ScalarType.uint8, 256, -255, 255),
        (ScalarType.uint8, -256, -255, 255),
    ],
)
def test_an_alpha_the_dtype_cannot_hold_raises(dtype: ScalarType, alpha: complex, low: float, high: float) -> None:
    x = op("ones")([2], dtype=dtype)
    for y in (x, meta(x)):  # the plan is the Meta kernel's too
        calls: list[Callable[[], object]] = [
            lambda: op("add", "Tensor")(y, y, alpha=alpha),
            lambda: op("add", "out")(y, y, alpha=alpha, out=op("zeros_like")(y)),
        ]
        for call in calls:
            with pytest.raises(RuntimeError) as info:
                call()
            assert str(info.value) == (
                f"value cannot be converted to type {dtype.name} without overflow: alpha must lie within "
                f"{low} to {high}; pass a smaller alpha, or a wider dtype"
            )


def test_an_alpha_the_dtype_holds_computes() -> None:
    assert op("add", "Tensor")(tensor([1.0]), tensor([1.0]), alpha=float("inf")).tolist() == [float("inf")]
    assert op("add", "Tensor")(tensor([1.0]), tensor([1.0]), alpha=65504).tolist() == [65505.0]
    u = op("ones")([2], dtype=ScalarType.uint8)
    assert op("sub", "Tensor")(u, u).tolist() == [0, 0]  # numpy refuses b * -1 for uint8: it wraps
    assert op("add", "Tensor")(u, u, alpha=-255).tolist() == [2, 2]
    flag = op("ones")([1], dtype=ScalarType.bool)
    assert op("add", "Tensor")(flag, flag, alpha=2**40).tolist() == [True]


@pytest.mark.parametrize("alpha", [1 + 1j, 2 + 0j, 1 + 0j])  # numpy dropped the imaginary part (a ComplexWarning)
def test_a_complex_alpha_for_real_tensors_raises(alpha: complex) -> None:
    # 1+0j == 1, yet torch refuses it as every complex alpha (it is not the alpha of 1 that skips the check)
    for call in (op("add", "Tensor"), op("sub", "Tensor")):
        with pytest.raises(RuntimeError) as info:
            call(tensor([1.0]), tensor([2.0]), alpha=alpha)
        assert str(info.value) == "For non-complex input tensors, argument alpha must not be a complex number."
    assert op("add", "Tensor")(tensor([1j]), tensor([2j]), alpha=alpha).dtype is ScalarType.complex64


@pytest.mark.parametrize(
    ("dtype", "value", "low", "high"),
    [
        (ScalarType.float32, 1e300, -3.4028234663852886e38, 3.4028234663852886e38),
        (ScalarType.float16, 70000, -65504.0, 65504.0),
        (ScalarType.int8, 300, -128, 127),
        (ScalarType.int32, float("inf"), -(2**31), 2**31 - 1),
        (ScalarType.uint8, -256, -255, 255),
    ],
)
def test_a_fill_value_the_dtype_cannot_hold_raises(dtype: ScalarType, value: complex, low: float, high: float) -> None:
    target = op("zeros")([2], dtype=dtype)
    calls: list[tuple[str, Callable[[], object]]] = [
        ("fill_value", lambda: op("full")([2], value, dtype=dtype)),
        ("fill_value", lambda: op("full")([2], value, dtype=dtype, device="meta")),
        ("value", lambda: op("fill_", "Scalar")(target, value)),
        ("value", lambda: op("fill_", "Scalar")(meta(target), value)),
    ]
    for name, call in calls:
        with pytest.raises(RuntimeError) as info:
            call()
        assert str(info.value) == (
            f"value cannot be converted to type {dtype.name} without overflow: {name} must lie within "
            f"{low} to {high}; pass a smaller {name}, or a wider dtype"
        )
    assert target.tolist() == [0, 0]  # unchanged
    with pytest.raises(RuntimeError) as info:
        op("full")([2], 1 + 1j, dtype=ScalarType.float32)
    assert str(info.value) == (
        "value cannot be converted to type float32 without overflow: fill_value has an imaginary part; "
        "pass a real fill_value, or a complex dtype"
    )


def test_a_fill_value_the_dtype_holds_is_stored_as_pytorch_stores_it() -> None:
    assert op("full")([2], -1, dtype=ScalarType.uint8).tolist() == [255, 255]  # numpy refused -1 for uint8
    assert op("fill_", "Scalar")(op("zeros")([1], dtype=ScalarType.uint8), -255).tolist() == [1]
    assert op("full")([1], 2.5, dtype=ScalarType.int32).tolist() == [2]
    assert op("full")([1], float("-inf")).tolist() == [float("-inf")]
    assert op("full")([1], 2 + 0j, dtype=ScalarType.float32).tolist() == [2.0]


@pytest.mark.compat
def test_fill_values_against_the_dtype_as_pytorch_checks_them() -> None:
    torch = pytest.importorskip("torch")
    values: list[complex] = [1e300, float("inf"), 70000, 2**40, 300, -1, -256, 128, 2.5, 1e39, 1 + 1j, 2 + 0j]
    for dtype in (ScalarType.float16, ScalarType.float32, ScalarType.float64, ScalarType.complex64,
                  ScalarType.int8, ScalarType.uint8, ScalarType.int16, ScalarType.int32, ScalarType.int64):  # fmt: skip
        tdtype = getattr(torch, dtype.name)
        for value in values:
            pairs: list[tuple[Callable[[], Any], Callable[[], Any]]] = [
                (lambda: op("full")([2], value, dtype=dtype), lambda: torch.full([2], value, dtype=tdtype)),
                (lambda: op("fill_", "Scalar")(op("zeros")([2], dtype=dtype), value),
                 lambda: torch.zeros(2, dtype=tdtype).fill_(value)),
            ]  # fmt: skip
            for ours_call, theirs_call in pairs:
                try:
                    theirs: Any = theirs_call().tolist()
                except RuntimeError as error:
                    theirs = error
                if isinstance(theirs, RuntimeError):
                    with pytest.raises(RuntimeError):
                        ours_call()
                else:
                    np.testing.assert_array_equal(ours_call().tolist(), theirs, err_msg=f"{dtype.name}, {value}")


@pytest.mark.compat
def test_alpha_against_the_dtype_as_pytorch_checks_it() -> None:
    torch = pytest.importorskip("torch")
    alphas: list[complex] = [1e300, -1e300, float("inf"), 70000, 2**40, 300, -1, -129, 128, 256, 2, 1e39, 3.5e38]
    alphas.append(1 + 1j)
    for dtype in (ScalarType.float16, ScalarType.float32, ScalarType.float64, ScalarType.complex64, ScalarType.int8,
                  ScalarType.uint8, ScalarType.int16, ScalarType.int32, ScalarType.int64, ScalarType.bool):  # fmt: skip
        x, tx = op("ones")([2], dtype=dtype), torch.ones(2, dtype=getattr(torch, dtype.name))
        for alpha in alphas:
            try:
                theirs: Any = torch.add(tx, tx, alpha=alpha).tolist()
            except RuntimeError as error:
                theirs = error
            if isinstance(theirs, RuntimeError):
                with pytest.raises(RuntimeError):
                    op("add", "Tensor")(x, x, alpha=alpha)
            else:
                with np.errstate(all="ignore"):
                    ours = op("add", "Tensor")(x, x, alpha=alpha).tolist()
                np.testing.assert_array_equal(ours, theirs, err_msg=f"{dtype.name}, alpha={alpha}")


def test_reductions_take_a_lone_int_from_callers_of_kernels(tmp_path: Path) -> None:
    """Dispatched calls convert a lone int for ``int[1]? dim``; whoever calls a kernel
    itself passes it as given: ``reduced_dims`` takes it (a program's static flavor here;
    a --static-dispatch build in test_opcheck.py)."""
    from typedops.tracing import trace

    x = tensor([[1.0, 2.0], [3.0, 4.0]])
    lone: Any = 1  # what the kernel's annotation does not admit, and it takes
    assert kernels.sum_dim_cpu(x, lone, False, dtype=None).tolist() == [3.0, 7.0]

    def boxed_sum(t: Tensor) -> Tensor:
        stack: list[Any] = [t, 1]  # the boxed stack keeps the lone int, and so does the trace
        op("sum", "dim_IntList").call_boxed(stack)
        result: Tensor = stack[0]
        return result

    trace(boxed_sum, x).save(str(tmp_path / "p.program"))
    assert typedops.load(str(tmp_path / "p.program"), flavor="static")(x).tolist() == [3.0, 7.0]


def test_broadcast_mismatch_message() -> None:
    with pytest.raises(RuntimeError) as info:
        op("mul", "Tensor")(tensor([[1.0, 2.0, 3.0]]), tensor([1.0, 2.0]))
    assert str(info.value) == "The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 1"


def test_inplace_writes_self_and_bumps_version() -> None:
    x = tensor([[1.0, 2.0], [3.0, 4.0]])
    row = op("select", "int")(x, 0, 1)
    before = x._version
    result = op("add_", "Tensor")(row, tensor([10.0, 10.0]), alpha=1)
    assert result is row
    assert x.tolist() == [[1.0, 2.0], [13.0, 14.0]]  # written through the view
    assert x._version == row._version == before + 1
    op("mul_", "Tensor")(x, tensor(2.0))
    op("div_", "Tensor")(x, tensor([2.0, 1.0]))
    assert x.tolist() == [[1.0, 4.0], [13.0, 28.0]] and x._version == before + 3


def test_inplace_refuses_a_wider_result() -> None:
    with pytest.raises(RuntimeError) as info:
        op("add_", "Tensor")(tensor([1, 2]), tensor([0.5, 0.5]))
    assert str(info.value) == "result type float32 can't be cast to the desired output type int64"
    with pytest.raises(RuntimeError) as info:
        op("add_", "Tensor")(tensor([1.0]), tensor([1.0, 2.0]))
    assert str(info.value) == "output with shape [1] doesn't match the broadcast shape [2]"


def test_out_variants_write_resize_and_return_out() -> None:
    out = tensor([0.0])
    version = out._version
    result = op("add", "out")(tensor([[1.0], [2.0]]), tensor([10.0, 20.0]), alpha=1, out=out)
    assert result is out and out.shape == (2, 2) and out.stride() == (2, 1)
    assert out.tolist() == [[11.0, 21.0], [12.0, 22.0]] and out._version == version + 1
    wide = tensor([0.0, 0.0], dtype=F64)
    op("mul", "out")(tensor([1, 2]), tensor([3, 4]), out=wide)
    assert wide.dtype is F64 and wide.tolist() == [3.0, 8.0]
    op("div", "out")(tensor([1, 2]), tensor([2, 2]), out=wide)
    assert wide.tolist() == [0.5, 1.0]
    meta_out = meta(tensor([0.0]))
    assert op("add", "out")(meta(tensor([1.0, 2.0])), meta(tensor([1.0, 2.0])), out=meta_out).shape == (2,)


def test_div_is_true_division() -> None:
    result = op("div", "Tensor")(tensor([1, 3]), tensor([2, 2]))
    assert result.dtype is F32 and result.tolist() == [0.5, 1.5]


@pytest.mark.parametrize(
    ("name", "overload", "reference"),
    [
        ("neg", "", np.negative), ("abs", "", np.abs), ("exp", "", np.exp),
        ("sqrt", "", np.sqrt), ("relu", "", lambda a: np.maximum(a, 0)),
    ],
)  # fmt: skip
def test_unary_against_numpy(name: str, overload: str, reference: Callable[[Any], Any]) -> None:
    a = np.array([[-1.5, 0.0], [2.0, 4.0]], dtype=np.float32)
    with np.errstate(invalid="ignore"):
        np.testing.assert_allclose(arr(op(name, overload)(Tensor.from_numpy(a))), reference(a))


def test_threshold_backward_passes_the_gradient_where_self_exceeds_the_threshold() -> None:
    tb = op("threshold_backward")
    grad = tensor([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]])
    self = tensor([-1.0, 0.0, 0.5, float("nan")])  # broadcast; 0 at the threshold and for NaN
    result = tb(grad, self, 0)
    assert result.dtype is F32 and result.shape == (2, 4)
    assert result.tolist() == [[0.0, 0.0, 3.0, 0.0], [0.0, 0.0, 7.0, 0.0]]
    # relu's former formula, grad * (self > threshold), value for value (docs/autograd.md)
    inf = tensor([float("inf"), float("inf")])
    with np.errstate(invalid="ignore"):  # inf * 0
        np.testing.assert_array_equal(arr(tb(inf, tensor([1.0, -1.0]), 0)), arr(inf * (tensor([1.0, -1.0]) > 0)))
    assert tb(tensor([2.0, 2.0], dtype=ScalarType.float64), tensor([0.5, 1.5]), 1).tolist() == [0.0, 2.0]
    assert tb(meta(grad), meta(self), 0).shape == (2, 4)
    with pytest.raises(RuntimeError, match="The size of tensor a"):
        tb(grad, tensor([1.0, 2.0]), 0)
    with pytest.raises(RuntimeError, match="threshold_backward not implemented for complex tensors."):
        tb(tensor([1j]), tensor([1.0]), 0)


_RELU_DTYPES = [ScalarType.uint8, ScalarType.int8, ScalarType.int16, ScalarType.int32, ScalarType.int64,
                ScalarType.float16, ScalarType.float32, ScalarType.float64]  # fmt: skip


@given(st.sampled_from(_RELU_DTYPES), st.lists(st.integers(-100, 100), min_size=1, max_size=6), st.booleans())
def test_relu_keeps_the_dtype_and_the_values_of_numpys_maximum_with_zero(
    dtype: ScalarType, values: list[int], transposed: bool
) -> None:
    # relu passes a zero of the tensor's numpy type (Note [Typed zeros] in _pointwise.py):
    # the result's dtype and values are those of numpy's maximum with a Python 0.
    a = np.array([values, values[::-1]]).astype(tensor([0], dtype=dtype).numpy().dtype)
    t = Tensor.from_numpy(a)
    if transposed:
        t, a = t.t(), a.T
    result = kernels.relu_cpu(t)
    # A transposed input keeps its layout (Note [Element-wise result strides]).
    assert result.dtype is dtype and result.stride() == (t.stride() if transposed and len(values) > 1 else (result.shape[1], 1))
    np.testing.assert_array_equal(arr(result), np.maximum(a, 0), strict=True)


@given(st.sampled_from([ScalarType.float16, ScalarType.float32, ScalarType.float64]),
       st.lists(st.floats(-4, 4, width=16) | st.just(-0.0) | st.just(float("nan")), min_size=1, max_size=6))  # fmt: skip
def test_threshold_backward_at_zero_is_the_product_by_the_mask(dtype: ScalarType, values: list[float]) -> None:
    # threshold 0 (relu's) compares with a typed zero (Note [Typed zeros]): same values.
    np_dtype = tensor([0.0], dtype=dtype).numpy().dtype
    self_ = np.array(values, dtype=np_dtype)
    grad = np.array(values[::-1], dtype=np_dtype)
    result = kernels.threshold_backward_cpu(Tensor.from_numpy(grad), Tensor.from_numpy(self_), 0)
    assert result.dtype is dtype
    np.testing.assert_array_equal(arr(result), grad * (self_ > 0).astype(np_dtype), strict=True)


UNARY_MATH: list[tuple[str, Callable[[Any], Any]]] = [
    ("exp", np.exp), ("exp2", np.exp2), ("expm1", np.expm1), ("log", np.log), ("log2", np.log2),
    ("log10", np.log10), ("log1p", np.log1p), ("sqrt", np.sqrt), ("rsqrt", lambda a: 1 / np.sqrt(a)),
    ("reciprocal", lambda a: 1 / a), ("sigmoid", lambda a: 1 / (1 + np.exp(-a))), ("sin", np.sin),
    ("cos", np.cos), ("tan", np.tan), ("asin", np.arcsin), ("acos", np.arccos), ("atan", np.arctan),
    ("sinh", np.sinh), ("cosh", np.cosh), ("tanh", np.tanh),
]  # fmt: skip


@pytest.mark.parametrize(("name", "reference"), UNARY_MATH, ids=[n for n, _ in UNARY_MATH])
def test_unary_math_in_its_three_forms(name: str, reference: Callable[[Any], Any]) -> None:
    values = np.array([[0.25, 0.5], [0.75, 2.0]])
    with np.errstate(invalid="ignore"):  # asin(2.0) and acos(2.0) are nan
        expected, from_ints = reference(values), reference(np.array([1.0, 2.0]))
    # the function (and the method), in the input's float dtype
    result = op(name)(Tensor.from_numpy(values))
    assert result.dtype is F64
    np.testing.assert_allclose(arr(result), expected)
    method: Any = getattr(Tensor.from_numpy(values), name)
    np.testing.assert_allclose(arr(method()), expected)
    # integers and bools compute in the default float dtype
    ints = op(name)(tensor([1, 2]))
    assert ints.dtype is F32
    np.testing.assert_allclose(arr(ints), from_ints.astype(np.float32), rtol=1e-6)
    # in place: writes self, bumps its version, returns it; integers are refused untouched
    x = Tensor.from_numpy(values.copy())
    version = x._version
    assert op(f"{name}_")(x) is x and x._version == version + 1
    np.testing.assert_allclose(arr(x), expected)
    y = tensor([1, 2])
    with pytest.raises(RuntimeError, match=r"^result type float32 can't be cast to the desired output type int64$"):
        op(f"{name}_")(y)
    assert y.tolist() == [1, 2] and y._version == 0
    # out=: resized and written
    out = tensor([0.0])
    assert op(name, "out")(Tensor.from_numpy(values), out=out) is out and out.shape == (2, 2)
    np.testing.assert_allclose(arr(out), expected.astype(np.float32), rtol=1e-6)
    # Meta: shape and dtype only, in every form
    assert (op(name)(meta(tensor([[1, 2, 3]]))).shape, op(name)(meta(tensor([[1, 2, 3]]))).dtype) == ((1, 3), F32)
    m = meta(tensor([1.0, 2.0]))
    assert op(f"{name}_")(m) is m
    with pytest.raises(RuntimeError, match="can't be cast"):
        op(f"{name}_")(meta(tensor([1, 2])))
    meta_out = meta(tensor([0.0]))
    assert op(name, "out")(m, out=meta_out) is meta_out and meta_out.shape == (2,)


def test_unary_math_outside_its_domain_gives_nan_and_inf_quietly() -> None:
    with np.errstate(all="raise"):  # numpy would raise if the kernels let it warn
        assert np.isnan(op("log")(tensor([-1.0])).item())
        assert op("log")(tensor([0.0])).item() == float("-inf")
        assert op("reciprocal")(tensor([0.0])).item() == float("inf")
        assert np.isnan(op("asin")(tensor([2.0])).item())


def test_unary_dtypes() -> None:
    assert op("exp")(tensor([1, 2])).dtype is F32
    assert op("sqrt")(meta(tensor([1, 2]))).dtype is F32
    assert op("abs")(tensor([1 + 1j])).dtype is F32
    assert op("neg")(tensor([1, 2])).tolist() == [-1, -2]
    with pytest.raises(RuntimeError, match=r"^Negation, the `-` operator, on a bool tensor is not supported\."):
        op("neg")(tensor([True]))


def test_pow_maximum_minimum() -> None:
    a, b = tensor([1.0, 5.0, 3.0]), tensor([4.0, 2.0, 3.0])
    assert op("pow", "Tensor_Scalar")(a, 2).tolist() == [1.0, 25.0, 9.0]
    assert op("pow", "Tensor_Scalar")(tensor([2, 3]), 0.5).dtype is F32
    assert op("maximum")(a, b).tolist() == [4.0, 5.0, 3.0]
    assert op("minimum")(a, tensor(2)).tolist() == [1.0, 2.0, 2.0]
    with pytest.raises(RuntimeError, match=r"^Integers to negative integer powers are not allowed\.$"):
        op("pow", "Tensor_Scalar")(tensor([2]), -1)


def test_fill_and_zero() -> None:
    x = tensor([[1, 2], [3, 4]])
    column = op("select", "int")(x, 1, 0)
    op("fill_", "Scalar")(column, 7)
    assert x.tolist() == [[7, 2], [7, 4]]
    op("zero_")(x)
    assert x.tolist() == [[0, 0], [0, 0]] and x._version == 2


# -- comparisons and where ---------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "reference"),
    [("eq", np.equal), ("ne", np.not_equal), ("lt", np.less), ("le", np.less_equal),
     ("gt", np.greater), ("ge", np.greater_equal)],
)  # fmt: skip
def test_comparisons(name: str, reference: Callable[[Any, Any], Any]) -> None:
    a = np.array([[1, 2, 3], [4, 5, 6]])
    b = np.array([3.0, 2.0, 1.0], dtype=np.float32)
    result = op(name, "Tensor")(Tensor.from_numpy(a), Tensor.from_numpy(b))
    assert result.dtype is BOOL and result.tolist() == reference(a, b).tolist()
    assert op(name, "Tensor")(meta(Tensor.from_numpy(a)), meta(Tensor.from_numpy(b))).dtype is BOOL


def test_scalar_comparisons() -> None:
    assert op("eq", "Scalar")(tensor([1, 2]), 2).tolist() == [False, True]
    assert op("gt", "Scalar")(tensor([1.0, 2.5]), 2).tolist() == [False, True]


@pytest.mark.parametrize("name", ["lt", "le", "gt", "ge"])
def test_ordering_comparisons_refuse_complex_numbers_as_torch_does(name: str) -> None:
    from typedops.vocabulary import UnsupportedError

    message = f"{name} is not implemented for complex64: complex numbers have no order; compare their .real or .abs() instead"
    for a, b in ((tensor([1j]), tensor([1.0])), (tensor([1.0]), tensor([2j]))):
        with pytest.raises(UnsupportedError) as info:
            op(name, "Tensor")(a, b)
        assert str(info.value) == message and isinstance(info.value, NotImplementedError)
    with pytest.raises(UnsupportedError, match="complex128"):
        getattr(tensor([1.0], dtype=ScalarType.float64), name)(1j)
    assert op("eq", "Tensor")(tensor([1j]), tensor([1j])).tolist() == [True]  # equality has no order to need


def test_where() -> None:
    cond = tensor([[True], [False]])
    result = op("where", "self")(cond, tensor([1, 2]), tensor(0.5))
    assert result.dtype is F32 and result.tolist() == [[1.0, 2.0], [0.5, 0.5]]
    with pytest.raises(RuntimeError) as info:
        op("where", "self")(tensor([1.0]), tensor([1]), tensor([2]))
    assert str(info.value) == "where expected condition to be a boolean tensor, but got a tensor with dtype float32"


# -- reductions and products ----------------------------------------------------------------
def test_sum() -> None:
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    t = Tensor.from_numpy(a)
    assert op("sum")(t).item() == a.sum()
    np.testing.assert_allclose(arr(op("sum", "dim_IntList")(t, [0, -1], True)), a.sum(axis=(0, 2), keepdims=True))
    assert op("sum", "dim_IntList")(t, [1], False).shape == (2, 4)
    assert op("sum")(tensor([True, True])).dtype is I64
    assert op("sum", "dim_IntList")(tensor([1, 2]), None, False, dtype=F64).dtype is F64
    with pytest.raises(RuntimeError, match=r"^dim 0 appears multiple times in the list of dims$"):
        op("sum", "dim_IntList")(t, [0, -3], False)


_SUM_CASES = {  # input numpy dtype -> the dtype a full sum (no dtype=) returns
    "float32": ScalarType.float32, "float64": ScalarType.float64, "float16": ScalarType.float16,
    "int32": I64, "int64": I64, "uint8": I64, "bool": I64,
}  # fmt: skip


@given(st.sampled_from(sorted(_SUM_CASES)), st.lists(st.integers(-50, 50), max_size=12), st.booleans())
def test_full_sum_and_mean_are_numpys_reduction_in_a_new_0_dim_tensor(name: str, values: list[int], strided: bool) -> None:
    """sum and mean's full reductions (built by Tensor._from_array0): the dtype, the 0-dim
    shape and the bits of numpy's add.reduce in the result's dtype, for contiguous inputs
    and strided views; the result owns its memory."""
    a = (np.array(values) / (7 if name.startswith("float") else 1)).astype(name)
    if strided:
        a = a[::2]  # the tensor shares it: stride 2
    t = Tensor.from_numpy(a)
    dtype = _SUM_CASES[name]
    total = op("sum")(t)
    expected = np.add.reduce(a, axis=None, dtype=arr(total).dtype)
    assert total.dtype is dtype and total.shape == () == total.stride() and total.storage_offset() == 0
    assert arr(total).tobytes() == np.asarray(expected).tobytes()
    assert not np.shares_memory(arr(total), a) and total._version == 0 and total.grad_fn is None
    if name.startswith("float"):
        mean = op("mean")(t)
        with np.errstate(divide="ignore", invalid="ignore"):
            expected_mean = np.true_divide(np.add.reduce(a, axis=None, dtype=a.dtype), a.size, dtype=a.dtype)
        assert mean.dtype is dtype and mean.shape == ()
        assert arr(mean).tobytes() == np.asarray(expected_mean).tobytes()


@given(
    st.sampled_from(sorted(_SUM_CASES)),
    st.lists(st.integers(0, 3), max_size=3).flatmap(
        lambda shape: st.tuples(st.just(shape), st.permutations(range(len(shape))), st.booleans(), st.booleans())
    ),
    st.data(),
)
def test_sum_and_mean_over_every_dim_are_numpys_reduction_in_a_new_0_dim_tensor(
    name: str, case: tuple[list[int], list[int], bool, bool], data: st.DataObject
) -> None:
    """sum.dim_IntList and mean.dim over all dimensions without keepdim (dims as None, [],
    or each one in any order, some negative) reduce into a new 0-dim array: the dtype, the
    0-dim shape and the bits of numpy's add.reduce over those axes, as the path through a
    numpy scalar gave them, for 0-dim, empty and strided inputs."""
    shape, order, strided, negative = case
    values = data.draw(st.lists(st.integers(-50, 50), min_size=int(np.prod(shape)), max_size=int(np.prod(shape))))
    a = (np.array(values) / (7 if name.startswith("float") else 1)).astype(name).reshape(shape)
    if strided and a.ndim:
        a = np.concatenate([a, a], axis=-1)[..., ::2]  # a view with a last stride of 2
    t = Tensor.from_numpy(a)
    dims = data.draw(st.sampled_from([None, [], [d - a.ndim if negative else d for d in order]]))
    axes = tuple(range(a.ndim))
    total = op("sum", "dim_IntList")(t, dims, False)
    expected = np.asarray(np.add.reduce(a, axis=axes, dtype=arr(total).dtype, keepdims=False))
    assert total.dtype is _SUM_CASES[name] and total.shape == () == total.stride() and total.storage_offset() == 0
    assert arr(total).tobytes() == expected.tobytes() and arr(total).dtype == expected.dtype
    assert not np.shares_memory(arr(total), a) and total._version == 0
    if name.startswith("float"):
        mean = op("mean", "dim")(t, dims, False)
        with np.errstate(divide="ignore", invalid="ignore"):
            expected_mean = np.true_divide(np.asarray(np.add.reduce(a, axis=axes, dtype=a.dtype, keepdims=False)), a.size, dtype=a.dtype)
        assert mean.dtype is total.dtype and mean.shape == () == mean.stride()
        assert arr(mean).tobytes() == np.asarray(expected_mean).tobytes() and arr(mean).dtype == a.dtype


@pytest.mark.parametrize("dims", [None, []])
@pytest.mark.parametrize("dtype", [None, F64, ScalarType.float16])
def test_sum_and_mean_over_every_dim_are_their_full_reductions(dims: list[int] | None, dtype: ScalarType | None) -> None:
    """dim None or [] without keepdim runs sum.default's and mean.default's kernels: the same
    dtype and bits for a given dtype= too; mean of integers is refused with mean's message."""
    a = np.arange(7, dtype=np.float32)[::2] / 3
    t = Tensor.from_numpy(a)
    for name, overload in (("sum", "dim_IntList"), ("mean", "dim")):
        full, by_dims = op(name)(t, dtype=dtype), op(name, overload)(t, dims, False, dtype=dtype)
        assert by_dims.dtype is full.dtype and by_dims.shape == () and arr(by_dims).tobytes() == arr(full).tobytes()
    with pytest.raises(RuntimeError, match="^mean\\(\\): could not infer output dtype"):
        op("mean", "dim")(tensor([1, 2]), dims, False)


def test_sum_and_mean_keepdim_over_a_0_dim_tensor_stay_0_dim() -> None:
    t = Tensor.from_numpy(np.array(2.5, dtype=np.float32))
    for name, overload in (("sum", "dim_IntList"), ("mean", "dim")):
        result = op(name, overload)(t, None, True)
        assert result.shape == () and result.dtype is F32 and result.item() == 2.5


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_a_lone_int_is_a_list_of_one_for_int1(dim: int) -> None:
    # int[1]? dim takes a lone int, as in PyTorch: x.sum(0) reduces dim 0 only.
    t = Tensor.from_numpy(np.arange(6, dtype=np.float32).reshape(2, 3))
    assert t.sum(dim).tolist() == t.sum([dim]).tolist()
    assert t.mean(dim, True).shape == t.mean([dim], True).shape
    assert op("sum", "dim_IntList")(meta(t), dim, False).shape == op("sum", "dim_IntList")(meta(t), [dim], False).shape


def test_mean() -> None:
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = Tensor.from_numpy(a)
    assert op("mean")(t).item() == pytest.approx(a.mean())
    np.testing.assert_allclose(arr(op("mean", "dim")(t, [1], True)), a.mean(axis=1, keepdims=True))
    assert op("mean", "dim")(meta(t), [0], False).shape == (3,)
    with pytest.raises(RuntimeError) as info:
        op("mean")(tensor([1, 2]))
    assert str(info.value) == (
        "mean(): could not infer output dtype. Input dtype must be either a floating point or "
        "complex dtype. Got: int64"
    )


def test_max_family() -> None:
    a = np.array([[1, 9, 3], [7, 2, 7]])
    t = Tensor.from_numpy(a)
    values, indices = op("max", "dim")(t, 1, False)
    assert values.tolist() == [9, 7] and indices.tolist() == [1, 0] and indices.dtype is I64
    values, indices = op("max", "dim")(t, 0, True)
    assert values.shape == (1, 3) and indices.tolist() == [[1, 0, 1]]
    assert op("amax")(t, [], False).item() == 9
    assert op("amax")(t, [0], True).tolist() == [[7, 9, 7]]
    # amax's dim is int[1], as in torch: a lone int is a one-item list on every call path.
    assert str(dispatcher.find_schema_or_throw("core::amax", "").schema).startswith("core::amax(Tensor self, int[1] dim=[]")
    from typedops import core as core_api

    assert core_api.amax(t, 0).tolist() == [7, 9, 7] and t.amax(1).tolist() == [9, 7]
    assert op("argmax")(t, None, False).item() == 1
    assert op("argmax")(t, None, True).shape == (1, 1)
    assert op("argmax")(t, -1, False).tolist() == [1, 0]
    meta_values, meta_indices = op("max", "dim")(meta(t), 0, False)
    assert (meta_values.shape, meta_values.dtype, meta_indices.dtype) == ((3,), I64, I64)


@pytest.mark.parametrize(("left", "right"), [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
                                             ((5, 2, 3), (3, 4)), ((5, 1, 2, 3), (4, 3, 2))])  # fmt: skip
def test_matmul_against_numpy(left: tuple[int, ...], right: tuple[int, ...]) -> None:
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(left).astype(np.float32), rng.standard_normal(right).astype(np.float32)
    result = op("matmul")(Tensor.from_numpy(a), Tensor.from_numpy(b))
    np.testing.assert_allclose(arr(result), a @ b, rtol=1e-5)
    assert op("matmul")(meta(Tensor.from_numpy(a)), meta(Tensor.from_numpy(b))).shape == np.shape(a @ b)


@given(
    st.tuples(*[st.sampled_from([1, 2, 5, 8, 33, 70])] * 3),  # vector-like shapes are BLAS special cases
    st.sampled_from([np.float32, np.float64]),
    st.sampled_from(["contiguous", "transposed", "strided", "offset"]),
    st.integers(0, 2**32 - 1),
)
def test_2d_products_equal_numpy_matmul_bit_for_bit(
    mkp: tuple[int, int, int], dtype: Any, layout: str, seed: int
) -> None:
    """matmul and mm of 2-D float tensors take ndarray.dot where it gives numpy's matmul
    bits, else matmul itself (Note [2-D products by dot]): the result is numpy's
    ``a @ b`` exactly, whatever the layout."""
    m, k, p = mkp
    rng = np.random.default_rng(seed)
    b = rng.standard_normal((k, p)).astype(dtype)
    if layout == "contiguous":
        a = rng.standard_normal((m, k)).astype(dtype)
    elif layout == "transposed":
        a = rng.standard_normal((k, m)).astype(dtype).T
    elif layout == "strided":
        a = rng.standard_normal((m, 2 * k)).astype(dtype)[:, ::2]
    else:
        a = rng.standard_normal(m * k + 1).astype(dtype)[1:].reshape(m, k)
    expected = a @ b
    for name in ("matmul", "mm"):
        for x, y in ((a, b), (b.T, a.T)):
            got = arr(op(name)(Tensor.from_numpy(x), Tensor.from_numpy(y)))
            assert got.dtype == expected.dtype and np.array_equal(got, x @ y)


@pytest.mark.parametrize("shapes", [((3,), (3, 2)), ((2, 3), (3,)), ((2, 2, 3), (3, 2)), ((2, 3), (2, 3, 2)), ((3,), (3,))])
def test_matmul_of_other_ranks_than_two_takes_numpy_matmul(shapes: tuple[tuple[int, ...], tuple[int, ...]]) -> None:
    """Only two 2-D operands take the dot path (Note [2-D products by dot]); a 1-D or 3-D
    one on either side gives numpy's ``a @ b`` too."""
    a = (np.arange(int(np.prod(shapes[0])), dtype=np.float32) / 7).reshape(shapes[0])
    b = (np.arange(int(np.prod(shapes[1])), dtype=np.float32) / 3).reshape(shapes[1])
    got = arr(op("matmul")(Tensor.from_numpy(a), Tensor.from_numpy(b)))
    assert got.shape == (a @ b).shape and np.array_equal(got, a @ b)


def test_matmul_errors() -> None:
    with pytest.raises(RuntimeError) as info:
        op("mm")(tensor([[1.0, 2.0]]), tensor([[1.0, 2.0]]))
    assert str(info.value) == "mat1 and mat2 shapes cannot be multiplied (1x2 and 1x2)"
    with pytest.raises(RuntimeError) as info:
        op("matmul")(tensor([1.0]), tensor([1]))
    assert str(info.value) == "expected both operands to have the same dtype, but got: float32 != int64"
    assert op("mm")(tensor([[1, 2]]), tensor([[3], [4]])).tolist() == [[11]]


# -- views ------------------------------------------------------------------------------------
def test_views_share_storage_and_write_through() -> None:
    base = Tensor.from_numpy(np.arange(12, dtype=np.float32).reshape(3, 4))
    v = op("view")(base, [2, -1])
    assert v.shape == (2, 6) and v.storage is base.storage
    arr(v)[1, 0] = -1.0
    assert base.tolist()[1][2] == -1.0
    col = op("select", "int")(base, 1, 2)
    assert (col.shape, col.stride(), col.storage_offset()) == ((3,), (4,), 2)
    sliced = op("slice", "Tensor")(base, 1, 1, None, 2)
    assert (sliced.shape, sliced.stride(), sliced.storage_offset()) == ((3, 2), (4, 2), 1)
    assert sliced.tolist() == arr(base)[:, 1::2].tolist()
    assert op("slice", "Tensor")(base, 0, -2, 100, 1).shape == (2, 4)


@pytest.mark.parametrize(
    ("name", "overload", "args", "reference"),
    [
        ("transpose", "int", (0, 2), lambda a: a.transpose(2, 1, 0)),
        ("permute", "", ([1, 2, 0],), lambda a: a.transpose(1, 2, 0)),
        ("unsqueeze", "", (1,), lambda a: a[:, None]),
        ("unsqueeze", "", (-1,), lambda a: a[..., None]),
        ("squeeze", "dim", (0,), lambda a: a),
        ("flatten", "using_ints", (1, -1), lambda a: a.reshape(2, 12)),
        ("reshape", "", ([4, 6],), lambda a: a.reshape(4, 6)),
        ("as_strided", "", ([2, 2], [1, 2], 1), lambda a: np.lib.stride_tricks.as_strided(a.reshape(-1)[1:], (2, 2), (4, 8))),
    ],
)  # fmt: skip
def test_views_against_numpy(name: str, overload: str, args: tuple[Any, ...], reference: Callable[[Any], Any]) -> None:
    a = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    base = Tensor.from_numpy(a)
    result = op(name, overload)(base, *args)
    assert result.tolist() == reference(a).tolist()
    assert result.storage is base.storage
    torch = pytest.importorskip("torch")
    assert result.stride() == getattr(torch, name)(torch.from_numpy(a), *args).stride()


def test_t_expand_and_the_torch_strides() -> None:
    torch = pytest.importorskip("torch")
    x = Tensor.from_numpy(np.arange(6.0).reshape(2, 3))
    tx = torch.arange(6.0).reshape(2, 3)
    assert op("t")(x).stride() == tx.t().stride()
    expanded = op("expand")(op("unsqueeze")(x, 0), [4, -1, -1])
    assert expanded.stride() == tx.unsqueeze(0).expand(4, -1, -1).stride() == (0, 3, 1)
    with pytest.raises(RuntimeError) as info:
        op("expand")(x, [3, 3])
    assert str(info.value) == (
        "The expanded size of the tensor (3) must match the existing size (2) at non-singleton "
        "dimension 0.  Target sizes: [3, 3].  Tensor sizes: [2, 3]"
    )


def test_reshape_copies_only_when_it_must() -> None:
    x = Tensor.from_numpy(np.arange(6.0).reshape(2, 3))
    xt = op("t")(x)
    with pytest.raises(RuntimeError) as info:
        op("view")(xt, [6])
    assert str(info.value) == (
        "view size is not compatible with input tensor's size and stride (at least one dimension "
        "spans across two contiguous subspaces). Use .reshape(...) instead."
    )
    flat = op("reshape")(xt, [6])
    assert flat.storage is not x.storage and flat.tolist() == [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]
    assert op("reshape")(x, [3, 2]).storage is x.storage
    with pytest.raises(RuntimeError, match=r"^shape '\[4, -1\]' is invalid for input of size 6$"):
        op("reshape")(x, [4, -1])


def test_view_errors() -> None:
    x = tensor([[1, 2], [3, 4]])
    with pytest.raises(IndexError) as info:
        op("select", "int")(x, 0, 2)
    assert str(info.value) == "select(): index 2 out of range for tensor of size [2, 2] at dimension 0"
    with pytest.raises(IndexError) as info:
        op("transpose", "int")(x, 0, 2)
    assert str(info.value) == "Dimension out of range (expected to be in range of [-2, 1], but got 2)"
    with pytest.raises(RuntimeError, match=r"^permute\(\): duplicate dims are not allowed \(dims=\[0, 0\]\)$"):
        op("permute")(x, [0, 0])


# -- layout, copies, joins -----------------------------------------------------------------
def test_contiguous_channels_last_exact_strides() -> None:
    x = op("randn")([1, 64, 5, 4])
    y = op("contiguous")(x, memory_format=CL)
    assert y.shape == (1, 64, 5, 4) and y.stride() == (1280, 1, 256, 64)
    assert not y.is_contiguous() and y.is_contiguous(memory_format=CL)
    np.testing.assert_array_equal(arr(y), arr(x))
    assert op("contiguous")(y, memory_format=CL) is y  # already laid out: no copy
    back = op("contiguous")(y)
    assert back.stride() == (1280, 20, 4, 1) and back.is_contiguous()
    assert op("contiguous")(meta(x), memory_format=CL).stride() == (1280, 1, 256, 64)


def test_contiguous_matches_torch() -> None:
    torch = pytest.importorskip("torch")
    for shape in [(2, 3, 4, 5), (1, 1, 3, 3), (2, 3, 1, 1), (0, 3, 2, 2)]:
        x = op("zeros")(list(shape))
        ours = op("contiguous")(x, memory_format=CL)
        theirs = torch.zeros(shape).contiguous(memory_format=torch.channels_last)
        assert ours.stride() == theirs.stride(), shape
        assert ours.is_contiguous() == theirs.is_contiguous(), shape
    with pytest.raises(RuntimeError, match=r"^preserve memory format is unsupported by the contiguous operator$"):
        op("contiguous")(op("zeros")([1]), memory_format=MemoryFormat.preserve_format)


def test_clone_preserves_layout_and_copy_broadcasts() -> None:
    x = op("contiguous")(op("randn")([2, 3, 4, 5]), memory_format=CL)
    c = op("clone")(x)
    assert c.stride() == x.stride() and c.storage is not x.storage
    assert op("clone")(x, memory_format=MemoryFormat.contiguous_format).is_contiguous()
    dst = tensor([[0, 0, 0], [0, 0, 0]])
    assert op("copy_")(dst, tensor([1.9, 2.0, 3.0])) is dst
    assert dst.tolist() == [[1, 2, 3], [1, 2, 3]] and dst._version == 1
    with pytest.raises(NotImplementedError, match=r"^Cannot copy out of meta tensor; "):
        op("copy_")(dst, meta(dst))


def test_cat_and_stack() -> None:
    a, b = np.arange(6).reshape(2, 3), np.arange(6, 12).reshape(2, 3)
    ta, tb = Tensor.from_numpy(a), Tensor.from_numpy(b)
    assert op("cat")([ta, tb], 1).tolist() == np.concatenate([a, b], 1).tolist()
    assert op("cat")([ta, tensor([[0.5, 0.5, 0.5]])], 0).dtype is F32
    assert op("cat")([ta, tensor([])], 0).shape == (2, 3)  # legacy empty tensors are skipped
    assert op("stack")([ta, tb], 1).tolist() == np.stack([a, b], 1).tolist()
    assert op("stack")([meta(ta), meta(tb)], -1).shape == (2, 3, 2)
    with pytest.raises(RuntimeError) as info:
        op("cat")([ta, tensor([[1, 2]])], 0)
    assert str(info.value) == (
        "Sizes of tensors must match except in dimension 0. Expected size 3 but got size 2 for "
        "tensor number 1 in the list."
    )
    with pytest.raises(RuntimeError) as info:
        op("stack")([ta, tensor([1])], 0)
    assert str(info.value) == "stack expects each tensor to be equal size, but got [2, 3] at entry 0 and [1] at entry 1"


# -- factories and conversions -------------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "overload", "args", "values", "dtype"),
    [
        ("empty", "memory_format", ([2, 3],), None, F32),
        ("zeros", "", ([2, 3],), np.zeros((2, 3)), F32),
        ("ones", "", ([2],), np.ones(2), F32),
        ("full", "", ([2], 7), np.full(2, 7), I64),
        ("full", "", ([2], 0.5), np.full(2, 0.5), F32),
        ("full", "", ([1], True), np.full(1, True), BOOL),
        ("scalar_tensor", "", (3,), np.array(3.0), F32),
        ("arange", "", (5,), np.arange(5), I64),
        ("arange", "start_step", (1, 2, 0.25), np.arange(1, 2, 0.25), F32),
        ("arange", "start_step", (5, 0, -2), np.arange(5, 0, -2), I64),
        ("randn", "", ([3, 2],), None, F32),
    ],
)
def test_factories_pick_cpu_or_meta_from_device(
    name: str, overload: str, args: tuple[Any, ...], values: Any, dtype: ScalarType
) -> None:
    handle = op(name, overload)
    on_cpu = handle(*args)
    assert on_cpu.device == Device("cpu") and on_cpu.dtype is dtype
    if values is not None:
        np.testing.assert_allclose(arr(on_cpu), values)
    for device in ("meta", Device("meta")):
        on_meta = handle(*args, device=device)
        assert on_meta.is_meta and on_meta.shape == on_cpu.shape and on_meta.dtype is dtype
    assert handle(*args, dtype=F64).dtype is F64


def test_factory_options() -> None:
    x = op("empty", "memory_format")([2, 3, 4, 5], memory_format=CL)
    assert x.is_contiguous(memory_format=CL)
    kernels.manual_seed(3)
    first = op("randn")([4]).tolist()
    kernels.manual_seed(3)
    assert op("randn")([4]).tolist() == first
    with pytest.raises(RuntimeError, match=r"^randn needs a floating-point or complex dtype, not int64$"):
        op("randn")([2], dtype=I64)
    with pytest.raises(RuntimeError, match=r"^upper bound and larger bound inconsistent with step sign$"):
        op("arange", "start_step")(0, 5, -1)
    with pytest.raises(RuntimeError, match=r"^Trying to create tensor with negative dimension -1: \[2, -1\]$"):
        op("zeros")([2, -1])


@given(st.lists(st.integers(0, 4), max_size=3), st.booleans())
def test_zeros_with_its_defaults_is_zeros_with_them_spelled_out(size: list[int], as_tuple: bool) -> None:
    """The all-defaults call takes its own path (Note [Zeros in one frame] in
    typedops/tensor/_zeros.py): the same tensor as the defaults given by name."""
    from tests.helpers import identical_tensors
    from typedops import Layout
    from typedops.core import zeros

    shape = tuple(size) if as_tuple else size
    made = zeros(shape)
    for spelled in (zeros(shape, dtype=F32), zeros(shape, device="cpu"), zeros(shape, layout=Layout.strided)):
        identical_tensors(made, spelled)
        assert made.device is spelled.device and made.keys == spelled.keys and made.is_contiguous()


@pytest.mark.parametrize("size", [[-1], (-3,), [2, -1], [-1, 2]])
def test_zeros_with_its_defaults_refuses_negative_sizes_in_pytorchs_words(size: list[int]) -> None:
    bad = next(n for n in size if n < 0)
    with pytest.raises(RuntimeError) as info:
        op("zeros")(size)
    assert str(info.value) == f"Trying to create tensor with negative dimension {bad}: {list(size)}"


def test_zeros_like_to_and_to_copy() -> None:
    x = op("contiguous")(op("ones")([2, 3, 4, 5], dtype=I64), memory_format=CL)
    z = op("zeros_like")(x)
    assert z.stride() == x.stride() and z.dtype is I64 and not arr(z).any()
    assert op("zeros_like")(x, device="meta").is_meta
    assert op("to", "dtype")(x, I64) is x
    as_float = op("to", "dtype")(x, F32)
    assert as_float.dtype is F32 and as_float.stride() == x.stride() and arr(as_float).all()
    assert op("_to_copy")(x, device="meta").is_meta
    with pytest.raises(NotImplementedError, match=r"^Cannot copy out of meta tensor; "):
        op("_to_copy")(meta(x), device="cpu")


# -- meta: shapes and dtypes without data ---------------------------------------------------------
META_CASES: list[tuple[str, str, Callable[[Tensor, Tensor], tuple[Any, ...]]]] = [
    ("add", "Tensor", lambda a, b: (a, b)),
    ("mul", "Tensor", lambda a, b: (a, b)),
    ("div", "Tensor", lambda a, b: (a, b)),
    ("sub", "Tensor", lambda a, b: (a, b)),
    ("add", "Scalar", lambda a, b: (a, 2.5)),
    ("maximum", "", lambda a, b: (a, b)),
    ("lt", "Tensor", lambda a, b: (a, b)),
    ("where", "self", lambda a, b: (op("gt", "Scalar")(a, 0), a, b)),
    ("exp", "", lambda a, b: (a,)),
    ("sum", "dim_IntList", lambda a, b: (a, [1], True)),
    ("mean", "", lambda a, b: (b,)),
    ("amax", "", lambda a, b: (a, [0], False)),
    ("argmax", "", lambda a, b: (a, 1, False)),
    ("matmul", "", lambda a, b: (b, op("t")(b))),
    ("transpose", "int", lambda a, b: (a, 0, 1)),
    ("reshape", "", lambda a, b: (op("t")(a), [-1])),
    ("clone", "", lambda a, b: (a,)),
    ("cat", "", lambda a, b: ([b, b], 0)),
    ("stack", "", lambda a, b: ([a, a], 1)),
    ("zeros_like", "", lambda a, b: (b,)),
    ("pow", "Tensor_Scalar", lambda a, b: (a, 0.5)),
]


@pytest.mark.parametrize(("name", "overload", "make_args"), META_CASES, ids=[f"{n}.{o}" for n, o, _ in META_CASES])
def test_meta_agrees_with_cpu(name: str, overload: str, make_args: Callable[[Tensor, Tensor], tuple[Any, ...]]) -> None:
    a, b = tensor([[1, -2, 3], [4, 5, -6]]), tensor([[0.5, 1.5, 2.5]])
    on_cpu = op(name, overload)(*make_args(a, b))
    on_meta = op(name, overload)(*make_args(meta(a), meta(b)))
    assert on_meta.is_meta
    assert (on_meta.shape, on_meta.stride(), on_meta.dtype) == (on_cpu.shape, on_cpu.stride(), on_cpu.dtype)
    with pytest.raises(RuntimeError, match=r"^a meta tensor has no data"):
        on_meta.numpy()


def test_meta_inplace_checks_and_bumps() -> None:
    x = meta(tensor([1.0, 2.0]))
    assert op("add_", "Tensor")(x, meta(tensor(1.0))) is x and x._version == 1
    with pytest.raises(RuntimeError, match=r"^result type float32 can't be cast to the desired output type int64$"):
        op("mul_", "Tensor")(meta(tensor([1])), meta(tensor([1.0])))


@given(
    st.sampled_from([np.float16, np.float32, np.float64]),
    st.lists(st.tuples(st.floats(allow_subnormal=True, width=16), st.floats(width=16)), min_size=1, max_size=6),
    st.booleans(),
)
def test_sub_takes_its_fast_path_to_the_same_bits_as_the_planned_path(
    dtype: Any, pairs: list[tuple[float, float]], broadcast: bool
) -> None:
    """Note [Subtraction's fast path]: ``a - b`` (alpha -1 as an int: the fast path) and
    ``sub(a, b, alpha=1.0)`` (a float alpha: the plan, ``a + b * -1``) agree bit for bit,
    signed zeros and infinities included, and NaN where the other is NaN."""
    a = Tensor.from_numpy(np.array([x for x, _ in pairs], dtype))
    b = Tensor.from_numpy(np.array([y for _, y in pairs][:1] if broadcast else [y for _, y in pairs], dtype))
    with np.errstate(all="ignore"):
        fast, plan = typedops.core.sub(a, b), typedops.core.sub(a, b, alpha=1.0)
    assert fast.dtype == plan.dtype and fast.shape == plan.shape
    f, p = fast.numpy(), plan.numpy()
    nan = np.isnan(p)
    assert (np.isnan(f) == nan).all()  # a NaN's sign and payload are the hardware's
    assert f[~nan].tobytes() == p[~nan].tobytes()


def test_kernels_reading_arrays_in_line_see_a_replaced_storage_buffer() -> None:
    """sum, binary_fast and matmul's dot path read a tensor's cached array themselves
    (array_of in line): a storage whose buffer resize_ replaced must be read afresh."""
    from typedops.tensor import array_of, make_view, resize_

    t = tensor([[1.0, 2.0], [3.0, 4.0]])
    view = make_view(t, (2, 2), (2, 1), 0)
    assert op("sum")(view).item() == 10.0 and op("add", "Tensor")(view, view).tolist() == [[2.0, 4.0], [6.0, 8.0]]
    assert op("matmul")(view, view).tolist() == [[7.0, 10.0], [15.0, 22.0]]
    resize_(t, (3, 2))  # grows: the storage gets a new buffer, the view's cached array is stale
    array_of(t)[:2] = [[5.0, 6.0], [7.0, 8.0]]
    assert op("sum")(view).item() == 26.0 and op("add", "Tensor")(view, view).tolist() == [[10.0, 12.0], [14.0, 16.0]]
    assert op("matmul")(view, view).tolist() == [[67.0, 78.0], [91.0, 106.0]]


@given(
    st.sampled_from([np.float32, np.float64, np.int64, np.bool_]),
    st.sampled_from([np.float32, np.float64, np.int64, np.bool_]),
    st.lists(st.integers(-5, 5), min_size=1, max_size=4),
    st.sampled_from(["same", "row", "scalar", "wrapped", "mismatch"]),
)
def test_compiled_fast_path_kernels_agree_with_binary_fast_and_the_plan(
    left: Any, right: Any, values: list[int], other_shape: str
) -> None:
    """Note [One fast path, three signatures]: ``add_cpu``/``mul_cpu`` (the fast path in
    their own frame) give what ``binary_fast`` gives when it applies, else what their
    plan gives (errors included), and take their schemas' signatures."""
    from typedops.core.kernels import _pointwise
    from typedops.core.kernels._common import binary_fast
    from typedops.tensor import wrapped_scalar

    a = Tensor.from_numpy(np.array(values, left))
    b: Tensor
    if other_shape == "wrapped":
        b = wrapped_scalar(2.5 if right is np.float64 else 2, Device("cpu"))
    else:
        count = {"same": len(values), "row": 1, "scalar": 0, "mismatch": len(values) + 1}[other_shape]
        b = Tensor.from_numpy(np.array(values[:1] * count if count else values[0], right))
    Kernel = Callable[..., Tensor]
    cases: list[tuple[str, str, Kernel, Callable[[Any, Any], Any], Kernel, dict[str, Any]]] = [
        ("add", "Tensor", _pointwise.add_cpu, lambda x, y: x + y, _pointwise._add_planned, {"alpha": 1}),
        ("mul", "Tensor", _pointwise.mul_cpu, lambda x, y: x * y, _pointwise._mul_planned, {}),
    ]
    for name, overload, kernel, python_op, planned, kwargs in cases:
        check_kernel_signature(op(name, overload).schema, kernel, with_keys=False)
        fast = binary_fast(a, b, python_op)
        try:
            expected = fast if fast is not None else planned(a, b, **kwargs)
        except Exception as error:  # the plan's error is the kernel's
            with pytest.raises(type(error)) as info:
                kernel(a, b, **kwargs)
            assert str(info.value) == str(error)
            continue
        got = kernel(a, b, **kwargs)
        assert got.dtype == expected.dtype and got.shape == expected.shape and got.tolist() == expected.tolist()


def test_flip_and_reversed_copy_the_elements_in_reverse_order() -> None:
    x = tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert x.flip([0, -1]).tolist() == [[6.0, 5.0, 4.0], [3.0, 2.0, 1.0]] and x.flip([]).tolist() == x.tolist()
    assert [row.tolist() for row in reversed(x)] == [[4.0, 5.0, 6.0], [1.0, 2.0, 3.0]]
    assert reversed(tensor(2.0)).tolist() == 2.0  # a 0-dim tensor: itself, as torch's
    with pytest.raises(TensorError) as info:
        x.flip([1, -1])
    assert str(info.value) == "dim 1 appears multiple times in the list of dims; name each dim once"


def test_masked_fill_keeps_the_dtype_and_broadcasts_the_mask() -> None:
    ints = tensor([1, 2, 3])
    assert ints.masked_fill(ints > 1, 7.9).tolist() == [1, 7, 7] and ints.masked_fill(ints > 1, 7.9).dtype is ints.dtype
    row = tensor([1.0, 2.0])
    assert row.masked_fill(tensor([[True], [False]]), tensor(0.5)).tolist() == [[0.5, 0.5], [1.0, 2.0]]
    alias = row
    row.masked_fill_(row > 1.5, -1.0)
    assert alias.tolist() == [1.0, -1.0]
    with pytest.raises(TensorError) as info:
        row.masked_fill(tensor([1, 0]), 0)
    assert str(info.value) == (
        "masked_fill only supports boolean masks, but got mask with dtype int64; pass mask != 0"
    )


def test_new_factories_take_the_tensors_dtype_and_device_unless_given() -> None:
    ints = tensor([1, 2], dtype=I32)
    assert ints.new_zeros(2, 3).dtype is I32 and ints.new_zeros(2, 3).shape == (2, 3)
    assert ints.new_full((2,), 7.9).tolist() == [7, 7] and ints.new_ones([2], dtype=F64).dtype is F64
    assert ints.new_empty(3).shape == (3,)
    meta = typedops.core.zeros([1], device="meta")
    assert meta.new_ones(2).is_meta
