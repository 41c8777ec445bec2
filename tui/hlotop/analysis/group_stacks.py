"""The grouped live set as a tree of frames, as a flame graph draws it: each group's key
made a stack (a scope split at its ``/`` into frames, every other key one frame), the
stacks merged into a tree whose nodes are stack prefixes (``GPT``, ``GPT/Block_*``,
``GPT/Block_*/attn``).

Each node has pprof's two figures: ``flat``, the bytes of the values whose stack ends
at it (``GPT/Block_*/attn``'s own values, not its children's), and ``cum``, the bytes of
the values whose stack goes through it or ends at it. The flat bytes of all nodes, and
the cum bytes of the top-level ones, add up to the grouping's total. The stacks are the
folded export's (:func:`hlotop.report.export.write_folded`), before its escaping.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from hlotop.analysis.grouping import Grouping

__all__ = ["StackNode", "frames_of", "stack_tree", "top_nodes"]


def frames_of(keys: Sequence[str], labels: Sequence[str]) -> tuple[tuple[str, int], ...]:
    """The stack of a group: ``labels`` (one per key of ``keys``) as frames, each with
    the index of its key: a scope split at its ``/`` (empty parts left out), any
    other label one frame. ``(("scope", "phase"), ("GPT/wte", "forward"))`` ->
    ``(("GPT", 0), ("wte", 0), ("forward", 1))``."""
    frames: list[tuple[str, int]] = []
    for level, (key, label) in enumerate(zip(keys, labels, strict=True)):
        if key == "scope":
            frames += [(part, level) for part in label.split("/") if part]
        else:
            frames.append((label, level))
    return tuple(frames)


@dataclass(eq=False, slots=True)
class StackNode:
    """A stack prefix: its ``frames`` (from the top), the key index of each
    (``levels``), ``flat`` and ``cum`` bytes and ``values`` (how many values its cum
    bytes are of), its ``children`` (largest cum first, then by name) and ``start``:
    the bytes before it in the tree's order (its parent's start, then its elder
    siblings' cum bytes), where an icicle draws it."""

    frames: tuple[str, ...]
    levels: tuple[int, ...]
    flat: int = 0
    cum: int = 0
    values: int = 0
    children: list[StackNode] = field(default_factory=list)
    start: int = 0

    @property
    def label(self) -> str:
        """Its last frame (the root's: ``(all)``)."""
        return self.frames[-1] if self.frames else "(all)"

    @property
    def depth(self) -> int:
        return len(self.frames)

    def name(self) -> str:
        """Its frames as one name: ``/`` between the frames of one key (a scope reads
        as JAX wrote it), `` ; `` between keys: ``forward ; GPT/Block_*/attn``."""
        out = ""
        for i, (frame, level) in enumerate(zip(self.frames, self.levels, strict=True)):
            if i:
                out += "/" if level == self.levels[i - 1] else " ; "
            out += frame
        return out or "(all)"

    def walk(self) -> list[StackNode]:
        """This node and every node under it, depth first, in ``children``' order."""
        out: list[StackNode] = []
        stack = [self]
        while stack:
            node = stack.pop()
            out.append(node)
            stack.extend(reversed(node.children))
        return out


def stack_tree(grouping: Grouping) -> StackNode:
    """The tree of ``grouping``'s stacks (see the module's docstring), its root the
    whole step (``cum`` = the grouping's ``total_bytes``). Bytes are the grouping's
    (its accounting). A group whose labels make no frame (an empty scope) is flat
    bytes of the root. Raises nothing."""
    root = StackNode((), ())
    index: dict[tuple[str, ...], StackNode] = {(): root}
    for row in grouping.rows:
        frames = frames_of(grouping.keys, row.key)
        node = root
        node.cum += row.bytes
        node.values += len(row.values)
        for depth in range(1, len(frames) + 1):
            path = tuple(f for f, _ in frames[:depth])
            child = index.get(path)
            if child is None:
                child = index[path] = StackNode(path, tuple(lv for _, lv in frames[:depth]))
                node.children.append(child)
            node = child
            node.cum += row.bytes
            node.values += len(row.values)
        node.flat += row.bytes
    for node in root.walk():
        node.children.sort(key=lambda n: (-n.cum, n.frames))
        at = node.start
        for child in node.children:
            child.start = at
            at += child.cum
    return root


def top_nodes(root: StackNode) -> list[StackNode]:
    """Every node under ``root`` (not the root), as pprof's ``top`` lists them: the
    largest flat bytes first, then the largest cum, then by name. Their flat bytes
    add up to ``root.cum`` less the root's own flat bytes."""
    nodes = root.walk()[1:]
    nodes.sort(key=lambda n: (-n.flat, -n.cum, n.frames))
    return nodes
