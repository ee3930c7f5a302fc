"""The examples of docs/tracing.md, profiling.md, modes.md, opcheck.md, programs.md, func.md
and vmap.md run as written (in a scratch folder: programs.md saves files).

Each page's ```python blocks run in order in one namespace; on tracing.md and opcheck.md
the printout shown after the first example is exactly what it prints.
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parent.parent / "docs"
_BLOCK = re.compile(r"^```(\w*)\n(.*?)^```$", re.S | re.M)


def _blocks(page: str) -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2)) for m in _BLOCK.finditer((DOCS / page).read_text())]


@pytest.mark.parametrize(
    "page", ["tracing.md", "profiling.md", "modes.md", "opcheck.md", "programs.md", "func.md", "vmap.md"]
)
def test_the_examples_run(page: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": f"docs_{page.partition('.')[0]}"}
    code = [text for kind, text in _blocks(page) if kind == "python"]
    assert code, f"{page} has no python example"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        for text in code:
            exec(compile(text, f"docs/{page}", "exec"), namespace)
    if page in ("tracing.md", "opcheck.md"):
        blocks = _blocks(page)
        first = next(i for i, (kind, _) in enumerate(blocks) if kind == "python")
        assert out.getvalue().startswith(blocks[first + 1][1])
