"""The package's shape: layers cross only through each other's public ``__init__``.

The layer order itself is the import-linter contract in pyproject.toml (``lint-imports``
in ``make test``); these tests check what it cannot: that no module reaches into another
package's ``_``-modules or ``_``-names, and that only the top layer imports the root
package (which imports everything).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import typedops

PACKAGE = Path(typedops.__file__).parent
TOP_LAYER = {"typedops.cli", "typedops.demo"}


def _module_name(path: Path, package: Path) -> str:
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path, package_dir: Path) -> list[tuple[int, str, list[str]]]:
    """(line, absolute module, names) for every import in ``path``, nested ones included."""
    module = _module_name(path, package_dir)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: list[tuple[int, str, list[str]]] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name, []) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, *([base] if base else [])])
            found.append((node.lineno, base, [a.name for a in node.names]))
    return found


def _layer(module: str) -> str:
    """The first-level part of typedops a module belongs to (``typedops.dispatch``)."""
    return ".".join(module.split(".")[:2])


def _violations(package: Path) -> list[str]:
    problems: list[str] = []
    for path in sorted(package.rglob("*.py")):
        source = _module_name(path, package)
        for line, target, names in _imports(path, package):
            if not target.startswith("typedops"):
                continue
            where = f"{path.relative_to(package.parent).as_posix()}:{line}"
            if target == "typedops" and source != "typedops" and source not in TOP_LAYER:
                problems.append(f"{where} imports the root package (only the top layer may)")
                continue
            if _layer(target) == _layer(source):
                continue
            private = [part for part in target.split(".")[2:] if part.startswith("_")]
            private += [name for name in names if name.startswith("_")]
            if private:
                problems.append(f"{where} reaches into {target}: {', '.join(private)}")
    return problems


def test_no_import_reaches_into_another_package() -> None:
    assert _violations(PACKAGE) == []


def test_the_checker_sees_a_private_cross_package_import(tmp_path: Path) -> None:
    # The rule above must be able to fail: a small package tree with three offenders.
    schema = tmp_path / "typedops" / "schema"
    schema.mkdir(parents=True)
    (schema / "__init__.py").write_text("from ._ok import thing\n")
    (schema / "_offender_for_test.py").write_text(
        "from ..boxing._convert import to_list\nfrom ..dispatch import _secret\nimport typedops\n"
    )
    assert _violations(tmp_path / "typedops") == [
        "typedops/schema/_offender_for_test.py:1 reaches into typedops.boxing._convert: _convert",
        "typedops/schema/_offender_for_test.py:2 reaches into typedops.dispatch: _secret",
        "typedops/schema/_offender_for_test.py:3 imports the root package (only the top layer may)",
    ]


# -- one error root ---------------------------------------------------------------------------
_BUILTINS = {"ValueError", "TypeError", "RuntimeError", "KeyError", "IndexError", "LookupError",
             "AttributeError", "NotImplementedError"}  # fmt: skip


class _RaiseFinder(ast.NodeVisitor):
    def __init__(self) -> None:
        self.functions: list[str] = []
        self.found: list[tuple[int, str]] = []

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.functions.append(node.name)
        self.generic_visit(node)
        self.functions.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Raise(self, node: ast.Raise) -> None:
        call = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
        name = call.id if isinstance(call, ast.Name) else None
        inside = self.functions[-1] if self.functions else ""
        if name in _BUILTINS and not (name == "AttributeError" and inside == "__getattr__"):
            self.found.append((node.lineno, f"raises {name}"))

    def visit_Call(self, node: ast.Call) -> None:
        # A builtin error built to be raised elsewhere (``return TypeError(...)`` for a caller
        # or generated code to raise) is a bare raise too. Raises do not reach here.
        if isinstance(node.func, ast.Name) and node.func.id in _BUILTINS:
            self.found.append((node.lineno, f"builds {node.func.id}"))
        self.generic_visit(node)


def _bare_raises(package: Path) -> list[str]:
    """Raises (or builds) of a builtin error class, except ``AttributeError`` from a ``__getattr__``
    (Python's attribute protocol: ``hasattr`` and module attribute errors rely on it)."""
    found: list[str] = []
    for path in sorted(package.rglob("*.py")):
        finder = _RaiseFinder()
        finder.visit(ast.parse(path.read_text(), str(path)))
        where = path.relative_to(package.parent).as_posix()
        found += [f"{where}:{line} {what}" for line, what in finder.found]
    return found


def test_every_raise_is_rooted_in_typedops_error() -> None:
    assert _bare_raises(PACKAGE) == []


def test_the_raise_checker_sees_a_bare_raise(tmp_path: Path) -> None:
    module = tmp_path / "typedops" / "m.py"
    module.parent.mkdir()
    module.write_text(
        "def f():\n    raise ValueError('x')\n\n"
        "def __getattr__(name):\n    raise AttributeError(name)\n\n"
        "class C:\n    def __getattr__(self, name):\n        raise KeyError(name)\n\n"
        "def g():\n    return TypeError('x')\n"
    )
    assert _bare_raises(tmp_path / "typedops") == [
        "typedops/m.py:2 raises ValueError", "typedops/m.py:9 raises KeyError", "typedops/m.py:12 builds TypeError"
    ]


# -- messages from a messages module ----------------------------------------------------------
# Every message a user can see lives as a ``Final`` format string in one ``_messages`` module
# per package (core/kernels has its own): an error built with a literal message, an f-string,
# or a string constant of the raising module itself is a message out of place.

# Helpers that take a message and raise it: the schema parsers' ``fail(reason, index)``.
_MESSAGE_TAKERS = {"fail"}


def _error_classes(package: Path) -> set[str]:
    """``TypedopsError`` and every class in the package that derives from it (by name)."""
    bases: dict[str, set[str]] = {}
    for path in package.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ClassDef):
                named = {b.id if isinstance(b, ast.Name) else b.attr for b in node.bases if isinstance(b, ast.Name | ast.Attribute)}
                bases.setdefault(node.name, set()).update(named)
    errors = {"TypedopsError"}
    while grown := {name for name, parents in bases.items() if parents & errors} - errors:
        errors |= grown
    return errors


def _local_strings(tree: ast.Module) -> set[str]:
    """Module-level names the module binds to a string (its own message constants)."""
    names: set[str] = set()
    for node in tree.body:
        target, value = (
            (node.targets[0], node.value) if isinstance(node, ast.Assign) and len(node.targets) == 1
            else (node.target, node.value) if isinstance(node, ast.AnnAssign) else (None, None)
        )  # fmt: skip
        if isinstance(target, ast.Name) and isinstance(value, ast.Constant | ast.JoinedStr | ast.BinOp):
            names.add(target.id)
    return names


def _inline_message(arg: ast.expr, local: set[str]) -> bool:
    if isinstance(arg, ast.Call) and isinstance(arg.func, ast.Attribute) and arg.func.attr == "format":
        arg = arg.func.value
    if isinstance(arg, ast.Constant):
        return isinstance(arg.value, str)
    if isinstance(arg, ast.JoinedStr | ast.BinOp):
        return True
    return isinstance(arg, ast.Name) and arg.id in local


def _inline_messages(package: Path) -> list[str]:
    """Errors of the package built from a message that is not a ``_messages`` constant."""
    errors = _error_classes(package)
    found: list[str] = []
    for path in sorted(package.rglob("*.py")):
        where = path.relative_to(package.parent).as_posix()
        if path.name == "_messages.py":
            continue
        tree = ast.parse(path.read_text(), str(path))
        local = _local_strings(tree)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            if (name in errors or name in _MESSAGE_TAKERS) and _inline_message(node.args[0], local):
                found.append(f"{where}:{node.lineno} builds {name} with an inline message")
    return found


def test_every_error_message_comes_from_a_messages_module() -> None:
    assert _inline_messages(PACKAGE) == []


def test_the_message_checker_sees_inline_messages(tmp_path: Path) -> None:
    package = tmp_path / "typedops"
    (package / "x").mkdir(parents=True)
    (package / "x" / "_messages.py").write_text("GOOD = 'fine {n}'\n")
    (package / "x" / "_m.py").write_text(
        "from ._messages import GOOD\n"
        "class ArgumentError(TypedopsError, TypeError): ...\n"
        "class MyError(ArgumentError): ...\n"
        "LOCAL = 'mine'\n\n"
        "def f(n, message):\n"
        "    raise MyError(GOOD.format(n=n))\n"
        "    raise MyError(message)\n"
        "    raise MyError(f'bad {n}')\n"
        "    raise MyError('bad')\n"
        "    raise MyError('bad {n}'.format(n=n))\n"
        "    raise MyError(LOCAL)\n"
        "    return ArgumentError('a' + str(n))\n"
        "    fail(f'no {n}', 0)\n"
        "    raise ValueError('not ours')\n"
    )
    assert _inline_messages(package) == [
        f"typedops/x/_m.py:{line} builds {name} with an inline message"
        for line, name in [(9, "MyError"), (10, "MyError"), (11, "MyError"), (12, "MyError"), (13, "ArgumentError"), (14, "fail")]
    ]


def _message_problems(package: Path) -> list[str]:
    """Messages written twice (the same text under two names) or used nowhere."""
    sources = {path: path.read_text() for path in sorted(package.rglob("*.py"))}
    first: dict[str, str] = {}
    problems: list[str] = []
    for path, text in sources.items():
        if path.name != "_messages.py":
            continue
        where = path.relative_to(package.parent).as_posix()
        for node in ast.parse(text, str(path)).body:
            if not (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)):
                continue
            name = node.target.id
            if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                if node.value.value in first:
                    problems.append(f"{where}: {name} repeats {first[node.value.value]}")
                first.setdefault(node.value.value, f"{where}: {name}")
            word = re.compile(rf"\b{name}\b")
            if len(word.findall(text)) < 2 and not any(word.search(t) for p, t in sources.items() if p != path):
                problems.append(f"{where}: {name} is used nowhere")
    return problems


def test_every_message_is_written_once_and_used() -> None:
    assert _message_problems(PACKAGE) == []


def test_the_message_registry_checker_sees_repeats_and_dead_messages(tmp_path: Path) -> None:
    package = tmp_path / "typedops"
    (package / "x").mkdir(parents=True)
    (package / "x" / "_messages.py").write_text("A: Final = 'same'\nB: Final = 'same'\nC: Final = 'dead'\n")
    (package / "x" / "_m.py").write_text("from ._messages import A, B\n")
    assert _message_problems(package) == [
        "typedops/x/_messages.py: B repeats typedops/x/_messages.py: A",
        "typedops/x/_messages.py: C is used nowhere",
    ]
