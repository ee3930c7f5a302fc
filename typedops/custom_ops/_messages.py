"""The custom-op layer's messages, in one place (``Final`` format strings, mypy's
``message_registry`` is the model), formatted only when the error is raised."""

from __future__ import annotations

from typing import Final

OP_NAME_WITHOUT_NAMESPACE: Final = "@op needs a namespaced name such as 'myops::{name}', not {given!r}"
