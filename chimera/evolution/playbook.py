"""The ACE playbook: sections of bullets that grow by delta updates, never by rewrites.

Agentic Context Engineering (Zhang et al., arXiv 2510.04618) keeps strategies as a playbook of
itemised bullets with helpful/harmful counters, maintained by three roles: the **Generator**
(the agent, which uses the playbook and reports which bullets it used), the **Reflector**
(which reads an attempt and its verdict and tags bullets helpful or harmful, and names new
insights) and the **Curator** (which turns insights into *delta* operations). Rewriting the
whole context each round collapses it ("context collapse"); so here a curation is a list of
:class:`Delta` operations — add a bullet, count a bullet helpful or harmful, remove a bullet
whose harm is established — and a bullet no operation names is never touched (a test checks
byte-identity of untouched lines).

Text format (round-trips through :func:`Playbook.parse` / :meth:`Playbook.format`)::

    ## Strategies
    [str-00001] helpful=3 harmful=0 :: Run the focused test before the whole suite.
    ## Pitfalls
    [pit-00002] helpful=0 harmful=2 :: Editing generated files: regenerate them instead.

The playbook holds strategies; semantic memory holds facts about the repository; skills are
prompt templates — one home each.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field, replace
from typing import Literal

from chimera.errors import ConfigError

_BULLET = re.compile(r"^\[([a-z]{2,8}-\d{5})\] helpful=(\d+) harmful=(\d+) :: (.+)$")
_SECTION = re.compile(r"^## (.+?)\s*$")


@dataclass(frozen=True, slots=True)
class Bullet:
    """One playbook item: ``id`` is ``<prefix>-<5 digits>``; counters are whole numbers."""

    id: str
    text: str
    helpful: int = 0
    harmful: int = 0

    def line(self) -> str:
        return f"[{self.id}] helpful={self.helpful} harmful={self.harmful} :: {self.text}"

    @property
    def score(self) -> int:
        return self.helpful - self.harmful


@dataclass(frozen=True, slots=True)
class Delta:
    """One curation operation.

    ``add``: a new bullet (``section``, ``text``); ``helpful`` / ``harmful``: count one use of
    bullet ``bullet_id``; ``remove``: drop ``bullet_id`` — allowed only when its harmful count
    exceeds its helpful count (established harm), else refused.
    """

    op: Literal["add", "helpful", "harmful", "remove"]
    section: str = ""
    text: str = ""
    bullet_id: str = ""


@dataclass
class Playbook:
    """Ordered sections of bullets."""

    sections: dict[str, list[Bullet]] = field(default_factory=dict)

    @classmethod
    def parse(cls, text: str, *, source: str = "playbook") -> Playbook:
        """Read the text format; every problem is ``source:line: message``.

        Raises:
            ConfigError: a malformed line, a bullet before any section, or a duplicate id.
        """
        book = cls()
        current: list[Bullet] | None = None
        seen: set[str] = set()
        problems: list[str] = []
        for number, raw in enumerate(text.splitlines(), 1):
            line = raw.rstrip()
            if not line.strip():
                continue
            if m := _SECTION.match(line):
                current = book.sections.setdefault(m.group(1), [])
                continue
            m = _BULLET.match(line)
            if m is None:
                problems.append(f"{source}:{number}: not a section or bullet: {line[:60]!r}")
            elif current is None:
                problems.append(f"{source}:{number}: bullet before any '## Section' line")
            elif m.group(1) in seen:
                problems.append(f"{source}:{number}: duplicate bullet id {m.group(1)}")
            else:
                seen.add(m.group(1))
                current.append(Bullet(m.group(1), m.group(4), int(m.group(2)), int(m.group(3))))
        if problems:
            raise ConfigError("; ".join(problems))
        return book

    def format(self) -> str:
        """The text format (parse(format(p)) == p)."""
        lines: list[str] = []
        for name, bullets in self.sections.items():
            lines.append(f"## {name}")
            lines += [b.line() for b in bullets]
        return "\n".join(lines) + ("\n" if lines else "")

    def bullets(self) -> Iterable[tuple[str, Bullet]]:
        for name, items in self.sections.items():
            for b in items:
                yield name, b

    def _next_id(self, section: str) -> str:
        prefix = (re.sub(r"[^a-z]", "", section.lower())[:3] or "gen").ljust(2, "x")
        numbers = [int(b.id.rsplit("-", 1)[1]) for _, b in self.bullets()]
        return f"{prefix}-{max(numbers, default=0) + 1:05d}"

    def apply(self, deltas: Iterable[Delta]) -> list[str]:
        """Apply delta operations in order; returns one line per refused operation.

        A bullet no operation names keeps its exact line. An ``add`` whose text already exists
        (whitespace- and case-insensitively) in the section counts that bullet helpful instead
        of duplicating it.
        """
        refused: list[str] = []
        for d in deltas:
            if d.op == "add":
                text = " ".join(d.text.split())
                # One line: a section name with a line break would write a second line of
                # its own into the playbook file.
                section = " ".join(d.section.split())
                if not text or not section:
                    refused.append("add: needs a section and text")
                    continue
                items = self.sections.setdefault(section, [])
                same = [i for i, b in enumerate(items) if b.text.lower() == text.lower()]
                if same:
                    items[same[0]] = replace(items[same[0]], helpful=items[same[0]].helpful + 1)
                else:
                    items.append(Bullet(self._next_id(section), text))
                continue
            where = self._find(d.bullet_id)
            if where is None:
                refused.append(f"{d.op}: no bullet {d.bullet_id!r}")
                continue
            name, index = where
            bullet = self.sections[name][index]
            if d.op == "helpful":
                self.sections[name][index] = replace(bullet, helpful=bullet.helpful + 1)
            elif d.op == "harmful":
                self.sections[name][index] = replace(bullet, harmful=bullet.harmful + 1)
            elif bullet.harmful > bullet.helpful:
                del self.sections[name][index]
            else:
                refused.append(f"remove: {d.bullet_id} is not established as harmful")
        return refused

    def _find(self, bullet_id: str) -> tuple[str, int] | None:
        for name, items in self.sections.items():
            for i, b in enumerate(items):
                if b.id == bullet_id:
                    return name, i
        return None

    def render(
        self,
        budget_tokens: int,
        count: Callable[[str], int] | None = None,
        *,
        exclude: Collection[str] = (),
    ) -> str:
        """The playbook for a prompt within ``budget_tokens``: best-scoring bullets first
        (score = helpful - harmful, ties in playbook order), negative scores left out, the
        kept bullets shown in their sections' order.

        ``count`` counts a text's tokens (default: 4 characters per token, an estimate);
        ``exclude`` names bullets the lifecycle retired (never shown).
        """
        counter = count or (lambda s: (len(s) + 3) // 4)
        ranked = sorted(
            (
                (name, i, b)
                for i, (name, b) in enumerate(self.bullets())
                if b.score >= 0 and b.id not in exclude
            ),
            key=lambda t: (-t[2].score, t[1]),
        )
        kept: set[str] = set()
        used = 0
        for _, _, b in ranked:
            cost = counter(b.line()) + 1
            if used + cost > budget_tokens:
                continue
            kept.add(b.id)
            used += cost
        from chimera.governance.sanitize import one_line

        lines: list[str] = []
        for name, items in self.sections.items():
            # One line each, whatever a section name or a bullet holds (model-written words).
            chosen = [one_line(b.line()) for b in items if b.id in kept]
            if chosen:
                lines += [f"## {one_line(name, 60)}", *chosen]
        return "\n".join(lines)
