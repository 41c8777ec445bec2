"""How much memory a device has: presets for TPUs and GPUs, and a capacity as a user
writes it (``--capacity 16GiB``, ``--capacity v5e``).

Capacities are bytes (``int``) of HBM per *JAX device*: a TPU chip from v4 on (its two
TensorCores form one device, "megacore"; v5e and v6e have one TensorCore), a TensorCore
of a v2 or v3 chip (two devices per chip), one GPU. The figures are the vendors'
nominal ones, read as binary units (an "80 GB" HBM GPU has 80 GiB: its HBM stacks come
in powers of two); a device reports a little less, and an OOM text states what XLA
could use (``Used 30.21G of 15.48G hbm`` on a 16 GiB v5e).

On GPU, JAX preallocates 75% of the GPU's memory by default (``XLA_CLIENT_MEM_FRACTION``;
``XLA_PYTHON_CLIENT_MEM_FRACTION`` is its deprecated name), and the BFC allocator's
``Limit`` is that pool: :func:`parse_capacity` gives a GPU preset's pool, not its HBM.
"""

from __future__ import annotations

import re

from hlotop.units import human_bytes

GIB = 1 << 30
JAX_GPU_FRACTION = 0.75  # https://docs.jax.dev/en/latest/gpu_memory_allocation.html

_GOOGLE_TPU = "https://cloud.google.com/tpu/docs/"
_GCE_GPUS = "https://cloud.google.com/compute/docs/gpus"

# name -> (HBM bytes per JAX device, note, source read to check it)
DEVICES: dict[str, tuple[int, str, str]] = {
    "tpu-v2": (
        8 * GIB,
        "per TensorCore (2 per chip, each a JAX device); Google's v2 page gives no figure; "
        "OOM texts on a v2-8 say 'of 7.48G hbm'",
        "https://github.com/erfanzar/EasyDeL/issues/78",
    ),
    "tpu-v3": (
        16 * GIB,
        "per TensorCore: 32 GiB HBM2 per chip, 2 TensorCores, each a JAX device",
        _GOOGLE_TPU + "v3",
    ),
    "tpu-v4": (32 * GIB, "per chip (megacore): 32 GiB HBM2", _GOOGLE_TPU + "v4"),
    "tpu-v5e": (
        16 * GIB,
        "per chip (v5litepod; 1 TensorCore): 'HBM2 capacity 16 GB'; XLA can use 15.48G",
        _GOOGLE_TPU + "v5e",
    ),
    "tpu-v5p": (
        95 * GIB,
        "per chip (megacore): 'HBM capacity per chip (GiB) 95'",
        "https://docs.cloud.google.com/tpu/docs/v5p-training",
    ),
    "tpu-v6e": (
        32 * GIB,
        "per chip (Trillium; 1 TensorCore): 'HBM capacity per chip 32 GB'",
        _GOOGLE_TPU + "v6e",
    ),
    "a100-40gb": (40 * GIB, "A100 40GB HBM2 (A2 Standard)", _GCE_GPUS),
    "a100-80gb": (80 * GIB, "A100 80GB HBM2e (A2 Ultra)", _GCE_GPUS),
    "h100-80gb": (80 * GIB, "H100 SXM 80GB HBM3 (A3: 8 GPUs, 640 GB)", _GCE_GPUS),
    "h100-nvl-94gb": (
        94 * GIB,
        "H100 NVL, 94 GB HBM3 per GPU (third-party spec page; NVIDIA's not reached)",
        "https://www.aiminingco.com/gpu/h100-nvl/specs",
    ),
    "h200-141gb": (
        141 * GIB,
        "H200 141 GB HBM3e (third-party spec page; NVIDIA's not reached)",
        "https://www.aiminingco.com/gpu/h200/specs",
    ),
    "l4": (24 * GIB, "L4 24 GB GDDR6 (G2)", "https://modal.com/docs/reference/modal.gpu"),
    "a10g": (
        24 * GIB,
        "A10G (AWS G5): 24 GiB per GPU",
        "https://docs.aws.amazon.com/batch/latest/userguide/gpu-jobs.html",
    ),
    "v100-16gb": (
        16 * GIB,
        "V100 16 GB HBM2 (AWS P3: 16 GiB per GPU)",
        "https://docs.aws.amazon.com/batch/latest/userguide/gpu-jobs.html",
    ),
    "v100-32gb": (
        32 * GIB,
        "V100 32 GB HBM2 (the later SXM2/SXM3 part)",
        "https://www.anandtech.com/show/16250/nvidia-announces-a100-80gb-ampere-gets-hbm2e-memory-upgrade",
    ),
    "rtx-4090": (
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


def parse_capacity(text: str, gpu_fraction: float = JAX_GPU_FRACTION) -> tuple[int, str]:
    """A device memory capacity as written by a user: ``(bytes, label)``.

    ``text`` is a size or a device preset. Sizes: a bare number is bytes; ``KiB``,
    ``MiB``, ``GiB``... are binary; a bare ``K``/``M``/``G``/``T`` is binary too (as
    XLA and libtpu print sizes: ``15.48G``); ``KB``, ``MB``, ``GB``, ``TB`` are decimal
    (``80GB`` is 80 * 10**9 bytes; write ``80GiB`` for a GPU's 80 GiB). Presets are
    the names of :data:`DEVICES` and their aliases (see :func:`device_named`): a TPU's
    HBM per JAX device, a GPU's JAX pool, ``gpu_fraction`` (JAX's default 0.75) of its
    HBM. The label says which reading was taken. Raises ``ValueError`` for anything
    else, naming the presets."""
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
    hbm, note, _ = DEVICES[name]
    if not is_gpu(name):
        return hbm, f"{name}: {human_bytes(hbm)} HBM per JAX device ({note})"
    pool = int(hbm * gpu_fraction)
    return pool, (
        f"{name}: {human_bytes(pool)}, the JAX pool: {gpu_fraction:g} of {human_bytes(hbm)} "
        "(JAX preallocates 75% of GPU memory by default; XLA_CLIENT_MEM_FRACTION)"
    )
