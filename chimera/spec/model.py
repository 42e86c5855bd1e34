"""The Spec's data model: requirements, their checks, and what a check reports.

A Spec is a set of YAML files (``specs/*.yaml``); each holds ``requirements:``, a list of
mappings with ``id``, optional ``title``, ``risk``, ``depends_on``, ``owner`` and exactly one
check keyed by its kind name (``defines``, ``contains``, ``absent``, ``command`` or a kind
registered by a plugin). The shape follows import-linter's contracts: every kind is a class
with typed fields (a pydantic model that forbids unknown fields, so validation is per kind),
``check()`` returns a :class:`CheckOutcome`, and the kind renders its own failure.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, ConfigDict

from chimera.protocols import Risk as Risk  # re-exported: the Spec model's vocabulary

if TYPE_CHECKING:
    from chimera.spec.check_context import CheckContext


class Status(StrEnum):
    """Outcome of one requirement.

    ``failed``: the check ran and the requirement does not hold (a missing target included).
    ``error``: the check could not be evaluated (syntax error, regex timeout, unreadable file,
    zero files selected). Both are red.
    """

    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"

    @property
    def red(self) -> bool:
        return self is not Status.PASSED


# Every character str.splitlines() breaks on: a message holding one would stop being one line.
_LINE_BREAKS = str.maketrans(
    {
        "\n": "\\n",
        "\r": "\\r",
        "\v": "\\v",
        "\f": "\\f",
        "\x1c": "\\x1c",
        "\x1d": "\\x1d",
        "\x1e": "\\x1e",
        "\x85": "\\x85",
        "\u2028": "\\u2028",
        "\u2029": "\\u2029",
    }
)

EVIDENCE_LINE_CHARS = 200
"""Longest line of evidence text kept (a match's line, a line of command output); characters."""


def one_line(text: str) -> str:
    """``text`` with every line break escaped (``\\n``...), so it fits a one-line message.

    Used wherever spec text (a YAML ``|`` block pattern, a multi-line command) is quoted in a
    message, a description or a JSON ``message`` field.
    """
    return text.translate(_LINE_BREAKS)


def cap_line(line: str, limit: int = EVIDENCE_LINE_CHARS) -> str:
    """``line`` cut to at most ``limit`` characters plus a marker naming how many were cut
    (``… [+9999800 chars]``); shorter lines are returned unchanged."""
    if len(line) <= limit:
        return line
    return f"{line[:limit]}… [+{len(line) - limit} chars]"


def cap_lines(text: str, limit: int = EVIDENCE_LINE_CHARS) -> str:
    """:func:`cap_line` applied to every line of ``text`` (line ends kept as ``\\n``)."""
    return "\n".join(cap_line(line, limit) for line in text.split("\n"))


@dataclass(frozen=True, slots=True)
class SourceLocation:
    """A place in a spec file; ``line`` and ``col`` are 1-based."""

    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


@dataclass(frozen=True, slots=True)
class Evidence:
    """What a check saw: a location in the checked tree, or a command's exit and output.

    Attributes:
        file: path relative to the checked root (POSIX separators), or ``None``.
        line: 1-based line, or ``None`` when the evidence concerns a whole file or a command.
        col: 1-based column, or ``None``.
        snippet: the matched text, the definition line, or a command's output tail.
        note: a short qualifier (``"exit 1"``, ``"binary file"``, ``"matched"``).
    """

    file: str | None = None
    line: int | None = None
    col: int | None = None
    snippet: str = ""
    note: str = ""

    def where(self) -> str:
        """``file:line:col`` with whatever parts are known ('' when none)."""
        if self.file is None:
            return ""
        parts = [self.file]
        if self.line is not None:
            parts.append(str(self.line))
            if self.col is not None:
                parts.append(str(self.col))
        return ":".join(parts)

    def render(self) -> str:
        """One human line (multi-line snippets are indented under it)."""
        head = self.where()
        bits = [b for b in (head, self.note) if b]
        text = " ".join(bits) if len(bits) < 2 else f"{bits[0]} ({bits[1]})"
        snippet = self.snippet.rstrip("\n")
        if not snippet:
            return text
        if "\n" in snippet:
            body = "\n".join("    " + ln for ln in snippet.splitlines())
            return f"{text}:\n{body}" if text else body
        return f"{text}: {snippet}" if text else snippet

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "line": self.line,
            "col": self.col,
            "snippet": self.snippet,
            "note": self.note,
        }


@dataclass(frozen=True, slots=True)
class CheckOutcome:
    """What a kind's ``check()`` returns: a status, one-line message and the evidence.

    ``omitted`` counts evidence items that come after ``evidence`` and were not kept (an
    engine session with an evidence limit, :attr:`EngineOptions.evidence_limit
    <chimera.spec.engine.options.EngineOptions.evidence_limit>`); reports count them as
    they count the items they leave out themselves.
    """

    status: Status
    message: str
    evidence: tuple[Evidence, ...] = ()
    omitted: int = 0


class Check(BaseModel):
    """Base class of every requirement kind.

    Subclasses set ``kind_name`` (the YAML key, e.g. ``contains``), declare typed fields, and
    implement :meth:`check`. Unknown fields are rejected per kind (``extra="forbid"``), so a
    later kind or field never loosens the others. Register a kind through the
    ``chimera_requirement_kinds`` pluggy hook (see :mod:`chimera.spec.hookspecs`).
    """

    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=False)

    kind_name: ClassVar[str]
    """The key that selects this kind in a requirement mapping."""

    cacheable: ClassVar[bool] = False
    """Whether the outcome depends on nothing but the tree and the engine's settings, so a
    report cache may reuse it for an unchanged tree (``contains``, ``absent``, ``defines``; a
    ``command`` runs code and never is). Read through :meth:`is_cacheable`: a kind must declare
    it itself, since a subclass that overrides :meth:`check` may depend on more."""

    @classmethod
    def is_cacheable(cls) -> bool:
        """``cacheable`` as this class itself declares it (never inherited)."""
        return bool(cls.__dict__.get("cacheable", False))

    def check(self, ctx: CheckContext) -> CheckOutcome:
        """Evaluate the check against ``ctx.root``; never raises for bad input.

        Returns ``failed`` when the requirement does not hold and ``error`` when it cannot be
        evaluated; an unexpected exception is turned into ``error`` by the engine.
        """
        raise NotImplementedError

    def prepare(self, ctx: CheckContext) -> None:
        """Announce the files and patterns this check will need (optional).

        The engine batches work across requirements (each file read once, each pattern
        compiled once, one multi-pattern pass per file) from these announcements.
        """

    def describe(self) -> str:
        """One line describing the check for reports (``contains 'x' in README.md``)."""
        return self.kind_name

    def render_failure(self, outcome: CheckOutcome, *, max_evidence: int = 5) -> str:
        """The multi-line text shown for a red outcome: message, then evidence lines.

        At most ``max_evidence`` locations are listed, followed by a count of the rest.
        """
        lines = [outcome.message]
        shown = outcome.evidence[:max_evidence]
        lines.extend("  " + ev.render().replace("\n", "\n  ") for ev in shown)
        rest = len(outcome.evidence) - len(shown) + outcome.omitted
        if rest > 0:
            lines.append(f"  ... and {rest} more location{'s' if rest != 1 else ''}")
        return "\n".join(lines)


@dataclass(frozen=True)
class Requirement:
    """One requirement of the Spec.

    Attributes:
        id: unique across the whole spec directory.
        check: the requirement's single check (an instance of a registered kind).
        title: optional human title.
        risk: ``low`` (default), ``medium`` or ``high``.
        depends_on: ids of requirements this one builds on (ordering for the orchestrator).
        owner: path scopes (globs) used to build ownership-scoped context.
        location: where the requirement's mapping starts in its spec file.
        field_locations: where each top-level key of the mapping sits (for reports).
    """

    id: str
    check: Check
    location: SourceLocation
    title: str | None = None
    risk: Risk = Risk.LOW
    depends_on: tuple[str, ...] = ()
    owner: tuple[str, ...] = ()
    field_locations: dict[str, SourceLocation] = field(default_factory=dict, compare=False)

    @property
    def kind(self) -> str:
        return self.check.kind_name


@dataclass(frozen=True)
class SpecFile:
    """The requirements of one spec file, in file order."""

    path: Path
    requirements: tuple[Requirement, ...]


@dataclass(frozen=True)
class Spec:
    """A validated Spec: every requirement of every file, ids unique, dependencies acyclic."""

    files: tuple[SpecFile, ...]

    @property
    def requirements(self) -> tuple[Requirement, ...]:
        return tuple(r for f in self.files for r in f.requirements)

    def __iter__(self) -> Iterator[Requirement]:
        return iter(self.requirements)

    def __len__(self) -> int:
        return sum(len(f.requirements) for f in self.files)

    def by_id(self) -> dict[str, Requirement]:
        return {r.id: r for r in self.requirements}

    def select(self, ids: Sequence[str]) -> Spec:
        """A Spec holding only ``ids`` (file structure kept); unknown ids raise KeyError."""
        wanted = set(ids)
        known = {r.id for r in self.requirements}
        missing = sorted(wanted - known)
        if missing:
            raise KeyError(", ".join(missing))
        return Spec(
            tuple(
                SpecFile(f.path, tuple(r for r in f.requirements if r.id in wanted))
                for f in self.files
            )
        )
