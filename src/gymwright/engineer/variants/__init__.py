"""A library of verified variants for the offline engineer: typed spec transforms with preconditions.

Each variant (`VARIANTS`) has a name, a one-line rationale and a precondition; `apply_variant`
returns an `Edit` (the new spec, the spec paths it changed, its verification report) or raises
`VariantRefused` saying why it does not apply. `same_spaces` says whether a policy's shapes
survive an edit. The table in docs/engineer.md is generated from `VARIANTS`.
"""

from gymwright.engineer.variants.base import Variant, VariantRefused
from gymwright.engineer.variants.choose import Pick, pick_variant
from gymwright.engineer.variants.library import (
    VARIANTS,
    Edit,
    applicable,
    apply_variant,
    embed_table,
    variant,
    variants_table,
)
from gymwright.engineer.variants.spaces import SpaceMatch, same_spaces

__all__ = ["VARIANTS", "Variant", "VariantRefused", "Edit", "applicable", "apply_variant", "variant",
           "variants_table", "embed_table", "Pick", "pick_variant", "SpaceMatch", "same_spaces"]
