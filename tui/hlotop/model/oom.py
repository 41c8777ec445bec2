"""An out-of-memory error text, in XLA's terms: what each OOM message of a text says.

:mod:`hlotop.parse.oom` reads the texts XLA, its GPU runtime, the BFC allocator and
libtpu print when memory runs out (FEATURES.md, "OOM texts"); each message becomes one
:class:`OomReport`, assembled from the blocks the text holds (a headline, a usage
table, a list of buffers, allocator statistics...), and each buffer it lists (GPU
``Peak buffers``, TPU ``Largest program allocations``) one :class:`OomEntry`.

Sizes are :class:`Size`: the figure as the text prints it, kept as printed. XLA prints
most sizes rounded (``4.50GiB``, TPU's ``30.21G``): such a size's ``bytes`` is the
figure read as ``round(value * 1024**k)`` (TPU's ``K``/``M``/``G``/``T``/``E`` are
binary units, like ``KiB``...) and it is not ``exact``; a size printed in bytes
(``17528955952 bytes``, ``(rounded to 160000000000)``, ``Limit: 10562958132``) is
exact, and so is a rounded one whose buffer's shape fixes its bytes (``4.50GiB`` of an
``f32[18,2,2048,16384]``: 4831838208, ``ShapeUtil::ByteSizeOf``). Line numbers are
1-based, in the file as given (before any prefix, colour code or wrap was undone).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from hlotop.model.dump_file import Diagnostic

# The formats (OomReport.format) and XLA's printer for each.
FORMAT_GPU_RUNTIME = "gpu-buffer-assignment"
FORMAT_ALLOCATION = "runtime-allocation"
FORMAT_BFC = "bfc-allocator"
FORMAT_REMAT = "remat"
FORMAT_GPU_SCHEDULE = "gpu-schedule"
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
    "program allocations' (libtpu); also the usage table or the list alone",
    FORMAT_TPU_SCOPED: "TPU compile, scoped VMEM: 'Ran out of memory in memory space vmem "
    "while allocating on stack for <instruction>. Scoped allocation with size X and "
    "limit Y exceeded scoped vmem limit by Z.' (libtpu)",
    FORMAT_TPU_TC_SC: "TPU compile: 'TPU TensorCore Hbm usage: X, SparseCore Hbm usage Y, "
    "exceeding available bytes: Z' (libtpu, E1002)",
    FORMAT_GPU_RUNTIME: "GPU runtime: 'Out of memory while trying to allocate N bytes.' (or "
    "'Failed to allocate request for X on device ordinal N'), then BufferAssignment "
    "OOM Debugging: stats and Peak buffers (BufferAssignment::ToVerboseString); also "
    "the stats or the buffers alone",
    FORMAT_TPU_EARLY_ABORT: "TPU compile: 'Aborting compilation early because it's unlikely "
    "to have enough memory. Requires X, has Y available.' (libtpu)",
    FORMAT_TPU_PROGRAM_LOAD: "TPU runtime: \"Error loading program 'name': Attempting to "
    'reserve X at the bottom of memory. ... There are F free" (libtpu, E0101), with or '
    "without its first words, or cut short",
    FORMAT_TPU_BUFFER: "TPU runtime: 'Error allocating device buffer: Attempting to "
    "allocate X. That was not possible. There are F free.' (libtpu, E0100); also the "
    "older 'Could not allocate N bytes in memory <device>; A bytes allocatable, B bytes "
    "available'",
    FORMAT_ALLOCATION: "runtime allocation: 'Out of [host ]memory while trying to allocate "
    "X[ with allocator A on device N].' with no BufferAssignment report after it "
    "(xla/stream_executor/integrations/tf_allocator_adapter.cc, MemoryAllocationError)",
    FORMAT_BFC: "BFC allocator: 'Allocator (GPU_0_bfc) ran out of memory trying to "
    "allocate X (rounded to N)', then 'Stats:' Limit/InUse/... in bytes or human units "
    "(tsl BFCAllocator, AllocatorStats::DebugString); also the Stats alone",
    FORMAT_REMAT: "rematerialization pass: 'Can't reduce memory use below X by "
    "rematerialization; only reduced to Y, down from Z originally' (X is the pass's "
    "target, not the device's capacity)",
    FORMAT_GPU_SCHEDULE: "GPU scheduler: 'The byte size of input/output arguments (N) "
    "exceeds the base limit (M)' (xla/service/gpu/gpu_hlo_schedule.cc, "
    "GetSchedulerMemoryLimit)",
}

# The blocks a report is assembled from (OomBlock.kind), as the text names them.
BLOCK_NAMES: dict[str, str] = {
    "headline": "headline",
    "ba-stats": "'BufferAssignment stats:' block",
    "peak-buffers": "'Peak buffers:' list",
    "tpu-usage": "'Total hbm usage' table",
    "tpu-requirement": "'Program hbm requirement' table",
    "tpu-allocations": "'Largest program allocations' list",
    "bfc-stats": "BFC 'Stats:' block",
    "bfc-pool": "BFC 'Total size in pool' line",
    "runtime-error": "runtime error line",
}


@dataclass(frozen=True, slots=True)
class Size:
    """A size as an OOM text prints it.

    ``text`` is the size as printed (``1.46G``, ``17528955952 bytes``, ``149.01GiB
    (rounded to 160000000000)``), whitespace made single; for a figure hlotop worked
    out (``origin`` "derived") its formula (``used - capacity``). ``bytes`` is exact
    when ``exact``; else the printed figure read in binary units, which XLA rounded to
    its last printed digit (``1.46G`` -> 1567663063; the buffer may be 1572864000).
    ``origin``: "text" (printed), "shape" (printed rounded, the bytes fixed by the
    buffer's shape), "derived" (worked out from other sizes)."""

    text: str
    bytes: int
    exact: bool
    origin: str = "text"

    @classmethod
    def of_bytes(cls, n: int) -> Size:
        """An exact size of ``n`` bytes, printed as ``"<n> bytes"``."""
        return cls(f"{n} bytes", n, True)


@dataclass(frozen=True, slots=True)
class Figure:
    """One line of a report's tables (a usage line, a stats line): ``name`` in the
    text's words (``total usage: arguments``, ``parameter allocation``, ``Limit``,
    ``output shared with arguments``), its ``size`` (None where the text prints none:
    ``unknown size``) or ``count`` (BFC's ``NumAllocs``), and ``note``: what the line
    says besides (``99.9% utilization``, ``0.02%``, ``unknown size``). ``line`` is the
    file's line."""

    name: str
    size: Size | None = None
    count: int | None = None
    note: str = ""
    line: int = 0

    def without_line(self) -> Figure:
        return dataclasses.replace(self, line=0)


@dataclass(frozen=True, slots=True)
class OomEntry:
    """One buffer an OOM text lists: a GPU ``Buffer i:`` of ``Peak buffers`` or a TPU
    ``N. Size:`` of ``Largest program allocations``.

    ``label`` is the ``XLA Label``/``XLA label`` as printed: on GPU the opcode
    (``fusion``), on TPU the instruction's text (``convert.15982 = convert(param.72)``,
    often cut with ``...``); ``instruction`` and ``opcode`` are read out of it (GPU:
    ``opcode`` only; an ``Entry Parameter Subshape`` entry has no label and opcode
    ``parameter``, which is the only case XLA prints it for). ``shape`` is as printed
    (TPU's carries its layout, GPU's none); ``shape_bytes`` its bytes without tiling
    padding (``ShapeUtil::ByteSizeOf``), None when it does not read. ``source`` is
    ``file:line`` from the ``Operator:`` metadata (``source_file``/``source_line``),
    None when not printed. ``expansion`` is TPU's "(k× expansion)" factor,
    ``padding`` its "Extra memory due to padding". ``allocation_type`` is TPU's
    ``Allocation type`` (``HLO temp``, ``scoped``...); for GPU ``parameter`` on an
    ``Entry Parameter Subshape`` entry, else None (XLA prints none). ``rank`` is the
    printed index (1-based), ``line`` the file's line of its first line."""

    size: Size
    unpadded: Size | None = None
    shape: str | None = None
    op_name: str | None = None
    label: str | None = None
    allocation_type: str | None = None
    source: str | None = None
    expansion: float | None = None
    line: int = 0
    rank: int = 0
    padding: Size | None = None
    op_type: str | None = None
    instruction: str | None = None
    opcode: str | None = None
    shape_bytes: int | None = None

    @property
    def size_bytes(self) -> int:
        """The size's bytes (exact or read from the printed figure: see :class:`Size`)."""
        return self.size.bytes

    @property
    def unpadded_bytes(self) -> int | None:
        return self.unpadded.bytes if self.unpadded is not None else None

    @property
    def padding_bytes(self) -> int | None:
        return self.padding.bytes if self.padding is not None else None

    def without_line(self) -> OomEntry:
        """This entry with ``line`` 0: what two copies of the text share."""
        return dataclasses.replace(self, line=0)


@dataclass(frozen=True, slots=True)
class OomBlock:
    """One block a report was read from: ``kind`` a key of :data:`BLOCK_NAMES`,
    ``line`` the file's line where it starts."""

    kind: str
    line: int


@dataclass(frozen=True, slots=True)
class OomReport:
    """One OOM message and what it says (format: a key of :data:`OOM_FORMATS`).

    ``memory_space`` is the space the text names (``hbm``, ``vmem``, ``smem``), ``hbm``
    for TPU runtime texts naming an ``..._HBM0`` device, ``device`` for GPU texts
    (device memory), ``host`` for host memory (``Out of host memory``, a CPU
    allocator), None where the text does not say (the remat pass, a runtime error
    naming no allocator).

    Sizes (:class:`Size`), None when the text does not give them:

    * ``capacity``: what could be used: TPU compile "of C hbm", early abort "has Y
      available", TensorCore+SparseCore "available bytes", BFC ``Limit``, scoped VMEM
      "limit Y";
    * ``target``: what a pass aimed at, not the device's capacity: the remat pass's
      "below X", the GPU scheduler's "base limit";
    * ``used``: what was needed: TPU compile "Used A", early abort "Requires X",
      TensorCore + SparseCore usage, BFC ``InUse``, GPU runtime "total allocation",
      scoped VMEM "size X", remat "only reduced to Y", the scheduler's "input/output
      arguments";
    * ``over``: TPU compile and scoped VMEM print it ("Exceeded ... by D"); otherwise
      derived (origin "derived", its formula as text): ``used - capacity``, ``used -
      target``, ``requested - free``, None when that is not positive;
    * ``requested``: the allocation that failed (GPU runtime, BFC, TPU runtime).

    ``stats`` are the other lines of its tables, in the text's order (see
    :class:`Figure`). ``device`` names the allocator or device (``GPU_0_bfc``,
    ``0x0x0_HBM0``, ``device ordinal 0``), ``program`` the program that failed
    (TPU's program load, the GPU runtime's ``executable_name``). ``message`` is the
    headline from its first word ("" when the text holds none: ``headline`` False,
    the report read from its other blocks), ``line`` where the report starts,
    ``blocks`` what it was read from, ``repeats`` the lines where the same message is
    printed again (a traceback repeating a log line). ``diagnostics`` says which
    lines of the report did not read."""

    format: str
    memory_space: str | None
    capacity: Size | None
    used: Size | None
    over: Size | None
    entries: tuple[OomEntry, ...]
    stats: tuple[Figure, ...]
    line: int
    requested: Size | None = None
    target: Size | None = None
    device: str | None = None
    program: str | None = None
    message: str = ""
    path: str = ""
    headline: bool = True
    blocks: tuple[OomBlock, ...] = ()
    repeats: tuple[int, ...] = field(default=(), compare=False)
    diagnostics: tuple[Diagnostic, ...] = field(default=(), compare=False)

    @property
    def capacity_bytes(self) -> int | None:
        return self.capacity.bytes if self.capacity is not None else None

    @property
    def used_bytes(self) -> int | None:
        return self.used.bytes if self.used is not None else None

    @property
    def over_bytes(self) -> int | None:
        return self.over.bytes if self.over is not None else None

    @property
    def requested_bytes(self) -> int | None:
        return self.requested.bytes if self.requested is not None else None

    @property
    def target_bytes(self) -> int | None:
        return self.target.bytes if self.target is not None else None

    def stat(self, name: str) -> Figure | None:
        """The first of ``stats`` named ``name``, or None."""
        return next((f for f in self.stats if f.name == name), None)

    def stat_bytes(self) -> dict[str, int]:
        """``{name: bytes}`` of the stats that print a size (counts and unknown sizes
        left out): a quick look, for tests and comparisons."""
        return {f.name: f.size.bytes for f in self.stats if f.size is not None}

    def has_figures(self) -> bool:
        """Whether the report holds any figure (a size, a count, a buffer)."""
        sizes = (self.capacity, self.used, self.over, self.requested, self.target)
        return bool(self.entries or self.stats or any(s is not None for s in sizes))

    def figures(self) -> tuple[Any, ...]:
        """Everything the text says, without where it says it (line numbers, the
        path, diagnostics): two copies of one message, however wrapped, give equal
        figures."""
        return (
            self.format,
            self.memory_space,
            self.capacity,
            self.target,
            self.used,
            self.over,
            self.requested,
            self.device,
            self.program,
            self.headline,
            tuple(f.without_line() for f in self.stats),
            tuple(e.without_line() for e in self.entries),
        )
