"""Why each value live at XLA's peak step is, for ``hlotop --json``'s ``peak_values``
(:func:`hlotop.analysis.why.why_at`: what ``hlotop why DUMP NAME`` says of each at the
peak step), worked out for all of them at the first value asked about.

It costs ~70 us of CPU a value (its record and its last user's read, in dump order):
0.07 s for the 616 values live at the peak of a 45 MB dump (benchmarks/make_dumps.py's),
about a second where a fifth of a 45 MB dump's values are live there (12 320), as in
the samples' train steps (docs/usage.md gives the timings). It is done in this process.
Worker processes were tried (chunks of values on a pool forked once the dump was
loaded): on 2 cores they made ``--json`` slower (3.3 s against 2.9 s at 12 320 values:
their pool's start and the pages they copy cost more than they shared out), and on a
big dump they would fork while the records' pool (:mod:`hlotop.report.parallel`) still
runs its threads, which hlotop's workers never do.
"""

from __future__ import annotations

from hlotop.analysis.why import ValueWhy, why_at
from hlotop.analysis.why_index import WhyIndex
from hlotop.model import ModuleDump, ValueInfo


class PeakWhy:
    """Why each value live at ``module``'s peak is: :meth:`of` a value."""

    def __init__(self, module: ModuleDump):
        self.module = module
        self._found: dict[int, ValueWhy] | None = None

    def of(self, info: ValueInfo) -> ValueWhy:
        """Why ``info``, a value live at the peak, is live there. Raises ``KeyError``
        for a value not live there."""
        found = self._found
        if found is None:
            a = self.module.analysis
            step = a.peak_step
            values = a.peak_values if step is not None else []
            found = self._found = why_at(values, step or 0, WhyIndex(self.module))
        return found[info.value.id]
