"""The Action's jobs end to end on the GitHub fake: a World that runs ``chimera action`` modes
as separate jobs (fresh clones, as on separate runners), with the tokens the workflows give
them, and carries job outputs between jobs the way ``needs.<job>.outputs`` does."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, overload

import pytest
import yaml

from chimera.cli import main
from chimera.github.trust.chain import DECIDE_OUTPUTS, VERIFY_OUTPUTS, input_env
from chimera.testing.github_fake import FakeRepo, GitHubFake, make_bare_remote

ROOT = Path(__file__).resolve().parents[2]
MODE_PYTHONS_ENV = "CHIMERA_E2E_MODE_PYTHONS"
"""A JSON object ``{mode: python}``: each job of those modes runs as its own process with that
interpreter (an environment made by action.yml's install step, tests/e2e/test_action_modes_wheel.py)
in a folder outside the checkout, instead of in this process."""
MODE_LOG_ENV = "CHIMERA_E2E_MODE_LOG"
"""A file each job run by an installed interpreter appends ``<mode> <exit status> <the last
line of its stderr>`` to."""
# The installed copy, never the source tree: a job whose chimera is not under the
# interpreter's prefix exits 97.
INSTALLED_MAIN = (
    "import sys, chimera; "
    "sys.exit(97) if not chimera.__file__.startswith(sys.prefix) else None; "
    "from chimera.cli import main; sys.exit(main(sys.argv[1:]))"
)
E2E_SPEC = """\
requirements:
  - id: keeps-add
    defines: {path: calc.py, symbol: add, kind: function}
"""
E2E_CALC = "def add(a, b):\n    return a + b\n"
# The task most Action e2e tests run: add total() to calc.py, and the calc.py that does it.
TOTAL_TASK = """The calculator needs a total() of a list.

```chimera
requirements:
  - id: total-defined
    defines: {path: calc.py, symbol: total, kind: function}
```
"""
TOTAL_CALC = E2E_CALC + "\n\ndef total(xs):\n    return sum(xs)\n"

# Each job's GITHUB_TOKEN permissions, as the example workflows declare them.
DECIDE_PERMS = {"contents": "read", "issues": "write", "pull-requests": "read"}
AGENT_PERMS = {"contents": "read", "issues": "read", "pull-requests": "read", "actions": "read"}
PUBLISH_PERMS = {
    "contents": "write",
    "pull-requests": "write",
    "issues": "write",
    "checks": "write",
}


def read_outputs(path: Path) -> dict[str, Any]:
    lines = path.read_text().splitlines()
    out: dict[str, Any] = {}
    i = 0
    while i < len(lines):
        key, _, delim = lines[i].partition("<<")
        value: list[str] = []
        i += 1
        while lines[i] != delim:
            value.append(lines[i])
            i += 1
        out[key] = "\n".join(value)
        i += 1
    return out


def decided_env(gate: dict[str, Any]) -> dict[str, str]:
    """decide's outputs as the later jobs' inputs (``needs.decide.outputs.*``)."""
    return {input_env("decide", o)[1]: str(gate.get(o, "")) for o in DECIDE_OUTPUTS}


def verified_env(verify: dict[str, Any]) -> dict[str, str]:
    return {input_env("verify", o)[1]: str(verify.get(o, "")) for o in VERIFY_OUTPUTS}


@dataclass
class World:
    """The fake GitHub, the remote, and helpers that act as the workflow's jobs."""

    tmp: Path
    fake: GitHubFake
    repo: FakeRepo
    remote: Path
    app_token: str = ""
    model: str = ""
    env: dict[str, str] = field(default_factory=dict)
    clones: int = 0

    def clone(self, token: str | None = None) -> Path:
        """A fresh checkout; with ``token``, its remote is the fake's git over HTTP (pushes are
        authenticated and recorded as events, as ``actions/checkout`` sets it up)."""
        self.clones += 1
        dest = self.tmp / f"checkout-{self.clones}"
        source = self.fake.clone_url("octo/app", token) if token else str(self.remote)
        subprocess.run(["git", "clone", "-q", source, str(dest)], check=True, capture_output=True)
        return dest

    total_task = TOTAL_TASK
    total_calc = TOTAL_CALC
    decide_perms = DECIDE_PERMS
    agent_perms = AGENT_PERMS
    publish_perms = PUBLISH_PERMS

    @staticmethod
    def decided_env(gate: dict[str, Any]) -> dict[str, str]:
        return decided_env(gate)

    @staticmethod
    def verified_env(verify: dict[str, Any]) -> dict[str, str]:
        return verified_env(verify)

    def workflow_token(self, permissions: dict[str, str]) -> str:
        return self.fake.add_workflow_token("octo/app", permissions=permissions)

    def add_total_issue(self, title: str = "total", user: str = "alice", **extra: Any) -> Any:
        """Opens an issue asking for total() (``TOTAL_TASK``); ``extra`` as ``add_issue``'s."""
        return self.fake.add_issue("octo/app", title=title, body=TOTAL_TASK, user=user, **extra)

    @staticmethod
    def labeled(issue: int = 1, sender: str | None = "alice") -> dict[str, Any]:
        """The ``issues.labeled`` event: ``sender`` put the chimera label on open ``issue``."""
        return {
            "action": "labeled",
            "label": {"name": "chimera"},
            "issue": {"number": issue, "state": "open", "locked": False},
            "sender": None if sender is None else {"login": sender, "type": "User"},
            "repository": {"full_name": "octo/app", "default_branch": "main"},
        }

    def dispatched(self) -> dict[str, Any]:
        """The ``workflow_dispatch`` event of the one dispatch the App made (asserts one)."""
        (sent,) = self.repo.dispatches
        return {
            "inputs": sent["inputs"],
            "ref": "refs/heads/main",
            "sender": {"login": "chimera-app[bot]", "type": "Bot"},
            "repository": {"full_name": "octo/app", "default_branch": "main"},
        }

    @staticmethod
    def calc_turns(content: str, *, expect: list[str] | None = None) -> list[dict[str, Any]]:
        """The scripted model's plan/act/act/review turns: write ``content`` to calc.py and
        approve; ``expect`` (strings the plan turn's prompt must contain) goes on the plan."""
        write = {"name": "write_file", "arguments": {"path": "calc.py", "content": content}}
        turns: list[dict[str, Any]] = [
            {"purpose": "plan", "text": "1. Write calc.py."},
            {"purpose": "act", "tool_calls": [write]},
            {"purpose": "act", "text": "Wrote calc.py."},
            {"purpose": "review", "text": "APPROVE"},
        ]
        if expect:
            turns[0]["expect"] = expect
        return turns

    def script(self, turns: list[dict[str, Any]], name: str = "model") -> None:
        """Writes ``turns`` to ``<tmp>/<name>.yaml`` and makes it the jobs' scripted model."""
        path = self.tmp / f"{name}.yaml"
        path.write_text(yaml.safe_dump({"model": "e2e", "turns": turns}, sort_keys=False))
        self.model = f"scripted:{path}"

    def script_calc(
        self, content: str, *, name: str = "model", expect: list[str] | None = None
    ) -> None:
        """The scripted model that writes ``content`` to calc.py (see ``calc_turns``)."""
        self.script(self.calc_turns(content, expect=expect), name)

    def _env(
        self, event: str, data: dict[str, Any], run: int, token: str, extra: dict[str, str]
    ) -> dict[str, str]:
        event_path = self.tmp / f"event-{run}-{event}-{len(self.fake.calls)}.json"
        event_path.write_text(json.dumps(data))
        output = self.tmp / f"output-{run}-{len(self.fake.calls)}-{self.clones}.txt"
        output.write_text("")
        runner_temp = self.tmp / f"runner-{run}"
        runner_temp.mkdir(exist_ok=True)
        return {
            "GITHUB_EVENT_NAME": event,
            "GITHUB_EVENT_PATH": str(event_path),
            "GITHUB_REPOSITORY": "octo/app",
            "GITHUB_API_URL": self.fake.api_url,
            "GITHUB_SERVER_URL": "https://github.example",
            "GITHUB_RUN_ID": str(run),
            "GITHUB_OUTPUT": str(output),
            "GITHUB_STEP_SUMMARY": str(self.tmp / f"summary-{run}.md"),
            "RUNNER_TEMP": str(runner_temp),
            "CHIMERA_GITHUB_TOKEN": token,
            "CHIMERA_BOT_LOGIN": "chimera-app[bot]",
            "CHIMERA_GITHUB_THROTTLE": "0",
            "CHIMERA_GITHUB_BACKOFF": "0.01",
            "CHIMERA_GITHUB_TIMEOUT": "2",
            "CHIMERA_GITHUB_MAX_WAIT": "5",
            "CHIMERA_RISK_REVIEWERS": "bob",
            "CHIMERA_MODEL": self.model,
            **self.env,
            **extra,
        }

    # Two overloads keep `separate_process` out of reach of a `**env` dict of strings (mypy
    # would otherwise read any `**dict[str, str]` as a possible value for that bool).
    @overload
    def job(
        self,
        mode: str,
        event: str,
        data: dict[str, Any],
        *,
        run: int,
        login: str | None = None,
        token: str | None = None,
        root: Path | None = None,
        artifacts: Path | None = None,
        **extra: str,
    ) -> dict[str, Any]: ...

    @overload
    def job(
        self,
        mode: str,
        event: str,
        data: dict[str, Any],
        *,
        run: int,
        login: str | None = None,
        token: str | None = None,
        root: Path | None = None,
        artifacts: Path | None = None,
        separate_process: bool,
        **extra: str,
    ) -> dict[str, Any]: ...

    # misc: the first overload's **extra could name `separate_process` (as a str); no
    # environment variable is spelled that way.
    def job(  # type: ignore[misc]
        self,
        mode: str,
        event: str,
        data: dict[str, Any],
        *,
        run: int,
        login: str | None = None,
        token: str | None = None,
        root: Path | None = None,
        artifacts: Path | None = None,
        separate_process: bool = False,
        **extra: str,
    ) -> dict[str, Any]:
        """Run one ``chimera action`` job; returns its step outputs (and ``rc``)."""
        tok = token if token is not None else (self.fake.add_token(login) if login else "")
        if run not in self.repo.workflow_runs:  # the run this job runs in, as on GitHub
            self.fake.add_workflow_run("octo/app", run)
        env = self._env(event, data, run, tok, extra)
        argv = ["action", "--mode", mode]
        if root is not None:
            argv += ["--root", str(root)]
        if artifacts is not None:
            argv += ["--artifacts", str(artifacts)]
        installed = json.loads(os.environ.get(MODE_PYTHONS_ENV) or "{}").get(mode)
        if separate_process or installed:
            full = {
                k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "CHIMERA_"))
            }
            code = "import sys; from chimera.cli import main; sys.exit(main(sys.argv[1:]))"
            if installed:
                for leak in ("PYTHONPATH", "VIRTUAL_ENV", "COV_CORE_SOURCE", "COV_CORE_CONFIG"):
                    full.pop(leak, None)
                code = INSTALLED_MAIN
            proc = subprocess.run(
                [installed or sys.executable, "-c", code, *argv],
                env=full | env,
                cwd=self.tmp if installed else None,
                capture_output=True,
                text=True,
                timeout=240,
                check=False,
            )
            rc = proc.returncode
            assert rc != 97, f"{mode}: chimera was not imported from {installed}'s environment"
            if separate_process:
                assert rc == 0, proc.stderr + proc.stdout
            log = os.environ.get(MODE_LOG_ENV)
            if installed and log:
                last = (proc.stderr.strip().splitlines() or [""])[-1]
                with Path(log).open("a", encoding="utf-8") as fh:
                    fh.write(f"{mode} {rc} {last}\n")
        else:
            saved = {k: os.environ.get(k) for k in env}
            os.environ.update(env)
            try:
                rc = main(argv)
            finally:
                for k, v in saved.items():
                    if v is None:
                        os.environ.pop(k, None)
                    else:
                        os.environ[k] = v
        return read_outputs(Path(env["GITHUB_OUTPUT"])) | {"rc": rc}

    def attempt(self, run: int) -> int:
        """The run's current attempt (``GITHUB_RUN_ATTEMPT``; the fake's "Re-run jobs" adds
        one)."""
        if run not in self.repo.workflow_runs:
            self.fake.add_workflow_run("octo/app", run)
        return int(self.repo.workflow_runs[run]["run_attempt"])

    def artifact_name(self, run: int) -> str:
        """A new agent artifact name for the run's current attempt, from action.yml's own
        naming step (run as the runner would, with its ``${{ }}`` values filled in; each call
        draws a fresh nonce, as each upload does)."""
        return action_step_output(
            "artifact",
            "name",
            {"inputs.artifact-name": "chimera-run", "github.run_attempt": str(self.attempt(run))},
            self.tmp,
        )

    def upload(self, run: int, name: str, folder: Path) -> None:
        """What actions/upload-artifact does at the end of the agent job (409 on a name the
        run already holds)."""
        self.fake.add_artifact("octo/app", run, name, folder)

    def download(self, run: int, name: str, dest: Path) -> Path:
        """What actions/download-artifact does at the start of verify and publish: exactly
        ``name``, into a fresh folder."""
        if dest.exists():
            shutil.rmtree(dest)
        return self.fake.download_artifact("octo/app", run, name, dest)

    def comments(self, issue: int) -> list[str]:
        return [c["body"] for c in self.repo.issue_comments(issue)]

    def pipeline(
        self,
        event_name: str,
        event: dict[str, Any],
        *,
        run: int,
        forge: Callable[[Path], None] | None = None,
        after_decide: Callable[[], None] | None = None,
        tamper: Callable[[Path], None] | None = None,
        gate: dict[str, Any] | None = None,
        verify_env: dict[str, str] | None = None,
        publish_env: dict[str, str] | None = None,
    ) -> dict[str, dict[str, Any]]:
        """decide → agent → verify → publish, each a separate job with its own token and
        checkout, outputs passed as ``needs.*.outputs``. ``forge`` edits the agent's artifact
        before verify downloads it (a compromised agent job); ``tamper`` edits it after
        verify (in transit to publish); ``after_decide`` acts between decide and the agent;
        ``verify_env`` reaches the verify step only (its held-out secret), ``publish_env`` the
        publish step only (its store token)."""
        if gate is None:
            gate = self.job(
                "decide", event_name, event, run=run, token=self.workflow_token(DECIDE_PERMS)
            )
        result: dict[str, dict[str, Any]] = {"decide": gate}
        if gate.get("proceed") != "true":
            return result
        if after_decide is not None:
            after_decide()
        decided = decided_env(gate)
        result["agent"] = self.agent(event_name, event, run=run, forge=forge, decided=decided)
        name = str(result["agent"]["artifact"])
        return result | self.verify_publish(
            event_name, event, run=run, name=name, decided=decided, tamper=tamper,
            audit_head=str(result["agent"].get("audit-head", "")), verify_env=verify_env,
            publish_env=publish_env,
        )  # fmt: skip

    def agent(
        self,
        event_name: str,
        event: dict[str, Any],
        *,
        run: int,
        decided: dict[str, str],
        forge: Callable[[Path], None] | None = None,
    ) -> dict[str, Any]:
        """The agent job in the run's current attempt: it runs, names its artifact as
        action.yml does (after the run, with a nonce drawn then), and uploads (``forge`` edits
        the folder first); its outputs carry the name (``artifact``)."""
        attempt = self.attempt(run)
        folder = self.tmp / f"agent-{run}-attempt-{attempt}"
        out = self.job(
            "agent",
            event_name,
            event,
            run=run,
            token=self.workflow_token(AGENT_PERMS),
            root=self.clone(),
            artifacts=folder,
            separate_process=True,
            GITHUB_RUN_ATTEMPT=str(attempt),
            **decided,
        )
        name = self.artifact_name(run)
        if forge is not None:
            forge(folder)
        self.upload(run, name, folder)
        return out | {"artifact": name}

    def verify_publish(
        self,
        event_name: str,
        event: dict[str, Any],
        *,
        run: int,
        name: str,
        decided: dict[str, str],
        audit_head: str,
        tamper: Callable[[Path], None] | None = None,
        verify_env: dict[str, str] | None = None,
        publish_env: dict[str, str] | None = None,
    ) -> dict[str, dict[str, Any]]:
        """verify, then publish, each downloading exactly artifact ``name`` (publish's copy
        is ``artifacts-<run>``; ``tamper`` edits it first)."""
        attempt = str(self.attempt(run))
        checked = self.download(run, name, self.tmp / f"verify-{run}")
        verify = self.job(
            "verify", event_name, event, run=run, token="", root=self.clone(),
            artifacts=checked, GITHUB_RUN_ATTEMPT=attempt, CHIMERA_AGENT_ARTIFACT=name,
            **decided, **(verify_env or {}),
        )  # fmt: skip
        artifacts = self.download(run, name, self.tmp / f"artifacts-{run}")
        if tamper is not None:
            tamper(artifacts)
        token = self.workflow_token(PUBLISH_PERMS)
        publish = self.job(
            "publish",
            event_name,
            event,
            run=run,
            token=token,
            root=self.clone(token),
            artifacts=artifacts,
            CHIMERA_AGENT_AUDIT_HEAD=audit_head,
            GITHUB_RUN_ATTEMPT=attempt,
            CHIMERA_AGENT_ARTIFACT=name,
            **decided,
            # publish_env may replace a verify output (a forged one reaching publish).
            **(verified_env(verify) | (publish_env or {})),
        )
        return {"verify": verify, "publish": publish}


def action_step_output(step_id: str, output: str, values: dict[str, str], tmp: Path) -> str:
    """Run action.yml's ``run:`` step ``step_id`` under bash with its ``env`` expressions
    replaced by ``values`` (``{"inputs.artifact-name": ...}``); returns its output ``output``."""
    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    (step,) = [s for s in action["runs"]["steps"] if s.get("id") == step_id]
    env = {}
    for key, expr in step.get("env", {}).items():
        inner = re.fullmatch(r"\$\{\{\s*([\w.-]+)\s*\}\}", str(expr))
        assert inner is not None and inner.group(1) in values, (step_id, expr)
        env[key] = values[inner.group(1)]
    out = tmp / f"step-{step_id}-{uuid.uuid4().hex[:8]}.txt"
    out.write_text("")
    subprocess.run(
        ["bash", "-c", step["run"]],
        env={"PATH": os.environ["PATH"], "GITHUB_OUTPUT": str(out), **env},
        check=True,
    )
    found = dict(line.split("=", 1) for line in out.read_text().splitlines() if "=" in line)
    return found[output]


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    remote, _ = make_bare_remote(
        tmp_path / "origin",
        {"specs/app.yaml": E2E_SPEC, "calc.py": E2E_CALC, ".gitignore": ".chimera/\n"},
    )
    with GitHubFake() as fake:
        repo = fake.add_repo("octo/app", remote=remote)
        repo.allow_actions_pull_requests = True
        for login, role in (("alice", "write"), ("bob", "maintain")):
            fake.add_user(login)
            repo.collaborators[login] = role
        fake.add_user("mallory")
        fake.add_user("helper[bot]", bot=True)
        repo.collaborators["helper[bot]"] = "write"
        app = fake.add_app_token("chimera-app", repos=("octo/app",))
        yield World(tmp_path, fake, repo, remote, app_token=app)
