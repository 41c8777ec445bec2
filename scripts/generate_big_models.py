#!/usr/bin/env python3
"""Generate real, big XLA buffer-assignment dumps: flax GPT train steps (dev-only tool).

Scaled copies of a small module (``benchmarks/make_dumps.py``) are lighter than the dumps
of real big models, so the benchmark also measures these. Each one is the buffer
assignment of a jitted GPT-style **train step** (forward, backward and an optax update:
``clip_by_global_norm`` + ``adamw``) of a flax linen model, compiled for the CPU with
``XLA_FLAGS=--xla_dump_to=DIR``. Its layers are either unrolled (a Python loop of
``Block`` modules named ``h_0`` .. ``h_<L-1>``: one copy of the layer's HLO per layer) or
scanned (``nn.scan`` over one ``Block``: one while loop whose body is one layer).

Nothing is allocated or run: the step is compiled from abstract inputs
(``jax.jit(step).lower(<jax.ShapeDtypeStruct pytrees>).compile()``), and compilation is
all that writes the dump. The parameters and the optimizer state are pytrees with their
flax/optax names, so entry parameters are named like
``params__params____h_12____attn____query____kernel__`` in the dump.

JAX never enters the project's virtualenv: each JAX version runs in a virtualenv of its
own, made by this script when missing (``python3 -m venv`` + ``pip install`` from PyPI):

* ``/tmp/hlotop-jaxenv``        ``jax flax optax`` (newest; jax 0.10.x writes the *split*
  layout: ``-buffer-assignment.txt``, ``-buffer-assignment-values.txt``,
  ``-live-range.txt``, ``-memory-usage-report.txt``);
* ``/tmp/hlotop-jaxenv-0.4.35`` ``jax==0.4.35 jaxlib==0.4.35 flax optax`` (the *combined*
  layout: one ``-buffer-assignment.txt`` with values and live range, plus the
  memory-usage report).

Only the train step's module is dumped (``--xla_dump_hlo_module_re``) and only its
buffer-assignment files are kept, copied to ``<out>/<name>/`` (default
``benchmarks/real/<name>/``, which is git-ignored: the files are too big to commit) with
XLA's own names, next to a ``manifest.json`` (name, layers, unrolled/scanned, layout,
widths, versions, file sizes, compile time), and the module's
``*_after_optimizations.txt`` HLO text, as ``--xla_dump_to`` writes it beside the buffer
assignment (its head holds the stack-frame table that ``stack_frame_id=`` refers to, its
first line the input/output aliasing, its computations the metadata of the fusions that
have none; hlotop reads all three), unless it is larger than ``--module-text-max-mb``
or ``--without-module-text`` is given.
A model whose manifest says it was made with the same settings is not made again
(``--force`` remakes it).

Usage (from the repository root; any Python 3.10+ runs it, it imports nothing of hlotop)::

    python3 scripts/generate_big_models.py                  # the default set (see MODELS)
    python3 scripts/generate_big_models.py --list
    python3 scripts/generate_big_models.py --models gpt-64l-unrolled gpt-64l-scanned
    python3 scripts/generate_big_models.py --models gpt-256l-unrolled --layers 32  # try

Compiling 256 unrolled layers takes minutes on two CPU cores (4 min for plain adam, 18 for
the dropout + adamw step, all the default set ~25 min); each model runs in a child process
that is killed after ``--timeout`` seconds. jax 0.4.35's XLA is much slower and hungrier:
64 unrolled layers take 6 min and 4.5 GB, and 256 did not finish within 22 min (13 GB and
growing), so the combined-layout 256-layer model is left out of the default set.
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
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "benchmarks" / "real"
FUNCTION = "train_step"  # the jitted function; its module is "jit_train_step"

# What each JAX virtualenv gets from PyPI, by layout.
ENVS = {
    "split": ("/tmp/hlotop-jaxenv", ("jax", "flax", "optax")),
    "combined": (
        "/tmp/hlotop-jaxenv-0.4.35",
        ("jax==0.4.35", "jaxlib==0.4.35", "flax", "optax"),
    ),
}


@dataclass(frozen=True)
class Model:
    """One GPT train step to compile. The dump's size follows the number of HLO
    instructions (layers unrolled, parameter leaves, remat), hardly the widths: the widths
    are a small GPT-2-like model's, so the allocation sizes look real."""

    name: str
    layers: int
    scanned: bool
    layout: str = "split"  # which JAX: "split" (newest) or "combined" (0.4.35)
    remat: bool = False  # jax.checkpoint each block (recomputed in the backward pass)
    optimizer: str = "adam"  # or "clip-adamw": clip_by_global_norm(1.0) + adamw
    dropout: float = 0.0  # the dropout rate of attention weights, residuals and embeddings
    d_model: int = 256
    heads: int = 4
    d_ff: int = 1024
    vocab: int = 4096
    seq: int = 128
    batch: int = 4

    def settings(self) -> dict:
        return asdict(self)


# A GPT-2-like training step as it is usually written: dropout 0.1, the gradients
# clipped to a global norm of 1, adamw.
TRAIN = {"dropout": 0.1, "optimizer": "clip-adamw"}
# Sizes and times measured on a 2-core x86-64 CPU shared with other work.
MODELS = {
    m.name: m
    for m in (
        # Plain adam, no dropout: ~0.18 MB of dump per unrolled layer (jax 0.10.2).
        Model("gpt-64l-unrolled", 64, scanned=False),  # 11.4 MB, 23 s
        Model("gpt-256l-unrolled", 256, scanned=False),  # 46.1 MB, 4 min
        # Dropout's random bits and adamw: ~0.4 MB per unrolled layer.
        Model("gpt-256l-unrolled-train", 256, scanned=False, **TRAIN),  # 107.5 MB, 18 min
        # Scanned: one layer in a while loop, whatever the count.
        Model("gpt-64l-scanned", 64, scanned=True, **TRAIN),  # 1.0 MB, 8 s
        Model("gpt-256l-scanned", 256, scanned=True, **TRAIN),  # 1.1 MB, 8 s
        # jax 0.4.35 (combined layout): its XLA writes ~3x the text per layer and compiles
        # far slower, in far more memory.
        Model("gpt-64l-unrolled-combined", 64, scanned=False, layout="combined"),  # 36 MB, 6 min
        # Not made by default: still compiling after 22 min, at 13 GB and growing.
        Model("gpt-256l-unrolled-combined", 256, scanned=False, layout="combined"),
    )
}
NOT_BY_DEFAULT = {"gpt-256l-unrolled-combined"}

KEEP_TAILS = (
    "-buffer-assignment.txt",
    "-buffer-assignment-values.txt",
    "-live-range.txt",
    "-memory-usage-report.txt",
)
# module_0012.jit_train_step.cpu_after_optimizations-buffer-assignment.txt
FILE_RE = re.compile(
    r"^(?P<prefix>(?:\d+\.)?module_\d+\.(?P<name>.+?)\.[A-Za-z0-9_.]*after_optimizations)"
    r"(?P<tail>" + "|".join(map(re.escape, KEEP_TAILS)) + r")$"
)


# --------------------------------------------------------------------------------------
# The child: builds the model and compiles its train step (runs in a JAX virtualenv).
# --------------------------------------------------------------------------------------


def child(model: Model, dump_dir: str) -> None:
    os.environ["JAX_PLATFORMS"] = "cpu"
    os.environ["XLA_FLAGS"] = " ".join(
        [
            "--xla_dump_to=" + dump_dir,
            "--xla_dump_hlo_as_text",
            f"--xla_dump_hlo_module_re=.*jit_{FUNCTION}.*",
        ]
    )
    import warnings

    warnings.filterwarnings("ignore")
    import flax
    import flax.linen as nn
    import jax
    import jax.numpy as jnp
    import jaxlib
    import numpy as np
    import optax

    m = model

    class Block(nn.Module):
        @nn.compact
        def __call__(self, x, _=None):
            mask = nn.make_causal_mask(jnp.ones(x.shape[:2], jnp.int32))
            h = nn.LayerNorm(name="ln_1")(x)
            h = nn.MultiHeadDotProductAttention(
                num_heads=m.heads,
                qkv_features=m.d_model,
                dropout_rate=m.dropout,
                deterministic=not m.dropout,
                name="attn",
            )(h, mask=mask)
            x = x + drop(h)
            h = nn.LayerNorm(name="ln_2")(x)
            h = nn.Dense(m.d_ff, name="fc")(h)
            h = nn.gelu(h)
            h = nn.Dense(m.d_model, name="proj")(h)
            return x + drop(h), None

    def drop(x):
        return nn.Dropout(m.dropout, deterministic=False)(x) if m.dropout else x

    block = nn.remat(Block) if m.remat else Block

    class GPT(nn.Module):
        @nn.compact
        def __call__(self, tokens):
            embed = nn.Embed(m.vocab, m.d_model, name="wte")
            pos = self.param("wpe", nn.initializers.normal(0.02), (m.seq, m.d_model), jnp.float32)
            x = drop(embed(tokens) + pos)
            if m.scanned:
                stack = nn.scan(
                    block,
                    variable_axes={"params": 0},
                    split_rngs={"params": True, "dropout": True},
                    length=m.layers,
                )
                x, _ = stack(name="h")(x, None)
            else:
                for i in range(m.layers):  # unrolled on purpose: one HLO copy per layer
                    x, _ = block(name=f"h_{i}")(x)
            x = nn.LayerNorm(name="ln_f")(x)
            return embed.attend(x)

    gpt = GPT()
    if m.optimizer == "adam":
        tx = optax.adam(3e-4)
    elif m.optimizer == "clip-adamw":
        tx = optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(3e-4, weight_decay=0.1))
    else:
        raise SystemExit(f"unknown optimizer {m.optimizer!r}")
    tokens = jax.ShapeDtypeStruct((m.batch, m.seq), jnp.int32)
    params = jax.eval_shape(gpt.init, jax.random.PRNGKey(0), tokens)
    opt_state = jax.eval_shape(tx.init, params)

    key = jax.eval_shape(lambda: jax.random.PRNGKey(0))

    def train_step(params, opt_state, tokens, targets, key):
        def loss_fn(params):
            logits = gpt.apply(params, tokens, rngs={"dropout": key} if m.dropout else None)
            return optax.softmax_cross_entropy_with_integer_labels(logits, targets).mean()

        loss, grads = jax.value_and_grad(loss_fn)(params)
        updates, opt_state = tx.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    assert train_step.__name__ == FUNCTION
    started = time.perf_counter()
    lowered = jax.jit(train_step, donate_argnums=(0, 1)).lower(
        params, opt_state, tokens, tokens, key
    )
    lowered_s = time.perf_counter() - started
    lowered.compile()
    compiled_s = time.perf_counter() - started - lowered_s
    leaves = jax.tree_util.tree_leaves(params)
    info = {
        "jax": jax.__version__,
        "jaxlib": getattr(jaxlib, "__version__", None) or jax.lib.__version__,
        "flax": flax.__version__,
        "optax": optax.__version__,
        "numpy": np.__version__,
        "python": platform.python_version(),
        "backend": jax.default_backend(),
        "parameters": int(sum(int(np.prod(leaf.shape)) for leaf in leaves)),
        "parameter_leaves": len(leaves),
        "lower_s": round(lowered_s, 1),
        "compile_s": round(compiled_s, 1),
    }
    print("GENERATE_BIG_MODELS_INFO " + json.dumps(info), flush=True)


# --------------------------------------------------------------------------------------
# The parent: virtualenvs, children, picking and copying the files, manifests.
# --------------------------------------------------------------------------------------


def jax_env(layout: str) -> Path:
    """The virtualenv's python for ``layout``, made first if missing."""
    env, requirements = ENVS[layout]
    python = Path(env) / "bin" / "python"
    if not python.exists():
        print(f"making {env}: pip install {' '.join(requirements)}", file=sys.stderr)
        subprocess.run(["python3", "-m", "venv", env], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", *requirements], check=True)
    return python


def pick_main_module(dump_dir: Path) -> tuple[str, list[str]]:
    """(file prefix, kept file names) of the largest ``jit_train_step`` module."""
    groups: dict[str, list[str]] = {}
    for name in os.listdir(dump_dir):
        m = FILE_RE.match(name)
        if m and f"jit_{FUNCTION}" in m.group("name"):
            groups.setdefault(m.group("prefix"), []).append(name)
    if not groups:
        raise SystemExit(f"no buffer-assignment files for jit_{FUNCTION} in {dump_dir}")
    best = max(groups, key=lambda p: sum((dump_dir / f).stat().st_size for f in groups[p]))
    return best, sorted(groups[best])


def make(model: Model, out: Path, args) -> dict:
    python = jax_env(model.layout)
    dest = out / model.name
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="hlotop-big-dump-") as tmp:
        dump_dir = Path(tmp)
        cmd = [
            str(python),
            str(Path(__file__).resolve()),
            "--child",
            json.dumps(model.settings()),
            "--dump-dir",
            str(dump_dir),
        ]
        env = {k: v for k, v in os.environ.items() if k not in ("XLA_FLAGS", "PYTHONPATH")}
        print(f"{model.name}: compiling ({model.layers} layers) ...", file=sys.stderr)
        try:
            proc = subprocess.run(
                cmd, env=env, capture_output=True, text=True, timeout=args.timeout
            )
        except subprocess.TimeoutExpired:
            raise SystemExit(f"{model.name}: not compiled within {args.timeout} s") from None
        if proc.returncode != 0:
            sys.stderr.write(proc.stderr[-4000:])
            raise SystemExit(f"{model.name}: the child failed (exit {proc.returncode})")
        info = next(
            (
                json.loads(line.split(" ", 1)[1])
                for line in proc.stdout.splitlines()
                if line.startswith("GENERATE_BIG_MODELS_INFO ")
            ),
            None,
        )
        if info is None:
            raise SystemExit(f"{model.name}: no info line from the child")
        prefix, files = pick_main_module(dump_dir)
        text = dump_dir / (prefix + ".txt")
        text_bytes = text.stat().st_size if text.exists() else None
        if (
            not args.without_module_text
            and text_bytes is not None
            and text_bytes <= args.module_text_max_mb * 1e6
        ):
            files.append(text.name)
        if dest.exists():
            shutil.rmtree(dest)
        dest.mkdir(parents=True)
        for name in files:
            shutil.copyfile(dump_dir / name, dest / name)
    sizes = {name: (dest / name).stat().st_size for name in files}
    ba = {k: v for k, v in sizes.items() if not k.endswith("_after_optimizations.txt")}
    manifest = {
        "name": model.name,
        "layers": model.layers,
        "layers_are": "scanned" if model.scanned else "unrolled",
        "layout": "split" if any("-live-range" in f for f in files) else "combined",
        "settings": model.settings(),
        "module": prefix,
        "entry": prefix + "-buffer-assignment.txt",
        "files": sizes,
        "buffer_assignment_bytes": sum(ba.values()),
        "module_text_bytes": text_bytes,
        "with_module_text": not args.without_module_text,
        "generate_s": round(time.perf_counter() - started, 1),
        **info,
    }
    (dest / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    print(
        f"{model.name}: {manifest['buffer_assignment_bytes'] / 1e6:.1f} MB "
        f"({manifest['layout']}, jax {info['jax']}) in {manifest['generate_s']:.0f} s "
        f"(compile {info['compile_s']:.0f} s) -> {dest}",
        file=sys.stderr,
    )
    return manifest


def up_to_date(model: Model, out: Path, with_module_text: bool) -> dict | None:
    """The manifest of ``model`` already made with these settings (the module text
    kept or not, as asked), files intact."""
    path = out / model.name / "manifest.json"
    try:
        manifest = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if manifest.get("settings") != model.settings():
        return None
    if manifest.get("with_module_text", False) != with_module_text:
        return None
    for name, size in manifest["files"].items():
        f = out / model.name / name
        if not f.exists() or f.stat().st_size != size:
            return None
    return manifest


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, default=DEFAULT_OUT, help="default: %(default)s")
    p.add_argument(
        "--models",
        nargs="+",
        choices=sorted(MODELS),
        metavar="NAME",
        help="default: all but " + ", ".join(sorted(NOT_BY_DEFAULT)),
    )
    p.add_argument("--layers", type=int, help="override the models' layer count (trials)")
    p.add_argument("--force", action="store_true", help="remake models already made")
    p.add_argument("--timeout", type=float, default=3600, help="seconds per model")
    p.add_argument(
        "--without-module-text",
        action="store_true",
        help="keep only the buffer-assignment files, not the module's HLO text beside them",
    )
    p.add_argument("--module-text-max-mb", type=float, default=1000)
    p.add_argument("--list", action="store_true", help="list the models and exit")
    p.add_argument("--child", help=argparse.SUPPRESS)
    p.add_argument("--dump-dir", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        child(Model(**json.loads(args.child)), args.dump_dir)
        return 0
    if args.list:
        for model in MODELS.values():
            print(json.dumps(model.settings()))
        return 0
    out = args.out.resolve()
    made = []
    for name in args.models or [n for n in MODELS if n not in NOT_BY_DEFAULT]:
        model = MODELS[name]
        if args.layers:
            model = replace(model, layers=args.layers)
        wanted_text = not args.without_module_text
        manifest = None if args.force else up_to_date(model, out, wanted_text)
        if manifest is not None:
            print(f"{name}: up to date in {out / name}", file=sys.stderr)
        else:
            manifest = make(model, out, args)
        made.append(manifest)
    for m in made:
        print(
            f"{m['name']}: {m['buffer_assignment_bytes'] / 1e6:.1f} MB, {m['layout']}, "
            f"jax {m['jax']}, {m['layers']} layers {m['layers_are']}, "
            f"generated in {m['generate_s']:.0f} s"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
