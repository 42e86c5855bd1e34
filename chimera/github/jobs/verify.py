"""The verify job: judge the agent's patch from the base commit (``contents: read``; no
secrets; a fresh runner; agent-written code only in the strict sandbox).

It takes decide's outputs (:class:`~chimera.github.trust.Decided`: the issue, the base commit,
the acceptance block matched to the hash decide recorded) and the patch from the agent job's
artifact — nothing else the agent wrote — and rebuilds the goal
(:mod:`chimera.github.reverify`). Its only hand-off to publish is four job outputs,
``{base_sha, patch_sha256, spec_digest, verdict}``: publish re-hashes the patch it applies and
recomputes the digest of the Spec it reads, so a patch swapped after verify, or a verdict
about another goal, is refused there.

With ``sandbox: scrubbed`` the verdict is computed the same way, but agent-written code ran
without isolation and could have written this job's outputs itself: publish treats the
verdict as advisory from its own setting, never from anything verify says.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from chimera.errors import ChimeraError, ConfigError, SandboxError
from chimera.github.artifacts import read_patch
from chimera.github.basecommit import read_base_files, sha256_text, spec_digest
from chimera.github.jobs.context import ActionContext, JobResult
from chimera.github.jobs.refresh import commit_patch
from chimera.github.reverify import GoalVerdict, judge_patch, prepare_trees
from chimera.github.summary import code
from chimera.github.trust import Decided, Verified

if TYPE_CHECKING:
    from chimera.github.settings import ActionSettings
    from chimera.runner import CommandRunner

__all__ = ["VerifyResult", "verify_job"]


@dataclass(frozen=True)
class VerifyResult:
    """verify's outputs and what it found (shown in the job summary)."""

    verified: Verified
    goal: GoalVerdict
    sandbox: str

    def to_job(self) -> JobResult:
        g = self.goal
        lines = [
            f"**Chimera verify:** {g.verdict}"
            + (" (advisory: sandbox scrubbed)" if self.sandbox == "scrubbed" else ""),
            "",
            *(f"- {code(r, 300)}" for r in g.reasons[:20]),
        ]
        if g.before or g.after:
            lines += ["", "| Requirement | Base | Base + patch |", "|---|---|---|"]
            for rid in dict.fromkeys([*g.before, *g.after]):
                lines.append(
                    f"| {code(rid, 80)} | {g.before.get(rid, '-')} | {g.after.get(rid, '-')} |"
                )
        return JobResult(
            outputs={
                **self.verified.to_outputs(),
                "status": g.verdict,
                # Requirement id -> status after the change: data for the Spec check job.
                "results": json.dumps(g.after, sort_keys=True),
            },
            record={**self.verified.to_outputs(), **g.to_json(), "sandbox": self.sandbox},
            summary="\n".join(lines),
        )


def _ensure_commit(root: Path, sha: str) -> None:
    def have() -> bool:
        probe = ["git", "cat-file", "-e", f"{sha}^{{commit}}"]
        return subprocess.run(probe, cwd=root, capture_output=True, check=False).returncode == 0

    if not have():
        fetch = ["git", "fetch", "--quiet", "--no-tags", "origin", sha]
        subprocess.run(fetch, cwd=root, capture_output=True, check=False)
    if not have():
        raise ChimeraError(f"the base commit {sha[:12]} is not in the checkout or its remote")


def verify_job(
    ctx: ActionContext,
    settings: ActionSettings,
    root: Path,
    artifacts: Path,
    decided: Decided,
) -> VerifyResult:
    """Verify the patch in ``artifacts`` against the goal of ``decided`` (module docstring).

    Args:
        ctx: the job's context (its temporary folder).
        settings: the Action's settings (spec path, ``sandbox``).
        root: a checkout holding ``decided.base_sha`` (fetched from ``origin`` if missing).
        artifacts: the agent job's artifact folder (only ``patch.diff`` is read).
        decided: decide's outputs.

    Returns:
        The outputs; a goal that cannot be rebuilt is verdict ``error``, never an exception.

    Raises:
        ChimeraError: the base commit cannot be found.
    """
    base = decided.base_sha
    _ensure_commit(root, base)
    if decided.mode == "refresh" and decided.head_sha:
        # A person's push: the change is base..head from git itself, not an agent's artifact.
        patch = commit_patch(root, base, decided.head_sha)
    else:
        patch = read_patch(artifacts)
    digest = spec_digest(root, base, settings.spec_path, decided.acceptance_sha256)
    mode = "scrubbed" if settings.sandbox == "scrubbed" else "bwrap"
    temp_parent = ctx.runner_temp if ctx.runner_temp and ctx.runner_temp.is_dir() else None
    with tempfile.TemporaryDirectory(prefix="chimera-verify-", dir=temp_parent) as tmp:
        goal = _judge(root, decided, patch, Path(tmp), settings, mode)
    verified = Verified(
        base_sha=base, patch_sha256=sha256_text(patch), spec_digest=digest, verdict=goal.verdict
    )
    return VerifyResult(verified, goal, mode)


def _judge(
    root: Path, decided: Decided, patch: str, tmp: Path, settings: ActionSettings, mode: str
) -> GoalVerdict:
    spec_path = settings.spec_path
    if not patch.strip():
        return GoalVerdict("failed", ["the patch changes nothing: a hollow success"])
    try:
        base_files = read_base_files(root, decided.base_sha, spec_path, tmp / "base-files")
        trees = prepare_trees(root, decided.base_sha, patch, tmp)
    except ConfigError as exc:
        return GoalVerdict("error", [str(exc)])
    except ChimeraError as exc:
        return GoalVerdict("failed", [str(exc)])
    from chimera.orchestration.session import verify_sandbox
    from chimera.spec.settings import engine_options

    sandbox_config = base_files.config.sandbox
    # The set-up step filled it from the base commit; the base's configuration names it.
    deps = Path(settings.deps_dir) if settings.deps_dir else sandbox_config.deps_path(root)

    def runner_for(tree: Path) -> CommandRunner:
        return verify_sandbox(
            tree,
            scrubbed=mode == "scrubbed",
            env_allow=sandbox_config.env_allow,
            deps_dir=deps,
        )

    try:
        return judge_patch(
            base_files,
            decided.acceptance,
            trees,
            spec_path=spec_path,
            runner_for=runner_for,
            options=engine_options(base_files.check),
        )
    except SandboxError as exc:
        return GoalVerdict("error", [str(exc)])
