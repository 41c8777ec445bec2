"""README.md opens with the two set-up commands, and CI runs exactly those; it is short
and links every page of docs/, whose keys page is made from the bindings."""

from __future__ import annotations

import re

from conftest import ROOT


def _readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    return re.findall(r"```sh\n(.+?)\n```", text, flags=re.S)[:2]


def test_readme_opens_with_install_run_and_test_commands():
    install_and_run, run_tests = _readme_commands()
    assert "pip install" in install_and_run and ".venv/bin/hlotop sample_dumps/" in install_and_run
    assert "pytest" in run_tests and "pip install" in run_tests
    sample = install_and_run.split(".venv/bin/hlotop ", 1)[1]
    assert (ROOT / sample).is_file()


def test_ci_runs_the_readme_commands_verbatim():
    install_and_run, run_tests = _readme_commands()
    ci = (ROOT / ".ci" / "run").read_text()
    install, _, sample = install_and_run.rpartition(" && .venv/bin/hlotop ")
    assert install + "\n" in ci
    assert f".venv/bin/hlotop --summary {sample}\n" in ci
    assert run_tests + "\n" in ci


def test_docs_keys_is_made_from_the_bindings():
    """docs/keys.md lists every key, as `python -m hlotop.ui.base.keys_doc --write` makes it
    from the one table the footer, ? and the palette read."""
    from hlotop.ui.base.bindings import SCOPES
    from hlotop.ui.base.keys_doc import keys_markdown

    text = (ROOT / "docs" / "keys.md").read_text(encoding="utf-8")
    assert text == keys_markdown(), "run: python -m hlotop.ui.base.keys_doc --write"
    for scope in SCOPES:
        assert f"**{scope.title}**" in text
        for key in scope.keys:
            assert f"| `{key.display}` |" in text, (scope.title, key.display)


def test_readme_is_short_and_links_every_docs_page():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 200
    pages = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").glob("*.md"))
    assert pages, "docs/ has pages"
    for page in [*pages, "CONTRIBUTING.md"]:
        assert f"]({page})" in readme, page


def test_relative_links_in_the_docs_lead_to_files():
    for doc in [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *(ROOT / "docs").glob("*.md")]:
        for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", doc.read_text(encoding="utf-8")):
            assert (doc.parent / target).exists(), f"{doc.name}: {target}"


def test_the_core_never_imports_textual():
    """Every module outside hlotop.ui (and the command, which starts the browser) is
    imported, and a dump loaded, summarised and written as JSON: Textual never is."""
    import subprocess
    import sys

    code = (
        "import sys, pkgutil, importlib, io, hlotop\n"
        "names = [m.name for m in pkgutil.walk_packages(hlotop.__path__, 'hlotop.')\n"
        "         if not m.name.startswith(('hlotop.ui', 'hlotop.cli', 'hlotop.__main__'))]\n"
        "for name in names: importlib.import_module(name)\n"
        "from hlotop import load\n"
        "from hlotop.report.summary import print_summary\n"
        "from hlotop.report.json_doc import write_json\n"
        "m = load('sample_dumps/seeds/003_a3085531593bac68.txt')\n"
        "print_summary(m); write_json(m, io.StringIO())\n"
        "print(len(names), 'textual' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    count, textual = out.stdout.strip().splitlines()[-1].split()
    assert textual == "False" and int(count) > 30, out.stderr
