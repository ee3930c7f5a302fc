"""The benchmark's MLP as a torch module, for TorchScript and torch's lite interpreter.

Kept apart from bench_programs.py: TorchScript compiles ``forward`` from its source and
resolves its annotations itself, so this module evaluates them (no ``from __future__
import annotations``) and writes no ``# type:`` comment on a ``def`` line, which
TorchScript would parse; mypy's exceptions are in the file-level comment below.
"""
# mypy: disable-error-code="valid-type,misc,name-defined,no-any-return"

from typing import Any

import numpy as np

__all__ = ["torch_mlp"]


def torch_mlp(torch: Any, weights: list[tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]]) -> Any:
    """A three-layer MLP (matmul, add, relu; unrolled: TorchScript cannot loop over a
    ParameterList) with these weights, in eval mode."""
    assert len(weights) == 3
    Tensor = torch.Tensor

    class MLP(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            p = torch.nn.Parameter
            (w0, b0), (w1, b1), (w2, b2) = weights
            self.w0, self.b0 = p(torch.from_numpy(w0)), p(torch.from_numpy(b0))
            self.w1, self.b1 = p(torch.from_numpy(w1)), p(torch.from_numpy(b1))
            self.w2, self.b2 = p(torch.from_numpy(w2)), p(torch.from_numpy(b2))

        def forward(self, x: Tensor) -> Tensor:
            x = torch.relu(torch.matmul(x, self.w0) + self.b0)
            x = torch.relu(torch.matmul(x, self.w1) + self.b1)
            return torch.matmul(x, self.w2) + self.b2

    return MLP().eval()
