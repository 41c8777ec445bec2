"""The live set grouped by scope, phase, source, ... (--group-by), and exported: the
rules read off real op_names, and on every real dump the groups add up to the step's
total in --summary, --json and --export alike."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest

from conftest import ROOT, SAMPLES, hlotop
from hlotop import load
from hlotop.analysis.grouping import GROUP_KEYS, group_live_set, parse_keys
from hlotop.analysis.labels import Labeller
from hlotop.analysis.scope import ScopeRule, phase_of, pytree_path, scope_of
from sample_index import MODULES

LOOP = next((SAMPLES / "cpu" / "transformer_loop").glob("*-buffer-assignment.txt"))
TPU = SAMPLES / "seeds" / "003_a3085531593bac68.txt"


@pytest.mark.parametrize(
    ("op_name", "scope", "phase"),
    [
        # Real op_names of the samples (jax 0.10.2 CPU, flax-style and plain).
        ("jit(transformer_train_step)/jvp()/dot_general", "", "forward"),
        ("jit(train_step)/transpose(jvp())/reduce_sum", "", "backward"),
        ("jit(transformer_train_step)/jvp()/jit(log_softmax)/sub", "jit(log_softmax)", "forward"),
        # Scopes a model names, primitive parameters, layer indices of every form.
        (
            "jit(step)/jvp(GPT)/Block_3/attn/dot_general[dimension_numbers=(([1], [0]), ([], []))]",
            "GPT/Block_*/attn",
            "forward",
        ),
        ("jit(step)/transpose(jvp(GPT))/layers/26/mlp/add", "GPT/layers/*/mlp", "backward"),
        (
            "jit(step)/while/body/checkpoint/jvp(Model)/layers_17/mul",
            "while/body/checkpoint/Model/layers_*",
            "forward",
        ),
        ("jit(step)/optax/adam/mul", "optax/adam", "optimizer"),
        ("jit(step)/fc1/add", "fc1", "other"),  # fc1 is a name, not a layer index
        ("args[0]", "args", "other"),
    ],
)
def test_scope_and_phase_of_op_names(op_name, scope, phase):
    assert scope_of(op_name) == scope
    assert phase_of(op_name, is_argument=False) == phase


@pytest.mark.parametrize(
    "op_name",
    [
        # jax <= 0.6 put jit(main) under the jitted function (sample_dumps/jax/jax-0.6.2)
        "jit(train_step)/jit(main)/jvp(MLP)/layers_2/dot_general[dimension_numbers=x]",
        "jit(train_step)/jvp(MLP)/layers_2/dot_general",  # jax >= 0.7
        "jit(main)/jvp(MLP)/layers_2/dot_general",  # a function called main
        "jvp(MLP)/layers_2/dot_general",  # no jitted function at all
    ],
)
def test_the_jitted_function_and_jax_06s_jit_main_are_no_scope(op_name):
    """The same instruction under ``jit(f)/jit(main)/`` (jax <= 0.6), ``jit(f)/``
    and no prefix has one scope and one op_name path; ``jit(main)`` was a scope of its
    own (a "new, large" group of every diff across the two eras)."""
    assert scope_of(op_name) == "MLP/layers_*"
    assert scope_of(op_name, fold=False) == "MLP/layers_2"
    from hlotop.analysis.scope import op_path  # the diff's op_name key

    assert op_path(op_name) == "jvp(MLP)/layers_2/dot_general"


def test_a_jit_the_user_called_stays_in_the_scope():
    # only the outermost jit and, right under it, jit(main) go
    op_name = "jit(train_step)/jit(main)/jvp(jit(log_softmax))/sub"
    assert scope_of(op_name) == "jit(log_softmax)"
    assert scope_of("jit(_normal)/jit(_normal_real)/jit(_uniform)/add") == (
        "jit(_normal_real)/jit(_uniform)"
    )


def test_the_live_set_of_two_jax_eras_groups_alike_by_scope():
    """jax 0.6.2 and 0.7.2 compile the MLP train step alike (the same values live at
    the peak); 0.6.2's op_names start ``jit(train_step)/jit(main)/``: its 678.5KiB at
    the peak were the scope ``jit(main)``, 0.7.2's ``(top level)``."""
    jax = SAMPLES / "jax"
    old, new = (
        {r.key: r.bytes for r in group_live_set(load(jax / v / "mlp_train"), ("scope",)).rows}
        for v in ("jax-0.6.2", "jax-0.7.2")
    )
    assert old == new and old[("(top level)",)] == 694828


def test_scope_rules_no_fold_and_pytree_paths():
    op_name = "jit(step)/jvp(GPT)/Block_3/attn/dot_general"
    assert scope_of(op_name, fold=False) == "GPT/Block_3/attn"
    rule = ScopeRule.parse(r"^GPT/Block_\*=blocks")
    assert scope_of(op_name, rules=[rule]) == "blocks/attn"
    with pytest.raises(ValueError, match="REGEX=REPLACEMENT"):
        ScopeRule.parse("no equals sign")
    # The dump escapes the quotes of a parameter's op_name: params[0][\'b\'].
    assert pytree_path("params[0][\\'b\\']") == "params/*/b"
    assert pytree_path("opt_state[0].mu['Block_3']['w']", fold=False) == "opt_state/0/mu/Block_3/w"
    assert phase_of("params['w']", is_argument=True) == "argument"
    with pytest.raises(ValueError, match="unknown group key 'layer'") as said:
        parse_keys("scope,layer")
    # ... and which keys there are.
    assert str(said.value).endswith(
        "(the keys: scope, phase, source, opcode, shape, dtype, kind, space, param)"
    )
    with pytest.raises(ValueError, match=r"^no group key given \(the keys: scope, "):
        parse_keys(" , ")


@pytest.mark.parametrize("entry", MODULES, ids=[str(p.relative_to(SAMPLES)) for p in MODULES])
def test_groups_add_up_to_the_step_total_on_every_dump(entry):
    module = load(entry)
    a = module.analysis
    if a.peak_step is None:
        pytest.skip("no live ranges")
    labeller = Labeller(module)
    live = [i for i in a.values if i.is_live_at(a.peak_step)]
    logical = group_live_set(module, ("phase", "scope"), labeller=labeller)
    assert logical.step == a.peak_step
    assert logical.total_bytes == sum(r.bytes for r in logical.rows) == a.live_bytes[a.peak_step]
    assert sorted(i.value.id for r in logical.rows for i in r.values) == sorted(
        i.value.id for i in live
    )
    occupied = group_live_set(module, ("space",), accounting="occupied", labeller=labeller)
    assert occupied.total_bytes == sum(r.bytes for r in occupied.rows)
    assert occupied.total_bytes == sum(c[a.peak_step] for c in a.occupied_bytes.values())
    for row in occupied.rows:  # by memory space: each space's own occupied bytes
        (color,) = {i.color for i in row.values}
        assert row.bytes == a.occupied_bytes[color][a.peak_step]


def test_fusions_without_metadata_take_that_of_the_computation_they_call():
    """XLA's CPU backend drops the metadata of fusions such as convert_convert_fusion.12;
    the computation it calls (fused_computation.205 in the HLO text beside the dump)
    says jvp()/convert_element_type (its last instruction with metadata): forward, at
    the top level, not '(no op_name)'."""
    module = load(LOOP)
    (info,) = [i for i in module.analysis.values if i.value.name == "convert_convert_fusion.12"]
    assert info.op_name is None
    labeller = Labeller(module)
    assert labeller.origin(info)[0] == "jit(transformer_train_step)/jvp()/convert_element_type"
    assert labeller.label(info, "phase") == "forward"
    assert labeller.label(info, "scope") == "(top level)"
    assert labeller.label(info, "source").startswith("scripts/generate_tpu_dumps.py:")


def test_every_key_labels_every_live_value():
    module = load(TPU)
    labeller = Labeller(module)
    for info in module.analysis.peak_values:
        labels = {key: labeller.label(info, key) for key in GROUP_KEYS}
        assert all(labels.values()), labels
    p0 = next(i for i in module.analysis.peak_values if i.value.name == "p0.1")
    assert labeller.label(p0, "kind") == "parameter"
    assert labeller.label(p0, "space") == "HBM"
    assert labeller.label(p0, "shape") == "f32[]" and labeller.label(p0, "dtype") == "f32"


def test_summary_json_and_export_give_the_same_numbers():
    """One grouping, four outputs: the --summary table's total, --json's groups, the
    grouped CSV and the per-value TSV all add up to the logical bytes live at XLA's
    peak (49.89MiB, 52 314 900 bytes at step 167 of the CPU transformer)."""
    a = load(LOOP).analysis
    total = a.live_bytes[a.peak_step]
    assert (a.peak_step, total) == (167, 52314900)
    path = str(LOOP.relative_to(ROOT))

    summary = hlotop("--summary", "--group-by", "phase,scope", path)
    assert summary.returncode == 0, summary.stderr
    text = summary.stdout.decode()
    assert "Live set at step 167 by phase, scope" in text
    assert re.search(r"^total +49\.89MiB +100\.0% +\d+", text, re.M)

    doc = json.loads(hlotop("--json", "--group-by", "phase,scope", path).stdout)
    groups = doc["groups"]
    assert (groups["step"], groups["keys"], groups["accounting"]) == (
        167,
        ["phase", "scope"],
        "logical",
    )
    assert groups["total_bytes"] == sum(r["bytes"] for r in groups["rows"]) == total
    forward = [r for r in groups["rows"] if r["key"][0] == "forward"]
    assert sum(r["bytes"] for r in forward) > total // 2  # the activations of the forward pass

    rows = list(
        csv.DictReader(
            io.StringIO(
                hlotop("--export", "csv", "--group-by", "phase,scope", path).stdout.decode()
            )
        )
    )
    assert [(r["phase"], r["scope"], int(r["bytes"])) for r in rows] == [
        (*r["key"], r["bytes"]) for r in groups["rows"]
    ]
    per_value = list(
        csv.DictReader(io.StringIO(hlotop("--export", "tsv", path).stdout.decode()), delimiter="\t")
    )
    assert sum(int(r["bytes"]) for r in per_value) == total
    assert {r["phase"] for r in per_value} >= {"argument", "forward", "backward"}

    folded = hlotop("--export", "folded", path).stdout.decode().splitlines()
    assert sum(int(line.rsplit(" ", 1)[1]) for line in folded) == total
    assert all(re.fullmatch(r"[^ ]+( [^ ]+)* \d+", line) for line in folded)
    assert any(line.startswith("forward;") for line in folded)


def test_occupied_accounting_and_another_step():
    path = str(TPU.relative_to(ROOT))
    doc = json.loads(
        hlotop(
            "--json", "--group-by", "space", "--accounting", "occupied", "--step", "7", path
        ).stdout
    )
    a = load(TPU).analysis
    groups = doc["groups"]
    assert groups["step"] == 7 and groups["accounting"] == "occupied"
    by_space = {r["key"][0]: r["bytes"] for r in groups["rows"]}
    assert by_space["VMEM"] == a.occupied_bytes[1][7] == 90177536
    assert groups["total_bytes"] == sum(c[7] for c in a.occupied_bytes.values())


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--summary", "--group-by", "scope,layer"), "unknown group key 'layer'"),
        (
            ("--summary", "--group-by", "scope", "--step", "99"),
            "step 99 is outside the schedule (0..15)",
        ),
        (("--summary", "--scope-rule", "(="), "scope rule"),
        (("--group-by", "scope"), "go with --summary, --json or --export"),
    ],
)
def test_bad_grouping_options_are_one_line_errors(args, message):
    out = hlotop(*args, str(TPU.relative_to(ROOT)))
    assert out.returncode == 2
    err = out.stderr.decode()
    assert err.count("\n") == 1 and message in err and "Traceback" not in err


def test_a_live_set_is_labelled_from_its_records_read_once_each_in_dump_order(monkeypatch):
    """Grouping by phase, scope and source read a value's record once a key, at random
    (the 108 MB dump's 21 800 live values: 2.5 s more than now). Each record is now
    read once, in dump order, and the groups are the same as from records in memory."""
    from hlotop.analysis.grouping import group_live_set
    from hlotop.model import UsedValues

    path = SAMPLES / "cpu" / "gpt_loop"
    module = load(path, lazy=True)
    asked: list[int] = []
    record = UsedValues.record
    monkeypatch.setattr(UsedValues, "record", lambda self, n: asked.append(n) or record(self, n))
    begun: list[int] = []  # where in ``asked`` the pass over the live set began
    read_records = Labeller.read_records
    monkeypatch.setattr(
        Labeller,
        "read_records",
        lambda self, *a: begun.append(len(asked)) or read_records(self, *a),
    )
    keys = ("phase", "scope", "source")
    lazy = group_live_set(module, keys)
    assert begun[0] < 20  # before it: the few values that find the backward pass
    live = len(lazy.bytes_of)
    in_order = asked[begun[0] : begun[0] + live]
    assert len(set(in_order)) == live > 100 and in_order == sorted(in_order)
    # after it, only the operands some copies and converts take their op_name from
    assert len(asked) - begun[0] - live < live // 4
    monkeypatch.setattr(UsedValues, "record", record)

    def rows(grouping):
        return [(r.key, r.bytes, [i.value.id for i in r.values]) for r in grouping.rows]

    assert rows(group_live_set(load(path), keys)) == rows(lazy)
