"""One definition per line form of a dump.

A line form is written once, as its parts in the order XLA prints them: literal text
(:class:`Lit`), named fields with a pattern and a converter (:class:`Field`), optional
runs (:class:`Opt`), text that is matched and dropped (:class:`Skip`), and nested
objects such as the ``<id name{0} @1>`` value reference (:class:`Nested`). From those
parts :class:`LineForm` makes both ways of reading the line:

* the **fast path**: one regular expression for the whole line, and a builder
  generated from the fields that turns its groups into the model object with keyword
  arguments (a dump has millions of lines, so this is what reads almost all of them);
* the **fine grammar**: a parsy parser built from the same parts, each token with a
  description, which reads what the fast path rejects and, when a line does not fit,
  says at which column what was expected.

Both come from the same parts, so they read the same fields with the same converters
(a test still checks they agree on every line of every sample dump). A new attribute
of a line is one more part here and one more field of its model class.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from parsy import ParseError, Parser, eof, regex, seq, string

Pairs = list[tuple[str, Any]]
RUN = 1024  # lines read by one findall (take_columns)


class Part:
    """A piece of a line form."""

    def regex(self, keep: frozenset[str] | None = None) -> str:
        """This part as (a piece of) a regular expression, one group per field (per
        field named in ``keep``, if given: the others match without a group)."""
        raise NotImplementedError

    def parser(self) -> Parser:
        """This part as a parsy parser yielding ``[(field name, value), ...]``."""
        raise NotImplementedError

    def code(self, groups: Iterable[int], names: dict[str, Any], optional: bool) -> list[str]:
        """``name=expression`` items that build this part's fields from ``g`` (the
        match's groups), taking group numbers from ``groups`` in order; objects the
        expressions refer to are added to ``names``."""
        raise NotImplementedError

    def field_names(self) -> list[tuple[str, Any]]:
        """(name, default) of the fields this part yields at the top level."""
        raise NotImplementedError


@dataclass(frozen=True)
class Lit(Part):
    """Text printed as it is: ``Lit(", color ")``."""

    text: str

    def regex(self, keep: frozenset[str] | None = None) -> str:
        return re.escape(self.text)

    def parser(self) -> Parser:
        return string(self.text).result([])

    def code(self, groups, names, optional) -> list[str]:
        return []

    def field_names(self) -> list[tuple[str, Any]]:
        return []


@dataclass(frozen=True)
class Skip(Part):
    """Text matched by ``pattern`` (no groups) and not kept."""

    pattern: str
    desc: str

    def regex(self, keep: frozenset[str] | None = None) -> str:
        return f"(?:{self.pattern})"

    def parser(self) -> Parser:
        return regex(self.pattern).result([]).desc(self.desc)

    def code(self, groups, names, optional) -> list[str]:
        return []

    def field_names(self) -> list[tuple[str, Any]]:
        return []


def _identity(text: str) -> str:
    return text


@dataclass(frozen=True)
class Field(Part):
    """A named field: ``pattern`` (no capturing groups) read by ``convert`` (the text
    as it is by default). ``default`` is its value when an :class:`Opt` around it is
    absent."""

    name: str
    pattern: str
    desc: str
    convert: Callable[[str], Any] = _identity
    default: Any = None
    # ``convert`` over a whole column of texts at once (take_columns), where that is
    # quicker than one call a text: the same values.
    convert_column: Callable[[Sequence[str]], Iterable[Any]] | None = None
    # The fast path's pattern, where the fine grammar's needs a lookahead only because a
    # parsy parser does not backtrack into the one before it: a regular expression does,
    # and matches the same lines into the same groups without looking twice.
    fast: str | None = None

    def regex(self, keep: frozenset[str] | None = None) -> str:
        pattern = self.pattern if self.fast is None else self.fast
        if keep is not None and self.name not in keep:
            return f"(?:{pattern})"
        return f"({pattern})"

    def parser(self) -> Parser:
        name, convert = self.name, self.convert
        return regex(self.pattern).map(lambda text: [(name, convert(text))]).desc(self.desc)

    def code(self, groups, names, optional) -> list[str]:
        g = f"g[{next(groups)}]"
        if self.convert is _true and self.default is False:  # a flag (see flag())
            return [f"{self.name}={g} is not None"]
        if self.convert is _identity:
            value = g
        else:
            conv = f"_c{len(names)}"
            names[conv] = self.convert
            value = f"{conv}({g})"
        if optional:
            default = f"_d{len(names)}"
            names[default] = self.default
            value = f"({default} if {g} is None else {value})"
        return [f"{self.name}={value}"]

    def field_names(self) -> list[tuple[str, Any]]:
        return [(self.name, self.default)]


def flag(name: str, text: str) -> Part:
    """An attribute printed as ``text`` or not at all: the field is True or False."""
    return Opt(Field(name, re.escape(text), repr(text.strip(", ")), _true, False))


def _true(_: str) -> bool:
    return True


class Opt(Part):
    """Parts printed together or not at all; their fields take their defaults when
    absent."""

    def __init__(self, *parts: Part):
        self.parts = parts

    def regex(self, keep: frozenset[str] | None = None) -> str:
        return "(?:" + "".join(p.regex(keep) for p in self.parts) + ")?"

    def parser(self) -> Parser:
        return seq(*(p.parser() for p in self.parts)).map(_flat).optional().map(lambda r: r or [])

    def code(self, groups, names, optional) -> list[str]:
        return [item for p in self.parts for item in p.code(groups, names, True)]

    def field_names(self) -> list[tuple[str, Any]]:
        return [f for p in self.parts for f in p.field_names()]


class Nested(Part):
    """An object printed inside the line (the value reference ``<id name{0} @1>``):
    its own parts, built into ``make(**fields)`` and kept as field ``name``."""

    def __init__(self, name: str, make: Callable[..., Any], *parts: Part):
        self.name, self.make, self.parts = name, make, parts
        self.defaults = [f for p in parts for f in p.field_names()]

    def regex(self, keep: frozenset[str] | None = None) -> str:
        return "".join(p.regex(keep) for p in self.parts)

    def parser(self) -> Parser:
        name, make, defaults = self.name, self.make, self.defaults
        # No description of its own: a damaged reference is reported at the column of
        # the token that did not fit.
        return seq(*(p.parser() for p in self.parts)).map(
            lambda pairs: [(name, make(**_fields(_flat(pairs), defaults)))]
        )

    def code(self, groups, names, optional) -> list[str]:
        make = f"_m{len(names)}"
        names[make] = self.make
        inner = [item for p in self.parts for item in p.code(groups, names, optional)]
        return [f"{self.name}={_call(make, self.make, inner, names)}"]

    def field_names(self) -> list[tuple[str, Any]]:
        return [(self.name, None)]


def _call(name: str, make: Callable[..., Any] | None, items: list[str], names: dict) -> str:
    """The source of a call of ``make`` (held as ``name``) with ``items`` (each
    ``"field=expression"``). A dataclass is called with its fields in order, by
    position (half the cost of keywords: a big dump builds millions), any field the line
    does not give taking its declared default; anything else by keyword."""
    given = dict(item.split("=", 1) for item in items)
    if make is None or not dataclasses.is_dataclass(make):
        return f"{name}({', '.join(items)})"
    fields = [f for f in dataclasses.fields(make) if f.init]
    if set(given) - {f.name for f in fields}:
        return f"{name}({', '.join(items)})"  # let the call say what is wrong
    last = max(i for i, f in enumerate(fields) if f.name in given)
    args = []
    for f in fields[: last + 1]:
        if f.name in given:
            args.append(given[f.name])
        elif f.default is not dataclasses.MISSING:
            default = f"_default{len(names)}"
            names[default] = f.default
            args.append(default)
        else:  # a required field the line does not give, or a default factory
            return f"{name}({', '.join(items)})"
    return f"{name}({', '.join(args)})"


def _converted(field: Field, optional: bool, texts: Sequence[str]) -> Iterable[Any]:
    """``field``'s values of ``texts`` (a ``findall`` column; ``""`` where an optional
    field is absent)."""
    convert, default = field.convert, field.default
    if not optional:
        if field.convert_column is not None:
            return field.convert_column(texts)
        return texts if convert is _identity else map(convert, texts)
    return [default if text == "" else convert(text) for text in texts]


def _fields_in(
    parts: Iterable[Part], optional: bool = False, nested: bool = False
) -> Iterator[tuple[Field, bool, bool]]:
    """Each field of ``parts``, in the order of their regular expression's groups, with
    whether it is optional (in an :class:`Opt`) and whether it is in a :class:`Nested`."""
    for p in parts:
        if isinstance(p, Field):
            yield p, optional, nested
        elif isinstance(p, Opt):
            yield from _fields_in(p.parts, True, nested)
        elif isinstance(p, Nested):
            yield from _fields_in(p.parts, optional, True)


class _Optional(Part):
    """A part of a line form's parts with whether it is inside an :class:`Opt`, for
    :meth:`LineForm.flat_builder`."""

    def __init__(self, part: Part, optional: bool):
        self.part, self.optional = part, optional

    def code(self, groups, names, optional) -> list[str]:
        return self.part.code(groups, names, optional)


def _flattened(parts: Iterable[Part], optional: bool = False) -> Iterator[_Optional]:
    """``parts`` with every :class:`Nested` and :class:`Opt` part opened into its own,
    in group order, each with whether it is optional."""
    for p in parts:
        if isinstance(p, Nested):
            yield from _flattened(p.parts, optional)
        elif isinstance(p, Opt):
            yield from _flattened(p.parts, True)
        else:
            yield _Optional(p, optional)


def _group_names(parts: Iterable[Part]) -> list[str]:
    """The field of each group of ``parts``' regular expression, in group order."""
    return [f.name for f, _, _ in _fields_in(parts)]


def _flat(pairs: list[Pairs]) -> Pairs:
    return [kv for group in pairs for kv in group]


def _fields(pairs: Pairs, defaults: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(defaults)
    out.update(pairs)
    return out


class LineForm:
    """One form of line: its parts, the model object they build, and both ways of
    reading it (see the module's docstring).

    ``make(**fields, **context)`` builds the object (a ``dict`` of the fields if
    ``make`` is None); ``context`` names what the reader adds that the line does not
    print (its line number, the allocation it is in).
    """

    def __init__(
        self,
        what: str,
        *parts: Part,
        make: Callable[..., Any] | None = None,
        context: tuple[str, ...] = (),
    ):
        self.what = what
        self.parts = parts
        self.make = make
        self.context = context
        self.body = "".join(p.regex() for p in parts)
        self.pattern = re.compile(self.body + r"\Z")
        self.defaults = [f for p in parts for f in p.field_names()]
        self.build: Callable[..., Any] = self._builder()
        self._lines: re.Pattern[str] | None = None  # the body, one match a line of a run
        self._fields: list[tuple[Field, bool]] | None = None  # take_columns' fields

    @cached_property
    def fine(self) -> Parser:
        """The fine grammar (parsy): what reads a line the fast path does not, and says
        what it lacks. Made when first needed: most runs never read such a line, and
        making every form's took 5 ms of each start."""
        return seq(*(p.parser() for p in self.parts)).map(_flat)

    @cached_property
    def _whole(self) -> Parser:
        return self.fine << eof

    def body_keeping(self, *names: str) -> str:
        """The fast path's regular expression (without its end anchor) with a group for
        each field in ``names`` only, in the order the line prints them: for a pass
        that takes a few fields of every line (the first look's index, size and
        colour) and would only pay for the others' groups. Raises ``ValueError`` if
        this form has no field of one of the names."""
        fields = _group_names(self.parts)
        for name in names:
            if name not in fields:
                raise ValueError(f"{self.what} has no field {name!r}")
        return "".join(p.regex(frozenset(names)) for p in self.parts)

    def fields(self, *names: str) -> list[Field]:
        """The fields of these ``names``, in that order (with their converters: what a
        pass with :meth:`body_keeping` makes of its groups). Raises ``ValueError`` if
        this form has no field of one of the names."""
        found: dict[str, Field] = {}
        for f, _, _ in _fields_in(self.parts):
            found.setdefault(f.name, f)
        missing = [name for name in names if name not in found]
        if missing:
            raise ValueError(f"{self.what} has no field {missing[0]!r}")
        return [found[name] for name in names]

    def _builder(self) -> Callable[..., Any]:
        """``build(match, *context)``: the object from the fast path's match, made by
        a function generated from the parts (as ``dataclasses`` makes ``__init__``):
        one call, no loop over the fields per line."""
        names: dict[str, Any] = {"_make": self.make if self.make is not None else dict}
        groups = iter(range(self.pattern.groups))
        items = [item for p in self.parts for item in p.code(groups, names, False)]
        items += [f"{c}={c}" for c in self.context]
        args = "".join(f", {c}" for c in self.context)
        call = _call("_make", self.make, items, names)
        source = f"def build(m{args}):\n    g = m.groups()\n    return {call}\n"
        exec(compile(source, f"<line form {self.what}>", "exec"), names)  # noqa: S102
        return names["build"]

    def flat_builder(self, *order: str) -> Callable[..., Any]:
        """``build(match, add, *context)``: ``add(**fields, **context)`` of the fast
        path's match, the fields of a :class:`Nested` part given as fields of their own
        (``id=...``, not ``value=HloValue(...)``): for a reader that keeps the fields as
        columns and makes no object a line. With ``order`` (every field's and context
        name's, once), ``add`` is called with them by position in that order (a third
        quicker than by keyword, a call a line). Generated as :meth:`_builder` is.
        Raises ValueError if ``order`` does not name each of them once."""
        names: dict[str, Any] = {}
        groups = iter(range(self.pattern.groups))
        items = [item for p in _flattened(self.parts) for item in p.code(groups, names, p.optional)]
        items += [f"{c}={c}" for c in self.context]
        if order:
            by_name = dict(item.split("=", 1) for item in items)
            if sorted(order) != sorted(by_name):
                raise ValueError(f"{self.what}: the order must name {sorted(by_name)} once each")
            items = [by_name[name] for name in order]
        args = "".join(f", {c}" for c in self.context)
        source = (
            f"def build(m, _add{args}):\n    g = m.groups()\n    return _add({', '.join(items)})\n"
        )
        exec(compile(source, f"<line form {self.what}, flat>", "exec"), names)  # noqa: S102
        return names["build"]

    def take(
        self, lines: list[str], i: int, stop: int, first_line: int, add: Callable[[Any], object]
    ) -> int:
        """Read ``lines[i:stop]`` by the fast path while they match, calling
        ``add(build(match, line number))`` for each (``first_line`` is the 1-based line
        number of ``lines[0]``; this form's context must be just the line). Returns the
        index of the first line not taken (``i`` if none was): a section reader's run of
        ordinary lines, in one loop."""
        match, build = self.pattern.match, self.build
        j = i
        while j < stop:
            m = match(lines[j])
            if m is None:
                break
            add(build(m, first_line + j))
            j += 1
        return j

    def take_columns(
        self, lines: list[str], i: int, stop: int, first_line: int, columns: Sequence[Any]
    ) -> int:
        """Read ``lines[i:stop]`` while each is of this form, as :meth:`take` does, into
        ``columns``: each field's value (converted; an absent optional field's default)
        appended to its column, in the order the line prints the fields, and the line's
        number (``first_line`` is that of ``lines[0]``) to the last column. No object is
        made: a worker hands a big block's lines back as the columns. :data:`RUN` lines
        are read at a time by one ``findall``; the run in which one does not fit, line
        by line. Returns the index of the first line not taken (``i`` if none was).
        Raises ``ValueError`` for a form with a nested part, or an optional field that
        can match empty text (``findall`` gives ``""`` for an absent one)."""
        fields = self._fields
        if fields is None:
            fields = self._fields = self._column_fields()
        match = self.pattern.match
        if self._lines is None:
            self._lines = re.compile(f"^{self.body}$", re.M)
        found_in = self._lines.findall
        line_numbers = columns[-1]
        j = i
        while j < stop:
            run = lines[j : j + RUN if j + RUN < stop else stop]
            found = found_in("\n".join(run))
            if len(found) == len(run):  # each line one match: none split, none left out
                values = zip(*found, strict=True) if len(fields) > 1 else (found,)
                for column, (field, optional), texts in zip(columns, fields, values, strict=False):
                    column.extend(_converted(field, optional, texts))
                line_numbers.extend(range(first_line + j, first_line + j + len(run)))
                j += len(run)
                continue
            for line in run:
                m = match(line)
                if m is None:
                    return j
                for column, (field, _), text in zip(columns, fields, m.groups(), strict=False):
                    column.append(field.default if text is None else field.convert(text))
                line_numbers.append(first_line + j)
                j += 1
        return j

    def _column_fields(self) -> list[tuple[Field, bool]]:
        """This form's fields in group order, each with whether it is optional (in an
        :class:`Opt`). Raises ``ValueError`` as :meth:`take_columns` says."""
        fields: list[tuple[Field, bool]] = []
        for f, optional, nested in _fields_in(self.parts):
            if nested:
                raise ValueError(f"{self.what} has a nested part")
            if optional and re.fullmatch(f.pattern, ""):
                raise ValueError(f"{self.what}: optional {f.name} may match ''")
            fields.append((f, optional))
        return fields

    def match(self, line: str) -> re.Match[str] | None:
        """The fast path's match of the whole ``line``, or None."""
        return self.pattern.match(line)

    def read_fine(self, line: str, *context: Any) -> Any:
        """``line`` read by the fine grammar alone. Raises ``parsy.ParseError``."""
        fields = _fields(self._whole.parse(line), self.defaults)
        fields.update(zip(self.context, context, strict=True))
        return (self.make or dict)(**fields)

    def read(self, sink: Any, line: str, lineno: int, *context: Any) -> Any:
        """The object ``line`` holds (fast path, else the fine grammar), or None after
        reporting to ``sink`` (a :class:`~hlotop.parse.tokens.Sink`) at ``lineno`` which
        column did not fit and what was expected there."""
        m = self.pattern.match(line)
        if m is not None:
            return self.build(m, *context)
        try:
            return self.read_fine(line, *context)
        except ParseError as err:
            sink.expected(lineno, self.what, line, err)
            return None
