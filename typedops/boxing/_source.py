"""Installing generated Python source: compile once, register with linecache, explain failures.

Note [Generated source]
~~~~~~~~~~~~~~~~~~~~~~~
typedops writes small Python functions (dispatch entry points, boxing and unboxing
wrappers) as source text and compiles them, the way C++ instantiates a template: once
per *signature shape*, cached, then shared by every op of that shape. Builders are pure
functions returning ``(source, globals)`` so tests can read the text; ``install``
compiles it under a readable file name such as ``<typedops unboxing (Tensor, Tensor) -> Tensor>``
and registers it with ``linecache``, so tracebacks and ``inspect.getsource`` show the
generated lines. Nothing from user input reaches the source unchecked: names pass
``check_identifier``, values are bound as globals or default arguments, never spliced
in as text.
"""

from __future__ import annotations

import keyword
import linecache
from collections.abc import Callable
from typing import Any

from ..vocabulary import ArgumentValueError, TypedopsError
from ._messages import NOT_AN_IDENTIFIER, SOURCE_DOES_NOT_COMPILE

__all__ = ["GeneratedSourceError", "install", "check_identifier", "numbered"]


class GeneratedSourceError(TypedopsError, RuntimeError):
    """Generated source failed to compile: a bug in typedops; the message shows the source."""


def check_identifier(name: str, what: str) -> str:
    """``name`` if it is safe to write into generated source as a Python identifier."""
    if not (name.isidentifier() and name.isascii()) or keyword.iskeyword(name):
        raise ArgumentValueError(NOT_AN_IDENTIFIER.format(what=what, name=name))
    return name


def numbered(source: str) -> str:
    """The source with line numbers, as shown in compile errors."""
    lines = source.splitlines()
    width = len(str(len(lines)))
    return "\n".join(f"{i:>{width}} | {line}" for i, line in enumerate(lines, 1))


_counter = 0


def install(source: str, namespace: dict[str, Any], filename: str, name: str) -> Callable[..., Any]:
    """Compile ``source`` with ``namespace`` as its globals and return the function ``name``.

    Each installed piece gets a unique file name (a counter is appended) so linecache
    entries never collide.
    """
    global _counter
    _counter += 1
    unique = f"<typedops {filename} #{_counter}>"
    try:
        code = compile(source, unique, "exec")
    except SyntaxError as error:
        message = SOURCE_DOES_NOT_COMPILE.format(msg=error.msg, line=error.lineno, source=numbered(source))
        raise GeneratedSourceError(message) from error
    exec(code, namespace)
    linecache.cache[unique] = (len(source), None, source.splitlines(keepends=True), unique)
    function: Callable[..., Any] = namespace[name]
    return function
