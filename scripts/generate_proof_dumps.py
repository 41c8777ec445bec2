#!/usr/bin/env python3
"""Generate the proof inputs of hlotop's advice: programs compiled with and without a change.

Dev-only, NOT a runtime dependency of hlotop. hlotop's advice (donation, remat, sharding,
batch size) predicts what a change to a program would save; each prediction is to be held
against the program recompiled with that change. This script makes those recompiles: for
each *case* one train step compiled as several *variants* that differ in exactly one
thing, on a TPU compiled deviceless (``libtpu`` from PyPI, see shared ``TPU_DUMPS.md``)
and, where cheap, on the JAX CPU backend. The folders go to
``<out>/proof/<case>/<target>-<variant>/`` (``<target>``: ``v5e_1x1``, ``v5e_2x2`` or
``cpu``), with one ``<out>/proof/manifest.json`` saying for each case which variant is the
baseline, what changed, and which argument indices, entry-parameter names and op_name
scopes are involved, and its rendering ``MANIFEST.md``.

Cases (``CASES``; every program is a flax.linen GPT train step, nanoGPT's layout without
biases, ``optax.adamw``, f32 parameters and bf16 compute, unless said):

* ``donation``     1-block GPT at batch 8; ``none`` donates nothing, ``params`` donates
                   argument 0 (the parameters), ``params_and_opt_state`` arguments 0 and 1
                   (with the adamw state). That last program is the batch series' ``b8``:
                   it is compiled once, in ``batch/`` (``Variant.same_as``; the manifest's
                   folders say where each variant is). Targets v5e_1x1 and cpu.
* ``remat``        2-block GPT at batch 8, parameters and state donated; ``none``,
                   ``attn`` (every block's ``attn`` module under ``nn.remat``), ``mlp``
                   (every ``mlp``), ``block`` (every ``Block_<i>``). Target v5e_1x1 only:
                   on the CPU backend (measured with these programs, 2.9 MB of dumps) the
                   ``attn`` and ``mlp`` variants had the baseline's very temp size and
                   live-range peak (47 158 340 and 52 367 380 bytes), ``block`` 0.3 MB
                   less: nothing there for an advice to be proved against.
* ``batch``        1-block GPT, parameters and state donated, at batch sizes 2, 4, 6, 8,
                   12, 16 (variants ``b2`` .. ``b16``). Targets v5e_1x1 and cpu.
* ``replication``  1-block GPT at batch 8 on a v5e 2x2 mesh ``("data", "model")``: FSDP
                   over ``data``, tensor parallel over ``model``, tokens and residual
                   stream sharded over ``data``, parameters and state donated and given
                   back with their input shardings (``out_shardings``); ``sharded``
                   shards ``Block_0/mlp/c_fc/kernel`` ``("data", "model")`` like its
                   siblings, ``replicated`` leaves it ``PartitionSpec()`` (and so its
                   adamw mu and nu: the state is sharded like its parameter). Target
                   v5e_2x2. Its entry parameters are ``param.N`` after SPMD
                   partitioning; their ``op_name`` metadata keeps the pytree path.

How a module is made: as ``scripts/generate_tpu_dumps.py`` does (its helpers are imported:
topologies, abstract inputs, the optimizer state's shardings, the choice of the main
module among XLA's files, the file checks), each compile in a fresh child process with
``JAX_PLATFORMS=cpu``, ``TPU_SKIP_MDS_QUERY=1`` and ``XLA_FLAGS=--xla_dump_to=<temp dir>
--xla_dump_hlo_as_text --xla_dump_hlo_module_re=.*jit_<function>.*``; inputs are
``jax.ShapeDtypeStruct``s with ``NamedSharding``s, then ``jax.jit(fn, donate_argnums=...)
.lower(*inputs).compile()``. Into each folder go XLA's files of the main module
(``*-buffer-assignment.txt`` and its split siblings ``-buffer-assignment-values.txt``,
``-live-range.txt``, ``-memory-usage-report.txt``, and the HLO text
``*after_optimizations.txt``, whose header has ``input_output_alias={...}`` and whose
instructions keep their ``sharding=`` and ``metadata={op_name=...}``) and
``memory_analysis.json``: every numeric field of ``compiled.memory_analysis()``, the
versions, platform, topology, device kind, the case, variant and target, the variant's
parameters, a description and the exact ``XLA_FLAGS`` (the dump directory as ``DUMP_DIR``).

The manifest is rebuilt from the files on disk after every module (``--manifest-only``
rebuilds it without JAX). Besides each case's variants and comparisons it records, read
from XLA's own files: the peak figure XLA prints in the live-range file (``Stack trace
breakdown for peak usage: N bytes``), the donated entry parameters (the HLO header's
``input_output_alias`` with each parameter number's name), the entry parameters of the
replicated weight and its adamw state (number, name, shape, ``sharding=``), the
``num_partitions``, and for each remat scope how many instructions' op_names start with
its forward prefix and with its recomputation's (``checkpoint/rematted_computation/``).

Usage (inside the TPU virtualenv of ``generate_tpu_dumps.py``'s docstring; never create
it inside the repository)::

    /tmp/hlotop-tpuenv/bin/python scripts/generate_proof_dumps.py --out sample_dumps
    /tmp/hlotop-tpuenv/bin/python scripts/generate_proof_dumps.py --out sample_dumps \\
        --only donation/v5e_1x1-none remat/v5e_1x1-attn
    python3 scripts/generate_proof_dumps.py --out sample_dumps --manifest-only

Determinism: compiles are deterministic. Source paths in the HLO metadata are
canonicalized (this script becomes ``scripts/generate_proof_dumps.py``, library frames
lose their ``.../site-packages/`` prefix). The metadata hold line numbers of this file
down to the child process's entry (the ``--child`` branch after ``child_main``): an edit
above it changes every dump's metadata (regenerate them all), one below it (the parent:
the copying, the manifest and its rendering) changes no dump.
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import generate_tpu_dumps as gen  # noqa: E402  (the existing generator's helpers)

PROOF = "proof"
INFO_TAG = "GENERATE_PROOF_DUMPS_INFO "
SOURCE_PATH_REGEX = r"^.*/(?=scripts/generate_proof_dumps\.py$)|^.*/(site|dist)-packages/"

# --------------------------------------------------------------------------------------
# The program: a flax.linen GPT train step (built in the child process only).
# --------------------------------------------------------------------------------------

# Minor dimensions are multiples of 128 (TPU tiles T(8,128)); sharded 2x2 they stay so
# for Block_i/mlp/c_fc/kernel, [128, 512] -> [64, 256], so its replicated allocation is
# exactly 4 times the sharded one.
VOCAB, D_MODEL, N_HEADS, D_FF, SEQ = 512, 128, 4, 512, 128

# PartitionSpecs by parameter path (FSDP over "data", tensor parallel over "model"),
# for the sharded program; LayerNorm scales are replicated.
SHARDED_SPECS = {
    "wte/embedding": ("model", "data"),
    "wpe/embedding": ("model", "data"),
    "attn/c_attn/kernel": ("data", "model"),
    "attn/c_proj/kernel": ("model", "data"),
    "mlp/c_fc/kernel": ("data", "model"),
    "mlp/c_proj/kernel": ("model", "data"),
}


def _spec(path, sharded, replicated):
    """PartitionSpec tuple of the parameter at ``path`` ("Block_0/mlp/c_fc/kernel")."""
    if not sharded or path in replicated:
        return ()
    for suffix, spec in SHARDED_SPECS.items():
        if path == suffix or path.endswith("/" + suffix):
            return spec
    return ()


def gpt_step(mesh, *, n_layers, batch, remat="none", donate=(0, 1), sharded=False, replicated=()):
    """(fn, abstract args, jit kwargs) of one GPT train step.

    ``remat``: "none", "attn", "mlp" (every block's module of that name under
    ``nn.remat``) or "block" (every ``Block_<i>``); ``donate``: the donated argnums of
    ``gpt_train_step(params, opt_state, batch)``; ``sharded``: the parameters as in
    ``SHARDED_SPECS`` but those whose path is in ``replicated``, tokens and residual
    stream sharded over "data".
    """
    import functools

    import flax.linen as nn
    import jax
    import jax.numpy as jnp
    import numpy as np
    import optax
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    bf16 = jnp.bfloat16
    dh = D_MODEL // N_HEADS
    causal = np.tril(np.ones((SEQ, SEQ), dtype=bool))
    LayerNorm = functools.partial(nn.LayerNorm, use_bias=False, dtype=bf16)

    class CausalSelfAttention(nn.Module):
        @nn.compact
        def __call__(self, x):
            b, t, d = x.shape
            qkv = nn.Dense(3 * d, use_bias=False, dtype=bf16, name="c_attn")(x)
            q, k, v = (a.reshape(b, t, N_HEADS, dh) for a in jnp.split(qkv, 3, axis=-1))
            s = jnp.einsum("bqhd,bkhd->bhqk", q, k).astype(jnp.float32) / np.sqrt(dh)
            a = jax.nn.softmax(jnp.where(causal, s, -1e9), axis=-1).astype(bf16)
            o = jnp.einsum("bhqk,bkhd->bqhd", a, v).reshape(b, t, d)
            return nn.Dense(d, use_bias=False, dtype=bf16, name="c_proj")(o)

    class MLP(nn.Module):
        @nn.compact
        def __call__(self, x):
            h = nn.gelu(nn.Dense(D_FF, use_bias=False, dtype=bf16, name="c_fc")(x))
            return nn.Dense(D_MODEL, use_bias=False, dtype=bf16, name="c_proj")(h)

    Attn = nn.remat(CausalSelfAttention) if remat == "attn" else CausalSelfAttention
    Mlp = nn.remat(MLP) if remat == "mlp" else MLP

    class Block(nn.Module):
        @nn.compact
        def __call__(self, x):
            x = x + Attn(name="attn")(LayerNorm(name="ln_1")(x))
            return x + Mlp(name="mlp")(LayerNorm(name="ln_2")(x))

    BlockI = nn.remat(Block) if remat == "block" else Block
    residual = NamedSharding(mesh, P("data", None, None)) if sharded else None

    class GPT(nn.Module):
        @nn.compact
        def __call__(self, tokens):
            wte = nn.Embed(VOCAB, D_MODEL, dtype=bf16, name="wte")
            wpe = nn.Embed(SEQ, D_MODEL, dtype=bf16, name="wpe")
            x = wte(tokens) + wpe(jnp.arange(tokens.shape[1]))
            for i in range(n_layers):
                if residual is not None:
                    x = jax.lax.with_sharding_constraint(x, residual)
                x = BlockI(name=f"Block_{i}")(x)
            return wte.attend(LayerNorm(name="ln_f")(x))  # head tied to wte

    model = GPT()
    shapes = jax.eval_shape(
        model.init, jax.random.key(0), jax.ShapeDtypeStruct((batch, SEQ), jnp.int32)
    )["params"]

    def place(path, leaf):
        name = "/".join(str(k.key) for k in path)
        return gen._sds(mesh, leaf.shape, leaf.dtype, spec=_spec(name, sharded, replicated))

    params = jax.tree_util.tree_map_with_path(place, shapes)
    opt = optax.adamw(3e-4, b1=0.9, b2=0.95, weight_decay=0.1)
    opt_state = gen._adam_state(mesh, opt, params)
    token_spec = ("data", None) if sharded else ()
    inputs = {
        "inputs": gen._sds(mesh, (batch, SEQ), "int32", spec=token_spec),
        "targets": gen._sds(mesh, (batch, SEQ), "int32", spec=token_spec),
    }

    def loss_fn(params, batch):
        logits = model.apply({"params": params}, batch["inputs"]).astype(jnp.float32)
        losses = optax.softmax_cross_entropy_with_integer_labels(logits, batch["targets"])
        return losses.mean()

    def gpt_train_step(params, opt_state, batch):
        loss, grads = jax.value_and_grad(loss_fn)(params, batch)
        updates, opt_state = opt.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    jit_kwargs = {"donate_argnums": tuple(donate)}
    if sharded:
        # The train state keeps its shardings from step to step (as a training loop's
        # out_shardings do): without this XLA may give the updated replicated weight
        # another sharding, and its donated buffers go unused.
        like = jax.tree_util.tree_map(lambda a: a.sharding, (params, opt_state))
        jit_kwargs["out_shardings"] = (*like, NamedSharding(mesh, P()))
    return gpt_train_step, (params, opt_state, inputs), jit_kwargs


# --------------------------------------------------------------------------------------
# Cases and variants.
# --------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Variant:
    name: str
    description: str
    parameters: dict  # keyword arguments of gpt_step (JSON-able), recorded as they are
    # "<case>/<variant>" of another case whose program this is (the same parameters):
    # it has no folder of its own, the manifest points at that one's.
    same_as: str | None = None


@dataclasses.dataclass(frozen=True)
class Case:
    name: str
    description: str
    targets: tuple[str, ...]  # keys of gen.TOPOLOGIES
    baseline: str  # the variant that the advice is computed on
    variants: tuple[Variant, ...]
    comparisons: tuple[dict, ...]  # {"baseline", "changed", "change", ...}: JSON-able
    function: str = "gpt_train_step"

    def variant(self, name) -> Variant:
        return next(v for v in self.variants if v.name == name)


ARGUMENTS = ("params", "opt_state", "batch")  # gpt_train_step's arguments, in order
REMAT_LAYERS = 2
BATCHES = (2, 4, 6, 8, 12, 16)
REPLICATED = "Block_0/mlp/c_fc/kernel"


def _donation_case():
    small = {"n_layers": 1, "batch": 8}
    return Case(
        "donation",
        "1-block GPT train step (batch 8) compiled with donate_argnums (), (0,) and (0, 1): "
        "nothing, the parameters, the parameters and the adamw state donated",
        ("v5e_1x1", "cpu"),
        "none",
        (
            Variant("none", "nothing donated", {**small, "donate": []}),
            Variant("params", "the parameters (argument 0) donated", {**small, "donate": [0]}),
            Variant(
                "params_and_opt_state",
                "the parameters and the adamw state (arguments 0, 1) donated",
                {**small, "donate": [0, 1]},
                same_as="batch/b8",
            ),
        ),
        (
            {
                "baseline": "none",
                "changed": "params_and_opt_state",
                "change": "donate_argnums () -> (0, 1)",
                "donated_argnums": [0, 1],
                "donated_arguments": ["params", "opt_state"],
            },
            {
                "baseline": "none",
                "changed": "params",
                "change": "donate_argnums () -> (0,)",
                "donated_argnums": [0],
                "donated_arguments": ["params"],
            },
            {
                "baseline": "params",
                "changed": "params_and_opt_state",
                "change": "donate_argnums (0,) -> (0, 1): the adamw state donated as well",
                "donated_argnums": [1],
                "donated_arguments": ["opt_state"],
            },
        ),
    )


def rematted_prefix(scope):
    """The op_name prefix of the recomputation of ``scope`` under nn.remat (as flax and
    JAX name it: the scope's parent, then ``checkpoint/rematted_computation/``, then
    the remat'd module), e.g. ``Block_0/attn`` ->
    ``jit(gpt_train_step)/transpose(jvp(GPT))/Block_0/jvp(GPT)/Block_0/checkpoint/
    rematted_computation/attn/``."""
    parent, _, module = scope.rpartition("/")
    inner = f"{parent}/jvp(GPT)/{parent}/" if parent else "jvp(GPT)/"
    head = "jit(gpt_train_step)/transpose(jvp(GPT))/"
    return f"{head}{inner}checkpoint/rematted_computation/{module}/"


def forward_prefix(scope):
    """The op_name prefix of ``scope``'s forward computation, with or without remat."""
    return f"jit(gpt_train_step)/jvp(GPT)/{scope}/"


REMAT_SCOPES = {
    "attn": [f"Block_{i}/attn" for i in range(REMAT_LAYERS)],
    "mlp": [f"Block_{i}/mlp" for i in range(REMAT_LAYERS)],
    "block": [f"Block_{i}" for i in range(REMAT_LAYERS)],
}


def _remat_case():
    base = {"n_layers": REMAT_LAYERS, "batch": 8, "donate": [0, 1]}
    scopes = REMAT_SCOPES
    what = {"attn": "every block's attn", "mlp": "every block's mlp", "block": "every block"}
    return Case(
        "remat",
        "2-block GPT train step (batch 8, parameters and adamw state donated) with flax "
        "nn.remat around nothing, every block's attn, every block's mlp, every whole block",
        ("v5e_1x1",),
        "none",
        (
            Variant("none", "nothing rematerialised", {**base, "remat": "none"}),
            *(
                Variant(k, f"{what[k]} under nn.remat", {**base, "remat": k})
                for k in ("attn", "mlp", "block")
            ),
        ),
        tuple(
            {
                "baseline": "none",
                "changed": k,
                "change": f"nn.remat around {what[k]}",
                "remat_scopes": scopes[k],
                "forward_op_name_prefixes": [forward_prefix(s) for s in scopes[k]],
                "rematted_op_name_prefixes": [rematted_prefix(s) for s in scopes[k]],
            }
            for k in ("attn", "mlp", "block")
        ),
    )


def _batch_case():
    return Case(
        "batch",
        "1-block GPT train step (parameters and adamw state donated) at batch sizes "
        + ", ".join(map(str, BATCHES))
        + " (sequence length %d)" % SEQ,
        ("v5e_1x1", "cpu"),
        "b8",
        tuple(
            Variant(f"b{b}", f"batch {b}", {"n_layers": 1, "batch": b, "donate": [0, 1]})
            for b in BATCHES
        ),
        tuple(
            {
                "baseline": "b8",
                "changed": f"b{b}",
                "change": f"batch 8 -> {b}",
                "batch": [8, b],
            }
            for b in BATCHES
            if b != 8
        ),
    )


def _replication_case():
    base = {"n_layers": 1, "batch": 8, "donate": [0, 1], "sharded": True}
    return Case(
        "replication",
        "1-block GPT train step on a v5e 2x2 mesh (data, model): FSDP over data, tensor "
        "parallel over model, tokens and residual stream sharded over data; parameters and "
        "adamw state donated. %s (and its adamw mu, nu) replicated or sharded like its "
        "siblings" % REPLICATED,
        ("v5e_2x2",),
        "replicated",
        (
            Variant(
                "replicated",
                f"{REPLICATED} PartitionSpec() (replicated), every other matrix sharded",
                {**base, "replicated": [REPLICATED]},
            ),
            Variant(
                "sharded",
                f"{REPLICATED} PartitionSpec('data', 'model') like its siblings",
                {**base, "replicated": []},
            ),
        ),
        (
            {
                "baseline": "replicated",
                "changed": "sharded",
                "change": f"{REPLICATED}: PartitionSpec() -> PartitionSpec('data', 'model')",
                "parameter_path": REPLICATED,
                "partition_spec": {"replicated": [], "sharded": ["data", "model"]},
                "sibling_specs": {
                    "Block_0/mlp/c_proj/kernel": list(SHARDED_SPECS["mlp/c_proj/kernel"]),
                    "Block_0/attn/c_attn/kernel": list(SHARDED_SPECS["attn/c_attn/kernel"]),
                    "Block_0/attn/c_proj/kernel": list(SHARDED_SPECS["attn/c_proj/kernel"]),
                },
                "mesh_shape": {"data": 2, "model": 2},
                # the sharded allocation holds 1/4 of the weight: [128, 512] -> [64, 256]
                "mesh_factor": 4,
            },
        ),
    )


CASES = {c.name: c for c in (_donation_case(), _remat_case(), _batch_case(), _replication_case())}


def folder_key(case, target, variant):
    """``<case>/<target>-<variant>``: the folder of a variant's module on a target, that
    of the variant it is the ``same_as`` of if any."""
    if variant.same_as is None:
        return f"{case.name}/{target}-{variant.name}"
    other_case, other = variant.same_as.split("/")
    twin = CASES[other_case].variant(other)
    assert twin.parameters == variant.parameters and twin.same_as is None, variant
    assert target in CASES[other_case].targets, (variant, target)
    return f"{other_case}/{target}-{other}"


def shared_by(key):
    """``<case>/<variant>`` of every variant whose module is the folder ``key``."""
    return [
        f"{c.name}/{v.name}"
        for c in CASES.values()
        for t in c.targets
        for v in c.variants
        if folder_key(c, t, v) == key
    ]


def module_keys():
    """Every folder's key, ``<case>/<target>-<variant>``, in generation order."""
    return [
        f"{c.name}/{t}-{v.name}"
        for c in CASES.values()
        for t in c.targets
        for v in c.variants
        if v.same_as is None
    ]


def split_key(key):
    case, rest = key.split("/", 1)
    target, variant = rest.split("-", 1)
    return CASES[case], target, CASES[case].variant(variant)


# --------------------------------------------------------------------------------------
# Child: compile one module with dumping on.
# --------------------------------------------------------------------------------------


def child_main(key, dump_dir):
    """Compile one module; print a line with JAX's figures and the versions."""
    case, target, variant = split_key(key)
    assert os.environ.get("XLA_FLAGS") == gen.xla_flags(dump_dir, case.function)
    assert os.environ.get("JAX_PLATFORMS") == "cpu"
    import warnings

    warnings.filterwarnings("ignore")  # e.g. "Some donated buffers were not usable"
    import importlib.metadata

    import jax  # noqa: E402  (imported after XLA_FLAGS on purpose)
    import jaxlib
    import numpy as np
    from jax.sharding import Mesh

    jax.config.update("jax_hlo_source_file_canonicalization_regex", SOURCE_PATH_REGEX)
    topology = gen.TOPOLOGIES[target]
    if target == "cpu":
        devices = jax.devices("cpu")
    else:
        from jax.experimental import topologies

        kwargs = {}
        if topology.chips_per_host_bounds is not None:
            kwargs["chips_per_host_bounds"] = topology.chips_per_host_bounds
        desc = topologies.get_topology_desc(topology_name=topology.name, platform="tpu", **kwargs)
        devices = list(desc.devices)
    n = topology.mesh_shape[0] * topology.mesh_shape[1]
    if len(devices) < n:
        raise SystemExit(f"{key}: {len(devices)} devices, mesh needs {n}")
    mesh = Mesh(np.array(devices[:n]).reshape(topology.mesh_shape), ("data", "model"))
    fn, args, jit_kwargs = gpt_step(mesh, **variant.parameters)
    assert fn.__name__ == case.function, (fn.__name__, case.function)
    start = time.monotonic()
    compiled = jax.jit(fn, **jit_kwargs).lower(*args).compile()
    seconds = time.monotonic() - start
    stats = compiled.memory_analysis()
    figures = {}
    for field in gen.MEMORY_FIELDS:
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
            "flax": importlib.metadata.version("flax"),
            "optax": importlib.metadata.version("optax"),
            "python": platform.python_version(),
        },
        "device_kind": devices[0].device_kind,
        "num_devices": n,
        "compile_seconds": round(seconds, 1),
    }
    print(INFO_TAG + json.dumps(info), flush=True)


# A child process compiles here and stops. The dumps' metadata hold the line numbers of
# the frames above (the program, child_main and this call), not of anything below: the
# parent's part that follows may be edited without changing a dump.
if __name__ == "__main__" and sys.argv[1:2] == ["--child"]:
    if len(sys.argv) != 5 or sys.argv[3] != "--dump-dir" or sys.argv[2] not in module_keys():
        raise SystemExit("usage: --child <module key> --dump-dir <dir>")
    child_main(sys.argv[2], sys.argv[4])
    raise SystemExit(0)


# --------------------------------------------------------------------------------------
# Parent: run a child, keep the main module's files.
# --------------------------------------------------------------------------------------


def run_module(key, out_root, max_folder_bytes):
    """Compile one module in a child process and fill its folder; return seconds taken."""
    case, target, variant = split_key(key)
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="hlotop-proof-dump-") as dump_dir:
        env = dict(os.environ)
        env["JAX_PLATFORMS"] = "cpu"
        env["TPU_SKIP_MDS_QUERY"] = "1"
        env["XLA_FLAGS"] = gen.xla_flags(dump_dir, case.function)
        flag = ALIASED_CHILD if case.name == ALIASED_CASE else "--child"
        cmd = [sys.executable, os.path.abspath(__file__), flag, key, "--dump-dir", dump_dir]
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if proc.returncode != 0:
            sys.stderr.write(proc.stderr[-6000:])
            raise SystemExit("%s failed (exit %d)" % (key, proc.returncode))
        info = None
        for line in proc.stdout.splitlines():
            if line.startswith(INFO_TAG):
                info = json.loads(line[len(INFO_TAG) :])
        if info is None:
            raise SystemExit(f"{key}: no info line from the child")
        prefix, files = gen.pick_main_module(dump_dir, case.function)
        if not files:
            raise SystemExit(f"{key}: no buffer-assignment files in {sorted(os.listdir(dump_dir))}")
        text = prefix + ".txt"
        files = sorted([*files, text])
        size = sum(os.path.getsize(os.path.join(dump_dir, f)) for f in files)
        if size > max_folder_bytes:
            raise SystemExit(f"{key}: {size} bytes of XLA files > {max_folder_bytes}")
        dest = os.path.join(out_root, PROOF, key)
        if os.path.isdir(dest):
            shutil.rmtree(dest)
        os.makedirs(dest)
        for name in files:
            shutil.copyfile(os.path.join(dump_dir, name), os.path.join(dest, name))
            gen.check_file(os.path.join(dest, name))
    flags = gen.xla_flags("DUMP_DIR", case.function)
    record = {
        "case": case.name,
        "variant": variant.name,
        "target": target,
        "function": case.function,
        "description": f"{case.name}: {variant.description}",
        "case_description": case.description,
        "parameters": variant.parameters,
        "variants": shared_by(key),
        "platform": "cpu" if target == "cpu" else "tpu",
        "topology": gen.TOPOLOGIES[target].name,
        "mesh": {"data": gen.TOPOLOGIES[target].mesh_shape[0]}
        | {"model": gen.TOPOLOGIES[target].mesh_shape[1]},
        "num_devices": info["num_devices"],
        "device_kind": info["device_kind"],
        "versions": info["versions"],
        "xla_flags": flags,
        "environment": {"JAX_PLATFORMS": "cpu", "TPU_SKIP_MDS_QUERY": "1", "XLA_FLAGS": flags},
        "dump_dir_note": "DUMP_DIR was a fresh temporary directory",
        **info["memory_analysis"],
    }
    with open(os.path.join(dest, "memory_analysis.json"), "w", encoding="utf-8") as f:
        json.dump(record, f, indent=1, sort_keys=True)
        f.write("\n")
    seconds = time.monotonic() - start
    print(
        "%s: compiled in %.1f s (%.1f s in all); %d files, %d bytes"
        % (key, info["compile_seconds"], seconds, len(files) + 1, folder_bytes(dest)),
        flush=True,
    )
    return seconds


def folder_bytes(folder):
    return sum(os.path.getsize(os.path.join(folder, n)) for n in os.listdir(folder))


# --------------------------------------------------------------------------------------
# What XLA's files say (plain regexes; no hlotop): the manifest's facts.
# --------------------------------------------------------------------------------------

XLA_PEAK_RE = re.compile(r"^  Stack trace breakdown for peak usage: ([\d ]+) bytes$", re.M)
ENTRY_PARAM_RE = re.compile(
    r"^  %(?P<name>\S+) = (?P<shape>\S+) parameter\((?P<number>\d+)\)(?P<rest>.*)$", re.M
)
ALIAS_RE = re.compile(
    r"\{(?P<out>[\d,]*)\}: \((?P<param>\d+), \{(?P<index>[\d,]*)\}(?:, (?P<kind>[a-z-]+))?\)"
)
OP_NAME_RE = re.compile(r'op_name="([^"]*)"')
COPY_OF_RE = re.compile(r"^  %(\S+) = (\S+) copy\(%(\S+)\)", re.M)  # a copy of one operand
SHARDING_RE = re.compile(r"sharding=(\{[^}]*\})")


def _file(folder, suffix):
    for name in sorted(os.listdir(folder)):
        if name.endswith(suffix):
            with open(os.path.join(folder, name), encoding="utf-8") as f:
                return f.read()
    raise SystemExit(f"{folder}: no *{suffix}")


def xla_peak_bytes(folder):
    """The peak the live-range file prints ('Stack trace breakdown for peak usage')."""
    m = XLA_PEAK_RE.search(_file(folder, "-live-range.txt"))
    return int(m.group(1).replace(" ", "")) if m else None


def entry_parameters(hlo):
    """{parameter number: {name, shape, op_name, sharding}} of the ENTRY computation."""
    entry = hlo[hlo.index("\nENTRY ") :]
    entry = entry[: entry.index("\n}\n")]
    out = {}
    for m in ENTRY_PARAM_RE.finditer(entry):
        op_name = OP_NAME_RE.search(m.group("rest"))
        sharding = SHARDING_RE.search(m.group("rest"))
        out[int(m.group("number"))] = {
            "name": m.group("name"),
            "shape": m.group("shape"),
            "op_name": op_name.group(1).replace("\\'", "'") if op_name else None,
            "sharding": sharding.group(1) if sharding else None,
        }
    return out


def input_output_alias(hlo):
    """The header's input_output_alias entries: (output index, parameter number)."""
    header = hlo.split("\n", 1)[0]
    m = re.search(r"input_output_alias=\{(.*?)\}, [a-z_]+=", header)
    if not m:
        return []
    return [
        {
            "output_index": [int(i) for i in a.group("out").split(",") if i],
            "parameter": int(a.group("param")),
        }
        for a in ALIAS_RE.finditer(m.group(1))
    ]


def _pytree_path(path):
    """'Block_0/mlp/c_fc/kernel' -> "['Block_0']['mlp']['c_fc']['kernel']" (an op_name's tail)."""
    return "".join("['%s']" % k for k in path.split("/"))


def module_facts(folder, cases):
    """What the manifest records of one module, from XLA's files in ``folder``; some
    facts only for the modules of some ``cases`` (names)."""
    hlo = _file(folder, "after_optimizations.txt")
    params = entry_parameters(hlo)
    header = hlo.split("\n", 1)[0]
    facts = {
        "xla_peak_bytes": xla_peak_bytes(folder),
        "entry_parameters": len(params),
        "num_partitions": int(m.group(1))
        if (m := re.search(r"num_partitions=(\d+)", header))
        else 1,
    }
    aliases = input_output_alias(hlo)
    facts["input_output_alias_entries"] = len(aliases)
    if "donation" in cases:
        facts["donated_entry_parameters"] = [
            {"number": n, "name": params[n]["name"], "op_name": params[n]["op_name"]}
            for n in sorted({a["parameter"] for a in aliases})
        ]
        facts["entry_parameter_arguments"] = _count_by_argument(params)
    if "replication" in cases:
        tail = _pytree_path(REPLICATED)
        facts["parameter_entries"] = [
            {"number": n, **p}
            for n, p in sorted(params.items())
            if p["op_name"] and p["op_name"].endswith(tail)
        ]
    if ALIASED_CASE in cases:
        names = {p["name"]: n for n, p in params.items()}
        facts["parameter_copies"] = [
            {"copy": copy, "shape": shape, "parameter": names[source]}
            for copy, shape, source in COPY_OF_RE.findall(hlo)
            if source in names
        ]
    if "remat" in cases:
        op_names = OP_NAME_RE.findall(hlo)
        scopes = [s for k in ("attn", "mlp", "block") for s in REMAT_SCOPES[k]]
        for what, prefix in (("forward", forward_prefix), ("rematted", rematted_prefix)):
            facts[f"{what}_instructions"] = {
                s: sum(1 for o in op_names if o.startswith(prefix(s))) for s in scopes
            }
    return facts


def _count_by_argument(params):
    """How many entry parameters each argument (params, opt_state, batch) has."""
    counts = {a: 0 for a in ARGUMENTS}
    for p in params.values():
        for a in ARGUMENTS:
            if (p["op_name"] or "").startswith(a):
                counts[a] += 1
                break
    return counts


# --------------------------------------------------------------------------------------
# The manifest and its rendering.
# --------------------------------------------------------------------------------------


def regenerate_command(keys=()):
    return "/tmp/hlotop-tpuenv/bin/python scripts/generate_proof_dumps.py --out sample_dumps%s" % (
        " --only " + " ".join(keys) if keys else ""
    )


def build_manifest(out_root):
    """The manifest (a JSON-able dict) from the folders on disk under ``<out_root>/proof``."""
    root = os.path.join(out_root, PROOF)
    modules = {}
    for key in module_keys():
        folder = os.path.join(root, key)
        if not os.path.exists(os.path.join(folder, "memory_analysis.json")):
            continue
        case, target, variant = split_key(key)
        with open(os.path.join(folder, "memory_analysis.json"), encoding="utf-8") as f:
            record = json.load(f)
        sharing = shared_by(key)
        modules[key] = {
            "case": case.name,
            "variant": variant.name,
            "variants": sharing,
            "target": target,
            "platform": record["platform"],
            "topology": record["topology"],
            "device_kind": record["device_kind"],
            "num_devices": record["num_devices"],
            "versions": record["versions"],
            "parameters": record["parameters"],
            "memory_analysis": {k: record[k] for k in gen.MEMORY_FIELDS if k in record},
            "files": {
                n: os.path.getsize(os.path.join(folder, n)) for n in sorted(os.listdir(folder))
            },
            **module_facts(folder, {s.split("/")[0] for s in sharing}),
            "regenerate": regenerate_command([key]),
        }
    cases = {}
    for case in CASES.values():
        variants = {}
        for variant in case.variants:
            keys = {t: folder_key(case, t, variant) for t in case.targets}
            variants[variant.name] = {
                "description": variant.description,
                "parameters": variant.parameters,
                "same_as": variant.same_as,
                "folders": {t: k for t, k in keys.items() if k in modules},
            }
        cases[case.name] = {
            "description": case.description,
            "function": case.function,
            "targets": {
                t: {"topology": gen.TOPOLOGIES[t].name, "mesh": list(gen.TOPOLOGIES[t].mesh_shape)}
                for t in case.targets
            },
            "baseline": case.baseline,
            "variants": variants,
            "comparisons": list(case.comparisons),
        }
    return {
        "generator": "scripts/generate_proof_dumps.py",
        "arguments": list(ARGUMENTS),
        "mesh_axes": ["data", "model"],
        "model": {
            "vocab": VOCAB,
            "d_model": D_MODEL,
            "n_heads": N_HEADS,
            "d_ff": D_FF,
            "seq": SEQ,
        },
        "regenerate_all": regenerate_command(),
        "cases": cases,
        "modules": modules,
    }


def _human(n):
    return gen._human(n) if n is not None else "-"


FIGURES = (
    ("argument", "argument_size_in_bytes"),
    ("output", "output_size_in_bytes"),
    ("alias", "alias_size_in_bytes"),
    ("temp", "temp_size_in_bytes"),
    ("JAX peak", "peak_memory_in_bytes"),
)


def render_manifest(manifest):
    out = ["# Proof inputs: programs compiled with and without a change", ""]
    out.append(
        "Generated by `scripts/generate_proof_dumps.py` (dev-only; see its docstring). "
        "hlotop's advice predicts what a change would save (donation, remat, sharding, "
        "batch size); each case below is one program (a train step; for aliased_copy a "
        "small step of its own) compiled as variants that differ in that change only, so a "
        "prediction made on the baseline can be held against the variant measured. Each folder `<case>/<target>-<variant>/` holds XLA's files of "
        "the program's main module (buffer assignment, its split siblings, memory-usage "
        "report, the optimized HLO text) and `memory_analysis.json` (JAX's "
        "`compiled.memory_analysis()`, versions, topology, the variant's parameters). "
        "`manifest.json` says for each case the baseline, what changed, and the argument "
        "indices, entry-parameter names and op_name scopes involved."
    )
    out.append("")
    versions = sorted(
        {json.dumps(m["versions"], sort_keys=True) for m in manifest["modules"].values()}
    )
    out.append(
        "Versions: "
        + "; ".join(
            ", ".join("%s %s" % kv for kv in json.loads(v).items() if kv[1]) for v in versions
        )
        + ". Machine: x86-64 Linux, no accelerator (TPU modules compiled deviceless)."
    )
    out.append("")
    m = manifest["model"]
    out.append(
        "The program: a flax.linen GPT train step (nanoGPT without biases: `wte`, `wpe`, "
        "blocks `Block_<i>` of `ln_1`, `attn` (`c_attn`, `c_proj`), `ln_2`, `mlp` (`c_fc`, "
        "`c_proj`), `ln_f`, head tied to `wte`), vocab %d, d_model %d, %d heads, d_ff %d, "
        "sequence %d; `optax.adamw`; f32 parameters, bf16 compute; "
        "`gpt_train_step(params, opt_state, batch)`; the aliased_copy case's program is "
        "its own (`aliased_update_step`, in its section)."
        % (m["vocab"], m["d_model"], m["n_heads"], m["d_ff"], m["seq"])
    )
    out.append("")
    out.append(
        "Figures in bytes: JAX's `memory_analysis()` (argument, output, alias, temp, peak) "
        "and the peak XLA prints in the live-range file (`Stack trace breakdown for peak "
        "usage: N bytes`, the sum of its `Live ranges at N (peak)` list). On TPU `temp` "
        "and the JAX peak are libtpu's own figures, not derivable from the dump; on CPU "
        "JAX's peak is the static allocations only (shared TPU_DUMPS.md)."
    )
    out.append("")
    for name, case in manifest["cases"].items():
        out.append(f"## {name}\n")
        out.append(case["description"] + ".\n")
        out.append("Baseline: `%s`. Comparisons:\n" % case["baseline"])
        for c in case["comparisons"]:
            extra = {k: v for k, v in c.items() if k not in ("baseline", "changed", "change")}
            out.append(
                "* `%s` -> `%s`: %s (%s)"
                % (c["baseline"], c["changed"], c["change"], json.dumps(extra, sort_keys=True))
            )
        out.append("")
        out.append("| folder | " + " | ".join(f for f, _ in FIGURES) + " | XLA peak | size |")
        out.append("|---|" + "---|" * (len(FIGURES) + 2))
        for variant in case["variants"].values():
            for key in variant["folders"].values():
                mod = manifest["modules"][key]
                out.append(
                    "| `%s/` | " % key
                    + " | ".join(str(mod["memory_analysis"].get(f, "")) for _, f in FIGURES)
                    + " | %s | %s |" % (mod["xla_peak_bytes"], _human(sum(mod["files"].values())))
                )
        out.append("")
        out.extend(_changes(case, manifest["modules"]))
        out.extend(_case_notes(name, case, manifest["modules"]))
    total = sum(sum(m["files"].values()) for m in manifest["modules"].values())
    out.append("## Regenerating\n")
    out.append(
        "From the repository root, with the TPU virtualenv of "
        "`scripts/generate_tpu_dumps.py`'s docstring (never inside the repository): "
        "`python3 -m venv /tmp/hlotop-tpuenv && /tmp/hlotop-tpuenv/bin/pip install "
        '"jax[tpu]==0.10.2" libtpu==0.0.42.1 optax==0.2.8 flax==0.12.8`. Compiles are '
        "deterministic: a rerun writes the same bytes. Line numbers of this script are in "
        "the dumps' metadata: after editing it above the GPT child's branch regenerate "
        "every module, below it the aliased_copy modules. %d modules, "
        "%s in all.\n" % (len(manifest["modules"]), _human(total))
    )
    out.append("```sh")
    out.append("# every module, then the manifest:")
    out.append(manifest["regenerate_all"])
    out.append("# one module (the manifest is rebuilt from the files on disk):")
    out.append(regenerate_command(["donation/v5e_1x1-none"]))
    out.append("# re-render manifest.json and MANIFEST.md only (no JAX needed):")
    out.append("python3 scripts/generate_proof_dumps.py --out sample_dumps --manifest-only")
    out.append("# the tests of these inputs:")
    out.append(
        "PYTHONPATH=$PWD/tui .venv/bin/python -m pytest -q -p no:cacheprovider "
        "tests/test_proof_samples.py"
    )
    out.append("```")
    out.append("")
    return "\n".join(out)


def _changes(case, modules):
    """The measured change of each comparison: changed minus baseline, in bytes."""
    out = ["Measured changes (changed minus baseline, bytes):\n"]
    out.append("| comparison | target | " + " | ".join(f for f, _ in FIGURES) + " | XLA peak |")
    out.append("|---|---|" + "---|" * (len(FIGURES) + 1))
    for c in case["comparisons"]:
        for target in case["targets"]:
            keys = [case["variants"][c[v]]["folders"].get(target) for v in ("baseline", "changed")]
            if None in keys:
                continue
            base, changed = (modules[k] for k in keys)
            deltas = [
                changed["memory_analysis"][f] - base["memory_analysis"][f] for _, f in FIGURES
            ]
            deltas.append(changed["xla_peak_bytes"] - base["xla_peak_bytes"])
            out.append(
                "| `%s` -> `%s` | %s | " % (c["baseline"], c["changed"], target)
                + " | ".join("%+d" % d for d in deltas)
                + " |"
            )
    out.append("")
    return out


def _case_notes(name, case, modules):
    """A few lines per case: the facts a test or an advice reads from the manifest."""
    out = []
    for variant in case["variants"].values():
        for key in variant["folders"].values():
            mod = modules[key]
            if name == "donation":
                out.append(
                    "* `%s/`: %d input_output_alias entries (entry parameters by argument: %s)"
                    % (
                        key,
                        mod["input_output_alias_entries"],
                        ", ".join("%s %d" % kv for kv in mod["entry_parameter_arguments"].items()),
                    )
                )
            elif name == "remat":
                out.append(
                    "* `%s/`: instructions by scope, forward / rematerialised: %s"
                    % (
                        key,
                        ", ".join(
                            "`%s` %d / %d" % (s, n, mod["rematted_instructions"][s])
                            for s, n in mod["forward_instructions"].items()
                        ),
                    )
                )
            elif name == ALIASED_CASE:
                copies = mod["parameter_copies"]
                out.append(
                    "* `%s/`: %s"
                    % (
                        key,
                        "; ".join(
                            "`%s` = copy of entry parameter %d (`%s`)"
                            % (c["copy"], c["parameter"], c["shape"])
                            for c in copies
                        )
                        or "no copy of an entry parameter",
                    )
                )
            elif name == "replication":
                out.append(
                    "* `%s/` (num_partitions=%d): %s"
                    % (
                        key,
                        mod["num_partitions"],
                        "; ".join(
                            "`%s` parameter(%d) `%s` sharding=`%s`"
                            % (p["name"], p["number"], p["shape"], p["sharding"])
                            for p in mod["parameter_entries"]
                        ),
                    )
                )
    if out:
        out.append("")
    return out


def write_manifest(out_root):
    manifest = build_manifest(out_root)
    root = os.path.join(out_root, PROOF)
    os.makedirs(root, exist_ok=True)
    with open(os.path.join(root, "manifest.json"), "w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")
    with open(os.path.join(root, "MANIFEST.md"), "w", encoding="utf-8") as f:
        f.write(render_manifest(manifest))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default="sample_dumps", help="output root (default: %(default)s)")
    p.add_argument("--only", nargs="+", choices=module_keys(), help="modules (default: all)")
    p.add_argument(
        "--max-folder-bytes",
        type=int,
        default=1_500_000,
        help="fail if a module's XLA files pass this (default: %(default)s)",
    )
    p.add_argument("--manifest-only", action="store_true", help="only rebuild the manifest")
    args = p.parse_args(argv)
    out_root = os.path.abspath(args.out)
    if not args.manifest_only:
        start = time.monotonic()
        for key in args.only or module_keys():
            run_module(key, out_root, args.max_folder_bytes)
            write_manifest(out_root)  # current after every module (a run may be stopped)
        print("generated in %.0f s" % (time.monotonic() - start), flush=True)
    write_manifest(out_root)


# --------------------------------------------------------------------------------------
# The aliased_copy case. Its program is not the GPT step: it is defined here, and compiled
# by a child branch of its own at the end, below the GPT child's branch, so that the GPT
# dumps' metadata keep their line numbers; an edit from here on changes only its dumps.
# --------------------------------------------------------------------------------------

ALIASED_CASE = "aliased_copy"
ALIASED_CHILD = "--child-aliased"
# f32[8192, 8192], 256 MiB: more than a v5e's VMEM, so that memory-space assignment
# leaves it and its copy in HBM (at 4 MiB the TPU program prefetched them all to S(1)).
ALIASED_N = 8192


def aliased_update_step(mesh, *, reads_old):
    """(fn, abstract args, jit kwargs) of a step that updates its donated argument ``x``
    in place (``x.at[0].set(0)``, returned in ``x``'s place: aliased) and returns a
    sum: of the updated times the old ``x`` (``reads_old``: the old value is read after
    the update, so XLA keeps a copy of it) or of the updated squared (it is not)."""
    import jax
    import jax.numpy as jnp
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    x = jax.ShapeDtypeStruct((ALIASED_N, ALIASED_N), jnp.float32, sharding=NamedSharding(mesh, P()))

    def aliased_update_step(x):
        y = x.at[0].set(0.0)
        return y, (y * x if reads_old else y * y).sum()

    return aliased_update_step, (x,), {"donate_argnums": (0,)}


def _aliased_copy_case():
    return Case(
        ALIASED_CASE,
        "a step that updates its donated f32[8192,8192] argument x in place "
        "(x.at[0].set(0), returned in x's place: an output aliased to x) and returns a sum; "
        "`reads_old` sums the updated times the old x (the old value read after the update: "
        "XLA keeps a copy of x), `updated_only` the updated squared (no late read, no copy)",
        ("v5e_1x1", "cpu"),
        "reads_old",
        (
            Variant(
                "reads_old",
                "(y * x).sum(): the old x read after the update",
                {"reads_old": True},
            ),
            Variant(
                "updated_only",
                "(y * y).sum(): only the updated value read",
                {"reads_old": False},
            ),
        ),
        (
            {
                "baseline": "reads_old",
                "changed": "updated_only",
                "change": "the old value no longer read after the update",
                "donated_argnums": [0],
                "donated_arguments": ["x"],
            },
        ),
        function="aliased_update_step",
    )


CASES[ALIASED_CASE] = _aliased_copy_case()


def aliased_child_main(key, dump_dir):
    """Compile one module of the aliased_copy case (as :func:`child_main` does the GPT
    step's); print a line with JAX's figures and the versions."""
    case, target, variant = split_key(key)
    assert os.environ.get("XLA_FLAGS") == gen.xla_flags(dump_dir, case.function)
    assert os.environ.get("JAX_PLATFORMS") == "cpu"
    import warnings

    warnings.filterwarnings("ignore")
    import importlib.metadata

    import jax  # noqa: E402  (imported after XLA_FLAGS on purpose)
    import jaxlib
    import numpy as np
    from jax.sharding import Mesh

    jax.config.update("jax_hlo_source_file_canonicalization_regex", SOURCE_PATH_REGEX)
    topology = gen.TOPOLOGIES[target]
    if target == "cpu":
        devices = jax.devices("cpu")
    else:
        from jax.experimental import topologies

        desc = topologies.get_topology_desc(
            topology_name=topology.name,
            platform="tpu",
            chips_per_host_bounds=topology.chips_per_host_bounds,
        )
        devices = list(desc.devices)
    mesh = Mesh(np.array(devices[:1]).reshape(1, 1), ("data", "model"))
    fn, args, jit_kwargs = aliased_update_step(mesh, **variant.parameters)
    assert fn.__name__ == case.function, (fn.__name__, case.function)
    start = time.monotonic()
    compiled = jax.jit(fn, **jit_kwargs).lower(*args).compile()
    seconds = time.monotonic() - start
    stats = compiled.memory_analysis()
    figures = {f: v for f in gen.MEMORY_FIELDS if isinstance(v := getattr(stats, f, None), int)}
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
            "flax": importlib.metadata.version("flax"),
            "optax": importlib.metadata.version("optax"),
            "python": platform.python_version(),
        },
        "device_kind": devices[0].device_kind,
        "num_devices": 1,
        "compile_seconds": round(seconds, 1),
    }
    print(INFO_TAG + json.dumps(info), flush=True)


if __name__ == "__main__" and sys.argv[1:2] == [ALIASED_CHILD]:
    if len(sys.argv) != 5 or sys.argv[3] != "--dump-dir" or sys.argv[2] not in module_keys():
        raise SystemExit(f"usage: {ALIASED_CHILD} <module key> --dump-dir <dir>")
    aliased_child_main(sys.argv[2], sys.argv[4])
    raise SystemExit(0)


if __name__ == "__main__":
    main()
