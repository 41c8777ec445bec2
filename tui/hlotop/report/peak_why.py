"""Why each value live at XLA's peak step is, for ``hlotop --json``'s ``peak_values``
(:func:`hlotop.analysis.why.why_at`: what ``hlotop why DUMP NAME`` says of each at the
peak step).

It costs ~70 us of CPU a value (its record and its last user's read, in dump order):
0.07 s for the 616 values live at the peak of a 45 MB dump (benchmarks/make_dumps.py's),
about a second where a fifth of a 45 MB dump's values are live there (12 320), as in
the samples' train steps. With enough cores, worker processes work it out in chunks
(:class:`PeakWhy` starts them before the document is written, on the model loaded: they
fork it) while this process writes the allocations and the records, and hand back
each chunk's answers (small objects, no part of the model); else it is worked out here
when first asked for. The answers are the same either way. On 2 cores the workers
made ``--json`` slower (3.3 s against 2.9 s at 12 320 values, their pool's start and
copied pages costing more than they share out), so they start from
:data:`MIN_WORKERS` cores on; their gain there was not measured.
"""

from __future__ import annotations

from hlotop.analysis.why import ValueWhy, why_at
from hlotop.analysis.why_index import WhyIndex
from hlotop.loading.workers import OrderedMap
from hlotop.model import ModuleDump, ValueInfo

CHUNK = 1024  # values a worker answers for at a time
# From this many values live at the peak on, workers answer: the pool's start and the
# answers' way back cost ~50 ms, about 700 values' work here.
PARALLEL_VALUES = 2_000
MIN_WORKERS = 4  # and only with this many allowed: on 2 cores they cost more than they gave
NICENESS = 5  # added to a worker's nice value: below this process, above the records'


class PeakWhy:
    """Why each value live at ``module``'s peak is: :meth:`of` a value. ``workers``:
    how many worker processes may work it out (0: none; the caller's decision, as for
    :func:`hlotop.report.json_doc.write_json`); they start at once. :meth:`close` it
    in any case."""

    def __init__(self, module: ModuleDump, workers: int = 0):
        a = module.analysis
        self.step = a.peak_step
        self.values: list[ValueInfo] = (
            [] if self.step is None else sorted(a.peak_values, key=lambda i: i.value.id)
        )
        self.index = WhyIndex(module)
        self._found: dict[int, ValueWhy] | None = None
        self._map: OrderedMap[list[tuple[int, ValueWhy]]] | None = None
        self.parallel = False  # whether worker processes were started
        if workers < max(1, MIN_WORKERS) or len(self.values) < PARALLEL_VALUES:
            return
        self.index.warm()  # its tables made once, here, for every fork
        self.index.steps()
        count = -(-len(self.values) // CHUNK)
        answers = OrderedMap(self._chunk, count, workers, nice=NICENESS)
        if answers.parallel:
            self._map, self.parallel = answers, True
        else:
            answers.close()

    def _chunk(self, number: int) -> list[tuple[int, ValueWhy]]:
        """The answers for chunk ``number`` of the values (by id)."""
        part = self.values[number * CHUNK : (number + 1) * CHUNK]
        return list(why_at(part, self.step or 0, self.index).items())

    def of(self, info: ValueInfo) -> ValueWhy:
        """Why ``info``, a value live at the peak, is live there. Raises ``KeyError``
        for a value not live there."""
        found = self._found
        if found is None:
            found = self._found = self._all()
        return found[info.value.id]

    def _all(self) -> dict[int, ValueWhy]:
        """Every answer: the workers' chunks in order, and those no worker gave (a
        worker failed: raised, or its pool broke) worked out here."""
        found: dict[int, ValueWhy] = {}
        answers = self._map
        done = 0
        if answers is not None:
            try:
                for part in answers:
                    found.update(part)
                    done += 1
            except Exception:  # noqa: BLE001 - a worker failed: the rest here
                pass
            finally:
                self.close()
        rest = self.values[done * CHUNK :]
        if rest:
            found.update(why_at(rest, self.step or 0, self.index))
        return found

    def close(self) -> None:
        """Stop the workers if they still run. Raises nothing."""
        answers, self._map = self._map, None
        if answers is not None:
            answers.close(kill=True)
