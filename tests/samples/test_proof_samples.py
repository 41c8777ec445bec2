"""The proof inputs of hlotop's advice (``sample_dumps/proof/``, made by
``scripts/generate_proof_dumps.py``): each case's variants are the programs its
``manifest.json`` says, compiled with and without one change. Expected figures come from
``memory_analysis.json`` (JAX's own record), the manifest and plain regexes over XLA's
files; hlotop's loader reads the dumps. The advice's own tests hold its predictions
against these modules; these tests say what the modules are."""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass

import pytest

from conftest import SAMPLES
from hlotop import load

PROOF = SAMPLES / "proof"
MANIFEST = json.loads((PROOF / "manifest.json").read_text())
MODULES = MANIFEST["modules"]
CASES = MANIFEST["cases"]
KEYS = sorted(MODULES)
XLA_SUFFIXES = (
    "-buffer-assignment.txt",
    "-buffer-assignment-values.txt",
    "-live-range.txt",
    "-memory-usage-report.txt",
    ".txt",  # the optimized HLO module text, <prefix>.txt
)
# The JAX figures hlotop works out by XLA's rule on every backend; on CPU temp too (on
# TPU it is libtpu's own figure) and peak_memory_in_bytes (CPU: the static allocations).
TPU_FIELDS = tuple(
    f"{host}{kind}_size_in_bytes"
    for host in ("", "host_")
    for kind in ("argument", "output", "alias")
)
CPU_FIELDS = (*TPU_FIELDS, "temp_size_in_bytes", "host_temp_size_in_bytes")
ENTRY_PARAM = re.compile(r"^  %(\S+) = (\S+) parameter\((\d+)\)(.*)$", re.M)
OP_NAME = re.compile(r'op_name="([^"]*)"')


def _record(key: str) -> dict:
    return json.loads((PROOF / key / "memory_analysis.json").read_text())


def _hlo(key: str) -> str:
    return next((PROOF / key).glob("*after_optimizations.txt")).read_text()


def _entry_parameters(key: str) -> dict[int, dict]:
    """{number: name, shape, op_name (unescaped), rest of the line} of the ENTRY's
    parameters, from the HLO text."""
    hlo = _hlo(key)
    entry = hlo[hlo.index("\nENTRY ") :]
    entry = entry[: entry.index("\n}\n")]
    out = {}
    for name, shape, number, rest in ENTRY_PARAM.findall(entry):
        op = OP_NAME.search(rest)
        op_name = op.group(1).replace("\\'", "'") if op else ""
        out[int(number)] = {"name": name, "shape": shape, "op_name": op_name, "rest": rest}
    return out


@dataclass(frozen=True)
class Loaded:
    """What the tests need of one module as hlotop loads it (a module itself is large)."""

    diagnostics: tuple[str, ...]
    platform: str
    stats: dict[str, int]
    alias_source: str
    peak_memory_in_bytes: int | None
    peak_bytes: int
    peak_bytes_source: str | None
    aliased_parameters: frozenset[int]  # the header's input_output_alias
    parameter_sizes: dict[int, int]  # entry parameter number -> its allocation's size


@functools.cache
def _loaded(key: str) -> Loaded:
    module = load(PROOF / key)
    a = module.analysis
    assert a.memory_stats is not None and module.sections.input_output_alias is not None
    return Loaded(
        tuple(str(d) for d in module.diagnostics),
        a.platform,
        a.memory_stats.as_dict(),
        a.memory_stats.alias_source,
        a.memory_stats.peak_memory_in_bytes,
        a.peak_bytes,
        a.peak_bytes_source,
        frozenset(x.parameter for x in module.sections.input_output_alias),
        {x.parameter: x.size for x in module.allocations if x.parameter is not None},
    )


def _folder(case: str, variant: str, target: str) -> str:
    return CASES[case]["variants"][variant]["folders"][target]


def _targets(case: str) -> list[str]:
    return list(CASES[case]["targets"])


# 1. The manifest and the folders


def test_manifest_names_every_folder_and_every_variant_has_its_folders():
    on_disk = {str(p.parent.relative_to(PROOF)) for p in PROOF.glob("*/*/memory_analysis.json")}
    assert on_disk == set(MODULES) and len(on_disk) >= 20
    used = set()
    for case, c in CASES.items():
        assert c["baseline"] in c["variants"]
        for name, v in c["variants"].items():
            assert set(v["folders"]) == set(c["targets"]), (case, name)
            for target, key in v["folders"].items():
                used.add(key)
                # a variant's own folder, or that of the variant it is the same program as
                owner = v["same_as"] or f"{case}/{name}"
                assert key == "%s/%s-%s" % (owner.split("/")[0], target, owner.split("/")[1])
                assert MODULES[key]["parameters"] == v["parameters"]
                assert f"{case}/{name}" in MODULES[key]["variants"]
        for comparison in c["comparisons"]:
            assert {comparison["baseline"], comparison["changed"]} <= set(c["variants"])
    assert used == set(MODULES)


@pytest.mark.parametrize("key", KEYS)
def test_folder_holds_xla_files_of_one_module_and_jax_record(key):
    folder = PROOF / key
    files = sorted(p.name for p in folder.iterdir())
    assert {n: (folder / n).stat().st_size for n in files} == MODULES[key]["files"]
    entry = next(folder.glob("*-buffer-assignment.txt")).name
    prefix = entry[: -len("-buffer-assignment.txt")]
    function = CASES[key.split("/")[0]]["function"]  # gpt_train_step but for aliased_copy
    assert re.match(r"module_\d{4}\.jit_%s\." % function, prefix)
    assert files == sorted(["memory_analysis.json", *(prefix + s for s in XLA_SUFFIXES)])
    assert sum((folder / n).stat().st_size for n in files) < 1_500_000


@pytest.mark.parametrize("key", KEYS)
def test_memory_analysis_json_is_what_the_manifest_says(key):
    record, module = _record(key), MODULES[key]
    case, rest = key.split("/")
    assert (record["case"], f"{record['target']}-{record['variant']}") == (case, rest)
    assert record["parameters"] == module["parameters"]
    assert record["variants"] == module["variants"]
    assert {f: record[f] for f in module["memory_analysis"]} == module["memory_analysis"]
    assert record["platform"] == ("cpu" if record["target"] == "cpu" else "tpu")
    assert "peak_memory_in_bytes" in record and record["versions"]["jax"] == "0.10.2"


# 2. Each module as hlotop reads it


@pytest.mark.parametrize("key", KEYS)
def test_loads_without_diagnostics_with_jax_figures_and_xla_peak(key):
    got, record = _loaded(key), _record(key)
    assert got.diagnostics == ()
    assert got.platform == record["platform"]
    fields = CPU_FIELDS if record["platform"] == "cpu" else TPU_FIELDS
    assert {f: got.stats[f] for f in fields} == {f: record[f] for f in fields}
    assert got.alias_source == "input_output_alias"
    if record["platform"] == "cpu":
        assert got.peak_memory_in_bytes == record["peak_memory_in_bytes"]
    # XLA's peak: the figure its live-range file prints, and the sum of its peak list
    assert got.peak_bytes_source == "list"
    assert got.peak_bytes == MODULES[key]["xla_peak_bytes"] > 0


# 3. donation: alias where donated, of exactly the donated arguments' parameters


def _argument_parameters(key: str, arguments: list[str]) -> set[int]:
    """Entry parameters whose op_name (the pytree path) is under one of ``arguments``."""
    return {
        n
        for n, p in _entry_parameters(key).items()
        if re.match(r"(%s)\b" % "|".join(arguments), p["op_name"])
    }


@pytest.mark.parametrize("target", _targets("donation"))
def test_donation_aliases_exactly_the_donated_arguments(target):
    for name, v in CASES["donation"]["variants"].items():
        key = _folder("donation", name, target)
        got = _loaded(key)
        donated = [MANIFEST["arguments"][i] for i in v["parameters"]["donate"]]
        expected = _argument_parameters(key, donated) if donated else set()
        assert got.aliased_parameters == expected, name
        recorded = {p["number"] for p in MODULES[key]["donated_entry_parameters"]}
        assert recorded == expected
        alias = sum(got.parameter_sizes[n] for n in expected)
        assert _record(key)["alias_size_in_bytes"] == alias
        assert (alias > 0) == bool(donated), name
    # every argument but the batch has entry parameters: a donation that aliases nothing
    # would pass the test above
    counts = MODULES[_folder("donation", "none", target)]["entry_parameter_arguments"]
    assert counts["params"] > 0 and counts["opt_state"] > 0 and counts["batch"] == 2


@pytest.mark.parametrize("target", _targets("donation"))
def test_donation_comparisons_add_the_newly_donated_parameters(target):
    for c in CASES["donation"]["comparisons"]:
        base = _folder("donation", c["baseline"], target)
        changed = _folder("donation", c["changed"], target)
        new = _argument_parameters(changed, c["donated_arguments"])
        assert c["donated_arguments"] == [MANIFEST["arguments"][i] for i in c["donated_argnums"]]
        assert _loaded(changed).aliased_parameters - _loaded(base).aliased_parameters == new
        gain = sum(_loaded(changed).parameter_sizes[n] for n in new)
        stats = _record(changed)["alias_size_in_bytes"] - _record(base)["alias_size_in_bytes"]
        assert stats == gain > 0
        # the arguments themselves did not change
        assert _record(changed)["argument_size_in_bytes"] == _record(base)["argument_size_in_bytes"]


# 4. remat: the changed variant recomputes its scopes, and only those


def _op_name_counts(key: str, prefixes: list[str]) -> dict[str, int]:
    op_names = OP_NAME.findall(_hlo(key))
    return {p: sum(1 for o in op_names if o.startswith(p)) for p in prefixes}


@pytest.mark.parametrize("target", _targets("remat"))
def test_remat_variants_recompute_their_scopes_only(target):
    comparisons = CASES["remat"]["comparisons"]
    every = [p for c in comparisons for p in c["rematted_op_name_prefixes"]]
    forward = [p for c in comparisons for p in c["forward_op_name_prefixes"]]
    base = _folder("remat", CASES["remat"]["baseline"], target)
    assert set(_op_name_counts(base, every).values()) == {0}
    assert 0 not in _op_name_counts(base, forward).values()
    for c in comparisons:
        key = _folder("remat", c["changed"], target)
        counts = _op_name_counts(key, every)
        assert all(counts[p] > 0 for p in c["rematted_op_name_prefixes"]), c["changed"]
        assert not any(n for p, n in counts.items() if p not in c["rematted_op_name_prefixes"])
        assert 0 not in _op_name_counts(key, c["forward_op_name_prefixes"]).values()
        scopes = c["remat_scopes"]
        assert [p.split("/jvp(GPT)/")[-1] for p in c["forward_op_name_prefixes"]] == [
            s + "/" for s in scopes
        ]
        # the manifest's counts are these
        facts = MODULES[key]
        assert [facts["rematted_instructions"][s] for s in scopes] == [
            counts[p] for p in c["rematted_op_name_prefixes"]
        ]


@pytest.mark.parametrize("target", _targets("remat"))
def test_remat_variants_change_nothing_but_the_temporaries(target):
    keys = [_folder("remat", v, target) for v in CASES["remat"]["variants"]]
    same = ("argument_size_in_bytes", "output_size_in_bytes", "alias_size_in_bytes")
    assert len({tuple(_record(k)[f] for f in same) for k in keys}) == 1
    params = [dict(MODULES[k]["parameters"], remat=None) for k in keys]
    assert all(p == params[0] for p in params)
    # and each variant's XLA peak differs from the baseline's: the change did something
    peaks = [_loaded(k).peak_bytes for k in keys]
    assert len(set(peaks)) == len(peaks)


# 5. the batch series


def _series(target: str) -> list[tuple[int, str]]:
    return sorted(
        (v["parameters"]["batch"], v["folders"][target])
        for v in CASES["batch"]["variants"].values()
    )


@pytest.mark.parametrize("target", _targets("batch"))
def test_batch_series_xla_peak_grows_with_batch(target):
    series = _series(target)
    assert len(series) >= 5 and len({b for b, _ in series}) == len(series)
    peaks = [_loaded(k).peak_bytes for _, k in series]
    assert peaks == sorted(peaks) and len(set(peaks)) == len(peaks)
    assert [MODULES[k]["xla_peak_bytes"] for _, k in series] == peaks
    # one program: only the batch differs
    params = [dict(MODULES[k]["parameters"], batch=None) for _, k in series]
    assert all(p == params[0] for p in params)
    if target == "cpu":  # every JAX figure is XLA's rule on CPU: temp grows too
        temps = [_record(k)["temp_size_in_bytes"] for _, k in series]
        assert temps == sorted(temps) and len(set(temps)) == len(temps)


def test_batch_series_arguments_grow_by_the_token_arrays_on_cpu():
    seq = MANIFEST["model"]["seq"]
    series = _series("cpu")
    b0, k0 = series[0]
    for b, k in series[1:]:
        grown = _record(k)["argument_size_in_bytes"] - _record(k0)["argument_size_in_bytes"]
        assert grown == 2 * (b - b0) * seq * 4  # inputs and targets, s32[batch, seq]


# 6. replication: one weight (and its adamw state) replicated, or sharded like its siblings


def test_replicated_weight_allocations_are_the_mesh_factor_larger():
    (c,) = CASES["replication"]["comparisons"]
    (target,) = _targets("replication")
    rep = _folder("replication", c["baseline"], target)
    shard = _folder("replication", c["changed"], target)
    factor = c["mesh_factor"]
    assert factor == c["mesh_shape"]["data"] * c["mesh_shape"]["model"] == 4
    tail = "".join(f"['{k}']" for k in c["parameter_path"].split("/"))
    entries = MODULES[rep]["parameter_entries"]
    assert [e["op_name"] for e in entries] == [
        e["op_name"] for e in MODULES[shard]["parameter_entries"]
    ]
    assert len(entries) == 3  # the weight, its adamw mu and nu
    rep_params, shard_params = _entry_parameters(rep), _entry_parameters(shard)
    grown = 0
    for e in entries:
        n = e["number"]
        assert (
            rep_params[n]["op_name"].endswith(tail) and shard_params[n]["op_name"] == e["op_name"]
        )
        assert "sharding={replicated}" in rep_params[n]["rest"]
        assert "sharding={devices=[2,2]" in shard_params[n]["rest"]
        size = _loaded(rep).parameter_sizes[n]
        assert size == factor * _loaded(shard).parameter_sizes[n] > 0
        grown += size - _loaded(shard).parameter_sizes[n]
    # every other entry parameter is the same in both, so JAX's argument figure grows by it
    others = set(rep_params) - {e["number"] for e in entries}
    for n in others:
        assert _loaded(rep).parameter_sizes[n] == _loaded(shard).parameter_sizes[n]
        assert rep_params[n]["rest"] == shard_params[n]["rest"]
    arguments = [_record(k)["argument_size_in_bytes"] for k in (rep, shard)]
    assert arguments[0] - arguments[1] == grown


def test_replication_modules_keep_their_shardings_and_partitions():
    for key in CASES["replication"]["variants"].values():
        key = next(iter(key["folders"].values()))
        hlo = _hlo(key)
        assert "num_partitions=4" in hlo.split("\n", 1)[0]
        assert MODULES[key]["num_partitions"] == 4
        params = _entry_parameters(key)
        assert params and all(" sharding={" in p["rest"] for p in params.values())
        # the siblings: the weight's layer's other matrices are sharded over "model"
        for path in ("['mlp']['c_proj']['kernel']", "['attn']['c_attn']['kernel']"):
            (sibling,) = [p for p in params.values() if p["op_name"] == "params['Block_0']" + path]
            assert "sharding={devices=[2,2]" in sibling["rest"]


# 7. aliased_copy: a donated argument copied while its old value is read after the update


@pytest.mark.parametrize("target", _targets("aliased_copy"))
def test_aliased_copy_keeps_a_copy_of_the_donated_argument_only_while_it_is_read_late(target):
    (c,) = CASES["aliased_copy"]["comparisons"]
    late, updated = (_folder("aliased_copy", c[v], target) for v in ("baseline", "changed"))
    for key in (late, updated):
        assert _loaded(key).aliased_parameters == {0}  # x donated and aliased in both
    (param,) = _entry_parameters(late).values()
    copies = re.findall(
        r"^  %(\S+) = (\S+) copy\(%" + re.escape(param["name"]) + r"\)", _hlo(late), re.M
    )
    assert [(name, shape) for name, shape in copies] == [
        (x["copy"], x["shape"]) for x in MODULES[late]["parameter_copies"]
    ]
    assert len(copies) == 1 and copies[0][1] == param["shape"]  # same shape and layout
    assert MODULES[updated]["parameter_copies"] == []
    # the copy is a temp buffer of x's size, which the changed program does without
    size = _loaded(late).parameter_sizes[0]
    assert _record(late)["temp_size_in_bytes"] - _record(updated)["temp_size_in_bytes"] == size
