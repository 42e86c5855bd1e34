"""Memory across the Action's trust chain: the agent job proposes, publish decides.

The agent job has an LLM key and no write token; what it uploads is untrusted. It writes the
memory ops its run made into its artifact (:func:`proposal`). The publish job holds the write
token and no LLM key; it applies :func:`admit_artifact`, a function of the artifact's parsed
JSON and, when given, the branch store as publish replayed it:

* an ADD becomes a **tainted episodic** item with a fresh id (so an artifact cannot aim at an
  existing item), its text sanitized and capped;
* an UPDATE or DELETE (the agent's model-decided supersession) may change only an item that is
  **tainted** on the branch; against a **trusted** item it becomes a **proposal** — a tainted
  ``proposed-update`` / ``proposed-delete`` item naming its target — that a person accepts
  (``chimera memory accept``). An ADD the agent already marked as a proposal is re-checked
  the same way. Without the branch store (``store=None``), UPDATE and DELETE are refused;
* PROMOTE, RESTORE and any persona op are refused and reported (publish audits each
  refusal); anything that is not an op is refused, never fatal.

Publish adds trusted items only from facts it re-derived itself (requirement ids, verdicts,
evidence, diff stats): :func:`derived_fact`. Promotion to trusted, and accepting a proposal,
are a person's acts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from chimera.governance.redactor import cut_redacted
from chimera.governance.sanitize import sanitize
from chimera.memory.items import (
    PROPOSAL_KINDS,
    PROPOSED_DELETE,
    PROPOSED_UPDATE,
    TAINTED,
    TRUSTED,
    JournalOp,
    MemoryItem,
    OpKind,
    Tier,
    item_id,
    secret_in,
)

if TYPE_CHECKING:
    from chimera.memory.store import MemoryStore

ARTIFACT_VERSION = 1
MAX_OPS = 50
MAX_CHARS = 2000


def proposal(journal: Sequence[JournalOp], *, run_id: str) -> dict[str, Any]:
    """The agent side: the run's journalled ops as the artifact's ``memory.json`` document
    (working-tier items left out)."""
    return {
        "version": ARTIFACT_VERSION,
        "run_id": run_id,
        "ops": [op.to_json() for op in journal if op.tier is not Tier.WORKING],
    }


@dataclass
class ArtifactVerdict:
    """What publish takes from an artifact.

    Attributes:
        accepted: tainted episodic ADDs, ready for :meth:`MemoryManager.apply` and the branch.
        refused: ``(index, what, reason)`` per refused entry (index -1: the document itself).
    """

    accepted: list[JournalOp] = field(default_factory=list)
    refused: list[tuple[int, str, str]] = field(default_factory=list)

    def audit_fields(self) -> dict[str, Any]:
        """JSON-ready fields for a ``memory_artifact`` audit event."""
        return {
            "accepted": [op.id for op in self.accepted],
            "refused": [{"index": i, "what": w, "reason": r} for i, w, r in self.refused],
        }


def admit_artifact(
    document: Any,
    *,
    run_id: str,
    ts: str,
    commit: str = "",
    max_ops: int = MAX_OPS,
    max_chars: int = MAX_CHARS,
    store: MemoryStore | None = None,
) -> ArtifactVerdict:
    """Decide which of an artifact's proposed memory ops publish applies (module docstring).

    Args:
        document: the artifact's parsed JSON (anything: it is untrusted).
        run_id: the run, as publish knows it (not as the artifact claims).
        ts: the time stamped on accepted ops.
        commit: the base commit publish verified.
        max_ops, max_chars: caps on accepted entries and on each text.
        store: the branch store as publish replayed it (what an UPDATE or DELETE is checked
            against); ``None`` refuses every UPDATE and DELETE.
    """
    verdict = ArtifactVerdict()
    ops = document.get("ops") if isinstance(document, Mapping) else None
    if not isinstance(ops, list) or (
        isinstance(document, Mapping) and document.get("version") != ARTIFACT_VERSION
    ):
        verdict.refused.append((-1, "document", f"not a version-{ARTIFACT_VERSION} op list"))
        return verdict
    for index, raw in enumerate(ops):
        refused = _refusal(raw, supersession=store is not None)
        if refused:
            verdict.refused.append((index, _what(raw), refused))
            continue
        if len(verdict.accepted) >= max_ops:
            verdict.refused.append((index, _what(raw), f"over the limit of {max_ops} ops"))
            continue
        admitted = _admit(raw, index, run_id=run_id, ts=ts, commit=commit, chars=max_chars,
                          store=store)  # fmt: skip
        if isinstance(admitted, str):
            verdict.refused.append((index, _what(raw), admitted))
        else:
            verdict.accepted.append(admitted)
    return verdict


def _clean(value: Any, chars: int) -> str:
    # Redacted before the cut (a secret value; known formats were refused whole).
    return cut_redacted(" ".join(sanitize(str(value or "")).split()), chars)


def _admit(
    raw: Mapping[str, Any],
    index: int,
    *,
    run_id: str,
    ts: str,
    commit: str,
    chars: int,
    store: MemoryStore | None,
) -> JournalOp | str:
    """The op publish applies for one entry, or why it is refused."""
    op = str(raw.get("op", "")).lower()
    target = _target(raw, store)
    if op == OpKind.ADD.value and (target is None or str(raw.get("kind")) not in PROPOSAL_KINDS):
        text = _clean(raw["text"], chars)
        return JournalOp(
            OpKind.ADD, item_id(Tier.EPISODIC, text, ts, f"{run_id}:{index}"), ts, run_id,
            Tier.EPISODIC, text, TAINTED, ("artifact",), "proposed", commit,
        )  # fmt: skip
    if isinstance(target, str):
        return target
    if target is None:
        return f"{op}: no target id"
    deleting = op == OpKind.DELETE.value or str(raw.get("kind")) == PROPOSED_DELETE
    text = _clean(raw.get("evidence") if op == OpKind.DELETE.value else raw.get("text"), chars)
    if not text:
        return f"{op} of {target.id} without its text or quoted evidence"
    sources = ("artifact",)
    if target.tainted:
        # A tainted item may be superseded by the run's (tainted) decision.
        if deleting:
            return JournalOp(OpKind.DELETE, target.id, ts, run_id, target.tier,
                             provenance=TAINTED, taint_sources=sources, evidence=text)  # fmt: skip
        return JournalOp(OpKind.UPDATE, target.id, ts, run_id, target.tier, text, TAINTED,
                         sources, commit=commit)  # fmt: skip
    # A trusted item is never changed by an artifact: the change waits for a person.
    kind = PROPOSED_DELETE if deleting else PROPOSED_UPDATE
    return JournalOp(
        OpKind.ADD, item_id(target.tier, text, ts, f"{run_id}:{index}"), ts, run_id,
        target.tier, text, TAINTED, sources, kind, commit, supersedes=target.id,
    )  # fmt: skip


def _target(raw: Mapping[str, Any], store: MemoryStore | None) -> MemoryItem | str | None:
    """The live, non-persona item an UPDATE, DELETE or proposal names on the branch store;
    ``None`` when the entry names none (a plain ADD); a refusal reason when it cannot be."""
    op = str(raw.get("op", "")).lower()
    ref = raw.get("id") if op != OpKind.ADD.value else raw.get("supersedes")
    if op == OpKind.ADD.value and not ref:
        return None
    if store is None:
        return None if op == OpKind.ADD.value else "no branch store to check the target on"
    item = store.get(ref) if isinstance(ref, str) else None
    if item is None or item.deleted:
        return None if op == OpKind.ADD.value else f"{op}: the target is not a live item"
    if item.tier is Tier.PERSONA:
        return "persona changes come from people only"
    return item


def _what(raw: Any) -> str:
    if isinstance(raw, Mapping):
        return f"{str(raw.get('op', '?'))[:20]} {str(raw.get('tier', ''))[:20]}".strip()
    return type(raw).__name__


def _refusal(raw: Any, *, supersession: bool = False) -> str:
    if not isinstance(raw, Mapping):
        return "not an op object"
    op = str(raw.get("op", "")).lower()
    if str(raw.get("tier", "")).lower() == Tier.PERSONA.value:
        return "persona changes come from people only"
    allowed = {OpKind.ADD.value}
    if supersession:
        allowed |= {OpKind.UPDATE.value, OpKind.DELETE.value}
    if op not in allowed:
        only = "ADDs, UPDATEs and DELETEs" if supersession else "ADDs"
        return f"{op or 'an op'} from an artifact is refused (only {only} are accepted)"
    if op == OpKind.ADD.value and (not isinstance(raw.get("text"), str) or not raw["text"].strip()):
        return "an ADD without text"
    for key in ("text", "evidence"):
        value = raw.get(key)
        secret = secret_in(value) if isinstance(value, str) else ""
        if secret:
            return f"the {key} holds {secret}; secrets are never stored"
    return ""


def derived_fact(
    text: str,
    *,
    run_id: str,
    ts: str,
    commit: str = "",
    tier: Tier = Tier.EPISODIC,
    kind: str = "outcome",
) -> JournalOp:
    """A trusted ADD publish builds from a fact it re-derived (never from artifact text)."""
    return JournalOp(
        OpKind.ADD,
        item_id(tier, text, ts, run_id),
        ts,
        run_id,
        tier,
        text,
        TRUSTED,
        (),
        kind,
        commit,
    )


def outcome_text(
    *,
    issue: int | None,
    verdict: str,
    requirements: Sequence[str],
    files: int,
    added: int,
    removed: int,
) -> str:
    """The text of a run's re-derived outcome: verdict, requirement ids and diff stats."""
    where = f"issue #{issue}" if issue else "a run"
    reqs = ", ".join(sorted(requirements)) or "none"
    return (
        f"{where}: verdict {verdict}; requirements {reqs}; "
        f"{files} file(s) changed, +{added} -{removed}"
    )


__all__ = [
    "ARTIFACT_VERSION",
    "ArtifactVerdict",
    "admit_artifact",
    "derived_fact",
    "outcome_text",
    "proposal",
]
