"""Replication advice for sharded programs: an entry parameter kept whole on every
device while the other weights of its layer are split across devices.

What the HLO text beside the dump says (``HloModule::ToString`` after SPMD
partitioning): each ENTRY parameter's per-device shape, its ``sharding={...}``
(``{replicated}``, or ``{devices=[a,b]...}`` split into ``a*b`` pieces, less the
replicated last dims) and its ``op_name``, the argument's pytree path
(``params['layers'][0]['w1']``). A parameter of rank 2 or more that is replicated
while the other weights of its layer (the nearest path, less one to three keys, with
split weights of rank 2 or more) are split is flagged, with its optimizer state twins (the paths under ``opt_state`` ending with
the same keys: adam's ``mu`` and ``nu``) that are replicated too. Sharding it like its
siblings, into ``n`` pieces, keeps ``1/n`` of its bytes on each device: the saving per
device is its allocation's size times ``1 - 1/n`` (an estimate: XLA pads each piece to
its tiles). Vectors (layer-norm scales, biases) are often replicated on purpose and are
not flagged."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from hlotop.analysis.scope import pytree_path
from hlotop.model import Advice, EntryParameter, ModuleDump, Sharding
from hlotop.shapes import ArrayShape, try_parse_shape
from hlotop.units import human_bytes


@dataclass(frozen=True, slots=True)
class _Param:
    entry: EntryParameter
    path: tuple[str, ...]  # pytree path keys, unfolded
    rank: int
    size: int  # its allocation's bytes on one device (0 if not found)
    value: int | None  # its value's id


def _params(module: ModuleDump) -> list[_Param]:
    reader = module.sections.entry_parameters
    if reader is None:
        return []
    by_number = {x.parameter: x for x in module.allocations if x.parameter is not None}
    out = []
    for entry in reader():
        if entry.sharding is None or not entry.op_name:
            continue
        shape = try_parse_shape(entry.shape)
        rank = len(shape.dims) if isinstance(shape, ArrayShape) else 0
        alloc = by_number.get(entry.number)
        value = alloc.values[0].value.id if alloc is not None and alloc.values else None
        path = tuple(pytree_path(entry.op_name, fold=False).split("/"))
        out.append(_Param(entry, path, rank, alloc.size if alloc is not None else 0, value))
    return out


def _is_state_of(state: tuple[str, ...], weight: tuple[str, ...]) -> bool:
    """Whether ``state`` is optimizer state of ``weight``: it ends with the weight's keys
    after the weight's first (the argument, ``params``), and is not under it."""
    tail = weight[1:]
    return bool(tail) and state[0] != weight[0] and state[-len(tail) :] == tail


def replication_advice(module: ModuleDump) -> list[Advice]:
    """One :class:`~hlotop.model.Advice` per replicated weight whose layer siblings are
    sharded (see the module's docstring), saving bytes per device (an estimate),
    largest first. [] without the HLO text beside the dump or when nothing is sharded.
    Raises nothing."""
    params = _params(module)
    sharded = [
        p
        for p in params
        if p.rank >= 2 and p.entry.sharding is not None and p.entry.sharding.shards > 1
    ]
    flagged = []
    for p in params:
        sharding = p.entry.sharding
        if p.rank < 2 or sharding is None or not _whole(sharding):
            continue
        found = _sharded_siblings(p, sharded)
        if found is not None:
            flagged.append((p, sharding, *found))
    out = []
    for p, sharding, prefix, layer in flagged:
        if any(q is not p and _is_state_of(p.path, q.path) for q, *_ in flagged):
            continue  # a weight's optimizer state: said with the weight
        shards = layer.most_common(1)[0][0]
        twins = [
            q
            for q in params
            if q is not p
            and q.entry.sharding is not None
            and _whole(q.entry.sharding)
            and q.entry.shape == p.entry.shape
            and _is_state_of(q.path, p.path)
        ]
        group = [p, *twins]
        total = sum(q.size for q in group)
        saving = total - total // shards
        name = "/".join(p.path)
        siblings = sum(layer.values())
        out.append(
            Advice(
                kind="replication",
                title=f"{name} is replicated on every device while {siblings} other "
                f"weight(s) of {'/'.join(prefix)} are split "
                f"{shards} ways: sharding it saves {human_bytes(saving)} per device",
                saving_bytes=saving,
                bound="estimate",
                step=None,
                values=tuple(q.value for q in group if q.value is not None),
                groups=tuple("/".join(q.path) for q in group),
                evidence=(
                    f"parameter {p.entry.number} ({name}, {p.entry.shape}): "
                    f"sharding={{{sharding.text}}}",
                    *(
                        f"parameter {q.entry.number} ({'/'.join(q.path)}): its optimizer "
                        "state, replicated too"
                        for q in twins
                    ),
                    f"its siblings are split {shards} ways (sharding={{devices=[...]}})",
                ),
                fix=f"give {name} a PartitionSpec like its siblings' (jax.sharding."
                "NamedSharding, or the flax logical axis rules), in in_shardings and in "
                "the initialisation that makes it",
            )
        )
    return out


def _sharded_siblings(
    p: _Param, sharded: list[_Param]
) -> tuple[tuple[str, ...], Counter[int]] | None:
    """The nearest layer of ``p`` (its path less one, two or three keys, never the
    argument alone: ``params/Block_0/mlp`` for ``params/Block_0/mlp/c_fc/kernel``)
    whose other weights of rank 2 or more are split, and how many of them are split
    how many ways; None if there is none."""
    for depth in (1, 2, 3):
        prefix = p.path[:-depth]
        if len(prefix) < 2:
            return None
        ways = Counter(
            q.entry.sharding.shards
            for q in sharded
            if q.path[: len(prefix)] == prefix and q.entry.sharding is not None
        )
        if ways:
            return prefix, ways
    return None


def _whole(sharding: Sharding) -> bool:
    """Whether every device holds the whole array: ``{replicated}``, or tiled with every
    split dimension 1 (``devices=[1,1,4] last_tile_dim_replicate``)."""
    return sharding.kind == "replicated" or (sharding.kind == "tiled" and sharding.shards == 1)
