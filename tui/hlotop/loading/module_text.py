"""The module's HLO text beside a dump (``<module>.<backend>_after_optimizations.txt``,
``HloModule::ToString``): the parts hlotop reads from its head."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from pathlib import Path

from hlotop.loading.discover import split_module_prefix
from hlotop.model import Diagnostic, EntryParameter, IoAlias, StackFrameTable
from hlotop.parse.computations import computation_metadata
from hlotop.parse.entry_parameters import entry_parameters
from hlotop.parse.module_header import parse_module_header
from hlotop.parse.stack_frames import parse_stack_frames
from hlotop.parse.tokens import Sink


def module_text_path(path: Path) -> Path | None:
    """The HLO text file that belongs to dump file ``path`` (it may not exist), or None
    when ``path`` is not named as XLA names dump files."""
    split = split_module_prefix(path)
    return None if split is None else path.with_name(split[0] + ".txt")


HEADER_MAX = 1 << 24  # characters of the HloModule line read (a 256-layer model's: 1 MB)


def read_io_alias(path: Path) -> tuple[IoAlias, ...] | None:
    """The entry's ``input_output_alias`` from the first line of the HLO text beside
    dump file ``path``: its entries, ``()`` when it aliases nothing, None when there is
    no such file or its first line does not read. Reads one line; raises nothing."""
    text_path = module_text_path(path)
    if text_path is None:
        return None
    try:
        with open(text_path, encoding="utf-8", errors="replace") as f:
            return parse_module_header(f.readline(HEADER_MAX).rstrip("\r\n"))
    except OSError:
        return None


def read_stack_frames(path: Path, diagnostics: list[Diagnostic]) -> StackFrameTable | None:
    """The stack-frame tables from the head of the module's HLO text beside the dump
    (``<module>.<backend>_after_optimizations.txt``), or None. Only the head is read."""
    text_path = module_text_path(path)
    if text_path is None:
        return None
    try:
        with open(text_path, encoding="utf-8", errors="replace") as f:
            sink = Sink(str(text_path), diagnostics)
            return parse_stack_frames(str(text_path), (ln.rstrip("\r\n") for ln in f), sink)
    except OSError:
        return None


def called_metadata_reader(path: Path) -> Callable[[], dict[str, tuple[str, int | None]]] | None:
    """A function that reads, once and on its first call, the metadata of every
    computation in the HLO text beside dump file ``path``
    (:func:`hlotop.parse.computations.computation_metadata`; {} if the file cannot be
    read then); None when there is no such file. The whole text is read, so only
    when a view asks (grouping by scope, phase or source)."""
    text_path = module_text_path(path)
    if text_path is None or not text_path.is_file():
        return None

    @cache
    def read() -> dict[str, tuple[str, int | None]]:
        try:
            with open(text_path, encoding="utf-8", errors="replace") as f:
                return computation_metadata(line.rstrip("\r\n") for line in f)
        except OSError:
            return {}

    return read


def entry_parameters_reader(path: Path) -> Callable[[], tuple[EntryParameter, ...]] | None:
    """A function that reads, once and on its first call, the ENTRY computation's
    parameters of the HLO text beside dump file ``path`` (their shapes, shardings and
    op_names: :func:`hlotop.parse.entry_parameters.entry_parameters`; ``()`` if the file
    cannot be read then); None when there is no such file. Only advice asks for them."""
    text_path = module_text_path(path)
    if text_path is None or not text_path.is_file():
        return None

    @cache
    def read() -> tuple[EntryParameter, ...]:
        try:
            with open(text_path, encoding="utf-8", errors="replace") as f:
                return entry_parameters(line.rstrip("\r\n") for line in f)
        except OSError:
            return ()

    return read
