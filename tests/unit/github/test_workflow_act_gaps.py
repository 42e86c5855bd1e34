"""What act cannot show about the workflows, checked on the files themselves.

The act harness (``tests/e2e/act``) executes the example workflows and ``action.yml``, but act
gives every job the same token, ignores ``permissions:`` and ``concurrency:``, and passes every
secret it is given to whichever job asks. So each of those properties is a static test:

* permissions per job: the exact table is ``test_workflow_trust.py``; here, the rule behind it
  (a job that runs project or model-written code holds no write scope);
* no secret outside its job: a secret reaches one step, as an action input (never a job's or
  the workflow's ``env``, never a ``run:`` script);
* no LLM key outside the agent job: any secret that is not one of Chimera's named credentials
  is a model key, and only an agent-mode step may take it; ``action.yml`` hands it to the
  agent run only;
* concurrency groups present: every workflow and every job of the reusable workflow has the
  group its trigger needs (and the command job has none on purpose: ``stop`` must not wait
  for the run it stops);
* secrets cross from the caller into the reusable workflow by name only (never ``inherit``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[3]
REUSABLE = ROOT / ".github" / "workflows" / "chimera.yml"
CALLER = ROOT / "examples" / "workflows" / "chimera.yml"
EXAMPLES = [*sorted((ROOT / "examples" / "workflows").glob("*.yml")), REUSABLE]
SECRET = re.compile(r"secrets\.([A-Za-z0-9_]+)")
# Chimera's own credentials; any other secret a workflow names is a model provider's key.
NAMED_CREDENTIALS = {
    "GITHUB_TOKEN",
    "CHIMERA_APP_ID",
    "CHIMERA_APP_PRIVATE_KEY",
    "CHIMERA_JOURNAL_SIGNING_KEY",
    "CHIMERA_HELDOUT_SPECS",
}
# Steps that run code of the repository or of the model: set-up scripts and these modes; the
# other modes run none (a new mode must be put in one set or the other).
CODE_MODES = {"agent", "verify"}
NO_CODE_MODES = {
    "check",
    "decide",
    "publish",
    "start-ci",
    "command",
    "drain",
    "tick",
    "refresh",
    "spec-check",
}

# workflow → (the literal parts of its concurrency group, cancel-in-progress); None: no group.
CONCURRENCY: dict[str, tuple[tuple[str, ...], bool] | None] = {
    "chimera-check.yml": None,  # the CI spec check: GitHub's own per-ref runs are fine
    "examples/chimera.yml": None,  # the caller: the reusable workflow holds the groups
    # One run per issue (label, command, the queue's dispatch) and per Chimera PR review.
    ".github/chimera.yml": (("chimera-issue-{0}", "chimera-pr-{0}", "chimera-other-{0}"), False),
}
# Jobs of the reusable workflow with a group of their own (every other job: none).
JOB_CONCURRENCY: dict[str, tuple[str, bool]] = {
    "drain": ("chimera-queue", False),
    "tick": ("chimera-tick", False),
    # Only the newest head of a PR matters: the refresh chain shares one cancelling group.
    "refresh": ("chimera-spec-refresh-", True),
    "refresh-verify": ("chimera-spec-refresh-", True),
    "spec-check": ("chimera-spec-refresh-", True),
}


def key(path: Path) -> str:
    return path.name if path.name != "chimera.yml" else f"{path.parent.parent.name}/chimera.yml"


def load(path: Path) -> dict[Any, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def steps(path: Path) -> list[tuple[str, dict[str, Any]]]:
    return [(name, s) for name, job in load(path)["jobs"].items() for s in job.get("steps", [])]


def mode(step: dict[str, Any]) -> str | None:
    uses = str(step.get("uses", ""))
    if not uses.startswith("chimera-dev/chimera@") and uses != "$/.":
        return None
    return str((step.get("with") or {}).get("mode", "check"))


@pytest.mark.parametrize("path", EXAMPLES, ids=key)
def test_every_workflow_has_the_concurrency_group_its_trigger_needs(path: Path) -> None:
    assert key(path) in CONCURRENCY, f"{key(path)}: a new workflow needs a concurrency decision"
    wanted = CONCURRENCY[key(path)]
    found = load(path).get("concurrency")
    if wanted is None:
        assert found is None, f"{path.name}: {found}"
        return
    parts, cancel = wanted
    assert isinstance(found, dict), f"{path.name}: no concurrency group"
    for part in parts:
        assert part in str(found["group"]), (path.name, part, found["group"])
    assert found.get("cancel-in-progress", False) is cancel, path.name


@pytest.mark.parametrize("name", sorted(load(REUSABLE)["jobs"]))
def test_every_job_of_the_reusable_workflow_has_the_group_it_needs(name: str) -> None:
    found = load(REUSABLE)["jobs"][name].get("concurrency")
    if name not in JOB_CONCURRENCY:
        assert found is None, f"{name}: {found}"
        return
    part, cancel = JOB_CONCURRENCY[name]
    assert isinstance(found, dict), f"{name}: no concurrency group"
    assert part in str(found["group"]) and "github.workflow" in str(found["group"]), found
    assert found.get("cancel-in-progress", False) is cancel, name


def test_the_caller_passes_each_secret_by_name_and_never_inherits() -> None:
    (job,) = load(CALLER)["jobs"].values()
    secrets = job.get("secrets")
    assert isinstance(secrets, dict), f"the caller passes secrets: {secrets!r}"
    declared = load(REUSABLE)[True]["workflow_call"]["secrets"]
    assert set(secrets) <= set(declared), set(secrets) - set(declared)
    for name, value in secrets.items():
        assert re.fullmatch(r"\$\{\{ secrets\.[A-Za-z0-9_]+ \}\}", str(value)), (name, value)
        model_key = SECRET.findall(str(value))[0] not in NAMED_CREDENTIALS
        # The model key goes to the one secret only the agent step reads.
        assert not model_key or name == "LLM_API_KEY", name


@pytest.mark.parametrize("path", EXAMPLES, ids=key)
def test_a_secret_reaches_one_step_as_an_action_input_only(path: Path) -> None:
    doc = load(path)
    assert not SECRET.findall(yaml.safe_dump(doc.get("env") or {})), "workflow env"
    for name, job in doc["jobs"].items():
        assert not SECRET.findall(yaml.safe_dump(job.get("env") or {})), (name, "job env")
        for step in job.get("steps", []):
            where = (path.name, name, step.get("id") or step.get("name") or step.get("uses"))
            assert not SECRET.findall(str(step.get("run", ""))), (*where, "run script")
            assert not SECRET.findall(yaml.safe_dump(step.get("env") or {})), (*where, "env")
            assert not SECRET.findall(str(step.get("if", ""))), (*where, "if")


@pytest.mark.parametrize("path", EXAMPLES, ids=key)
def test_a_model_key_reaches_only_an_agent_steps_llm_key_input(path: Path) -> None:
    for job, step in steps(path):
        for key, value in (step.get("with") or {}).items():
            for secret in SECRET.findall(str(value)):
                if secret in NAMED_CREDENTIALS:
                    continue
                assert (mode(step), key) == ("agent", "llm-api-key"), (path.name, job, secret)


@pytest.mark.parametrize("path", EXAMPLES, ids=key)
def test_a_job_that_runs_project_or_model_code_holds_no_write_scope(path: Path) -> None:
    for name, job in load(path)["jobs"].items():
        modes = {mode(s) for s in job.get("steps", [])} - {None}
        runs_code = bool(modes & CODE_MODES) or any(
            ".github/chimera/setup.sh" in str(s.get("run", "")) for s in job.get("steps", [])
        )
        writes = {k for k, v in (job.get("permissions") or {}).items() if v == "write"}
        if runs_code:
            assert not writes, (path.name, name, writes)
        else:
            assert modes <= NO_CODE_MODES, (path.name, name, modes)


def test_action_yml_hands_the_model_key_to_the_agent_run_only() -> None:
    action = load(ROOT / "action.yml")
    found = []
    for step in action["runs"]["steps"]:
        for key, value in (step.get("env") or {}).items():
            if "inputs.llm-api-key" in str(value):
                found.append((step.get("id"), key, str(value)))
        assert "inputs.llm-api-key" not in str(step.get("run", "")), step.get("name")
        assert "inputs.llm-api-key" not in yaml.safe_dump(step.get("with") or {})
    assert found == [
        (
            "chimera",
            "CHIMERA_LLM_API_KEY",
            "${{ inputs.mode == 'agent' && inputs.llm-api-key || '' }}",
        )
    ]
