#!/usr/bin/env python3
"""Generate real TPU (and matching CPU) XLA dumps with JAX's memory_analysis() (dev-only).

This script is NOT a runtime dependency of hlotop. It produces the test inputs in
``sample_dumps/tpu/`` and ``sample_dumps/cpu/``: small, deterministic JAX programs
compiled with the real TPU compiler from PyPI (``libtpu``) on a machine without any TPU,
by deviceless ahead-of-time compilation (the method of MaxText's ``train_compile.py``,
see shared ``TPU_DUMPS.md``), and a few of the same programs compiled for the plain JAX
CPU backend (one device), so that both backends' figures can be tested.

How a module is made (each one in a fresh child process, so ``XLA_FLAGS`` is set before
jax is imported and every module gets its own dump directory):

* environment ``JAX_PLATFORMS=cpu``, ``TPU_SKIP_MDS_QUERY=1`` and
  ``XLA_FLAGS=--xla_dump_to=<fresh temp dir> --xla_dump_hlo_as_text
  --xla_dump_hlo_module_re=.*jit_<function>.*`` (libtpu's warnings about
  ``TPU_ACCELERATOR_TYPE`` / ``TPU_WORKER_HOSTNAMES`` are harmless);
* TPU: ``jax.experimental.topologies.get_topology_desc(topology_name=..., platform="tpu")``
  gives the devices of a TPU slice (``v5e:1x1`` needs ``chips_per_host_bounds=(1, 1, 1)``);
  CPU: ``jax.devices("cpu")[:1]``;
* a ``jax.sharding.Mesh`` with axes ``("data", "model")`` over those devices, inputs as
  ``jax.ShapeDtypeStruct(shape, dtype, sharding=NamedSharding(mesh, spec))`` (no arrays
  are ever made), then ``jax.jit(fn, ...).lower(*inputs).compile()``;
* ``compiled.memory_analysis()``: every numeric field (``getattr``, whatever exists; never
  ``serialized_buffer_assignment_proto``) is written to ``memory_analysis.json``.

Output: ``<out>/tpu/<topology>-<program>/`` and ``<out>/cpu/<program>/``. Into each folder
go only XLA's files of the program's main module (the ``jit_<function>`` module whose
buffer-assignment files are largest), keeping XLA's own file names:

* ``*-buffer-assignment.txt`` and its split siblings ``*-buffer-assignment-values.txt``,
  ``*-live-range.txt``, ``*-memory-usage-report.txt`` (whatever exists);
* the optimized HLO module text ``*after_optimizations.txt`` (its ``HloModule`` header
  holds ``input_output_alias={...}``, the donation), unless the folder would then pass
  ``--max-folder-bytes`` (1.5 MB): then it is left out and the manifest says so;
* ``memory_analysis.json``: the figures above plus ``versions`` (jax, jaxlib, libtpu,
  python), ``platform``, ``topology``, ``device_kind``, ``program``, ``function``,
  ``description`` and the exact ``XLA_FLAGS`` (with the temporary dump directory written
  as ``DUMP_DIR``).

Two manifests, one per backend and in the same format: ``<out>/tpu/manifest.json`` and
its rendering ``<out>/tpu/MANIFEST.md`` list the TPU modules, ``<out>/cpu/manifest.json``
and ``<out>/cpu/MANIFEST.md`` the CPU ones. Per module: folder, files and sizes, what it
demonstrates (allocation colours and ``S(n)`` layout memory spaces, async ops and
collectives, donation, host offload, while loops), the memory_analysis() figures,
versions, the regeneration command. Both are rebuilt from the files on disk after every
module (``--manifest-only`` rebuilds them without compiling).

Programs (``PROGRAMS``, a registry: add a ``Program`` and a ``Target`` in the section at
the end of the file, which says why there, to get a new module; ``gpt_*`` are there too):

* ``mlp_adam``            MLP train step with ``optax.adam``.
* ``donation``            the same train step with ``donate_argnums=(0, 1)`` (params and
                          optimizer state alias the outputs: ``input_output_alias``).
* ``transformer_loop``    2-layer decoder-only transformer LM train step (adam, f32
                          params, bf16 compute), layers as a Python loop (unrolled in HLO).
* ``transformer_remat``   the same with every layer under ``jax.checkpoint``.
* ``transformer_scan``    the same with ``lax.scan`` over stacked layer weights.
* ``transformer_sharded`` a 1-layer loop transformer sharded over a 2x2 ``("data",
                          "model")`` mesh: FSDP over ``data`` plus Megatron tensor
                          parallelism over ``model``, tokens sharded over the sequence (a
                          ``jnp.roll`` makes the targets), so XLA emits collectives, async
                          where it chooses: on v5e async collective fusions
                          (``%async-collective-start`` / ``-done`` around all-gathers, with
                          ``S(4)`` sync flags) and ``collective-permute-start/done``; on v6e
                          and v5p only the collective-permutes are async.
* ``host_offload``        scanned + remat transformer whose named activations are offloaded
                          to ``pinned_host`` by ``save_and_offload_only_these_names``, with a
                          ``pinned_host`` input (the token batch), a donated ``pinned_host``
                          step counter and a ``pinned_host`` copy of the new parameters
                          as outputs: colour ``S(5)``, the ``host_*`` figures.

Targets (``TARGETS``): ``tpu/v5e_1x1-*`` for every single-chip program (one v5e chip),
``tpu/v5e_2x2-``, ``tpu/v6e_2x2-`` and ``tpu/v5p_2x2x1-transformer_sharded``,
``tpu/v6e_1x1-mlp_adam``, and ``cpu/<program>`` for mlp_adam, donation, transformer_loop,
transformer_scan, gpt_loop and gpt_scan. The whole run takes about 2 minutes on 2 cores.

Usage (inside the TPU virtualenv; never create it inside the repository)::

    python3 -m venv /tmp/hlotop-tpuenv
    /tmp/hlotop-tpuenv/bin/pip install "jax[tpu]==0.10.2" libtpu==0.0.42.1 optax==0.2.8 flax==0.12.8
    /tmp/hlotop-tpuenv/bin/python scripts/generate_tpu_dumps.py --out sample_dumps
    /tmp/hlotop-tpuenv/bin/python scripts/generate_tpu_dumps.py --out sample_dumps \\
        --only tpu/v5e_1x1-mlp_adam cpu/mlp_adam
    # re-render the manifests from the files on disk (no JAX needed):
    python3 scripts/generate_tpu_dumps.py --out sample_dumps --manifest-only

Determinism: compiles are deterministic (same bytes every run). Source paths in the HLO
metadata and the module's stack-frame table are canonicalized with
``jax_hlo_source_file_canonicalization_regex`` (this script becomes
``scripts/generate_tpu_dumps.py``, library frames lose their ``.../site-packages/``
prefix), so the output does not depend on where the checkout or the venv lives; line
numbers do depend on this file's text, so editing the programs changes the dumps.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

# --------------------------------------------------------------------------------------
# Registries: topologies, programs, targets (= modules to generate).
# --------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Topology:
    name: str  # get_topology_desc(topology_name=...), or "cpu"
    mesh_shape: tuple[int, int]  # ("data", "model")
    chips_per_host_bounds: tuple[int, int, int] | None = None


TOPOLOGIES = {
    "v5e_1x1": Topology("v5e:1x1", (1, 1), (1, 1, 1)),
    "v5e_2x2": Topology("v5e:2x2", (2, 2)),
    "v6e_1x1": Topology("v6e:1x1", (1, 1), (1, 1, 1)),
    "v6e_2x2": Topology("v6e:2x2", (2, 2)),
    "v5p_2x2x1": Topology("v5p:2x2x1", (2, 2)),
    "cpu": Topology("cpu", (1, 1)),
}


@dataclasses.dataclass(frozen=True)
class Program:
    function: str  # name of the jitted function: the module is "jit_<function>"
    description: str  # one line: what the program demonstrates
    build: Callable  # build(mesh) -> (fn, args tuple, jit kwargs); runs in the child


@dataclasses.dataclass(frozen=True)
class Target:
    platform: str  # "tpu" or "cpu"
    topology: str  # key of TOPOLOGIES
    program: str  # key of PROGRAMS

    @property
    def key(self) -> str:
        if self.platform == "cpu":
            return f"cpu/{self.program}"
        return f"tpu/{self.topology}-{self.program}"


# --------------------------------------------------------------------------------------
# The JAX programs (built in the child process only; inputs are ShapeDtypeStructs).
# --------------------------------------------------------------------------------------


def _sds(mesh, shape, dtype="float32", spec=(), memory_kind=None):
    import jax
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    sharding = NamedSharding(mesh, P(*spec), memory_kind=memory_kind)
    return jax.ShapeDtypeStruct(tuple(shape), dtype, sharding=sharding)


def _adam_state(mesh, opt, params):
    """Abstract optax state of ``params``: mu/nu leaves sharded like their parameter.

    A state leaf belongs to the parameter whose pytree path is a suffix of its own
    (``[0].mu['layers']['w1']`` -> ``['layers']['w1']``); the step count is replicated.
    """
    import jax
    from jax.tree_util import keystr

    by_path = {
        keystr(path): leaf.sharding
        for path, leaf in jax.tree_util.tree_flatten_with_path(params)[0]
    }
    state = jax.eval_shape(opt.init, params)

    def place(path, leaf):
        for i in range(len(path)):
            sharding = by_path.get(keystr(tuple(path[i:])))
            if sharding is not None:
                return jax.ShapeDtypeStruct(leaf.shape, leaf.dtype, sharding=sharding)
        return _sds(mesh, leaf.shape, leaf.dtype)

    return jax.tree_util.tree_map_with_path(place, state)


def _mlp_train_step(mesh, donate):
    import jax
    import jax.numpy as jnp
    import optax

    sizes, batch = (256, 512, 512, 256, 128), 64
    params = [
        {"w": _sds(mesh, (a, b)), "b": _sds(mesh, (b,))}
        for a, b in zip(sizes[:-1], sizes[1:], strict=True)
    ]
    opt = optax.adam(1e-3)
    opt_state = _adam_state(mesh, opt, params)
    x = _sds(mesh, (batch, sizes[0]))
    labels = _sds(mesh, (batch,), "int32")

    def loss_fn(params, x, labels):
        h = x
        for layer in params[:-1]:
            h = jax.nn.relu(h @ layer["w"] + layer["b"])
        logits = h @ params[-1]["w"] + params[-1]["b"]
        logp = jax.nn.log_softmax(logits)
        return -jnp.mean(jnp.take_along_axis(logp, labels[:, None], axis=-1))

    def step(params, opt_state, x, labels):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, labels)
        updates, opt_state = opt.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    if donate:

        def train_step_donated(params, opt_state, x, labels):
            return step(params, opt_state, x, labels)

        return train_step_donated, (params, opt_state, x, labels), {"donate_argnums": (0, 1)}

    def train_step(params, opt_state, x, labels):
        return step(params, opt_state, x, labels)

    return train_step, (params, opt_state, x, labels), {}


def build_mlp_adam(mesh):
    return _mlp_train_step(mesh, donate=False)


def build_donation(mesh):
    return _mlp_train_step(mesh, donate=True)


# Transformer sizes: small, but with minor dimensions that are multiples of 128 so the
# TPU layouts are the usual T(8,128) / bf16 T(8,128)(2,1) tiles.
VOCAB, D_MODEL, N_HEADS, D_FF, SEQ, BATCH, N_LAYERS = 512, 128, 4, 512, 128, 8, 2

# PartitionSpecs of the parameters (FSDP over "data", tensor parallel over "model");
# on a 1x1 mesh they shard nothing.
PARAM_SPECS = {
    "embed": ("model", "data"),
    "wqkv": ("data", "model"),
    "wo": ("model", "data"),
    "w1": ("data", "model"),
    "w2": ("model", "data"),
    "ln1": (),
    "ln2": (),
    "ln_f": (),
}


def _transformer_params(mesh, stacked, sharded, n_layers):
    def p(name, shape):
        spec = PARAM_SPECS[name] if sharded else ()
        if stacked:
            return _sds(mesh, (n_layers, *shape), spec=(None, *spec))
        return _sds(mesh, shape, spec=spec)

    def layer():
        return {
            "ln1": p("ln1", (D_MODEL,)),
            "wqkv": p("wqkv", (D_MODEL, 3 * D_MODEL)),
            "wo": p("wo", (D_MODEL, D_MODEL)),
            "ln2": p("ln2", (D_MODEL,)),
            "w1": p("w1", (D_MODEL, D_FF)),
            "w2": p("w2", (D_FF, D_MODEL)),
        }

    layers = layer() if stacked else [layer() for _ in range(n_layers)]
    embed_spec = PARAM_SPECS["embed"] if sharded else ()
    return {
        "embed": _sds(mesh, (VOCAB, D_MODEL), spec=embed_spec),
        "layers": layers,
        "ln_f": _sds(mesh, (D_MODEL,)),
    }


def _transformer_train_step(mesh, form, sharded=False, offload=False, n_layers=N_LAYERS):
    """A decoder-only LM train step; ``form`` is "loop", "remat" or "scan"."""
    import jax
    import jax.numpy as jnp
    import numpy as np
    import optax
    from jax import lax
    from jax.ad_checkpoint import checkpoint_name
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    params = _transformer_params(mesh, form == "scan", sharded, n_layers)
    opt = optax.adam(1e-3)
    opt_state = _adam_state(mesh, opt, params)
    token_spec = ("data", "model") if sharded else ()
    host = "pinned_host" if offload else None
    tokens = _sds(mesh, (BATCH, SEQ), "int32", spec=token_spec, memory_kind=host)
    act = NamedSharding(mesh, P("data" if sharded else None, None, None))
    dh = D_MODEL // N_HEADS
    causal = np.tril(np.ones((SEQ, SEQ), dtype=bool))

    def rms_norm(g, x):
        x32 = x.astype(jnp.float32)
        x32 = x32 * lax.rsqrt(jnp.mean(x32 * x32, axis=-1, keepdims=True) + 1e-6)
        return (x32 * g).astype(x.dtype)

    def block(lp, h):
        lp = jax.tree_util.tree_map(lambda a: a.astype(jnp.bfloat16), lp)
        x = rms_norm(lp["ln1"], h)
        q, k, v = jnp.split(x @ lp["wqkv"], 3, axis=-1)
        q, k, v = (t.reshape(BATCH, SEQ, N_HEADS, dh) for t in (q, k, v))
        s = jnp.einsum("bqhd,bkhd->bhqk", q, k).astype(jnp.float32) / np.sqrt(dh)
        a = jax.nn.softmax(jnp.where(causal, s, -1e9), axis=-1).astype(jnp.bfloat16)
        o = jnp.einsum("bhqk,bkhd->bqhd", a, v).reshape(BATCH, SEQ, D_MODEL)
        h = h + checkpoint_name(o @ lp["wo"], "attn_out")
        x = rms_norm(lp["ln2"], h)
        u = checkpoint_name(jax.nn.gelu(x @ lp["w1"]), "mlp_hidden")
        h = h + u @ lp["w2"]
        return lax.with_sharding_constraint(h, act)

    if offload:
        policy = jax.checkpoint_policies.save_and_offload_only_these_names(
            names_which_can_be_saved=[],
            names_which_can_be_offloaded=["attn_out", "mlp_hidden"],
            offload_src="device",
            offload_dst="pinned_host",
        )
        block = jax.checkpoint(block, policy=policy)
    elif form == "remat":
        block = jax.checkpoint(block)

    def loss_fn(params, tokens):
        targets = jnp.roll(tokens, -1, axis=1)
        h = params["embed"].astype(jnp.bfloat16)[tokens]
        h = lax.with_sharding_constraint(h, act)
        if form == "scan":
            h, _ = lax.scan(lambda h, lp: (block(lp, h), None), h, params["layers"])
        else:
            for lp in params["layers"]:
                h = block(lp, h)
        h = rms_norm(params["ln_f"].astype(jnp.bfloat16), h)
        logits = (h @ params["embed"].astype(jnp.bfloat16).T).astype(jnp.float32)
        logp = jax.nn.log_softmax(logits)
        return -jnp.mean(jnp.take_along_axis(logp, targets[..., None], axis=-1))

    def step(params, opt_state, tokens):
        loss, grads = jax.value_and_grad(loss_fn)(params, tokens)
        updates, opt_state = opt.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    if not offload:

        def transformer_train_step(params, opt_state, tokens):
            return step(params, opt_state, tokens)

        return transformer_train_step, (params, opt_state, tokens), {}

    on_host = NamedSharding(mesh, P(), memory_kind="pinned_host")
    on_device = NamedSharding(mesh, P(), memory_kind="device")
    counter = _sds(mesh, (8, 128), "int32", memory_kind="pinned_host")

    def offload_train_step(params, opt_state, tokens, counter):
        tokens = jax.device_put(tokens, on_device)
        params, opt_state, loss = step(params, opt_state, tokens)
        counter = jax.device_put(jax.device_put(counter, on_device) + 1, on_host)
        host_params = jax.device_put(params, on_host)
        return params, opt_state, loss, counter, host_params

    return (
        offload_train_step,
        (params, opt_state, tokens, counter),
        {"donate_argnums": (3,)},
    )


def build_transformer_loop(mesh):
    return _transformer_train_step(mesh, "loop")


def build_transformer_remat(mesh):
    return _transformer_train_step(mesh, "remat")


def build_transformer_scan(mesh):
    return _transformer_train_step(mesh, "scan")


def build_transformer_sharded(mesh):
    # One layer: the sharded module is about twice the size of the 1x1 one per layer.
    return _transformer_train_step(mesh, "loop", sharded=True, n_layers=1)


def build_host_offload(mesh):
    return _transformer_train_step(mesh, "scan", offload=True)


PROGRAMS = {
    "mlp_adam": Program(
        "train_step",
        "MLP (256-512-512-256-128, f32) train step with optax.adam; nothing donated",
        build_mlp_adam,
    ),
    "donation": Program(
        "train_step_donated",
        "the mlp_adam train step with donate_argnums=(0, 1): params and adam state alias "
        "the outputs (input_output_alias)",
        build_donation,
    ),
    "transformer_loop": Program(
        "transformer_train_step",
        "2-layer decoder-only transformer LM train step (optax.adam, f32 params, bf16 "
        "compute), layers as a Python loop",
        build_transformer_loop,
    ),
    "transformer_remat": Program(
        "transformer_train_step",
        "the transformer_loop train step with every layer under jax.checkpoint (remat)",
        build_transformer_remat,
    ),
    "transformer_scan": Program(
        "transformer_train_step",
        "the transformer train step with lax.scan over stacked layer weights (a while loop)",
        build_transformer_scan,
    ),
    "transformer_sharded": Program(
        "transformer_train_step",
        "1-layer transformer_loop train step on a 2x2 (data, model) mesh: FSDP + tensor "
        "parallel, sequence-sharded tokens; collectives (async where XLA chooses)",
        build_transformer_sharded,
    ),
    "host_offload": Program(
        "offload_train_step",
        "scanned remat transformer offloading named activations to pinned_host, with a "
        "pinned_host input, a donated pinned_host counter and a pinned_host params copy",
        build_host_offload,
    ),
}

TARGETS = (
    Target("tpu", "v5e_1x1", "mlp_adam"),
    Target("tpu", "v5e_1x1", "donation"),
    Target("tpu", "v5e_1x1", "transformer_loop"),
    Target("tpu", "v5e_1x1", "transformer_remat"),
    Target("tpu", "v5e_1x1", "transformer_scan"),
    Target("tpu", "v5e_1x1", "host_offload"),
    Target("tpu", "v5e_2x2", "transformer_sharded"),
    Target("tpu", "v6e_1x1", "mlp_adam"),
    Target("tpu", "v6e_2x2", "transformer_sharded"),
    Target("tpu", "v5p_2x2x1", "transformer_sharded"),
    Target("cpu", "cpu", "mlp_adam"),
    Target("cpu", "cpu", "donation"),
    Target("cpu", "cpu", "transformer_loop"),
    Target("cpu", "cpu", "transformer_scan"),
)
TARGETS_BY_KEY = {t.key: t for t in TARGETS}

MEMORY_FIELDS = (
    "argument_size_in_bytes",
    "output_size_in_bytes",
    "alias_size_in_bytes",
    "temp_size_in_bytes",
    "generated_code_size_in_bytes",
    "host_argument_size_in_bytes",
    "host_output_size_in_bytes",
    "host_alias_size_in_bytes",
    "host_temp_size_in_bytes",
    "host_generated_code_size_in_bytes",
    "peak_memory_in_bytes",
)

# Source paths in HLO metadata: this script becomes scripts/generate_tpu_dumps.py, library
# frames lose their .../site-packages/ prefix (see the module docstring).
SOURCE_PATH_REGEX = r"^.*/(?=scripts/generate_tpu_dumps\.py$)|^.*/(site|dist)-packages/"


def xla_flags(dump_dir, function):
    return " ".join(
        [
            "--xla_dump_to=" + dump_dir,
            "--xla_dump_hlo_as_text",
            # Only the program's own module (the parent re-checks the names anyway).
            "--xla_dump_hlo_module_re=.*jit_" + function + ".*",
        ]
    )


def child_main(key, dump_dir):
    """Compile one target with dumping on; print a JSON line with its figures."""
    target = TARGETS_BY_KEY[key]
    program = PROGRAMS[target.program]
    topology = TOPOLOGIES[target.topology]
    assert os.environ.get("XLA_FLAGS") == xla_flags(dump_dir, program.function)
    assert os.environ.get("JAX_PLATFORMS") == "cpu"
    import warnings

    warnings.filterwarnings("ignore")  # e.g. "Some donated buffers were not usable"
    import importlib.metadata

    import jax  # noqa: E402  (imported after XLA_FLAGS on purpose)
    import jaxlib
    import numpy as np
    from jax.sharding import Mesh

    jax.config.update("jax_hlo_source_file_canonicalization_regex", SOURCE_PATH_REGEX)
    if target.platform == "tpu":
        from jax.experimental import topologies

        kwargs = {}
        if topology.chips_per_host_bounds is not None:
            kwargs["chips_per_host_bounds"] = topology.chips_per_host_bounds
        desc = topologies.get_topology_desc(topology_name=topology.name, platform="tpu", **kwargs)
        devices = list(desc.devices)
    else:
        devices = jax.devices("cpu")
    n = topology.mesh_shape[0] * topology.mesh_shape[1]
    if len(devices) < n:
        raise SystemExit(f"{key}: {len(devices)} devices, mesh needs {n}")
    mesh = Mesh(np.array(devices[:n]).reshape(topology.mesh_shape), ("data", "model"))

    fn, args, jit_kwargs = program.build(mesh)
    assert fn.__name__ == program.function, (fn.__name__, program.function)
    start = time.monotonic()
    compiled = jax.jit(fn, **jit_kwargs).lower(*args).compile()
    seconds = time.monotonic() - start
    stats = compiled.memory_analysis()
    figures = {}
    for field in MEMORY_FIELDS:
        value = getattr(stats, field, None)
        if isinstance(value, int):
            figures[field] = value
    try:
        libtpu = importlib.metadata.version("libtpu")
    except importlib.metadata.PackageNotFoundError:
        libtpu = None
    info = {
        "memory_analysis": figures,
        "versions": {
            "jax": jax.__version__,
            "jaxlib": jaxlib.__version__,
            "libtpu": libtpu,
            "python": platform.python_version(),
        },
        "device_kind": devices[0].device_kind,
        "num_devices": n,
        "compile_seconds": round(seconds, 1),
    }
    print("GENERATE_TPU_DUMPS_INFO " + json.dumps(info), flush=True)


# --------------------------------------------------------------------------------------
# Parent: run children, pick the main module, copy files, write the manifests.
# --------------------------------------------------------------------------------------

KEEP_SUFFIXES = (
    "-buffer-assignment.txt",
    "-buffer-assignment-values.txt",
    "-live-range.txt",
    "-memory-usage-report.txt",
)

# TPU: module_0000.jit_train_step.cl_933746096.after_optimizations-buffer-assignment.txt
# CPU: module_0012.jit_train_step.cpu_after_optimizations-buffer-assignment.txt
FILE_RE = re.compile(
    r"^(?:\d+\.)?module_(?P<id>\d+)\.(?P<name>.+?)"
    r"\.(?P<suffix>[A-Za-z0-9_]*after_optimizations)"
    r"(?P<tail>" + "|".join(re.escape(t) for t in KEEP_SUFFIXES) + r")$"
)


def pick_main_module(dump_dir, function):
    """(prefix, buffer-assignment file names) of the largest jit_<function> module."""
    groups = {}
    for name in os.listdir(dump_dir):
        m = FILE_RE.match(name)
        if not m:
            continue
        if not re.match(r"jit_" + re.escape(function) + r"(\.|$)", m.group("name")):
            continue
        prefix = name[: m.start("tail")]
        groups.setdefault(prefix, []).append(name)
    if not groups:
        return None, []

    def total(prefix):
        return sum(os.path.getsize(os.path.join(dump_dir, f)) for f in groups[prefix])

    best = max(groups, key=lambda p: (total(p), p))
    return best, sorted(groups[best])


def check_file(path):
    """Raise if the file does not look like what its name says."""
    with open(path, encoding="utf-8") as f:
        head = f.read(64)
    name = os.path.basename(path)
    if name.endswith("-buffer-assignment.txt"):
        ok = head.startswith("BufferAssignment:")
    elif name.endswith("-buffer-assignment-values.txt"):
        ok = head.startswith("\nTotal bytes used:")
    elif name.endswith("-live-range.txt"):
        ok = head.startswith("HloLiveRange")
    elif name.endswith("-memory-usage-report.txt"):
        ok = head.startswith("Total bytes used:") or head.startswith("Memory Space:")
    elif name.endswith("after_optimizations.txt"):
        ok = head.startswith("HloModule ")
    else:
        ok = False
    if not ok:
        raise SystemExit(f"unexpected content in {path}: {head!r}")


def run_target(target, out_root, max_folder_bytes):
    program = PROGRAMS[target.program]
    topology = TOPOLOGIES[target.topology]
    with tempfile.TemporaryDirectory(prefix="hlotop-tpu-dump-") as dump_dir:
        env = dict(os.environ)
        env["JAX_PLATFORMS"] = "cpu"
        env["TPU_SKIP_MDS_QUERY"] = "1"
        env["XLA_FLAGS"] = xla_flags(dump_dir, program.function)
        cmd = [sys.executable, os.path.abspath(__file__), "--child", target.key]
        cmd += ["--dump-dir", dump_dir]
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if proc.returncode != 0:
            sys.stderr.write(proc.stderr[-6000:])
            raise SystemExit("%s failed (exit %d)" % (target.key, proc.returncode))
        info = None
        for line in proc.stdout.splitlines():
            if line.startswith("GENERATE_TPU_DUMPS_INFO "):
                info = json.loads(line[len("GENERATE_TPU_DUMPS_INFO ") :])
        if info is None:
            raise SystemExit(f"{target.key}: no info line from the child")
        prefix, files = pick_main_module(dump_dir, program.function)
        if not files:
            raise SystemExit(
                f"{target.key}: no buffer-assignment files for jit_{program.function} in "
                f"{dump_dir}: {sorted(os.listdir(dump_dir))}"
            )
        left_out = []
        module_text = prefix + ".txt"
        if os.path.exists(os.path.join(dump_dir, module_text)):
            size = sum(os.path.getsize(os.path.join(dump_dir, f)) for f in files)
            if size + os.path.getsize(os.path.join(dump_dir, module_text)) <= max_folder_bytes:
                files = sorted([*files, module_text])
            else:
                left_out.append(module_text)
        dest = os.path.join(out_root, target.key)
        if os.path.isdir(dest):
            shutil.rmtree(dest)
        os.makedirs(dest)
        for name in files:
            shutil.copyfile(os.path.join(dump_dir, name), os.path.join(dest, name))
            check_file(os.path.join(dest, name))
        flags = xla_flags("DUMP_DIR", program.function)
    record = {
        "program": target.program,
        "function": program.function,
        "description": program.description,
        "platform": target.platform,
        "topology": topology.name,
        "num_devices": info["num_devices"],
        "device_kind": info["device_kind"],
        "versions": info["versions"],
        "xla_flags": flags,
        "environment": {
            "JAX_PLATFORMS": "cpu",
            "TPU_SKIP_MDS_QUERY": "1",
            "XLA_FLAGS": flags,
        },
        "dump_dir_note": "DUMP_DIR was a fresh temporary directory",
        **info["memory_analysis"],
    }
    with open(os.path.join(dest, "memory_analysis.json"), "w", encoding="utf-8") as f:
        json.dump(record, f, indent=1, sort_keys=True)
        f.write("\n")
    print(
        "%s: compiled in %.1f s; %s%s"
        % (
            target.key,
            info["compile_seconds"],
            ", ".join("%s (%d B)" % (f, os.path.getsize(os.path.join(dest, f))) for f in files),
            "; left out " + ", ".join(left_out) if left_out else "",
        ),
        flush=True,
    )
    return left_out


# --------------------------------------------------------------------------------------
# What a kept module shows, and the manifests.
# --------------------------------------------------------------------------------------

ALLOCATION_RE = re.compile(r"^allocation (\d+): size (\d+), (?:color (\d+), )?(.*):$", re.M)
# A memory space inside a layout: {1,0:T(8,128)S(1)}, {:S(2)}, {0:S(4)}
LAYOUT_SPACE_RE = re.compile(r"[:)]S\((\d+)\)")
REPORT_SPACE_RE = re.compile(r"^Memory Space: (\S+) \(color=(\d+)\)$", re.M)
COLLECTIVES = frozenset(
    (
        "all-gather",
        "all-reduce",
        "all-to-all",
        "reduce-scatter",
        "collective-permute",
        "collective-broadcast",
        "ragged-all-to-all",
    )
)
COMPUTATION_RE = re.compile(r"^(?:ENTRY )?%(\S+) .*\{$")
INSTRUCTION_RE = re.compile(r"^\s*(?:ROOT )?%(\S+) = (.*)$")
ALIAS_ENTRY_RE = re.compile(r"\{[\d,]*\}: \(\d+, \{[\d,]*\}(?:, [a-z-]+)?\)")


def _read(folder, files, suffix):
    for name in files:
        if name.endswith(suffix):
            with open(os.path.join(folder, name), encoding="utf-8") as f:
                return f.read()
    return None


def _counts(items):
    out = {}
    for item in items:
        out[item] = out.get(item, 0) + 1
    return dict(sorted(out.items()))


def _opcode(rhs):
    """Opcode of an HLO instruction's right-hand side: skip the (tuple) shape."""
    end = rhs.find(" ")
    if rhs.startswith("("):
        depth = 0
        for end, ch in enumerate(rhs, start=1):  # noqa: B007  (end is used below)
            depth += (ch == "(") - (ch == ")")
            if depth == 0:
                break
    m = re.match(r"\s*([a-z][a-z0-9-]*)\(", rhs[end:])
    return m.group(1) if m else "?"


def _strip_id(name):
    return re.sub(r"\.\d+$", "", name)


def hlo_ops(text):
    """Async ops and collectives of an HLO module text.

    Returns (async ops, collectives outside fusions, collectives inside fusions); an
    ``async-start`` is named by the root opcode of the computation it wraps, a collective
    inside a fusion by the fusion's instruction name without its ``.N`` suffix (e.g.
    ``all-gather in async-collective-start``), or by ``async_collective_fusion`` when the
    fused computation is one (the steps of a TPU async collective fusion).
    """
    computations = {}  # name -> list of (instruction name, opcode, rhs)
    current = None
    for line in text.split("\n"):
        m = COMPUTATION_RE.match(line)
        if m:
            current = computations.setdefault(m.group(1), [])
            continue
        m = INSTRUCTION_RE.match(line)
        if m and current is not None:
            current.append((m.group(1), _opcode(m.group(2)), m.group(2)))
    fused_by = {}  # fused computation -> (calling fusion's name, its computation)
    async_ops = []
    for comp, instructions in computations.items():
        for name, opcode, rhs in instructions:
            called = re.search(r"calls=%([\w.\-]+)", rhs)
            if opcode == "fusion" and called:
                fused_by[called.group(1)] = (_strip_id(name), comp)
            if opcode == "async-start" and called:
                root = computations.get(called.group(1), [("", "?", "")])[-1][1]
                async_ops.append("async-start(%s)" % root)
            elif opcode.endswith("-start"):
                async_ops.append(opcode)
            elif opcode == "fusion" and _strip_id(name) == "async-collective-start":
                async_ops.append("async-collective-start fusion")
            elif opcode == "fusion" and called and "async_collective_fusion" in called.group(1):
                async_ops.append("async_collective_fusion step")
    # Nested fusions count under their outermost caller.
    sync, fused = [], []
    for comp, instructions in computations.items():
        caller, outer = None, comp
        while outer in fused_by and caller != fused_by[outer][0]:
            caller = fused_by[outer][0]
            if outer.startswith("async_collective_fusion"):
                caller = "async_collective_fusion"
            outer = fused_by[outer][1]
        for _name, opcode, _rhs in instructions:
            if opcode in COLLECTIVES:
                if caller is None:
                    sync.append(opcode)
                else:
                    fused.append("%s in %s" % (opcode, caller))
    return _counts(async_ops), _counts(sync), _counts(fused)


def analyze(folder, files):
    """What the kept files of one module show (memory spaces, collectives, donation ...)."""
    ba = _read(folder, files, "-buffer-assignment.txt") or ""
    values = _read(folder, files, "-buffer-assignment-values.txt") or ""
    report = _read(folder, files, "-memory-usage-report.txt") or ""
    text = _read(folder, files, "after_optimizations.txt")
    colours = {}
    param_and_out = 0
    for m in ALLOCATION_RE.finditer(ba):
        colour = str(int(m.group(3) or 0))
        entry = colours.setdefault(colour, {"allocations": 0, "bytes": 0})
        entry["allocations"] += 1
        entry["bytes"] += int(m.group(2))
        kinds = m.group(4)
        if "parameter " in kinds and "maybe-live-out" in kinds:
            param_and_out += 1
    layout_spaces = sorted({int(n) for n in LAYOUT_SPACE_RE.findall(ba + values)})
    features = {
        "allocation_colours": dict(sorted(colours.items(), key=lambda kv: int(kv[0]))),
        "layout_memory_spaces": ["S(%d)" % n for n in layout_spaces],
        "report_memory_space_labels": {
            c: label
            for label, c in sorted(REPORT_SPACE_RE.findall(report), key=lambda x: int(x[1]))
        },
        "tiled_layouts": bool(re.search(r":T\(\d", ba + values)),
        "host_offload": "5" in colours or 5 in layout_spaces,
        "parameter_and_maybe_live_out_allocations": param_and_out,
        "module_text_kept": text is not None,
    }
    if text is not None:
        header = text.split("\n", 1)[0]
        alias = re.search(r"input_output_alias=\{(.*?)\}, [a-z_]+=", header)
        features["input_output_alias_entries"] = (
            len(ALIAS_ENTRY_RE.findall(alias.group(1))) if alias else 0
        )
        async_ops, sync, fused = hlo_ops(text)
        features["async_ops"] = async_ops
        features["collectives_outside_fusions"] = sync
        features["collectives_in_fusions"] = fused
        features["while_loops"] = len(re.findall(r" while\(", text))
    return features


def _human(n):
    if n >= 1024 * 1024:
        return "%.2f MiB" % (n / 1024.0 / 1024.0)
    if n >= 1024:
        return "%.1f KiB" % (n / 1024.0)
    return "%d B" % n


def regenerate_command(keys, out="sample_dumps"):
    return "/tmp/hlotop-tpuenv/bin/python scripts/generate_tpu_dumps.py --out %s%s" % (
        out,
        " --only " + " ".join(keys) if keys else "",
    )


def build_manifest(out_root, backend, left_out):
    """Manifest of one backend directory, from the files on disk."""
    modules = {}
    for target in TARGETS:
        if target.platform != backend:
            continue
        folder = os.path.join(out_root, target.key)
        json_path = os.path.join(folder, "memory_analysis.json")
        if not os.path.exists(json_path):
            continue
        with open(json_path, encoding="utf-8") as f:
            record = json.load(f)
        files = sorted(os.listdir(folder))
        xla_files = [n for n in files if n != "memory_analysis.json"]
        modules[target.key.split("/", 1)[1]] = {
            "program": target.program,
            "function": record["function"],
            "description": record["description"],
            "topology": record["topology"],
            "device_kind": record["device_kind"],
            "num_devices": record["num_devices"],
            "versions": record["versions"],
            "xla_flags": record["xla_flags"],
            "memory_analysis": {k: record[k] for k in MEMORY_FIELDS if k in record},
            "files": {n: os.path.getsize(os.path.join(folder, n)) for n in files},
            "left_out": left_out.get(target.key, []),
            "features": analyze(folder, xla_files),
            "regenerate": regenerate_command([target.key]),
        }
    return {
        "generator": "scripts/generate_tpu_dumps.py",
        "backend": backend,
        "regenerate_all": regenerate_command([]),
        "modules": modules,
    }


def load_left_out(out_root, backend):
    path = os.path.join(out_root, backend, "manifest.json")
    if not os.path.exists(path):
        return {}
    with open(path, encoding="utf-8") as f:
        old = json.load(f)
    return {
        f"{backend}/{name}": info.get("left_out", [])
        for name, info in old.get("modules", {}).items()
    }


def _features_cell(feat):
    """Short text: what one module demonstrates."""
    parts = []
    if feat["layout_memory_spaces"]:
        parts.append("layouts " + " ".join(feat["layout_memory_spaces"]))
    if feat["tiled_layouts"]:
        parts.append("tiled")
    asyncs = feat.get("async_ops") or {}
    if asyncs:
        parts.append("async: " + ", ".join("%s x%d" % kv for kv in asyncs.items()))
    fused = feat.get("collectives_in_fusions") or {}
    if fused:
        parts.append("fused: " + ", ".join("%s x%d" % kv for kv in fused.items()))
    sync = feat.get("collectives_outside_fusions") or {}
    if sync:
        parts.append("sync: " + ", ".join("%s x%d" % kv for kv in sync.items()))
    if feat.get("input_output_alias_entries"):
        parts.append("donation: %d input_output_alias entries" % feat["input_output_alias_entries"])
    if feat["parameter_and_maybe_live_out_allocations"]:
        parts.append(
            "%d parameter+maybe-live-out allocations"
            % feat["parameter_and_maybe_live_out_allocations"]
        )
    if feat["host_offload"]:
        host = feat["allocation_colours"].get("5", {"allocations": 0, "bytes": 0})
        parts.append(
            "host offload: %d colour-5 allocations, %s"
            % (host["allocations"], _human(host["bytes"]))
        )
    if feat.get("while_loops"):
        parts.append("%d while loop(s)" % feat["while_loops"])
    return "; ".join(parts) or "-"


def render_manifest(out_root, backend, manifest):
    mods = manifest["modules"]
    title = {
        "tpu": "Real TPU XLA dumps (deviceless AOT with libtpu) and JAX's memory_analysis()",
        "cpu": "CPU XLA dumps of the same programs and JAX's memory_analysis()",
    }[backend]
    versions = sorted({json.dumps(m["versions"], sort_keys=True) for m in mods.values()})
    out = ["# " + title, ""]
    out.append(
        "Generated by `scripts/generate_tpu_dumps.py` (dev-only; not a runtime dependency "
        "of hlotop); see its docstring for how. This directory's modules are listed in "
        "`manifest.json` (machine-readable) and below; the %s modules are in "
        "`../%s/` with a manifest of the same format. Each folder holds XLA's own files "
        "of the program's main module (`jit_<function>`): the buffer assignment and its "
        "split siblings, the memory-usage report and the optimized HLO module text "
        "(`*after_optimizations.txt`, whose `HloModule` header has "
        "`input_output_alias={...}`), plus `memory_analysis.json` with every numeric field "
        "of `compiled.memory_analysis()` as JAX reported it, the versions, the topology "
        "and the exact `XLA_FLAGS` (the temporary dump directory written as `DUMP_DIR`)."
        % ({"tpu": "CPU", "cpu": "TPU"}[backend], {"tpu": "cpu", "cpu": "tpu"}[backend])
    )
    out.append("")
    out.append(
        "Versions: "
        + "; ".join(
            ", ".join("%s %s" % kv for kv in json.loads(v).items() if kv[1]) for v in versions
        )
        + ". Machine: x86-64 Linux, no accelerator; environment `JAX_PLATFORMS=cpu`, "
        "`TPU_SKIP_MDS_QUERY=1`."
    )
    out.append("")
    out.append("## Modules\n")
    out.append("| folder | topology (device kind, devices) | program | size | what it shows |")
    out.append("|---|---|---|---|---|")
    for name, m in mods.items():
        out.append(
            "| `%s/` | %s (%s, %d) | `%s` | %s | %s |"
            % (
                name,
                m["topology"],
                m["device_kind"],
                m["num_devices"],
                m["program"],
                _human(sum(m["files"].values())),
                _features_cell(m["features"]),
            )
        )
    out.append("")
    out.append("Programs:\n")
    for prog in sorted({m["program"] for m in mods.values()}, key=list(PROGRAMS).index):
        out.append(
            "* `%s` (`jit_%s`): %s." % (prog, PROGRAMS[prog].function, PROGRAMS[prog].description)
        )
    out.append("")
    out.append("## Allocation colours per module\n")
    out.append(
        "Allocations and bytes per colour (memory space) in the buffer assignment, and "
        "the label the memory-usage report prints for it. By XLA's constants colour 0 is "
        "the default memory (HBM on TPU), 1 `kGenericFastMemorySpace` (TPU VMEM) and 5 "
        "`kHostMemorySpace` (`xla/layout.h`), which `memory_analysis()` counts as host "
        "(`xla/pjrt/pjrt_executable.cc`); the report's `host` (colour 4, holding the "
        "`s32[2]{0:S(4)}` sync flags of async collectives) and `cmem` (colour 5) labels "
        "come from libtpu and mislead (shared TPU_DUMPS.md).\n"
    )
    out.append("| folder | colour: allocations, bytes [report label] |")
    out.append("|---|---|")
    for name, m in mods.items():
        feat = m["features"]
        labels = feat["report_memory_space_labels"]
        out.append(
            "| `%s/` | %s |"
            % (
                name,
                "; ".join(
                    "%s: %d, %s%s"
                    % (
                        c,
                        v["allocations"],
                        _human(v["bytes"]),
                        " [%s]" % labels[c] if c in labels else "",
                    )
                    for c, v in feat["allocation_colours"].items()
                ),
            )
        )
    out.append("")
    out.append("## memory_analysis() as JAX reported it (bytes)\n")
    fields = [f for f in MEMORY_FIELDS if any(f in m["memory_analysis"] for m in mods.values())]
    short = [f.replace("_size_in_bytes", "").replace("_in_bytes", "") for f in fields]
    out.append("| folder | " + " | ".join(short) + " |")
    out.append("|---|" + "---|" * len(fields))
    for name, m in mods.items():
        out.append(
            "| `%s/` | " % name
            + " | ".join(str(m["memory_analysis"].get(f, "")) for f in fields)
            + " |"
        )
    out.append("")
    if backend == "tpu":
        out.append(
            "On TPU `temp` comes from libtpu's own metadata and does not follow the "
            "buffer-assignment sums; `peak_memory` is not derivable from the dump "
            "(shared TPU_DUMPS.md): do not use either as a test oracle.\n"
        )
    out.append("## Files\n")
    for name, m in mods.items():
        line = "* `%s/`: %s" % (
            name,
            ", ".join("`%s` (%d B)" % kv for kv in m["files"].items()),
        )
        if m["left_out"]:
            line += "; left out (folder would pass the size limit): " + ", ".join(
                "`%s`" % n for n in m["left_out"]
            )
        out.append(line)
    out.append("")
    out.append("## Regenerating\n")
    out.append(
        "From the repository root, with the TPU virtualenv of the script's docstring "
        "(never inside the repository). Compiles are deterministic: a rerun writes the "
        "same bytes (source paths in the metadata are canonicalized, see the docstring; "
        "line numbers follow the script's text).\n"
    )
    out.append("```sh")
    out.append("# everything (TPU and CPU):")
    out.append(manifest["regenerate_all"])
    out.append("# one module:")
    out.append(next(iter(mods.values()))["regenerate"] if mods else "")
    out.append("# re-render the manifests only (no JAX needed):")
    out.append("python3 scripts/generate_tpu_dumps.py --out sample_dumps --manifest-only")
    out.append("```")
    out.append("")
    if backend == "tpu":
        out.append("## Observations\n")
        for note in TPU_NOTES:
            out.append("* " + note)
        out.append("")
    with open(os.path.join(out_root, backend, "MANIFEST.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(out))


TPU_NOTES = (
    "Async collectives differ by TPU generation for the same sharded program: on v5e the "
    "FSDP all-gathers become async collective fusions (`%async-collective-start` = a "
    "`fusion(...)`, kind=kCustom, whose tuple holds the `s32[2]{0:S(4)}` sync flags and "
    "`u32[]{:S(2)}` SMEM scalars) plus `collective-permute-start/done`; on v6e and v5p "
    "only `collective-permute-start/done` are async and all-gather / all-reduce / "
    "all-to-all stay synchronous, so colour 4 / `S(4)` appears on v5e only. No "
    "`all-gather-start` or `all-reduce-start` opcode appears with libtpu's default flags "
    "(`--xla_enable_async_all_gather=true --xla_enable_async_all_reduce=true` in "
    "`LIBTPU_INIT_ARGS` changed nothing here).",
    "Every TPU module has allocations of colour 6 (the report labels it `color_6`), "
    "holding `S(6)` scalars such as `s32[]{:T(128)S(6)}` and `pred[]{:T(512)S(6)}`.",
    "The TPU file names carry `cl_<N>` after the module name "
    "(`module_0000.jit_train_step.cl_933746096.after_optimizations-...`); N was the same "
    "for every module compiled with libtpu 0.0.42.1.",
    "Host offload: the `pinned_host` parameters, outputs and offloaded activations are "
    "colour-5 allocations; the donated `pinned_host` counter is a colour-5 allocation "
    "that is both `parameter` and `maybe-live-out`.",
)


def write_manifests(out_root, backends, left_out):
    for backend in backends:
        if not os.path.isdir(os.path.join(out_root, backend)):
            continue
        merged = {**load_left_out(out_root, backend), **left_out}
        manifest = build_manifest(out_root, backend, merged)
        with open(os.path.join(out_root, backend, "manifest.json"), "w", encoding="utf-8") as f:
            json.dump(manifest, f, indent=1, sort_keys=True)
            f.write("\n")
        render_manifest(out_root, backend, manifest)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default="sample_dumps", help="output root (default: %(default)s)")
    p.add_argument(
        "--only", nargs="+", choices=sorted(TARGETS_BY_KEY), help="targets (default: all)"
    )
    p.add_argument(
        "--max-folder-bytes",
        type=int,
        default=1_500_000,
        help="leave the module text out if a folder would pass this (default: %(default)s)",
    )
    p.add_argument(
        "--manifest-only",
        action="store_true",
        help="only re-render the manifests from the files on disk",
    )
    p.add_argument("--child", choices=sorted(TARGETS_BY_KEY), help=argparse.SUPPRESS)
    p.add_argument("--dump-dir", help=argparse.SUPPRESS)
    args = p.parse_args(argv)

    if args.child:
        child_main(args.child, args.dump_dir)
        return
    out_root = os.path.abspath(args.out)
    keys = args.only or [t.key for t in TARGETS]
    left_out = {}
    if not args.manifest_only:
        for key in keys:
            left_out[key] = run_target(TARGETS_BY_KEY[key], out_root, args.max_folder_bytes)
            # Keep the manifests current after every module (a long run may be stopped).
            write_manifests(out_root, ("tpu", "cpu"), left_out)
    write_manifests(out_root, ("tpu", "cpu"), left_out)


if __name__ == "__main__" and sys.argv[1:3] in (["--child", k] for k in TARGETS_BY_KEY):
    main()


# --------------------------------------------------------------------------------------
# More programs, below the entry point on purpose. The modules of the targets above record
# this file's line numbers in their metadata, including the frames of `<module>` (the
# `main()` call above), `main` and `child_main`, so no line above may move if their reruns
# are to stay byte-identical. The child process of one of those targets runs the `main()`
# above before this part of the file exists; every other run (the parent, the children of
# the targets below) skips it and runs the `main()` at the end, with the full registries.
#
# * ``gpt_loop``  GPT-style decoder-only LM train step written with flax.linen, nanoGPT's
#                 layout with ``bias=False``: token and position embeddings ``wte`` /
#                 ``wpe``; 3 pre-LayerNorm blocks ``Block_0`` .. ``Block_2`` (a Python loop,
#                 unrolled in HLO), each ``ln_1``, ``attn`` (``c_attn``, ``c_proj``),
#                 ``ln_2``, ``mlp`` (``c_fc``, ``c_proj``); ``ln_f``; the output head tied to
#                 ``wte``; cross-entropy loss. f32 parameters, bf16 compute, ``optax.adamw``
#                 with its state passed in and returned, parameters and optimizer state
#                 donated. Entry parameters are named after the pytree paths of the jit
#                 arguments (``params``, ``opt_state``, ``batch``), op_names carry flax's
#                 module scopes under ``jvp(GPT)`` / ``transpose(jvp(GPT))``.
# * ``gpt_scan``  the same model with its 3 blocks stacked under ``nn.scan`` (``blocks``, a
#                 while loop) and an untied output head ``lm_head``.
# Only 3 layers: with 4 the TPU loop folder with its module text would be 1.7 MB (> 1.5 MB).
# --------------------------------------------------------------------------------------

FIRST_TARGET_KEYS = frozenset(TARGETS_BY_KEY)  # their children ran the main() above

# Small dims with minor dimensions that are multiples of 128 (see the transformer's).
GPT_VOCAB, GPT_D_MODEL, GPT_N_HEADS, GPT_D_FF = 1024, 128, 4, 512
GPT_SEQ, GPT_BATCH, GPT_N_LAYERS = 128, 8, 3


def _gpt_train_step(mesh, form):
    """A GPT train step with flax.linen modules; ``form`` is "loop" or "scan"."""
    import functools

    import flax.linen as nn
    import jax
    import jax.numpy as jnp
    import numpy as np
    import optax

    bf16 = jnp.bfloat16
    dh = GPT_D_MODEL // GPT_N_HEADS
    causal = np.tril(np.ones((GPT_SEQ, GPT_SEQ), dtype=bool))

    # nanoGPT's bias=False: no biases in the Dense layers and LayerNorms.
    LayerNorm = functools.partial(nn.LayerNorm, use_bias=False, dtype=bf16)

    class CausalSelfAttention(nn.Module):
        @nn.compact
        def __call__(self, x):
            b, t, d = x.shape
            qkv = nn.Dense(3 * d, use_bias=False, dtype=bf16, name="c_attn")(x)
            q, k, v = (a.reshape(b, t, GPT_N_HEADS, dh) for a in jnp.split(qkv, 3, axis=-1))
            s = jnp.einsum("bqhd,bkhd->bhqk", q, k).astype(jnp.float32) / np.sqrt(dh)
            a = jax.nn.softmax(jnp.where(causal, s, -1e9), axis=-1).astype(bf16)
            o = jnp.einsum("bhqk,bkhd->bqhd", a, v).reshape(b, t, d)
            return nn.Dense(d, use_bias=False, dtype=bf16, name="c_proj")(o)

    class MLP(nn.Module):
        @nn.compact
        def __call__(self, x):
            h = nn.gelu(nn.Dense(GPT_D_FF, use_bias=False, dtype=bf16, name="c_fc")(x))
            return nn.Dense(GPT_D_MODEL, use_bias=False, dtype=bf16, name="c_proj")(h)

    class Block(nn.Module):
        @nn.compact
        def __call__(self, x, _=None):  # (carry, input) -> (carry, output) for nn.scan
            x = x + CausalSelfAttention(name="attn")(LayerNorm(name="ln_1")(x))
            x = x + MLP(name="mlp")(LayerNorm(name="ln_2")(x))
            return x, None

    class GPT(nn.Module):
        @nn.compact
        def __call__(self, tokens):
            wte = nn.Embed(GPT_VOCAB, GPT_D_MODEL, dtype=bf16, name="wte")
            wpe = nn.Embed(GPT_SEQ, GPT_D_MODEL, dtype=bf16, name="wpe")
            x = wte(tokens) + wpe(jnp.arange(tokens.shape[1]))
            if form == "scan":
                blocks = nn.scan(
                    Block,
                    variable_axes={"params": 0},
                    split_rngs={"params": True},
                    length=GPT_N_LAYERS,
                )
                x, _ = blocks(name="blocks")(x, None)
            else:
                for _ in range(GPT_N_LAYERS):
                    x, _ = Block()(x)  # auto-named Block_0, Block_1, ...
            x = LayerNorm(name="ln_f")(x)
            if form == "scan":
                return nn.Dense(GPT_VOCAB, use_bias=False, dtype=bf16, name="lm_head")(x)
            return wte.attend(x)  # output head tied to the token embedding

    model = GPT()
    tokens = jax.ShapeDtypeStruct((GPT_BATCH, GPT_SEQ), jnp.int32)
    shapes = jax.eval_shape(model.init, jax.random.key(0), tokens)["params"]
    params = jax.tree_util.tree_map(lambda a: _sds(mesh, a.shape, a.dtype), shapes)
    opt = optax.adamw(3e-4, b1=0.9, b2=0.95, weight_decay=0.1)
    opt_state = _adam_state(mesh, opt, params)
    batch = {
        "inputs": _sds(mesh, (GPT_BATCH, GPT_SEQ), "int32"),
        "targets": _sds(mesh, (GPT_BATCH, GPT_SEQ), "int32"),
    }

    def loss_fn(params, batch):
        logits = model.apply({"params": params}, batch["inputs"]).astype(jnp.float32)
        losses = optax.softmax_cross_entropy_with_integer_labels(logits, batch["targets"])
        return losses.mean()

    def gpt_train_step(params, opt_state, batch):
        loss, grads = jax.value_and_grad(loss_fn)(params, batch)
        updates, opt_state = opt.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    return gpt_train_step, (params, opt_state, batch), {"donate_argnums": (0, 1)}


def build_gpt_loop(mesh):
    return _gpt_train_step(mesh, "loop")


def build_gpt_scan(mesh):
    return _gpt_train_step(mesh, "scan")


PROGRAMS.update(
    {
        "gpt_loop": Program(
            "gpt_train_step",
            "GPT-style LM train step in flax.linen (nanoGPT without biases: wte/wpe, 3 "
            "pre-LayerNorm blocks Block_0..Block_2 of attn + mlp as a Python loop, ln_f, head "
            "tied to wte, cross-entropy; f32 params, bf16 compute), optax.adamw; params and "
            "optimizer state donated, entry parameters named by their pytree paths",
            build_gpt_loop,
        ),
        "gpt_scan": Program(
            "gpt_train_step",
            "the gpt_loop train step with the 3 blocks stacked under nn.scan (blocks, a while "
            "loop) and an untied output head lm_head",
            build_gpt_scan,
        ),
    }
)

TARGETS = (
    *TARGETS,
    Target("tpu", "v5e_1x1", "gpt_loop"),
    Target("tpu", "v5e_1x1", "gpt_scan"),
    Target("cpu", "cpu", "gpt_loop"),
    Target("cpu", "cpu", "gpt_scan"),
)
TARGETS_BY_KEY = {t.key: t for t in TARGETS}


def build_gpt_loop_batch16(mesh):
    """gpt_loop with twice the batch (16): a pair for ``hlotop diff`` (a batch-size
    change). Appended here so that no line above moves (see the note above)."""
    global GPT_BATCH
    GPT_BATCH = 16
    return _gpt_train_step(mesh, "loop")


PROGRAMS["gpt_loop_batch16"] = Program(
    "gpt_train_step",
    "the gpt_loop train step with a batch of 16 instead of 8: with gpt_loop, a pair of "
    "compiles of one program that differ in batch size",
    build_gpt_loop_batch16,
)
TARGETS = (*TARGETS, Target("cpu", "cpu", "gpt_loop_batch16"))
TARGETS_BY_KEY = {t.key: t for t in TARGETS}

if __name__ == "__main__" and sys.argv[1:3] not in (["--child", k] for k in FIRST_TARGET_KEYS):
    main()
