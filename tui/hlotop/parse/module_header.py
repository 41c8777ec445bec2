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
# The same in one regular expression, for the usual well-formed config: a big model's
# has 10^4 entries (one a parameter), 3 s through the combinators, 10 ms so.
_ENTRY = r"\{[\d,]*\}: \(\d+, \{[\d,]*\}(?:, [a-z-]+)?\)"
_CONFIG = re.compile(rf"\{{ *(?:{_ENTRY}(?:, {_ENTRY})*)? *\}}")
_ENTRY_FIELDS = re.compile(r"\{([\d,]*)\}: \((\d+), \{([\d,]*)\}(?:, ([a-z-]+))?\)")


def _index_of(text: str) -> tuple[int, ...]:
    return tuple(map(int, text.split(","))) if text else ()


def _fast(config: str) -> tuple[IoAlias, ...] | None:
    """The entries of a well-formed config at the start of ``config``, or None (then
    the grammar reads it, and says what it lacks)."""
    whole = _CONFIG.match(config)
    if whole is None:
        return None
    return tuple(
        IoAlias(_index_of(out), int(param), _index_of(at), kind or "may-alias")
        for out, param, at, kind in _ENTRY_FIELDS.findall(config, 0, whole.end())
    )


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
    config = line[found.end() :]
    fast = _fast(config)
    if fast is not None:
        return fast
    try:
        entries, _ = _config.parse_partial(config)
    except ParseError:
        return None
    return tuple(entries)
