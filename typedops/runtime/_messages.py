"""The runtime's messages, in one place (``Final`` format strings, mypy's
``message_registry`` is the model), formatted only when the error is raised."""

from __future__ import annotations

from typing import Final

NO_STATIC_KERNEL: Final = (
    "{name} has no statically dispatched kernel for {keys!r}; this build dispatches statically "
    "to {backends} only -- regenerate with that backend in --static-dispatch, or use the "
    "dispatched build"
)
