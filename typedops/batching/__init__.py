"""Batching: ``vmap`` on the ``Batched`` dispatch key (docs/vmap.md).

Inside ``vmap(f)``, ``f``'s batched arguments are ``BatchedTensor``s: one sample's view of a
physical tensor holding the whole batch, at a vmap level. Ops called with them meet the
``Batched`` key first: a batching rule (declared for the core ops in their yaml, or
registered with ``register_vmap``) batches the op with one call on the physical tensors;
any other op takes the boxed for-loop fallback, which calls it per sample and stacks.
"""

from ._custom import install_registrar, register_vmap
from ._fallback import fallback, force_fallback, install_fallback, level_of
from ._levels import Level, Randomness, VmapInfo, current_levels, innermost
from ._messages import VmapError
from ._rules import RULE_FAMILIES, register_vmap_rules, rule_for
from ._tensor import BATCHED_BIT, BatchedTensor, batched_at, is_batched, make_batched
from ._tree import Spec as TreeSpec
from ._tree import flatten as tree_flatten
from ._tree import leaf_paths, tree_map
from ._tree import unflatten as tree_unflatten
from ._vmap import vmap

__all__ = [
    # the user surface
    "vmap",
    "force_fallback",
    "register_vmap",
    "VmapInfo",
    "VmapError",
    "BatchedTensor",
    "is_batched",
    # what the func transforms build on (grad under vmap): levels and wrapping
    "Level",
    "Randomness",
    "current_levels",
    "innermost",
    "batched_at",
    "make_batched",
    "level_of",
    "BATCHED_BIT",
    # the one pytree (namedtuples keep their type), which func's grad uses too
    "TreeSpec",
    "tree_flatten",
    "tree_unflatten",
    "tree_map",
    "leaf_paths",
    # what generated registration calls (re-exported by typedops.runtime) and codegen checks
    "RULE_FAMILIES",
    "register_vmap_rules",
    "rule_for",
    "fallback",
]

install_registrar()
_FALLBACK = install_fallback()
