"""The verify job: judge the agent's patch from the base commit (``contents: read``; no
secrets; a fresh runner; agent-written code only in the strict sandbox).

It takes decide's outputs (:class:`~chimera.github.trust.chain.Decided`: the issue, the base commit,
the acceptance block matched to the hash decide recorded) and the patch from the agent job's
artifact — nothing else the agent wrote — and rebuilds the goal
(:mod:`chimera.github.verify.reverify`). Its only hand-off to publish is four job outputs,
``{base_sha, patch_sha256, spec_digest, verdict}``: publish re-hashes the patch it applies and
recomputes the digest of the Spec it reads, so a patch swapped after verify, or a verdict
about another goal, is refused there.

With ``sandbox: scrubbed`` the verdict is computed the same way, but agent-written code ran
without isolation and could have written this job's outputs itself: publish treats the
verdict as advisory from its own setting, never from anything verify says.

Held-out requirements (:mod:`chimera.github.verify.heldout`): when the workflow maps the held-out
secret into this step, a patch whose visible goal passes is also checked against them; a
failure is the verdict ``held`` (publish opens nothing and says only "a held-out check
failed"). The job's log, summary and outputs carry the public line and a salted digest; the
ids and evidence leave the job only sealed to the maintainer's public key.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chimera.core.heldout.verdict import PUBLIC_MESSAGE
from chimera.errors import ChimeraError, ConfigError, HandoffError, MissingExtraError, SandboxError
from chimera.github.action.context import ActionContext, JobResult
from chimera.github.trust.artifacts import read_patch
from chimera.github.trust.basecommit import read_base_files, sha256_text, spec_digest
from chimera.github.trust.chain import Decided, Verified
from chimera.github.trust.gitops import commit_patch, require_commit
from chimera.github.trust.summary import code
from chimera.github.verify.reverify import GoalVerdict, judge_patch, prepare_trees

if TYPE_CHECKING:
    from chimera.core.heldout import HeldOutVerdict
    from chimera.github.trust.settings import ActionSettings
    from chimera.runner import CommandRunner

__all__ = ["HeldOutInput", "VerifyResult", "verify_job"]

HELD = "held"
"""verify's verdict when the visible goal passes and a held-out requirement does not."""


@dataclass(frozen=True)
class HeldOutInput:
    """The held-out secret as the verify step received it (never shown: ``repr`` hides it).

    Attributes:
        specs: the secret's value (:func:`chimera.github.verify.heldout.materialize`'s ``bundle``).
        public_key: the maintainer's X25519 public key, base64 (``""``: keep the digest only).
    """

    specs: str = field(repr=False)
    public_key: str = ""


@dataclass(frozen=True)
class VerifyResult:
    """verify's outputs and what it found (shown in the job summary)."""

    verified: Verified
    goal: GoalVerdict
    sandbox: str
    heldout: dict[str, Any] | None = None
    """The held-out verdict's public form (``None``: no held-out secret, or not reached)."""
    sealed: bool = False

    def to_job(self) -> JobResult:
        g = self.goal
        lines = [
            f"**Chimera verify:** {g.verdict}"
            + (" (advisory: sandbox scrubbed)" if self.sandbox == "scrubbed" else ""),
            "",
            *(f"- {code(r, 300)}" for r in g.reasons[:20]),
        ]
        if self.heldout is not None:
            where = (
                "sealed to the maintainer's key in this run's held-out artifact"
                if self.sealed
                else "not kept (no heldout-public-key)"
            )
            lines += [
                "",
                f"Held-out requirements: {self.heldout['verdict']} · digest "
                f"{code(self.heldout['digest'], 80)} · the record is {where}",
            ]
        extra = {"heldout": self.heldout} if self.heldout is not None else {}
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
                # Visible requirement id -> status after the change (the summary's table):
                # data for the Spec check job.
                "results": json.dumps(g.after, sort_keys=True),
            },
            record={
                **self.verified.to_outputs(),
                **g.to_json(),
                "sandbox": self.sandbox,
                **extra,
            },
            summary="\n".join(lines),
        )


def verify_job(
    ctx: ActionContext,
    settings: ActionSettings,
    root: Path,
    artifacts: Path,
    decided: Decided,
    heldout: HeldOutInput | None = None,
) -> VerifyResult:
    """Verify the patch in ``artifacts`` against the goal of ``decided`` (module docstring).

    Args:
        ctx: the job's context (its temporary folder).
        settings: the Action's settings (spec path, ``sandbox``).
        root: a checkout holding ``decided.base_sha`` (and a refresh's head; nothing is
            fetched).
        artifacts: the agent job's artifact folder (only ``patch.diff`` is read).
        decided: decide's outputs.
        heldout: the held-out secret, when the workflow maps it into this step.

    Returns:
        The outputs; a goal that cannot be rebuilt is verdict ``error``, never an exception.

    Raises:
        ChimeraError: the base commit (or a refresh's head) is not in the checkout.
        ConfigError: the held-out secret or public key is malformed (never quoted).
    """
    base = decided.base_sha
    require_commit(root, base, "the base commit")
    if decided.mode == "refresh" and decided.head_sha:
        # A person's push: the change is base..head from git itself, not an agent's artifact.
        patch = commit_patch(root, base, decided.head_sha)
    else:
        try:
            patch = read_patch(artifacts)
        except HandoffError as exc:
            # A link or special file where the patch should be: judged as no patch at all.
            refused = GoalVerdict("failed", [f"the agent's patch was refused: {exc}"])
            return _refused(base, root, settings, decided, refused)
    digest = spec_digest(root, base, settings.spec_path, decided.acceptance_sha256)
    mode = "scrubbed" if settings.sandbox == "scrubbed" else "bwrap"
    temp_parent = ctx.runner_temp if ctx.runner_temp and ctx.runner_temp.is_dir() else None
    held: HeldOutVerdict | None = None
    with tempfile.TemporaryDirectory(prefix="chimera-verify-", dir=temp_parent) as tmp:
        goal, held = _judge(root, decided, patch, Path(tmp), settings, mode, heldout, temp_parent)
    sealed = False
    if held is not None:
        if not held.passed:
            goal = GoalVerdict(HELD, [PUBLIC_MESSAGE], goal.goal, goal.before, goal.after)
        if heldout is not None and heldout.public_key:
            from chimera.github.verify.heldout import seal

            try:
                seal(held, heldout.public_key, ctx.runner_temp)
                sealed = True
            except (ConfigError, MissingExtraError) as exc:
                # Fail closed: a held-out verdict nobody can read back is not a verdict.
                goal = GoalVerdict("error", [str(exc)], goal.goal, goal.before, goal.after)
    verified = Verified(
        base_sha=base, patch_sha256=sha256_text(patch), spec_digest=digest, verdict=goal.verdict
    )
    public = held.public() if held is not None else None
    return VerifyResult(verified, goal, mode, public, sealed)


def _refused(
    base: str, root: Path, settings: ActionSettings, decided: Decided, goal: GoalVerdict
) -> VerifyResult:
    digest = spec_digest(root, base, settings.spec_path, decided.acceptance_sha256)
    mode = "scrubbed" if settings.sandbox == "scrubbed" else "bwrap"
    verified = Verified(
        base_sha=base, patch_sha256=sha256_text(""), spec_digest=digest, verdict=goal.verdict
    )
    return VerifyResult(verified, goal, mode)


def _judge(
    root: Path,
    decided: Decided,
    patch: str,
    tmp: Path,
    settings: ActionSettings,
    mode: str,
    heldout: HeldOutInput | None,
    temp_parent: Path | None,
) -> tuple[GoalVerdict, HeldOutVerdict | None]:
    spec_path = settings.spec_path
    if not patch.strip():
        return GoalVerdict("failed", ["the patch changes nothing: a hollow success"]), None
    try:
        base_files = read_base_files(root, decided.base_sha, spec_path, tmp / "base-files")
        trees = prepare_trees(root, decided.base_sha, patch, tmp)
    except ConfigError as exc:
        return GoalVerdict("error", [str(exc)]), None
    except ChimeraError as exc:
        return GoalVerdict("failed", [str(exc)]), None
    from chimera.orchestration.session_factory import verify_sandbox
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

    options = engine_options(base_files.check)
    try:
        goal = judge_patch(
            base_files,
            decided.acceptance,
            trees,
            spec_path=spec_path,
            runner_for=runner_for,
            options=options,
            patch=patch,
        )
    except SandboxError as exc:
        return GoalVerdict("error", [str(exc)]), None
    if heldout is None or goal.verdict != "passed":
        return goal, None
    if mode == "scrubbed":
        # Held-out commands would run next to agent-written code with nothing between them.
        why = "held-out requirements need sandbox: strict (the verify step says scrubbed)"
        return GoalVerdict("error", [why], goal.goal, goal.before, goal.after), None
    from chimera.core.heldout import evaluate_heldout
    from chimera.github.verify.heldout import folder_name, materialize

    try:
        name = folder_name(base_files.config.heldout.dir)
        folder = materialize(heldout.specs, temp_parent, name)
    except ConfigError as exc:
        return GoalVerdict("error", [str(exc)], goal.goal, goal.before, goal.after), None
    try:
        passing = {rid for rid, status in goal.after.items() if status == "passed"}
        held = evaluate_heldout(
            folder,
            trees[0],
            trees[1],
            runner_for(trees[1]),
            visible_spec=(spec_path.strip("/") or ".",),
            visible_passed=passing,
            options=options,
        )
    except SandboxError as exc:
        return GoalVerdict("error", [str(exc)], goal.goal, goal.before, goal.after), None
    finally:
        shutil.rmtree(folder.parent, ignore_errors=True)
    return goal, held
