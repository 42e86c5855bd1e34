"""The artifacts folder that carries a run from the agent job to the publish job (and, through
the workflow artifact, to a later resume).

Layout (one folder, uploaded with ``actions/upload-artifact``)::

    outcome.json      Outcome: what the agent job decided and what the run ended as
    report.json       RunReport: the run for display (untrusted; chimera.github.trust.report)
    patch.diff        git diff --binary from the base commit to the finished work tree
    run/              the run folder (.chimera/runs/<id>/ without snapshots): state.json,
                      audit.jsonl (hash-chained), transcript and attempt records
    summary.md        the readable audit summary (job summary, PR body)
    spec-report.json  the final spec results {requirement id: status}
    attempts.json     the cards with their attempts and notes (the attempt history)

The agent job holds no write token; the publish job trusts nothing in here beyond what it
re-checks (it scans the patch and applies it with ``git apply --check`` first). Every file is
read without following links (:func:`read_artifact`), and the outcome is parsed once with
each field's grammar (:mod:`chimera.github.trust.carriers`), so a damaged or forged artifact is a
one-line refusal, not a traceback or a path.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PositiveInt, ValidationError

from chimera.atomic import atomic_write_json, atomic_write_text
from chimera.confine import copy_tree, read_regular
from chimera.errors import ChimeraError, HandoffError, UnsafePathError
from chimera.github.trust.carriers import ArtifactName, Branch, Commit, Login, RunId, WorkflowRun
from chimera.github.trust.handoff import describe_validation
from chimera.github.trust.report import RunReport, write_report
from chimera.localstate import make_dirs
from chimera.orchestration.state import STATE_FILE, RunState, RunStore

__all__ = [
    "OUTCOME_FILE",
    "PATCH_FILE",
    "Outcome",
    "collect_run",
    "make_patch",
    "read_artifact",
    "read_outcome",
    "read_patch",
    "read_summary",
    "restore_run",
    "resumed_state",
    "write_outcome",
]

OUTCOME_FILE = "outcome.json"
PATCH_FILE = "patch.diff"
RUN_DIR = "run"
SUMMARY_FILE = "summary.md"
MAX_OUTCOME_BYTES = 1 << 20
MAX_STATE_BYTES = 64 << 20
MAX_SUMMARY_BYTES = 8 << 20


RunStatusName = Literal["running", "awaiting_approval", "done", "stopped", "failed"]
StopReasonName = Literal[
    "goal_met",
    "budget_tokens",
    "budget_usd",
    "wall_time",
    "max_iterations",
    "human_checkpoint",
    "cards_failed",
    "rejected_goal",
    "blocked",
    "crashed",
]


class Outcome(BaseModel):
    """What the agent job hands the publish job: display data, each field parsed once with
    its grammar (:mod:`chimera.github.trust.carriers`), so a forged value is refused at the door.

    ``kind``: ``run`` (a run happened: see ``status``), ``ignored`` (the decision was to do
    nothing: ``explain`` says whether to tell the issue), ``crashed`` (the run could not
    finish; ``detail`` says why). publish acts on none of it: the issue, base and mode are
    decide's, the verdict verify's, the run id publish derives itself.
    """

    model_config = ConfigDict(extra="forbid", strict=True)

    version: Literal[1] = 1
    kind: Literal["run", "ignored", "crashed"]
    mode: Literal["new", "resume", "rerun"] = "new"
    issue: PositiveInt | None = None
    pull: PositiveInt | None = None
    decision: dict[str, Any] = Field(default_factory=dict)
    run_id: RunId | None = None
    started_by: Login | None = None
    status: RunStatusName | None = None
    stop_reason: StopReasonName | None = None
    stop_detail: str = ""
    # The agent child's exit status (0: the run ended, its status is above; 2 or 3: it could
    # not run). See chimera.github.agent.child.
    exit_code: int | None = None
    base_sha: Commit | None = None
    base_ref: Branch | None = None
    branch: Branch | None = None
    # The tip of chimera/issue-<n> when the run started (resume/rerun): publishing pushes with
    # a lease on it, so a person's push in between is never overwritten.
    branch_head: Commit | None = None
    empty_patch: bool = True
    risk_reasons: list[str] = Field(default_factory=list)
    spec_change: bool = False
    tainted: bool = True
    detail: str = ""
    explain: bool = False
    workflow_run: WorkflowRun | None = None
    artifact: ArtifactName | None = None


def write_outcome(folder: Path, outcome: Outcome) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / OUTCOME_FILE
    atomic_write_json(path, outcome.model_dump(mode="json"))
    return path


def read_outcome(folder: Path) -> Outcome:
    """Read ``outcome.json`` (never through a link).

    Raises:
        HandoffError: missing, a link, or invalid (names the file and the first problem).
    """
    path = folder / OUTCOME_FILE
    raw = read_artifact(folder, OUTCOME_FILE, limit=MAX_OUTCOME_BYTES)
    if raw is None:
        raise HandoffError(f"{path}: no outcome (the agent job did not finish)")
    try:
        return Outcome.model_validate_json(raw)
    except ValidationError as exc:
        raise HandoffError(f"{path}: invalid outcome: {describe_validation(exc)}") from exc


def read_artifact(folder: Path, name: str, *, limit: int | None = None) -> bytes | None:
    """The bytes of ``folder/name`` read without following any link (``None``: no such file).

    Raises:
        HandoffError: a link, a special file or over ``limit`` bytes (one line), or unreadable.
    """
    try:
        return read_regular(folder, name, limit=limit)
    except UnsafePathError as exc:
        raise HandoffError(str(exc)) from exc
    except OSError as exc:
        raise HandoffError(f"{folder / name}: cannot be read: {exc.strerror or exc}") from exc


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


def _not_uploaded(folder: str, names: list[str]) -> set[str]:
    # Snapshots and locks stay behind; so does every link or special file: a link into the
    # runner (``~/.ssh``) would otherwise be copied as its target's content and uploaded.
    skipped = set(shutil.ignore_patterns("snapshots", "*.lock")(folder, names))
    for name in names:
        mode = (Path(folder) / name).lstat().st_mode
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
            skipped.add(name)
    return skipped


def collect_run(root: Path, run_id: str, folder: Path) -> Path | None:
    """Copy ``.chimera/runs/<run_id>/`` (without ``snapshots/``, locks, links or special
    files) to ``folder/run``, plus, from
    its state, ``report.json`` (:class:`~chimera.github.trust.report.RunReport`),
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
    shutil.copytree(src, dest, ignore=_not_uploaded)
    if (src / STATE_FILE).is_file():
        report = RunReport.from_state(store.load(run_id))
        write_report(folder, report)
        atomic_write_json(folder / "spec-report.json", report.final_results)
        atomic_write_json(
            folder / "attempts.json", [card.model_dump(mode="json") for card in report.cards]
        )
    return dest


def base_commands(root: Path, base: str, spec_path: str, work: Path) -> list[str]:
    """The ``command`` runs of the Spec at commit ``base`` of ``root`` (what a tainted run may
    execute, :func:`chimera.governance.wiring.trusted_commands`); ``[]`` when the commit or
    its Spec cannot be read: a resumed run then executes only what needs no allowlist."""
    import tempfile

    from chimera.github.trust.basecommit import read_base_files
    from chimera.governance.wiring import trusted_commands
    from chimera.spec.loader import load_spec

    if not base:
        return []
    with tempfile.TemporaryDirectory(prefix="chimera-resume-base-", dir=work.parent) as tmp:
        try:
            files = read_base_files(root, base, spec_path, Path(tmp) / "base")
            if not files.spec_dir.exists():
                return []
            return trusted_commands(load_spec([files.spec_dir]))
        except ChimeraError:
            return []


def resumed_state(state: RunState, *, spec_path: str, trusted_commands: list[str]) -> RunState:
    """The run state an Action resume continues from: the artifact's, with what the resuming
    job re-derives put in place of what the agent job wrote. Every run the Action starts read
    an issue (``untrusted``) and judges the Spec at ``spec_path``; the commands a tainted run
    may execute are the base Spec's (``trusted_commands``, read by the resuming job from the
    base commit), never the artifact's list.

    Raises:
        HandoffError: the state says the run read no untrusted text, or names another Spec.
    """
    if not state.untrusted:
        raise HandoffError(
            "the artifact's run state says the run read no untrusted text; every run the "
            "Action starts reads its issue, so it is refused"
        )
    wanted = [spec_path.strip("/") or "."]
    if [p.strip("/") or "." for p in state.spec_paths] != wanted:
        shown = ", ".join(state.spec_paths)[:120]
        raise HandoffError(
            f"the artifact's run state judges the Spec at {shown!r}, not {wanted[0]!r}"
        )
    extra = dict(state.extra) | {"trusted_commands": list(trusted_commands)}
    return state.model_copy(update={"extra": extra})


def restore_run(
    folder: Path,
    root: Path,
    run_id: str,
    *,
    vet: Callable[[RunState], RunState] | None = None,
) -> Path:
    """Put an artifact's ``run/`` back as ``<root>/.chimera/runs/<run_id>/`` (for a resume on
    another runner). ``run_id`` must pass the run store's rule and its folder is proved to stay
    under ``.chimera/runs`` before anything is made; the artifact's files are copied without
    following links (a link anywhere in ``run/`` refuses the whole folder). ``vet`` (see
    :func:`resumed_state`) may refuse the state or put re-derived fields in it before anything
    is copied; the folder then holds its result.

    Raises:
        ChimeraError: the id is malformed or escapes (``UsageError``), the artifact holds no
            run folder, a link or special file (``HandoffError``), a different run, or a
            state ``vet`` refuses.
    """
    dest = RunStore(root).run_dir(run_id)  # the id rule, and the folder proved confined
    src = folder / RUN_DIR
    state_path = src / STATE_FILE
    raw = read_artifact(folder, f"{RUN_DIR}/{STATE_FILE}", limit=MAX_STATE_BYTES)
    if raw is None:
        raise HandoffError(f"{folder}: the artifact holds no run state (run/state.json)")
    try:
        state = RunState.model_validate_json(raw)
    except ValidationError as exc:
        raise HandoffError(
            f"{state_path}: unreadable run state: {describe_validation(exc)}"
        ) from exc
    if state.run_id != run_id:
        raise HandoffError(f"{state_path}: holds run {state.run_id[:80]!r}, not {run_id!r}")
    if vet is not None:
        try:
            state = vet(state)
        except HandoffError as exc:
            raise HandoffError(f"{state_path}: {exc}") from exc
    if dest.exists():
        shutil.rmtree(dest)
    make_dirs(dest.parent)
    try:
        copy_tree(src, dest, what=f"{folder.name}/{RUN_DIR}")
    except UnsafePathError as exc:
        shutil.rmtree(dest, ignore_errors=True)
        raise HandoffError(str(exc)) from exc
    if vet is not None:
        atomic_write_json(dest / STATE_FILE, state.model_dump(mode="json"))
    return dest


def read_patch(artifacts: Path) -> str:
    """The agent's patch (``""`` when the artifact holds none); bytes are kept as they are
    (``surrogateescape``), so the hash is of exactly what was uploaded. Never read through a
    link.

    Raises:
        HandoffError: ``patch.diff`` is a link or a special file.
    """
    raw = read_artifact(artifacts, PATCH_FILE)
    return "" if raw is None else raw.decode("utf-8", "surrogateescape")


def read_summary(artifacts: Path) -> str:
    """The agent's readable audit summary (display data; ``""`` when there is none). Never
    read through a link.

    Raises:
        HandoffError: ``summary.md`` is a link, a special file or too large.
    """
    raw = read_artifact(artifacts, SUMMARY_FILE, limit=MAX_SUMMARY_BYTES)
    return "" if raw is None else raw.decode("utf-8", "replace")


def write_summary(folder: Path, text: str) -> Path:
    path = folder / SUMMARY_FILE
    atomic_write_text(path, text)
    return path
