"""The trust chain's hand-offs: what decide and verify pass on, and what publish re-derives.

Only job outputs of jobs that ran no model-written code cross into the job that holds the
write token (DESIGN.md step 5):

* **decide** (no LLM key): the issue, the mode, the base commit and the acceptance block it
  read through the API just before admitting, with that block's SHA-256 (:class:`Decided`);
* **verify** (``contents: read``, no secret but the held-out specs, agent code only in the
  strict sandbox): ``{base_sha, patch_sha256, spec_digest, verdict}`` (:class:`Verified`).

The workflow maps them into the Action's inputs (``decided-*``, ``verified-*``), which
``action.yml`` maps into ``CHIMERA_DECIDED_*`` / ``CHIMERA_VERIFIED_*`` variables. Everything
else publish acts on — risk, ``spec-change``, the scan — it computes itself from the patch and
the base commit (:func:`patch_risk`). The agent job's artifact is display data and the patch.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from chimera.errors import ChimeraError, ConfigError
from chimera.github.trust.basecommit import sha256_text
from chimera.github.trust.carriers import check
from chimera.orchestration.goal import extract_spec_blocks

__all__ = [
    "DECIDE_OUTPUTS",
    "MODES",
    "VERDICTS",
    "VERIFY_OUTPUTS",
    "Decided",
    "Verified",
    "acceptance_output",
    "acceptance_requirements",
    "input_env",
    "patch_risk",
]

# "refresh": a person pushed to a Chimera PR; its Spec check is judged again (no publish).
MODES = ("run", "resume", "rerun", "refresh")
DECIDE_OUTPUTS = (
    "issue",
    "mode",
    "base-sha",
    "base-ref",
    "acceptance",
    "acceptance-sha256",
    "pull",
    "head-sha",
    "started-by",
)
"""decide's outputs the later jobs receive: as the Action input ``decided-<name>``, which
``action.yml`` maps to ``CHIMERA_DECIDED_<NAME>`` (see :func:`input_env`)."""
VERIFY_OUTPUTS = ("base_sha", "patch_sha256", "spec_digest", "verdict", "results")
"""verify's outputs publish receives: as the input ``verified-<name>`` (``_`` → ``-``).
``results`` (requirement id → status) is data the Spec check cross-checks, not part of
:class:`Verified`."""
VERDICTS = ("passed", "paused", "failed", "error", "held")
_SHA = re.compile(r"[0-9a-f]{40}")
_SHA256 = re.compile(r"[0-9a-f]{64}")


def input_env(job: str, output: str) -> tuple[str, str]:
    """The Action input and environment variable that carry ``job``'s (``decide`` or
    ``verify``) output ``output``: ``("decided-base-sha", "CHIMERA_DECIDED_BASE_SHA")``."""
    prefix = {"decide": "decided", "verify": "verified"}[job]
    name = output.replace("_", "-")
    return f"{prefix}-{name}", f"CHIMERA_{prefix.upper()}_{name.upper().replace('-', '_')}"


def acceptance_output(issue_body: str) -> tuple[str, str]:
    """The ``acceptance`` output (a JSON list of the bodies of the body's ``chimera`` blocks,
    in order) and its SHA-256."""
    text = json.dumps(extract_spec_blocks(issue_body or ""), ensure_ascii=False)
    return text, sha256_text(text)


def acceptance_requirements(blocks: Sequence[str]) -> list[dict[str, Any]]:
    """The requirement mappings of the acceptance blocks (``[]`` for none).

    Raises:
        ChimeraError: a block is not YAML or holds no ``requirements:`` list of mappings.
    """
    import yaml

    reqs: list[dict[str, Any]] = []
    for body in blocks:
        try:
            data = yaml.safe_load(body)
        except yaml.YAMLError as exc:
            first = str(exc).splitlines()[0]
            raise ChimeraError(f"the chimera block is not valid YAML: {first}") from exc
        items = data.get("requirements") if isinstance(data, dict) else data
        if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
            raise ChimeraError("the chimera block must hold a 'requirements:' list of mappings")
        reqs.extend(items)
    return reqs


def _need(env: Mapping[str, str], name: str, pattern: re.Pattern[str] | None = None) -> str:
    value = env.get(name, "").strip()
    if not value:
        raise ConfigError(f"{name} is not set: map it from the earlier job's outputs")
    if pattern is not None and not pattern.fullmatch(value):
        raise ConfigError(f"{name}: {value[:80]!r} is not a well-formed hash")
    return value


def _optional(env: Mapping[str, str], name: str, kind: str) -> str:
    """``env[name]`` stripped (``""`` when unset) when it fits the carriers' grammar ``kind``.

    Raises:
        ConfigError: one line naming the variable and the problem.
    """
    value = env.get(name, "").strip()
    if not value:
        return ""
    try:
        return check(kind, value, name)
    except ChimeraError as exc:
        raise ConfigError(str(exc)) from exc


@dataclass(frozen=True)
class Decided:
    """decide's outputs, as the later jobs receive them.

    Attributes:
        issue: the issue decide admitted.
        mode: ``run``, ``resume``, ``rerun`` or ``refresh`` (verify and the Spec check only).
        base_sha: the base commit (40 hex digits) the change must apply to.
        acceptance: the bodies of the issue's ``chimera`` blocks as decide read them.
        acceptance_sha256: the hash decide recorded of the JSON list of those bodies.
        pull: the PR of a resume or re-run (``None`` for a new run).
        head_sha: the PR's head when decide checked it (resume, re-run): publish pushes with
            a lease on it, so a person's push in between is never overwritten.
        base_ref: the branch the PR targets (``None``: the repository's default).
        started_by: who started the run (the labeller; for a resume, the PR marker's).
    """

    issue: int
    mode: str
    base_sha: str
    acceptance: tuple[str, ...]
    acceptance_sha256: str
    pull: int | None = None
    head_sha: str | None = None
    base_ref: str | None = None
    started_by: str = ""

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Decided:
        """Read ``CHIMERA_DECIDED_*``.

        Raises:
            ConfigError: a value is missing or malformed (one line naming the variable).
            ChimeraError: the acceptance block does not match the hash decide recorded.
        """
        raw_issue = _need(env, "CHIMERA_DECIDED_ISSUE").lstrip("#")
        if not (raw_issue.isascii() and raw_issue.isdigit() and int(raw_issue) > 0):
            raise ConfigError(f"CHIMERA_DECIDED_ISSUE: {raw_issue[:20]!r} is not an issue number")
        mode = _need(env, "CHIMERA_DECIDED_MODE")
        if mode not in MODES:
            raise ConfigError(f"CHIMERA_DECIDED_MODE: {mode!r} is not one of {', '.join(MODES)}")
        text = env.get("CHIMERA_DECIDED_ACCEPTANCE", "").strip() or "[]"
        digest = _need(env, "CHIMERA_DECIDED_ACCEPTANCE_SHA256", _SHA256)
        if sha256_text(text) != digest:
            raise ChimeraError(
                "the acceptance block does not match the hash decide recorded; nothing is "
                "verified or published from it"
            )
        try:
            blocks = json.loads(text)
        except ValueError as exc:
            raise ConfigError(f"CHIMERA_DECIDED_ACCEPTANCE: not JSON: {exc}") from exc
        if not isinstance(blocks, list) or not all(isinstance(b, str) for b in blocks):
            raise ConfigError("CHIMERA_DECIDED_ACCEPTANCE: expected a JSON list of strings")
        pull = env.get("CHIMERA_DECIDED_PULL", "").strip()
        if pull and not (pull.isascii() and pull.isdigit() and int(pull) > 0):
            raise ConfigError(f"CHIMERA_DECIDED_PULL: {pull[:20]!r} is not a PR number")
        head = env.get("CHIMERA_DECIDED_HEAD_SHA", "").strip()
        if head and not _SHA.fullmatch(head):
            raise ConfigError(f"CHIMERA_DECIDED_HEAD_SHA: {head[:80]!r} is not a commit")
        base_ref = _optional(env, "CHIMERA_DECIDED_BASE_REF", "branch")
        started_by = _optional(env, "CHIMERA_DECIDED_STARTED_BY", "login")
        return cls(
            issue=int(raw_issue),
            mode=mode,
            base_sha=_need(env, "CHIMERA_DECIDED_BASE_SHA", _SHA),
            acceptance=tuple(blocks),
            acceptance_sha256=digest,
            pull=int(pull) if pull else None,
            head_sha=head or None,
            base_ref=base_ref or None,
            started_by=started_by,
        )

    def to_outputs(self) -> dict[str, str]:
        """decide's job outputs (the names the workflows map into the later jobs)."""
        return {
            "issue": str(self.issue),
            "mode": self.mode,
            "base-sha": self.base_sha,
            "base-ref": self.base_ref or "",
            "acceptance": json.dumps(list(self.acceptance), ensure_ascii=False),
            "acceptance-sha256": self.acceptance_sha256,
            "pull": str(self.pull or ""),
            "head-sha": self.head_sha or "",
            "started-by": self.started_by,
        }


@dataclass(frozen=True)
class Verified:
    """verify's outputs: what it checked and its verdict (``passed``; ``paused``: a risky
    change whose risky step is verified while the rest of the goal waits for approval, see
    :mod:`chimera.github.verify.pause`; ``failed``; ``error``; or ``held``: the visible goal passed
    and a held-out requirement did not)."""

    base_sha: str
    patch_sha256: str
    spec_digest: str
    verdict: str

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Verified:
        """Read ``CHIMERA_VERIFIED_*``.

        Raises:
            ConfigError: a value is missing or malformed (one line naming the variable).
        """
        verdict = _need(env, "CHIMERA_VERIFIED_VERDICT")
        if verdict not in VERDICTS:
            raise ConfigError(f"CHIMERA_VERIFIED_VERDICT: {verdict[:40]!r} is not a verdict")
        return cls(
            base_sha=_need(env, "CHIMERA_VERIFIED_BASE_SHA", _SHA),
            patch_sha256=_need(env, "CHIMERA_VERIFIED_PATCH_SHA256", _SHA256),
            spec_digest=_need(env, "CHIMERA_VERIFIED_SPEC_DIGEST", _SHA256),
            verdict=verdict,
        )

    def to_outputs(self) -> dict[str, str]:
        return {
            "base_sha": self.base_sha,
            "patch_sha256": self.patch_sha256,
            "spec_digest": self.spec_digest,
            "verdict": self.verdict,
        }


def patch_risk(
    changes: Iterable[tuple[str, str]],
    *,
    high_risk_paths: Sequence[str],
    high_risk_requirements: Sequence[str] = (),
) -> list[str]:
    """Why a change is risky, computed from the patch and the base commit's configuration.

    Args:
        changes: ``(path, status)`` per file of the patch (``D`` deleted).
        high_risk_paths: the base commit's ``[tool.chimera.run] high_risk_paths`` globs.
        high_risk_requirements: goal requirements declared ``risk: high``.

    Returns:
        One reason per kind (deletions, high-risk paths, high-risk requirements); ``[]``
        when none applies.
    """
    import pathspec

    rows = list(changes)
    spec = pathspec.GitIgnoreSpec.from_lines(list(high_risk_paths))
    reasons: list[str] = []
    deleted = [p for p, status in rows if status == "D"]
    if deleted:
        reasons.append("deletes " + ", ".join(deleted[:5]))
    hot = [p for p, _ in rows if spec.match_file(p)]
    if hot:
        reasons.append("touches high-risk paths: " + ", ".join(hot[:5]))
    if high_risk_requirements:
        named = ", ".join(high_risk_requirements)
        reasons.append(f"goal requirements declared risk: high: {named}")
    return reasons
