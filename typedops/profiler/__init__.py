"""The profiler: ``typedops.profile()`` observes every op call through one boxed fallback
on the ``Profiler`` key (as PyTorch's ``RecordFunction``) -- per op the count, total and
self time and, if asked, input shapes; a table PyTorch users recognise; the Chrome trace
JSON -- and ``add_observer(start, end)`` hooks users' own tools onto the same calls
(docs/profiling.md). Off, it costs nothing: the key is absent from every call's key set.
"""

from ._profile import ObserverHandle, Profile, add_observer, observing, profile
from ._record import shapes_of
from ._report import FunctionEvent, OpStats, format_time

__all__ = [
    "profile",
    "Profile",
    "OpStats",
    "FunctionEvent",
    "observing",
    "add_observer",
    "ObserverHandle",
    "shapes_of",
    "format_time",
]
