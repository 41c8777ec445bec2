"""``--capacity SIZE|DEVICE``: how far the program is from fitting, as text."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text

from hlotop.analysis.capacity import Fit
from hlotop.model.devices import device_named, is_gpu
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
    """The fit line and, when over, the fewest values live at XLA's peak whose occupied
    bytes cover the excess. ``platform``: the dump's; a device preset of another kind
    is warned of (:func:`device_mismatch`)."""
    parts: list[Text | Table] = [fit_line(fit)]
    mismatch = device_mismatch(fit.label, platform) if platform else None
    if mismatch:
        parts.append(Text(f"Warning: {mismatch}", style="bold yellow"))
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
