"""How much memory a device has: presets for TPUs and GPUs, and a capacity as a user
writes it (``--capacity 16GiB``, ``--capacity v5e``): the capacity
:mod:`hlotop.analysis.capacity` holds a program to. Here, beside it, rather than in the
model: a device is not part of a dump, and nothing below the analysis needs one.

Capacities are bytes (``int``) per *JAX device*: a TPU chip from v4 on (its two
TensorCores form one device, "megacore"; v5e and v6e have one TensorCore), a TensorCore
of a v2 or v3 chip (two devices per chip), one GPU. A device's nominal HBM is the
vendor's figure, read as binary units (an "80 GB" HBM GPU has 80 GiB: its HBM stacks
come in powers of two); a device reports a little less, and an OOM text states what XLA
could use (``Used 30.21G of 15.48G hbm`` on a 16 GiB v5e). A TPU preset is its HBM.

A GPU preset is the pool JAX's XLA client gives its BFC allocator, not the HBM.
``CreateBFCAllocator`` (``xla/pjrt/gpu/gpu_helpers.cc``) asks the driver for the
device's free and total memory (``DeviceMemoryUsage``) and takes ``total_memory *
memory_fraction`` (older XLA: ``free_memory * memory_fraction``, the free memory at
start-up), rounded up to 2 MiB (``RoundUpGpuMemoryLimit``), or an explicit
``gpu_system_memory_size``; ``memory_fraction`` comes from ``XLA_CLIENT_MEM_FRACTION``
(``XLA_PYTHON_CLIENT_MEM_FRACTION`` is its deprecated name), 0.75 by default
(``xla/pjrt/plugin/xla_gpu/xla_gpu_allocator_config.h``). The total the driver reports
is less than the nominal HBM, so 0.75 of the nominal figure overstates the pool: where
the pool was measured (``jax.devices()[0].memory_stats()['bytes_limit']``, jax 0.11.2,
default settings) the preset is that figure; elsewhere it is 0.75 of the nominal HBM,
labelled an estimate, with how far the estimate was above the measured pools.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hlotop.units import human_bytes

GIB = 1 << 30
JAX_GPU_FRACTION = 0.75  # https://docs.jax.dev/en/latest/gpu_memory_allocation.html


@dataclass(frozen=True, slots=True)
class Device:
    """A preset: its nominal HBM per JAX device (bytes), what the figure is and the page
    read to check it; for a GPU whose JAX pool was measured, that pool (bytes,
    ``memory_stats()['bytes_limit']``) and where it was measured."""

    hbm_bytes: int
    note: str
    source: str
    pool_bytes: int | None = None
    pool_measured: str = ""


_GOOGLE_TPU = "https://cloud.google.com/tpu/docs/"
_GCE_GPUS = "https://cloud.google.com/compute/docs/gpus"

# Where the measured pools come from (hlotop issue 31).
_MEASURED = "jax 0.11.2's memory_stats()['bytes_limit'], default settings, on an NVIDIA "

DEVICES: dict[str, Device] = {
    "tpu-v2": Device(
        8 * GIB,
        "per TensorCore (2 per chip, each a JAX device); Google's v2 page gives no figure; "
        "OOM texts on a v2-8 say 'of 7.48G hbm'",
        "https://github.com/erfanzar/EasyDeL/issues/78",
    ),
    "tpu-v3": Device(
        16 * GIB,
        "per TensorCore: 32 GiB HBM2 per chip, 2 TensorCores, each a JAX device",
        _GOOGLE_TPU + "v3",
    ),
    "tpu-v4": Device(32 * GIB, "per chip (megacore): 32 GiB HBM2", _GOOGLE_TPU + "v4"),
    "tpu-v5e": Device(
        16 * GIB,
        "per chip (v5litepod; 1 TensorCore): 'HBM2 capacity 16 GB'; XLA can use 15.48G",
        _GOOGLE_TPU + "v5e",
    ),
    "tpu-v5p": Device(
        95 * GIB,
        "per chip (megacore): 'HBM capacity per chip (GiB) 95'",
        "https://docs.cloud.google.com/tpu/docs/v5p-training",
    ),
    "tpu-v6e": Device(
        32 * GIB,
        "per chip (Trillium; 1 TensorCore): 'HBM capacity per chip 32 GB'",
        _GOOGLE_TPU + "v6e",
    ),
    "a100-40gb": Device(40 * GIB, "A100 40GB HBM2 (A2 Standard)", _GCE_GPUS),
    "a100-80gb": Device(80 * GIB, "A100 80GB HBM2e (A2 Ultra)", _GCE_GPUS),
    "h100-80gb": Device(
        80 * GIB,
        "H100 SXM 80GB HBM3 (A3: 8 GPUs, 640 GB)",
        _GCE_GPUS,
        pool_bytes=63_763_906_560,
        pool_measured=_MEASURED + "H100 80GB",
    ),
    "h100-nvl-94gb": Device(
        94 * GIB,
        "H100 NVL, 94 GB HBM3 per GPU (third-party spec page; NVIDIA's not reached)",
        "https://www.aiminingco.com/gpu/h100-nvl/specs",
    ),
    "h200-141gb": Device(
        141 * GIB,
        "H200 141 GB HBM3e (third-party spec page; NVIDIA's not reached)",
        "https://www.aiminingco.com/gpu/h200/specs",
        pool_bytes=112_583_507_968,
        pool_measured=_MEASURED + "H200",
    ),
    "l4": Device(24 * GIB, "L4 24 GB GDDR6 (G2)", "https://modal.com/docs/reference/modal.gpu"),
    "a10g": Device(
        24 * GIB,
        "A10G (AWS G5): 24 GiB per GPU",
        "https://docs.aws.amazon.com/batch/latest/userguide/gpu-jobs.html",
    ),
    "v100-16gb": Device(
        16 * GIB,
        "V100 16 GB HBM2 (AWS P3: 16 GiB per GPU)",
        "https://docs.aws.amazon.com/batch/latest/userguide/gpu-jobs.html",
    ),
    "v100-32gb": Device(
        32 * GIB,
        "V100 32 GB HBM2 (the later SXM2/SXM3 part)",
        "https://www.anandtech.com/show/16250/nvidia-announces-a100-80gb-ampere-gets-hbm2e-memory-upgrade",
    ),
    "rtx-4090": Device(
        24 * GIB,
        "GeForce RTX 4090 24 GB GDDR6X",
        "https://www.pugetsystems.com/parts/Video-Card/NVIDIA-GeForce-RTX-4090-24GB-14644/",
    ),
}
# Other spellings (compared without case, spaces, dashes or a vendor prefix).
ALIASES = {
    "v5litepod": "tpu-v5e",
    "v5lite": "tpu-v5e",
    "trillium": "tpu-v6e",
    "a100": "a100-80gb",
    "h100": "h100-80gb",
    "h100sxm": "h100-80gb",
    "h100nvl": "h100-nvl-94gb",
    "h200": "h200-141gb",
    "v100": "v100-16gb",
}


def is_gpu(name: str) -> bool:
    """Whether preset ``name`` (a key of :data:`DEVICES`) is a GPU."""
    return not name.startswith("tpu-")


def _key(text: str) -> str:
    key = re.sub(r"[^a-z0-9]", "", text.lower())
    return re.sub(r"^(?:nvidia|geforce|tesla|google|cloud|tpu)+", "", key)


_KEYS = {_key(name): name for name in DEVICES} | {_key(a): n for a, n in ALIASES.items()}


def device_named(text: str) -> str | None:
    """The preset (a key of :data:`DEVICES`) ``text`` names, any case and spacing:
    ``v5e``, ``TPU v5e``, ``tpu-v5litepod-16`` (a slice's chip count is dropped),
    ``a100-80gb``, ``NVIDIA H100``; None if none. Raises nothing."""
    key = _key(text)
    if key not in _KEYS:
        key = _key(re.sub(r"-\d+\s*$", "", text.strip()))
    return _KEYS.get(key)


_SIZE = re.compile(r"(\d[\d,_]*(?:\.\d+)?)\s*([kmgtpe]?)(i?)(b?)", re.IGNORECASE)


def estimate_excess() -> dict[str, int]:
    """For each preset whose JAX pool was measured: how many bytes 0.75 of its nominal
    HBM is above the measured pool (h200-141gb: 920 MiB, h100-80gb: 630 MiB): how far
    the other GPU presets, estimates, may be too large."""
    return {
        name: int(d.hbm_bytes * JAX_GPU_FRACTION) - d.pool_bytes
        for name, d in DEVICES.items()
        if d.pool_bytes is not None
    }


def gpu_pool(name: str) -> tuple[int, str]:
    """GPU preset ``name``'s JAX pool, ``(bytes, label)``: the measured
    ``bytes_limit`` where there is one, else 0.75 of the nominal HBM, said to be an
    estimate (see the module's docstring)."""
    d = DEVICES[name]
    if d.pool_bytes is not None:
        return d.pool_bytes, (
            f"{name}: {human_bytes(d.pool_bytes)}, JAX's default pool, measured "
            f"({d.pool_bytes:,} bytes: {d.pool_measured}; XLA's BFC pool, 0.75 of the "
            "memory CUDA reports rounded up to 2 MiB, xla/pjrt/gpu/gpu_helpers.cc; "
            f"nominal HBM {human_bytes(d.hbm_bytes)})"
        )
    pool = int(d.hbm_bytes * JAX_GPU_FRACTION)
    above = ", ".join(
        f"{human_bytes(excess)} on {other}" for other, excess in estimate_excess().items()
    )
    return pool, (
        f"{name}: {human_bytes(pool)}, JAX's default pool, estimated from the nominal HBM "
        f"({JAX_GPU_FRACTION:g} of {human_bytes(d.hbm_bytes)}; JAX takes "
        f"{JAX_GPU_FRACTION:g} (XLA_CLIENT_MEM_FRACTION) of the memory CUDA reports, "
        f"less than nominal: 0.75 of the nominal HBM was above the measured pool by {above}; "
        "give the pool as a size, from memory_stats()['bytes_limit'] or the BFC "
        "allocator's Limit:, for the exact figure)"
    )


def parse_capacity(text: str) -> tuple[int, str]:
    """A device memory capacity as written by a user: ``(bytes, label)``.

    ``text`` is a size or a device preset. Sizes: a bare number is bytes; ``KiB``,
    ``MiB``, ``GiB``... are binary; a bare ``K``/``M``/``G``/``T`` is binary too (as
    XLA and libtpu print sizes: ``15.48G``); ``KB``, ``MB``, ``GB``, ``TB`` are decimal
    (``80GB`` is 80 * 10**9 bytes; write ``80GiB`` for a GPU's 80 GiB). Presets are
    the names of :data:`DEVICES` and their aliases (see :func:`device_named`): a TPU's
    HBM per JAX device, a GPU's JAX pool (:func:`gpu_pool`: measured, or estimated from
    the nominal HBM). The label says which reading was taken and where the figure
    comes from. Raises ``ValueError`` for anything else, naming the presets."""
    m = _SIZE.fullmatch(text.strip())
    if m is not None:
        number, prefix, binary, byte = m.groups()
        value = float(number.replace(",", "").replace("_", ""))
        power = "kmgtpe".index(prefix.lower()) + 1 if prefix else 0
        decimal = bool(prefix and byte and not binary)
        size = round(value * (1000 if decimal else 1024) ** power)
        unit = "decimal" if decimal else "binary" if prefix else "bytes"
        return size, f"{text.strip()} = {size:,} bytes ({unit}, {human_bytes(size)})"
    name = device_named(text)
    if name is None:
        raise ValueError(
            f"not a size (like 16GiB, 15.48G, 80GB) or a device ({', '.join(DEVICES)}): {text!r}"
        )
    if is_gpu(name):
        return gpu_pool(name)
    d = DEVICES[name]
    return d.hbm_bytes, f"{name}: {human_bytes(d.hbm_bytes)} HBM per JAX device ({d.note})"
