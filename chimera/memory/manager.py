"""The MemoryManager: remember (ADD / UPDATE / DELETE / NOOP), recall, promote, forget.

Every change is a :class:`~chimera.memory.items.JournalOp` applied to the SQLite store and kept
in :attr:`MemoryManager.journal` (the branch store commits a run's journal at its end). Every
read and write is an audit event (``memory_read`` / ``memory_write``: ids, op, provenance).

Provenance is enforced here: a candidate from a tainted run is stored tainted whatever it
claims; recalling a tainted item taints the reading run (its :class:`TaintLedger` when one is
attached, and :attr:`MemoryManager.tainted_read` in any case); persona is written only through
:meth:`add_persona` (people), and promotion to trusted only through :meth:`promote` (people);
a supersession proposal (a tainted source's UPDATE or DELETE of a trusted item) changes its
target only through :meth:`accept` (people).

About 440 lines on purpose: every write path of the store (remember and its rulings, the
people's acts) goes through this one class, so provenance is enforced in one place.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from chimera.errors import ChimeraError, StructuredOutputError, UsageError
from chimera.governance.redactor import SecretRedactor, cut_redacted
from chimera.memory.decide import Ruling, propose, rule
from chimera.memory.embed import Embedder, VectorIndex, fuse, to_bytes
from chimera.memory.items import (
    PROPOSED_DELETE,
    PROPOSED_UPDATE,
    Candidate,
    JournalOp,
    MemoryItem,
    OpKind,
    Tier,
    item_id,
    now,
    secret_in,
)
from chimera.memory.records import journal_op, stamp, working_item
from chimera.memory.render import render_memories
from chimera.memory.store import MemoryStore
from chimera.protocols import AuditSink, Recall, SupportsComplete

if TYPE_CHECKING:
    from chimera.governance.taint import TaintLedger

RECALL_TIERS = (Tier.EPISODIC, Tier.SEMANTIC)


@dataclass(frozen=True)
class MemoryCaps:
    """Bounds of the persisted store: rows (tombstones included) and bytes of text."""

    max_items: int = 5000
    max_bytes: int = 4_000_000


@dataclass(frozen=True)
class RememberResult:
    """What :meth:`MemoryManager.remember` did.

    Attributes:
        op: ``ADD``, ``UPDATE``, ``DELETE``, ``NOOP`` (a duplicate: an existing item already
            says it, ``target_id``) or ``REFUSED`` (nothing written; ``overruled`` says why,
            e.g. the text holds a secret).
        item_id: the item added or updated ('' for NOOP and REFUSED).
        target_id: the existing item updated, deleted or matched.
        proposed: the model's proposal ('' when no model was asked).
        overruled: why the proposal was not followed, or why the text was refused ('' when
            neither).
        proposal: the ADD is a supersession proposal of ``target_id`` (a tainted source asked
            to change a trusted item): a person accepts it with :meth:`MemoryManager.accept`.
    """

    op: str
    item_id: str = ""
    target_id: str = ""
    proposed: str = ""
    overruled: str = ""
    proposal: bool = False

    @property
    def called_model(self) -> bool:
        return bool(self.proposed)

    @property
    def refused(self) -> bool:
        return self.op == "REFUSED"


@dataclass
class MemoryManager:
    """Memory of one project, over a :class:`MemoryStore`.

    Args:
        store: the store of record.
        backend: the gateway model deciding ADD/UPDATE/DELETE/NOOP; ``None``: every new
            candidate is an ADD (exact duplicates stay NOOP).
        embedder: optional vectors (hybrid ranking with BM25); never required.
        audit: receives ``memory_read`` / ``memory_write`` events.
        ledger: the run's taint ledger; a recalled tainted item is recorded there.
        caps: bounds enforced after every write.
        run_id, commit: stamped on new items.
        neighbours: how many nearest items the model sees.
        clock: the time source (ISO-8601 strings).
        redactor: what a text is checked with before it is stored (``None``: the process
            environment's secrets and the known formats; give the workspace's for dotenv).
    """

    store: MemoryStore
    backend: SupportsComplete | None = None
    embedder: Embedder | None = None
    audit: AuditSink | None = None
    ledger: TaintLedger | None = None
    caps: MemoryCaps = field(default_factory=MemoryCaps)
    run_id: str = ""
    commit: str = ""
    neighbours: int = 5
    clock: Callable[[], str] = now
    redactor: SecretRedactor | None = None
    journal: list[JournalOp] = field(default_factory=list)
    working: list[MemoryItem] = field(default_factory=list)
    tainted_read: bool = False
    _index: VectorIndex = field(default_factory=VectorIndex, repr=False)

    # -- writes -----------------------------------------------------------------------------

    def remember(self, candidate: Candidate, *, decide: bool = True) -> RememberResult:
        """Decide and apply ADD / UPDATE / DELETE / NOOP for ``candidate`` (see
        :mod:`chimera.memory.decide`). An exact duplicate (normalised text) is NOOP without a
        model call; a NOOP writes nothing. A text holding a secret is REFUSED (nothing
        written, the reason in ``overruled``). Working-tier candidates stay in :attr:`working`.
        ``decide=False`` records an event (an attempt's outcome) without asking the model:
        NOOP for an exact duplicate, else ADD.

        Raises:
            UsageError: an empty text, or the persona tier (use :meth:`add_persona`).
            ProviderError, BudgetExceeded: from the model (invalid JSON after the repair
                round is not raised: the candidate is added).
        """
        if not candidate.text.strip():
            raise UsageError("memory: an empty text cannot be remembered")
        if candidate.tier is Tier.PERSONA:
            raise UsageError("memory: persona items are written by people (add_persona)")
        secret = secret_in(candidate.text, self.redactor)
        if secret:
            # A refusal, not a NOOP: NOOP means "already remembered" and nothing else.
            why = f"the text holds {secret}; secrets are never stored"
            self._audit_write("REFUSED", "", candidate, reason=why)
            return RememberResult("REFUSED", overruled=why)
        candidate = self._stamp(candidate)
        if candidate.tier is Tier.WORKING:
            return self._working(candidate)
        dup = self.store.find_duplicate(candidate.tier, candidate.text)
        if dup is not None:
            self._audit_write("NOOP", dup.id, candidate, reason="exact duplicate")
            return RememberResult("NOOP", target_id=dup.id)
        if self.backend is None or not decide:
            return self._add(candidate)
        near = [item for _, item in self.store.search(candidate.text, self.neighbours)]
        if not near:
            return self._add(candidate)
        try:
            decision = propose(self.backend, candidate, near)
        except StructuredOutputError as exc:
            result = self._add(candidate, overruled=f"the model's answer was unusable: {exc}")
            return replace(result, proposed="invalid")
        ruling = rule(candidate, near, decision)
        return self._carry_out(candidate, ruling, proposed=decision.op)

    def _stamp(self, candidate: Candidate) -> Candidate:
        return stamp(
            candidate, tainted_read=self.tainted_read, run_id=self.run_id, commit=self.commit
        )

    def _carry_out(self, candidate: Candidate, ruling: Ruling, *, proposed: str) -> RememberResult:
        target = ruling.target
        if ruling.op == "NOOP":
            self._audit_write("NOOP", target.id if target else "", candidate, proposed=proposed)
            return RememberResult("NOOP", target_id=target.id if target else "", proposed=proposed)
        if ruling.op == "UPDATE" and target is not None:
            op = self._op(OpKind.UPDATE, target.id, candidate, text=ruling.text, tier=target.tier)
            self.apply(replace(op, evidence=ruling.evidence), proposed=proposed)
            return RememberResult("UPDATE", target.id, target.id, proposed)
        if ruling.op == "PROPOSE" and target is not None:
            kind = PROPOSED_DELETE if ruling.proposed == "DELETE" else PROPOSED_UPDATE
            proposal = replace(candidate, text=ruling.text or candidate.text, kind=kind)
            added = self._add(
                proposal, proposed=proposed, overruled=ruling.overruled, supersedes=target.id
            )
            return replace(added, target_id=target.id, proposal=True)
        if ruling.op == "DELETE" and target is not None:
            tomb = self._op(OpKind.DELETE, target.id, candidate, text="", tier=target.tier)
            self.apply(replace(tomb, evidence=ruling.evidence), proposed=proposed)
            added = self._add(candidate, proposed=proposed)
            return RememberResult("DELETE", added.item_id, target.id, proposed)
        return self._add(candidate, proposed=proposed, overruled=ruling.overruled)

    def _add(
        self,
        candidate: Candidate,
        *,
        proposed: str = "",
        overruled: str = "",
        supersedes: str = "",
    ) -> RememberResult:
        ts = self.clock()
        new_id = item_id(candidate.tier, candidate.text, ts, candidate.source_run)
        op = self._op(OpKind.ADD, new_id, candidate, text=candidate.text, tier=candidate.tier)
        op = replace(op, ts=ts, supersedes=supersedes)
        self.apply(op, proposed=proposed, overruled=overruled)
        return RememberResult("ADD", new_id, proposed=proposed, overruled=overruled)

    def _op(
        self, kind: OpKind, target: str, candidate: Candidate, *, text: str, tier: Tier
    ) -> JournalOp:
        return journal_op(kind, target, candidate, text=text, tier=tier, ts=self.clock())

    def _working(self, candidate: Candidate) -> RememberResult:
        item = working_item(candidate, self.clock())
        self.working.append(item)
        return RememberResult("ADD", item.id)

    def apply(self, op: JournalOp, *, proposed: str = "", overruled: str = "") -> bool:
        """Apply ``op`` to the store, journal and audit it, then enforce the caps. Returns
        whether it changed the store.

        Raises:
            ChimeraError: the store cannot be written.
        """
        changed = self.store.apply(op)
        if changed:
            self.journal.append(op)
            if op.op in (OpKind.ADD, OpKind.UPDATE) and self.embedder is not None:
                self._embed(op.id, op.text)
        self._audit(
            "memory_write",
            op=op.op.value.upper(),
            id=op.id,
            tier=op.tier.value,
            provenance=op.provenance,
            applied=changed,
            proposed=proposed or None,
            overruled=overruled or None,
        )
        if changed:
            evicted = self.store.evict(self.caps.max_items, self.caps.max_bytes)
            if evicted:
                self._audit("memory_evicted", ids=evicted)
        return changed

    def _embed(self, target: str, text: str) -> None:
        assert self.embedder is not None
        try:
            (vec,) = self.embedder.embed([text])
        except ChimeraError as exc:
            self._audit("memory_embed_failed", id=target, error=cut_redacted(str(exc), 200))
            return
        self.store.put_vector(target, self.embedder.model, to_bytes(vec))

    def add_persona(self, text: str, *, by: str) -> str:
        """A person's standing instruction (persona tier, trusted). Returns its id (the
        existing one for a duplicate).

        Raises:
            UsageError: an empty text or an empty ``by``.
        """
        if not text.strip() or not by.strip():
            raise UsageError("memory: a persona item needs a text and who wrote it")
        secret = secret_in(text, self.redactor)
        if secret:
            raise UsageError(f"memory: the text holds {secret}; secrets are never stored")
        dup = self.store.find_duplicate(Tier.PERSONA, text)
        if dup is not None:
            return dup.id
        ts = self.clock()
        new_id = item_id(Tier.PERSONA, text, ts, by)
        self.apply(JournalOp(OpKind.ADD, new_id, ts, by, Tier.PERSONA, text, kind="persona"))
        return new_id

    def promote(self, target: str, *, by: str) -> bool:
        """A person marks item ``target`` trusted. Returns whether it was tainted.

        Raises:
            UsageError: no such item, or ``by`` is empty.
        """
        item = self._require(target)
        if not by.strip():
            raise UsageError("memory: promotion needs who promotes")
        op = JournalOp(OpKind.PROMOTE, item.id, self.clock(), by, item.tier, evidence=by)
        return self.apply(op)

    def forget(self, target: str, *, reason: str, by: str) -> bool:
        """Tombstone ``target`` (restorable with :meth:`restore`); persona too, since a person
        asks. Returns whether it was live.

        Raises:
            UsageError: no such item, or an empty reason.
        """
        item = self._require(target)
        if not reason.strip():
            raise UsageError("memory: forgetting needs a reason")
        op = JournalOp(OpKind.DELETE, item.id, self.clock(), by, item.tier, evidence=reason)
        return self.apply(op)

    def proposals(self) -> list[MemoryItem]:
        """Live supersession proposals (:attr:`MemoryItem.proposal`), oldest first."""
        return [i for i in self.store.items() if i.proposal]

    def accept(self, proposal_id: str, *, by: str) -> str:
        """A person accepts a supersession proposal: its target is updated to the proposal's
        text (``proposed-update``; the old text stays in the target's history) or forgotten
        with the proposal's text as evidence (``proposed-delete``), as ``by``'s trusted
        change; the proposal is then closed (a tombstone naming the target). Returns the
        target's id.

        Raises:
            UsageError: no such live proposal, its target is gone, or ``by`` is empty.
        """
        item = self._require(proposal_id)
        if not by.strip():
            raise UsageError("memory: accepting a proposal needs who accepts it")
        if not item.proposal or item.deleted:
            raise UsageError(f"memory: {proposal_id} is not an open proposal")
        target = self.store.get(item.supersedes)
        if target is None or target.deleted:
            raise UsageError(f"memory: the target {item.supersedes} of {proposal_id} is gone")
        why = f"accepted proposal {item.id} (by {by})"
        if item.kind == PROPOSED_DELETE:
            op = JournalOp(OpKind.DELETE, target.id, self.clock(), by, target.tier, evidence=why)
        else:
            op = JournalOp(
                OpKind.UPDATE, target.id, self.clock(), by, target.tier, item.text, evidence=why
            )
        self.apply(op)
        closed = f"accepted by {by} into {target.id}"
        self.apply(JournalOp(OpKind.DELETE, item.id, self.clock(), by, item.tier, evidence=closed))
        return target.id

    def restore(self, target: str, *, by: str) -> bool:
        """Undo a tombstone. Returns whether it was deleted.

        Raises:
            UsageError: no such item.
        """
        item = self._require(target)
        return self.apply(JournalOp(OpKind.RESTORE, item.id, self.clock(), by, item.tier))

    def _require(self, target: str) -> MemoryItem:
        item = self.store.get(target)
        if item is None:
            raise UsageError(f"memory: no item {target}")
        return item

    # -- reads ------------------------------------------------------------------------------

    def recall(
        self, query: str, *, k: int = 5, tiers: Sequence[Tier] = RECALL_TIERS
    ) -> list[MemoryItem]:
        """The ``k`` live items nearest ``query`` (BM25, fused with cosine when an embedder is
        set), best first. Counts a use of each; a tainted one taints the reading run."""
        ranked = [item for _, item in self.store.search(query, max(k * 3, k), tiers)]
        if self.embedder is not None:
            ranked = self._hybrid(query, ranked, k, tiers)
        found = ranked[:k]
        self.store.touch([i.id for i in found], self.clock())
        tainted = [i for i in found if i.tainted]
        if tainted:
            self.tainted_read = True
            if self.ledger is not None:
                for item in tainted:
                    self.ledger.taint(item.text, "memory", f"memory {item.id}")
        self._audit(
            "memory_read",
            ids=[i.id for i in found],
            provenance=[i.provenance for i in found],
            tainted=bool(tainted),
        )
        return found

    def _hybrid(
        self, query: str, ranked: list[MemoryItem], k: int, tiers: Sequence[Tier]
    ) -> list[MemoryItem]:
        assert self.embedder is not None
        try:
            (qvec,) = self.embedder.embed([query])
        except ChimeraError as exc:
            self._audit("memory_embed_failed", id="query", error=cut_redacted(str(exc), 200))
            return ranked
        wanted = {t.value for t in tiers}
        model = self.embedder.model
        ranked_cos = self._index.rank(
            qvec,
            lambda: self.store.vectors(model),
            model=model,
            version=self.store.version,
            k=k * 3,
        )
        by_cos = [i for _, i in ranked_cos]
        items = {i.id: i for i in ranked}
        for extra in by_cos:
            if extra not in items and (got := self.store.get(extra)) is not None:
                items[extra] = got
        order = fuse([i.id for i in ranked], by_cos, k=len(items))
        return [items[i] for i in order if items[i].tier.value in wanted]

    def persona(self) -> list[MemoryItem]:
        """Every live persona item, oldest first (always in context)."""
        return self.store.items([Tier.PERSONA])

    def recall_block(self, query: str, *, budget_tokens: int) -> Recall:
        """:class:`~chimera.protocols.MemoryReader`: recalled items rendered (see
        :mod:`chimera.memory.render`), dropping the weakest until the block fits."""
        from chimera.memory.budget import estimate_tokens

        found = self.recall(query)
        while found and estimate_tokens(render_memories(found)) > budget_tokens:
            found = found[:-1]
        text = render_memories(found)
        return Recall(
            text, tuple(i.id for i in found), any(i.tainted for i in found), estimate_tokens(text)
        )

    def _audit_write(self, op: str, target: str, candidate: Candidate, **extra: Any) -> None:
        self._audit(
            "memory_write",
            op=op,
            id=target,
            tier=candidate.tier.value,
            provenance=candidate.provenance,
            applied=False,
            **extra,
        )

    def _audit(self, event: str, **fields: Any) -> None:
        if self.audit is not None:
            self.audit.append(event, **fields)


__all__ = ["RECALL_TIERS", "MemoryCaps", "MemoryManager", "RememberResult"]
