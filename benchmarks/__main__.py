"""Run every benchmark module (``make bench``), or those named: ``python -m benchmarks parse``.

Every ``bench_*`` module is found here by its name; its ``run()`` returns a ``Report``
or a list of them.

Each module runs in a fresh interpreter, with its peers side by side in that run: what
one benchmark leaves behind (imported libraries, objects for the garbage collector to
walk) must not slow the next.
"""

from __future__ import annotations

import pkgutil
import subprocess
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
        # run() returns one Report, or a list of them (one per target group).
        code = (
            f"import benchmarks.{name} as m; r = m.run(); "
            "print('\\n\\n'.join(x.render() for x in (r if isinstance(r, list) else [r])), flush=True)"
        )
        result = subprocess.run([sys.executable, "-c", code], check=False)
        if result.returncode != 0:
            print(f"benchmarks.{name} failed (exit {result.returncode})", file=sys.stderr)
            return result.returncode
        print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
