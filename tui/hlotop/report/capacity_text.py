"""``--capacity SIZE|DEVICE``: how far the program is from fitting, as text; for a
dump directory, how far each module is (``--summary DIR``)."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text

from hlotop.analysis.capacity import Fit
from hlotop.analysis.devices import device_named, is_gpu
from hlotop.loading.directory import ModuleFigures
from hlotop.safe_text import printable
from hlotop.units import human_bytes


def fit_line(fit: Fit) -> Text:
    """One line: the capacity, the need and the headroom or the excess."""
    text = Text.assemble(
        ("Capacity ", "bold"),
        f"{human_bytes(fit.capacity_bytes)}",
        (f" ({printable(fit.label.split(' (')[0])})" if fit.label else "", "dim"),
        " · needs at least ",
        (human_bytes(fit.required_bytes), "bold"),
        (f" (argument + output - alias + temp, {fit.memory})", "dim"),
        " · ",
    )
    if fit.fits:
        text.append(f"headroom {human_bytes(fit.headroom_bytes)}", style="bold green")
    else:
        text.append(f"over by {human_bytes(fit.over_bytes)}", style="bold red")
    return text


def temp_line(fit: Fit) -> Text | None:
    """On TPU, which temp the need counts and why: HBM's, the other memory spaces'
    temp (VMEM ...) left out, with their bytes; None when nothing is left out."""
    if not fit.temp_left_out:
        return None
    spaces = ", ".join(f"{printable(name)} {human_bytes(size)}" for name, size in fit.temp_left_out)
    left = fit.temp_left_out_bytes
    return Text(
        f"temp counted: {fit.memory}'s preallocated temp, {human_bytes(fit.temp_bytes)}. "
        f"The dump's memory_analysis() temp, {human_bytes(fit.temp_bytes + left)}, also "
        f"counts {spaces}: memory spaces other than HBM (colour 0; VMEM and SMEM are "
        f"the core's own on-chip memories), so {human_bytes(left)} ({left:,} B) of it "
        "is left out.",
        style="dim",
    )


_PLATFORM_NAMES = {"tpu": "a TPU", "gpu": "a GPU", "cpu": "the CPU"}


def device_mismatch(label: str, platform: str) -> str | None:
    """A warning when ``label`` (a :class:`Fit`'s, ``--capacity``'s text) names a device
    preset of another kind than the dump's ``platform`` (``"tpu"``, ``"gpu"``,
    ``"cpu"``): ``--capacity v5e`` on a CPU dump compares it with a device it was not
    compiled for (and a TPU counts HBM alone). None when they agree, or when either is
    not known (a size, an unknown platform)."""
    name = device_named(label.split(":")[0]) if label else None
    if name is None or platform not in _PLATFORM_NAMES:
        return None
    kind = "gpu" if is_gpu(name) else "tpu"
    if kind == platform:
        return None
    return (
        f"--capacity {name} is {_PLATFORM_NAMES[kind]}'s memory, but this program was "
        f"compiled for {_PLATFORM_NAMES[platform]}: its figures are not that device's."
    )


def capacity_block(fit: Fit, platform: str | None = None) -> Group:
    """The fit line, on TPU which temp it counts (:func:`temp_line`), and, when over,
    the fewest values live at XLA's peak whose occupied bytes cover the excess.
    ``platform``: the dump's; a device preset of another kind is warned of
    (:func:`device_mismatch`)."""
    parts: list[Text | Table] = [fit_line(fit)]
    mismatch = device_mismatch(fit.label, platform) if platform else None
    if mismatch:
        parts.append(Text(f"Warning: {mismatch}", style="bold yellow"))
    temp = temp_line(fit)
    if temp is not None:
        parts.append(temp)
    if not fit.fits and fit.shed:
        if fit.shed_bytes >= fit.over_bytes:
            said = (
                f"The fewest values to shrink or remove: the {len(fit.shed)} largest live at "
                f"XLA's peak hold {human_bytes(fit.shed_bytes)} (occupied), more than the "
                "excess, if the allocations shrink with them."
            )
        else:
            said = (
                f"Even all {len(fit.shed)} values live at XLA's peak "
                f"({human_bytes(fit.shed_bytes)} occupied) do not cover the excess: the "
                "arguments and allocations are larger than what is live at once."
            )
        parts.append(Text(said, style="dim"))
        table = Table(box=None, pad_edge=False)
        for name in ("value", "allocated", "shape", "op_name"):
            table.add_column(name, justify="right" if name == "allocated" else "left")
        for info in fit.shed[:15]:
            table.add_row(
                Text(printable(info.value.label)),
                human_bytes(info.allocated_bytes),
                Text(printable(info.shape or "?")),
                Text(printable(info.op_name or "")),
            )
        parts.append(table)
    return Group(*parts)


FIT = "vs capacity"  # the modules table's column of each module's room or excess


def fit_cell(need: int | None, capacity: int | None) -> str:
    """A module's room (``room 1.20GiB``) or excess (``over 3.00MiB``) against
    ``capacity`` bytes; ``-`` when its need is unknown or there is no capacity."""
    if need is None or capacity is None:
        return "-"
    room = capacity - need
    return f"room {human_bytes(room)}" if room >= 0 else f"over {human_bytes(-room)}"


def over_capacity(figures: list[ModuleFigures], capacity: int) -> list[ModuleFigures]:
    """The modules whose need (:attr:`ModuleFigures.required_bytes`) is above
    ``capacity`` bytes, in the given order."""
    return [f for f in figures if f.required_bytes is not None and f.required_bytes > capacity]


def modules_fit_line(figures: list[ModuleFigures], capacity: int, label: str) -> Text:
    """One line: the capacity, what each module is compared by, and how many modules
    need more (the browser's modules view says the same)."""
    short = label.split(":")[0].split(" = ")[0].strip()  # a preset's name, not a size
    named = f" ({printable(short)})" if short and not short[0].isdigit() else ""
    over = len(over_capacity(figures, capacity))
    return Text.assemble(
        ("Capacity ", "bold"),
        f"{human_bytes(capacity)}{named} against each module's need, argument + output − "
        "alias + temp (memory_analysis(), device; on TPU HBM's alone; a lower bound): ",
        (f"{over} of {len(figures)} modules over" if over else "every module fits", "bold"),
        ".",
    )
