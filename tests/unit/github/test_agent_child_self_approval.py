"""``allow-self-approval`` reaches ``chimera approve``: the agent job's child refuses the
starter's own approval of a paused run unless the Action's setting carries it."""

from __future__ import annotations

from pathlib import Path

import pytest

from chimera.cli.demo import DEMO_DIR, write_project
from chimera.config import ChimeraConfig
from chimera.errors import ChimeraError
from chimera.github.agent.child import REQUEST_VERSION, AgentRequest, run_request
from chimera.github.trust.settings import ActionSettings
from chimera.orchestration.surfaces import RunRequest, start_run

SCRIPT = f"scripted:{DEMO_DIR / 'script.yaml'}"


def test_self_approval_only_with_the_setting(tmp_path: Path) -> None:
    root = tmp_path / "ledger"
    root.mkdir()
    write_project(root)
    started = start_run(
        RunRequest(root=root, config=ChimeraConfig(), model=SCRIPT, started_by="alice")
    )
    assert started.state.status.value == "awaiting_approval"
    request = AgentRequest(
        version=REQUEST_VERSION,
        action="approve",
        root=root,
        run_id=started.state.run_id,
        actor="alice",
        model=SCRIPT,
    )
    off = ActionSettings.from_env({"CHIMERA_ALLOW_SELF_APPROVAL": "false"})
    with pytest.raises(ChimeraError, match="allow_self_approval"):
        run_request(request.model_copy(update=off.run_overrides()))
    on = ActionSettings.from_env({"CHIMERA_ALLOW_SELF_APPROVAL": "true"})
    state = run_request(request.model_copy(update=on.run_overrides()))
    assert state.status.value == "done"
