"""The demo tour's tracing, profiling and fake-tensor sections (issue 15)."""

from __future__ import annotations

import contextlib
import io
import re

from typedops import demo

PROGRAM = """\
program(x: Tensor(float32[4, 3]), w: Tensor(float32[3, 2]), b: Tensor(float32[2])):
  %0: Tensor = core::matmul(x, w)
  %1: Tensor = core::add.Tensor(%0, b, alpha=1)
  %2: Tensor = core::relu(%1)
  %3: Tensor = core::sum(%2, dtype=None)
  return %3
"""


def test_the_tour_prints_a_program_a_profile_table_and_fake_results() -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        demo.observing()
    text = out.getvalue()
    assert PROGRAM in text
    assert "program(x, w, b) = tensor(14.0, dtype=float32); mlp(x, w, b) = tensor(14.0, dtype=float32)" in text
    header = r"^Name +Self CPU % +Self CPU +CPU total % +CPU total +CPU time avg +# of Calls$"
    assert re.search(header, text, re.M)  # column widths follow the times shown
    assert [line.split()[-1] for line in text.splitlines() if line.startswith("core::")] == ["20"] * 4
    assert "result:      FakeTensor(..., shape=(), dtype=float32, device='privateuseone')" in text


def test_the_tour_shows_per_sample_gradients_equal_to_a_loop() -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        demo.transforms()
    lines = [line for line in out.getvalue().splitlines() if line.startswith("  sample ")]
    assert len(lines) == 3
    for line in lines:
        batched, _, looped = line.partition(" == ")
        assert batched.split(": ", 1)[1] == looped.split(" = ", 1)[1]
    assert "sample 1: [[-12.0], [-16.0]]" in lines[1]


def test_the_tour_runs_a_saved_program_in_both_flavors() -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        demo.programs()
    text = out.getvalue()
    assert "dispatch:    [[5.0, 0.0]]  (eager: [[5.0, 0.0]])" in text
    assert "static:      [[5.0, 0.0]]  (eager: [[5.0, 0.0]])" in text
