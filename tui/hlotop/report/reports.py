"""Every report hlotop writes, behind one interface: :class:`Report` (its text form)
and :class:`JsonReport` (a JSON document too, whose table and JSON Schema are
:data:`hlotop.report.json_schema.DOCUMENTS`\\ ``[document]``). The command line makes
one of these and writes it (:func:`hlotop.cli.common.show`).

* :class:`SummaryReport`: one module (``--summary``, ``--json``: document ``hlotop``):
  its figures, peak, grouped live set, capacity and advice;
* :class:`ExportReport`: a module's live set as csv, tsv or folded stacks (text only);
* :class:`DiffReport`: two compiles of one program (``diff``);
* :class:`ModulesReport`: every module of a dump directory (``modules``);
* :class:`ModulesDiffReport`: two dump directories, program by program
  (``modules-diff``);
* :class:`OomTextReport`: the out-of-memory messages of an error text (``oom``);
* :class:`FitCommandReport`: compiles at several sizes, fitted (``fit``);
* :class:`WhyReport`: why one value is live at a step (``why``);
* :class:`WhyLiveReport`: every value live at a step, and why (``why-live``).

Each report is a dataclass with ``__init__`` alone: this module is imported by every
report the command writes, and each method a dataclass makes costs it 0.1 ms.

What each writes is made where it always was (``summary.py``, ``json_doc.py``,
``diff_report.py``, its ``*_table.py``, ...), imported when it is written: ``--json``
never imports Rich's console, nor the text report a JSON table.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any, ClassVar, Protocol

if TYPE_CHECKING:
    from rich.console import RenderableType

    from hlotop.analysis.capacity import Fit
    from hlotop.analysis.diff import ModuleDiff
    from hlotop.analysis.grouping import Grouping
    from hlotop.analysis.labels import Labeller
    from hlotop.analysis.why_index import WhyIndex
    from hlotop.model import Advice, ModuleDump
    from hlotop.report.fit_table import FitReport
    from hlotop.report.json_doc import RecordsAhead
    from hlotop.report.modules_table import Modules, ModulesDiff
    from hlotop.report.oom_table import OomTexts
    from hlotop.report.why_report import LiveAnswer, WhyAnswer


class Report(Protocol):
    """A report: what it writes as text (``--summary``; off a terminal, the default)."""

    def write_text(self, out: IO[str]) -> None:
        """Write the text form to ``out``."""
        ...


class JsonReport(Report, Protocol):
    """A report with a JSON form (``--json``): one document, whose JSON Schema is
    ``DOCUMENTS[document]``'s."""

    document: ClassVar[str]

    def write_json(self, out: IO[str]) -> None:
        """Write the JSON document to ``out``, one line."""
        ...


def print_rendered(rendered: RenderableType, out: IO[str]) -> None:
    """Print ``rendered`` on the report console of ``out``
    (:func:`hlotop.report.summary.stdout_console`)."""
    from hlotop.report.summary import stdout_console

    stdout_console(out).print(rendered)


class RenderedReport(Report, Protocol):
    """A report whose text is a Rich renderable, printed on the report console (the
    browser's text screens show the same renderable)."""

    def render(self) -> RenderableType:
        """The text form."""
        ...

    def write_text(self, out: IO[str]) -> None:
        print_rendered(self.render(), out)


@dataclass(eq=False, repr=False)
class SummaryReport(RenderedReport):
    """One module: ``--summary`` and ``--json``, with the live set grouped
    (``groups``, ``--group-by``), against a capacity (``fit``) and the ranked
    ``advice`` (``--advise``) where given. ``workers`` and ``ahead``: who formats a
    big dump's records for ``--json`` (:func:`hlotop.report.json_doc.write_json`)."""

    document: ClassVar[str] = "hlotop"
    module: ModuleDump
    groups: Grouping | None = None
    fit: Fit | None = None
    advice: Sequence[Advice] | None = None
    workers: int = 0
    ahead: RecordsAhead | None = None
    top: int | None = None  # --top N: pprof's top of the grouped stacks
    icicle: bool = False  # --icicle: the grouped stacks as an icicle

    def render(self) -> RenderableType:
        from hlotop.report.summary import render_summary

        return render_summary(
            self.module, self.groups, self.fit, self.advice, self.top, self.icicle
        )

    def write_json(self, out: IO[str]) -> None:
        from hlotop.report.json_doc import write_json

        advice = None if self.advice is None else list(self.advice)
        write_json(self.module, out, self.workers, self.ahead, self.groups, self.fit, advice)


@dataclass(eq=False, repr=False)
class ExportReport:
    """A module's live set at a step (``--export``): ``fmt`` ``folded`` (collapsed
    stacks), else ``csv``/``tsv``: one row a group with ``keys``, else one a value."""

    grouping: Grouping
    labeller: Labeller
    keys: tuple[str, ...]
    fmt: str

    def write_text(self, out: IO[str]) -> None:
        from hlotop.report.export import write_folded, write_groups, write_values

        if self.fmt == "folded":
            write_folded(self.grouping, self.labeller, out, self.keys)
        elif self.keys:
            write_groups(self.grouping, out, self.fmt)
        else:
            write_values(self.grouping, self.labeller, out, self.fmt)


@dataclass(eq=False, repr=False)
class DiffReport(RenderedReport):
    """``hlotop diff OLD NEW``: two compiles of one program."""

    document: ClassVar[str] = "diff"
    diff: ModuleDiff

    def render(self) -> RenderableType:
        from hlotop.report.diff_report import render_diff

        return render_diff(self.diff)

    def write_json(self, out: IO[str]) -> None:
        from hlotop.report.diff_table import write_diff_json

        write_diff_json(self.diff, out)


@dataclass(eq=False, repr=False)
class ModulesReport(RenderedReport):
    """``hlotop DIR``: every module of a dump directory, ranked."""

    document: ClassVar[str] = "modules"
    modules: Modules

    def render(self) -> RenderableType:
        from rich.console import Group

        from hlotop.report.modules_report import render_modules

        m = self.modules
        return Group(render_modules(m.directory, m.figures, capacity=m.capacity), *m.drawn)

    def write_json(self, out: IO[str]) -> None:
        from hlotop.report.modules_table import write_modules_json

        write_modules_json(self.modules, out)


@dataclass(eq=False, repr=False)
class ModulesDiffReport(RenderedReport):
    """``hlotop diff OLD_DIR NEW_DIR``: two whole runs, program by program."""

    document: ClassVar[str] = "modules-diff"
    diff: ModulesDiff

    def render(self) -> RenderableType:
        from hlotop.report.modules_diff import render_modules_diff

        return render_modules_diff(self.diff.old, self.diff.new, self.diff.pairs)

    def write_json(self, out: IO[str]) -> None:
        from hlotop.report.modules_table import write_modules_diff_json

        write_modules_diff_json(self.diff, out)


@dataclass(eq=False, repr=False)
class OomTextReport(RenderedReport):
    """``hlotop LOG``: the out-of-memory messages of an error text."""

    document: ClassVar[str] = "oom"
    texts: OomTexts

    def render(self) -> RenderableType:
        from hlotop.report.oom_report import render_ooms

        t = self.texts
        return render_ooms(list(t.reports), list(t.links), t.module_name, t.most_telling)

    def write_json(self, out: IO[str]) -> None:
        from hlotop.report.oom_table import write_oom_json

        write_oom_json(self.texts, out)


@dataclass(eq=False, repr=False)
class FitCommandReport(RenderedReport):
    """``hlotop fit``: compiles of one program at several sizes, fitted."""

    document: ClassVar[str] = "fit"
    report: FitReport

    def render(self) -> RenderableType:
        from hlotop.report.fit_report import render_fit

        return render_fit(self.report)

    def write_json(self, out: IO[str]) -> None:
        from hlotop.report.fit_table import write_fit_json

        write_fit_json(self.report, out)


@dataclass(eq=False, repr=False)
class WhyReport(RenderedReport):
    """``hlotop why DUMP NAME``: why one value is live at a step."""

    document: ClassVar[str] = "why"
    answer: WhyAnswer
    index: WhyIndex

    def render(self) -> RenderableType:
        from hlotop.report.why_report import render_why

        return render_why(self.answer, self.index)

    def write_json(self, out: IO[str]) -> None:
        from hlotop.report.why_table import why_json, write_json

        write_json(why_json(self.answer), out)


@dataclass(eq=False, repr=False)
class WhyLiveReport(RenderedReport):
    """``hlotop why DUMP``: every value live at a step, and why."""

    document: ClassVar[str] = "why-live"
    answer: LiveAnswer
    index: WhyIndex

    def render(self) -> RenderableType:
        from hlotop.report.why_report import render_live

        return render_live(self.answer, self.index)

    def write_json(self, out: IO[str]) -> None:
        from hlotop.report.why_table import live_json, write_json

        write_json(live_json(self.answer), out)


REPORTS: tuple[type[Any], ...] = (
    SummaryReport,
    ExportReport,
    DiffReport,
    ModulesReport,
    ModulesDiffReport,
    OomTextReport,
    FitCommandReport,
    WhyReport,
    WhyLiveReport,
)
