"""The Action's ``agent`` input in the agent job's child: the run applies the profile and records
its path and hash in the run state; an approval re-applies the same profile, and refuses (with
why) a profile that changed since, another path, or one the run did not start with."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from chimera.cli.demo import DEMO_DIR, write_project
from chimera.config import ChimeraConfig
from chimera.errors import ChimeraError, ProfileError, UsageError
from chimera.github.agent.child import REQUEST_VERSION, AgentRequest, run_request
from chimera.github.agent.profile import PROFILE_KEY, read_profile, record_profile
from chimera.github.trust.settings import ActionSettings
from chimera.orchestration.state import RunStore
from chimera.orchestration.surfaces import RunRequest, start_run

SCRIPT = f"scripted:{DEMO_DIR / 'script.yaml'}"
PROFILE_PATH = ".chimera-agents/careful.yaml"
PROFILE = """\
profile: careful
instructions: Read the ledger before changing it.
tools: [read_file, write_file, edit_file, list_dir, search, run_command]
solver: {max_attempts: 3}
"""


def project(tmp_path: Path) -> Path:
    root = tmp_path / "ledger"
    root.mkdir()
    write_project(root)
    (root / PROFILE_PATH).parent.mkdir()
    (root / PROFILE_PATH).write_text(PROFILE, encoding="utf-8")
    return root


def request(root: Path, action: str, profile: str | None, actor: str = "alice") -> AgentRequest:
    env = {"CHIMERA_ALLOW_SELF_APPROVAL": "true", "CHIMERA_SANDBOX": "scrubbed"}
    if profile:
        env["CHIMERA_AGENT_PROFILE"] = profile
    base = AgentRequest(
        version=REQUEST_VERSION,
        action=action,  # type: ignore[arg-type]
        root=root,
        run_id="gh-1-9",
        actor=actor,
        task="Add the balance report." if action == "start" else None,
        model=SCRIPT,
    )
    return base.model_copy(update=ActionSettings.from_env(env).run_overrides())


def profile_audits(root: Path) -> list[str]:
    audit = RunStore(root).run_dir("gh-1-9") / "audit.jsonl"
    rows = [json.loads(line) for line in audit.read_text().splitlines()]
    return [r["fields"]["profile"] for r in rows if r.get("event") == "meta.profile"]


def paused_run(root: Path, profile: str | None) -> None:
    """A run paused for approval, started as the child starts one (the demo's script repairs
    the whole Spec, which a start request, always a task, cannot replay)."""
    agent, record = read_profile(root, profile) if profile else (None, None)
    started = start_run(
        RunRequest(
            root=root,
            config=ChimeraConfig().with_overrides(sandbox="scrubbed"),
            model=SCRIPT,
            started_by="alice",
            run_id="gh-1-9",
            agent=agent,
        )
    )
    assert started.state.status.value == "awaiting_approval"
    if record is not None:
        record_profile(RunStore(root), started.state, record)


def test_a_start_applies_the_profile_and_records_its_path_and_hash(tmp_path: Path) -> None:
    root = project(tmp_path)
    state = run_request(request(root, "start", PROFILE_PATH))
    digest = hashlib.sha256(PROFILE.encode()).hexdigest()
    assert state.extra[PROFILE_KEY] == {"path": PROFILE_PATH, "sha256": digest}
    assert RunStore(root).load("gh-1-9").extra[PROFILE_KEY]["sha256"] == digest
    assert profile_audits(root) == ["careful"]


def test_a_start_without_the_input_records_no_profile(tmp_path: Path) -> None:
    root = project(tmp_path)
    assert PROFILE_KEY not in run_request(request(root, "start", None)).extra
    assert profile_audits(root) == []


def test_an_approval_reapplies_the_recorded_profile(tmp_path: Path) -> None:
    root = project(tmp_path)
    paused_run(root, PROFILE_PATH)
    # The approval names no profile (a review workflow without the input): the recorded one.
    done = run_request(request(root, "approve", None))
    assert done.status.value == "done"
    assert profile_audits(root) == ["careful", "careful"]  # the start, then the approval


def test_a_profile_changed_since_the_start_is_refused(tmp_path: Path) -> None:
    root = project(tmp_path)
    paused_run(root, PROFILE_PATH)
    # What an agent might do on the PR's head: widen its own profile.
    (root / PROFILE_PATH).write_text(PROFILE.replace("careful", "bold"), encoding="utf-8")
    with pytest.raises(UsageError, match=r"changed since the run started \(sha256 "):
        run_request(request(root, "approve", PROFILE_PATH))
    assert RunStore(root).load("gh-1-9").status.value == "awaiting_approval"


@pytest.mark.parametrize(
    ("started", "approved", "why"),
    [
        (PROFILE_PATH, "other.yaml", "now names other.yaml"),
        (None, PROFILE_PATH, "started without an agent profile"),
    ],
)
def test_another_profile_on_approval_is_refused(
    tmp_path: Path, started: str | None, approved: str, why: str
) -> None:
    root = project(tmp_path)
    paused_run(root, started)
    with pytest.raises(UsageError, match=why):
        run_request(request(root, "approve", approved))


def test_an_invalid_profile_stops_the_start_at_file_line_col(tmp_path: Path) -> None:
    root = project(tmp_path)
    (root / PROFILE_PATH).write_text("profile: careful\ntools: [rm_rf]\nsolver: {}\n")
    with pytest.raises(ProfileError, match=r"careful\.yaml:2:\d+: unknown tool 'rm_rf'"):
        run_request(request(root, "start", PROFILE_PATH))
    assert not RunStore(root).run_dir("gh-1-9").exists()


def test_a_profile_path_outside_the_checkout_is_a_one_line_error() -> None:
    with pytest.raises(ChimeraError, match="CHIMERA_AGENT_PROFILE: give a path inside"):
        ActionSettings.from_env({"CHIMERA_AGENT_PROFILE": "../elsewhere.yaml"})
