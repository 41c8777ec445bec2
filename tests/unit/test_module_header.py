"""The ``HloModule`` line of the HLO text beside a dump: its ``input_output_alias``,
read by one regular expression when well formed (a 256-layer model's 12 301 entries,
one a parameter: 0.77 s through the combinators, 0.04 s so), by the grammar otherwise,
with the same entries."""

from __future__ import annotations

from conftest import swept
from hlotop.model import IoAlias
from hlotop.parse import module_header
from hlotop.parse.module_header import parse_module_header

HEADERS = sorted(
    line
    for p in swept("*_after_optimizations.txt")
    if (line := p.open(encoding="utf-8", errors="replace").readline().rstrip("\n")).startswith(
        "HloModule "
    )
    and "input_output_alias=" in line
)


def _by_grammar(line: str) -> tuple[IoAlias, ...]:
    config = line[line.index("input_output_alias=") + len("input_output_alias=") :]
    entries, _ = module_header._config.parse_partial(config)
    return tuple(entries)


def test_every_samples_aliases_read_alike_both_ways():
    assert len(HEADERS) >= 5
    for line in HEADERS:
        fast = parse_module_header(line)
        assert fast and fast == _by_grammar(line), line[:120]


def test_a_big_models_config_is_read_whole_by_the_fast_path(monkeypatch):
    entries = ", ".join(f"{{{k}}}: ({k}, {{}}, may-alias)" for k in range(12301))
    line = f"HloModule jit_train_step, is_scheduled=true, input_output_alias={{ {entries} }}, x=1"
    monkeypatch.setattr(module_header, "_config", None)  # the grammar is not asked
    aliases = parse_module_header(line)
    assert aliases is not None and len(aliases) == 12301
    assert aliases[7] == IoAlias((7,), 7, (), "may-alias")


def test_nested_indices_and_both_kinds_read_alike_and_a_broken_config_is_none():
    nested = "HloModule m, input_output_alias={ {0,1}: (2, {3,4}, must-alias), {5}: (6, {}) }"
    assert (
        parse_module_header(nested)
        == _by_grammar(nested)
        == (
            IoAlias((0, 1), 2, (3, 4), "must-alias"),
            IoAlias((5,), 6, (), "may-alias"),
        )
    )
    spaced = "HloModule m, input_output_alias={{0}: (0, {}, may-alias)}"  # no inner spaces
    assert parse_module_header(spaced) == (IoAlias((0,), 0, (), "may-alias"),)
    broken = "HloModule m, input_output_alias={ {0}: (zero, {}) }"
    assert parse_module_header(broken) is None
    trailing = "HloModule m, input_output_alias={ {0}: (0, {}, may-alias), }"
    assert module_header._fast(trailing[trailing.index("{") :]) is None  # to the grammar
    assert parse_module_header(trailing) is None
    assert parse_module_header("HloModule m, is_scheduled=true") == ()


def test_an_index_with_an_empty_number_is_not_read_and_does_not_crash():
    # "{1,,2}" fits "[\d,]*" but is no ShapeIndex: it once reached int("") and a traceback.
    for damaged in ("{1,,2}", "{,}", "{1,}"):
        line = f"HloModule m, input_output_alias={{ {damaged}: (0, {{}}, may-alias) }}, x=1"
        assert parse_module_header(line) is None, damaged
    line = "HloModule m, input_output_alias={ {0}: (0, {2,,1}, may-alias) }, x=1"
    assert parse_module_header(line) is None
