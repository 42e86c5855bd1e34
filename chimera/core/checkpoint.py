"""The durable record of a ``solve`` in progress, so a resumed card continues it.

The AutonomousAgent writes one :class:`SolveCheckpoint` (atomically) before every attempt:
the attempts so far (the carried-forward history), the task ledger, the plan, the ladder
rung, the usage and the model backend's replay position at that instant. A project run
killed mid-card reverts the card's workspace on resume; the agent then loads the checkpoint
and goes on with the next attempt — its retry prompt carries the earlier attempts, their
count holds across the crash, and a scripted model replays from the same turn.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chimera.atomic import atomic_write_bytes
from chimera.core.attempts import AttemptHistory, TaskLedger
from chimera.errors import ChimeraError

if TYPE_CHECKING:
    from chimera.governance.redactor import SecretRedactor

CHECKPOINT_FILE = "checkpoint.json"
CHECKPOINT_VERSION = 1


@dataclass
class SolveCheckpoint:
    """Where a ``solve`` stood at the start of attempt ``next_attempt``.

    Attributes:
        next_attempt: the attempt about to start (1-based).
        history: every attempt before it (each failed and was reverted).
        ledger: causes and plans collected so far.
        plan: the plan the next attempt follows.
        rung: the ladder rung it runs on; ``replanned_on_rung`` and ``repeated`` (the last
            repeated signature digest) steer the next structural change.
        usage: token and cost totals so far (``UsageTotals.to_json()``).
        history_injections: prompts that carried the history so far.
        reviews_unparsed: manager reviews without a verdict so far.
        backend_position: the model backend's replay position (``None`` for real models).
    """

    next_attempt: int
    history: AttemptHistory
    ledger: TaskLedger
    plan: str
    rung: int = 0
    replanned_on_rung: bool = False
    repeated: str | None = None
    usage: dict[str, Any] = field(default_factory=dict)
    history_injections: int = 0
    reviews_unparsed: int = 0
    backend_position: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "version": CHECKPOINT_VERSION,
            "next_attempt": self.next_attempt,
            "history": self.history.to_json(),
            "ledger": self.ledger.to_json(),
            "plan": self.plan,
            "rung": self.rung,
            "replanned_on_rung": self.replanned_on_rung,
            "repeated": self.repeated,
            "usage": self.usage,
            "history_injections": self.history_injections,
            "reviews_unparsed": self.reviews_unparsed,
            "backend_position": self.backend_position,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SolveCheckpoint:
        return cls(
            next_attempt=int(data["next_attempt"]),
            history=AttemptHistory.from_json(data["history"]),
            ledger=TaskLedger.from_json(data["ledger"]),
            plan=str(data["plan"]),
            rung=int(data.get("rung", 0)),
            replanned_on_rung=bool(data.get("replanned_on_rung", False)),
            repeated=data.get("repeated"),
            usage=dict(data.get("usage", {})),
            history_injections=int(data.get("history_injections", 0)),
            reviews_unparsed=int(data.get("reviews_unparsed", 0)),
            backend_position=data.get("backend_position"),
        )

    def save(self, folder: Path, redactor: SecretRedactor | None = None) -> None:
        """Write ``folder/checkpoint.json`` atomically (a kill leaves the old one or the new),
        its strings passed through ``redactor`` when given (the plan is the model's text, and
        the run folder is uploaded as an artifact)."""
        payload: Any = self.to_json()
        if redactor is not None:
            payload, _ = redactor.redact_json(payload)
        data = json.dumps(payload, ensure_ascii=False, indent=1)
        atomic_write_bytes(folder / CHECKPOINT_FILE, data.encode("utf-8"))

    @classmethod
    def load(cls, folder: Path) -> SolveCheckpoint | None:
        """The checkpoint in ``folder``, or ``None`` when there is none.

        Raises:
            ChimeraError: the file exists but is unreadable or invalid (names the file).
        """
        path = folder / CHECKPOINT_FILE
        if not path.is_file():
            return None
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if data.get("version") != CHECKPOINT_VERSION:
                raise ValueError(f"unknown version {data.get('version')!r}")
            return cls.from_json(data)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise ChimeraError(f"{path}: unreadable solve checkpoint: {first}") from exc


__all__ = ["CHECKPOINT_FILE", "SolveCheckpoint"]
