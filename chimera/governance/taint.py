"""The taint layer: a per-run ledger of untrusted input, and what a tainted run may still do.

Prompt injection cannot be filtered out of text reliably, so Chimera contains it instead
(the capability view of CaMeL, Debenedetti et al. 2025, and of FIDES-style information-flow
control): a run that has read untrusted text — an issue body, a comment, a fetched page, task
text given with ``--untrusted`` — is **tainted from the first byte**, and from then on the
actions that could turn an injected instruction into damage are narrowed:

* commands run only from an allowlist (:class:`TaintAllowlist`): the spec's own commands, the
  project's test runner (``pytest``, ``python -m pytest``, ``tox``, ``nox``, ``make test``,
  ``npm test`` ...), installing the project itself (``pip install -e .``,
  ``pip install '.[dev]'``) and read-only inspection (``ls``, ``cat``, ``grep``, ``rg``,
  ``git status/diff/log/show``, ``find`` without ``-exec``/``-delete``);
* anything else — another command, a network request, an unknown tool — gets a ``review``
  verdict from :meth:`TaintLedger.assess_action`: denied in the moment, the reason fed back to
  the agent as the tool result, and listed for the human reviewer;
* file writes inside the workspace still run (the change is what the PR is for, and is
  verified and reviewed), but every artifact written keeps ``tainted`` provenance
  (:meth:`TaintLedger.record_artifact`, :attr:`TaintLedger.provenance`), so untrusted text
  cannot launder itself into a "clean" memory, skill or experience record.

Like the rules, this is a lexical, heuristic layer and never a boundary: the sandbox (no
network, own process namespace, allowlisted environment) is the boundary.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from chimera.governance.actions import Action, ActionKind
from chimera.governance.kernel import Decision
from chimera.governance.redactor import cut_redacted as _cut
from chimera.governance.rules import Verdict
from chimera.governance.sanitize import fence_untrusted, sanitize
from chimera.governance.taint_allowlist import TaintAllowlist

if TYPE_CHECKING:
    from chimera.governance.audit import AuditLog
    from chimera.spec.model import Spec

TAINTED = "tainted"
TRUSTED = "trusted"


class SourceKind(StrEnum):
    """Where untrusted text came from."""

    ISSUE_BODY = "issue_body"
    COMMENT = "comment"
    REVIEW_FEEDBACK = "review_feedback"
    FETCHED_PAGE = "fetched_page"
    UNTRUSTED_TASK = "untrusted_task"
    TOOL_OUTPUT = "tool_output"
    QUARANTINE_EXTRACT = "quarantine_extract"
    MEMORY = "memory"


@dataclass(frozen=True, slots=True)
class TaintedSource:
    """One piece of untrusted input recorded by the ledger.

    Attributes:
        id: ``src-N`` in order of arrival.
        kind: where it came from.
        label: a short human name (``issue #12``, a URL).
        sha256: digest of the exact text (the text itself is not stored in the ledger).
        chars: its length.
        ts: when it was recorded (UTC, ISO 8601).
    """

    id: str
    kind: SourceKind
    label: str
    sha256: str
    chars: int
    ts: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind.value,
            "label": self.label,
            "sha256": self.sha256,
            "chars": self.chars,
            "ts": self.ts,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TaintedSource:
        return cls(
            id=str(data["id"]),
            kind=SourceKind(data["kind"]),
            label=str(data.get("label", "")),
            sha256=str(data["sha256"]),
            chars=int(data.get("chars", 0)),
            ts=str(data.get("ts", "")),
        )


@dataclass(frozen=True, slots=True)
class Artifact:
    """Something a run produced (a file written, a memory, a skill) and its provenance."""

    path: str
    provenance: str
    tool: str = ""
    sources: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "provenance": self.provenance,
            "tool": self.tool,
            "sources": list(self.sources),
        }


# -- the ledger ------------------------------------------------------------------------------

_SHINGLE_WORDS = 12


def _shingles(text: str) -> set[str]:
    words = re.findall(r"\S+", text.lower())
    return {
        hashlib.sha1(" ".join(words[i : i + _SHINGLE_WORDS]).encode()).hexdigest()[:16]
        for i in range(max(0, len(words) - _SHINGLE_WORDS + 1))
    }


class TaintLedger:
    """A run's record of untrusted input, and the assessor that narrows a tainted run.

    Args:
        run_id: the run this ledger belongs to (for audit events and artifacts).
        allowlist: the commands a tainted run may execute (default: test runners, project
            install, read-only inspection, and no spec commands).
        audit: when given, every source and every denial is an audit event.

    Thread-safe: sub-agents of one run may share a ledger.
    """

    def __init__(
        self,
        run_id: str = "",
        *,
        allowlist: TaintAllowlist | None = None,
        audit: AuditLog | None = None,
    ) -> None:
        self.run_id = run_id
        self.allowlist = allowlist or TaintAllowlist()
        self.audit = audit
        self._sources: list[TaintedSource] = []
        self._artifacts: dict[str, Artifact] = {}
        self._shingles: set[str] = set()
        self._lock = threading.Lock()
        self.quarantined_tools: set[str] = set()
        """Tools that read untrusted content through a quarantined model (QuarantineTool):
        their network access stays allowed while tainted, since only a validated, structured
        extraction reaches the agent."""

    @staticmethod
    def spec_commands(spec: Spec) -> list[str]:
        """The ``run`` text of every ``command`` requirement of ``spec`` (in spec order)."""
        runs = (getattr(r.check, "run", None) for r in spec.requirements)
        return [run for run in runs if isinstance(run, str) and run.strip()]

    @classmethod
    def for_spec(
        cls,
        spec_commands: Iterable[str],
        run_id: str = "",
        *,
        extra: Sequence[str] = (),
        audit: AuditLog | None = None,
    ) -> TaintLedger:
        """A ledger whose allowlist includes ``spec_commands`` (the spec's ``command`` runs,
        e.g. ``TaintLedger.for_spec(TaintLedger.spec_commands(spec), run_id)``). Take them
        from the *base* commit's spec: requirements the agent writes are untrusted too."""
        allow = TaintAllowlist(spec_commands=tuple(spec_commands), extra=tuple(extra))
        return cls(run_id, allowlist=allow, audit=audit)

    # -- recording --------------------------------------------------------------------------

    def taint(self, text: str, kind: SourceKind | str, label: str = "") -> TaintedSource:
        """Record ``text`` as untrusted. The run is tainted from this call on — even for an
        empty text, since what matters is that outside input reached the run.

        Returns the source record (the ledger keeps a digest and word shingles, not the text).
        """
        source_kind = SourceKind(kind)
        with self._lock:
            source = TaintedSource(
                id=f"src-{len(self._sources) + 1}",
                kind=source_kind,
                label=_cut(sanitize(label), 120),
                sha256=hashlib.sha256(text.encode("utf-8", "replace")).hexdigest(),
                chars=len(text),
                ts=datetime.now(UTC).isoformat(timespec="seconds"),
            )
            self._sources.append(source)
            self._shingles |= _shingles(text)
        if self.audit is not None:
            self.audit.append("taint_source", **source.to_dict())
        return source

    def fence(self, text: str, kind: SourceKind | str, label: str) -> str:
        """Record ``text`` as untrusted and return it sanitized inside a data fence, the only
        form in which tainted text may enter a prompt."""
        self.taint(text, kind, label)
        return fence_untrusted(text, label)

    @property
    def tainted(self) -> bool:
        with self._lock:
            return bool(self._sources)

    @property
    def sources(self) -> list[TaintedSource]:
        with self._lock:
            return list(self._sources)

    @property
    def provenance(self) -> str:
        """``tainted`` once any untrusted input reached the run, else ``trusted``."""
        return TAINTED if self.tainted else TRUSTED

    def stamp(self, record: Mapping[str, Any]) -> dict[str, Any]:
        """A copy of ``record`` carrying this run's provenance (for memories, skills,
        experience records). A record already marked ``tainted`` stays tainted."""
        out = dict(record)
        if out.get("provenance") != TAINTED:
            out["provenance"] = self.provenance
        if self.tainted:
            out["taint_sources"] = [s.id for s in self.sources]
        return out

    def record_artifact(self, path: str, *, tool: str = "") -> Artifact:
        """Note that the run produced ``path``; it inherits the run's provenance (once
        tainted, an artifact never becomes trusted again within the run)."""
        with self._lock:
            previous = self._artifacts.get(path)
            provenance = TAINTED if self._sources else TRUSTED
            if previous is not None and previous.provenance == TAINTED:
                provenance = TAINTED
            artifact = Artifact(path, provenance, tool, tuple(s.id for s in self._sources))
            self._artifacts[path] = artifact
        return artifact

    @property
    def artifacts(self) -> list[Artifact]:
        with self._lock:
            return list(self._artifacts.values())

    def copies_tainted_text(self, text: str) -> bool:
        """Whether ``text`` repeats a run of 12+ words verbatim from a tainted source."""
        with self._lock:
            known = set(self._shingles)
        return bool(known) and not known.isdisjoint(_shingles(text))

    # -- assessment --------------------------------------------------------------------------

    def assess_action(self, action: Action) -> Decision:
        """``allow`` while clean; while tainted, ``review`` for a command off the allowlist and
        for network access (except through a registered quarantined reader). Which *tools* a
        tainted run may call is :class:`~chimera.governance.allowlist.AdaptiveToolAllowlist`'s
        decision, kept separate so tool sets can be configured per surface.

        File reads, writes, edits and deletes inside the workspace stay ``allow`` (the rules
        already stop secrets, CI files and out-of-workspace paths); a write that copies 12+
        words verbatim from untrusted input gets ``warn`` so the reviewer sees it.
        """
        if not self.tainted:
            return Decision.allow()
        if action.command is not None:
            problems = self.allowlist.violations(action)
            if problems:
                return Decision(
                    Verdict.REVIEW,
                    ("taint-allowlist",),
                    tuple(
                        f"{p} (the run read untrusted input; only tests, project install and "
                        "read-only inspection run)"
                        for p in problems
                    ),
                    "taint",
                )
            return Decision.allow()
        if action.kind is ActionKind.NETWORK and action.tool not in self.quarantined_tools:
            return Decision(
                Verdict.REVIEW,
                ("taint-network",),
                ("network access after reading untrusted input (exfiltration channel)",),
                "taint",
            )
        if (
            action.kind in (ActionKind.WRITE, ActionKind.EDIT)
            and action.content
            and self.copies_tainted_text(action.content)
        ):
            return Decision(
                Verdict.WARN,
                ("taint-copy",),
                ("the written text repeats untrusted input verbatim",),
                "taint",
            )
        return Decision.allow()

    # -- persistence -------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready state for the run's durable state (sources, artifacts, allowlist)."""
        with self._lock:
            return {
                "run_id": self.run_id,
                "provenance": TAINTED if self._sources else TRUSTED,
                "sources": [s.to_dict() for s in self._sources],
                "artifacts": [a.to_dict() for a in self._artifacts.values()],
                "shingles": sorted(self._shingles),
                "allowlist": {
                    "spec_commands": list(self.allowlist.spec_commands),
                    "extra": list(self.allowlist.extra),
                },
            }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, audit: AuditLog | None = None) -> TaintLedger:
        """Rebuild a ledger saved with :meth:`to_dict` (a resumed run stays tainted)."""
        allow = data.get("allowlist") or {}
        ledger = cls(
            str(data.get("run_id", "")),
            allowlist=TaintAllowlist(
                tuple(allow.get("spec_commands", ())), tuple(allow.get("extra", ()))
            ),
            audit=audit,
        )
        ledger._sources = [TaintedSource.from_dict(s) for s in data.get("sources", ())]
        ledger._shingles = set(data.get("shingles", ()))
        for item in data.get("artifacts", ()):
            art = Artifact(
                str(item["path"]),
                str(item["provenance"]),
                str(item.get("tool", "")),
                tuple(item.get("sources", ())),
            )
            ledger._artifacts[art.path] = art
        return ledger


__all__ = [
    "TAINTED",
    "TRUSTED",
    "Artifact",
    "SourceKind",
    "TaintAllowlist",
    "TaintLedger",
    "TaintedSource",
]
