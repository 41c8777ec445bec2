"""What hlotop reads from the module's HLO text beside a dump (``<module>.txt``,
``HloModule::ToString``): the entry's parameter/output aliasing."""

from __future__ import annotations

from dataclasses import dataclass

from hlotop.model.values import ShapeIndex


# Not frozen: a frozen dataclass sets each field through object.__setattr__,
# three times the cost, and a big dump makes 10^4 of these (hashable all the same).
@dataclass(slots=True, unsafe_hash=True)
class IoAlias:
    """One entry of the ``HloModule`` header's ``input_output_alias={ ... }``
    (``HloInputOutputAliasConfig::ToShortString``): ``{output_index}: (parameter,
    {parameter_index}, kind)``, kind ``may-alias`` or ``must-alias``."""

    output_index: ShapeIndex
    parameter: int
    parameter_index: ShapeIndex
    kind: str = "may-alias"
