#!/usr/bin/env python3
"""Generate real XLA buffer-assignment dumps with JAX on the CPU (dev-only tool).

This script is NOT a runtime dependency of hlotop. It produces the test inputs in
``sample_dumps/jax/``: it runs a few small, deterministic JAX programs on the CPU with
``XLA_FLAGS=--xla_dump_to=<tmpdir>``, then copies only the buffer-assignment-related text
files of each program's main module, keeping XLA's own file names:

* ``*-buffer-assignment.txt``           (every era)
* ``*-buffer-assignment-values.txt``    (split layout, jax >= 0.10.0)
* ``*-live-range.txt``                  (split layout, jax >= 0.10.0)
* ``*-memory-usage-report.txt``         (jax >= 0.4.35)

The HLO module ``.txt`` is kept only with ``--with-module-text``; ``.pb`` files never.

Output: ``<out>/jax-<jax version>/<program>/<XLA file name>``. The "main module" of a
program is the largest set of buffer-assignment files whose module name contains
``jit_<function name>`` (e.g. ``jit_train_step``).

Usage (inside a virtualenv that has some JAX version; never create it inside the repo)::

    python3 -m venv /tmp/jaxenv-0.10.2
    /tmp/jaxenv-0.10.2/bin/pip install jax==0.10.2 jaxlib==0.10.2
    /tmp/jaxenv-0.10.2/bin/python scripts/generate_dumps.py --out sample_dumps/jax
    /tmp/jaxenv-0.10.2/bin/python scripts/generate_dumps.py --out sample_dumps/jax \\
        --programs mlp_train scan_layers

    # Re-render sample_dumps/jax/MANIFEST.md from manifest.json and the files on disk
    # (needs no JAX at all):
    python3 scripts/generate_dumps.py --out sample_dumps/jax --manifest-only

Programs (``--programs``, default: all):

* ``mlp_train``       jitted SGD train step of a 4-layer MLP (grad + update), params donated.
* ``scan_layers``     ``lax.scan`` over stacked layer weights with a ``jax.checkpoint``-ed
                      body, plus a ``lax.fori_loop`` in the update (while loops in HLO).
* ``transformer_big`` train step of a small transformer with many Python-unrolled layers,
                      so the buffer-assignment text is a few MB (``--big-layers``).
* ``tuple_outputs``   returns a pytree of several arrays; the state argument is donated so
                      outputs alias parameters.

Each program runs in a fresh child process (so ``XLA_FLAGS`` is set before jax is
imported, and each program gets its own dump directory). The script sticks to APIs that
exist in jax 0.4.x .. 0.10.x (``jax.tree_util``, ``jax.checkpoint``, ``lax.scan``,
``lax.fori_loop``, ``donate_argnums``; parameters come from numpy, not ``jax.random``).

The parent also maintains ``<out>/manifest.json`` (versions of jax/jaxlib/numpy/python
per kept dump) and renders ``<out>/MANIFEST.md``, classifying each dump by layout
(combined/split), live-range peak variant (V1..V4), glued records (2024 era) and
memory-usage-report era (A/B/none); see shared FORMATS.md sections 1, 2, 5, 7.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile

PROGRAMS = ("mlp_train", "scan_layers", "transformer_big", "tuple_outputs")

# Jitted function name of each program; the module is called "jit_<name>".
FUNCTION_NAMES = {
    "mlp_train": "train_step",
    "scan_layers": "scan_train_step",
    "transformer_big": "transformer_train_step",
    "tuple_outputs": "tuple_update",
}

# What was run for sample_dumps/jax (rendered into MANIFEST.md as the regeneration
# recipe): (jax version, extra pip requirements, programs). See PIN_NOTE for the pins.
SMALL = ("mlp_train", "scan_layers", "tuple_outputs")
RECIPES = (
    ("0.10.2", (), PROGRAMS),
    ("0.9.2", (), PROGRAMS),
    ("0.9.0", (), SMALL),
    ("0.7.2", (), SMALL),
    ("0.6.2", (), SMALL),
    ("0.6.0", (), SMALL),
    ("0.5.3", (), SMALL),
    ("0.4.36", (), SMALL),
    ("0.4.35", (), SMALL),
    ("0.4.31", ("numpy<2",), SMALL),
    ("0.4.23", ("numpy<2", "ml_dtypes<0.5", "scipy<1.13"), SMALL),
)

PIN_NOTE = (
    "jax 0.4.23 needs `numpy<2` (it imports `np.trapz`, gone in numpy 2); its "
    "`ml_dtypes<0.5` and `scipy<1.13` pins are precautionary (not shown necessary). "
    "The `numpy<2` pin for 0.4.31 is precautionary too: 0.4.31 with numpy 2 also ran "
    "(its mlp_train dump had the same size). Every other version installs and runs "
    "with the newest numpy/ml_dtypes/scipy on Python 3.11."
)

# Things seen in these dumps that FORMATS.md does not say, or says differently.
NOTES = (
    "Era-A memory-usage reports before jax 0.8.1 (here 0.4.35 .. 0.7.2) change from run "
    "to run: both the order of the shapes in a `shapes_list` and the order of rows of "
    "equal size are hash order. Two runs of jax 0.7.2 mlp_train gave "
    "`0; 2; f32[256,256], f32[64,256]` and `0; 2; f32[64,256], f32[256,256]`, and the "
    "32.0KiB rows at offsets 262144/327680/360448 in different orders. The 0.9.0+ reports "
    "were identical across runs (sorted since jax 0.8.1, FORMATS.md §7). The kept "
    "jax-0.7.2/mlp_train report is from an earlier run of the same program than its "
    "buffer-assignment file (tests/test_memory_report.py asserts that run's order).",
    "From jax 0.9.0 (0.8.x not sampled) the instruction metadata in ` from instruction:` "
    'lines is `metadata={op_name="..." stack_frame_id=N}`: no `source_file`, '
    "`source_line` or `source_end_line`/`source_column` any more (0.7.2 has all of them).",
    "Stack-trace tree labels: `params['w']` (scan_layers) is split into `params` / `w`, but "
    "`params['layers'][0]['attn']['bqkv']` (transformer_big) stays ONE label: a label with "
    "an integer subscript is not split.",
    "Entry parameter names are MHLO-style `Arg_0.1` up to jax 0.6.2 and pytree-path style "
    "`state__count__.1`, `params__layers___0___attn____bo__.1` from 0.7.2 (their op_name "
    "is CEscaped: `op_name=\"state[\\'count\\']\"`).",
    "V1 peak lists repeat a tuple instruction once per live value, e.g. three lines "
    "`    wide.wide.wide.arg_tuple.5: 56 bytes` in jax-0.4.36/scan_layers.",
    "A donated parameter allocation can also hold unrelated temporaries, e.g. jax-0.10.2 "
    "tuple_outputs `allocation 2: size 16384, parameter 1, ...` holds "
    "`<100 convert_divide_fusion.1 @0> (size=4,offset=0): f32[]`.",
    "From-instruction lines can be long: 9770 characters for the tuple of all parameters "
    "in transformer_big (16 layers; ~19 KB with 32 layers).",
    "Module ids: 0.4.23 files are `module_0000.*`, 0.4.31 to 0.9.2 `module_0001.*`, and "
    "0.10.2 higher ids (`module_0004`..`module_0016`): ids count modules that were "
    "compiled but not dumped (`--xla_dump_hlo_module_re`), so never rely on the id.",
)

KEEP_SUFFIXES = (
    "-buffer-assignment.txt",
    "-buffer-assignment-values.txt",
    "-live-range.txt",
    "-memory-usage-report.txt",
)

# module_0012.jit_train_step.cpu_after_optimizations-buffer-assignment.txt
FILE_RE = re.compile(
    r"^(?:\d+\.)?module_(?P<id>\d+)(?:\.(?P<name>.+?))?"
    r"\.(?P<suffix>[A-Za-z0-9_.]*after_optimizations)"
    r"(?P<tail>" + "|".join(re.escape(t) for t in KEEP_SUFFIXES) + r")$"
)


# --------------------------------------------------------------------------------------
# The JAX programs (run in the child process only).
# --------------------------------------------------------------------------------------


def _rng():
    import numpy as np

    return np.random.RandomState(0)


def _dense(rng, n_in, n_out, scale=None):
    import numpy as np

    scale = scale if scale is not None else 1.0 / np.sqrt(n_in)
    w = (rng.standard_normal((n_in, n_out)) * scale).astype(np.float32)
    b = np.zeros((n_out,), np.float32)
    return w, b


def run_mlp_train(args):
    import jax
    import jax.numpy as jnp
    import numpy as np

    rng = _rng()
    sizes = [64, 256, 256, 128, 10]
    params = [_dense(rng, a, b) for a, b in zip(sizes[:-1], sizes[1:], strict=False)]
    x = rng.standard_normal((32, sizes[0])).astype(np.float32)
    labels = np.arange(32, dtype=np.int32) % sizes[-1]

    def loss_fn(params, x, labels):
        h = x
        for w, b in params[:-1]:
            h = jax.nn.relu(jnp.dot(h, w) + b)
        w, b = params[-1]
        logits = jnp.dot(h, w) + b
        logp = jax.nn.log_softmax(logits)
        onehot = jax.nn.one_hot(labels, logits.shape[-1], dtype=logp.dtype)
        return -jnp.mean(jnp.sum(onehot * logp, axis=-1))

    def train_step(params, x, labels):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, labels)
        new_params = jax.tree_util.tree_map(lambda p, g: p - 0.01 * g, params, grads)
        return new_params, loss

    step = jax.jit(train_step, donate_argnums=(0,))
    params = jax.tree_util.tree_map(jnp.asarray, params)
    for _ in range(2):
        params, loss = step(params, x, labels)
    return float(loss)


def run_scan_layers(args):
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax import lax

    rng = _rng()
    n_layers, d, batch = 6, 128, 16
    ws = (rng.standard_normal((n_layers, d, d)) / np.sqrt(d)).astype(np.float32)
    bs = np.zeros((n_layers, d), np.float32)
    params = {"w": ws, "b": bs}
    x = rng.standard_normal((batch, d)).astype(np.float32)
    y = rng.standard_normal((batch, d)).astype(np.float32)

    @jax.checkpoint
    def layer(h, wb):
        w, b = wb
        return jnp.tanh(jnp.dot(h, w) + b) + h

    def body(h, wb):
        return layer(h, wb), jnp.sum(h * h)

    def loss_fn(params, x, y):
        h, norms = lax.scan(body, x, (params["w"], params["b"]))
        return jnp.mean((h - y) ** 2) + 1e-4 * jnp.sum(norms)

    def scan_train_step(params, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)

        # A few iterations of a fixed-point rescaling of the gradients, as a while loop
        # that is not differentiated.
        def rescale(i, g):
            n = jnp.sqrt(jnp.sum(g["w"] * g["w"]) + jnp.sum(g["b"] * g["b"]) + 1e-6)
            f = jnp.minimum(1.0, 1.0 / n) * 0.5 + 0.5
            return jax.tree_util.tree_map(lambda a: a * f, g)

        grads = lax.fori_loop(0, 3, rescale, grads)
        new_params = jax.tree_util.tree_map(lambda p, g: p - 0.05 * g, params, grads)
        return new_params, loss

    step = jax.jit(scan_train_step)
    params = jax.tree_util.tree_map(jnp.asarray, params)
    for _ in range(2):
        params, loss = step(params, x, y)
    return float(loss)


def run_transformer_big(args):
    import jax
    import jax.numpy as jnp
    import numpy as np

    rng = _rng()
    n_layers = args.big_layers
    vocab, d, n_heads, seq, batch, d_ff = 128, 64, 4, 32, 2, 128
    dh = d // n_heads

    def ln_params():
        return {"g": np.ones((d,), np.float32), "b": np.zeros((d,), np.float32)}

    layers = []
    for _ in range(n_layers):
        wqkv, bqkv = _dense(rng, d, 3 * d)
        wo, bo = _dense(rng, d, d)
        w1, b1 = _dense(rng, d, d_ff)
        w2, b2 = _dense(rng, d_ff, d)
        layers.append(
            {
                "ln1": ln_params(),
                "attn": {"wqkv": wqkv, "bqkv": bqkv, "wo": wo, "bo": bo},
                "ln2": ln_params(),
                "mlp": {"w1": w1, "b1": b1, "w2": w2, "b2": b2},
            }
        )
    params = {
        "embed": (rng.standard_normal((vocab, d)) * 0.02).astype(np.float32),
        "pos": (rng.standard_normal((seq, d)) * 0.02).astype(np.float32),
        "layers": layers,
        "ln_f": ln_params(),
    }
    tokens = (np.arange(batch * seq, dtype=np.int32).reshape(batch, seq) * 7) % vocab
    targets = np.roll(tokens, -1, axis=1)

    def layer_norm(p, x):
        mu = jnp.mean(x, axis=-1, keepdims=True)
        var = jnp.mean((x - mu) ** 2, axis=-1, keepdims=True)
        return (x - mu) * jax.lax.rsqrt(var + 1e-5) * p["g"] + p["b"]

    mask = np.tril(np.ones((seq, seq), dtype=bool))

    def attention(p, x):
        qkv = jnp.dot(x, p["wqkv"]) + p["bqkv"]
        q, k, v = jnp.split(qkv, 3, axis=-1)

        def heads(t):
            return t.reshape(batch, seq, n_heads, dh).transpose(0, 2, 1, 3)

        q, k, v = heads(q), heads(k), heads(v)
        s = jnp.einsum("bhqd,bhkd->bhqk", q, k) / np.sqrt(dh).astype(np.float32)
        s = jnp.where(mask, s, -1e9)
        a = jax.nn.softmax(s, axis=-1)
        o = jnp.einsum("bhqk,bhkd->bhqd", a, v)
        o = o.transpose(0, 2, 1, 3).reshape(batch, seq, d)
        return jnp.dot(o, p["wo"]) + p["bo"]

    def mlp(p, x):
        return jnp.dot(jax.nn.gelu(jnp.dot(x, p["w1"]) + p["b1"]), p["w2"]) + p["b2"]

    def loss_fn(params, tokens, targets):
        h = params["embed"][tokens] + params["pos"]
        for lp in params["layers"]:  # unrolled on purpose: a big HLO module
            h = h + attention(lp["attn"], layer_norm(lp["ln1"], h))
            h = h + mlp(lp["mlp"], layer_norm(lp["ln2"], h))
        h = layer_norm(params["ln_f"], h)
        logits = jnp.dot(h, params["embed"].T)
        logp = jax.nn.log_softmax(logits)
        onehot = jax.nn.one_hot(targets, vocab, dtype=logp.dtype)
        return -jnp.mean(jnp.sum(onehot * logp, axis=-1))

    def transformer_train_step(params, tokens, targets):
        loss, grads = jax.value_and_grad(loss_fn)(params, tokens, targets)
        new_params = jax.tree_util.tree_map(lambda p, g: p - 1e-3 * g, params, grads)
        return new_params, loss

    step = jax.jit(transformer_train_step, donate_argnums=(0,))
    params = jax.tree_util.tree_map(jnp.asarray, params)
    params, loss = step(params, tokens, targets)
    return float(loss)


def run_tuple_outputs(args):
    import jax
    import jax.numpy as jnp
    import numpy as np

    rng = _rng()
    state = {
        "count": np.zeros((), np.int32),
        "mean": np.zeros((256,), np.float32),
        "m2": np.zeros((256,), np.float32),
        "hist": np.zeros((16, 256), np.float32),
    }
    x = rng.standard_normal((64, 256)).astype(np.float32)

    def tuple_update(state, x):
        # Welford-style running statistics: every state leaf is rewritten in place (the
        # state is donated), plus a few fresh outputs in a nested pytree.
        count = state["count"] + x.shape[0]
        batch_mean = jnp.mean(x, axis=0)
        delta = batch_mean - state["mean"]
        mean = state["mean"] + delta * (x.shape[0] / count)
        m2 = state["m2"] + jnp.sum((x - batch_mean) ** 2, axis=0)
        hist = jnp.roll(state["hist"], 1, axis=0).at[0].set(batch_mean)
        new_state = {"count": count, "mean": mean, "m2": m2, "hist": hist}
        var = m2 / count
        stats = (jnp.max(x, axis=0), jnp.min(x, axis=0), (var, jnp.sqrt(var)))
        return new_state, stats, x * 2.0

    step = jax.jit(tuple_update, donate_argnums=(0,))
    state = jax.tree_util.tree_map(jnp.asarray, state)
    for _ in range(2):
        state, stats, y = step(state, x)
    return float(stats[2][0][0])


RUNNERS = {
    "mlp_train": run_mlp_train,
    "scan_layers": run_scan_layers,
    "transformer_big": run_transformer_big,
    "tuple_outputs": run_tuple_outputs,
}


def child_main(args):
    """Run one program with dumping enabled; print a JSON line with versions."""
    fn = FUNCTION_NAMES[args.child]
    os.environ["JAX_PLATFORMS"] = "cpu"
    os.environ["XLA_FLAGS"] = " ".join(
        [
            "--xla_dump_to=" + args.dump_dir,
            "--xla_dump_hlo_as_text",
            # Only dump the program's own module (and not helper jits such as
            # jit_convert_element_type); the parent re-checks the names anyway.
            "--xla_dump_hlo_module_re=.*jit_" + fn + ".*",
        ]
    )
    import warnings

    warnings.filterwarnings("ignore")  # e.g. "Some donated buffers were not usable"
    import jax  # noqa: E402  (imported after XLA_FLAGS on purpose)
    import jaxlib
    import numpy as np

    try:
        jax.config.update("jax_platforms", "cpu")
    except Exception:  # older jax: JAX_PLATFORMS env var is enough
        pass
    result = RUNNERS[args.child](args)
    info = {
        "program": args.child,
        "function": fn,
        "jax": jax.__version__,
        "jaxlib": getattr(jaxlib, "__version__", None) or jax.lib.__version__,
        "numpy": np.__version__,
        "python": platform.python_version(),
        "backend": jax.default_backend(),
        "result": result,
    }
    print("GENERATE_DUMPS_INFO " + json.dumps(info), flush=True)


# --------------------------------------------------------------------------------------
# Parent: run children, pick the main module, copy files, keep the manifest.
# --------------------------------------------------------------------------------------


def pick_main_module(dump_dir, fn):
    """Return the list of file names of the main module's buffer-assignment set."""
    groups = {}
    for name in os.listdir(dump_dir):
        m = FILE_RE.match(name)
        if not m or m.group("name") is None:
            continue
        if "jit_" + fn not in m.group("name"):
            continue
        key = (m.group("id"), m.group("name"), m.group("suffix"))
        groups.setdefault(key, []).append(name)
    if not groups:
        return []

    def total(key):
        return sum(os.path.getsize(os.path.join(dump_dir, f)) for f in groups[key])

    best = max(groups, key=lambda k: (total(k), k))
    return sorted(groups[best])


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
    elif name.endswith("_after_optimizations.txt"):
        ok = head.startswith("HloModule ")
    else:
        ok = False
    if not ok:
        raise SystemExit(f"unexpected content in {path}: {head!r}")


def run_program(program, out_root, args):
    fn = FUNCTION_NAMES[program]
    with tempfile.TemporaryDirectory(prefix="hlotop-dump-") as dump_dir:
        cmd = [
            sys.executable,
            os.path.abspath(__file__),
            "--child",
            program,
            "--dump-dir",
            dump_dir,
            "--big-layers",
            str(args.big_layers),
        ]
        env = dict(os.environ)
        env.pop("XLA_FLAGS", None)
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if proc.returncode != 0:
            sys.stderr.write(proc.stderr[-4000:])
            raise SystemExit("%s failed (exit %d)" % (program, proc.returncode))
        info = None
        for line in proc.stdout.splitlines():
            if line.startswith("GENERATE_DUMPS_INFO "):
                info = json.loads(line[len("GENERATE_DUMPS_INFO ") :])
        if info is None:
            raise SystemExit(f"{program}: no info line from child")
        files = pick_main_module(dump_dir, fn)
        if not files:
            raise SystemExit(
                f"{program}: no buffer-assignment files for jit_{fn} in {dump_dir}: {sorted(os.listdir(dump_dir))}"
            )
        dest = os.path.join(out_root, "jax-" + info["jax"], program)
        if os.path.isdir(dest):
            shutil.rmtree(dest)
        os.makedirs(dest)
        if args.with_module_text:
            # The module's own HLO text: since jax 0.9 its header holds the stack-frame
            # tables that the metadata's stack_frame_id refers to.
            prefixes = {
                f.split("-buffer-assignment")[0] for f in files if "-buffer-assignment" in f
            }
            files = sorted(
                set(files)
                | {
                    p + ".txt"
                    for p in prefixes
                    if os.path.exists(os.path.join(dump_dir, p + ".txt"))
                }
            )
        for name in files:
            shutil.copyfile(os.path.join(dump_dir, name), os.path.join(dest, name))
            check_file(os.path.join(dest, name))
        info["files"] = files
        info["dumped_modules"] = sorted(
            {m.group("name") or "?" for m in map(FILE_RE.match, os.listdir(dump_dir)) if m}
        )
        print(
            "{} jax {}: {}".format(
                program,
                info["jax"],
                ", ".join(
                    "%s (%d bytes)" % (f, os.path.getsize(os.path.join(dest, f))) for f in files
                ),
            )
        )
        return info


def load_manifest(out_root):
    path = os.path.join(out_root, "manifest.json")
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    return {"dumps": {}}


def save_manifest(out_root, manifest):
    with open(os.path.join(out_root, "manifest.json"), "w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")


# --------------------------------------------------------------------------------------
# Classification of a kept dump (see FORMATS.md) and MANIFEST.md rendering.
# --------------------------------------------------------------------------------------

GLUED_RE = re.compile(
    r" from instruction: .*<\d+ [A-Za-z0-9_.\-]+(\{[\d,]*\})?( \(phi\))?( @\d+)?>$"
)


def classify(dir_path, files):
    texts = {}
    for name in files:
        with open(os.path.join(dir_path, name), encoding="utf-8") as f:
            texts[name] = f.read()
    ba = next(t for n, t in texts.items() if n.endswith("-buffer-assignment.txt"))
    values = next(
        (t for n, t in texts.items() if n.endswith("-buffer-assignment-values.txt")), None
    )
    live = next((t for n, t in texts.items() if n.endswith("-live-range.txt")), None)
    report = next((t for n, t in texts.items() if n.endswith("-memory-usage-report.txt")), None)
    split = values is not None or live is not None or "\nUsed values:\n" not in ba
    if not split:
        values = ba
        live = ba[ba.index("\nHloLiveRange") :] if "\nHloLiveRange" in ba else ""
    values = values or ""
    live = live or ""

    # Peak variant from the first peak line.
    variant = "?"
    lines = live.split("\n")
    for i, line in enumerate(lines):
        if line.startswith("  Live ranges at ") and line.endswith(" (peak):"):
            peak = lines[i + 1] if i + 1 < len(lines) else ""
            if not peak.startswith("    "):
                variant = "empty peak"
            elif "(cumulative:" in peak:
                variant = "V4" if "\n  Stack trace breakdown for peak usage:" in live else "V3"
            elif re.match(r"^    \S+\{[\d,]*\}: \d+ bytes$", peak):
                variant = "V2"
            else:
                variant = "V1"
            break

    vlines = values.split("\n")
    glued = sum(
        1
        for i, line in enumerate(vlines[:-1])
        if vlines[i + 1] == " positions:" and GLUED_RE.search(line)
    )
    records = sum(1 for line in vlines if line == " positions:")
    from_lines = [line for line in vlines if line.startswith(" from instruction:")]
    operand_shapes = any(
        re.search(r"\((?:[a-z0-9]+\[[^\]]*\](?:\{[^}]*\})? %)", line) for line in from_lines
    )
    none_uses = "\n  (none)\n" in values
    if report is None:
        era = "none"
    elif report.startswith("Memory Space:"):
        era = "B"
    else:
        era = "A"
    two_blank = (not split) and "\n\n\nHloLiveRange" in ba
    if any(line.startswith(" from instruction:%") for line in from_lines):
        from_style = "`:%`"
    elif from_lines:
        from_style = "`: %`"
    else:
        from_style = "none"
    return {
        "layout": "split" if split else "combined",
        "peak_variant": variant,
        "records": records,
        "glued_records": glued,
        "operand_shapes_in_from_instruction": operand_shapes,
        "from_instruction_style": from_style,
        "none_uses": none_uses,
        "report_era": era,
        "blank_lines_before_live_range": (2 if two_blank else 1) if not split else None,
        "bytes": sum(len(t.encode("utf-8")) for t in texts.values()),
    }


def render_manifest(out_root, manifest):
    rows = []
    for key in sorted(manifest["dumps"], key=_version_sort_key):
        info = manifest["dumps"][key]
        d = os.path.join(out_root, key)
        if not os.path.isdir(d):
            continue
        c = classify(d, info["files"])
        info["classification"] = c
        rows.append((key, info, c))
    save_manifest(out_root, manifest)

    out = []
    out.append("# Real XLA buffer-assignment dumps generated with JAX on the CPU\n")
    out.append(
        "Generated by `scripts/generate_dumps.py` (dev-only; not a runtime dependency of "
        "hlotop). Each directory `jax-<version>/<program>/` holds only the "
        "buffer-assignment-related text files of the program's main module, with XLA's "
        "own file names. Machine: x86-64 Linux CPU, 2 cores, Python {}. "
        "Machine-readable details (versions, file lists, classification) are in "
        "`manifest.json`. Section numbers refer to shared `FORMATS.md`.\n".format(
            sorted({i["python"] for _, i, _ in rows} or {"?"})[0]
        )
    )
    out.append(
        "Columns: *layout* combined (one `-buffer-assignment.txt` with values and live "
        "range) or split (jax >= 0.10: `-buffer-assignment.txt`, "
        "`-buffer-assignment-values.txt`, `-live-range.txt`); *peak* live-range peak "
        "variant V1..V4 (§5); *glued* number of value records whose "
        "` from instruction:` line lacks its newline, so the next record's "
        "`<id name @c>` is glued onto it (2024 era, §3.6) / number of records; "
        "*from* how a record's instruction line starts (` from instruction:%` with no "
        "space before jax 0.4.24, ` from instruction: %` after); "
        "*opnd shapes* whether operand shapes are printed inside from-instruction "
        "text (before jax 0.5.3); *(none)* whether empty uses print `  (none)`; "
        "*report* memory-usage-report era (§7: A = sorted allocations, "
        "B = per memory space, none = no report file); *size* total bytes of the "
        "kept files.\n"
    )
    out.append(
        "| path | jax / jaxlib | program | layout | peak | glued | from | opnd shapes "
        "| (none) | report | size |"
    )
    out.append("|---|---|---|---|---|---|---|---|---|---|---|")
    for key, info, c in rows:
        out.append(
            "| `%s/` | %s / %s | %s | %s | %s | %d/%d | %s | %s | %s | %s | %s |"
            % (
                key,
                info["jax"],
                info["jaxlib"],
                info["program"],
                c["layout"],
                c["peak_variant"],
                c["glued_records"],
                c["records"],
                c["from_instruction_style"],
                "yes" if c["operand_shapes_in_from_instruction"] else "no",
                "yes" if c["none_uses"] else "no",
                c["report_era"],
                _human(c["bytes"]),
            )
        )
    out.append("")
    out.append("Files per dump:\n")
    for key, info, c in rows:
        extra = ""
        if c["blank_lines_before_live_range"] is not None:
            extra = "; %d empty line(s) before `HloLiveRange`" % c["blank_lines_before_live_range"]
        if info.get("big_layers"):
            extra += "; %d unrolled layers" % info["big_layers"]
        out.append(
            "* `{}/`: numpy {}{}; {}".format(
                key,
                info["numpy"],
                extra,
                ", ".join(
                    "`%s` (%d B)" % (f, os.path.getsize(os.path.join(out_root, key, f)))
                    for f in info["files"]
                ),
            )
        )
    out.append("")
    out.append("## Regenerating\n")
    out.append(
        "The exact commands used, run from the repository root (never create the "
        f"virtualenvs inside the repository). Extra pins: {PIN_NOTE}\n"
    )
    out.append("```sh")
    for ver, pins, progs in RECIPES:
        env = "/tmp/jaxenv-" + ver
        out.append(f"python3 -m venv {env}")
        out.append(
            "{}/bin/pip install jax=={} jaxlib=={}{}".format(
                env, ver, ver, "".join(f" '{p}'" for p in pins)
            )
        )
        out.append(
            "{}/bin/python scripts/generate_dumps.py --out sample_dumps/jax{}".format(
                env, "" if tuple(progs) == PROGRAMS else " --programs " + " ".join(progs)
            )
        )
    out.append("# re-render this file only:")
    out.append("python3 scripts/generate_dumps.py --out sample_dumps/jax --manifest-only")
    out.append("```")
    out.append("")
    out.append(
        "Rerunning a version rewrites its directories. The buffer-assignment, values "
        "and live-range files come out the same, except that up to jax 0.7.2 the "
        "`source_file=`/`source_line=` metadata holds the absolute path of this script "
        "on the machine that ran it and line numbers in it (so editing the programs' "
        "code shifts them); jax 0.9.0+ prints `stack_frame_id=N` instead. The era-A "
        "memory-usage reports of jax 0.4.35 .. 0.7.2 are NOT reproducible byte for "
        "byte: see the first observation below."
    )
    out.append("")
    out.append("## Observations (checked against FORMATS.md)\n")
    for note in NOTES:
        out.append("* " + note)
    out.append("")
    with open(os.path.join(out_root, "MANIFEST.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(out))


def _version_sort_key(key):
    ver, _, prog = key.partition("/")
    nums = tuple(int(x) if x.isdigit() else 0 for x in ver[len("jax-") :].split("."))
    return (nums, PROGRAMS.index(prog) if prog in PROGRAMS else 99)


def _human(n):
    if n >= 1024 * 1024:
        return "%.2f MiB" % (n / 1024.0 / 1024.0)
    return "%.1f KiB" % (n / 1024.0)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default="sample_dumps/jax", help="output root (default: %(default)s)")
    p.add_argument("--programs", nargs="+", choices=PROGRAMS, default=list(PROGRAMS))
    p.add_argument(
        "--big-layers",
        type=int,
        default=16,
        help="unrolled layers in transformer_big (default: %(default)s)",
    )
    p.add_argument(
        "--with-module-text",
        action="store_true",
        help="also keep the main module's <name>_after_optimizations.txt (its "
        "stack-frame tables resolve stack_frame_id, jax >= 0.9)",
    )
    p.add_argument(
        "--manifest-only",
        action="store_true",
        help="only re-render MANIFEST.md from manifest.json and the files on disk",
    )
    p.add_argument("--child", choices=PROGRAMS, help=argparse.SUPPRESS)
    p.add_argument("--dump-dir", help=argparse.SUPPRESS)
    args = p.parse_args(argv)

    if args.child:
        child_main(args)
        return
    out_root = os.path.abspath(args.out)
    os.makedirs(out_root, exist_ok=True)
    manifest = load_manifest(out_root)
    if not args.manifest_only:
        for program in args.programs:
            info = run_program(program, out_root, args)
            if program == "transformer_big":
                info["big_layers"] = args.big_layers
            manifest["dumps"]["jax-{}/{}".format(info["jax"], program)] = info
            save_manifest(out_root, manifest)
    render_manifest(out_root, manifest)


if __name__ == "__main__":
    main()
