"""The real workflow files and ``action.yml``, executed by act against the GitHub fake.

A scenario starts the fake (a repository with a bare remote, collaborators, Chimera's GitHub
App), seeds the repository, performs what a person does through the fake's REST API (label an
issue, comment, approve, close a PR) and delivers the webhook the fake recorded for it to every
example workflow whose ``on:`` it triggers — each delivery one act run
(:class:`chimera.testing.act.ActRunner`) of the unchanged caller file
(``examples/workflows/chimera.yml``), which calls Chimera's reusable workflow
(``.github/workflows/chimera.yml``) and ``action.yml``, both taken from this checkout at the
caller's pin. Then it asserts the fake's state.

act (0.2.89) knows neither GitHub's self-repository reference (``uses: $/.``: the reusable
workflow's own repository at the commit the caller pinned) nor a ``--job`` inside a called
workflow. The kit resolves the first as GitHub does: in its copy of this checkout the
reusable workflow's ``$/.`` names the caller's pin, which is that same copy. A run asked for
one job (``job=``) calls a copy of the reusable workflow holding that job and the jobs it
needs only, act's meaning of ``--job``.

What runs, and how it is wired (``ActKit``, built once per session):

* act's self-hosted platform (``-P ubuntu-latest=-self-hosted``): steps are processes here;
  act's artifact server on 127.0.0.1 (its folder is attached to the fake as the repository's
  artifact store, so the REST artifact endpoints serve what the jobs uploaded);
* ``--env GITHUB_API_URL / GITHUB_GRAPHQL_URL / GITHUB_SERVER_URL`` at the fake. The server URL
  is ``http://github.localhost:<port>``: git (curl) resolves ``*.localhost`` to the loopback,
  and @actions/artifact refuses a server it takes for GitHub Enterprise Server (any host but
  github.com, *.ghe.com and *.localhost);
* the five pinned third-party actions are the stand-ins of ``tests/e2e/act/actions`` (see its
  README), mapped with ``--local-repository owner/repo@<sha>=<dir> --action-offline-mode``, so
  the workflow files keep their pins byte for byte;
* the runner's tool cache holds one Python (a virtual environment made from this machine's
  interpreter, pip upgraded); the setup-python stand-in gives each job a copy of it, as a
  hosted runner gives each job a fresh machine: a job has only what its own install step put
  there;
* the model: the workflows name ``anthropic/claude-sonnet-4-5``; the seeded repository's
  ``[tool.chimera.models] api_bases`` sends it to the OpenAI stub, which serves the scripted
  turns over Anthropic's Messages API (through LiteLLM, as installed by the agent job), and
  checks the key the ``ANTHROPIC_API_KEY`` secret carries;
* act gives every job the same token: the fake's workflow token, with GitHub's permissive
  default (act does not model ``permissions:``; ``tests/unit/github/test_workflow_act_gaps.py``
  and ``test_workflow_trust.py`` check them statically).

Past 400 lines because the scenario API (arranging, people's actions, deliveries, reading the
state) is one fixture object that the scenario files share: conftest is where pytest lets them
find it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from chimera.github.trust.summary import parse_marker
from chimera.testing import OpenAIStubServer, StubReply, StubToolCall
from chimera.testing.act import ActRun, ActRunner, act_binary, triggered_by, workflow_files
from chimera.testing.github_fake import (
    FakeRepo,
    GitHubFake,
    RepoEvent,
    make_bare_remote,
    push_branch,
)

ROOT = Path(__file__).resolve().parents[3]
STAND_INS = Path(__file__).resolve().parent / "actions"
REPO = "octo/app"
APP_SLUG = "my-chimera-app"  # the workflows' bot-login is "my-chimera-app[bot]"
ACTION = "chimera-dev/chimera@v0.1.0"  # chimera-check.yml's placeholder pin of the action
CALLER = "chimera.yml"  # the adopter's one workflow in examples/workflows/
REUSABLE = Path(".github") / "workflows" / "chimera.yml"  # Chimera's reusable workflow
SELF_REFERENCE = "uses: $/."  # the reusable workflow's references to Chimera's own action
MODEL = "claude-sonnet-4-5"  # the workflows' model, anthropic/claude-sonnet-4-5
LLM_KEY = "sk-ant-stub-key"
SPEC = """\
requirements:
  - id: keeps-add
    defines: {path: calc.py, symbol: add, kind: function}
"""
CALC = "def add(a, b):\n    return a + b\n"
TOTAL_CALC = CALC + "\n\ndef total(xs):\n    return sum(xs)\n"
TOTAL_TASK = """The calculator needs a total() of a list.

```chimera
requirements:
  - id: total-defined
    defines: {path: calc.py, symbol: total, kind: function}
```
"""
RISKY_TASK = """Add the first database migration.

```chimera
requirements:
  - id: first-migration
    risk: high
    contains: {path: migrations/001_init.sql, pattern: 'CREATE TABLE items'}
```
"""
_SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def _files_git_sees(root: Path) -> list[str]:
    out = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=root,
        capture_output=True,
        check=True,
    ).stdout.decode()
    return [p for p in out.split("\0") if p and (root / p).is_file()]


def _copy_tree(root: Path, files: Sequence[str], dest: Path) -> None:
    for rel in files:
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / rel, target, follow_symlinks=False)


def caller_pin(caller: Path) -> str:
    """``owner/repo@sha`` of the reusable workflow a caller file calls."""
    found = re.search(
        r"uses: ([\w.-]+/[\w.-]+)/\.github/workflows/[\w.-]+\.yml@([0-9a-f]{40})",
        caller.read_text(encoding="utf-8"),
    )
    assert found is not None, f"{caller}: calls no pinned reusable workflow"
    return f"{found.group(1)}@{found.group(2)}"


def _resolve_self_references(workflow: Path, pin: str) -> None:
    """``uses: $/.`` → ``uses: <pin>``: the same folder, as GitHub resolves it."""
    text = workflow.read_text(encoding="utf-8")
    assert SELF_REFERENCE in text, f"{workflow}: no self-repository reference left to resolve"
    workflow.write_text(text.replace(SELF_REFERENCE, f"uses: {pin}"), encoding="utf-8")


def _needed_jobs(jobs: dict[str, Any], job: str) -> set[str]:
    """``job`` and every job it needs, transitively (act's ``--job``)."""
    wanted, todo = set(), [job]
    while todo:
        name = todo.pop()
        if name in wanted:
            continue
        wanted.add(name)
        needs = jobs[name].get("needs", [])
        todo.extend([needs] if isinstance(needs, str) else needs)
    return wanted


@dataclass(frozen=True)
class ActKit:
    """What every scenario of the session shares (built once: a few seconds)."""

    folder: Path
    local_repositories: dict[str, Path]
    action_cache: Path
    app_private_key: str
    app_public_key: str
    process_env: dict[str, str]


def _tool_cache(cache: Path) -> None:
    """``tool_cache/Python/<version>/x64``: a virtual environment of the interpreter under
    this test run, with pip upgraded (the action's install step upgrades it in every job)."""
    base = Path(getattr(sys, "_base_executable", sys.executable))
    version = ".".join(str(v) for v in sys.version_info[:3])
    target = cache / "tool_cache" / "Python" / version / "x64"
    subprocess.run([str(base), "-m", "venv", str(target)], check=True, capture_output=True)
    python = str(target / "bin" / "python")
    subprocess.run(
        [python, "-m", "pip", "install", "-q", "--upgrade", "pip"],
        check=True,
        capture_output=True,
    )


def _stand_ins(folder: Path) -> dict[str, Path]:
    """Each stand-in beside a link to this checkout's node_modules (its libraries), keyed
    by the pin it stands in for (its action.yml's first line names it)."""
    mapping: dict[str, Path] = {}
    for source in sorted(p for p in STAND_INS.iterdir() if p.is_dir()):
        head = (source / "action.yml").read_text(encoding="utf-8").splitlines()[0]
        pin = re.search(r"Stand-in for (\S+@[0-9a-f]{40})", head)
        assert pin is not None, f"{source}/action.yml: the first line names no pinned action"
        dest = folder / source.name
        shutil.copytree(source, dest)
        (dest / "node_modules").symlink_to(ROOT / "node_modules")
        mapping[pin.group(1)] = dest
    return mapping


def _app_keys() -> tuple[str, str]:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    ).decode()
    public = (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )
    return private, public


def _process_env(home: Path) -> dict[str, str]:
    """act's own environment (every step inherits it): the system's PATH with the folders of
    node, git and bwrap, a home of its own, pip's index settings and cache; nothing else of
    this process (its virtual environment, GITHUB_*, CHIMERA_*, keys)."""
    folders = [
        str(Path(found).parent) for t in ("node", "git", "bwrap") if (found := shutil.which(t))
    ]
    path = ":".join(dict.fromkeys([*_SYSTEM_PATH.split(":"), *folders]))
    env = {
        "PATH": path,
        "HOME": str(home),
        "LANG": os.environ.get("LANG", "C.UTF-8"),
        "PIP_CACHE_DIR": os.environ.get("PIP_CACHE_DIR", str(Path.home() / ".cache" / "pip")),
    }
    env |= {k: v for k, v in os.environ.items() if k.startswith("PIP_") and k not in env}
    return env


@pytest.fixture(scope="session")
def act_kit(tmp_path_factory: pytest.TempPathFactory) -> ActKit:
    try:
        act_binary()
    except FileNotFoundError as exc:
        pytest.skip(f"{exc}: the act harness needs the dev extra")
    if not (ROOT / "node_modules" / "@actions" / "artifact").is_dir():
        pytest.skip("the stand-in actions' libraries are missing: run npm ci at the root")
    folder = tmp_path_factory.mktemp("act-kit")
    mapping = _stand_ins(folder / "actions")
    action = folder / "chimera-action"
    _copy_tree(ROOT, _files_git_sees(ROOT), action)
    mapping[ACTION] = action
    pin = caller_pin(ROOT / "examples" / "workflows" / CALLER)
    mapping[pin] = action
    _resolve_self_references(action / REUSABLE, pin)
    cache = folder / "act-cache"
    _tool_cache(cache)
    private, public = _app_keys()
    home = folder / "home"
    home.mkdir()
    return ActKit(folder, mapping, cache, private, public, _process_env(home))


@dataclass
class ActWorld:
    """One scenario: the fake, the remote, the model stub, and the act runs so far."""

    tmp: Path
    kit: ActKit
    fake: GitHubFake
    repo: FakeRepo
    remote: Path
    stub: OpenAIStubServer
    runner: ActRunner
    workflows: Path = ROOT / "examples" / "workflows"
    runs: list[ActRun] = field(default_factory=list)
    next_run: int = 4001
    _tokens: dict[str, str] = field(default_factory=dict)

    total_task = TOTAL_TASK
    total_calc = TOTAL_CALC
    risky_task = RISKY_TASK

    # -- the model ---------------------------------------------------------------------

    def script(self, turns: Sequence[dict[str, Any]]) -> None:
        """Queue the model's turns (``{"text": ...}`` or ``{"tool_calls": [{"name",
        "arguments"}]}``), served in order to the agent job through the stub."""
        for turn in turns:
            calls = tuple(
                StubToolCall(c["name"], c.get("arguments", {})) for c in turn.get("tool_calls", ())
            )
            self.stub.add_reply(MODEL, StubReply(text=turn.get("text"), tool_calls=calls))

    def script_writes(self, files: dict[str, str]) -> None:
        """The plan / act / act / review turns of a card that writes ``files``."""
        calls = [
            {"name": "write_file", "arguments": {"path": p, "content": c}} for p, c in files.items()
        ]
        names = ", ".join(files)
        self.script(
            [
                {"text": f"1. Write {names}."},
                {"tool_calls": calls},
                {"text": f"Wrote {names}."},
                {"text": "APPROVE"},
            ]
        )

    # -- people, through the REST API -----------------------------------------------------

    def token(self, login: str) -> str:
        """A personal token of ``login`` (one per person)."""
        if login not in self._tokens:
            self._tokens[login] = self.fake.add_token(login)
        return self._tokens[login]

    def _last_event(self, before: int) -> RepoEvent:
        with self.fake.lock:
            new = self.fake.events[before:]
        assert new, "the write recorded no event"
        return new[-1]

    def open_issue(self, title: str, body: str, *, by: str = "alice") -> int:
        """An issue opened by ``by`` (arranged: no event is delivered)."""
        return int(self.fake.add_issue(REPO, title=title, body=body, user=by)["number"])

    def label(self, number: int, name: str = "chimera", *, by: str = "alice") -> RepoEvent:
        """``by`` adds label ``name``; the ``labeled`` event the fake recorded."""
        before = len(self.fake.events)
        self.fake.pygithub(self.token(by)).get_repo(REPO).get_issue(number).add_to_labels(name)
        return self._last_event(before)

    def comment(self, number: int, body: str, *, by: str = "alice") -> RepoEvent:
        before = len(self.fake.events)
        self.fake.pygithub(self.token(by)).get_repo(REPO).get_issue(number).create_comment(body)
        return self._last_event(before)

    def approve(self, pull: int, *, by: str = "bob") -> RepoEvent:
        """``by`` approves the PR's current head commit."""
        before = len(self.fake.events)
        self.fake.pygithub(self.token(by)).get_repo(REPO).get_pull(pull).create_review(
            event="APPROVE"
        )
        return self._last_event(before)

    def close_pull(self, pull: int, *, by: str = "alice") -> RepoEvent:
        before = len(self.fake.events)
        self.fake.pygithub(self.token(by)).get_repo(REPO).get_pull(pull).edit(state="closed")
        return self._last_event(before)

    # -- workflow runs ---------------------------------------------------------------------

    def _context_env(self, event: str, payload: dict[str, Any]) -> dict[str, str]:
        """GITHUB_REF / SHA_REF (act's name for the event's commit) as GitHub sets them."""
        main = self.repo.head_sha(self.repo.default_branch) or ""
        pull = payload.get("pull_request") or {}
        if event in ("pull_request", "pull_request_review") and pull:
            return {
                "GITHUB_REF": f"refs/pull/{pull['number']}/merge",
                "SHA_REF": pull["head"]["sha"],
            }
        if event in ("push", "workflow_dispatch") and payload.get("ref"):
            ref = str(payload["ref"])
            head = self.repo.head_sha(ref.removeprefix("refs/heads/")) or main
            return {"GITHUB_REF": ref, "SHA_REF": str(payload.get("after") or head)}
        return {"GITHUB_REF": f"refs/heads/{self.repo.default_branch}", "SHA_REF": main}

    def run(
        self,
        workflow: str,
        event: str,
        payload: dict[str, Any],
        *,
        run_id: int | None = None,
        job: str | None = None,
    ) -> ActRun:
        """One act run of ``workflow`` (a file name in :attr:`workflows`) for ``event``. The
        run exists in the fake while it runs (``in_progress``) and completes with act's
        result, or ``cancelled`` when a cancel was asked for meanwhile."""
        path = self.workflows / workflow
        name = str(yaml.safe_load(path.read_text(encoding="utf-8")).get("name", workflow))
        if run_id is None:
            run_id, self.next_run = self.next_run, self.next_run + 1
            record = self.fake.add_workflow_run(REPO, run_id)
            record.update(name=name, event=event, path=f".github/workflows/{workflow}")
        sender = (payload.get("sender") or {}).get("login") or "octocat"
        attempt = int(self.repo.workflow_runs[run_id]["run_attempt"])
        runner, act_job = self.runner, job
        if job is not None and workflow == CALLER:
            path, runner = self._partial(path, job)
            act_job = None
        try:
            done = runner.run(
                path, event, payload, run_id=run_id, attempt=attempt, actor=str(sender),
                job=act_job, env=self._context_env(event, payload),
            )  # fmt: skip
            if act_job is None and job is not None:
                done = dataclasses.replace(done, workflow=self.workflows / workflow)
        finally:
            self.fake.settle_cancels(REPO)
        record = self.repo.workflow_runs[run_id]
        if record["status"] != "completed" and job is None:
            record.update(
                status="completed", conclusion="success" if not done.returncode else "failure"
            )
        self.runs.append(done)
        return done

    def mutable_reusable_workflow(self) -> Path:
        """The reusable workflow of this scenario's own copy of the checkout (the caller's
        pin maps to it from now on), for a test that changes it."""
        pin = caller_pin(self.workflows / CALLER)
        folder = self.tmp / "chimera-action"
        shutil.copytree(self.runner.local_repositories[pin], folder, symlinks=True)
        repositories = {**self.runner.local_repositories, pin: folder}
        self.runner = dataclasses.replace(self.runner, local_repositories=repositories)
        return folder / REUSABLE

    @staticmethod
    def ran(done: ActRun) -> dict[str, str]:
        """The jobs of the reusable workflow that ran (not skipped), with their results."""
        return {k: v for k, v in done.jobs.items() if v != "skipped" and k != "chimera"}

    def _partial(self, caller: Path, job: str) -> tuple[Path, ActRunner]:
        """A caller of a copy of the reusable workflow that holds ``job`` and the jobs it
        needs only, and the runner that maps its pin to that copy."""
        pin = caller_pin(caller)
        source = self.runner.local_repositories[pin]
        folder = self.tmp / f"partial-{job}"
        if not folder.exists():
            shutil.copytree(source, folder, symlinks=True)
            data = yaml.safe_load((source / REUSABLE).read_text(encoding="utf-8"))
            keep = _needed_jobs(data["jobs"], job)
            data["jobs"] = {k: v for k, v in data["jobs"].items() if k in keep}
            data["on"] = data.pop(True)
            (folder / REUSABLE).write_text(yaml.safe_dump(data, sort_keys=False), "utf-8")
        partial_pin = f"{pin.split('@')[0]}@{hashlib.sha1(job.encode()).hexdigest()}"
        callers = self.tmp / f"partial-{job}-caller"
        callers.mkdir(exist_ok=True)
        path = callers / caller.name
        path.write_text(
            caller.read_text(encoding="utf-8").replace(pin.split("@")[1], partial_pin[-40:]),
            encoding="utf-8",
        )
        repositories = {**self.runner.local_repositories, partial_pin: folder}
        return path, dataclasses.replace(self.runner, local_repositories=repositories)

    def deliver(
        self, event: RepoEvent, *, only: Sequence[str] | None = None, job: str | None = None
    ) -> list[ActRun]:
        """Start every example workflow ``event`` triggers (``only``: these files of them),
        one act run each, in file order; the event must be one GitHub delivers to workflows
        (a GITHUB_TOKEN's writes start none)."""
        assert event.triggers_workflows, f"{event.event} by a GITHUB_TOKEN starts no workflow"
        assert event.payload is not None
        payload = dict(event.payload)
        started = []
        for path in workflow_files(self.workflows, only):
            if triggered_by(path, event.event, payload):
                started.append(self.run(path.name, event.event, payload, job=job))
        return started

    def rerun(self, done: ActRun) -> ActRun:
        """ "Re-run all jobs" of a finished run: its next attempt, with the same event."""
        self.fake.rerun(REPO, done.run_id)
        payload = json.loads((done.log.parent / "event.json").read_text(encoding="utf-8"))
        return self.run(done.workflow.name, done.event, payload, run_id=done.run_id)

    def events_since(self, index: int, name: str | None = None) -> list[RepoEvent]:
        """The events recorded from ``index`` on that start workflows (optionally one name)."""
        with self.fake.lock:
            found = self.fake.events[index:]
        return [e for e in found if e.triggers_workflows and name in (None, e.event)]

    # -- reading the state -----------------------------------------------------------------

    def comments(self, number: int) -> list[str]:
        return [c["body"] for c in sorted(self.repo.issue_comments(number), key=lambda c: c["id"])]

    def labels(self, number: int) -> list[str]:
        return list(self.repo.issues[number]["labels"])

    def pulls(self) -> list[dict[str, Any]]:
        return self.repo.pulls()

    def artifact_names(self, run_id: int) -> list[str]:
        return [a["name"] for a in self.fake.artifacts_of(self.repo, run_id)]

    def stored_artifact(self, run_id: int, name: str) -> Path:
        """The zip act's artifact server holds for ``name`` in run ``run_id``; ``name`` is the
        upload's name without the nonce the Action appends (``<name>-<16 hex>``)."""
        run = self.runner.artifacts / str(run_id)
        (found,) = [
            d for d in run.iterdir() if re.fullmatch(re.escape(name) + r"(-[0-9a-f]{16})?", d.name)
        ]
        return found / f"{found.name}.zip"

    def rewrite_artifact(
        self, run_id: int, name: str, change: Callable[[dict[str, bytes]], None]
    ) -> None:
        """Rewrite a stored artifact's files (``change`` edits path → bytes in place)."""
        archive = self.stored_artifact(run_id, name)
        with zipfile.ZipFile(archive) as zf:
            files = {n: zf.read(n) for n in zf.namelist()}
        change(files)
        with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
            for member, data in files.items():
                zf.writestr(member, data)

    def explain(self, runs: Sequence[ActRun] | None = None, lines: int = 60) -> str:
        """The tail of each run's act log, for an assertion message."""
        chosen = self.runs if runs is None else runs
        return "\n\n".join(
            f"== {r.workflow.name} run {r.run_id}.{r.attempt}: {r.jobs}\n{r.tail(lines)}"
            for r in chosen
        )

    @staticmethod
    def outputs(done: ActRun, job: str) -> dict[str, str]:
        """Every output the steps of ``job`` set (a later step's value wins)."""
        found: dict[str, str] = {}
        for key, values in done.outputs.items():
            if key.split("/", 1)[0] == job:
                found |= dict(values)
        return found

    def outcome_markers(self, number: int) -> list[tuple[str, str]]:
        """``(kind, key)`` of each outcome comment on ``number``, oldest first."""
        found = []
        for body in self.comments(number):
            marker = parse_marker(body, "outcome")
            if marker is not None:
                found.append((str(marker.get("kind", "?")), str(marker.get("key", "?"))))
        return found

    def arrange_chimera_pull(self, title: str) -> tuple[int, int]:
        """An issue with an open Chimera PR (branch ``chimera/issue-<n>``), pushed and opened
        with a workflow token as publish does (its events start nothing); ``(issue, PR)``."""
        issue = self.open_issue(title, self.total_task)
        token = self.fake.add_workflow_token(REPO)
        work = self.tmp / f"arrange-{issue}"
        subprocess.run(
            ["git", "clone", "-q", self.fake.clone_url(REPO, token), str(work)],
            check=True,
            capture_output=True,
        )
        push_branch(work, f"chimera/issue-{issue}", {"calc.py": TOTAL_CALC}, message=title)
        pull = (
            self.fake.pygithub(token)
            .get_repo(REPO)
            .create_pull(
                base="main", head=f"chimera/issue-{issue}", title=title, body=f"Closes #{issue}."
            )
        )
        return issue, pull.number


def _pyproject(stub: OpenAIStubServer) -> str:
    return f'[tool.chimera.models]\napi_bases = {{"anthropic/{MODEL}" = "{stub.url}"}}\n'


@pytest.fixture
def act_world(act_kit: ActKit, tmp_path: Path) -> Iterator[ActWorld]:
    with OpenAIStubServer(api_key=LLM_KEY) as stub, GitHubFake() as fake:
        remote, _work = make_bare_remote(
            tmp_path / "origin",
            {
                "specs/app.yaml": SPEC,
                "calc.py": CALC,
                ".gitignore": ".chimera/\n",
                "pyproject.toml": _pyproject(stub),
            },
        )
        repo = fake.add_repo(REPO, remote=remote)
        repo.allow_actions_pull_requests = True
        for login, role in (("alice", "write"), ("bob", "maintain")):
            fake.add_user(login)
            repo.collaborators[login] = role
        artifacts = tmp_path / "artifacts"
        artifacts.mkdir()
        repo.artifact_store = artifacts
        app = fake.add_app(
            APP_SLUG,
            act_kit.app_public_key,
            repos=(REPO,),
            permissions={
                "contents": "write",
                "issues": "write",
                "pull_requests": "write",
                "actions": "write",
                "checks": "write",
                "metadata": "read",
            },
        )
        token = fake.add_workflow_token(REPO)
        runner = ActRunner(
            root=tmp_path / "runs",
            artifacts=artifacts,
            action_cache=act_kit.action_cache,
            local_repositories=act_kit.local_repositories,
            env={
                "GITHUB_API_URL": fake.api_url,
                "GITHUB_GRAPHQL_URL": f"{fake.api_url}/graphql",
                "GITHUB_SERVER_URL": f"http://github.localhost:{fake.port}",
                "GITHUB_REPOSITORY": REPO,
                "GITHUB_REPOSITORY_OWNER": REPO.split("/")[0],
                # What `runs-on: ubuntu-latest` is on GitHub (act's host platform sets none).
                "RUNNER_ENVIRONMENT": "github-hosted",
                # PyGithub's pacing (a second between writes) off: it only slows the fake.
                "CHIMERA_GITHUB_THROTTLE": "0",
            },
            secrets={
                "GITHUB_TOKEN": token,
                "ANTHROPIC_API_KEY": LLM_KEY,
                "CHIMERA_APP_ID": str(app.app_id),
                "CHIMERA_APP_PRIVATE_KEY": act_kit.app_private_key,
            },
            process_env=act_kit.process_env,
        )
        world = ActWorld(tmp_path, act_kit, fake, repo, remote, stub, runner)
        try:
            yield world
        finally:
            _SPENT.extend((r.workflow.name, r.seconds, r.cpu_seconds) for r in world.runs)


# (workflow, wall seconds, CPU seconds) of every act run of this process, for the summary.
_SPENT: list[tuple[str, float, float]] = []


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """One line: how many act runs this process made and what they cost (wall and CPU: on a
    busy machine the CPU time is the figure to compare)."""
    if _SPENT:
        wall = sum(w for _, w, _ in _SPENT)
        cpu = sum(c for _, _, c in _SPENT)
        terminalreporter.write_line(
            f"act harness: {len(_SPENT)} workflow runs, {wall:.0f} s wall, {cpu:.0f} s CPU "
            "(act and every step it ran)"
        )
