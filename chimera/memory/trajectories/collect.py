"""Read finished attempts out of run folders, trusting only what the audit log vouches for.

A run folder (``.chimera/runs/<id>/``) holds the hash-chained ``audit.jsonl``, the
``transcript.jsonl`` every model message is appended to, ``attempts/<card>/<n>.diff`` and
``summary.json`` (``chimera solve``) or ``state.json`` (``chimera run``), each recording the
audit log's head hash. The transcript is not chained, so it is believed only as far as the
chained log confirms it:

1. the log must verify against the recorded head (:func:`verify_audit_log`); a run without a
   recorded head, or whose chain breaks, is skipped whole;
2. the attempt's verdict, model, tokens and cost come from its ``attempt`` event; a card of a
   ``chimera run`` also needs its ``card_finished`` event (the orchestrator's own check_drift
   can still refuse a card whose attempt passed, for example for spec tampering);
3. the transcript's turns must match the log: each assistant turn's tool names against the
   ``model_call`` events, each tool call's name, arguments and output against the
   ``tool_call`` events (both capped at 2000 characters there); a passing attempt's diff file
   must have the length the ``attempt`` event recorded.

An attempt that fails a check is skipped with its reason, never repaired.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from chimera.core.attempts import Verdict
from chimera.errors import UsageError
from chimera.governance.audit import verify_audit_log
from chimera.memory.trajectories.transcript import (
    Message,
    Sequence,
    confirm,
    read_transcript,
    renumber,
)

Source = Literal["local", "action-artifact"]

_CARD_OK = frozenset({"accepted", "awaiting_approval"})
"""Card statuses whose passing attempt stands (verified; a held card waits only for a person)."""


@dataclass(frozen=True)
class Trajectory:
    """One finished attempt, confirmed by its run's audit log.

    Attributes:
        run_id, source: the run, and ``local`` or ``action-artifact`` (the run folder of a
            workflow artifact: its verdicts were computed by the unprivileged agent job).
        card: the card (requirement id; ``solve`` for ``chimera solve``); ``task_digest``: 16
            hex digits of SHA-256 over the card's task text. Together: "the same card".
        number: the attempt number within the card.
        verdict: the attempt's verdict (:class:`chimera.core.attempts.Verdict` value).
        accepted: a positive: verdict ``passed`` with a non-empty diff, and (``chimera run``)
            the card accepted or held for approval. ``why`` says why not otherwise.
        messages: the conversation (system, user, then assistant and tool turns); tool-call
            ids renumbered ``call_1``, ``call_2`` ... in order, so equal turns compare equal.
        prompt_size: how many leading messages are the prompt (before the first assistant turn).
        history_injected: the prompt carries earlier attempts (the retry history).
        tools: the tool schemas the model was shown, ``None`` in runs that did not record them.
        model, tokens, cost_usd: from the ``attempt`` event (``cost_usd`` ``None`` = unknown).
        files_changed, added, removed: the diff's stats.
        tainted: the run read untrusted input (an ``--untrusted`` task, an issue, a taint source).
        prompt_context: what the plan prompt this attempt followed held besides the task —
            ``memory`` (persona and recalled items, as rendered), ``skills`` and ``playbook``
            (the learned context) — from the run's audit log ('' for each it did not hold, and
            ``{}`` for runs that did not record it).
    """

    run_id: str
    source: Source
    card: str
    task_digest: str
    number: int
    verdict: str
    accepted: bool
    why: str
    messages: tuple[Message, ...]
    prompt_size: int
    history_injected: bool
    tools: tuple[dict[str, Any], ...] | None
    model: str
    tokens: int
    cost_usd: float | None
    files_changed: int
    added: int
    removed: int
    tainted: bool
    prompt_context: dict[str, str] = field(default_factory=dict)

    @property
    def verified(self) -> bool:
        """Whether Chimera computed the verdict itself (a local run), not an artifact's job."""
        return self.source == "local"

    @property
    def sort_key(self) -> tuple[str, str, str, int]:
        return (self.card, self.task_digest, self.run_id, self.number)


@dataclass(frozen=True)
class Skipped:
    """Something left out, and why (``where`` names a run folder or ``run:card#n``)."""

    where: str
    reason: str


@dataclass
class RunRead:
    """What one run folder gave: its trajectories and what was skipped."""

    path: Path
    run_id: str
    source: Source
    tainted: bool = False
    trajectories: list[Trajectory] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    refused: str | None = None
    """Why the whole run was skipped (``None``: it was read)."""


def find_runs(path: Path) -> list[tuple[Path, Source]]:
    """The run folders ``path`` names: a run folder, an artifacts folder (``outcome.json`` and
    ``run/``), or a folder of run folders (``.chimera/runs``), sorted by name.

    Raises:
        UsageError: ``path`` does not exist or holds no run folder.
    """
    path = Path(path)
    if not path.is_dir():
        raise UsageError(f"{path}: no such folder")
    if (path / "outcome.json").is_file() and (path / "run").is_dir():
        return [(path / "run", "action-artifact")]
    if (path / "audit.jsonl").is_file():
        artifact = (path.parent / "outcome.json").is_file()
        return [(path, "action-artifact" if artifact else "local")]
    found = [p for p in sorted(path.iterdir()) if (p / "audit.jsonl").is_file()]
    if not found:
        raise UsageError(f"{path}: not a run folder (no audit.jsonl in it or in its folders)")
    return [(p, "local") for p in found]


def read_run(path: Path, source: Source) -> RunRead:
    """Read one run folder (see the module docstring). Never raises for damaged contents."""
    result = RunRead(path=path, run_id=path.name, source=source)
    head = _recorded_head(path)
    if head is None:
        result.refused = "no audit head recorded in summary.json or state.json"
        return result
    check = verify_audit_log(path / "audit.jsonl", head=head)
    if not check.ok:
        result.refused = f"audit log does not verify: {check.problems[0]}"
        return result
    events = [json.loads(line) for line in (path / "audit.jsonl").read_text("utf-8").splitlines()]
    if events:
        result.run_id = str(events[0].get("run_id") or path.name)
    try:
        walk = _walk(events)
    except (TypeError, ValueError) as exc:
        result.refused = f"audit log holds an event of an unexpected shape: {exc}"
        return result
    result.tainted = walk.tainted or _state_flag(path, "tainted")
    sequences = read_transcript(path / "transcript.jsonl")
    for acc in walk.finished:
        where = f"{result.run_id}:{acc.label}#{acc.number}"
        try:
            result.trajectories.append(_build(acc, walk, sequences, path, result))
        except _Unusable as exc:
            result.skipped.append(Skipped(where, str(exc)))
        except (KeyError, TypeError, ValueError) as exc:
            result.skipped.append(Skipped(where, f"a record of an unexpected shape: {exc}"))
    return result


# -- the audit walk --------------------------------------------------------------------------


class _Unusable(Exception):
    """An attempt that cannot be confirmed (the message says why)."""


@dataclass
class _Attempt:
    label: str
    number: int
    task: str
    history: bool = False
    model_calls: list[list[str]] = field(default_factory=list)
    tool_calls: list[tuple[str, str, str]] = field(default_factory=list)
    record: dict[str, Any] = field(default_factory=dict)
    card_status: str | None = None
    context: dict[str, str] = field(default_factory=dict)


@dataclass
class _Walk:
    finished: list[_Attempt] = field(default_factory=list)
    tainted: bool = False
    project: bool = False
    """A ``chimera run`` (cards): a passing attempt also needs its card's verdict."""
    learned: str | None = None
    """The learned-context text of the last ``learning_context`` event (``None``: none yet)."""
    context: dict[str, str] = field(default_factory=dict)
    """What the last plan prompt held (see :attr:`Trajectory.prompt_context`)."""


_LEARNED_HEADER = "Learned context"
_PLAYBOOK = "## Playbook\n"


def plan_context(memory: object, learned: str | None) -> dict[str, str]:
    """A plan prompt's context: its memory block and its learned block split into skills and
    playbook (the shape :class:`chimera.evolution.learned_context.EvolutionContext` renders)."""
    text = learned or ""
    if text.startswith(_LEARNED_HEADER):
        text = text.split("\n\n", 1)[1] if "\n\n" in text else ""
    skills, _, playbook = text.partition(_PLAYBOOK)
    return {
        "memory": memory if isinstance(memory, str) else "",
        "skills": skills.strip(),
        "playbook": playbook.strip(),
    }


def _walk(events: list[dict[str, Any]]) -> _Walk:
    walk = _Walk()
    task = ""
    current: _Attempt | None = None
    for event in events:
        name, f = event.get("event"), event.get("fields") or {}
        if name == "run_started":
            walk.tainted |= bool(f.get("tainted")) or bool(f.get("untrusted"))
            task = str(f.get("task", task))
        elif name == "taint_source":
            walk.tainted = True
        elif name == "card_started":
            walk.project = True
        elif name == "learning_context":
            walk.learned = str(f.get("text") or "")
        elif name in ("plan", "replan"):
            walk.context = plan_context(f.get("memory"), walk.learned)
        elif name == "card_finished":
            for acc in walk.finished:
                if acc.label == f.get("card") and acc.card_status is None:
                    acc.card_status = str(f.get("status"))
        elif name == "attempt_started":
            # A resumed card starts its interrupted attempt again: the last start wins.
            current = _Attempt(str(f.get("label", "")), int(f.get("attempt", 0)), task)
            current.context = dict(walk.context)
        elif current is None:
            continue
        elif name == "attempt" and f.get("number") == current.number:
            current.record = f
            walk.finished.append(current)
            current = None
        elif f.get("attempt") != current.number:
            continue
        elif name == "history_injected":
            current.history = True
        elif name == "model_call" and f.get("purpose") == "act":
            current.model_calls.append([str(n) for n in f.get("tool_calls") or []])
        elif name == "tool_call":
            current.tool_calls.append(
                (str(f.get("name")), str(f.get("arguments")), str(f.get("output")))
            )
    return walk


# -- one attempt -------------------------------------------------------------------------------


def _build(
    acc: _Attempt,
    walk: _Walk,
    sequences: dict[tuple[str, int], Sequence],
    path: Path,
    run: RunRead,
) -> Trajectory:
    seq = sequences.get((acc.label, acc.number))
    if seq is None or not seq.messages:
        raise _Unusable("no transcript for this attempt")
    if seq.broken:
        raise _Unusable("transcript lines missing, malformed or out of order")
    problem = confirm(seq.messages, acc.model_calls, acc.tool_calls)
    if problem:
        raise _Unusable(problem)
    rec = acc.record
    verdict = str(rec.get("verdict"))
    accepted, why = _judge(acc, walk, verdict, path)
    messages = renumber(seq.messages)
    first = next((i for i, m in enumerate(messages) if m.get("role") == "assistant"), None)
    if first is None:
        raise _Unusable("the model never answered in this attempt")
    cost = rec.get("cost_usd")
    return Trajectory(
        run_id=run.run_id,
        source=run.source,
        card=acc.label,
        task_digest=hashlib.sha256(acc.task.encode("utf-8")).hexdigest()[:16],
        number=acc.number,
        verdict=verdict,
        accepted=accepted,
        why=why,
        messages=tuple(messages),
        prompt_size=first,
        history_injected=acc.history,
        tools=tuple(seq.tools) if seq.tools is not None else None,
        model=str(rec.get("model", "")),
        tokens=int(rec.get("tokens") or 0),
        cost_usd=float(cost) if isinstance(cost, int | float) else None,
        files_changed=int(rec.get("files_changed") or 0),
        added=int(rec.get("added") or 0),
        removed=int(rec.get("removed") or 0),
        tainted=run.tainted,
        prompt_context=dict(acc.context),
    )


def _judge(acc: _Attempt, walk: _Walk, verdict: str, path: Path) -> tuple[bool, str]:
    """Whether the attempt is a positive, and why not."""
    if verdict != Verdict.PASSED.value:
        return False, verdict
    rec = acc.record
    diff_path = rec.get("diff_path")
    try:
        diff = (path / str(diff_path)).read_text("utf-8") if diff_path else ""
    except (OSError, UnicodeDecodeError) as exc:
        raise _Unusable(f"diff unreadable: {diff_path}") from exc
    if len(diff) != rec.get("diff_chars") or not diff.strip() or not rec.get("files_changed"):
        raise _Unusable("the diff file does not match the audit log (or is empty)")
    if walk.project:
        if acc.card_status is None:
            raise _Unusable("the card has no verdict in the audit log")
        if acc.card_status not in _CARD_OK:
            return False, f"card {acc.card_status} by the orchestrator"
    return True, ""


# -- run files -----------------------------------------------------------------------------------


def _json_file(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _recorded_head(path: Path) -> str | None:
    for name in ("state.json", "summary.json"):
        head = _json_file(path / name).get("audit_head")
        if isinstance(head, str) and head:
            return head
    return None


def _state_flag(path: Path, key: str) -> bool:
    return any(bool(_json_file(path / n).get(key)) for n in ("state.json", "summary.json"))


__all__ = ["Message", "RunRead", "Skipped", "Source", "Trajectory", "find_runs", "read_run"]
