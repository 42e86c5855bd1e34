"""The one renderer of what Chimera writes on GitHub for a run: the outcome comment on the
issue and the pull request body.

Both are a :class:`Document`: a headline, typed :class:`Section`\\ s in a fixed order, and
the bot-written trailer marker last (:func:`~chimera.github.trust.summary.render_marker`). Features
add sections (memory, skills, held-out checks, cost) instead of writing Markdown of their own,
and each section says where its words come from:

* :attr:`Trust.TRUSTED` — Chimera's own words about what the writing job re-derived itself
  (verify's outputs as publish re-hashed them, the risk publish computed, links it built):
  Markdown, shown as is;
* :attr:`Trust.UNTRUSTED` — display data (the agent job's artifact, a model's or a tool's text,
  an issue): free text is shown in a fence
  (:func:`~chimera.github.conversation.untrusted.fence_block`: comments and markers removed,
  ``@``-mentions and ``#``-references defused, the fence longer than any backtick run inside), and
  values inside Chimera's own lines (:class:`Line`) as inert code spans (:func:`inert`). Only
  Chimera's template and heading words are Markdown.

An untrusted section can never carry Markdown through: :class:`Section` refuses ``markdown``
on it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from chimera.github.conversation.untrusted import fence_block
from chimera.github.trust.summary import code, render_marker
from chimera.orchestration.graph import CardStatus
from chimera.orchestration.state import RunStatus, StopReason
from chimera.spec.model import Status

__all__ = [
    "SECTION_ORDER",
    "Document",
    "Line",
    "Section",
    "Span",
    "Trust",
    "inert",
    "lines_section",
    "trusted",
    "untrusted",
]

# Chimera's own status words are shown as they are; anything else — any word an untrusted field
# holds, even a harmless-looking one — as a code span.
_VOCABULARY = frozenset(
    {*(s.value for s in RunStatus), *(s.value for s in StopReason), *(s.value for s in Status)}
    | {s.value for s in CardStatus}
    | {"red", "not checked", "bwrap", "scrubbed", "unknown"}
)

SECTION_ORDER = (
    "claim",  # what the writer asserts (the Spec verdict it re-derived)
    "verification",  # verify's outputs, as publish checked them
    "risk",  # held for approval, and why
    "detail",  # an outcome comment's sentence
    "link",  # the PR or the run that the outcome names
    "report",  # the agent job's run report: status, goal table, attempts
    "heldout",  # held-out checks
    "memory",  # memories recalled or recorded
    "skills",  # skills used or learned
    "cost",  # tokens, cost, sandbox, denied actions, audit head
    "artifacts",  # where the audit log and run state are
    "audit",  # the agent job's audit summary
)
"""The kinds of section, in the order a document shows them."""


class Trust(StrEnum):
    """Where a section's words come from (see the module docstring)."""

    TRUSTED = "trusted"
    UNTRUSTED = "untrusted"


@dataclass(frozen=True)
class Span:
    """An untrusted value with its display limit in characters."""

    value: Any
    limit: int = 200


def inert(value: Any) -> str:
    """An untrusted value as inert Markdown: a number or one of Chimera's status words
    (``passed``, ``failed``, ``red``, a run's or a card's status) as is, anything else as a
    sanitised one-line code span (:func:`~chimera.github.trust.summary.code`)."""
    if isinstance(value, Span):
        value, limit = value.value, value.limit
    else:
        limit = 200
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)  # a number the report model validated carries no Markdown
    text = str(value)
    return text if text in _VOCABULARY else code(text, limit)


@dataclass(frozen=True)
class Line:
    """One line of Chimera's words (``template``, each ``{}`` a slot) with untrusted values,
    each shown through :func:`inert`."""

    template: str
    values: tuple[Any, ...] = ()

    def render(self) -> str:
        return self.template.format(*(inert(v) for v in self.values))


@dataclass(frozen=True)
class Section:
    """A part of a document.

    Attributes:
        kind: one of :data:`SECTION_ORDER`.
        trust: where its words come from.
        title: Chimera's heading (``""``: none).
        markdown: trusted sections only — Chimera's Markdown, shown as is.
        lines: Chimera's lines with untrusted values (either trust).
        text: untrusted free text, shown fenced (``info`` is the fence's language).
        collapsed: shown inside ``<details>`` with the title as its summary.

    Raises:
        ValueError: an unknown kind, or ``markdown`` on an untrusted section.
    """

    kind: str
    trust: Trust
    title: str = ""
    markdown: str = ""
    lines: tuple[Line, ...] = ()
    text: str = ""
    info: str = "text"
    collapsed: bool = False

    def __post_init__(self) -> None:
        if self.kind not in SECTION_ORDER:
            raise ValueError(f"unknown section kind {self.kind!r}: one of {SECTION_ORDER}")
        if self.trust is Trust.UNTRUSTED and self.markdown:
            raise ValueError(f"section {self.kind!r} is untrusted: it cannot carry Markdown")

    def render(self) -> str:
        parts: list[str] = []
        if self.markdown:
            parts.append(self.markdown.rstrip())
        if self.lines:
            parts.append("\n".join(line.render() for line in self.lines))
        if self.text.strip():
            parts.append(fence_block(self.text.strip(), info=self.info))
        body = "\n\n".join(parts)
        if self.collapsed:
            title = self.title or self.kind
            return f"<details><summary>{title}</summary>\n\n{body}\n\n</details>"
        if self.title:
            return f"### {self.title}\n\n{body}" if body else f"### {self.title}"
        return body


@dataclass
class Document:
    """An outcome comment or a PR body: ``headline``, then its sections in
    :data:`SECTION_ORDER` (several of one kind keep the order they were added in), then the
    trailer marker ``<!-- chimera:<marker_kind> {...} -->`` as the last line."""

    headline: str
    marker_kind: str
    marker: Mapping[str, Any]
    sections: list[Section] = field(default_factory=list)

    def add(self, *sections: Section) -> Document:
        self.sections.extend(sections)
        return self

    def render(self) -> str:
        ordered = sorted(self.sections, key=lambda s: SECTION_ORDER.index(s.kind))
        parts = [self.headline.rstrip()]
        parts += [text for text in (s.render() for s in ordered) if text.strip()]
        parts.append(render_marker(self.marker_kind, self.marker))
        return "\n\n".join(parts)


def untrusted(kind: str, text: str, *, title: str, info: str = "text") -> Section:
    """A section of free display text (fenced), under Chimera's ``title``."""
    return Section(kind, Trust.UNTRUSTED, title=title, text=text, info=info)


def trusted(kind: str, markdown: str, *, title: str = "") -> Section:
    """A section of Chimera's own Markdown about what it re-derived."""
    return Section(kind, Trust.TRUSTED, title=title, markdown=markdown)


def lines_section(kind: str, trust: Trust, lines: Sequence[Line], *, title: str = "") -> Section:
    """A section of Chimera's lines with inert values."""
    return Section(kind, trust, title=title, lines=tuple(lines))
