"""The dispatch trace (issue 4): TYPEDOPS_SHOW_DISPATCH_TRACE=1 prints every dispatch.

The variable is read once at import, so each case runs a small script in a subprocess.
"""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from typedops import Library, Tensor
from typedops.boxing import call_shape
from typedops.dispatch._entry import entry_source
from typedops.dispatch._trace import TRACE_ENABLED
from typedops.schema import parse_schema

ROOT = Path(__file__).resolve().parent.parent
VARIABLE = "TYPEDOPS_SHOW_DISPATCH_TRACE"

SCRIPT = textwrap.dedent(
    """
    from typing import Any
    from typedops import DispatchKey, DispatchKeySet, Library, OperatorHandle, Tensor, include_keys, tensor

    def cpu(x: Tensor, n: int) -> str:
        return "cpu"

    def autograd(keys: DispatchKeySet, x: Tensor, n: int) -> str:
        result: str = op.redispatch(keys, x, n)
        return result

    def tracer(op: OperatorHandle, keys: DispatchKeySet, stack: list[Any]) -> None:
        op.redispatch_boxed(keys, stack)

    with Library("traced", "DEF") as lib, Library("traced", "IMPL", "Tracer") as impl:
        op = lib.define("f(Tensor x, int n=1) -> str")
        lib.impl("f", cpu, "CPU")
        impl.fallback(tracer)
        print("plain", op(tensor([1.0])), flush=True)
        with include_keys(DispatchKey.Tracer):
            print("traced", op(tensor([1.0]), 2), flush=True)
            stack: list[Any] = [tensor([1.0], device="meta")]
            lib.impl("f", cpu, "Meta")
            op.call_boxed(stack)
            print("boxed", stack, flush=True)
            lib.impl("f", autograd, "Autograd", with_keys=True)
            print("nested", op(tensor([1.0], requires_grad=True)), flush=True)
    """
)


def run(value: str | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != VARIABLE}
    if value is not None:
        env[VARIABLE] = value
    return subprocess.run(
        [sys.executable, "-c", SCRIPT],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


EXPECTED_STDOUT = "plain cpu\ntraced cpu\nboxed ['cpu']\nnested cpu\n"


def test_trace_prints_op_key_set_chosen_key_and_indents_redispatches() -> None:
    result = run("1")
    assert result.returncode == 0, result.stderr
    assert result.stdout == EXPECTED_STDOUT
    # The key set shown is the one that picks the slot: fallthrough keys (BackendSelect,
    # AutogradCPU without a kernel) are already removed.
    assert result.stderr.splitlines() == [
        "[dispatch] traced::f call: DispatchKeySet(CPU) -> CPU",
        "[dispatch] traced::f call: DispatchKeySet(Tracer, CPU) -> Tracer",
        "[dispatch]   traced::f redispatch_boxed: DispatchKeySet(CPU) -> CPU",
        "[dispatch] traced::f call_boxed: DispatchKeySet(Tracer, Meta) -> Tracer",
        "[dispatch]   traced::f redispatch_boxed: DispatchKeySet(Meta) -> Meta",
        "[dispatch] traced::f call: DispatchKeySet(Tracer, AutogradCPU, CPU) -> Tracer",
        "[dispatch]   traced::f redispatch_boxed: DispatchKeySet(AutogradCPU, CPU) -> AutogradCPU",
        "[dispatch]     traced::f redispatch: DispatchKeySet(CPU) -> CPU",
    ]


@pytest.mark.parametrize("value", [None, "0"])
def test_without_the_variable_nothing_is_printed(value: str | None) -> None:
    result = run(value)
    assert result.returncode == 0, result.stderr
    assert result.stdout == EXPECTED_STDOUT
    assert result.stderr == ""


def test_entry_source_contains_tracing_only_when_asked() -> None:
    shape = call_shape(parse_schema("t::f(Tensor x, Tensor? y=None, *, int n=1) -> Tensor"))
    plain = entry_source(shape, trace=False)
    traced = entry_source(shape, trace=True)
    assert "_traced" not in plain
    assert "trace" not in plain
    assert "_traced(" in traced and "_traced_boxed(" in traced
    # the four entry points exist in both
    for name in ("def call(", "def redispatch(", "def call_boxed(", "def redispatch_boxed("):
        assert name in plain and name in traced


@pytest.mark.skipif(TRACE_ENABLED, reason=f"{VARIABLE} is set for this test run")
def test_generated_entry_of_a_real_op_has_no_tracing() -> None:
    def kernel(x: Tensor) -> Tensor:
        return x

    with Library("trace_generated_entry", "DEF") as lib:
        op = lib.define("f(Tensor x) -> Tensor")
        lib.impl("f", kernel, "CPU")
        source = inspect.getsource(op.call)
        assert "def f(" in source or "def call(" in source
        assert "_traced" not in source


def test_a_generated_autograd_kernel_still_shows_its_call_below_autograd() -> None:
    # Generated kernels index the op's slots instead of calling redispatch (unboxed_slots);
    # with the trace on, those slots go through redispatch, so the hop is printed.
    env = {**os.environ, VARIABLE: "1"}
    script = "from typedops import core, tensor\nx = tensor([1.0], requires_grad=True)\nprint((x + tensor([2.0])).grad_fn)\n"
    result = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "<AddBackward0 object>\n"
    assert result.stderr.splitlines()[-2:] == [
        "[dispatch] core::add.Tensor call: DispatchKeySet(AutogradCPU, CPU) -> AutogradCPU",
        "[dispatch]   core::add.Tensor redispatch: DispatchKeySet(CPU) -> CPU",
    ]
