"""hlotop fit: compiles of one program at several sizes, each figure fitted as
a + b * size. The fitting arithmetic on plain numbers (exact lines, the linearity
check and the refusal to extrapolate a line that is not linear, the largest fitting
size); the size found from the entry parameters, and the refusals of compiles of
different programs; the real pair of CPU compiles at batch 8 and 16 (an exact fit of
two sizes, every figure equal to the dump's own and JAX's); the command's text, JSON
(validated against the shipped schema), --at and --capacity."""

from __future__ import annotations

import importlib.resources
import io
import json
from fractions import Fraction
from types import SimpleNamespace

import jsonschema
import pytest

from conftest import ROOT, SAMPLES, options_without_help
from hlotop.analysis.capacity import required_bytes
from hlotop.analysis.diff import diff_modules
from hlotop.analysis.fit import fit_compiles, largest, predict
from hlotop.analysis.fit_sizes import Compile, SizeError, find_sizes
from hlotop.analysis.grouping import group_live_set
from hlotop.analysis.linear_fit import (
    COMPILED,
    EXTRAPOLATED,
    INTERPOLATED,
    LINEARITY_THRESHOLD,
    fit_line,
    largest_fitting_size,
)
from hlotop.analysis.linear_fit import predict as predict_line
from hlotop.cli import main
from hlotop.loading.directory import program_of
from hlotop.loading.loader import load
from hlotop.model import BufferAllocation

BATCH8 = SAMPLES / "cpu" / "gpt_loop"
BATCH16 = SAMPLES / "cpu" / "gpt_loop_batch16"
GPT_SCAN = SAMPLES / "cpu" / "gpt_scan"  # the same jit_gpt_train_step, other parameters
MLP_ADAM = SAMPLES / "cpu" / "mlp_adam"


# --- the arithmetic, on plain numbers --------------------------------------------------


def test_a_linear_series_is_fitted_exactly_and_checked():
    line = fit_line([8, 16, 32, 64], [100 + 10 * s for s in (8, 16, 32, 64)])
    assert (line.a, line.b) == (100, 10)
    assert line.residuals == (0, 0, 0, 0) and line.max_relative_residual == 0
    assert line.checked and line.linear
    assert predict_line(line, 128).bytes == 1380
    assert predict_line(line, 128).source == EXTRAPOLATED


def test_two_sizes_give_an_exact_unchecked_line_that_still_extrapolates():
    line = fit_line([8, 16], [81502292, 150638676])
    assert line.b == Fraction(150638676 - 81502292, 8)
    assert line.residuals == (0, 0) and not line.checked and line.linear
    p = predict_line(line, 32)
    assert p.source == EXTRAPOLATED and p.refused is None
    assert p.bytes == 81502292 + 3 * (150638676 - 81502292)


def test_least_squares_of_a_noisy_line():
    # y = 3 + 2x with residuals +1, -1, -1, +1: least squares gives back 3 and 2
    line = fit_line([1, 2, 3, 4], [6, 6, 8, 12])
    assert (line.a, line.b) == (3, 2)
    assert sum(line.residuals) == 0
    assert line.max_relative_residual == Fraction(1, 6)  # 6 against the line's 5


def test_a_line_that_is_not_linear_is_not_extrapolated_but_interpolated_with_a_warning():
    sizes = [8, 16, 32]
    line = fit_line(sizes, [1000 * s * s for s in sizes])  # quadratic: far off a line
    assert line.checked and not line.linear
    assert line.max_relative_residual > LINEARITY_THRESHOLD
    beyond = predict_line(line, 64)
    assert beyond.bytes is None and beyond.source == EXTRAPOLATED
    assert "not linear" in beyond.refused and "not extrapolated outside 8..32" in beyond.refused
    below = predict_line(line, 4)
    assert below.bytes is None and below.refused
    between = predict_line(line, 24)
    assert between.source == INTERPOLATED and between.bytes is not None
    assert "not linear" in between.warning and "read off the compiles" in between.warning
    at = predict_line(line, 16)  # a compiled size: its own figure
    assert (at.source, at.bytes, at.warning) == (COMPILED, 256000, None)


def test_the_linearity_threshold_is_a_tenth_of_a_percent_of_each_compiles_figure():
    """A compile 0.099% off the line keeps it linear; 0.101% off does not."""

    def linear(bump: int) -> bool:
        # 100 000, 200 000 + bump, 300 000: the line's slope stays 100 000 and it moves
        # up by bump / 3, so the first compile lies bump / 3 off, over 100 000 (the
        # middle's 2 bump / 3 over 200 000 + bump is less)
        return fit_line([1, 2, 3], [100_000, 200_000 + bump, 300_000]).linear

    assert linear(297)  # 99 / 100 000
    assert not linear(303)  # 101 / 100 000
    assert LINEARITY_THRESHOLD == Fraction(1, 1000)


def test_a_zero_figure_is_measured_against_the_largest_of_its_series():
    line = fit_line([1, 2, 3], [0, 0, 30])
    assert line.relative_residuals[0] == abs(line.residuals[0]) / 30
    assert fit_line([1, 2, 3], [0, 0, 0]).max_relative_residual == 0


def test_fit_line_refuses_a_single_size():
    with pytest.raises(ValueError, match="two sizes"):
        fit_line([8, 8], [1, 2])
    with pytest.raises(ValueError, match="2 sizes for 3"):
        fit_line([8, 16], [1, 2, 3])


def test_the_largest_fitting_size_is_exact():
    line = fit_line([8, 16, 32], [100 + 10 * s for s in (8, 16, 32)])
    at = largest_fitting_size(line, 1000)  # 100 + 10 * 90 = 1000 exactly
    assert (at.size, at.bytes, at.next_bytes, at.source) == (90, 1000, 1010, EXTRAPOLATED)
    assert largest_fitting_size(line, 999).size == 89
    assert largest_fitting_size(line, 300).size == 20
    assert largest_fitting_size(line, 300).source == INTERPOLATED
    assert largest_fitting_size(line, 260).source == COMPILED  # 16: a compile's own


def test_the_largest_fitting_size_when_there_is_none():
    grows = fit_line([8, 16], [1000, 2000])
    none = largest_fitting_size(grows, 100)
    assert (
        none.size is None
        and none.note == "no size fits: even size 1 is over"
        and none.next_bytes == 125
    )
    flat = fit_line([8, 16], [500, 500])
    assert "every size fits" in largest_fitting_size(flat, 600).note
    assert "no size fits" in largest_fitting_size(flat, 400).note
    assert largest_fitting_size(flat, 600).size is None


def test_a_line_that_is_not_linear_gives_no_largest_size_outside_its_compiles():
    sizes = [8, 16, 32]
    line = fit_line(sizes, [1000 * s * s for s in sizes])  # 64 000, 256 000, 1 024 000
    outside = largest_fitting_size(line, 10**7)
    assert outside.size is None
    assert (
        "not extrapolated" in outside.note and "the largest compiled size, 32, fits" in outside.note
    )
    below = largest_fitting_size(line, 10_000)
    assert below.size is None and "the smallest compiled size, 8, is over" in below.note
    # between 16 (256 000) and 32 (1 024 000), on their segment: 48 000 bytes per size
    inside = largest_fitting_size(line, 500_000)
    assert (inside.size, inside.source) == (21, INTERPOLATED)  # 16 + 244 000 // 48 000
    assert (inside.bytes, inside.next_bytes) == (496_000, 544_000)
    assert "read off the compiles at 16 and 32" in inside.note
    assert largest_fitting_size(line, 300_000).source == COMPILED  # 16: 256 000


def test_a_line_that_is_not_linear_is_read_between_its_compiles():
    line = fit_line([8, 16, 32], [1000 * s * s for s in (8, 16, 32)])
    at = predict_line(line, 24)  # half way from 16 to 32 on their segment
    assert at.bytes == (256_000 + 1_024_000) // 2 and "16 and 32" in at.warning


def test_compiles_that_do_not_grow_steadily_give_no_largest_size():
    line = fit_line([8, 16, 32], [1000, 500, 2000])  # 8 over, 16 fits
    found = largest_fitting_size(line, 800)
    assert found.size is None and "do not grow steadily: 16 fits but 8 is over" in found.note


def test_the_compiles_overrule_the_line_on_the_largest_fitting_size():
    """The line says 33 fits, but the compile at 32 is over: the answer is 31."""
    line = fit_line([16, 32, 48], [160000, 160200 * 2, 480000])  # 32 lies 0.08% above it
    assert line.linear
    cap = 320200
    assert (cap - line.a) / line.b >= 32  # by the line alone, 32 fits
    found = largest_fitting_size(line, cap)
    assert found.size == 31 and found.next_bytes == 320400


# --- the sizes --------------------------------------------------------------------------


def _fake(params: dict[tuple[int, tuple[int, ...]], str]) -> SimpleNamespace:
    allocations = [
        BufferAllocation(i, 0, parameter=p, parameter_shape=shape, parameter_shape_index=index)
        for i, ((p, index), shape) in enumerate(params.items())
    ]
    return SimpleNamespace(allocations=allocations, name="m")


def _compiles(*shapes: dict) -> list[Compile]:
    return [Compile(f"c{i}", _fake(s), "jit_step") for i, s in enumerate(shapes)]  # type: ignore[arg-type]


def test_the_size_is_the_smallest_of_the_dimensions_that_change_in_proportion():
    compiles = _compiles(
        *(
            {(0, ()): "f32[128,64]", (1, ()): f"s32[{b},128]", (2, (1,)): f"f32[{b * 128},64]"}
            for b in (8, 16, 24)
        )
    )
    found = find_sizes(compiles)
    assert found.sizes == (8, 16, 24) and not found.given
    assert [(d.parameter, d.shape_index, d.dimension) for d in found.dimensions] == [
        (1, (), 0),
        (2, (1,), 0),
    ]
    assert found.dimensions[1].describe() == "parameter 2{1} dim 0"


def test_dimensions_out_of_proportion_are_refused_unless_the_sizes_are_given():
    compiles = _compiles(
        {(0, ()): "s32[8,128]"}, {(0, ()): "s32[16,128]"}, {(0, ()): "s32[16,256]"}
    )
    with pytest.raises(SizeError, match="out of proportion: parameter 0 dim 0 is 8, 16, 16"):
        find_sizes(compiles)
    assert find_sizes(compiles, [1, 2, 4]).sizes == (1, 2, 4)


def test_compiles_of_different_programs_are_refused():
    a, b = _compiles({(0, ()): "f32[8]"}, {(0, ()): "s32[16]"})
    with pytest.raises(SizeError, match="different programs: parameter 0 is f32.8. in c0 but"):
        find_sizes([a, b])
    a, b = _compiles({(0, ()): "f32[8]"}, {(0, ()): "f32[8,2]"})
    with pytest.raises(SizeError, match="different programs"):
        find_sizes([a, b])
    a, b = _compiles({(0, ()): "f32[8]"}, {(0, ()): "f32[16]", (1, ()): "f32[3]"})
    with pytest.raises(SizeError, match="parameter 1 is only in c1"):
        find_sizes([a, b])
    a, b = _compiles({(0, ()): "f32[8]"}, {(0, ()): "f32[16]"})
    with pytest.raises(SizeError, match="c0 is jit_step, c1 is jit_other"):
        find_sizes([a, Compile(b.path, b.module, "jit_other")])


def test_the_sizes_given_must_be_one_a_compile_and_two_distinct():
    compiles = _compiles({(0, ()): "f32[8]"}, {(0, ()): "f32[16]"})
    with pytest.raises(SizeError, match="3 sizes given for 2 compiles"):
        find_sizes(compiles, [1, 2, 3])
    with pytest.raises(SizeError, match="every compile is at size 4"):
        find_sizes(compiles, [4, 4])
    same = _compiles({(0, ()): "f32[8]"}, {(0, ()): "f32[8]"})
    with pytest.raises(SizeError, match="no entry parameter's shape differs"):
        find_sizes(same)


# --- the real pair: gpt_loop at batch 8 and 16 --------------------------------------------


def _load(path) -> Compile:
    module = load(str(path), lazy=True)
    return Compile(str(path), module, program_of(module.name))


@pytest.fixture(scope="module")
def pair():
    return fit_compiles([_load(BATCH16), _load(BATCH8)])  # either order


def test_the_pairs_size_is_found_from_its_batch_parameters(pair):
    assert pair.sizes == (8, 16) and not pair.sizes_given
    assert [c.path for c in pair.compiles] == [str(BATCH8), str(BATCH16)]
    assert [(d.describe(), d.extents) for d in pair.dimensions] == [
        ("parameter 64 (batch/inputs) dim 0", (8, 16)),
        ("parameter 65 (batch/targets) dim 0", (8, 16)),
    ]


def test_the_pairs_figures_are_the_dumps_and_jaxs_and_the_lines_go_through_them(pair):
    for i, c in enumerate(pair.compiles):
        module = c.module
        assert pair.figures["peak_bytes"].bytes[i] == module.analysis.peak_bytes
        assert pair.figures["required_bytes"].bytes[i] == required_bytes(module)
        jax = json.loads(
            (SAMPLES / "cpu" / c.path.split("/")[-1] / "memory_analysis.json").read_text()
        )
        for name in ("argument_size_in_bytes", "temp_size_in_bytes", "peak_memory_in_bytes"):
            assert pair.figures[name].bytes[i] == jax[name], name
    peak = pair.figures["peak_bytes"]
    assert peak.bytes == (79944724, 147508244)  # XLA's peak at 8 and 16 (76.24MiB, 140.67MiB)
    assert peak.b == Fraction(147508244 - 79944724, 8) and not peak.checked
    assert all(line.residuals == (0, 0) for line in pair.figures.values())
    temp = pair.figures["temp_size_in_bytes"]
    assert temp.b == Fraction(141763652 - 72635460, 8)
    assert pair.figures["output_size_in_bytes"].b == 0  # params and optimizer state
    assert [(s.name, s.line.bytes) for s in pair.spaces] == [
        ("default", tuple(c.module.total_bytes_used for c in pair.compiles))
    ]
    assert pair.platform == "cpu" and pair.growing_elsewhere() == ()


def test_the_pairs_predictions_and_largest_size(pair):
    at32 = predict(pair, 32)
    assert at32["peak_bytes"].bytes == 79944724 + 3 * (147508244 - 79944724)
    assert at32["peak_bytes"].source == EXTRAPOLATED
    assert predict(pair, 16)["temp_size_in_bytes"].bytes == 141763652
    need8, need16 = 81502292, 150638676
    found = largest(pair, 1 << 30)
    step = Fraction(need16 - need8, 8)
    assert found.size == int((Fraction(1 << 30) - (need8 - 8 * step)) // step) == 122
    assert found.bytes <= 1 << 30 < found.next_bytes


def test_the_pairs_groups_add_up_to_each_live_set_and_grow_as_diff_says(pair):
    for i, c in enumerate(pair.compiles):
        live = group_live_set(c.module, ("scope",))
        assert sum(g.line.bytes[i] for g in pair.groups) == live.total_bytes
    top = pair.groups[0]
    assert top.key == ("GPT/Block_*/attn",) and top.line.bytes == (23658496, 47316992)
    assert [g.line.b for g in pair.groups] == sorted((g.line.b for g in pair.groups), reverse=True)
    diff = diff_modules(pair.compiles[0].module, pair.compiles[1].module)
    assert sum(1 for v in pair.values if v.line.b > 0) == diff.count("grown") == 285
    assert all(v.line.bytes[1] == 2 * v.line.bytes[0] for v in pair.values[:20])


# --- the command ------------------------------------------------------------------------

_SCHEMA = json.loads(
    importlib.resources.files("hlotop.report").joinpath("fit.schema.json").read_text()
)


def test_the_shipped_schema_is_what_the_table_makes():
    """After changing hlotop/report/fit_table.py, run
    ``python -m hlotop.report.json_schema --write``."""
    from hlotop.report.json_schema import DOCUMENTS

    fit = DOCUMENTS["fit"]
    assert fit.schema_file.read_text(encoding="utf-8") == fit.schema_text()
    jsonschema.Draft202012Validator.check_schema(fit.schema())


def _json(capsys, *args: str) -> dict:
    assert main(["fit", "--json", *args]) == 0
    doc = json.loads(capsys.readouterr().out)
    errors = list(jsonschema.Draft202012Validator(_SCHEMA).iter_errors(doc))
    assert errors == []
    return doc["fit"]


def test_json_with_at_and_capacity(capsys):
    fit = _json(
        capsys, "--at", "32,12", "--at", "8", "--capacity", "1GiB", str(BATCH8), str(BATCH16)
    )
    assert fit["sizes"] == [8, 16] and fit["sizes_given"] is False
    assert fit["peak_bytes"]["bytes"] == [79944724, 147508244]
    assert fit["peak_bytes"]["max_relative_residual"] == 0 and fit["peak_bytes"]["checked"] is False
    assert fit["peak_bytes"]["b"] == (147508244 - 79944724) / 8
    assert [(a["size"], a["source"]) for a in fit["at"]] == [
        (32, "extrapolated"),
        (12, "interpolated"),
        (8, "compiled"),
    ]
    assert fit["at"][0]["peak_bytes"] == 79944724 + 3 * (147508244 - 79944724)
    assert fit["at"][2]["memory_stats"]["temp_size_in_bytes"] == 72635460
    assert fit["largest_fitting_size"] == fit["capacity"]["largest_fitting_size"] == 122
    assert fit["capacity"]["figure"] == "required_bytes"
    assert fit["groups"]["keys"] == ["scope"] and fit["groups"]["rows"][0]["key"] == [
        "GPT/Block_*/attn"
    ]


def test_json_with_the_sizes_given(capsys):
    fit = _json(capsys, "--sizes", "1,2", str(BATCH8), str(BATCH16))
    assert fit["sizes"] == [1, 2] and fit["sizes_given"] is True
    assert fit["peak_bytes"]["b"] == 147508244 - 79944724
    assert fit["capacity"] is None and fit["largest_fitting_size"] is None and fit["at"] == []


def test_summary_says_the_sizes_the_lines_and_what_grows(capsys):
    assert (
        main(["fit", "--summary", "--at", "32", "--capacity", "1GiB", str(BATCH8), str(BATCH16)])
        == 0
    )
    text = capsys.readouterr().out
    assert "2 compiles, the size from parameter 64 (batch/inputs) dim 0" in text
    assert "2 sizes: each line goes through both exactly; nothing checks" in text
    rows = {line.split()[0]: line.split() for line in text.splitlines() if line.split()}
    assert rows["8"][1:4] == ["compiled", "76.24MiB", "77.73MiB"]
    assert rows["16"][1:4] == ["compiled", "140.67MiB", "143.66MiB"]
    assert rows["32"][1:3] == ["extrapolated", "269.54MiB"]
    assert (
        "the largest size whose required_bytes fits: 122 (extrapolated, from 2 sizes: unchecked)"
        in text
    )
    assert "GPT/Block_*/attn" in text and "What grows with the size, by scope" in text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([str(BATCH8)], "give two compiles at least"),
        ([str(BATCH8), str(BATCH8)], "no entry parameter's shape differs"),
        ([str(BATCH8), str(GPT_SCAN)], "compiles of different programs: parameter"),
        ([str(BATCH8), str(MLP_ADAM)], "compiles of different programs"),
        (["--sizes", "1,2,3", str(BATCH8), str(BATCH16)], "3 sizes given for 2 compiles"),
        ([str(BATCH8), "no/such/dump"], "no/such/dump: no such file or directory"),
        (["--group-by", "nope", str(BATCH8), str(BATCH16)], "unknown group key 'nope'"),
        (["--capacity", "lots", str(BATCH8), str(BATCH16)], "lots"),
    ],
)
def test_refusals_are_one_line_and_status_2(capsys, args, message):
    assert main(["fit", "--summary", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("hlotop: error: ") and message in err and len(err.splitlines()) == 1


def test_bad_sizes_are_refused_by_the_parser(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["fit", "--at", "0", str(BATCH8), str(BATCH16)])
    assert exit_.value.code == 2 and "positive integers" in capsys.readouterr().err


def test_a_refused_figure_is_said_in_the_text(pair):
    """A line that is not linear (plain numbers in place of the pair's peak): its
    figure at a size outside the compiles is refused, in the table and below it."""
    from dataclasses import replace

    from rich.console import Console

    from hlotop.report.fit_report import render_fit
    from hlotop.report.fit_table import FitReport, fit_json

    bent = fit_line([8, 12, 16], [1000, 2000, 2100])
    three = replace(
        pair,
        compiles=(*pair.compiles[:1], pair.compiles[0], pair.compiles[1]),
        sizes=(8, 12, 16),
        figures={"peak_bytes": bent},
        groups=(),
        values=(),
    )
    report = FitReport(three, ((32, predict(three, 32)),))
    out = io.StringIO()
    Console(file=out, width=200).print(render_fit(report))
    text = out.getvalue()
    assert "Not linear: XLA's peak" in text and "refused" in text
    assert "not extrapolated outside 8..16" in text
    doc = fit_json(report)
    assert jsonschema.Draft202012Validator(_SCHEMA).is_valid(doc)
    assert doc["fit"]["at"][0]["peak_bytes"] is None
    assert "not linear" in doc["fit"]["at"][0]["notes"]["peak_bytes"]
    assert doc["fit"]["peak_bytes"]["linear"] is False


def test_every_option_says_what_it_does():
    from hlotop.cli.fit_command import build_fit_parser

    assert options_without_help(build_fit_parser()) == []


def test_the_usage_page_names_every_key_of_the_document():
    import re

    from hlotop.report.fit_table import KINDS

    text = (ROOT / "docs" / "usage.md").read_text()
    section = text[text.index("## What if the batch") : text.index("## Why is this value live")]
    named = set(re.findall(r"[a-z_]+", section[section.index("`--json` writes") :]))
    keys = {key.name for kind in KINDS.values() for key in kind.keys}
    assert keys - named == set()
