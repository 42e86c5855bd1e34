"""Durable run state: everything needed to resume a project run, on this machine or another.

A run lives in ``.chimera/runs/<run-id>/``::

    state.json      RunState, rewritten atomically after every step (temp + fsync + rename)
    run.lock        held (an OS file lock) by the one process working on the run
    audit.jsonl     the hash-chained audit log (append-only)
    snapshots/      WorkspaceGuard snapshots (the card in flight can be reverted on resume)
    transcript.jsonl, attempts/ ...  written by the AutonomousAgent

The folder is self-contained: copied to another machine next to the same checkout (the
Action carries it as a workflow artifact), ``chimera resume RUN_ID`` continues it.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from chimera.atomic import atomic_write_json, atomic_write_text
from chimera.confine import confined
from chimera.errors import ChimeraError, UnsafePathError, UsageError
from chimera.localstate import ensure_ignored, make_dirs

RUNS_DIR = Path(".chimera") / "runs"
STATE_FILE = "state.json"
SUMMARY_FILE = "summary.json"
"""Written by ``chimera solve`` and ``chimera ask`` at their end (they keep no run state)."""
AUDIT_FILE = "audit.jsonl"
LOCK_FILE = "run.lock"
STATE_VERSION = 1
RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
"""The run store's id rule (:func:`check_run_id`)."""


class RunStatus(StrEnum):
    """The lifecycle of a run."""

    RUNNING = "running"
    AWAITING_APPROVAL = "awaiting_approval"
    DONE = "done"
    STOPPED = "stopped"
    FAILED = "failed"


class StopReason(StrEnum):
    """Why a run stopped; every stop names one."""

    GOAL_MET = "goal_met"
    BUDGET_TOKENS = "budget_tokens"
    BUDGET_USD = "budget_usd"
    WALL_TIME = "wall_time"
    MAX_ITERATIONS = "max_iterations"
    HUMAN_CHECKPOINT = "human_checkpoint"
    CARDS_FAILED = "cards_failed"
    REJECTED_GOAL = "rejected_goal"
    BLOCKED = "blocked"
    CRASHED = "crashed"


class InFlight(BaseModel):
    """The card being worked on; on resume its partial work is reverted and it is redone."""

    model_config = ConfigDict(extra="forbid")

    card_id: str
    snapshot_id: str
    backend_position: int | None = None
    started_at: str


class Approval(BaseModel):
    model_config = ConfigDict(extra="forbid")

    by: str
    at: str
    cards: list[str]


class RunState(BaseModel):
    """The durable state of one project run (see module docstring)."""

    model_config = ConfigDict(extra="forbid")

    version: int = STATE_VERSION
    run_id: str
    created_at: str
    updated_at: str
    started_by: str
    spec_paths: list[str]
    task: str | None = None
    untrusted: bool = False
    mode: str = "repair"
    model: str | None = None
    status: RunStatus = RunStatus.RUNNING
    stop_reason: StopReason | None = None
    stop_detail: str = ""
    base_green: list[str] = Field(default_factory=list)
    base_red: list[str] = Field(default_factory=list)
    goal_ids: list[str] = Field(default_factory=list)
    acceptance_ids: list[str] = Field(default_factory=list)
    rejected_acceptance: dict[str, str] = Field(default_factory=dict)
    unrelated_red: list[str] = Field(default_factory=list)
    cards: list[dict[str, Any]] = Field(default_factory=list)
    iterations: int = 0
    in_flight: InFlight | None = None
    backend_position: int | None = None
    tokens: int = 0
    cost_usd: float | None = 0.0
    elapsed_s: float = 0.0
    approvals: list[Approval] = Field(default_factory=list)
    pending_approval: list[str] = Field(default_factory=list)
    audit_head: str | None = None
    sandbox_mode: str | None = None
    final_results: dict[str, str] = Field(default_factory=dict)
    denied_actions: list[dict[str, Any]] = Field(default_factory=list)
    tainted: bool = False
    extra: dict[str, Any] = Field(default_factory=dict)


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def check_run_id(run_id: object, what: str = "run id") -> str:
    """``run_id`` when it is a well-formed run id: 1 to 100 characters of letters, digits,
    ``.``, ``_`` and ``-``, starting with a letter or digit — one plain folder name, never
    ``..``, a path or a control character. The run store's one rule: every id read from
    somewhere less trusted (a PR marker, an artifact) passes it before a folder is named.

    Raises:
        UsageError: one line naming ``what`` and the value.
    """
    if not isinstance(run_id, str) or not RUN_ID.fullmatch(run_id):
        shown = repr(run_id)[:80]
        raise UsageError(
            f"invalid {what} {shown}: a run id is 1-100 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit"
        )
    return run_id


def new_run_id() -> str:
    """A sortable, unique run id: ``YYYYmmdd-HHMMSS-<6 hex>``."""
    return datetime.now(UTC).strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(3)


@contextmanager
def _file_lock(path: Path, busy: str) -> Iterator[None]:
    from filelock import FileLock, Timeout

    lock = FileLock(str(path), timeout=0)
    try:
        lock.acquire()
    except Timeout as exc:
        raise UsageError(busy) from exc
    try:
        yield
    finally:
        lock.release()


@contextmanager
def workspace_lock(root: Path, *, owner: str) -> Iterator[None]:
    """Hold ``root``'s workspace lock: one Chimera run or solve changes a tree at a time.

    Raises:
        UsageError: another process holds it (the message names it).
    """
    base = root / ".chimera"
    ensure_ignored(base)
    holder = base / "workspace.owner"
    try:
        current = holder.read_text(encoding="utf-8").strip()
    except OSError:
        current = "another Chimera process"
    with _file_lock(
        base / "workspace.lock",
        f"{current or 'another Chimera process'} is in progress in another process, changing "
        f"this tree ({root}); wait for it to finish, or stop it first",
    ):
        atomic_write_text(holder, owner + "\n")
        yield


class RunStore:
    """Run folders under ``<root>/.chimera/runs``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.base = root / RUNS_DIR

    def run_dir(self, run_id: str) -> Path:
        """The folder of run ``run_id`` (not created): the id passes :func:`check_run_id`, and
        the folder is proved to stay under ``.chimera/runs`` (:func:`chimera.confine.confined`).

        Raises:
            UsageError: the id is malformed, or its folder would leave the runs folder.
        """
        check_run_id(run_id)
        try:
            confined(self.base, run_id, what=f"run id {run_id!r}")
        except UnsafePathError as exc:
            raise UsageError(str(exc)) from exc
        return self.base / run_id

    @contextmanager
    def lock(self, run_id: str) -> Iterator[Path]:
        """Hold run ``run_id``'s lock, and the workspace's, while working on it; yields the run
        folder.

        One process at a time works on a run: two would interleave cards, snapshots and
        audit lines; and one run at a time works on a tree: two would each claim the other's
        edits. The locks are OS file locks (the ``filelock`` package) on ``run.lock`` and on
        ``.chimera/workspace.lock``: the kernel releases them when their process dies,
        ``kill -9`` included, so whoever holds the run lock also owns everything a dead
        process left in the folder (stale git locks, temp files) and may clear it.

        Raises:
            UsageError: another process holds either lock (names the run that holds it).
        """
        folder = self.run_dir(run_id)
        make_dirs(folder)
        with (
            workspace_lock(self.root, owner=f"run {run_id}"),
            _file_lock(
                folder / LOCK_FILE,
                f"run {run_id} is in progress in another process (it holds "
                f"{folder / LOCK_FILE}); wait for it, or stop it first",
            ),
        ):
            yield folder

    def is_active(self, run_id: str) -> bool:
        """True when a live process holds the run's lock (it is being worked on now)."""
        from filelock import FileLock, Timeout

        path = self.run_dir(run_id) / LOCK_FILE
        if not path.exists():
            return False
        lock = FileLock(str(path), timeout=0)
        try:
            lock.acquire()
        except Timeout:
            return True
        lock.release()
        return False

    def interrupted(self) -> list[str]:
        """Runs left ``running`` by a process that died (or was interrupted), oldest first."""
        out: list[str] = []
        for rid in self.list_ids():
            try:
                state = self.load(rid)
            except ChimeraError:
                continue
            if state.status is RunStatus.RUNNING and not self.is_active(rid):
                out.append(rid)
        return out

    def save(self, state: RunState) -> None:
        """Write ``state.json`` atomically."""
        state.updated_at = now_iso()
        atomic_write_json(self.run_dir(state.run_id) / STATE_FILE, state.model_dump(mode="json"))

    def load(self, run_id: str) -> RunState:
        """Read a run's state.

        Raises:
            UsageError: no such run.
            ChimeraError: the state file is unreadable or invalid (names the file).
        """
        path = self.run_dir(run_id) / STATE_FILE
        if not path.is_file():
            known = ", ".join(self.list_ids()[-5:]) or "none"
            raise UsageError(f"no run {run_id!r} under {self.base} (recent: {known})")
        try:
            return RunState.model_validate(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError, ValidationError) as exc:
            first = str(exc).splitlines()[0]
            raise ChimeraError(f"{path}: unreadable run state: {first}") from exc

    def refuse_existing(self, run_id: str) -> None:
        """Refuse to start a new run under an id that already holds a recorded run.

        A new start would replace its state (and its recorded audit head would no longer
        verify). A folder with only an audit log — a start killed before its first state
        was saved — is not refused: starting again extends the same chain.

        Raises:
            UsageError: ``run_id`` names a project run (its status is named) or a
                ``solve`` / ``ask`` run.
        """
        folder = self.run_dir(run_id)
        if (folder / STATE_FILE).is_file():
            try:
                status = self.load(run_id).status.value
            except ChimeraError:
                status = "its state is unreadable"
            raise UsageError(
                f"run {run_id} already exists ({status}) in {folder}: continue it with "
                f"'chimera resume {run_id}', or choose another --run-id"
            )
        if (folder / SUMMARY_FILE).is_file():
            raise UsageError(
                f"run {run_id} already exists (a solve or ask run) in {folder}: choose "
                "another --run-id"
            )

    def record_ids(self) -> list[str]:
        """Every run folder with a record: project runs (state), ``solve`` / ``ask`` runs
        (summary) and runs with only an audit log so far (in progress or interrupted)."""
        if not self.base.is_dir():
            return []
        files = (STATE_FILE, SUMMARY_FILE, AUDIT_FILE)
        return sorted(p.name for p in self.base.iterdir() if any((p / f).is_file() for f in files))

    def list_ids(self) -> list[str]:
        if not self.base.is_dir():
            return []
        return sorted(p.name for p in self.base.iterdir() if (p / STATE_FILE).is_file())

    def latest(self) -> str | None:
        ids = self.list_ids()
        return ids[-1] if ids else None
