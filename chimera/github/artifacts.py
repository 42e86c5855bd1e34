"""The artifacts folder that carries a run from the agent job to the publish job (and, through
the workflow artifact, to a later resume).

Layout (one folder, uploaded with ``actions/upload-artifact``)::

    outcome.json      Outcome: what the agent job decided and what the run ended as
    report.json       RunReport: the run for display (untrusted; chimera.github.report)
    patch.diff        git diff --binary from the base commit to the finished work tree
    run/              the run folder (.chimera/runs/<id>/ without snapshots): state.json,
                      audit.jsonl (hash-chained), transcript and attempt records
    summary.md        the readable audit summary (job summary, PR body)
    spec-report.json  the final spec results {requirement id: status}
    attempts.json     the cards with their attempts and notes (the attempt history)

The agent job holds no write token; the publish job trusts nothing in here beyond what it
re-checks (it scans the patch and applies it with ``git apply --check`` first). The outcome
is validated with pydantic, so a damaged artifact is a clear error, not a traceback.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from chimera.atomic import atomic_write_json, atomic_write_text
from chimera.errors import ChimeraError
from chimera.github.report import RunReport, write_report
from chimera.localstate import make_dirs
from chimera.orchestration.state import STATE_FILE, RunState, RunStore

__all__ = [
    "OUTCOME_FILE",
    "PATCH_FILE",
    "Outcome",
    "collect_run",
    "make_patch",
    "read_outcome",
    "read_patch",
    "restore_run",
    "write_outcome",
]

OUTCOME_FILE = "outcome.json"
PATCH_FILE = "patch.diff"
RUN_DIR = "run"
SUMMARY_FILE = "summary.md"


class Outcome(BaseModel):
    """What the agent job hands the publish job.

    ``kind``: ``run`` (a run happened: see ``status``), ``ignored`` (the decision was to do
    nothing: ``explain`` says whether to tell the issue), ``crashed`` (the run could not
    finish; ``detail`` says why).
    """

    model_config = ConfigDict(extra="forbid")

    version: int = 1
    kind: str
    mode: str = "new"  # new | resume | rerun
    issue: int | None = None
    pull: int | None = None
    decision: dict[str, Any] = Field(default_factory=dict)
    run_id: str | None = None
    started_by: str | None = None
    status: str | None = None
    stop_reason: str | None = None
    stop_detail: str = ""
    # The agent child's exit status (0: the run ended, its status is above; 2 or 3: it could
    # not run). See chimera.github.agent_child.
    exit_code: int | None = None
    base_sha: str | None = None
    base_ref: str | None = None
    branch: str | None = None
    # The tip of chimera/issue-<n> when the run started (resume/rerun): publishing pushes with
    # a lease on it, so a person's push in between is never overwritten.
    branch_head: str | None = None
    empty_patch: bool = True
    risk_reasons: list[str] = Field(default_factory=list)
    spec_change: bool = False
    tainted: bool = True
    detail: str = ""
    explain: bool = False
    workflow_run: str | None = None
    artifact: str | None = None


def write_outcome(folder: Path, outcome: Outcome) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / OUTCOME_FILE
    atomic_write_json(path, outcome.model_dump(mode="json"))
    return path


def read_outcome(folder: Path) -> Outcome:
    """Read ``outcome.json``.

    Raises:
        ChimeraError: missing or invalid (names the file and the first problem).
    """
    path = folder / OUTCOME_FILE
    if not path.is_file():
        raise ChimeraError(f"{path}: no outcome (the agent job did not finish)")
    try:
        return Outcome.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, ValidationError) as exc:
        first = str(exc).splitlines()[0]
        raise ChimeraError(f"{path}: invalid outcome: {first}") from exc


def _git(root: Path, *args: str, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(
        ["git", *args], cwd=root, capture_output=True, text=True, env=env, check=False
    )
    if proc.returncode != 0:
        raise ChimeraError(f"git {' '.join(args[:2])} failed in {root}: {proc.stderr.strip()}")
    return proc.stdout


def make_patch(root: Path, base_sha: str) -> str:
    """The change from ``base_sha`` to the work tree (tracked, new and deleted files;
    ``.chimera/`` excluded), as ``git diff --binary`` text. Uses a temporary index, so the
    checkout's own index is untouched."""
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, GIT_INDEX_FILE=str(Path(tmp) / "index"))
        _git(root, "read-tree", base_sha, env=env)
        _git(root, "add", "-A", env=env)
        # Run folders never travel in the patch (even where .chimera/ is not gitignored).
        _git(root, "rm", "-r", "-q", "--cached", "--ignore-unmatch", "--", ".chimera", env=env)
        return _git(root, "diff", "--cached", "--binary", "--no-color", base_sha, env=env)


def collect_run(root: Path, run_id: str, folder: Path) -> Path | None:
    """Copy ``.chimera/runs/<run_id>/`` (without ``snapshots/``) to ``folder/run``, plus, from
    its state, ``report.json`` (:class:`~chimera.github.report.RunReport`),
    ``spec-report.json`` and ``attempts.json``. ``None`` when there is no run folder.

    Raises:
        ChimeraError: the run's ``state.json`` is unreadable or invalid (names the file).
    """
    store = RunStore(root)
    src = store.run_dir(run_id)
    if not src.is_dir():
        return None
    dest = folder / RUN_DIR
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns("snapshots", "*.lock"))
    if (src / STATE_FILE).is_file():
        report = RunReport.from_state(store.load(run_id))
        write_report(folder, report)
        atomic_write_json(folder / "spec-report.json", report.final_results)
        atomic_write_json(
            folder / "attempts.json", [card.model_dump(mode="json") for card in report.cards]
        )
    return dest


def restore_run(folder: Path, root: Path, run_id: str) -> Path:
    """Put an artifact's ``run/`` back as ``<root>/.chimera/runs/<run_id>/`` (for a resume on
    another runner).

    Raises:
        ChimeraError: the artifact holds no run folder, or a different run.
    """
    src = folder / RUN_DIR
    state_path = src / STATE_FILE
    if not state_path.is_file():
        raise ChimeraError(f"{folder}: the artifact holds no run state (run/state.json)")
    try:
        state = RunState.model_validate_json(state_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        first = str(exc).splitlines()[0]
        raise ChimeraError(f"{state_path}: unreadable run state: {first}") from exc
    if state.run_id != run_id:
        raise ChimeraError(f"{state_path}: holds run {state.run_id!r}, not {run_id!r}")
    dest = root / ".chimera" / "runs" / run_id
    if dest.exists():
        shutil.rmtree(dest)
    make_dirs(dest.parent)
    shutil.copytree(src, dest)
    return dest


def read_patch(artifacts: Path) -> str:
    """The agent's patch (``""`` when the artifact holds none); bytes are kept as they are
    (``surrogateescape``), so the hash is of exactly what was uploaded."""
    path = artifacts / PATCH_FILE
    if not path.is_file():
        return ""
    return path.read_bytes().decode("utf-8", "surrogateescape")


def write_summary(folder: Path, text: str) -> Path:
    path = folder / SUMMARY_FILE
    atomic_write_text(path, text)
    return path
