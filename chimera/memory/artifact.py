"""Memory across the Action's trust chain: the agent job proposes, publish decides.

The agent job has an LLM key and no write token; what it uploads is untrusted. It writes the
memory ops its run made into its artifact (:func:`proposal`). The publish job holds the write
token and no LLM key; it applies :func:`admit_artifact`, a pure function of the artifact's
parsed JSON:

* only ADDs are accepted, and each becomes a **tainted episodic** item with a fresh id (so an
  artifact cannot aim at an existing item), its text sanitized and capped;
* UPDATE, DELETE, PROMOTE, RESTORE and any persona op are refused and reported (publish audits
  each refusal);
* anything that is not an op is refused, never fatal.

Publish adds trusted items only from facts it re-derived itself (requirement ids, verdicts,
evidence, diff stats): :func:`derived_fact`. Promotion to trusted is a person's act.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from chimera.governance.redactor import cut_redacted
from chimera.governance.sanitize import sanitize
from chimera.memory.items import TAINTED, TRUSTED, JournalOp, OpKind, Tier, item_id, secret_in

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
) -> ArtifactVerdict:
    """Decide which of an artifact's proposed memory ops publish applies (module docstring).

    Args:
        document: the artifact's parsed JSON (anything: it is untrusted).
        run_id: the run, as publish knows it (not as the artifact claims).
        ts: the time stamped on accepted ops.
        commit: the base commit publish verified.
        max_ops, max_chars: caps on accepted entries and on each text.
    """
    verdict = ArtifactVerdict()
    ops = document.get("ops") if isinstance(document, Mapping) else None
    if not isinstance(ops, list) or (
        isinstance(document, Mapping) and document.get("version") != ARTIFACT_VERSION
    ):
        verdict.refused.append((-1, "document", f"not a version-{ARTIFACT_VERSION} op list"))
        return verdict
    for index, raw in enumerate(ops):
        refused = _refusal(raw)
        if refused:
            verdict.refused.append((index, _what(raw), refused))
            continue
        if len(verdict.accepted) >= max_ops:
            verdict.refused.append((index, _what(raw), f"over the limit of {max_ops} ops"))
            continue
        # Redacted before the cut (a secret value; known formats were refused above whole).
        text = cut_redacted(" ".join(sanitize(str(raw["text"])).split()), max_chars)
        verdict.accepted.append(
            JournalOp(
                OpKind.ADD,
                item_id(Tier.EPISODIC, text, ts, f"{run_id}:{index}"),
                ts,
                run_id,
                Tier.EPISODIC,
                text,
                TAINTED,
                ("artifact",),
                "proposed",
                commit,
            )
        )
    return verdict


def _what(raw: Any) -> str:
    if isinstance(raw, Mapping):
        return f"{str(raw.get('op', '?'))[:20]} {str(raw.get('tier', ''))[:20]}".strip()
    return type(raw).__name__


def _refusal(raw: Any) -> str:
    if not isinstance(raw, Mapping):
        return "not an op object"
    op = str(raw.get("op", "")).lower()
    if str(raw.get("tier", "")).lower() == Tier.PERSONA.value:
        return "persona changes come from people only"
    if op != OpKind.ADD.value:
        return f"{op or 'an op'} from an artifact is refused (only ADDs are accepted)"
    if not isinstance(raw.get("text"), str) or not raw["text"].strip():
        return "an ADD without text"
    secret = secret_in(raw["text"])
    return f"the text holds {secret}; secrets are never stored" if secret else ""


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
