"""The vocabulary's messages, in one place (``Final`` format strings, mypy's
``message_registry`` is the model): each named for what went wrong, formatted only when
the error is raised."""

from __future__ import annotations

from typing import Final

# -- BoundedCache ------------------------------------------------------------------------------
BAD_CACHE_LIMIT: Final = "a BoundedCache needs a limit of at least 2 entries, not {limit!r}"

# -- devices -----------------------------------------------------------------------------------
UNKNOWN_DEVICE_TYPE: Final = "unknown device type {type!r}; typedops has {types}"
NEGATIVE_DEVICE_INDEX: Final = "device index must be >= 0, not {index}"
BAD_DEVICE_INDEX: Final = "device {spec!r}: the index after ':' must be a whole number"

# -- dispatch keys and key sets ----------------------------------------------------------------
UNKNOWN_DISPATCH_KEY: Final = "unknown dispatch key {key!r}{hint} (keys: {keys})"
DID_YOU_MEAN_KEY: Final = "; did you mean {name!r}?"
ALIAS_KEY_IN_KEYSET: Final = (
    "{key} is an alias key and cannot be in a DispatchKeySet; use the runtime keys it stands for ({expanded})"
)
EMPTY_KEYSET_HIGHEST: Final = "an empty DispatchKeySet has no highest key"
ALIAS_KEY_OPERAND: Final = "{key} is an alias key; key sets hold runtime keys only"
