"""Grammar of the ``HloModule`` line that opens a module's HLO text
(``HloModule::ToString``): its ``input_output_alias={ ... }``
(``HloInputOutputAliasConfig::ToShortString``), which says which entry parameters
the outputs alias."""

from __future__ import annotations

import re

from parsy import ParseError, regex, seq, string

from hlotop.model import IoAlias
from hlotop.shapes.grammar import integer

_index = (string("{") >> integer.sep_by(string(",")) << string("}")).map(tuple).desc("{i,j}")
_entry = seq(
    output_index=_index << string(": (").desc('": ("'),
    parameter=integer << string(", "),
    parameter_index=_index,
    kind=(string(", ") >> regex(r"[a-z-]+")).optional("may-alias") << string(")"),
).combine_dict(IoAlias)
_config = string("{") >> regex(r" *") >> _entry.sep_by(string(", ")) << regex(r" *") << string("}")
_START = re.compile(r"\binput_output_alias=")


def parse_module_header(line: str) -> tuple[IoAlias, ...] | None:
    """The entry's parameter/output aliasing from the first line of a module's HLO text
    (``HloModule jit_f, is_scheduled=true, input_output_alias={ {0}: (0, {}, may-alias)
    }, ...``): one :class:`IoAlias` per entry; ``()`` when the line has none (nothing
    aliased). Returns None when ``line`` is not an ``HloModule`` line or its
    ``input_output_alias`` does not read. Raises nothing."""
    if not line.startswith("HloModule "):
        return None
    found = _START.search(line)
    if found is None:
        return ()
    try:
        entries, _ = _config.parse_partial(line[found.end() :])
    except ParseError:
        return None
    return tuple(entries)
