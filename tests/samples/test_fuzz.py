"""Property tests over mutations of the real sample dumps (issue 4): the loader never
raises, every garbage line is reported at its line, and what the garbage did not touch
keeps its figures. A long run with a large budget is ``scripts/fuzz.py``."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzzing import (
    CORPUS,
    apply,
    check_any_mutation,
    check_garbage,
    garbage_insertions,
    mutations,
    original,
)

FAST = settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


over_corpus = pytest.mark.parametrize(
    "path", CORPUS, ids=lambda p: p.parent.name + "/" + p.name[:12]
)


@over_corpus
@FAST
@given(data=st.data())
def test_garbage_lines_are_reported_where_they_are(path, data):
    raw, _ = original(path)
    n_lines = raw.count(b"\n")
    check_garbage(path, data.draw(garbage_insertions(n_lines)))


@over_corpus
@FAST
@given(data=st.data())
def test_any_mutation_opens_or_is_refused_in_one_line(path, data):
    raw, _ = original(path)
    n_lines = raw.count(b"\n")
    muts = data.draw(st.lists(mutations(n_lines, len(raw)), min_size=1, max_size=4))
    mutated, _ = apply(raw, muts)
    check_any_mutation(mutated)
