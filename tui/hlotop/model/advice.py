"""Advice: a change to the program and the bytes it would save (``hlotop --advise``)."""

from __future__ import annotations

from dataclasses import dataclass

ADVICE_KINDS = ("donation", "remat", "replication", "padding")
# How far the saving is to be trusted: "estimate" (what the change frees, as XLA would
# lay it out again) or "upper_bound" (at most this: XLA may give the bytes to others).
ADVICE_BOUNDS = ("estimate", "upper_bound")


@dataclass(frozen=True, slots=True)
class Advice:
    """One piece of advice, in bytes (per device) and schedule steps.

    ``kind``: one of :data:`ADVICE_KINDS`; ``title``: one line saying what to change;
    ``saving_bytes``: what it would save; ``bound``: one of :data:`ADVICE_BOUNDS`;
    ``step``: the schedule step the saving is measured at (XLA's peak), or None where it
    holds at every step (an argument or an output); ``values``: the ids of the values it
    concerns, largest first; ``groups``: the scopes or parameter paths it names;
    ``evidence``: lines of what the dump says that led to it; ``fix``: how to make the
    change in JAX."""

    kind: str
    title: str
    saving_bytes: int
    bound: str
    step: int | None
    values: tuple[int, ...]
    groups: tuple[str, ...]
    evidence: tuple[str, ...]
    fix: str
