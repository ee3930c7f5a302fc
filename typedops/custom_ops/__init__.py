"""Operators from typed functions: ``@op`` and the ``Op`` protocol it returns."""

import os

from ..dispatch import add_registration_machinery
from ._op import Op, op

# Registrations @op makes are located at the user's decorated function, not in here.
add_registration_machinery(os.path.dirname(__file__))

__all__ = ["op", "Op"]
