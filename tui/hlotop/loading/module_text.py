"""The module's HLO text beside a dump (``<module>.<backend>_after_optimizations.txt``,
``HloModule::ToString``): the parts hlotop reads from its head."""

from __future__ import annotations

from pathlib import Path

from hlotop.loading.discover import split_module_prefix
from hlotop.model import IoAlias
from hlotop.parse.module_header import parse_module_header


def module_text_path(path: Path) -> Path | None:
    """The HLO text file that belongs to dump file ``path`` (it may not exist), or None
    when ``path`` is not named as XLA names dump files."""
    split = split_module_prefix(path)
    return None if split is None else path.with_name(split[0] + ".txt")


def read_io_alias(path: Path) -> tuple[IoAlias, ...] | None:
    """The entry's ``input_output_alias`` from the first line of the HLO text beside
    dump file ``path``: its entries, ``()`` when it aliases nothing, None when there is
    no such file or its first line does not read. Reads one line; raises nothing."""
    text_path = module_text_path(path)
    if text_path is None:
        return None
    try:
        with open(text_path, encoding="utf-8", errors="replace") as f:
            return parse_module_header(f.readline(1 << 20).rstrip("\r\n"))
    except OSError:
        return None
