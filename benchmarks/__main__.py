"""Run every benchmark module (``make bench``), or those named: ``python -m benchmarks parse``."""

from __future__ import annotations

import importlib
import pkgutil
import sys

import benchmarks


def main(argv: list[str]) -> int:
    names = sorted(
        m.name for m in pkgutil.iter_modules(benchmarks.__path__) if m.name.startswith("bench_")
    )
    wanted = [n for n in names if not argv or any(a in n for a in argv)]
    if not wanted:
        print(f"no benchmark matches {argv}; there are: {', '.join(names)}", file=sys.stderr)
        return 2
    for name in wanted:
        module = importlib.import_module(f"benchmarks.{name}")
        print(module.run().render(), flush=True)
        print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
