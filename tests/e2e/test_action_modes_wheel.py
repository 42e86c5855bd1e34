"""Every Action mode runs from exactly what action.yml's install step installs for it.

The install step runs (under bash, as the runner would) into a fresh environment per distinct
install, with ``chimera-version`` set to the wheel built from this checkout; then end-to-end
scenarios on the GitHub fake run each of their jobs with the interpreter of its mode's
environment, in a folder outside the checkout (tests/e2e/conftest.py, ``MODE_PYTHONS_ENV``):
decide → agent → verify → publish, a pause and an approval (drain, start-ci), a comment
command, a schedule's tick, and a push's refresh with its Spec check run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from chimera.cli.action import MODES
from chimera.testing.dist import VenvCache, clean_env

pytestmark = [pytest.mark.wheel, pytest.mark.slow, pytest.mark.bwrap]

ROOT = Path(__file__).resolve().parents[2]
# tests/e2e/conftest.py's switches (MODE_PYTHONS_ENV, MODE_LOG_ENV; conftest is not importable).
MODE_PYTHONS_ENV = "CHIMERA_E2E_MODE_PYTHONS"
MODE_LOG_ENV = "CHIMERA_E2E_MODE_LOG"
# Between them these run every mode but check (tests/e2e/test_wheel_tiers.py runs check from
# the plain install, which is what the step installs for it).
SCENARIOS = [
    "tests/e2e/test_action_e2e.py::"
    "test_risky_change_pauses_and_an_approval_resumes_it_in_another_process",
    "tests/e2e/test_commands_e2e.py::test_stop_cancels_the_running_workflow_run_and_frees_the_slot",
    "tests/e2e/test_schedule_tick_e2e.py::"
    "test_the_action_cli_ticks_with_github_signed_commits_and_no_key",
    "tests/e2e/test_spec_refresh_e2e.py::"
    "test_a_push_to_the_chimera_pr_refreshes_the_spec_check_on_the_new_head",
]
LLM_STACK = {"litellm", "openai", "tiktoken", "tokenizers"}


def test_each_mode_runs_from_what_its_install_step_installs(
    venvs: VenvCache, tmp_path: Path
) -> None:
    action = ROOT / "action.yml"
    pythons: dict[str, str] = {}
    held: dict[str, set[str]] = {}
    for mode in MODES:
        venv = venvs.action(action, mode)
        pythons[mode] = str(venv.python)
        held[mode] = venv.distributions()
    # The no-LLM-key modes are free of the LLM stack; only agent has it.
    for mode in MODES:
        assert bool(held[mode] & LLM_STACK) == (mode == "agent"), (mode, sorted(held[mode]))
    assert "pygithub" not in held["check"] | held["verify"]
    sealing = venvs.action(action, "verify", seals_heldout=True)
    assert "pynacl" in sealing.distributions()

    log = tmp_path / "modes.log"
    env = clean_env({MODE_PYTHONS_ENV: json.dumps(pythons), MODE_LOG_ENV: str(log)})
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:randomly",
            "-p",
            "no:cacheprovider",
            "-q",
            *SCENARIOS,
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
    )
    jobs = log.read_text("utf-8") if log.exists() else ""
    assert proc.returncode == 0, jobs + proc.stdout[-6000:] + proc.stderr[-2000:]
    assert f"{len(SCENARIOS)} passed" in proc.stdout
    ran = {line.split()[0] for line in log.read_text("utf-8").splitlines()}
    assert ran == set(MODES) - {"check"}, sorted(ran)
