"""An out-of-memory error text, in XLA's terms: what one OOM message says.

:mod:`hlotop.parse.oom` reads the texts XLA, its GPU runtime, the BFC allocator and
libtpu print when memory runs out (FEATURES.md, "OOM texts"); each message becomes one
:class:`OomReport`, and each buffer it lists (GPU ``Peak buffers``, TPU ``Largest
program allocations``) one :class:`OomEntry`.

Sizes are bytes (``int``). XLA prints most of them rounded (``4.50GiB``, TPU's
``30.21G``): such a figure is ``round(value * 1024**k)`` (TPU's ``K``/``M``/``G``/``T``
/``E`` are binary units, like ``KiB``...), while a figure printed in bytes
(``17528955952 bytes``, ``(rounded to 29995136256)``, ``Limit: 10562958132``) is exact.
Line numbers are 1-based, in the text as given (before any unwrapping).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from hlotop.model.dump_file import Diagnostic

# The formats (OomReport.format) and XLA's printer for each.
FORMAT_GPU_RUNTIME = "gpu-buffer-assignment"
FORMAT_GPU_BFC = "gpu-bfc"
FORMAT_REMAT = "remat"
FORMAT_TPU_COMPILE = "tpu-compile"
FORMAT_TPU_SCOPED = "tpu-scoped-vmem"
FORMAT_TPU_TC_SC = "tpu-tensorcore-sparsecore"
FORMAT_TPU_EARLY_ABORT = "tpu-early-abort"
FORMAT_TPU_PROGRAM_LOAD = "tpu-program-load"
FORMAT_TPU_BUFFER = "tpu-device-buffer"

# In the order parse_oom prefers them when a text holds several: the error that ended
# the program before the warnings that led to it.
OOM_FORMATS: dict[str, str] = {
    FORMAT_TPU_COMPILE: "TPU compile: 'Ran out of memory in memory space hbm|vmem|smem. "
    "Used A of C. Exceeded capacity by D.', usage, program requirement and 'Largest "
    "program allocations' (libtpu)",
    FORMAT_TPU_SCOPED: "TPU compile, scoped VMEM: 'Ran out of memory in memory space vmem "
    "while allocating on stack for <instruction>. Scoped allocation with size X and "
    "limit Y exceeded scoped vmem limit by Z.' (libtpu)",
    FORMAT_TPU_TC_SC: "TPU compile: 'TPU TensorCore Hbm usage: X, SparseCore Hbm usage Y, "
    "exceeding available bytes: Z' (libtpu, E1002)",
    FORMAT_GPU_RUNTIME: "GPU runtime: 'Out of memory while trying to allocate N bytes.' (or "
    "'Failed to allocate request for X on device ordinal N'), then BufferAssignment "
    "OOM Debugging: stats and Peak buffers (BufferAssignment::ToVerboseString)",
    FORMAT_TPU_EARLY_ABORT: "TPU compile: 'Aborting compilation early because it's unlikely "
    "to have enough memory. Requires X, has Y available.' (libtpu)",
    FORMAT_TPU_PROGRAM_LOAD: "TPU runtime: \"Error loading program 'name': Attempting to "
    'reserve X at the bottom of memory. ... There are F free" (libtpu, E0101)',
    FORMAT_TPU_BUFFER: "TPU runtime: 'Error allocating device buffer: Attempting to "
    "allocate X. That was not possible. There are F free.' (libtpu, E0100); also the "
    "older 'Could not allocate N bytes in memory <device>; A bytes allocatable, B bytes "
    "available'",
    FORMAT_GPU_BFC: "BFC allocator: 'Allocator (GPU_0_bfc) ran out of memory trying to "
    "allocate X (rounded to N)', then 'Stats:' Limit/InUse/... (tsl BFCAllocator)",
    FORMAT_REMAT: "rematerialization pass: 'Can't reduce memory use below X by "
    "rematerialization; only reduced to Y, down from Z originally'",
}


@dataclass(frozen=True, slots=True)
class OomEntry:
    """One buffer an OOM text lists: a GPU ``Buffer i:`` of ``Peak buffers`` or a TPU
    ``N. Size:`` of ``Largest program allocations``.

    ``label`` is the ``XLA Label``/``XLA label`` as printed: on GPU the opcode
    (``fusion``), on TPU the instruction's text (``convert.15982 = convert(param.72)``,
    often cut with ``...``); ``instruction`` and ``opcode`` are read out of it (GPU:
    ``opcode`` only; an ``Entry Parameter Subshape`` entry has no label and opcode
    ``parameter``, which is the only case XLA prints it for). ``shape`` is as printed
    (TPU's carries its layout, GPU's none). ``source`` is ``file:line`` from the
    ``Operator:`` metadata (``source_file``/``source_line``), None when not printed.
    ``expansion`` is TPU's "(k× expansion)" factor, ``padding_bytes`` its "Extra memory
    due to padding". ``allocation_type`` is TPU's ``Allocation type`` (``HLO temp``,
    ``scoped``...); for GPU ``parameter`` on an ``Entry Parameter Subshape`` entry,
    else None (XLA prints none). ``rank`` is the printed index (1-based)."""

    size_bytes: int
    unpadded_bytes: int | None = None
    shape: str | None = None
    op_name: str | None = None
    label: str | None = None
    allocation_type: str | None = None
    source: str | None = None
    expansion: float | None = None
    line: int = 0
    rank: int = 0
    padding_bytes: int | None = None
    op_type: str | None = None
    instruction: str | None = None
    opcode: str | None = None

    def without_line(self) -> OomEntry:
        """This entry with ``line`` 0: what two copies of the text share."""
        return dataclasses.replace(self, line=0)


@dataclass(frozen=True, slots=True)
class OomReport:
    """One OOM message and what it says (format: a key of :data:`OOM_FORMATS`).

    ``memory_space`` is the space the text names (``hbm``, ``vmem``, ``smem``), ``hbm``
    for TPU runtime texts naming an ``..._HBM0`` device, ``device`` for GPU texts (device
    memory) and None for the remat pass (any backend).

    Figures, bytes, None when the text does not give them:

    * ``capacity_bytes``: what could be used: TPU compile "of C hbm", early abort "has
      Y available", TensorCore+SparseCore "available bytes", BFC ``Limit``, scoped
      VMEM "limit Y", remat "below X" (the limit it aimed at);
    * ``used_bytes``: what was needed: TPU compile "Used A", early abort "Requires X",
      TensorCore + SparseCore usage, BFC ``InUse``, GPU runtime "total allocation",
      scoped VMEM "size X", remat "only reduced to Y";
    * ``over_bytes``: TPU compile and scoped VMEM print it ("Exceeded ... by D");
      otherwise derived: ``used - capacity`` (early abort, TensorCore+SparseCore,
      remat), or ``requested - free`` (TPU runtime texts; BFC with free = Limit -
      InUse), None when that is not positive;
    * ``requested_bytes``: the allocation that failed (GPU runtime, BFC, TPU runtime).

    ``stats`` holds the other figures under the text's own words (``parameter
    allocation``, ``Limit``, ``total usage: reserved``, ``HLO temp unpadded``, ``free``
    ...), bytes except BFC's ``NumAllocs`` (a count). ``device`` names the allocator
    or device (``GPU_0_bfc``, ``0x0x0_HBM0``, ``device ordinal 0``), ``program`` the
    TPU program that failed to load. ``message`` is the headline from its first
    word, ``line`` where it starts; ``diagnostics`` says which lines of the report did
    not read."""

    format: str
    memory_space: str | None
    capacity_bytes: int | None
    used_bytes: int | None
    over_bytes: int | None
    entries: tuple[OomEntry, ...]
    stats: dict[str, int]
    line: int
    requested_bytes: int | None = None
    device: str | None = None
    program: str | None = None
    message: str = ""
    path: str = ""
    diagnostics: tuple[Diagnostic, ...] = field(default=(), compare=False)

    def figures(self) -> tuple[Any, ...]:
        """Everything the text says, without where it says it (line numbers, the
        path, diagnostics): two copies of one message, however wrapped, give equal
        figures."""
        return (
            self.format,
            self.memory_space,
            self.capacity_bytes,
            self.used_bytes,
            self.over_bytes,
            self.requested_bytes,
            self.device,
            self.program,
            tuple(sorted(self.stats.items())),
            tuple(e.without_line() for e in self.entries),
        )
