"""README.md opens with the two set-up commands, and CI runs exactly those."""

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


def test_readme_lists_every_key_binding():
    from hlotop.ui.bindings import SCOPES

    text = (ROOT / "README.md").read_text()
    for scope in SCOPES:
        assert f"**{scope.title}**" in text
        for key in scope.keys:
            assert f"| `{key.display}` |" in text, (scope.title, key.display)


def test_the_core_never_imports_textual():
    import subprocess
    import sys

    code = (
        "import sys, hlotop.loading.loader, hlotop.report.summary, hlotop.report.json_doc, hlotop.analysis.search; "
        "from hlotop import load; load('sample_dumps/seeds/000_aa093b3e4f73e23a.txt'); "
        "print('textual' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert out.stdout.strip() == "False", out.stderr
