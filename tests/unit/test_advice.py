"""Advice (``--advise``, the browser's ``a``): each kind on real dumps, its predicted
saving held against the same program compiled with the change (the generated pairs in
sample_dumps/tpu and sample_dumps/cpu, with JAX's memory_analysis() of each), and the
front ends. Expected figures are read from memory_analysis.json and the dump text."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from conftest import ROOT, SAMPLES
from hlotop import load
from hlotop.analysis.advice import (
    advise,
    aliased_copy_advice,
    donation_advice,
    remat_advice,
    replication_advice,
)
from hlotop.analysis.advice.remat import remat_group, saved_for_backward
from hlotop.analysis.labels import Labeller
from hlotop.parse.entry_parameters import entry_parameters, parse_sharding
from hlotop.ui.apps.app import HlotopApp
from hlotop.units import human_bytes
from pilot import pilot_test, started

SCHEMA = ROOT / "tui/hlotop/report/hlotop.schema.json"


def _entry(folder: str) -> Path:
    return next((SAMPLES / folder).glob("*-buffer-assignment.txt"))


def _jax(folder: str) -> dict:
    return json.loads((SAMPLES / folder / "memory_analysis.json").read_text())


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "hlotop", *args], capture_output=True, cwd=ROOT, timeout=120
    )


# --- donation -------------------------------------------------------------------------


@pytest.mark.parametrize("platform", ["tpu/v5e_1x1-", "cpu/"])
def test_donation_saving_is_what_the_donated_recompile_aliases(platform):
    """mlp_adam donates nothing; donation is the same step with donate_argnums=(0, 1)
    (params and optimizer state): the advice names both arguments, and its saving is
    the bytes the donated recompile aliases, an upper bound on the drop of JAX's peak."""
    module = load(_entry(platform + "mlp_adam"))
    advice = donation_advice(module, Labeller(module))
    assert sorted(a.groups[0].split("/")[0] for a in advice) == ["opt_state", "params"]
    assert all(a.bound == "upper_bound" and a.step is None for a in advice)
    saving = sum(a.saving_bytes for a in advice)
    before, after = _jax(platform + "mlp_adam"), _jax(platform + "donation")
    # what the donated compile aliases, up to the tiny count scalar it may leave unaliased
    assert after["alias_size_in_bytes"] - 1024 <= saving <= after["alias_size_in_bytes"]
    drop = before["peak_memory_in_bytes"] - after["peak_memory_in_bytes"]
    assert 0 < drop <= saving
    if platform == "cpu/":  # JAX's CPU peak is the static buffers: the drop is exact
        assert saving == drop
    fix = {a.groups[0].split("/")[0]: a.fix for a in advice}
    assert "donate_argnames=('opt_state',)" in fix["opt_state"]


@pytest.mark.parametrize("folder", ["tpu/v5e_1x1-donation", "cpu/donation", "cpu/gpt_loop"])
def test_a_donated_program_gets_no_donation_advice(folder):
    module = load(_entry(folder))
    assert donation_advice(module, Labeller(module)) == []


def test_donation_matches_parameters_to_outputs_of_their_shape_and_layout():
    module = load(_entry("tpu/v5e_1x1-mlp_adam"))
    text = _entry("tpu/v5e_1x1-mlp_adam").read_text()
    params = {
        int(m.group(1)): m.group(2)
        for m in re.finditer(
            r"^allocation \d+: size \d+, parameter (\d+), shape \|([^|]*)\|", text, re.M
        )
    }
    (opt,) = [a for a in donation_advice(module, Labeller(module)) if a.groups[0].startswith("opt")]
    numbers = [
        int(m.group(1)) for line in opt.evidence if (m := re.match(r"parameter (\d+) ", line))
    ]
    assert numbers and all(params[n] for n in numbers)
    # adam's mu and nu of every layer, and its step count (an s32[] output too)
    assert {"opt_state/*/mu/*/w", "opt_state/*/nu/*/w", "opt_state/*/count"} <= set(opt.groups)


# --- remat ----------------------------------------------------------------------------


def test_saved_for_backward_is_forward_defined_backward_used_at_the_peak():
    module = load(_entry("tpu/v5e_1x1-gpt_loop"))
    labeller = Labeller(module)
    saved = saved_for_backward(module, labeller)
    live = module.live_range.instruction_sequence
    a = module.analysis
    assert saved and all(i in a.peak_values for i in saved)
    for info in saved:
        assert "jvp(" in labeller.origin(info)[0] and "transpose(" not in labeller.origin(info)[0]
        assert info.live.start <= a.peak_step <= info.live.end
        user = labeller.value_named(live[info.live.end])
        assert "transpose(" in labeller.origin(user)[0]
    groups = {a.groups[0]: a for a in remat_advice(module, labeller)}
    assert {"GPT/Block_*/mlp", "GPT/Block_*/attn"} <= set(groups)
    mlp = groups["GPT/Block_*/mlp"]
    assert "over 3 layers" in mlp.title
    held = [i for i in saved if labeller.label(i, "scope").startswith("GPT/Block_*/mlp")]
    assert f"{human_bytes(sum(i.allocated_bytes for i in held))} saved for backward" in mlp.title
    # the peak (step 367) is late in the backward pass: every layer's MLP activation has
    # been read by the backward pass before it, so a remat would recompute each before
    # the peak and hold it there all the same: the bound is 0, and the evidence says why
    (left,) = [e for e in mlp.evidence if e.startswith("left out of the bound")]
    for info in held:
        uses = [live.index(u.instruction) for u in info.used.uses if u.instruction in live]
        users = [labeller.value_named(live[s]) for s in uses]
        first = min(
            s
            for s, u in zip(uses, users, strict=True)
            if u and "transpose(" in labeller.origin(u)[0]
        )
        assert first <= a.peak_step
        said = f"{info.value.name}{_index(info)} used by the backward pass"
        if f"; {said}" in left or f": {said}" in left:  # the first few are named
            assert f"{said} at step {first}, by the peak" in left
    assert mlp.saving_bytes == 0


def test_remat_groups_cut_one_part_below_the_layer():
    assert remat_group("GPT/Block_*/mlp/c_fc") == "GPT/Block_*/mlp"
    assert remat_group("GPT/Block_*") == "GPT/Block_*"
    assert remat_group("GPT/wte") == "GPT/wte"
    assert remat_group(None) == remat_group("") == ""


def test_remat_bound_covers_the_drop_of_the_rematerialised_recompile():
    """transformer_remat is transformer_loop with every layer under jax.checkpoint: the
    remat advice of the loop's saved values bounds the drop of XLA's peak."""
    loop = load(_entry("tpu/v5e_1x1-transformer_loop"))
    remat = load(_entry("tpu/v5e_1x1-transformer_remat"))
    bound = sum(a.saving_bytes for a in remat_advice(loop, Labeller(loop)))
    drop = loop.analysis.peak_bytes - remat.analysis.peak_bytes
    assert 0 < drop <= bound
    jax_drop = (
        _jax("tpu/v5e_1x1-transformer_loop")["peak_memory_in_bytes"]
        - _jax("tpu/v5e_1x1-transformer_remat")["peak_memory_in_bytes"]
    )
    assert 0 < jax_drop <= bound
    # the rematerialised recompile keeps far less for backward
    after = sum(a.saving_bytes for a in remat_advice(remat, Labeller(remat)))
    assert after < bound / 4


# --- replication ----------------------------------------------------------------------


def test_shardings_read_as_hlo_sharding_prints_them():
    assert parse_sharding("replicated").shards == 1
    tiled = parse_sharding("devices=[2,2]<=[2,2]T(1,0)")
    assert (tiled.kind, tiled.tile, tiled.shards) == ("tiled", (2, 2), 4)
    partial = parse_sharding("devices=[2,1,2]<=[4] last_tile_dim_replicate")
    assert (partial.tile, partial.replicated_dims, partial.shards) == ((2, 1, 2), 1, 2)
    assert parse_sharding("devices=[1,2,2]<=[4] last_tile_dims={manual}").shards == 2
    assert parse_sharding("devices=[4]0,1,2,3").shards == 4
    assert parse_sharding("maximal device=0").kind == "maximal"


def test_entry_parameters_of_a_sharded_program():
    text = next((SAMPLES / "tpu/v5e_2x2-transformer_sharded").glob("*after_optimizations.txt"))
    params = entry_parameters(line.rstrip("\n") for line in text.open())
    printed = re.findall(
        r"^  %\S+ = \S+ parameter\((\d+)\), sharding=\{([^}]*)\}", text.read_text(), re.M
    )
    assert [p.number for p in params] == sorted(int(n) for n, _ in printed)
    by_number = {p.number: p for p in params}
    for number, sharding in printed:
        assert by_number[int(number)].sharding.text == sharding
    assert by_number[3].op_name == "params['layers'][0]['w1']"
    assert by_number[3].sharding.shards == 4 and by_number[1].sharding.kind == "replicated"


def test_vectors_replicated_beside_sharded_matrices_are_not_flagged():
    # the layer norms' f32[128] scales are replicated on purpose; every matrix is split
    module = load(_entry("tpu/v5e_2x2-transformer_sharded"))
    assert replication_advice(module) == []


# --- front ends -----------------------------------------------------------------------


def test_advise_in_summary_and_json():
    entry = str(_entry("tpu/v5e_1x1-mlp_adam"))
    summary = _run("--summary", "--advise", entry)
    assert summary.returncode == 0, summary.stderr
    text = summary.stdout.decode()
    assert re.search(r"^Advice\s", text, re.M)
    assert re.search(r"^ +1 +donation +≤ 4\.26MiB +donate opt_state", text, re.M)
    doc = json.loads(_run("--json", "--advise", entry).stdout)
    jsonschema.validate(doc, json.loads(SCHEMA.read_text()))
    module = load(entry)
    assert [a["title"] for a in doc["advice"]] == [a.title for a in advise(module)]
    savings = [a["saving_bytes"] for a in doc["advice"]]
    assert savings == sorted(savings, reverse=True)
    assert json.loads(_run("--json", entry).stdout)["advice"] is None
    assert "Advice" not in _run("--summary", entry).stdout.decode()


@pilot_test
async def test_a_lists_the_advice_and_enter_selects_its_values():
    from hlotop.ui.screens.advice import AdviceScreen

    path = str(_entry("tpu/v5e_1x1-gpt_loop"))
    app = HlotopApp(path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await started(app, pilot)
        await pilot.press("a")
        await pilot.pause()
        advice_screen = app.screen
        assert isinstance(advice_screen, AdviceScreen)
        first = advice_screen.advice[0]
        assert first.title == advise(app.dump)[0].title
        assert "fix:" in advice_screen.detail_text(0).plain
        screen.timeline.set_step(0)
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is screen
        assert screen.selected_value == first.values[0]
        assert screen.step == first.step == app.dump.analysis.peak_step


# --- proof: sample_dumps/proof, the same GPT step recompiled with each change -----------

PROOF = SAMPLES / "proof"


def _proof(folder: str):
    entry = next((PROOF / folder).glob("*-buffer-assignment.txt"))
    jax = json.loads((PROOF / folder / "memory_analysis.json").read_text())
    return load(entry), jax


@pytest.mark.parametrize("target", ["v5e_1x1", "cpu"])
@pytest.mark.parametrize(
    "changed, donated",
    [(("donation", "params"), ["params"]), (("batch", "b8"), ["params", "opt_state"])],
)
def test_proof_donation_saving_bounds_the_recompiles_drop(target, changed, donated):
    """none donates nothing; params donates argument 0; batch/b8 is the same program
    with params and optimizer state donated (manifest: same_as)."""
    none, jax_none = _proof(f"donation/{target}-none")
    after, jax_after = _proof(f"{changed[0]}/{target}-{changed[1]}")
    advice = {a.groups[0].split("/")[0]: a for a in donation_advice(none, Labeller(none))}
    predicted = sum(advice[name].saving_bytes for name in donated)
    # exactly what the recompile aliases, the output buffers that donation removes
    assert predicted == jax_after["alias_size_in_bytes"]
    drop = jax_none["peak_memory_in_bytes"] - jax_after["peak_memory_in_bytes"]
    assert 0 < drop <= predicted  # an upper bound on JAX's peak
    if target == "cpu":
        assert drop == predicted  # JAX's CPU peak is the static buffers
    else:
        # libtpu's peak falls by 66-73% of it (docs/usage.md says where the rest goes),
        # hlotop's HBM occupied peak (the dump's allocations in use) by it, within 1%
        assert 0.6 * predicted < drop < 0.8 * predicted
        hbm = [
            next(s.peak_bytes for s in m.analysis.memory_spaces if s.color == 0)
            for m in (none, after)
        ]
        assert abs((hbm[0] - hbm[1]) - predicted) <= 0.01 * predicted
    left = donation_advice(after, Labeller(after))
    assert {a.groups[0].split("/")[0] for a in left} == {"params", "opt_state"} - set(donated)


@pytest.mark.parametrize("target", ["v5e_1x1", "cpu"])
def test_proof_aliased_but_copied_predicts_the_copy_the_recompile_drops(target):
    """x is donated and updated in place; reads_old reads the old x after the update,
    so XLA keeps a copy of it. The advice names that copy and predicts its bytes; the
    same step without the late read (updated_only) drops exactly them from XLA's peak
    and JAX's temp, and within 0.1% from JAX's TPU peak (CPU's is static buffers only)."""
    late, jax_late = _proof(f"aliased_copy/{target}-reads_old")
    updated, jax_updated = _proof(f"aliased_copy/{target}-updated_only")
    manifest = json.loads((PROOF / "manifest.json").read_text())["modules"]
    (copy,) = manifest[f"aliased_copy/{target}-reads_old"]["parameter_copies"]
    (item,) = aliased_copy_advice(late, Labeller(late))
    assert item.kind == "donation" and item.bound == "estimate" and item.groups == ("x",)
    assert item.step == late.analysis.peak_step
    copied = next(i for i in late.analysis.values if i.value.id == item.values[0])
    assert copied.value.name == copy["copy"] and copied.shape == copy["shape"]
    predicted = item.saving_bytes
    assert predicted == jax_late["argument_size_in_bytes"] == 8192 * 8192 * 4
    assert predicted == late.analysis.peak_bytes - updated.analysis.peak_bytes
    assert predicted == jax_late["temp_size_in_bytes"] - jax_updated["temp_size_in_bytes"]
    drop = jax_late["peak_memory_in_bytes"] - jax_updated["peak_memory_in_bytes"]
    if target == "v5e_1x1":
        assert abs(predicted - drop) <= 0.001 * drop
    else:
        assert drop == 0
    assert f"{copy['copy']} copies it" in item.evidence[0]
    assert aliased_copy_advice(updated, Labeller(updated)) == []


def test_aliased_but_copied_on_a_cpu_train_step():
    """The CPU backend keeps copies of some donated weights in plain train steps (XLA's
    copy insertion could not order every read of the old value before the update that
    writes its buffer): the proof's donated GPT (cpu-params) keeps
    copies of the three LayerNorm scales, 512 bytes each (found by regex in its HLO
    text); the TPU compile of the same program keeps none."""
    module, _ = _proof("donation/cpu-params")
    hlo = next((PROOF / "donation/cpu-params").glob("*after_optimizations.txt")).read_text()
    params = dict(re.findall(r"^  %(\S+) = \S+ parameter\((\d+)\)", hlo, re.M))
    copies = {
        name: params[src]
        for name, src in re.findall(r"^  %(\S+) = \S+ copy\(%(\S+)\)", hlo, re.M)
        if src in params
    }
    (item,) = aliased_copy_advice(module, Labeller(module))
    named = {i.value.name for i in module.analysis.values if i.value.id in item.values}
    assert named <= set(copies) and len(named) == 3
    assert item.saving_bytes == 3 * 512 and item.title.startswith("params is donated but 3")
    tpu, _ = _proof("donation/v5e_1x1-params")
    assert aliased_copy_advice(tpu, Labeller(tpu)) == []


@pytest.mark.parametrize(
    "variant, scope", [("attn", "GPT/Block_*/attn"), ("mlp", "GPT/Block_*/mlp")]
)
def test_proof_remat_bound_covers_the_rematerialised_recompile(variant, scope):
    none, _ = _proof("remat/v5e_1x1-none")
    after, _ = _proof(f"remat/v5e_1x1-{variant}")
    (item,) = [a for a in remat_advice(none, Labeller(none)) if a.groups == (scope,)]
    drop = none.analysis.peak_bytes - after.analysis.peak_bytes
    # an upper bound within 2x: values a remat of the scope would leave live at the peak
    # (used by the backward pass by then, or by another scope's) are left out of it
    assert 0 < drop <= item.saving_bytes <= 2 * drop
    assert item.saving_bytes < sum(i.allocated_bytes for i in _infos(none, item.values))
    # the rematerialised recompile keeps little of that scope for backward
    kept = [a.saving_bytes for a in remat_advice(after, Labeller(after)) if a.groups == (scope,)]
    assert sum(kept) < item.saving_bytes / 3


def _index(info) -> str:
    index = info.value.shape_index
    return "{" + ",".join(map(str, index)) + "}" if index else ""


def _infos(module, ids):
    wanted = set(ids)
    return [i for i in module.analysis.values if i.value.id in wanted]


def test_proof_remat_bound_leaves_out_what_the_backward_pass_reads_by_the_peak():
    """fusion.148, Block_1's MLP hidden activation, is first read by the backward pass
    at the peak step itself: rematerialised, it would be recomputed by then and live
    there all the same. The block outputs (c_proj's fusion with the residual add) are
    read by the LayerNorms' backward, which keep them saved. The evidence says so."""
    none, _ = _proof("remat/v5e_1x1-none")
    peak = none.analysis.peak_step
    (item,) = [a for a in remat_advice(none, Labeller(none)) if a.groups == ("GPT/Block_*/mlp",)]
    (left,) = [e for e in item.evidence if e.startswith("left out of the bound")]
    assert f"fusion.148 used by the backward pass at step {peak}, by the peak" in left
    assert re.search(r"convert_reduce_fusion\.2\{2\} used by the backward pass of [^;]*ln_", left)
    kept = [i for i in _infos(none, item.values) if i.value.name + "{" not in left]
    assert (
        item.saving_bytes
        == 1 << 20
        == sum(i.allocated_bytes for i in kept if i.value.name == "fusion.155")
    )


def test_proof_a_replicated_weight_is_flagged_and_its_twin_is_not():
    replicated, jax_r = _proof("replication/v5e_2x2-replicated")
    sharded, jax_s = _proof("replication/v5e_2x2-sharded")
    (item,) = replication_advice(replicated)
    assert item.groups == (
        "params/Block_0/mlp/c_fc/kernel",
        "opt_state/0/mu/Block_0/mlp/c_fc/kernel",
        "opt_state/0/nu/Block_0/mlp/c_fc/kernel",
    )
    # sharding the weight and its adam state 4 ways: the arguments the twin saves
    assert item.saving_bytes == jax_r["argument_size_in_bytes"] - jax_s["argument_size_in_bytes"]
    assert replication_advice(sharded) == []
