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
# The same by one regular expression an entry, for the usual well-formed config: a big
# model's has 10^4 entries (one a parameter), 0.8 s through the combinators, 0.03 s so;
# and an entry at a time, not the whole config in one call, which would hold the
# interpreter for tens of milliseconds while the browser's keys wait.
_OPEN = re.compile(r"\{ *")
# An index is "{}" or numbers between commas: "{1,,2}" is left to the grammar (which
# says what it lacks) rather than read as a number "".
_INDEX = r"\{((?:\d+(?:,\d+)*)?)\}"
_ENTRY_FIELDS = re.compile(rf"{_INDEX}: \((\d+), {_INDEX}(?:, ([a-z-]+))?\)")
_CLOSE = re.compile(r" *\}")


def _index_of(text: str) -> tuple[int, ...]:
    return tuple(map(int, text.split(","))) if text else ()


def _fast(config: str) -> tuple[IoAlias, ...] | None:
    """The entries of a well-formed config at the start of ``config``, or None (then
    the grammar reads it, and says what it lacks)."""
    opened = _OPEN.match(config)
    if opened is None:
        return None
    entry, at, out = _ENTRY_FIELDS.match, opened.end(), []
    m = entry(config, at)
    while m is not None:
        out_index, param, param_index, kind = m.groups()
        out.append(
            IoAlias(_index_of(out_index), int(param), _index_of(param_index), kind or "may-alias")
        )
        at = m.end()
        if not config.startswith(", ", at):
            break
        m = entry(config, at + 2)
        if m is None:
            return None  # a comma with no entry after it
    return tuple(out) if _CLOSE.match(config, at) else None


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
