"""The ``typedops`` command: ``typedops codegen ...``, ``typedops stubgen ...``,
``typedops trace-ops ...`` and ``typedops program show|run ...``."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from .vocabulary import TypedopsError

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="typedops", description="typedops tools")
    commands = parser.add_subparsers(dest="command", required=True)
    gen = commands.add_parser("codegen", help="generate an op library from an op yaml")
    gen.add_argument("yaml", type=Path, help="the op yaml (a list of '- func: ...' entries)")
    gen.add_argument("--out", type=Path, required=True, help="the package directory to write")
    gen.add_argument("--namespace", default="core", help="the ops' namespace (default: core)")
    gen.add_argument("--kernels", help="module of bare kernel names (default for core: typedops.core.kernels)")
    gen.add_argument("--stubs", type=Path, help="stub folder: its typedops_namespaces.pyi gets the types of typedops.ops.<ns> and the methods")
    gen.add_argument("--bundled", action="store_true",
                     help="the package's bundled library: also write its stubs into the typedops package")
    gen.add_argument("--core-yaml", type=Path, help="the core yaml, for entries adding kernels to core ops")
    gen.add_argument("--static-dispatch", metavar="KEYS", help="call kernels directly for these backends, e.g. CPU,Meta")
    gen.add_argument("--ops", type=Path, help="an op-list yaml: generate only these ops (selective build)")
    gen.add_argument("--ops-from", type=Path, nargs="+", metavar="PROGRAM",
                     help="saved programs: generate only the ops they call and what their kernels call")
    gen.add_argument("--schemas-only", action="store_true",
                     help="register the schemas without kernels (for a yaml such as PyTorch's, whose kernels are C++)")
    gen.add_argument("--check", action="store_true", help="write nothing; exit 1 if a file is out of date")
    stubs = commands.add_parser("stubgen", help="stubs for the op namespaces that modules register (@op, Library)")
    stubs.add_argument("modules", nargs="+", metavar="MODULE", help="modules to import, e.g. mypkg.ops")
    stubs.add_argument("--out", type=Path, required=True,
                       help="the stub folder: typings (pyright's default stubPath), or one on mypy_path")
    stubs.add_argument("--check", action="store_true", help="write nothing; exit 1 if a file is out of date")
    trace = commands.add_parser("trace-ops", help="record the ops a script calls, as an op-list yaml")
    trace.add_argument("script", type=Path)
    trace.add_argument("--out", type=Path, required=True, help="the op-list yaml to write")
    trace.add_argument("args", nargs="*", help="arguments for the script (after --)")
    program = commands.add_parser("program", help="saved programs (Program.save, typedops.load)")
    actions = program.add_subparsers(dest="action", required=True)
    show = actions.add_parser("show", help="print a saved program's listing (its ops need not be registered)")
    show.add_argument("file", type=Path, help="a file Program.save wrote")
    show.add_argument("--check-data", action="store_true",
                      help="check the CRC of the tensor data too (load(..., check_data=True))")
    run = actions.add_parser("run", help="run a saved program on inputs from an .npz")
    run.add_argument("file", type=Path, help="the program file (Program.save)")
    run.add_argument("--inputs", type=Path, required=True,
                     help="an .npz of the tensor inputs, by input name (numpy.savez(path, x=...)) or in order")
    run.add_argument("--flavor", choices=["dispatch", "static"], default="dispatch",
                     help="through the dispatcher (default) or dispatcher-free")
    run.add_argument("--check-data", action="store_true",
                     help="check the CRC of the tensor data too (load(..., check_data=True))")
    run.add_argument("--out", type=Path, help="save the outputs to this .npz (output0, output1, ...) instead of printing")
    run.add_argument("--import", dest="imports", action="append", default=[], metavar="MODULE",
                     help="import MODULE first, to register the ops (@op, Library) the program calls; repeatable")
    return parser


def _program(args: argparse.Namespace) -> int:
    from .programs import read_program

    if args.action == "show":
        try:
            with open(args.file, "rb") as stream:
                loaded = read_program(stream, repr(args.file.as_posix()), resolve=False, check_data=args.check_data)
        except OSError as error:
            print(f"typedops program: error: cannot read {args.file.as_posix()}: {error.strerror}", file=sys.stderr)
            return 2
        print(loaded.program)
        return 0
    if args.action == "run":
        return _program_run(args)
    raise AssertionError(f"no program action {args.action!r}")


def _command_text(args: argparse.Namespace) -> str:
    parts = ["typedops codegen", args.yaml.as_posix(), "--out", args.out.as_posix(), "--namespace", args.namespace]
    for flag, value in (("--kernels", args.kernels), ("--stubs", args.stubs), ("--core-yaml", args.core_yaml),
                        ("--static-dispatch", args.static_dispatch), ("--ops", args.ops)):  # fmt: skip
        if value is not None:
            parts += [flag, value.as_posix() if isinstance(value, Path) else value]
    if args.ops_from:
        parts += ["--ops-from", *(p.as_posix() for p in args.ops_from)]
    if args.bundled:
        parts.append("--bundled")
    if args.schemas_only:
        parts.append("--schemas-only")
    return " ".join(parts)


def _relative(path: Path) -> Path:
    """``path`` relative to the working folder when it is inside it (for shorter messages)."""
    try:
        return path.relative_to(Path.cwd())
    except ValueError:
        return path


def _project_on_path() -> None:
    """The working folder first on ``sys.path``, as ``python -m`` puts it: the modules a
    command names (stubgen's modules, codegen's kernels) are the project's, and the
    ``typedops`` console script's path does not hold it."""
    if "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.insert(0, "")


def _stubgen(args: argparse.Namespace) -> int:
    from .codegen import stale_files, stubgen, write_files

    _project_on_path()
    files, notes = stubgen(args.modules, args.out)
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    if args.check:
        stale = stale_files(files)
        for path in stale:
            print(f"out of date: {path}", file=sys.stderr)
        return 1 if stale else 0
    for path in write_files(files):
        print(f"wrote {path}")
    return 0


def _program_run(args: argparse.Namespace) -> int:
    from .programs import format_outputs, import_modules, load, outputs_of, read_inputs, write_outputs

    if args.imports:
        _project_on_path()
        import_modules(args.imports)
    loaded = load(args.file, flavor=args.flavor, check_data=args.check_data)
    outputs = outputs_of(loaded.run(*read_inputs(loaded.program, args.inputs)))
    if args.out is not None:
        write_outputs(outputs, args.out)
        print(f"wrote {len(outputs)} output(s) to {args.out}")
    else:
        print(format_outputs(outputs))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "codegen":
            from .codegen import PACKAGE, generate, obsolete_files, stale_files, write_files

            _project_on_path()
            programs = None
            if args.ops_from:
                from .programs import load

                programs = [(p.as_posix(), load(p)) for p in args.ops_from]  # compiled once, run as loaded
            files = generate(
                args.yaml, args.out, namespace=args.namespace, kernels=args.kernels, stubs=args.stubs,
                core_yaml=args.core_yaml, static_dispatch=args.static_dispatch, ops_list=args.ops, programs=programs,
                command=_command_text(args), bundled=_relative(PACKAGE) if args.bundled else None,
                schemas_only=args.schemas_only,
            )  # fmt: skip
            obsolete = obsolete_files(args.out, files)
            if args.check:
                stale = stale_files(files)
                for path in stale:
                    print(f"out of date: {path}", file=sys.stderr)
                for path in obsolete:
                    print(f"obsolete: {path}", file=sys.stderr)
                return 1 if stale or obsolete else 0
            for path in write_files(files):
                print(f"wrote {path}")
            for path in obsolete:  # after the new files are in place
                path.unlink()
                print(f"removed {path} (an older layout's generated module)")
            return 0
        if args.command == "stubgen":
            return _stubgen(args)
        if args.command == "program":
            return _program(args)
        from .codegen import ops_yaml, trace_ops, write_files

        names = trace_ops(args.script, args.args)
        write_files({args.out: ops_yaml(names, args.script.name)})
        print(f"recorded {len(names)} operator(s) in {args.out}")
        return 0
    except TypedopsError as error:
        print(f"typedops {args.command}: error: {error}", file=sys.stderr)
        return 2
    except OSError as error:  # a program or inputs file that cannot be opened
        print(f"typedops {args.command}: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
