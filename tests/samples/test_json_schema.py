"""``hlotop --json`` and its one schema: the shipped JSON Schema is what the table makes,
every sample dump's document validates against it and is, byte for byte, what the
hand-written dict oracle (tests/json_oracle.py) gives, in one process and with worker
processes; and docs/json.md's table names exactly the schema's keys."""

from __future__ import annotations

import importlib.resources
import io
import json
import re
from pathlib import Path

import jsonschema
import pytest

import json_oracle
from conftest import ROOT, SAMPLES, swept
from hlotop.cli import main
from hlotop.loading.loader import load
from hlotop.report import json_doc, parallel
from hlotop.report.json_schema import SCHEMA_FILE, schema, schema_text


def _modules() -> list[Path]:
    """One entry file per sample module, both layouts: a seed's only file, or the
    ``-buffer-assignment.txt`` (combined, or the main file of a split module)."""
    return sorted(
        p
        for p in swept("*.txt")
        if p.parent.name == "seeds" or p.name.endswith("-buffer-assignment.txt")
    )


MODULES = _modules()
IDS = [str(p.relative_to(SAMPLES)) for p in MODULES]


def test_the_samples_cover_both_layouts():
    assert len(MODULES) >= 40
    assert any(p.with_name(p.name.replace(".txt", "-values.txt")).exists() for p in MODULES)


def test_the_shipped_schema_is_what_the_table_makes():
    """After changing hlotop/report/json_table.py, run
    ``python -m hlotop.report.json_schema --write``."""
    assert SCHEMA_FILE.read_text(encoding="utf-8") == schema_text()
    jsonschema.Draft202012Validator.check_schema(schema())
    shipped = importlib.resources.files("hlotop.report").joinpath("hlotop.schema.json")
    assert shipped.is_file()  # package data: the wheel holds the package folder whole


_VALIDATOR = jsonschema.Draft202012Validator(json.loads(SCHEMA_FILE.read_text(encoding="utf-8")))


@pytest.mark.parametrize("entry", MODULES, ids=IDS)
def test_every_sample_validates_and_is_the_oracles_document(entry, capsys):
    assert main(["--json", str(entry)]) == 0
    text = capsys.readouterr().out
    errors = sorted(_VALIDATOR.iter_errors(json.loads(text)), key=lambda e: list(e.path))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors[:5]]
    assert text == json_oracle.dumps(load(entry, lazy=True))


@pytest.mark.parametrize("entry", MODULES, ids=IDS)
def test_every_sample_written_by_workers_is_the_same_document(entry, monkeypatch):
    """Records formatted in chunks by worker processes come out as one process writes
    them (chunks of 16 records, so that every sample has several)."""
    one = io.StringIO()
    json_doc.write_json(load(entry, lazy=True), one)
    monkeypatch.setattr(json_doc, "PARALLEL_RECORDS", 1)
    monkeypatch.setattr(parallel, "CHUNK", 16)
    pools = []
    real = json_doc.OrderedChunks

    def spy(*args, **kwargs):
        pools.append(real(*args, **kwargs))
        return pools[-1]

    monkeypatch.setattr(json_doc, "OrderedChunks", spy)
    many = io.StringIO()
    module = load(entry, lazy=True)
    json_doc.write_json(module, many, workers=2)
    assert many.getvalue() == one.getvalue()
    assert module.records_read
    if len(module.used_values) > 16:
        assert pools and pools[0].parallel, "no worker process was started"


# --- docs/json.md's table ---------------------------------------------------------------
#
# Each row names top-level keys in its first cell; the first code span of its second
# cell that starts with { or [ spells the value: {a, b: VALUE} an object with exactly
# the keys a and b, in that order; {<name>: VALUE} an object from names to VALUE;
# [VALUE] a list; "or null" after a value says it may be null; anything else (a quoted
# string, words, ..) is a value not spelled out.


class _Reader:
    def __init__(self, text: str):
        self.text, self.at = text, 0

    def skip(self) -> None:
        while self.at < len(self.text) and self.text[self.at] == " ":
            self.at += 1

    def peek(self) -> str:
        self.skip()
        return self.text[self.at : self.at + 1]

    def take(self, char: str) -> None:
        assert self.peek() == char, f"expected {char!r} at {self.text[self.at :]!r}"
        self.at += 1

    def or_null(self) -> bool:
        self.skip()
        if self.text.startswith("or null", self.at):
            self.at += len("or null")
            return True
        return False

    def value(self):
        """("object", [(key, value or None)], nullable) | ("list", item, nullable) |
        ("leaf", text, False)."""
        if self.peek() == "{":
            self.take("{")
            members = []
            while True:
                self.skip()
                key = re.match(r"<?\w+>?", self.text[self.at :])
                assert key, f"a key expected at {self.text[self.at :]!r}"
                self.at += key.end()
                value = None
                if self.peek() == ":":
                    self.take(":")
                    value = self.value()
                members.append((key.group(), value))
                if self.peek() != ",":
                    break
                self.take(",")
            self.take("}")
            return ("object", members, self.or_null())
        if self.peek() == "[":
            self.take("[")
            item = self.value()
            self.take("]")
            return ("list", item, self.or_null())
        start, depth, quoted = self.at, 0, False
        while self.at < len(self.text):
            c = self.text[self.at]
            if c == '"':
                quoted = not quoted
            elif not quoted and c in "{[":
                depth += 1
            elif not quoted and c in "}],":
                if depth == 0:
                    break
                depth -= 1
            self.at += 1
        return ("leaf", self.text[start : self.at].strip(), False)


def _resolve(node: dict) -> tuple[dict, bool]:
    """A schema node without its $ref and its null alternative; whether null is allowed."""
    nullable = False
    if "anyOf" in node:
        options = [o for o in node["anyOf"] if o != {"type": "null"}]
        nullable = len(options) < len(node["anyOf"])
        (node,) = options
    if isinstance(node.get("type"), list) and "null" in node["type"]:
        nullable = True
        node = {**node, "type": next(t for t in node["type"] if t != "null")}
    if "enum" in node and None in node["enum"]:
        nullable = True
    if "$ref" in node:
        node = schema()["$defs"][node["$ref"].rsplit("/", 1)[1]]
    return node, nullable


def _check(spelled, node: dict, where: str) -> None:
    node, nullable = _resolve(node)
    shape, content, or_null = spelled
    if or_null:
        assert nullable, f"{where}: the README says it may be null; the schema does not"
    if shape == "list":
        assert node.get("type") == "array", f"{where}: a list in the README"
        _check(content, node["items"], where + "[]")
    elif shape == "object" and len(content) == 1 and content[0][0].startswith("<"):
        assert node.get("type") == "object" and "properties" not in node, f"{where}: a map"
        _check(content[0][1], node["additionalProperties"], where + "." + content[0][0])
    elif shape == "object":
        properties = node.get("properties", {})
        keys = [k for k, _ in content]
        assert keys == list(properties), f"{where}: README {keys}, schema {list(properties)}"
        for key, value in content:
            if value is not None:
                _check(value, properties[key], f"{where}.{key}")


def _readme_rows() -> list[tuple[list[str], str]]:
    text = (ROOT / "docs" / "json.md").read_text(encoding="utf-8")
    section = text.split("## JSON schema (`hlotop --json`)", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("| `"):
            continue
        keys = re.findall(r"`([^`]+)`", cells[0])
        rows.append((keys, "|".join(cells[1:])))
    return rows


def test_the_readme_table_names_exactly_the_schemas_keys():
    rows = _readme_rows()
    top = schema()["properties"]
    assert [k for keys, _ in rows for k in keys] == list(top)
    spelled = 0
    for keys, content in rows:
        spans = [s for s in re.findall(r"`([^`]+)`", content) if s[:1] in "{["]
        if spans:
            assert len(keys) == 1, keys
            reader = _Reader(spans[0])
            value = reader.value()
            assert reader.at == len(spans[0]), f"{keys[0]}: unread {spans[0][reader.at :]!r}"
            _check(value, top[keys[0]], keys[0])
            spelled += 1
    assert spelled >= 8  # every object and list is spelled out


def test_the_readme_check_finds_a_wrong_key():
    reader = _Reader("[{path, kind, size}]")
    with pytest.raises(AssertionError, match="README"):
        _check(reader.value(), schema()["properties"]["files"], "files")
    reader = _Reader("{total} or null")
    with pytest.raises(AssertionError, match="README"):
        _check(reader.value(), schema()["properties"]["stack_trace"], "stack_trace")
