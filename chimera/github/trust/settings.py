"""The Action's settings: the ``action.yml`` inputs, read from ``CHIMERA_*`` environment variables.

``action.yml`` maps each kebab-case input to an environment variable (``label`` →
``CHIMERA_LABEL``, ``max-open-prs`` → ``CHIMERA_MAX_OPEN_PRS``), so untrusted event fields
never pass through a shell, and ``chimera action`` reads one typed object. Bad values are a
one-line :class:`~chimera.errors.ConfigError` naming the variable.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chimera.errors import ConfigError

__all__ = ["GITHUB_ACTIONS_BOT", "SCHEDULE_LABEL", "ActionSettings"]

GITHUB_ACTIONS_BOT = "github-actions[bot]"
SCHEDULE_LABEL = "chimera:schedule"
"""The label of a scheduled job's issue: the tick files it; decide starts a run from it only
when Chimera's own identity added it (a person's is refused, with the reason)."""


def _split(value: str) -> tuple[str, ...]:
    return tuple(v.strip().lstrip("@") for v in value.replace("\n", ",").split(",") if v.strip())


def _bool(env: Mapping[str, str], name: str, default: bool) -> bool:
    raw = env.get(name, "").strip().lower()
    if not raw:
        return default
    if raw in ("1", "true", "yes", "on"):
        return True
    if raw in ("0", "false", "no", "off"):
        return False
    raise ConfigError(f"{name}: expected true or false, got {raw!r}")


def _int(env: Mapping[str, str], name: str, default: int, minimum: int = 0) -> int:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError as exc:
        raise ConfigError(f"{name}: expected an integer, got {raw!r}") from exc
    if value < minimum:
        raise ConfigError(f"{name}: must be at least {minimum}, got {value}")
    return value


def _float(env: Mapping[str, str], name: str) -> float | None:
    raw = env.get(name, "").strip()
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError as exc:
        raise ConfigError(f"{name}: expected a number, got {raw!r}") from exc
    if value <= 0:
        raise ConfigError(f"{name}: must be positive, got {value}")
    return value


def _sandbox(env: Mapping[str, str]) -> str:
    raw = env.get("CHIMERA_SANDBOX", "").strip().lower() or "strict"
    if raw not in ("strict", "scrubbed"):
        raise ConfigError(f"CHIMERA_SANDBOX: expected strict or scrubbed, got {raw!r}")
    return raw


def _variable(env: Mapping[str, str]) -> str:
    raw = env.get("CHIMERA_LLM_KEY_VARIABLE", "").strip()
    if raw and not re.fullmatch(r"[A-Z][A-Z0-9_]*", raw):
        raise ConfigError(f"CHIMERA_LLM_KEY_VARIABLE: {raw[:40]!r} is not a variable name")
    if raw.startswith(("GITHUB_", "ACTIONS_", "RUNNER_", "CHIMERA_")):
        raise ConfigError(f"CHIMERA_LLM_KEY_VARIABLE: {raw} is a runner or Chimera variable")
    return raw


def _artifact_name(env: Mapping[str, str]) -> str:
    from chimera.errors import HandoffError
    from chimera.github.trust.carriers import check

    raw = env.get("CHIMERA_ARTIFACT_NAME", "").strip() or "chimera-run"
    try:
        return check("artifact", raw, "CHIMERA_ARTIFACT_NAME")
    except HandoffError as exc:
        raise ConfigError(str(exc)) from exc


def _deps_dir(env: Mapping[str, str]) -> str:
    raw = env.get("CHIMERA_DEPS_DIR", "").strip()
    if raw and not raw.startswith("/"):
        raise ConfigError(f"CHIMERA_DEPS_DIR: give an absolute folder, got {raw[:60]!r}")
    return raw


def _agent_profile(env: Mapping[str, str]) -> str:
    raw = env.get("CHIMERA_AGENT_PROFILE", "").strip()
    if raw and (raw.startswith("/") or ".." in Path(raw).parts):
        raise ConfigError(
            f"CHIMERA_AGENT_PROFILE: give a path inside the repository, got {raw[:60]!r}"
        )
    return raw


def _scalar(value: str) -> str | int | float | bool:
    """A number or ``true``/``false`` as such (``temperature=0.2``), anything else a string."""
    if value in ("true", "false"):
        return value == "true"
    for kind in (int, float):
        try:
            return kind(value)
        except ValueError:
            continue
    return value


def _pairs(env: Mapping[str, str], name: str) -> dict[str, str | int | float | bool]:
    """``key=value`` lines (blank lines and ``#`` comments skipped) as a dict."""
    found: dict[str, str | int | float | bool] = {}
    for number, line in enumerate(env.get(name, "").splitlines(), start=1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        key, sep, value = text.partition("=")
        if not sep or not re.fullmatch(r"[a-z_][a-z0-9_]*", key.strip()):
            raise ConfigError(f"{name}: line {number}: expected key=value, got {text[:40]!r}")
        found[key.strip()] = _scalar(value.strip())
    return found


@dataclass(frozen=True)
class ActionSettings:
    """Everything the Action's modes need besides the event.

    Attributes:
        label: the trigger label (``chimera``).
        identities: logins that are Chimera itself (its publishing token's account or App
            bot, and ``github-actions[bot]``): their events never trigger, cancel or re-run.
        allowed_bots: bot logins allowed to trigger runs.
        allow_self_approval: the person who triggered a run may approve it.
        branch_prefix: Chimera's branches are ``<prefix><issue number>``.
        max_open_prs / max_prs_per_hour: the ChangeQueue's limits.
        fix_workflow: the workflow file the queue dispatches (the caller, ``chimera.yml``).
        auto_merge: request GitHub auto-merge (or the merge queue) for low-risk PRs.
        risk_reviewers: reviewers requested on ``risk:high`` PRs.
        model, spec_path, max_attempts, max_iterations, budget_usd, budget_tokens,
        diff_feedback: passed on to ``chimera run``.
        memory: the run recalls and records memories (input ``memory: false`` turns it off).
        artifact_name: the run artifact's base name (letters, digits, ``.``, ``_``, ``-``).
        agent_artifact: the artifact the agent job's attempt uploads
            (``<artifact_name>-attempt-<n>``, action.yml names it; verify and publish
            get it as ``agent-artifact``); empty: a local run, :attr:`run_artifact` is
            the base name.
        max_patch_bytes / max_file_bytes: publish scan limits.
        sandbox: ``strict`` (bubblewrap, fail closed) or ``scrubbed`` (the loud opt-out:
            verify's verdict is advisory, the PR a draft labelled ``risk:high``).
        runner_ephemeral: the workflow declares its self-hosted runner ephemeral (one job
            per machine); agent and verify refuse a self-hosted runner without it.
        llm_key_variable: the variable the model provider reads its key from (the agent
            step maps the ``llm-api-key`` input into it, for the run only).
        api_base: the model endpoint (an OpenAI-compatible server, a proxy); empty: the
            configured one.
        litellm: further ``litellm.completion`` settings (``aws_region_name=...`` lines).
        deps_dir: the folder the set-up step installed the project's dependencies into
            (absolute; empty: ``[tool.chimera.sandbox] deps_dir`` of the base commit).
        agent_profile: an agent profile's path in the repository (the ``agent`` input;
            ``""``: none): decide validates it at the base commit, the run applies it, and a
            resume re-applies the profile the run recorded.
        no_app: the GITHUB_TOKEN-only tier, declared by ``bot-login: github-actions[bot]``
            (:mod:`chimera.github.trust.tier`): what needs an App is refused with one line.
    """

    label: str = "chimera"
    identities: tuple[str, ...] = (GITHUB_ACTIONS_BOT,)
    allowed_bots: tuple[str, ...] = ()
    allow_self_approval: bool = False
    branch_prefix: str = "chimera/issue-"
    max_open_prs: int = 3
    max_prs_per_hour: int = 6
    fix_workflow: str = "chimera.yml"
    auto_merge: bool = False
    risk_reviewers: tuple[str, ...] = ()
    model: str | None = None
    spec_path: str = "specs/"
    max_attempts: int | None = None
    max_iterations: int | None = None
    budget_usd: float | None = None
    budget_tokens: int | None = None
    diff_feedback: bool = False
    memory: bool = True
    artifact_name: str = "chimera-run"
    agent_artifact: str = ""
    max_patch_bytes: int = 1_000_000
    max_file_bytes: int = 200_000
    extra_high_risk: tuple[str, ...] = field(default_factory=tuple)
    sandbox: str = "strict"
    runner_ephemeral: bool = False
    llm_key_variable: str = ""
    api_base: str = ""
    litellm: dict[str, str | int | float | bool] = field(default_factory=dict)
    deps_dir: str = ""
    agent_profile: str = ""
    no_app: bool = False

    def run_overrides(self) -> dict[str, Any]:
        """The :class:`~chimera.github.agent.child.AgentRequest` fields these settings fix
        (unset ones stay ``None``: the repository's configuration decides)."""
        return {
            "allow_self_approval": True if self.allow_self_approval else None,
            "api_base": self.api_base or None,
            "litellm": dict(self.litellm) or None,
            "deps_dir": Path(self.deps_dir) if self.deps_dir else None,
            # strict is bubblewrap failing closed, never the configured "auto" fallback.
            "sandbox": "scrubbed" if self.sandbox == "scrubbed" else "bwrap",
            "agent_profile": self.agent_profile or None,
        }

    @property
    def run_artifact(self) -> str:
        """The name of the artifact holding this run's folder (what a resume downloads)."""
        return self.agent_artifact or self.artifact_name

    def is_self(self, login: str | None) -> bool:
        return bool(login) and login in self.identities

    def branch(self, issue: int) -> str:
        return f"{self.branch_prefix}{issue}"

    def issue_of_branch(self, ref: str) -> int | None:
        if not ref.startswith(self.branch_prefix):
            return None
        tail = ref[len(self.branch_prefix) :]
        return int(tail) if tail.isdigit() else None

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> ActionSettings:
        """Read ``CHIMERA_*`` variables (unset or empty: the default)."""
        e = dict(os.environ if env is None else env)
        identities = (*_split(e.get("CHIMERA_BOT_LOGIN", "")), GITHUB_ACTIONS_BOT)
        max_attempts = _int(e, "CHIMERA_MAX_ATTEMPTS", 0, 0) or None
        max_iterations = _int(e, "CHIMERA_MAX_ITERATIONS", 0, 0) or None
        budget_tokens = _int(e, "CHIMERA_BUDGET_TOKENS", 0, 0) or None
        label = e.get("CHIMERA_LABEL", "").strip() or "chimera"
        return cls(
            label=label,
            identities=tuple(dict.fromkeys(identities)),
            allowed_bots=_split(e.get("CHIMERA_ALLOWED_BOTS", "")),
            allow_self_approval=_bool(e, "CHIMERA_ALLOW_SELF_APPROVAL", False),
            max_open_prs=_int(e, "CHIMERA_MAX_OPEN_PRS", 3, 1),
            max_prs_per_hour=_int(e, "CHIMERA_MAX_PRS_PER_HOUR", 6, 1),
            fix_workflow=e.get("CHIMERA_FIX_WORKFLOW", "").strip() or "chimera.yml",
            auto_merge=_bool(e, "CHIMERA_AUTO_MERGE", False),
            risk_reviewers=_split(e.get("CHIMERA_RISK_REVIEWERS", "")),
            model=e.get("CHIMERA_MODEL", "").strip() or None,
            spec_path=e.get("CHIMERA_SPEC_PATH", "").strip() or "specs/",
            max_attempts=max_attempts,
            max_iterations=max_iterations,
            budget_usd=_float(e, "CHIMERA_BUDGET_USD"),
            budget_tokens=budget_tokens,
            diff_feedback=_bool(e, "CHIMERA_DIFF_FEEDBACK", False),
            memory=_bool(e, "CHIMERA_MEMORY", True),
            artifact_name=_artifact_name(e),
            agent_artifact=e.get("CHIMERA_AGENT_ARTIFACT", "").strip(),
            sandbox=_sandbox(e),
            runner_ephemeral=_bool(e, "CHIMERA_RUNNER_EPHEMERAL", False),
            llm_key_variable=_variable(e),
            api_base=e.get("CHIMERA_API_BASE", "").strip(),
            litellm=_pairs(e, "CHIMERA_LITELLM_SETTINGS"),
            deps_dir=_deps_dir(e),
            agent_profile=_agent_profile(e),
            no_app=_split(e.get("CHIMERA_BOT_LOGIN", "")) == (GITHUB_ACTIONS_BOT,),
        )
