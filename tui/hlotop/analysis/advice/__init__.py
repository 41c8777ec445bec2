"""Advice: what to change in the program and how many bytes it would save (``hlotop
--advise``, the browser's ``a``). One module per kind, each a pure function of the
loaded module; :func:`advise` runs them all and ranks the advice by bytes saved."""

from __future__ import annotations

from hlotop.analysis.advice.aliased_copy import aliased_copy_advice
from hlotop.analysis.advice.donation import donation_advice
from hlotop.analysis.advice.padding import padding_advice
from hlotop.analysis.advice.remat import remat_advice, saved_for_backward
from hlotop.analysis.advice.replication import replication_advice
from hlotop.analysis.labels import Labeller
from hlotop.model import Advice, ModuleDump

__all__ = [
    "advise",
    "aliased_copy_advice",
    "donation_advice",
    "padding_advice",
    "remat_advice",
    "replication_advice",
    "saved_for_backward",
]


def advise(module: ModuleDump, labeller: Labeller | None = None) -> list[Advice]:
    """Every piece of advice for ``module`` (donation, donated but copied, remat,
    replication, padding),
    ranked by ``saving_bytes``, largest first (then by kind and title). ``labeller``
    labels the values (a fresh one by default). Raises nothing."""
    labeller = labeller if labeller is not None else Labeller(module)
    found = [
        *donation_advice(module, labeller),
        *aliased_copy_advice(module, labeller),
        *remat_advice(module, labeller),
        *replication_advice(module),
        *padding_advice(module),
    ]
    found.sort(key=lambda a: (-a.saving_bytes, a.kind, a.title))
    return found
