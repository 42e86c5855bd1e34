"""Memory items, their tiers and provenance, and the journal op every change is made of.

Tiers follow CoALA (Sumers et al. 2023) and Letta's core vs archival memory:

* ``working``: this run only, never persisted;
* ``episodic``: what happened (one item per card or attempt outcome, with its evidence);
* ``semantic``: facts about the repository ("tests run with ``pytest -n 2``");
* ``persona``: the maintainers' standing instructions, always in context, written by people.

Every change to the store is one :class:`JournalOp` (a JSON object). The SQLite store applies
ops; the branch store on GitHub keeps them as per-tier JSONL journals and replays them, so the
same ops give the same store anywhere (ids and times travel inside the op).
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from chimera.errors import UsageError

if TYPE_CHECKING:
    from chimera.governance.redactor import SecretRedactor

TRUSTED = "trusted"
TAINTED = "tainted"


class Tier(StrEnum):
    """Where an item lives (see the module docstring)."""

    WORKING = "working"
    EPISODIC = "episodic"
    SEMANTIC = "semantic"
    PERSONA = "persona"


class OpKind(StrEnum):
    """What a journal op does. ``add``/``update``/``delete`` come from :meth:`remember` (or
    people); ``promote`` (tainted → trusted) and ``restore`` (undo a tombstone) only from
    people."""

    ADD = "add"
    UPDATE = "update"
    DELETE = "delete"
    PROMOTE = "promote"
    RESTORE = "restore"


PERSISTED_TIERS = (Tier.EPISODIC, Tier.SEMANTIC, Tier.PERSONA)

PROPOSED_UPDATE = "proposed-update"
PROPOSED_DELETE = "proposed-delete"
PROPOSAL_KINDS = frozenset({PROPOSED_UPDATE, PROPOSED_DELETE})
"""Kinds of a supersession proposal: an UPDATE or DELETE of a trusted item that a tainted
source asked for, kept as a tainted item until a person accepts it."""

_ITEM_ID = re.compile(r"m-[0-9a-f]{12}")


def _item_ref(value: Any) -> str:
    """An item id from untrusted JSON ('' unless it has the ``m-`` + 12 hex digits shape)."""
    return value if isinstance(value, str) and _ITEM_ID.fullmatch(value) else ""


_WORD = re.compile(r"[a-z0-9_][a-z0-9_.+-]*")
_STOP = frozenset(
    {"a", "an", "the", "and", "or", "of", "to", "in", "on", "at", "for", "with", "by", "is"}
    | {"are", "was", "were", "be", "been", "it", "its", "this", "that", "as", "from", "has"}
    | {"have", "had", "do", "does", "not", "no"}
)


def now() -> str:
    """The current UTC time, ISO 8601 to the second."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def normalise(text: str) -> str:
    """Case-folded, NFKC, whitespace-collapsed text without trailing punctuation: two texts
    that differ only in these ways are the same memory."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(folded.split()).strip(" .;:!,")


def content_hash(tier: Tier | str, text: str) -> str:
    """SHA-256 of the tier and the normalised text (exact-duplicate detection)."""
    return hashlib.sha256(f"{Tier(tier).value}\0{normalise(text)}".encode()).hexdigest()


def content_words(text: str) -> frozenset[str]:
    """The content words of ``text`` (lower-cased, stop words removed), for the rules."""
    return frozenset(w.strip(".-") for w in _WORD.findall(normalise(text)) if w not in _STOP)


def secret_in(text: str, redactor: SecretRedactor | None = None) -> str:
    """What credential ``text`` holds, described and never quoted (``a GitHub token``, ``the
    value of GITHUB_TOKEN``, ``a private key``; ``''`` when none): memory never stores one.

    The detector is the governance redactor's (:meth:`SecretRedactor.detect`): known formats
    wherever they sit, and secret values — ``redactor``'s, by default the process
    environment's credential-named variables; a caller that knows the workspace passes a
    redactor that reads its dotenv files too.
    """
    from chimera.governance.redactor import SecretRedactor
    from chimera.governance.secret_detectors import has_private_key_block

    found = (redactor or SecretRedactor.from_environment()).detect(text)
    if found:
        return found[0]
    return "a private key" if has_private_key_block(text) else ""


def item_id(tier: Tier | str, text: str, ts: str, run: str) -> str:
    """A deterministic id for a new item (``m-`` and 12 hex digits)."""
    digest = hashlib.sha256(f"{content_hash(tier, text)}\0{ts}\0{run}".encode()).hexdigest()
    return "m-" + digest[:12]


@dataclass(frozen=True)
class MemoryItem:
    """One stored memory.

    Attributes:
        id: ``m-`` + 12 hex digits.
        tier: see :class:`Tier`.
        text: the memory, one or a few sentences.
        provenance: ``trusted`` or ``tainted``.
        taint_sources: what tainted it (``untrusted_task``, ``artifact``, ``commit:<sha>``...).
        source_run, source_commit: where it came from ('' when unknown).
        created, updated: ISO-8601 UTC times.
        uses: how many times it was recalled; successes: how many of those runs succeeded.
        deleted: a tombstone (restorable); evidence: the quoted text that contradicted it.
        kind: a free label (``failure``, ``success``, ``hollow``, ``fact``, ``note``...);
            a supersession proposal is ``proposed-update`` or ``proposed-delete``
            (:data:`PROPOSAL_KINDS`).
        supersedes: for a proposal, the id of the item it would replace ('' otherwise).
    """

    id: str
    tier: Tier
    text: str
    provenance: str = TRUSTED
    taint_sources: tuple[str, ...] = ()
    source_run: str = ""
    source_commit: str = ""
    created: str = ""
    updated: str = ""
    uses: int = 0
    successes: int = 0
    deleted: bool = False
    evidence: str = ""
    kind: str = "note"
    supersedes: str = ""

    @property
    def tainted(self) -> bool:
        return self.provenance != TRUSTED

    @property
    def proposal(self) -> bool:
        """A supersession proposal a person accepts or rejects (``chimera memory accept``)."""
        return self.kind in PROPOSAL_KINDS and bool(self.supersedes)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "tier": self.tier.value,
            "text": self.text,
            "provenance": self.provenance,
            "taint_sources": list(self.taint_sources),
            "source_run": self.source_run,
            "source_commit": self.source_commit,
            "created": self.created,
            "updated": self.updated,
            "uses": self.uses,
            "successes": self.successes,
            "deleted": self.deleted,
            "evidence": self.evidence,
            "kind": self.kind,
            "supersedes": self.supersedes,
        }


@dataclass(frozen=True)
class Candidate:
    """Something a run (or a person) wants remembered.

    Attributes:
        text: the memory.
        tier: episodic or semantic (persona only through :meth:`MemoryManager.add_persona`).
        provenance: ``tainted`` when the run read untrusted text; model-written text from such
            a run is always stored tainted.
        taint_sources, source_run, source_commit, kind: copied onto the item.
    """

    text: str
    tier: Tier = Tier.EPISODIC
    provenance: str = TRUSTED
    taint_sources: tuple[str, ...] = ()
    source_run: str = ""
    source_commit: str = ""
    kind: str = "note"

    @property
    def tainted(self) -> bool:
        return self.provenance != TRUSTED


@dataclass(frozen=True)
class JournalOp:
    """One change, as journalled and replayed.

    Attributes:
        op: what it does.
        id: the item it creates or changes.
        ts: when (carried, so replay is deterministic).
        run: the run that made it ('' for a person at the CLI).
        tier, text, provenance, taint_sources, kind, commit: the item's fields (``add``;
            ``update`` carries the new ``text``).
        evidence: ``delete``: the quoted contradicting text; ``promote``: who promoted;
            ``update``: why (a supersession's old value, an accepted proposal).
        supersedes: ``add`` of a proposal: the item it would replace.
    """

    op: OpKind
    id: str
    ts: str
    run: str = ""
    tier: Tier = Tier.EPISODIC
    text: str = ""
    provenance: str = TRUSTED
    taint_sources: tuple[str, ...] = ()
    kind: str = "note"
    commit: str = ""
    evidence: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)
    supersedes: str = ""

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "op": self.op.value,
            "id": self.id,
            "ts": self.ts,
            "run": self.run,
            "tier": self.tier.value,
            "provenance": self.provenance,
        }
        for key, value in (
            ("text", self.text),
            ("taint_sources", list(self.taint_sources)),
            ("kind", self.kind if self.op is OpKind.ADD else ""),
            ("commit", self.commit),
            ("evidence", self.evidence),
            ("supersedes", self.supersedes if self.op is OpKind.ADD else ""),
        ):
            if value:
                data[key] = value
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> JournalOp:
        """Parse one journal line.

        Raises:
            UsageError: the object is not an op (unknown op or tier, missing id).
        """
        try:
            return cls(
                op=OpKind(str(data["op"])),
                id=str(data["id"]),
                ts=str(data.get("ts", "")),
                run=str(data.get("run", "")),
                tier=Tier(str(data.get("tier", Tier.EPISODIC.value))),
                text=str(data.get("text", "")),
                provenance=TAINTED if data.get("provenance") != TRUSTED else TRUSTED,
                taint_sources=tuple(str(s) for s in data.get("taint_sources", ()) or ()),
                kind=str(data.get("kind", "") or "note"),
                commit=str(data.get("commit", "")),
                evidence=str(data.get("evidence", "")),
                supersedes=_item_ref(data.get("supersedes")),
            )
        except (KeyError, ValueError, TypeError) as exc:
            raise UsageError(f"not a memory op: {exc}") from exc


__all__ = [
    "PERSISTED_TIERS",
    "PROPOSAL_KINDS",
    "PROPOSED_DELETE",
    "PROPOSED_UPDATE",
    "TAINTED",
    "TRUSTED",
    "Candidate",
    "JournalOp",
    "MemoryItem",
    "OpKind",
    "Tier",
    "content_hash",
    "content_words",
    "item_id",
    "normalise",
    "now",
    "secret_in",
]
