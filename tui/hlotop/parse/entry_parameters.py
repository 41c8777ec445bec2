"""The ENTRY computation's ``parameter(N)`` instructions in a module's HLO text
(``HloModule::ToString``, ``HloInstruction::ToString``), with their sharding
(``HloSharding::ToString``, ``xla/hlo/ir/hlo_sharding.cc``) and their ``op_name``, which
JAX sets to the argument's pytree path::

    ENTRY %main.18_spmd (param: f32[256,64], ...) -> (...) {
      %param = f32[256,64]{0,1:T(8,128)} parameter(0), sharding={devices=[2,2]<=[2,2]T(1,0)}, metadata={op_name="params[\\'embed\\']"}
      %param.2 = f32[128]{0:T(128)} parameter(1), sharding={replicated}, metadata={...}

The shardings read: ``{replicated}``, ``{maximal device=N}``, ``{manual}``, ``{unknown}``,
tiled ``{devices=[a,b,...]...}`` with either device list form (``<=[4]``,
``<=[2,2]T(1,0)``, or ``0,1,2,3``) and the ``last_tile_dim_replicate`` /
``last_tile_dims={...}`` suffixes; a tuple sharding ``{{...}, {...}}`` is kept as text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from parsy import ParseError, Parser, alt, regex, seq, string

from hlotop.model import EntryParameter, Sharding
from hlotop.parse.instruction import read_metadata

_ENTRY = re.compile(r"^ENTRY %")
# "%name = shape parameter(N)": the shape runs to the last " parameter(" of the line's
# head (a shape holds no such text).
_PARAMETER = re.compile(r"^\s*(?:ROOT )?%(\S+) = (.*?) parameter\((\d+)\)(.*)$")
_SHARDING_AT = re.compile(r"\bsharding=")

_int = regex(r"\d+").map(int)
_dims = string("[") >> _int.sep_by(string(","), min=1) << string("]")
# The device order: an iota "<=[4]" or "<=[2,2]T(1,0)", or an explicit list "0,1,2,3".
_devices_order = alt(
    string("<=") >> _dims >> (string("T(") >> _int.sep_by(string(",")) << string(")")).optional(),
    _int.sep_by(string(","), min=1),
)
# What may follow the device order: the replicated last dim, or the last dims' types.
_last_tile_dims = (
    string("last_tile_dims={") >> regex(r"[a-z_]+").sep_by(string(", ")) << string("}")
).map(len)
_suffix = alt(string("last_tile_dim_replicate").result(1), _last_tile_dims)
_tiled = seq(
    tile=string("devices=") >> _dims << _devices_order,
    replicated_dims=(regex(r" +") >> _suffix).optional(0),
).skip(regex(r"(?: [a-z_]+=[^ }]*)*"))  # metadata={...} of newer printers: ignored here
_simple = alt(
    string("replicated").result("replicated"),
    regex(r"maximal device=\d+").result("maximal"),
    string("manual").result("manual"),
    string("unknown").result("unknown"),
)


def _braced(text: str, at: int) -> str | None:
    """The text between the ``{`` at ``at`` and its matching ``}``, or None."""
    depth = 0
    for i in range(at, len(text)):
        c = text[i]
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return text[at + 1 : i]
    return None


def sharding_grammar() -> Parser:
    """A parsy parser of what ``sharding={...}`` holds between its braces, yielding a
    :class:`~hlotop.model.Sharding` without its ``text``."""
    tiled = _tiled.map(lambda d: Sharding("tiled", "", tuple(d["tile"]), d["replicated_dims"]))
    return alt(
        _simple.map(lambda kind: Sharding(kind, "")),
        tiled,
        (string("{") >> regex(r".*")).result(Sharding("tuple", "")),
    )


_GRAMMAR = sharding_grammar()


def parse_sharding(text: str) -> Sharding:
    """The :class:`~hlotop.model.Sharding` of ``text``, what ``sharding={...}`` holds
    between its braces. Raises ``parsy.ParseError`` when it does not read."""
    parsed = _GRAMMAR.parse(text)
    return Sharding(parsed.kind, text, parsed.tile, parsed.replicated_dims)


def entry_parameters(lines: Iterable[str]) -> tuple[EntryParameter, ...]:
    """The ``parameter(N)`` instructions of the ENTRY computation among ``lines`` (a
    module's HLO text, one line each, without line ends), in parameter-number order.
    A sharding that does not read is kept as ``None`` (the parameter is still listed).
    Raises nothing."""
    out: list[EntryParameter] = []
    inside = False
    for line in lines:
        if not inside:
            inside = _ENTRY.match(line) is not None
            continue
        if line.startswith("}"):
            break
        if " parameter(" not in line:
            continue
        m = _PARAMETER.match(line)
        if m is None:
            continue
        name, shape, number, rest = m.groups()
        sharding = None
        at = _SHARDING_AT.search(rest)
        if at is not None and (inner := _braced(rest, at.end())) is not None:
            try:
                sharding = parse_sharding(inner)
            except ParseError:
                sharding = None
        op_name = (
            read_metadata(rest, rest.find("metadata={")).get("op_name")
            if "metadata={" in rest
            else None
        )
        if op_name is not None:
            op_name = op_name.replace("\\'", "'")
        out.append(EntryParameter(int(number), name, shape, sharding, op_name))
    out.sort(key=lambda p: p.number)
    return tuple(out)
