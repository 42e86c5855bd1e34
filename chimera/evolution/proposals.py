"""Learning proposals: what a run's reflection suggests, recorded, never applied by itself.

After every finished ``chimera solve`` / ``chimera run`` the Reflector reads the run and the
Curator turns its answer into playbook deltas (and, from an accepted attempt with a real diff,
one proposed skill). None of that changes the playbook or the skill store: each delta is one
:class:`Proposal` line in ``.chimera/learning/proposals.jsonl`` — **provisional** and
**tainted** (a model wrote it; nobody verified it yet). A person applies one with
``chimera playbook accept ID`` (a bullet or counter becomes a playbook delta; a skill is minted
provisional, untrusted and *untested*: it reaches no prompt until ``chimera skills test``'s
re-run gate passes on tasks it was not proposed from — a person's acceptance is required, never
sufficient) or drops it with ``chimera playbook reject ID``. A decision is a new
line naming the proposal, so the file stays append-only (:mod:`chimera.evolution.jsonl`).

The Action's publish job stores the same records on the branch store
(:mod:`chimera.evolution.branchstore`), so one reader serves both.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from chimera.errors import UsageError
from chimera.evolution.jsonl import append_record, read_records
from chimera.evolution.playbook import Delta

PROPOSALS_FILE = Path(".chimera") / "learning" / "proposals.jsonl"
Kind = Literal["bullet", "counter", "skill"]
_KINDS = ("bullet", "counter", "skill")


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@dataclass(frozen=True, slots=True)
class Proposal:
    """One proposed change (see the module docstring).

    Attributes:
        id: ``lp-`` and 12 hex digits of the run, kind and content (the same proposal from the
            same run has the same id).
        run_id: the run it came from.
        kind: ``bullet`` (a new playbook bullet: ``section``, ``text``), ``counter``
            (``op`` ``helpful``/``harmful`` on ``bullet_id``) or ``skill`` (``skill``: a
            ``SKILL.md`` text).
        origin: ``reflection`` (a local run's Reflector) or ``action`` (an agent job's
            artifact, accepted by publish).
        verdict: the run's verdict as the recorder re-derived it.
        state: always ``provisional`` when recorded.
        trusted: always False when recorded (a person's accept does not change that either;
            only ``chimera skills promote`` does, for skills).
    """

    id: str
    run_id: str
    kind: Kind
    origin: str
    verdict: str
    section: str = ""
    text: str = ""
    bullet_id: str = ""
    op: str = ""
    skill: str = ""
    state: str = "provisional"
    trusted: bool = False
    ts: str = ""

    @classmethod
    def make(
        cls,
        run_id: str,
        kind: Kind,
        origin: str,
        verdict: str,
        *,
        section: str = "",
        text: str = "",
        bullet_id: str = "",
        op: str = "",
        skill: str = "",
    ) -> Proposal:
        """A new provisional, tainted proposal with its content-derived id."""
        body = "\0".join((section, text, bullet_id, op, skill))
        digest = hashlib.sha256(f"{run_id}\0{kind}\0{body}".encode()).hexdigest()
        return cls(
            f"lp-{digest[:12]}", run_id, kind, origin, verdict, section, text, bullet_id, op,
            skill, ts=_now(),
        )  # fmt: skip

    def delta(self) -> Delta | None:
        """The playbook delta of a ``bullet`` or ``counter`` proposal (``None`` for a skill)."""
        if self.kind == "bullet":
            return Delta(op="add", section=self.section, text=self.text)
        if self.kind == "counter" and self.op in ("helpful", "harmful"):
            return Delta(
                op="helpful" if self.op == "helpful" else "harmful", bullet_id=self.bullet_id
            )
        return None

    def describe(self) -> str:
        """One line: id, kind and content."""
        if self.kind == "bullet":
            what = f"bullet [{self.section}] {self.text}"
        elif self.kind == "counter":
            what = f"count {self.bullet_id} {self.op}"
        else:
            first = next((ln for ln in self.skill.splitlines() if ln.startswith("name:")), "")
            what = f"skill {first.removeprefix('name:').strip() or '?'}"
        return f"{self.id}  {self.origin} run {self.run_id}  {what}"

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "record": "proposal",
            "id": self.id,
            "run_id": self.run_id,
            "kind": self.kind,
            "origin": self.origin,
            "verdict": self.verdict,
            "state": self.state,
            "trusted": self.trusted,
            "ts": self.ts or _now(),
        }
        for key in ("section", "text", "bullet_id", "op", "skill"):
            if getattr(self, key):
                data[key] = getattr(self, key)
        return data

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> Proposal:
        """Parse one record; whatever it claims, the result is provisional and untrusted.

        Raises:
            ValueError: not a proposal (unknown kind, missing id or run).
        """
        kind = str(raw.get("kind", ""))
        if kind not in _KINDS or not raw.get("id") or not raw.get("run_id"):
            raise ValueError("not a proposal (kind, id and run_id are required)")
        field = {k: str(raw.get(k, "")) for k in ("section", "text", "bullet_id", "op", "skill")}
        return cls(
            str(raw["id"]),
            str(raw["run_id"]),
            kind,  # type: ignore[arg-type]  # checked against _KINDS above
            str(raw.get("origin", "")),
            str(raw.get("verdict", "")),
            field["section"], field["text"], field["bullet_id"], field["op"], field["skill"],
            ts=str(raw.get("ts", "")),
        )  # fmt: skip


@dataclass(frozen=True, slots=True)
class Decision:
    """A person's decision on a proposal (``accepted`` or ``rejected``)."""

    proposal: str
    decision: str
    by: str
    ts: str = ""


class ProposalLedger:
    """Proposals and decisions in one append-only JSONL file (module docstring)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def at(cls, root: Path) -> ProposalLedger:
        """The ledger of the repository at ``root``."""
        return cls(root / PROPOSALS_FILE)

    def record(self, proposals: Iterable[Proposal]) -> list[str]:
        """Append each proposal not already recorded; their ids, in order.

        Raises:
            ChimeraError: the file cannot be written.
        """
        known = {p.id for p in self.proposals()}
        ids: list[str] = []
        for p in proposals:
            if p.id not in known:
                append_record(self.path, p.to_json())
                known.add(p.id)
            ids.append(p.id)
        return ids

    def decide(self, proposal_id: str, decision: str, by: str) -> Proposal:
        """Record ``decision`` on a pending proposal; returns it.

        Raises:
            UsageError: no such proposal, or it was decided already.
        """
        found = self.pending_one(proposal_id)
        append_record(
            self.path,
            {"record": "decision", "proposal": proposal_id, "decision": decision, "by": by,
             "ts": _now()},
        )  # fmt: skip
        return found

    def pending_one(self, proposal_id: str) -> Proposal:
        """The pending proposal ``proposal_id``.

        Raises:
            UsageError: no such proposal, or it was decided already.
        """
        for p in self.pending():
            if p.id == proposal_id:
                return p
        known = {p.id for p in self.proposals()}
        why = "was decided already" if proposal_id in known else "is not in the ledger"
        raise UsageError(f"proposal {proposal_id}: {why} ({self.path})")

    def _read(self) -> tuple[list[Proposal], list[Decision]]:
        proposals: list[Proposal] = []
        decisions: list[Decision] = []
        for number, raw in read_records(self.path):
            try:
                if raw.get("record") == "decision":
                    decisions.append(
                        Decision(str(raw["proposal"]), str(raw["decision"]), str(raw.get("by")))
                    )
                else:
                    proposals.append(Proposal.from_json(raw))
            except (KeyError, ValueError) as exc:
                raise UsageError(f"{self.path}:{number}: {exc}") from exc
        return proposals, decisions

    def proposals(self) -> list[Proposal]:
        """Every proposal ever recorded, in order."""
        return self._read()[0]

    def pending(self) -> list[Proposal]:
        """Proposals no decision names yet, in order."""
        proposals, decisions = self._read()
        decided = {d.proposal for d in decisions}
        return [p for p in proposals if p.id not in decided]


def accept(root: Path, proposal_id: str, *, by: str) -> str:
    """A person applies pending proposal ``proposal_id`` of the repository at ``root``: a bullet
    or counter as one playbook delta (untouched bullets keep their lines), a skill minted
    provisional, untrusted and untested (not retrievable until the re-run gate passes). The
    decision is a ledger line and a ``proposal_accepted`` event
    in the skill store's audit log. Returns one line saying what changed.

    Raises:
        UsageError: no such pending proposal; the playbook refused the delta (nothing is
            recorded then); the skill text is not a valid ``SKILL.md``.
        ConfigError: the playbook file is malformed.
    """
    from dataclasses import replace

    from chimera.atomic import atomic_write_text
    from chimera.errors import ConfigError
    from chimera.evolution.learned_context import PLAYBOOK_FILE, SKILLS_DIR
    from chimera.evolution.playbook import Playbook
    from chimera.evolution.skills import LearnedSkill, SkillState, SkillStore

    ledger = ProposalLedger.at(root)
    found = ledger.pending_one(proposal_id)
    store = SkillStore(root / SKILLS_DIR)
    delta = found.delta()
    if delta is not None:
        path = root / PLAYBOOK_FILE
        book = (
            Playbook.parse(path.read_text("utf-8"), source=str(path))
            if path.is_file()
            else Playbook()
        )
        refused = book.apply([delta])
        if refused:
            raise UsageError(f"proposal {proposal_id}: {refused[0]}")
        atomic_write_text(path, book.format())
        done = f"playbook: {found.describe()}"
    else:
        try:
            skill = LearnedSkill.from_markdown(found.skill, source=f"proposal {proposal_id}")
        except ConfigError as exc:
            raise UsageError(str(exc)) from exc
        kept = store.mint(
            replace(
                skill, state=SkillState.PROVISIONAL, trusted=False, sources=(found.run_id,),
                tested="", accepted_by=by, uses=0, successes=0, claimed_uses=0,
                claimed_successes=0,
            )
        )  # fmt: skip
        done = (
            f"skill {kept.name} v{kept.version} minted provisional, untrusted and untested "
            f"(no prompt sees it until `chimera skills test {kept.name}` passes)"
        )
    ledger.decide(proposal_id, "accepted", by)
    store.audit().append("proposal_accepted", proposal=proposal_id, kind=found.kind, by=by)
    return done


def reject(root: Path, proposal_id: str, *, by: str) -> Proposal:
    """A person drops pending proposal ``proposal_id`` (a ledger line and an audit event).

    Raises:
        UsageError: no such pending proposal.
    """
    from chimera.evolution.learned_context import SKILLS_DIR
    from chimera.evolution.skills import SkillStore

    found = ProposalLedger.at(root).decide(proposal_id, "rejected", by)
    SkillStore(root / SKILLS_DIR).audit().append(
        "proposal_rejected", proposal=proposal_id, kind=found.kind, by=by
    )
    return found


__all__ = ["PROPOSALS_FILE", "Decision", "Proposal", "ProposalLedger", "accept", "reject"]
