"""The text an out-of-memory message comes in, made into the message's own lines
before any of it is read (the grammar of the messages is :mod:`hlotop.parse.oom_forms`).

Real OOM texts come pasted from logs, issues and terminals. Each physical line loses,
in turn: ANSI and OSC escape codes; leading line numbers (where consecutive lines
carry consecutive numbers: ``cat -n``, an editor's copy); HTML entities and tags;
markdown quote marks (``> ``), backticks, ``**bold**`` and escapes (``1\\.``);
per-line log prefixes (glog ``I0309 12:51:51.366992 140505975940928 file.py:247]``,
absl's ``I0000 00:00:1773083052.386475 70889 file.cc:1119]``, timestamps with
``E 1578 file.cc:76]``, Ray's ``(MeshHostWorker pid=489)``, MPI's ``[1,0]<stderr>:``,
Python logging). Then the pieces of a hard-wrapped line are joined back (a line at
least :data:`WRAP_WIDTH` wide followed by one that starts no line of its own), as is a
word a wrap cut in two (``allo`` / ``cate``: the two halves make a word of the
messages, the first half alone is none). Last, a line that holds what were several
(newlines collapsed into spaces, literal ``\\n``, ``<br>``) is cut again before each
key or headline it holds.

Every line keeps the number of the physical line it starts on, so each report,
buffer and diagnostic names the file's own line.
"""

from __future__ import annotations

import html
import re
from collections import Counter
from dataclasses import dataclass

from hlotop.parse.oom_forms import HEADLINES, SNIFF, SPLIT_AT, STARTS, VOCABULARY

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
_TAGS = re.compile(
    r"</?(?:pre|code|div|span|br|p|details|summary|b|i|em|strong|kbd|samp|tt)\b[^>]*>", re.I
)
_QUOTE = re.compile(r"^\s*(?:>\s?)+")
_PREFIXES = re.compile(
    r"^(?:\[\d+\]\s+|\[\d+(?:,\d+)*\]<std(?:out|err)>:\s?|\[?rank\d+\]?:\s?"  # MPI, torch
    r"|\((?:[\w.-]+\s+)?pid=\d+[^)]*\)\s*"  # Ray: (MeshHostWorker pid=489, ip=...)
    r"|\[?\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?\]?:?\s*"
    r"|[IWEF]\d{4} \d\d:\d\d:\d+\.\d+\s+\d+\s+[\w./-]+:\d+\]\s?"  # glog, absl
    r"|[IWEF]\s+(?:\d+\s+)?[\w./-]+\.\w+:\d+\]\s?"  # level [thread] file:line]
    r"|(?:-\s+)?(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)(?::[\w.-]+:|\s+-)\s?)"  # logging
)
_EMBEDDED_PREFIX = re.compile(
    r"(?<=\s)(?=[IWEF]\d{4} \d\d:\d\d:\d+\.\d+\s+\d+\s+[\w./-]+:\d+\]"
    r"|\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?:? [IWEF] )"
)
_NUMBERED = re.compile(r"\s*(\d{1,7})(?:[ \t]*[|:][ \t]?|\t|[ \t]+|$)")
_BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*")
_ESCAPED = re.compile(r"\\([.\-_*#>\[\]()!+`|~])")
_LITERAL_BREAK = re.compile(r"\\(?:r\\)?n|<br\s*/?>", re.I)
_LAST_WORD = re.compile(r"([A-Za-z_]+)$")
_FIRST_WORD = re.compile(r"([A-Za-z_]+)")
_SPACES = re.compile(r"\s+")
# How the rest of a line a wrap cut may start (a new line starts otherwise: "[Stage",
# "Traceback", a capital): a letter or digit of a cut word or number, punctuation.
_GOES_ON = re.compile(r"[a-z0-9_)\]}>,.;:/=\-]")
_LIST_NUMBER = re.compile(r"\s*\d+\.\s*$")
_SENTENCE_END = re.compile(r"[.!?]\s*$|\s$")
WRAP_WIDTH = 50  # a hard-wrapped line is at least this long
COLLAPSED = 100  # a line this long may hold several whose newlines were lost


@dataclass(slots=True)
class Line:
    text: str  # decorations removed, wraps joined, collapsed lines cut; not stripped
    line: int  # 1-based number in the file of the physical line it starts on
    # (offset in text, line number) where each later piece of a joined line starts
    marks: tuple[tuple[int, int], ...] = ()

    def line_at(self, offset: int) -> int:
        """The file's line that ``text[offset]`` is on."""
        line = self.line
        for start, number in self.marks:
            if start > offset:
                break
            line = number
        return line


def _numbered_lines(raw: list[str]) -> set[int]:
    """Indexes of the lines whose leading number is a line number: runs of at least
    three consecutive lines numbered n, n+1, n+2... (two in a two-line text)."""
    numbers = [int(m[1]) if m else None for m in map(_NUMBERED.match, raw)]
    least = 2 if len(raw) <= 2 else 3
    found: set[int] = set()
    start = 0
    for i in range(1, len(raw) + 1):
        previous = numbers[i - 1]
        if i < len(raw) and previous is not None and numbers[i] == previous + 1:
            continue
        if i - start >= least:
            found.update(range(start, i))
        start = i
    return found


def strip_prefixes(text: str) -> tuple[str, bool]:
    """``text`` without the log prefixes it starts with; whether it had any."""
    found = False
    while (m := _PREFIXES.match(text)) is not None and m.end():
        text, found = text[m.end() :], True
    return text, found


def _clean(raw: str, numbered: bool) -> tuple[str, str, int]:
    """A physical line without decorations; the log prefix it had ("" if none); its
    width (escape codes aside; a prefixed line's without its prefix)."""
    text = _ANSI.sub("", raw.rstrip("\r"))
    if numbered and (m := _NUMBERED.match(text)) is not None:
        text = text[m.end() :]
    width = len(text.expandtabs())
    if "&" in text:
        text = html.unescape(text)
    if "<" in text:
        text = _TAGS.sub("", text)
    text = _QUOTE.sub("", text.replace("`", ""))
    unprefixed, _ = strip_prefixes(text)
    prefix = text[: len(text) - len(unprefixed)]
    text = unprefixed
    if prefix:
        width = len(text.expandtabs())
    if "**" in text:
        text = _BOLD.sub(r"\1", text)
    if "\\" in text:
        text = _ESCAPED.sub(r"\1", text)
    return text, prefix, width


def _cut_word(before: str, after: str) -> bool:
    """Whether a wrap cut a word of the messages between ``before`` and ``after``
    (``...to allo`` + ``cate 8.00M``)."""
    if not (before[-1:].isalpha() and after[:1].isalpha()):
        return False
    a, b = _LAST_WORD.search(before), _FIRST_WORD.match(after)
    if a is None or b is None:
        return False
    first = a[1].lower()
    return first not in VOCABULARY and (first + b[1].lower()) in VOCABULARY


def _new_sentence(before: str, after: str) -> bool:
    """Whether ``after`` starts a sentence where ``before`` ended one (or a word): a
    line of its own, not a wrap's second half (were it one, what reads it joins
    sentences with a space anyway)."""
    return after[:1].isupper() and _SENTENCE_END.search(before) is not None


def _cut_key(before: str, after: str) -> bool:
    """Whether a wrap cut a key in two (``===`` / ``=======``, ``Sha`` / ``pe:``):
    ``before`` is none, the two together start with one."""
    return not STARTS.match(before.strip()) and bool(STARTS.match((before + after).strip()))


def starts_line(text: str) -> bool:
    """Whether a physical line (decorations removed) starts a line of its own: a key
    of a report's body, or a whole headline."""
    body = text.strip()
    if STARTS.match(body):
        return True
    return bool(SNIFF.search(text)) and any(p.search(text) for _, _, p in HEADLINES)


def _physical(text: str) -> list[tuple[str, int]]:
    """The physical lines with their 1-based numbers; a line holding literal ``\\n``
    or ``<br>`` and an OOM message's words is cut there (the pieces keep its number)."""
    out: list[tuple[str, int]] = []
    for number, raw in enumerate(text.split("\n"), 1):
        if ("\\n" in raw or "<br" in raw.lower()) and (SNIFF.search(raw) or SPLIT_AT.search(raw)):
            out.extend((piece, number) for piece in _LITERAL_BREAK.split(raw))
        else:
            out.append((raw, number))
    return out


def _joined(text: str) -> list[tuple[list[str], list[int]]]:
    """The logical lines: each its pieces and their physical line numbers."""
    physical = _physical(text)
    numbered = _numbered_lines([raw for raw, _ in physical])
    cleaned = [_clean(raw, index in numbered) for index, (raw, _) in enumerate(physical)]
    # A hard wrap leaves lines of one width (the terminal's): a width that recurs.
    raw_widths = [len(_ANSI.sub("", raw).expandtabs()) for raw, _ in physical]
    widths = Counter(w for _, _, w in cleaned if w >= WRAP_WIDTH)
    widths.update(w for w, (_, p, _) in zip(raw_widths, cleaned, strict=True) if p)
    lines: list[tuple[list[str], list[int]]] = []
    last_width, last_prefix = 0, ""
    for index, (piece, prefix, width) in enumerate(cleaned):
        number = physical[index][1]
        if last_prefix and not prefix:  # a terminal's wrap of a prefixed line
            last_width = raw_widths[index - 1]
        body = piece.strip()
        previous = lines[-1][0] if lines else None
        joins = False
        if body and previous is not None and previous[-1].strip():
            if (
                # a log record's own prefix starts a line; the same prefix on every
                # line (Ray's "(Worker pid=1)") may be a wrapped line's
                (not prefix or prefix == last_prefix)
                and last_width >= WRAP_WIDTH
                and (widths[last_width] > 1 or _GOES_ON.match(body) is not None)
                and (not starts_line(piece) or _cut_key("".join(previous), piece))
                and not _new_sentence(previous[-1], piece)
            ):
                joins = True
            elif _cut_word(previous[-1], piece):
                joins, piece = True, piece.lstrip()
            elif _LIST_NUMBER.match(previous[-1]) and body.startswith("Size:"):
                joins, piece = True, " " + body  # "1." / "Size: 2.00G": one entry's line
        if joins and previous is not None:
            previous.append(piece)
            lines[-1][1].append(number)
        else:
            lines.append(([piece], [number]))
        last_width, last_prefix = width, prefix
    return lines


def _cut(pieces: list[str], numbers: list[int]) -> list[Line]:
    """One logical line, cut before each key or headline it holds when it holds
    several (its newlines lost); each part numbered by the piece it starts in."""
    if len(pieces) == 1 and len(pieces[0]) < COLLAPSED:
        return [Line(pieces[0], numbers[0])]
    text = pieces[0] if len(pieces) == 1 else strip_prefixes("".join(pieces))[0]
    marks: list[tuple[int, int]] = []
    first = numbers[0]
    offset = len(text) - sum(map(len, pieces))  # minus a prefix the joined text lost
    for piece, number in zip(pieces, numbers, strict=True):
        if offset <= 0:
            first = number  # the text starts in this piece (a wrap cut the prefix)
        elif number != first:
            marks.append((offset, number))
        offset += len(piece)
    whole = Line(text, first, tuple(marks))
    if len(text) < COLLAPSED:
        return [whole]
    cuts = [m.start() for m in SPLIT_AT.finditer(text)]
    if len([c for c in cuts if c > 0]) < (1 if cuts and cuts[0] == 0 else 2):
        return [whole]
    if len(pieces) == 1:  # newlines that became runs of spaces: one space, then cut
        text = _SPACES.sub(" ", text)
        cuts = [m.start() for m in SPLIT_AT.finditer(text)]
    cuts += [m.start() for m in _EMBEDDED_PREFIX.finditer(text)]  # a log line's start
    bounds = sorted({0, *cuts})
    out = []
    for begin, end in zip(bounds, [*bounds[1:], len(text)], strict=True):
        part = strip_prefixes(text[begin:end].strip())[0]
        if part:  # numbered by the piece it starts in (about, where spaces were made one)
            out.append(Line(part, whole.line_at(begin)))
    return out


def logical_lines(text: str) -> list[Line]:
    """``text`` as the lines of its messages (see the module's docstring), each with
    its line number in ``text``. Raises nothing."""
    return [line for pieces, numbers in _joined(text) for line in _cut(pieces, numbers)]


def undecorated(text: str) -> str:
    """``text`` without ANSI codes, with HTML entities unescaped and whitespace runs
    made single spaces: where a quick search for a headline's words looks last."""
    return _SPACES.sub(" ", html.unescape(_ANSI.sub("", text)))
