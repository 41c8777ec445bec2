"""Every JSON document hlotop writes has a JSON Schema shipped in the package, made from
the one table its writer is made from (hlotop.report.json_schema.DOCUMENTS); here each
shipped file is what its table makes, and the documents the command writes for real
samples validate against it: diff, directories, two runs compared, OOM texts, fit and
why (``hlotop --json``'s own are validated in test_json_schema.py). Every object of
every schema refuses keys it does not name, so a key a writer adds outside its table
fails here."""

from __future__ import annotations

import importlib.resources
import json
import shutil

import jsonschema
import pytest

from conftest import SAMPLES
from hlotop.cli import main
from hlotop.report import reports
from hlotop.report.json_schema import DOCUMENTS

OOM_TEXTS = sorted((SAMPLES / "oom").glob("*.txt")) + sorted((SAMPLES / "oom").glob("*.log"))
RUN = SAMPLES / "dirs" / "jax-0.10.2-cpu-train"  # a whole --xla_dump_to run
H200 = SAMPLES / "jax-0.11.2" / "h200_mlp"  # two GPU modules
WHY_MODULES = [
    SAMPLES / "seeds" / "000_aa093b3e4f73e23a.txt",
    SAMPLES / "cpu" / "donation",
    SAMPLES / "tpu" / "v5e_1x1-transformer_remat",
    SAMPLES / "jax" / "jax-0.4.23" / "mlp_train",  # no live ranges
]


@pytest.mark.parametrize("name", DOCUMENTS)
def test_each_shipped_schema_is_what_its_table_makes(name):
    """After changing a table, run ``python -m hlotop.report.json_schema --write``."""
    document = DOCUMENTS[name]
    assert document.schema_file.read_text(encoding="utf-8") == document.schema_text()
    jsonschema.Draft202012Validator.check_schema(document.schema())
    shipped = importlib.resources.files("hlotop.report").joinpath(f"{name}.schema.json")
    assert shipped.is_file()


def _objects(node):
    """Every object schema in a schema, nested ones included."""
    if isinstance(node, dict):
        if node.get("type") == "object" and "properties" in node:
            yield node
        for value in node.values():
            yield from _objects(value)
    elif isinstance(node, list):
        for value in node:
            yield from _objects(value)


@pytest.mark.parametrize("name", DOCUMENTS)
def test_every_object_refuses_a_key_it_does_not_name(name):
    schema = DOCUMENTS[name].schema()
    objects = list(_objects(schema))
    assert len(objects) >= 2
    assert all(o["additionalProperties"] is False for o in objects)
    for o in objects:
        assert set(o["required"]) <= set(o["properties"])


def test_every_json_report_names_a_document():
    json_reports = [r for r in reports.REPORTS if hasattr(r, "write_json")]
    assert sorted(r.document for r in json_reports) == sorted(DOCUMENTS)
    assert all(hasattr(r, "write_text") for r in reports.REPORTS)


def _document(argv: list[str], capsys, status: int = 0) -> dict:
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == status, err
    assert out.endswith("\n") and out.count("\n") == 1
    return json.loads(out)


def _valid(name: str, doc: dict) -> dict:
    validator = jsonschema.Draft202012Validator(DOCUMENTS[name].schema())
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors[:5]]
    return doc


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("cpu/gpt_loop", "cpu/gpt_loop_batch16"),
        ("proof/donation/cpu-none", "proof/donation/cpu-params"),
        ("proof/remat/v5e_1x1-none", "proof/remat/v5e_1x1-block"),
        ("jax/jax-0.4.23/mlp_train", "jax/jax-0.9.2/mlp_train"),  # no live ranges in OLD
    ],
)
def test_diff_documents_validate(old, new, capsys):
    doc = _valid(
        "diff", _document(["diff", "--json", str(SAMPLES / old), str(SAMPLES / new)], capsys)
    )
    assert doc["values"]["matched"] > 0
    assert doc["delta"]["peak_bytes"] == doc["new"]["peak_bytes"] - doc["old"]["peak_bytes"]


@pytest.mark.parametrize("capacity", [None, "16GiB", "h100"])
@pytest.mark.parametrize("folder", [RUN, H200])
def test_directory_documents_validate(folder, capacity, capsys):
    argv = ["--json", str(folder)] + (["--capacity", capacity] if capacity else [])
    doc = _valid("modules", _document(argv, capsys))
    assert doc["modules"] and (doc["capacity"] is None) == (capacity is None)


def _run(folder, *modules: str):
    """A dump run in ``folder`` of the sample modules named."""
    folder.mkdir()
    for module in modules:
        for path in (SAMPLES / module).glob("module_*"):
            shutil.copy(path, folder / path.name)
    return str(folder)


def test_two_runs_compared_validate(tmp_path, capsys):
    """Two runs sharing one program (grown in NEW) and each with a program of its own."""
    old = _run(tmp_path / "old", "cpu/gpt_loop", "cpu/mlp_adam")
    new = _run(tmp_path / "new", "cpu/gpt_loop_batch16", "cpu/donation")
    doc = _valid("modules-diff", _document(["diff", "--json", old, new], capsys))
    sides = [(p["old"] is None, p["new"] is None) for p in doc["programs"]]
    assert sorted(sides) == [(False, False), (False, True), (True, False)]
    assert doc["over"] == []
    gated = _document(["diff", "--json", "--fail-over", "0%", old, new], capsys, 1)
    assert _valid("modules-diff", gated)["over"]


@pytest.mark.parametrize("text", OOM_TEXTS, ids=[p.name for p in OOM_TEXTS])
def test_oom_documents_validate(text, capsys):
    doc = _valid("oom", _document(["--json", str(text)], capsys))
    assert doc["oom"] in doc["ooms"]


def test_an_oom_document_linked_to_its_dump_validates(capsys):
    """An entry --dump links to a value (none of the sample texts is of a sample dump:
    a real TPU text's report, its entry one the TPU dump holds)."""
    import dataclasses

    from hlotop.analysis.oom_link import OomLinker
    from hlotop.loading.loader import load
    from hlotop.model.oom import OomEntry, Size
    from hlotop.parse.oom import find_ooms
    from hlotop.report.oom_table import OomTexts, oom_json

    text = SAMPLES / "oom" / "tpu-jax-2024-largest-program-allocations.txt"
    report = find_ooms(text.read_text(), str(text))[0]
    entry = OomEntry(
        Size.of_bytes(1048576),
        shape="f32[512,512]",
        opcode="fusion",
        label="fusion",
        op_name="jit(train_step)/transpose(jvp())/dot_general",
    )
    report = dataclasses.replace(report, entries=(entry, *report.entries[:2]))
    module = load(next((SAMPLES / "tpu" / "v5e_1x1-mlp_adam").glob("*-assignment.txt")))
    links = [OomLinker(module).find(e) for e in report.entries]
    assert links[0] is not None
    doc = _valid("oom", oom_json(OomTexts([report], report, [links], module.name)))
    assert doc["oom"]["linked"] == sum(link is not None for link in links)
    assert doc["oom"]["entries"][0]["value"]["module"] == module.name


def test_fit_documents_validate(capsys):
    dumps = [str(SAMPLES / f"proof/batch/v5e_1x1-b{n}") for n in (2, 4, 8, 16)]
    argv = ["fit", "--json", "--capacity", "v5e", "--at", "32", *dumps]
    doc = _valid("fit", _document(argv, capsys))
    assert doc["fit"]["sizes"] == [2, 4, 8, 16]


@pytest.mark.parametrize("module", WHY_MODULES, ids=[p.name for p in WHY_MODULES])
def test_why_documents_validate(module, capsys):
    from hlotop.loading.loader import load

    ids = [str(i.value.id) for i in load(module, lazy=True).analysis.values[:3]]
    if main(["why", "--json", str(module)]) == 0:
        live = _valid("why-live", json.loads(capsys.readouterr().out))
        assert live["values"] and live["step_is_peak"]
        ids += [str(v["id"]) for v in live["values"][:5]]
    else:  # no live ranges: no step to ask about
        assert "no live ranges" in capsys.readouterr().err
    for value in ids:
        answer = _valid("why", _document(["why", "--json", str(module), value], capsys))
        assert str(answer["value"]["id"]) == value
        assert answer["reasons"] or answer["step"] is None


def test_a_reason_has_the_keys_its_kind_uses_and_no_others(capsys):
    """A reason's optional keys are left out where its kind uses none (as before the
    table: the schema requires only ``kind``)."""
    assert main(["why", "--json", str(SAMPLES / "cpu" / "donation")]) == 0
    doc = _valid("why-live", json.loads(capsys.readouterr().out))
    keys = {(r["kind"], tuple(r)) for v in doc["values"] for r in v["reasons"]}
    assert ("output", ("kind",)) in keys
    assert ("used-later", ("kind", "instruction", "step")) in keys
    assert (
        "entry-parameter",
        ("kind", "parameter", "parameter_index", "donated", "donation_source"),
    ) in keys
    assert ("shares-buffer", ("kind", "other_id", "other_name")) in keys
