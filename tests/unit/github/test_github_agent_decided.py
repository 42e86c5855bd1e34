"""The agent job starts from decide's outputs only (parsed once, :class:`Decided`): every
workflow maps all of them into its agent step, and without them, or with outputs that are not
a run, the job refuses in one line before it reaches GitHub.

The workflows checked are whichever hold Chimera's agent jobs: the examples, and the reusable
workflow ``.github/workflows/chimera.yml`` when the repository has one.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from chimera.github.trust.chain import DECIDE_OUTPUTS, input_env

ROOT = Path(__file__).resolve().parents[3]
SHA = "0123456789abcdef0123456789abcdef01234567"


def agent_steps() -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    files = sorted((ROOT / "examples" / "workflows").glob("*.yml"))
    reusable = ROOT / ".github" / "workflows" / "chimera.yml"
    if reusable.is_file():
        files.append(reusable)
    found = []
    for path in files:
        jobs = (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("jobs") or {}
        for job_id, job in jobs.items():
            for step in job.get("steps") or []:
                if (step.get("with") or {}).get("mode") == "agent":
                    found.append((f"{path.name}:{job_id}", job, step["with"]))
    return found


def test_the_workflows_hold_agent_jobs() -> None:
    assert len(agent_steps()) >= 1


@pytest.mark.parametrize("where", [name for name, _, _ in agent_steps()])
def test_every_agent_step_receives_all_of_decides_outputs_from_decide(where: str) -> None:
    ((_, job, inputs),) = [(n, j, i) for n, j, i in agent_steps() if n == where]
    gates = job["needs"] if isinstance(job["needs"], list) else [job["needs"]]
    for output in DECIDE_OUTPUTS:
        name = input_env("decide", output)[0]
        value = str(inputs.get(name, ""))
        source = re.fullmatch(r"\$\{\{ needs\.([a-z-]+)\.outputs\.([a-z0-9-]+) \}\}", value)
        assert source is not None, f"{where}: {name} is not mapped from a job's outputs"
        assert source.group(1) in gates and source.group(2) == output, (where, name, value)


def run_agent(tmp_path: Path, extra: dict[str, str]) -> subprocess.CompletedProcess[str]:
    event = tmp_path / "event.json"
    event.write_text(
        json.dumps(
            {
                "action": "labeled",
                "label": {"name": "chimera"},
                "issue": {"number": 1, "state": "open"},
                "sender": {"login": "alice", "type": "User"},
                "repository": {"full_name": "octo/app", "default_branch": "main"},
            }
        )
    )
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "GITHUB_EVENT_NAME": "issues",
        "GITHUB_EVENT_PATH": str(event),
        "GITHUB_REPOSITORY": "octo/app",
        # Any API call would fail here: the refusals come before one.
        "CHIMERA_GITHUB_TOKEN": "t",
        "CHIMERA_GITHUB_API_URL": "http://127.0.0.1:9",
        **extra,
    }
    return subprocess.run(
        [sys.executable, "-m", "chimera", "action", "--mode", "agent", "--root", str(tmp_path),
         "--artifacts", str(tmp_path / "artifacts")],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def decided(**fields: str) -> dict[str, str]:
    values = {
        "issue": "1",
        "mode": "run",
        "base-sha": SHA,
        "acceptance": "[]",
        "acceptance-sha256": "4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945",
        "started-by": "alice",
    } | fields
    return {input_env("decide", k)[1]: v for k, v in values.items()}


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        ({}, "agent job starts only from decide's outputs: CHIMERA_DECIDED_ISSUE is not set"),
        (
            decided(**{"base-sha": "main"}),
            "agent job starts only from decide's outputs: CHIMERA_DECIDED_BASE_SHA: 'main'",
        ),
        (decided(mode="refresh"), "the agent job runs run, resume or rerun, not 'refresh'"),
        (decided(mode="rerun", pull="2"), "(issues: run) is not the rerun decide admitted"),
    ],
    ids=["none", "malformed", "refresh", "another-event"],
)
def test_without_a_run_decide_admitted_the_agent_refuses_in_one_line(
    tmp_path: Path, extra: dict[str, str], said: str
) -> None:
    proc = run_agent(tmp_path, extra)
    assert proc.returncode == 2, proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert said in line
    assert not (tmp_path / "artifacts" / "outcome.json").exists()
