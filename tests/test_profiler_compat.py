"""The profiler against torch.profiler: the same program, the same op names and counts.

Needs torch (``make compat``). torch's profiler also records the calls its kernels make
inside (``aten::matmul`` calls ``aten::mm``, factories call ``aten::empty`` and
``aten::fill_``); typedops' kernels make fewer such calls. So the claim is: every op
typedops records, torch records too, as often.

torch's profiler runs in a subprocess: importing it registers more operators with torch
(``_dtensor::...``), which would change the schema corpus tests/test_torch_compat.py reads
from the same process.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from typedops import core, profile

pytestmark = pytest.mark.compat

torch = pytest.importorskip("torch", reason="compares with PyTorch; needs the compat extra: make compat")


def program(m: Any, x: Any, w: Any) -> Any:
    y = m.add(m.mul(x, x), x)
    y = m.relu(m.matmul(y, w))
    y = m.neg(m.exp(y))
    return m.cat([y, y]).sum()


ROOT = Path(__file__).resolve().parent.parent
_TORCH_SIDE = textwrap.dedent(
    """
    import json, torch
    from tests.test_profiler_compat import program
    with torch.profiler.profile() as theirs:
        for _ in range(3):
            program(torch, torch.ones(2, 3), torch.ones(3, 4))
    print(json.dumps({e.key: e.count for e in theirs.key_averages()}))
    """
)


def test_same_ops_same_counts_as_torch_profiler() -> None:
    result = subprocess.run(
        [sys.executable, "-c", _TORCH_SIDE], capture_output=True, text=True, check=True, cwd=ROOT
    )
    torch_counts = Counter(json.loads(result.stdout.strip().splitlines()[-1]))
    with profile() as ours:
        for _ in range(3):
            program(core, core.ones([2, 3]), core.ones([3, 4]))
    our_counts = Counter({name.replace("core::", "aten::").partition(".")[0]: n for name, n in ours.counts().items()})
    assert our_counts == {
        "aten::add": 3, "aten::mul": 3, "aten::relu": 3, "aten::matmul": 3, "aten::exp": 3,
        "aten::neg": 3, "aten::cat": 3, "aten::sum": 3, "aten::ones": 6,
    }  # fmt: skip
    assert {name: torch_counts[name] for name in our_counts} == dict(our_counts)
