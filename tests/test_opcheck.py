"""typedops.opcheck (issue 15): deliberately wrong ops make each check fire; every core op
passes."""

from __future__ import annotations

import importlib
import itertools
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import typedops
from typedops import Tensor, core, op, opcheck, tensor
from typedops.schema import Argument, FunctionSchema
from typedops.tensor import bump_version, empty_meta
from typedops.testing import OpCheckError, checks, register_check
from typedops.vocabulary import ScalarType
from typedops.dispatch import AutogradContext, InDims, VmapInfo

_fresh = itertools.count()


def _ns() -> str:
    return f"opcheck_test_{next(_fresh)}"


def _x() -> Tensor:
    return tensor([[0.5, 1.0, 1.5], [2.0, 2.5, 3.0]])


def test_each_check_fires_on_a_deliberately_wrong_op() -> None:
    ns = _ns()

    @op(f"{ns}::scribble")
    def scribble(x: Tensor) -> Tensor:  # writes to x, but does not say so
        x.numpy()[...] = 0
        return Tensor.from_numpy(x.numpy() + 1)

    @op(f"{ns}::same")
    def same(x: Tensor) -> Tensor:  # returns its input
        return x

    @op(f"{ns}::total")
    def total(x: Tensor) -> Tensor:
        return Tensor.from_numpy(x.numpy().sum(0))

    @total.register_fake
    def _(x: Tensor) -> Tensor:  # wrong: the kernel reduces dimension 0
        return empty_meta(x.shape, x.dtype)

    @op(f"{ns}::claims", mutates_args=("x",))
    def claims(x: Tensor) -> Tensor:  # says it writes x, never does
        return Tensor.from_numpy(x.numpy() * 2)

    with pytest.raises(OpCheckError) as info:
        opcheck(scribble, (_x(),))
    assert str(info.value) == (
        f"opcheck({ns}::scribble): test_schema failed: it changed argument 'x' (its values), but the "
        "schema does not declare that: declare it Tensor(a!) x (for an @op operator: mutates_args=('x',)), "
        "or work on a copy"
    )
    assert (info.value.op, info.value.check) == (f"{ns}::scribble", "test_schema")
    assert isinstance(info.value, AssertionError)
    with pytest.raises(OpCheckError, match=re.escape("test_schema failed: result 0 shares memory with argument 'x'")):
        opcheck(same, (_x(),))
    with pytest.raises(OpCheckError, match=re.escape("test_schema failed: the schema declares argument 'x' written")):
        opcheck(claims, (_x(),))
    results = opcheck(total, (_x(),), raise_exception=False)
    assert results["test_schema"] == results["test_boxed"] == "SUCCESS"
    assert results["test_faketensor"] == (
        "result 0: the fake rule gives shape [2, 3], dtype float32, strides [3, 1], device cpu, the kernel "
        "gives shape [3], dtype float32, strides [1], device cpu: make the Meta kernel (register_fake) "
        "compute what the kernel computes"
    )
    no_fake = opcheck(scribble, (_x(),), test_utils="test_faketensor", raise_exception=False)["test_faketensor"]
    assert no_fake.startswith(f"{ns}::scribble has no fake rule, so FakeTensorMode cannot run it (its kernel ran")
    for f in (scribble, same, total, claims):
        f.library.remove()


def test_a_bumped_version_counts_as_a_write() -> None:
    ns = _ns()

    @op(f"{ns}::touch")
    def touch(x: Tensor) -> Tensor:
        bump_version(x)
        return Tensor.from_numpy(x.numpy() * 1)

    with pytest.raises(OpCheckError, match=re.escape("it changed argument 'x' (its version counter)")):
        opcheck(touch, (_x(),), test_utils=["test_schema"])
    touch.library.remove()


def test_a_boxed_call_that_differs_is_caught() -> None:
    ns = _ns()
    calls = itertools.count()

    @op(f"{ns}::moody")
    def moody(x: Tensor) -> Tensor:
        return Tensor.from_numpy(x.numpy() * next(calls))

    with pytest.raises(OpCheckError, match=re.escape("test_boxed failed: the boxed call (call_boxed) gives")):
        opcheck(moody, (_x(),), test_utils="test_boxed")
    moody.library.remove()


def test_a_wrong_gradient_is_caught() -> None:
    ns = _ns()

    @op(f"{ns}::cube")
    def cube(x: Tensor) -> Tensor:
        return Tensor.from_numpy(x.numpy() ** 3)

    @cube.register_fake
    def _(x: Tensor) -> Tensor:
        return empty_meta(x.shape, x.dtype)

    def setup(ctx: AutogradContext, inputs: tuple[Any, ...], output: Tensor) -> None:
        ctx.save_for_backward(inputs[0])

    def wrong(ctx: AutogradContext, grad: Tensor) -> Tensor:
        (x,) = ctx.saved_tensors
        return grad * x * x * 2  # should be 3 x^2

    cube.register_autograd(wrong, setup_context=setup)
    results = opcheck(cube, (_x(),), raise_exception=False)
    assert results["test_schema"] == results["test_faketensor"] == results["test_boxed"] == "SUCCESS"
    with pytest.raises(OpCheckError) as info:
        opcheck(cube, (_x(),))
    assert info.value.check == "test_autograd"
    assert re.fullmatch(
        re.escape(f"opcheck({ns}::cube): test_autograd failed: differentiating by argument 'x' (float64 copies of "
                  "the arguments): gradcheck failed at element 0: numerical 0.75")
        + r"\d* vs analytical 0\.5 "
        + re.escape("(atol=1e-05, rtol=0.001). Check the backward rule of the ops involved. Fix the op's autograd "
                    "rule (its derivatives.yaml formula, or the backward given to register_autograd), or leave "
                    "this check out (test_utils) for an op not meant to be differentiated"),
        str(info.value),
    ), str(info.value)
    cube.library.remove()


def test_an_op_without_an_autograd_rule_fails_the_autograd_check() -> None:
    ns = _ns()

    @op(f"{ns}::twice")
    def twice(x: Tensor, n: int) -> Tensor:
        return Tensor.from_numpy(x.numpy() * 2)

    problem = opcheck(twice, (_x(), 1), test_utils="test_autograd", raise_exception=False)["test_autograd"]
    assert problem.startswith(
        f"differentiating by argument 'x' (float64 copies of the arguments): the derivative for '{ns}::twice' "
        "is not implemented: the op has no autograd rule. Register one with register_autograd(backward)"
    )
    # nothing floating to differentiate: nothing to check
    assert opcheck(twice, (tensor([1, 2]), 1), test_utils="test_autograd") == {"test_autograd": "SUCCESS"}
    twice.library.remove()


def test_the_autograd_check_differentiates_what_an_in_place_op_does_not_write() -> None:
    """mul_'s gradient for `other` is checked; `self` is written, so it is a fresh copy each call."""
    x = _x()
    assert opcheck(typedops.ops.core.mul_.Tensor, (x, x * 2), test_utils="test_autograd") == {"test_autograd": "SUCCESS"}


def test_the_autograd_check_reports_an_op_refusing_float64() -> None:
    ns = _ns()

    @op(f"{ns}::single")
    def single(x: Tensor) -> Tensor:
        if x.dtype is not ScalarType.float32:
            raise TypeError("float32 only")
        return Tensor.from_numpy(x.numpy() * 2)

    problem = opcheck(single, (_x(),), test_utils="test_autograd", raise_exception=False)["test_autograd"]
    assert problem == (
        "the op failed on float64 copies of its floating arguments, which gradcheck needs (TypeError: float32 "
        "only): let the kernel take float64, or leave this check out (test_utils)"
    )
    single.library.remove()


def test_a_wrong_batching_rule_is_caught() -> None:
    ns = _ns()

    @op(f"{ns}::rowsum")
    def rowsum(x: Tensor) -> Tensor:
        return Tensor.from_numpy(x.numpy().sum(-1))

    @rowsum.register_fake
    def _(x: Tensor) -> Tensor:
        return empty_meta(x.shape[:-1], x.dtype)

    def rule(info: VmapInfo, in_dims: InDims, x: Tensor) -> tuple[Tensor, int | None]:
        return rowsum(x), in_dims[0]  # right while the batch dimension is not the last one

    def wrong_rule(info: VmapInfo, in_dims: InDims, x: Tensor) -> tuple[Tensor, int | None]:
        return Tensor.from_numpy(x.numpy().sum(1)), in_dims[0]  # wrong: the sample's first dimension

    handle = rowsum.register_vmap(wrong_rule)
    results = opcheck(rowsum, (_x(),), raise_exception=False)
    assert results["test_schema"] == results["test_faketensor"] == results["test_boxed"] == "SUCCESS"
    with pytest.raises(OpCheckError) as info:
        opcheck(rowsum, (_x(),), test_utils="test_vmap")
    assert info.value.check == "test_vmap"
    assert str(info.value) == (
        f"opcheck({ns}::rowsum): test_vmap failed: under vmap (a batch of 2 along a new dimension 0 of each "
        "positional tensor argument) the op's batching rule gives a float32 tensor of shape [2, 3], the for-loop "
        "fallback gives a float32 tensor of shape [2, 2]: fix the batching rule (the vmap: family of its yaml "
        "entry, or the rule given to register_vmap), or drop it so the fallback serves the op"
    )
    handle.remove()
    rowsum.register_vmap(rule)
    assert opcheck(rowsum, (_x(),), test_utils="test_vmap") == {"test_vmap": "SUCCESS"}
    rowsum.library.remove()


def test_checks_can_be_added_by_the_layers_above_and_named() -> None:
    assert checks() == [
        "test_schema", "test_faketensor", "test_boxed", "test_autograd", "test_static_dispatch", "test_vmap"
    ]
    seen: list[str] = []
    remove = register_check("test_extra", lambda handle, args, kwargs: seen.append(handle.full_name))
    try:
        assert opcheck(typedops.ops.core.neg.default, (_x(),), test_utils="test_extra") == {"test_extra": "SUCCESS"}
    finally:
        remove()
    assert seen == ["core::neg"] and "test_extra" not in checks()
    with pytest.raises(ValueError, match="opcheck has no check 'test_aot'; its checks are test_schema"):
        opcheck(typedops.ops.core.neg.default, (_x(),), test_utils="test_aot")
    with pytest.raises(typedops.TypedopsError, match="opcheck takes an OperatorHandle or an @op operator, not a int"):
        opcheck(3, ())


# -- every core op ------------------------------------------------------------------------------
def _samples() -> dict[str, tuple[tuple[Any, ...], dict[str, Any]]]:
    x = _x()
    square = tensor([[1.0, 2.0], [3.0, 4.0]])
    row = tensor([[1.0, 2.0, 3.0]])
    f64 = ScalarType.float64
    steps_apart = tensor([[1.1, 2.3, 3.7], [4.2, 5.6, 6.9]])
    divisors = tensor([[0.7, 0.9, 1.3], [1.7, 2.1, 2.9]])
    return {
        "core::pow.Tensor_Scalar": ((x, 2), {}),
        "core::fill_.Scalar": ((x, 3.0), {}),
        "core::where.self": ((tensor([[True, False, True], [False, True, False]]), x, x * 2), {}),
        "core::sum.dim_IntList": ((x, [1]), {}),
        "core::sum.IntList_out": ((x, [1]), {"out": x.sum([1]) * 0}),
        "core::remainder.Scalar_out": ((x, 1.5), {"out": x * 0}),
        "core::empty_strided": (([2, 3], [1, 2]), {}),
        "core::index.Tensor": ((x, [None, tensor([2, 0, 2])]), {}),
        "core::masked_fill.Scalar": ((x, x > 1.2, -2.5), {}),
        "core::flip": ((x, [1, -2]), {}),
        "core::new_zeros": ((x, [2, 1]), {}),
        "core::new_ones": ((x, [3]), {"dtype": f64}),
        "core::new_full": ((x, [2], 2.5), {}),
        "core::new_empty": ((x, [2]), {}),
        "core::masked_fill.Tensor": ((x, x > 1.2, tensor(-2.5)), {}),
        "core::masked_fill_.Scalar": ((x, x > 1.2, -2.5), {}),
        "core::masked_fill_.Tensor": ((x, x > 1.2, tensor(-2.5)), {}),
        "core::index_put": ((x, [tensor([1, 0])], tensor([[7.0, 8.0, 9.0]])), {"accumulate": True}),
        "core::index_put_": ((x, [None, tensor([2, 0])], tensor([[7.0, 8.0]])), {}),
        "core::pow_.Scalar": ((x, 2.5), {}),
        **{f"core::bitwise_{n}.Scalar": ((x.long(), 6), {}) for n in ("and", "or", "xor")},
        **{f"core::bitwise_{n}.Scalar_Tensor": ((5, x.long()), {}) for n in ("and", "or", "xor")},
        **{f"core::bitwise_{n}_.Tensor": ((x.long(), x.long() * 3), {}) for n in ("and", "or", "xor")},
        "core::min.dim": ((x, 1), {}),
        "core::floor_divide": ((x, x * 0.5 + 1), {}),
        "core::floor_divide.Scalar": ((x, 0.75), {}),
        # remainder's samples keep self / other away from whole numbers (its steps)
        "core::remainder.Tensor": ((steps_apart, divisors), {}),
        "core::remainder.Scalar": ((steps_apart, 0.65), {}),
        "core::remainder.Scalar_Tensor": ((2.5, divisors), {}),
        "core::floor_divide_.Tensor": ((x, x * 0.5 + 1), {}),
        "core::floor_divide_.Scalar": ((x, 0.75), {}),
        "core::remainder_.Tensor": ((steps_apart, divisors), {}),
        "core::remainder_.Scalar": ((steps_apart, 0.65), {}),
        "core::mean.dim": ((x, [1]), {}),
        "core::amax": ((x, [1]), {}),
        "core::max.dim": ((x, 1), {}),
        "core::argmax": ((x, 1), {}),
        "core::matmul": ((square, square), {}),
        "core::mm": ((square, square), {}),
        "core::as_strided": ((x, [3, 2], [1, 3]), {}),
        "core::view": ((x, [3, 2]), {}),
        "core::reshape": ((x, [6]), {}),
        "core::permute": ((x, [1, 0]), {}),
        "core::transpose.int": ((x, 0, 1), {}),
        "core::select.int": ((x, 0, 1), {}),
        "core::slice.Tensor": ((x, 1, 0, 2), {}),
        "core::unsqueeze": ((x, 0), {}),
        "core::squeeze.dim": ((row, 0), {}),
        "core::expand": ((row, [2, 3]), {}),
        "core::contiguous": ((x.t(),), {}),
        "core::copy_": ((x, x * 2), {}),
        "core::cat": (([x, x],), {}),
        "core::stack": (([x, x],), {}),
        "core::empty.memory_format": (([2, 3],), {}),
        "core::zeros": (([2, 3],), {}),
        "core::ones": (([2, 3],), {}),
        "core::full": (([2, 3], 1.5), {}),
        "core::scalar_tensor": ((2.5,), {}),
        "core::randn": (([2, 3],), {}),
        "core::arange": ((5,), {}),
        "core::arange.start_step": ((1, 7, 2), {}),
        "core::_to_copy": ((x,), {"dtype": f64}),
        "core::to.dtype": ((x, f64), {}),
        "core::eq.Scalar": ((x, 1.0), {}),
        "core::gt.Scalar": ((x, 1.0), {}),
        "core::add.Scalar": ((x, 2), {}),
        "core::mul.Scalar": ((x, 2), {}),
        "core::add_.Scalar": ((x, 2.5), {}),
        "core::sub.Scalar": ((x, 2), {}),
        "core::sub_.Scalar": ((x, 0.5), {}),
        "core::mul_.Scalar": ((x, 3), {}),
        "core::div.Scalar": ((x, 2), {}),
        "core::div_.Scalar": ((x, 4.0), {}),
        "core::ne.Scalar": ((x, 1.0), {}),
        "core::lt.Scalar": ((x, 1.0), {}),
        "core::le.Scalar": ((x, 1.0), {}),
        "core::ge.Scalar": ((x, 1.0), {}),
        "core::where.ScalarSelf": ((x > 0.5, 2.0, x), {}),
        "core::where.ScalarOther": ((x > 0.5, x, 0), {}),
        "core::where.Scalar": ((x > 0.5, 1.0, 0.0), {}),
        "core::threshold_backward": ((x * 2, x - 3, 0.5), {}),
        "core::max.other": ((x, 2.5 - x), {}),  # no ties (a kink, where finite differences disagree)
        "core::min.other": ((x, 2.5 - x), {}),
        "core::bitwise_and.Tensor": ((x > 1, x < 2.5), {}),
        "core::bitwise_or.Tensor": ((x > 1, x < 2.5), {}),
        "core::bitwise_xor.Tensor": (((x * 2).to(ScalarType.int64), (x * 4).to(ScalarType.int32)), {}),
        "core::bitwise_not": (((x * 2).to(ScalarType.int64),), {}),
        "core::pow.Tensor_Tensor": ((x, 2.5 - x), {}),  # positive bases
        "core::pow.Scalar": ((2.0, x), {}),
        "core::clamp": ((x, 1.2, 2.7), {}),  # no element at a bound (a kink)
        "core::full_like": ((x, 2.5), {}),
        "core::softmax.int": ((x, 1), {}),
        "core::eye": ((3,), {}),
        "core::eye.m": ((2, 3), {"dtype": ScalarType.int64}),
        "core::linspace": ((0.5, -1.0, 5), {}),
        "core::all.dim": ((x, 1), {}),
        "core::any.dim": ((x > 1, 0, True), {}),
        "core::log_softmax.int": ((x, 0), {}),
    }


def _generic(schema: FunctionSchema) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Arguments for an element-wise op: a 2x3 tensor per tensor argument (and out=)."""

    def value(argument: Argument) -> Any:
        assert str(argument.type) == "Tensor", f"{schema}: add a sample for it in _samples()"
        return _x() * 1.5

    args = tuple(value(a) for a in schema.positional if not a.has_default)
    kwargs = {a.name: value(a) for a in schema.kwarg_only if not a.has_default}
    return args, kwargs


def test_every_core_op_passes() -> None:
    core.neg(_x())  # loads the core library
    samples = _samples()
    handles = [h for h in typedops.dispatcher.all_ops() if h.schema.namespace == "core"]
    assert len(handles) == 205
    failures = {}
    for handle in handles:
        args, kwargs = samples.get(handle.full_name) or _generic(handle.schema)
        # randn draws new numbers on every call: the boxed and unboxed calls differ on purpose;
        # floor_divide has no derivative (derivatives.yaml: not_implemented, as PyTorch's).
        wanted = [c for c in checks() if not (handle.full_name == "core::randn" and c == "test_boxed")
                  and not (handle.schema.name in ("floor_divide", "floor_divide_") and c == "test_autograd")]
        results = opcheck(handle, args, kwargs, test_utils=wanted, raise_exception=False)
        bad = {k: v for k, v in results.items() if v != "SUCCESS"}
        if bad:
            failures[handle.full_name] = bad
    assert failures == {}


# -- static dispatch: a --static-dispatch build of the core yaml against the dispatcher -------------
@pytest.fixture(scope="module")
def core_static(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    """The core ops generated again as namespace core_static with static dispatch to CPU and
    Meta (functions only: a build with methods would replace core's Tensor methods)."""
    from typedops.codegen import generate, write_files

    tmp = tmp_path_factory.mktemp("core_static")
    text = (Path(typedops.__file__).parent / "core" / "native_functions.yaml").read_text()
    yaml = tmp / "native_functions.yaml"
    yaml.write_text(re.sub(r"variants: .*", "variants: function", text))
    write_files(generate(yaml, tmp / "core_static_gen", namespace="core_static", kernels="typedops.core.kernels",
                         static_dispatch="CPU,Meta"))  # fmt: skip
    sys.path.insert(0, str(tmp))
    try:
        module = importlib.import_module("core_static_gen")
    finally:
        sys.path.remove(str(tmp))
    yield module
    module.LIBRARY.remove()


def test_every_core_op_passes_static_against_dynamic_dispatch(core_static: ModuleType) -> None:
    from typedops.testing import static_function

    samples = _samples()
    handles = [h for h in typedops.dispatcher.all_ops() if h.schema.namespace == "core_static"]
    with_static = [h for h in handles if static_function(h.full_name) is not None]
    assert len(with_static) > 100 and static_function("core_static::add.Tensor") is core_static._add__Tensor
    failures = {}
    for handle in with_static:
        if handle.full_name in ("core_static::randn", "core_static::empty.memory_format"):
            continue  # random or uninitialized values: two calls differ on purpose
        args, kwargs = samples.get(handle.full_name.replace("core_static::", "core::")) or _generic(handle.schema)
        result = opcheck(handle, args, kwargs, test_utils="test_static_dispatch", raise_exception=False)
        if result["test_static_dispatch"] != "SUCCESS":
            failures[handle.full_name] = result
    assert failures == {}


def test_a_static_build_takes_a_lone_int_for_a_sized_list(core_static: ModuleType) -> None:
    """``int[1]? dim`` given ``1``: the static function passes it as given, and the kernel
    takes it as ``[1]`` (``reduced_dims``), as the dispatched entry would convert it."""
    x = typedops.core.ones([2, 3])
    assert core_static.sum(x, 1).tolist() == core_static.sum(x, [1]).tolist() == [3.0, 3.0]
    assert core_static.mean(x, 0, True).tolist() == [[1.0, 1.0, 1.0]]
    assert core_static.sum(x, None).tolist() == 6.0


def test_a_kernel_registered_after_the_static_build_is_caught(core_static: ModuleType) -> None:
    from typedops import Library

    neg = typedops.ops.core_static.neg.default
    assert opcheck(neg, (_x(),), test_utils="test_static_dispatch") == {"test_static_dispatch": "SUCCESS"}
    def twice_neg(self: Tensor) -> Tensor:
        return Tensor.from_numpy(self.numpy() * -2)

    with Library("core_static", "IMPL") as override:
        override.impl("neg", twice_neg, "CPU", allow_override=True)
        with pytest.raises(OpCheckError) as info:
            opcheck(neg, (_x(),), test_utils="test_static_dispatch")
    assert info.value.check == "test_static_dispatch"
    assert str(info.value) == (
        "opcheck(core_static::neg): test_static_dispatch failed: the statically dispatched function "
        "core_static_gen.neg gives a float32 tensor of shape [2, 3] (values differ by up to 3), the dispatcher a float32 tensor of shape "
        "[2, 3]: the static build calls the kernel it was generated with, the dispatcher another (one "
        "registered since, or a key above the backends). Regenerate the static build (typedops codegen "
        "--static-dispatch) from the yaml naming the kernel the dispatcher has, or register that kernel in the yaml"
    )
    assert opcheck(neg, (_x(),), test_utils="test_static_dispatch") == {"test_static_dispatch": "SUCCESS"}


def test_an_op_without_a_static_build_has_nothing_to_compare() -> None:
    assert opcheck(typedops.ops.core.neg.default, (_x(),), test_utils="test_static_dispatch") == {
        "test_static_dispatch": "SUCCESS"
    }
