"""``docs/keys.md``: every key binding, made from :data:`hlotop.ui.base.bindings.SCOPES`
(the table the footer, the help screen and the command palette read), so the page
cannot drift from the keys. ``python -m hlotop.ui.base.keys_doc`` prints it; ``--write``
writes it; a test checks the file equals it."""

from __future__ import annotations

import sys
from pathlib import Path

from hlotop.ui.base.bindings import SCOPES

HEAD = """# Keys

Every key of hlotop's screens, made from `tui/hlotop/ui/base/bindings.py` (the table the
footer, the `?` help and the `ctrl+p` command palette read) by
`python -m hlotop.ui.base.keys_doc --write`; a test checks this page equals it. The footer
shows the main keys, `?` lists all of them, and `ctrl+p` offers the main actions by name.
"""


def keys_markdown() -> str:
    """The page: a heading and a ``| keys | action |`` table per scope, in the order
    the help screen lists them. Raises nothing."""
    parts = [HEAD]
    for scope in SCOPES:
        parts.append(f"\n**{scope.title}**\n\n| keys | action |\n|---|---|\n")
        for key in scope.keys:
            parts.append(f"| `{key.display}` | {key.help or key.description} |\n")
    return "".join(parts)


def main(argv: list[str]) -> int:
    text = keys_markdown()
    if argv[:1] == ["--write"]:
        target = Path(__file__).resolve().parents[4] / "docs" / "keys.md"
        target.write_text(text, encoding="utf-8")
        print(f"wrote {target}")
        return 0
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
