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

Code that must take parameters under names that vary by op (the dispatch entries take
the schema's argument names, and may be called with keywords) is compiled once with
placeholder names, and ``renamed`` copies the compiled code with its parameters renamed
(``CodeType.replace``): the bytecode refers to locals by index and to globals and
closure cells by their own tables, so a parameter renamed to ``_apply`` or ``_op``
shadows nothing; other locals that would share a name with a renamed parameter get a
trailing ``_`` (names in a code object stay distinct, for tracebacks and debuggers).

A linecache entry lives as long as code compiled from it: ``install`` and ``renamed``
count the live code objects of each generated file (weak references), and the last one
to go drops the file's entry. Factories are kept in bounded caches; an evicted factory,
and the ops that used it, take their source lines with them when they go.
"""

from __future__ import annotations

import itertools
import keyword
import linecache
import threading
import types
import weakref
from collections.abc import Callable, Mapping
from typing import Any

from ..vocabulary import ArgumentValueError, TypedopsError
from ._messages import NOT_AN_IDENTIFIER, SOURCE_DOES_NOT_COMPILE

__all__ = ["GeneratedSourceError", "install", "renamed", "check_identifier", "numbered", "live_generated_files"]


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


_counter = itertools.count(1)  # next() is atomic: wrappers are installed without a lock


def install(source: str, namespace: dict[str, Any], filename: str, name: str) -> Callable[..., Any]:
    """Compile ``source`` with ``namespace`` as its globals and return the function ``name``.

    Each installed piece gets a unique file name (a counter is appended) so linecache
    entries never collide; the entry goes when the last code object compiled from it
    does (Note [Generated source]). ``name`` is taken out of ``namespace``: the function
    is the caller's to keep.
    """
    unique = f"<typedops {filename} #{next(_counter)}>"
    try:
        code = compile(source, unique, "exec")
    except SyntaxError as error:
        message = SOURCE_DOES_NOT_COMPILE.format(msg=error.msg, line=error.lineno, source=numbered(source))
        raise GeneratedSourceError(message) from error
    exec(code, namespace)
    function: Callable[..., Any] = namespace.pop(name)
    linecache.cache[unique] = (len(source), None, source.splitlines(keepends=True), unique)
    _track(function.__code__, unique)
    return function


def renamed(function: Callable[..., Any], names: Mapping[str, str]) -> Callable[..., Any]:
    """A copy of the generated ``function`` whose nested functions call their locals in
    ``names`` (placeholder -> name) by the new names (Note [Generated source]).

    Other locals and closure variables of a nested function that would share a name with
    one of its renamed ones get a trailing ``_``. Nothing is compiled.
    """
    code = function.__code__
    consts = tuple(_renamed_code(c, names) if isinstance(c, types.CodeType) else c for c in code.co_consts)
    if all(new is old for new, old in zip(consts, code.co_consts)):
        return function
    copy = code.replace(co_consts=consts)
    # Count the new code objects only: the unchanged nested ones are counted already (and
    # live as long as the original), so counting them again would pile up finalizers.
    _track(copy, code.co_filename, nested=False)
    for new, old in zip(consts, code.co_consts):
        if new is not old:
            _track(new, code.co_filename)
    result = types.FunctionType(copy, function.__globals__, function.__name__, function.__defaults__, function.__closure__)
    result.__kwdefaults__ = function.__kwdefaults__
    return result


def _renamed_code(code: types.CodeType, names: Mapping[str, str]) -> types.CodeType:
    targets = {names[n] for n in code.co_varnames if n in names}
    if not targets:
        return code
    taken = set(targets) | set(code.co_varnames) | set(code.co_freevars) | set(code.co_cellvars)

    def new_name(old: str) -> str:
        if old in names:
            return names[old]
        if old not in targets:
            return old
        while old in taken:
            old += "_"
        taken.add(old)
        return old

    copy = code.replace(
        co_varnames=tuple(new_name(n) for n in code.co_varnames),
        co_freevars=tuple(new_name(n) for n in code.co_freevars),
    )
    return copy  # counted with the function that holds it (``_track`` walks nested code)


# Generated file name -> how many code objects compiled from it are alive. The lock's
# sections allocate no container and drop no code object, so a finalizer (run by the
# garbage collector or by a last reference going, in any thread) never runs inside one.
_live: dict[str, int] = {}
_live_lock = threading.Lock()


def _track(code: types.CodeType, filename: str, *, nested: bool = True) -> None:
    """Count ``code`` (and its nested code objects) as users of ``filename``'s linecache entry."""
    with _live_lock:
        _live[filename] = _live.get(filename, 0) + 1
    weakref.finalize(code, _release, filename).atexit = False  # nothing to drop at exit
    if nested:
        for const in code.co_consts:
            if isinstance(const, types.CodeType):
                _track(const, filename)


def _release(filename: str) -> None:
    with _live_lock:
        left = _live[filename] - 1
        if left:
            _live[filename] = left
            return
        del _live[filename]
    linecache.cache.pop(filename, None)


def live_generated_files() -> int:
    """How many generated files have code alive (and so a linecache entry)."""
    return len(_live)
