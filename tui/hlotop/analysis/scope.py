"""Where a value comes from, read off its instruction's metadata: its scope (the JAX
``op_name`` path), its phase (forward, backward, optimizer), the pytree path of an
entry parameter and the user's source line.

JAX writes ``op_name`` as a ``/``-separated path: ``jit(train_step)/jvp(GPT)/Block_3/
attn/dot_general[dimension_numbers=...]``. The forward pass is under ``jvp(...)``, the
backward pass under ``transpose(jvp(...))``; an entry parameter's ``op_name`` is the
pytree path of the jit argument (``params['Block_0']['attn']['kernel']``,
``opt_state[0].mu[0]['b']``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from hlotop.model import SourceFrame

# A layer index: a path segment that is a number, or a name's number after _ or -
# (layers_17, Block_3, layers/26, h-2). fc1 and conv2d keep theirs.
_LAYER_INDEX = re.compile(r"(?:(?<=[_\-])|^)\d+$")
_WRAPPERS = re.compile(
    r"^(?:transpose|jvp|vmap|pmap|remat|checkpoint|custom_jvp_call|custom_vjp_call)\((.*)\)$"
)
_CALLS = re.compile(r"^(?:jit|pjit)\(.*\)$")  # the jitted function: the same for all
# What JAX up to 0.6 wrapped the lowered program in, under the jitted function:
# ``jit(train_step)/jit(main)/jvp(MLP)/dot_general`` (jax 0.6.2) is
# ``jit(train_step)/jvp(MLP)/dot_general`` from jax 0.7 on (sample_dumps/jax/).
_MAIN = re.compile(r"^p?jit\(main\)$")
_PYTREE_KEY = re.compile(r"\[\\?'([^']*)\\?'\]|\[(\d+)\]|\.(\w+)")

PHASES = ("argument", "forward", "backward", "optimizer", "other")
# Markers of optimizer code: optax (the library) in the op_name or the Python stack.
_OPTIMIZER = re.compile(
    r"(?:^|[/_.(])(?:optax|adamw?|sgd|lamb|lion|adafactor|apply_updates)(?:$|[/_.)\[])"
)
_OPTAX_FILE = re.compile(r"(?:^|/)optax/")
# Frames that are not the user's code: JAX, its libraries, Python itself.
_LIBRARY = re.compile(
    r"(?:site-packages|dist-packages)/|(?:^|/)(?:jax|jaxlib|flax|optax|equinox|haiku)/|^<"
)


@dataclass(frozen=True, slots=True)
class ScopeRule:
    """A user's rewrite of scopes: every match of ``pattern`` becomes ``replacement``
    (``re.sub`` syntax), applied after the default folding."""

    pattern: re.Pattern[str]
    replacement: str

    @classmethod
    def parse(cls, text: str) -> ScopeRule:
        """``"REGEX=REPLACEMENT"`` (the last ``=`` splits). Raises ValueError when there
        is no ``=``, the regular expression does not compile, or the replacement refers
        to a group the expression does not have (``\\2``, ``\\g<name>``) or ends in a
        lone backslash: found here, before any scope is rewritten (it was an internal
        error at the first scope the expression matched)."""
        if "=" not in text:
            raise ValueError(f"a scope rule is REGEX=REPLACEMENT, not {text!r}")
        pattern, replacement = text.rsplit("=", 1)
        try:
            compiled = re.compile(pattern)
            compiled.sub(replacement, "")  # the replacement is read before any match
        except (re.error, IndexError) as err:  # IndexError: an unknown \\g<name>
            raise ValueError(f"scope rule {text!r}: {err}") from None
        return cls(compiled, replacement)


@lru_cache(maxsize=1 << 16)  # a big dump repeats each op_name over many values
def strip_params(op_name: str) -> str:
    """``op_name`` without the primitive parameters in ``[...]`` (nested brackets too):
    ``convert_element_type[new_dtype=bfloat16]`` -> ``convert_element_type``. Pytree
    keys of a parameter (``params['w']``) are brackets too: use :func:`pytree_path` for
    those."""
    if "[" not in op_name:
        return op_name
    out, depth = [], 0
    for ch in op_name:
        if ch == "[":
            depth += 1
        elif ch == "]" and depth:
            depth -= 1
        elif not depth:
            out.append(ch)
    return "".join(out)


def _segments(op_name: str) -> list[str]:
    """The ``/``-separated segments of ``op_name``, brackets stripped, a slash inside
    parentheses (``jvp(a/b)``) kept in its segment."""
    text = strip_params(op_name)
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")" and depth:
            depth -= 1
        elif ch == "/" and not depth:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p for p in parts if p]


def _program_path(segments: list[str]) -> list[str]:
    """``segments`` without the jitted function (``jit(f)``, the same for every value)
    and, under it, the ``jit(main)`` that JAX up to 0.6 wrapped the program in."""
    if segments and _CALLS.match(segments[0]):
        segments = segments[1:]
        if segments and _MAIN.match(segments[0]):
            segments = segments[1:]
    return segments


@lru_cache(maxsize=1 << 16)
def op_path(op_name: str) -> str:
    """``op_name`` as the same instruction's path in any compile of the program: the
    primitive parameters stripped, without the jitted function and the ``jit(main)``
    JAX up to 0.6 put under it (:func:`scope_of`'s rule, the primitive kept):
    ``jit(step)/jit(main)/jvp(MLP)/dot_general[...]`` and ``jit(step)/jvp(MLP)/
    dot_general`` are both ``jvp(MLP)/dot_general``."""
    return "/".join(_program_path(_segments(op_name)))


def _unwrap(segment: str) -> str:
    """``transpose(jvp(GPT))`` -> ``GPT``; ``jvp()`` -> ``""``."""
    while (m := _WRAPPERS.match(segment)) is not None:
        segment = m.group(1)
    return segment


@lru_cache(maxsize=1 << 16)
def _scope(op_name: str, fold: bool) -> str:
    """:func:`scope_of` before the user's rules (cached: values share op_names)."""
    segments = _segments(op_name)
    if len(segments) > 1:
        segments = segments[:-1]
    segments = _program_path(segments)
    kept: list[str] = []
    for segment in segments:
        segment = _unwrap(segment)
        if not segment:
            continue
        if fold:
            segment = _LAYER_INDEX.sub("*", segment)
        kept.append(segment)
    return "/".join(kept)


def scope_of(op_name: str | None, fold: bool = True, rules: Sequence[ScopeRule] = ()) -> str | None:
    """The scope of an instruction: its ``op_name`` path without the primitive (the
    last segment) and the jitted function (``jit(f)``, and under it the ``jit(main)``
    of JAX up to 0.6, so that both eras' scopes are alike), primitive parameters stripped,
    ``jvp(...)``/``transpose(jvp(...))`` unwrapped, layer indices folded to ``*``
    (unless ``fold`` is False), then ``rules`` applied in order. A one-segment
    ``op_name`` is its own scope. ``jit(f)/jvp(GPT)/Block_3/attn/dot_general[...]`` ->
    ``GPT/Block_*/attn``. Returns None for no ``op_name``; ``""`` (the top) when nothing
    is left."""
    if not op_name:
        return None
    scope = _scope(op_name, fold)
    for rule in rules:
        scope = rule.pattern.sub(rule.replacement, scope)
    return scope


@lru_cache(maxsize=1 << 16)  # each value's path is asked for by several keys
def pytree_path(op_name: str, fold: bool = True) -> str:
    """An entry parameter's pytree path as a ``/`` path: ``opt_state[0].mu['Block_3']
    ['w']`` -> ``opt_state/0/mu/Block_*/w`` (layer indices folded unless ``fold`` is
    False). Text that is no pytree path is returned as it is."""
    op_name = op_name.replace("\\'", "'")  # the dump escapes quotes: params[0][\'b\']
    m = re.match(r"[A-Za-z_]\w*", op_name)
    if m is None:
        return op_name
    parts = [m.group(0)]
    rest = op_name[m.end() :]
    for key in _PYTREE_KEY.finditer(rest):
        parts.append(next(g for g in key.groups() if g is not None))
    if fold:
        parts = [_LAYER_INDEX.sub("*", p) for p in parts]
    return "/".join(parts)


def argument_scope(path: str) -> str:
    """The scope of an entry parameter: the first two named parts of its pytree path
    (indices and ``*`` skipped): ``params/Block_*/attn/c_attn/kernel`` ->
    ``params/Block_*``, ``opt_state/*/mu/Block_*/mlp/kernel`` -> ``opt_state/mu``,
    ``labels`` -> ``labels``; the whole path is the ``param`` key."""
    named = [p for p in path.split("/") if p and p != "*" and not p.isdigit()]
    return "/".join(named[:2]) or path


def phase_of(op_name: str | None, is_argument: bool, stack: Sequence[SourceFrame] = ()) -> str:
    """The phase a value belongs to (one of :data:`PHASES`):

    * ``argument``: an entry parameter of the program (its bytes come in with a call);
    * ``backward``: its ``op_name`` has ``transpose(`` (JAX's transposed JVP);
    * ``forward``: its ``op_name`` has ``jvp(`` and no ``transpose(``;
    * ``optimizer``: optimizer code: ``optax``, ``adam``, ``sgd``, ``apply_updates`` ...
      in its ``op_name``, or a frame of its Python stack in optax;
    * ``other``: anything else (no ``op_name``, a loop counter, a plain jit)."""
    if is_argument:
        return "argument"
    if op_name:
        if "transpose(" in op_name:
            return "backward"
        if "jvp(" in op_name:
            return "forward"
        if _OPTIMIZER.search(strip_params(op_name).lower()):
            return "optimizer"
    if any(_OPTAX_FILE.search(frame.file) for frame in stack):
        return "optimizer"
    return "other"


def user_frame(stack: Sequence[SourceFrame]) -> SourceFrame | None:
    """The innermost frame of the user's code in ``stack`` (innermost first): the first
    that is not in JAX, its libraries (site-packages, flax, optax ...) or Python; the
    innermost frame if all are; None for no stack."""
    for frame in stack:
        if not _LIBRARY.search(frame.file):
            return frame
    return stack[0] if stack else None
