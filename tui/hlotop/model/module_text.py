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


@dataclass(frozen=True, slots=True)
class Sharding:
    """An ``HloSharding`` as ``HloSharding::ToString`` prints it on an instruction
    (``sharding={devices=[2,2]<=[4]}``, ``{replicated}``, ``{maximal device=0}``,
    ``{manual}``; FORMATS.md has no section on the HLO text: see
    ``xla/hlo/ir/hlo_sharding.cc``).

    ``kind``: ``"replicated"``, ``"maximal"``, ``"manual"``, ``"tiled"`` or ``"tuple"``
    (each element its own sharding; not modelled further). ``tile``: a tiled sharding's
    tile-assignment dimensions (``devices=[2,2]``), the last ``replicated_dims`` of which
    replicate rather than split (``last_tile_dim_replicate``, ``last_tile_dims={...}``).
    ``text``: as printed, between the braces."""

    kind: str
    text: str
    tile: tuple[int, ...] = ()
    replicated_dims: int = 0

    @property
    def shards(self) -> int:
        """Into how many pieces the array is split (1 when replicated or on one
        device): the product of the tile dimensions that split it."""
        if self.kind != "tiled":
            return 1
        split = self.tile[: len(self.tile) - self.replicated_dims]
        out = 1
        for n in split:
            out *= n
        return out


@dataclass(frozen=True, slots=True)
class EntryParameter:
    """A ``parameter(N)`` instruction of the module's ENTRY computation in its HLO text
    (``%param.3 = f32[64,192]{1,0:T(8,128)} parameter(6), sharding={...},
    metadata={op_name="params['layers'][0]['wqkv']"}``): after SPMD partitioning the
    shape is one device's. ``op_name`` is JAX's pytree path of the argument."""

    number: int
    name: str
    shape: str  # with layout, one device's
    sharding: Sharding | None
    op_name: str | None
