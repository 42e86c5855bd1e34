"""``consolidate``: several roles' answers merged into one bounded brief (MOC-style).

A crew never pastes every earlier output into the next prompt (the context overflow CrewAI's
users hit): what the next role, the supervisor or the verdict sees is a consolidation —

* **agreed** points: the same point made by two or more roles, kept once with every source;
* **disagreements**: two points about the same thing with opposite polarity ("X is tested" /
  "X is not tested") or the same key with different values (``verdict: APPROVE`` /
  ``verdict: REJECT``), both sides kept with their roles;
* **unique** findings: a point only one role made, kept with its role;
* **repeats** (the same role saying the same thing twice) dropped and counted.

It is a pure function of the answers (no model call), so it is deterministic for the same model
answers and costs no tokens. Points are bullet or numbered lines, else sentences; two points
are "the same" when their content words overlap (Jaccard ≥ ``similarity``). The rendering fits
``max_tokens`` (≈ 4 characters per token): disagreements first, then agreements, then unique
findings; whatever does not fit is named in a closing line (how many, from which roles), never
dropped silently.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

__all__ = ["Consolidation", "Point", "consolidate", "split_points"]

_BULLET = re.compile(r"^\s*(?:[-*•+]|\d+[.)]|\(\w\))\s+")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9`\"'(])")
_WORD = re.compile(r"[a-z0-9_]+(?:'[a-z]+)?")
_KEY_VALUE = re.compile(r"^([A-Za-z][\w .\-/]{0,38}?)\s*[:=]\s*(\S.*)$")
_NEGATIONS = frozenset(
    [
        "not",
        "no",
        "never",
        "none",
        "nothing",
        "without",
        "cannot",
        "can't",
        "don't",
        "doesn't",
        "isn't",
        "aren't",
        "won't",
        "wasn't",
        "weren't",
        "shouldn't",
        "lacks",
        "lacking",
        "missing",
        "fails",
    ]
)
_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "of",
        "to",
        "in",
        "on",
        "for",
        "with",
        "by",
        "at",
        "from",
        "as",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "there",
        "here",
        "has",
        "have",
        "had",
        "do",
        "does",
        "did",
        "should",
        "must",
        "may",
        "might",
        "can",
        "will",
        "would",
        "could",
        "so",
        "but",
        "if",
        "then",
        "than",
        "also",
    ]
)
_MIN_POINT_CHARS = 3
_VERDICT = re.compile(r"^\W*(APPROVED?|LGTM|REJECT(?:ED)?)\b", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Point:
    """One point of one role's answer."""

    role: str
    text: str
    words: frozenset[str]
    negated: bool
    key: str | None = None
    value: str | None = None


@dataclass
class _Cluster:
    head: Point
    roles: list[str] = field(default_factory=list)
    opposed: list[Point] = field(default_factory=list)
    opposed_roles: list[str] = field(default_factory=list)

    @property
    def conflict(self) -> bool:
        return bool(self.opposed)


@dataclass(frozen=True)
class Consolidation:
    """The merged brief and its parts.

    Attributes:
        agreed: ``(point, roles)`` made by two or more roles.
        conflicts: ``(side A, roles A, side B, roles B)``.
        unique: ``(point, role)`` made by one role only.
        repeats: points dropped because their role had already made them.
        omitted: points left out to fit ``max_tokens`` (named in the text's last line).
        text: the rendering (what a prompt receives).
        tokens: ≈ tokens of ``text``.
    """

    agreed: tuple[tuple[str, tuple[str, ...]], ...]
    conflicts: tuple[tuple[str, tuple[str, ...], str, tuple[str, ...]], ...]
    unique: tuple[tuple[str, str], ...]
    repeats: int
    omitted: int
    text: str

    @property
    def tokens(self) -> int:
        return len(self.text) // 4

    def to_json(self) -> dict[str, object]:
        return {
            "agreed": [{"point": p, "roles": list(r)} for p, r in self.agreed],
            "conflicts": [
                {"a": a, "a_roles": list(ar), "b": b, "b_roles": list(br)}
                for a, ar, b, br in self.conflicts
            ],
            "unique": [{"point": p, "role": r} for p, r in self.unique],
            "repeats": self.repeats,
            "omitted": self.omitted,
            "tokens": self.tokens,
        }


def split_points(text: str) -> list[str]:
    """The points of one answer: bullet/numbered lines when it has any, else sentences."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    bullets = [ln for ln in lines if _BULLET.match(ln)]
    if bullets:
        # Non-bullet lines (a heading, a closing remark) are points too.
        raw = [_BULLET.sub("", ln) for ln in lines]
    else:
        raw = [s for ln in lines for s in _SENTENCE.split(ln.strip())]
    out: list[str] = []
    for item in raw:
        cleaned = " ".join(item.strip().strip("*_`").split())
        if len(cleaned) >= _MIN_POINT_CHARS and not cleaned.endswith(":"):
            out.append(cleaned)
    return out


def _point(role: str, text: str) -> Point:
    lowered = text.lower().replace("n’t", "n't")
    tokens = _WORD.findall(lowered)
    negated = any(t in _NEGATIONS or t.endswith("n't") for t in tokens)
    words = frozenset(t for t in tokens if t not in _STOP and t not in _NEGATIONS)
    key = value = None
    kv = _KEY_VALUE.match(text)
    verdict = _VERDICT.match(text)
    if verdict:
        # "APPROVE: ..." and "REJECT: ..." are one key with two values: a disagreement.
        word = verdict.group(1).lower()
        key, value = "verdict", "reject" if word.startswith("reject") else "approve"
    elif kv and len(kv.group(1).split()) <= 4:
        key = " ".join(kv.group(1).lower().split())
        value = " ".join(_WORD.findall(kv.group(2).lower()))
    return Point(role, text, words, negated, key, value)


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a or not b:
        return 1.0 if a == b else 0.0
    return len(a & b) / len(a | b)


def _relation(p: Point, q: Point, similarity: float) -> str | None:
    """``same`` / ``opposed`` / ``None`` (unrelated)."""
    if p.key == "verdict" or q.key == "verdict":
        if p.key != q.key:
            return None
        return "same" if p.value == q.value else "opposed"
    if p.key is not None and p.key == q.key:
        if p.value == q.value:
            return "same"
        # The same key with unrelated long values is two findings, not a conflict.
        short = max(len((p.value or "").split()), len((q.value or "").split())) <= 3
        if short:
            return "opposed"
    if _jaccard(p.words, q.words) >= similarity:
        return "same" if p.negated == q.negated else "opposed"
    return None


def consolidate(
    answers: Sequence[tuple[str, str]], *, max_tokens: int = 1500, similarity: float = 0.6
) -> Consolidation:
    """Merge ``(role, answer)`` pairs (in role order) into one bounded brief.

    Args:
        answers: each role's answer; empty answers contribute nothing.
        max_tokens: the rendering's budget (≈ 4 characters per token); at least 50.
        similarity: the Jaccard overlap of content words above which two points are one.

    Raises:
        ValueError: ``max_tokens`` < 50 or ``similarity`` outside (0, 1].
    """
    if max_tokens < 50:
        raise ValueError("max_tokens must be >= 50")
    if not 0 < similarity <= 1:
        raise ValueError("similarity must be in (0, 1]")
    clusters: list[_Cluster] = []
    repeats = 0
    for role, text in answers:
        for raw in split_points(text):
            point = _point(role, raw)
            placed = False
            for c in clusters:
                rel = _relation(point, c.head, similarity)
                if rel is None:
                    continue
                if rel == "same":
                    if role in c.roles:
                        repeats += 1
                    else:
                        c.roles.append(role)
                elif role in c.opposed_roles:
                    repeats += 1
                else:
                    c.opposed.append(point)
                    c.opposed_roles.append(role)
                placed = True
                break
            if not placed:
                clusters.append(_Cluster(point, [role]))
    conflicts = tuple(
        (c.head.text, tuple(c.roles), c.opposed[0].text, tuple(c.opposed_roles))
        for c in clusters
        if c.conflict
    )
    agreed = tuple(
        (c.head.text, tuple(c.roles)) for c in clusters if not c.conflict and len(c.roles) > 1
    )
    unique = tuple(
        (c.head.text, c.roles[0]) for c in clusters if not c.conflict and len(c.roles) == 1
    )
    text, omitted = _render(conflicts, agreed, unique, max_tokens)
    return Consolidation(agreed, conflicts, unique, repeats, omitted, text)


def _render(
    conflicts: Sequence[tuple[str, tuple[str, ...], str, tuple[str, ...]]],
    agreed: Sequence[tuple[str, tuple[str, ...]]],
    unique: Sequence[tuple[str, str]],
    max_tokens: int,
) -> tuple[str, int]:
    sections: list[tuple[str, list[tuple[str, tuple[str, ...]]]]] = [
        (
            "Disagreements (both sides kept):",
            [
                (f"- {', '.join(ar)}: {a}\n  vs {', '.join(br)}: {b}", (*ar, *br))
                for a, ar, b, br in conflicts
            ],
        ),
        ("Agreed:", [(f"- {p} [{', '.join(r)}]", r) for p, r in agreed]),
        ("Unique findings:", [(f"- [{r}] {p}", (r,)) for p, r in unique]),
    ]
    budget = max_tokens * 4
    # Room for the closing line that names what was left out.
    reserve = 120
    out: list[str] = []
    used = 0
    left: list[tuple[str, ...]] = []
    for heading, items in sections:
        if not items:
            continue
        header_cost = len(heading) + 1
        shown_heading = False
        for line, roles in items:
            cost = len(line) + 1 + (0 if shown_heading else header_cost)
            if left or used + cost > budget - reserve:
                left.append(roles)
                continue
            if not shown_heading:
                out.append(heading)
                shown_heading = True
            out.append(line)
            used += cost
    if not out and not left:
        return "(no findings)", 0
    if left:
        names = sorted({r for roles in left for r in roles})
        out.append(
            f"[{len(left)} more point(s) omitted to fit {max_tokens} tokens; "
            f"from: {', '.join(names)}]"
        )
    return "\n".join(out), len(left)
