"""The Action's ``sandbox`` input reaches the agent job's child: ``strict`` runs the agent in
bubblewrap even when the checkout's configuration says ``auto`` or ``scrubbed``, and
``scrubbed`` (the loud opt-out) is what the run records when the input says so."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from chimera.cli.demo import DEMO_DIR, write_project
from chimera.github.agent.child import REQUEST_VERSION, AgentRequest, run_request
from chimera.github.trust.settings import ActionSettings

SCRIPT = f"scripted:{DEMO_DIR / 'script.yaml'}"


def _project(tmp_path: Path, configured: str) -> Path:
    root = tmp_path / "ledger"
    root.mkdir()
    write_project(root)
    # The checkout's own configuration asks for the weaker mode.
    (root / "pyproject.toml").write_text(f'[tool.chimera.sandbox]\nmode = "{configured}"\n')
    subprocess.run(["git", "add", "-A"], cwd=root, check=True, capture_output=True)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run([*git, "commit", "-qm", "config"], cwd=root, check=True)
    return root


def _start(root: Path, sandbox_input: str) -> str | None:
    request = AgentRequest(
        version=REQUEST_VERSION,
        action="start",
        root=root,
        run_id="gh-1-7",
        actor="alice",
        task="Add the balance report.",
        model=SCRIPT,
    )
    settings = ActionSettings.from_env({"CHIMERA_SANDBOX": sandbox_input})
    return run_request(request.model_copy(update=settings.run_overrides())).sandbox_mode


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")
def test_strict_input_runs_the_child_in_bwrap_over_a_scrubbed_configuration(
    tmp_path: Path,
) -> None:
    assert _start(_project(tmp_path, "scrubbed"), "strict") == "bwrap"


def test_scrubbed_input_reaches_the_child(tmp_path: Path) -> None:
    assert _start(_project(tmp_path, "auto"), "scrubbed") == "scrubbed"


def test_the_settings_map_strict_to_bwrap_never_auto() -> None:
    assert ActionSettings.from_env({}).run_overrides()["sandbox"] == "bwrap"
    scrubbed = ActionSettings.from_env({"CHIMERA_SANDBOX": "scrubbed"})
    assert scrubbed.run_overrides()["sandbox"] == "scrubbed"
