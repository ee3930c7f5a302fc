"""typedops.func: grad and grad_and_value (argnums, has_aux, pytrees, higher order, levels
of differentiation on one engine), against finite differences, and every error message."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from typedops import ScalarType, Tensor, core, is_grad_enabled, no_grad, tensor
from typedops.func import FuncError, grad, grad_and_value
from typedops.vocabulary import ArgumentError, ArgumentValueError

F64 = ScalarType.float64


def test_typedops_func_is_there_after_import_typedops_as_torch_func_is() -> None:
    code = "import sys, typedops\nassert 'typedops.func' not in sys.modules\nprint(typedops.func.grad.__module__)\n"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "typedops.func._grad\n"


def t(values: Any, requires_grad: bool = False) -> Tensor:
    return tensor(np.asarray(values, dtype=np.float64), dtype=F64, requires_grad=requires_grad)


def finite_difference(f: Callable[[np.ndarray[Any, Any]], float], x: np.ndarray[Any, Any], eps: float = 1e-6) -> np.ndarray[Any, Any]:
    """Central differences of a scalar function of a float64 array."""
    out = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += eps
        down[i] -= eps
        out[i] = (f(up) - f(down)) / (2 * eps)
    return out


def smooth(x: Tensor) -> Tensor:
    return (core.sin(x) * x * x + core.exp(x * 0.5)).sum()


# -- against finite differences ---------------------------------------------------------------

finite = st.floats(-2, 2, allow_nan=False)


@settings(max_examples=30, deadline=None)
@given(st.lists(finite, min_size=1, max_size=6))
def test_grad_equals_finite_differences(values: list[float]) -> None:
    x = np.array(values)
    expected = finite_difference(lambda a: smooth(t(a)).item(), x)
    np.testing.assert_allclose(grad(smooth)(t(x)).numpy(), expected, rtol=1e-5, atol=1e-6)


@settings(max_examples=25, deadline=None)
@given(st.lists(finite, min_size=1, max_size=5))
def test_second_derivative_equals_finite_differences_of_the_first(values: list[float]) -> None:
    x = np.array(values)
    first = grad(smooth)
    expected = finite_difference(lambda a: first(t(a)).sum().item(), x)
    np.testing.assert_allclose(grad(lambda a: first(a).sum())(t(x)).numpy(), expected, rtol=1e-4, atol=1e-5)


@settings(max_examples=25, deadline=None)
@given(st.lists(finite, min_size=2, max_size=2), st.lists(finite, min_size=3, max_size=3), st.floats(-3, 3))
def test_grad_is_linear_in_the_function(w: list[float], b: list[float], c: float) -> None:
    """grad(f + c*g) == grad(f) + c*grad(g), for the same arguments."""
    params = {"w": t(w), "b": t(b)}

    def f(p: dict[str, Tensor]) -> Tensor:
        return (p["w"] * p["w"]).sum() + core.tanh(p["b"]).sum()

    def g(p: dict[str, Tensor]) -> Tensor:
        return (core.sin(p["b"]) * p["w"].sum()).sum()

    both = grad(lambda p: f(p) + g(p) * c)(params)
    gf, gg = grad(f)(params), grad(g)(params)
    for k in params:
        np.testing.assert_allclose(both[k].numpy(), gf[k].numpy() + c * gg[k].numpy(), rtol=1e-9, atol=1e-12)


def test_grad_and_value_returns_the_value_of_f() -> None:
    x = t([0.5, -1.0, 2.0])
    g, v = grad_and_value(smooth)(x)
    assert v.item() == pytest.approx(smooth(x).item()) and v.dim() == 0
    np.testing.assert_allclose(g.numpy(), grad(smooth)(x).numpy())


# -- argnums, pytrees, has_aux ----------------------------------------------------------------


def test_argnums_int_tuple_and_negative() -> None:
    x, y = t([1.0, 2.0]), t([3.0, 4.0])

    def f(a: Tensor, b: Tensor) -> Tensor:
        return (a * b * b).sum()

    assert grad(f)(x, y).tolist() == [9.0, 16.0]
    assert grad(f, argnums=1)(x, y).tolist() == [6.0, 16.0]
    assert grad(f, argnums=-1)(x, y).tolist() == [6.0, 16.0]
    gx, gy = grad(f, argnums=(0, 1))(x, y)
    assert gx.tolist() == [9.0, 16.0] and gy.tolist() == [6.0, 16.0]
    (only,) = grad(f, argnums=(1,))(x, y)
    assert only.tolist() == [6.0, 16.0]


class Pair(NamedTuple):
    w: Tensor
    b: Tensor


def test_pytrees_of_tensors_come_back_in_the_same_nest() -> None:
    params = {"layer": [t([1.0, 2.0]), (t([3.0]),)], "pair": Pair(t([2.0]), t([5.0]))}

    def f(p: Any) -> Tensor:
        (a, (b,)), pair = p["layer"], p["pair"]
        loss: Tensor = (a * a).sum() + (b * pair.w).sum() + pair.b.sum() * 0.0
        return loss

    g = grad(f)(params)
    assert list(g) == ["layer", "pair"] and isinstance(g["layer"], list) and isinstance(g["layer"][1], tuple)
    assert isinstance(g["pair"], Pair)
    assert g["layer"][0].tolist() == [2.0, 4.0] and g["layer"][1][0].tolist() == [2.0]
    assert g["pair"].w.tolist() == [3.0] and g["pair"].b.tolist() == [0.0]


def test_has_aux_returns_aux_untouched_and_detached() -> None:
    x = t([1.0, 2.0])

    def f(a: Tensor) -> tuple[Tensor, dict[str, Any]]:
        y = a * a
        return y.sum(), {"y": y, "note": "kept"}

    g, aux = grad(f, has_aux=True)(x)
    assert g.tolist() == [2.0, 4.0]
    assert aux["note"] == "kept" and aux["y"].tolist() == [1.0, 4.0] and not aux["y"].requires_grad
    g2, (value, aux2) = grad_and_value(f, has_aux=True)(x)
    assert g2.tolist() == [2.0, 4.0] and value.item() == 5.0 and aux2["y"].tolist() == [1.0, 4.0]


def test_keyword_arguments_pass_through_undifferentiated() -> None:
    def f(a: Tensor, *, scale: Tensor) -> Tensor:
        return (a * scale).sum()

    assert grad(f)(t([1.0, 1.0]), scale=t([3.0, 4.0])).tolist() == [3.0, 4.0]


def test_unused_inputs_and_constant_outputs_get_zero_gradients() -> None:
    x, y = t([1.0, 2.0]), t([[1.0], [2.0]])
    gx, gy = grad(lambda a, b: (a * 2.0).sum(), argnums=(0, 1))(x, y)
    assert gx.tolist() == [2.0, 2.0] and gy.tolist() == [[0.0], [0.0]]
    assert grad(lambda a: t(3.0))(x).tolist() == [0.0, 0.0]

    def detached(a: Tensor) -> Tensor:
        with no_grad():
            return (a * a).sum()

    assert grad(detached)(x).tolist() == [0.0, 0.0]


# -- the caller's tensors and grad mode -------------------------------------------------------


def test_the_callers_tensors_are_left_untouched() -> None:
    x = t([1.0, 2.0])
    w = t([3.0, 4.0], requires_grad=True)
    before = (x.requires_grad, x.grad, x.grad_fn, w.requires_grad, w.grad, w.grad_fn)
    grad(lambda a, b: (a * b).sum(), argnums=(0, 1))(x, w)
    assert (x.requires_grad, x.grad, x.grad_fn, w.requires_grad, w.grad, w.grad_fn) == before
    assert x.tolist() == [1.0, 2.0] and w.tolist() == [3.0, 4.0]


def test_results_do_not_require_grad_unless_an_enclosing_level_can_differentiate_them() -> None:
    x = t([1.0, 2.0])
    g, v = grad_and_value(lambda a: (a * a).sum())(x)
    assert not g.requires_grad and not v.requires_grad and g.grad_fn is None

    w = t([3.0, 4.0], requires_grad=True)  # closed over: plain autograd sees through grad
    g = grad(lambda a: (a * a * w).sum())(x)
    assert g.requires_grad
    g.sum().backward()
    assert w.grad is not None and w.grad.tolist() == [2.0, 4.0] and x.grad is None

    xr = t([1.0, 2.0], requires_grad=True)  # an argument that requires grad: the same
    gx = grad(lambda a: (a * a * a).sum())(xr)
    gx.sum().backward()
    assert xr.grad is not None and xr.grad.tolist() == [6.0, 12.0]


def test_grad_ignores_an_enclosing_no_grad_but_not_one_inside_f() -> None:
    w = t([3.0, 4.0], requires_grad=True)
    with no_grad():
        g = grad(lambda a: (a * a * w).sum())(t([1.0, 2.0]))
    assert g.tolist() == [6.0, 16.0] and not g.requires_grad


def test_grad_of_grad_and_third_order() -> None:
    x = t([1.0, 2.0, 3.0])

    def f(a: Tensor) -> Tensor:
        return (a * a * a * a).sum()

    def d1(a: Tensor) -> Tensor:
        g: Tensor = grad(f)(a)
        return g.sum()

    def d2(a: Tensor) -> Tensor:
        g: Tensor = grad(d1)(a)
        return g.sum()

    assert grad(d1)(x).tolist() == [12.0, 48.0, 108.0]
    assert grad(d2)(x).tolist() == [24.0, 48.0, 72.0]


def test_nested_grads_do_not_confuse_their_perturbations() -> None:
    """d/dx [x * d/dy (x + y)] = 1 at any x: the inner grad's y is its own variable, even
    when it is given x (the classic perturbation-confusion example)."""
    x = t([2.0, 5.0])
    assert grad(lambda a: (a * grad(lambda b: (a + b).sum())(a)).sum())(x).tolist() == [1.0, 1.0]
    # d/dx [x * d/dy (x * y)] = d/dx x*x = 2x
    assert grad(lambda a: (a * grad(lambda b: (a * b).sum())(a)).sum())(x).tolist() == [4.0, 10.0]


def test_grad_mode_is_per_task() -> None:
    """A task inside no_grad() does not change the mode of a task running grad() meanwhile:
    the other task records outside grad() too, and its grad() works."""
    seen: dict[str, Any] = {}

    async def quiet() -> None:
        with no_grad():
            await asyncio.sleep(0.02)
            seen["quiet"] = is_grad_enabled()

    async def differentiating() -> None:
        def f(a: Tensor) -> Tensor:
            seen["inside"] = (a * 2).requires_grad
            return (a * a).sum()

        await asyncio.sleep(0.005)  # quiet() is inside its no_grad() now
        seen["outside"] = is_grad_enabled()
        seen["grad"] = grad(f)(t([3.0])).tolist()

    async def main() -> None:
        await asyncio.gather(quiet(), differentiating())

    asyncio.run(main())
    assert seen == {"quiet": False, "inside": True, "outside": True, "grad": [6.0]}


def test_grad_mode_is_per_thread_while_grad_runs() -> None:
    """A thread inside no_grad() stays there while another thread is inside grad()'s
    enable_grad() (f waits until the first thread has looked)."""
    inside, looked = threading.Event(), threading.Event()
    seen: list[bool] = []

    def quiet() -> None:
        with no_grad():
            inside.wait(5)
            seen.append(is_grad_enabled())
            looked.set()

    def f(a: Tensor) -> Tensor:
        inside.set()
        looked.wait(5)
        return (a * a).sum()

    worker = threading.Thread(target=quiet)
    worker.start()
    result = grad(f)(t([2.0]))
    worker.join()
    assert seen == [False] and result.tolist() == [4.0]


def test_grad_in_threads() -> None:
    results: list[list[float]] = []

    def work(c: float) -> None:
        results.append(grad(lambda a: (a * a * c).sum())(t([1.0, 2.0])).tolist())

    with no_grad():
        threads = [threading.Thread(target=work, args=(c,)) for c in (1.0, 2.0)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
    assert sorted(results) == [[2.0, 4.0], [4.0, 8.0]]


# -- errors -----------------------------------------------------------------------------------


def _message(exc: pytest.ExceptionInfo[BaseException]) -> str:
    return str(exc.value)


def test_argnums_errors() -> None:
    x = t([1.0])

    def f(a: Tensor, b: Tensor) -> Tensor:
        return a.sum()

    with pytest.raises(ArgumentValueError) as e:
        grad(f, argnums=2)(x, x)
    assert _message(e) == (
        "grad(f)(*args): got argnums=2, but f was called with only 2 positional inputs. argnums "
        "counts positional arguments from 0 (negative ones from the end); pass the differentiated "
        "tensors positionally, not as keywords"
    )
    with pytest.raises(ArgumentValueError, match=r"got argnums=-3, but f was called with only 2"):
        grad_and_value(f, argnums=(0, -3))(x, x)
    with pytest.raises(ArgumentError) as type_error:
        grad(f, argnums=[0, 1])(x, x)  # type: ignore[arg-type]
    assert _message(type_error) == (
        "grad(f)(*args): argnums must be an int or a tuple of ints, got list. Name the positional "
        "arguments to differentiate, e.g. argnums=0 or argnums=(0, 2)"
    )
    with pytest.raises(ArgumentError, match=r"got tuple\."):
        grad(f, argnums=(0, 1.0))(x, x)  # type: ignore[arg-type]
    with pytest.raises(ArgumentError, match=r"got bool\."):
        grad(f, argnums=True)(x, x)
    with pytest.raises(ArgumentValueError) as e:
        grad(f, argnums=())(x, x)
    assert _message(e) == (
        "grad(f)(*args): argnums must be non-empty; name at least one positional argument to differentiate"
    )
    with pytest.raises(ArgumentValueError) as e:
        grad_and_value(f, argnums=(1, -1))(x, x)
    assert _message(e) == (
        "grad_and_value(f)(*args): argnums elements must be unique, got (1, -1) (after counting "
        "negative ones from the end); name each positional argument once"
    )


def test_output_errors() -> None:
    x = t([1.0, 2.0])
    with pytest.raises(FuncError) as e:
        grad(lambda a: a * 2)(x)
    assert isinstance(e.value, RuntimeError)
    assert _message(e) == (
        "grad(f)(*args): f must return a scalar Tensor (0 dims), but it returned a tensor with 1 "
        "dims (shape [2]). Reduce it to the scalar to differentiate, e.g. with .sum() or .mean()"
    )
    with pytest.raises(FuncError) as e:
        grad_and_value(lambda a: 3.0)(x)
    assert _message(e) == (
        "grad_and_value(f)(*args): f must return a Tensor to be differentiated, but it returned "
        "float. Return the loss as a Tensor; return other values as aux with has_aux=True"
    )
    with pytest.raises(FuncError) as e:
        grad(lambda a: a.sum(), has_aux=True)(x)
    assert _message(e) == (
        "grad(f)(*args): with has_aux=True, f must return a pair (output, aux), but it returned "
        "Tensor. Return (loss, aux), or pass has_aux=False"
    )
    with pytest.raises(FuncError, match=r"but it returned a tuple of 3\."):
        grad(lambda a: (a.sum(), 1, 2), has_aux=True)(x)
    with pytest.raises(FuncError, match=r"returned a tensor with 1 dims \(shape \[2\]\)"):
        grad(lambda a: (a * 1.0, None), has_aux=True)(x)


def test_input_errors() -> None:
    with pytest.raises(ArgumentError) as e:
        grad(lambda p: p["w"].sum())({"w": t([1.0]), "n": 3})
    assert _message(e) == (
        "grad(f)(*args): the differentiated argument args[0]['n'] must hold only Tensors (in "
        "tuples, lists and dicts), but it holds int. Differentiate with respect to tensors only: "
        "move other values to arguments outside argnums"
    )
    ints = tensor([1, 2])
    with pytest.raises(ArgumentError) as e:
        grad(lambda a, b: b.sum(), argnums=(0, 1))(t([1.0]), [ints])
    assert _message(e) == (
        "grad(f)(*args): only floating-point and complex tensors can be differentiated, but "
        "argument args[1][0] is a int64 tensor. Convert it first, e.g. x.to(ScalarType.float32)"
    )


def test_errors_leave_the_callers_tensors_untouched() -> None:
    x = t([1.0, 2.0])
    with pytest.raises(FuncError):
        grad(lambda a: a * 2)(x)
    assert not x.requires_grad and x.grad is None
