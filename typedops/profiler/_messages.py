"""The profiler's messages, in one place."""

from __future__ import annotations

from typing import Final

SORT_KEYS_TEXT: Final = "self_time, total_time, avg_time, count, name (or torch's self_cpu_time_total, cpu_time_total, cpu_time)"
BAD_SORT_KEY: Final = "cannot sort the profile table by {key!r}; sort by one of: " + SORT_KEYS_TEXT
BAD_ROW_LIMIT: Final = "row_limit must be a positive int or None, not {value!r}"
BAD_OBSERVER: Final = (
    "add_observer takes start(op, args) -> token and end(op, token), each a callable or None; "
    "{which} is a {kind}"
)
NO_OBSERVER: Final = "add_observer needs a start or an end callable (both are None)"
