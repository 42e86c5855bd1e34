"""Every shipped and example workflow, parsed: per job, its GITHUB_TOKEN permissions, the
secrets it references, and where each trusted input of verify and publish comes from.

The trust chain holds only if the wiring does: the LLM key only on the agent's step, no
secret and a read-only token in verify, the publish job fed by decide's and verify's outputs
(never the agent's, except its audit head, which it only records), the App's key only where
CI is started or the queue dispatched.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from chimera.github.trust.chain import DECIDE_OUTPUTS, VERIFY_OUTPUTS, input_env

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples" / "workflows"
REUSABLE = ROOT / ".github" / "workflows" / "chimera.yml"  # Chimera's one reusable workflow
CALLER = EXAMPLES / "chimera.yml"  # the adopter's one workflow, which calls it
WORKFLOWS = sorted(EXAMPLES.glob("*.yml")) + sorted((ROOT / ".github" / "workflows").glob("*.yml"))
SECRET = re.compile(r"\$\{\{\s*secrets\.([A-Za-z0-9_]+)\s*\}\}")
HELDOUT_SECRET = "CHIMERA_HELDOUT_SPECS"
APP = {"CHIMERA_APP_ID", "CHIMERA_APP_PRIVATE_KEY"}
ACTION = ROOT / "action.yml"

# (workflow, job) → the exact permissions, and the secrets it may reference.
EXPECTED: dict[tuple[str, str], tuple[dict[str, str], set[str]]] = {
    ("chimera-check.yml", "spec"): ({}, set()),  # the workflow-level contents: read
    # Chimera's login from the App token step's slug; the token is used for nothing else.
    ("chimera.yml", "app"): ({}, APP),
    ("chimera.yml", "decide"): (
        {"contents": "read", "issues": "write", "pull-requests": "write"},
        set(),
    ),
    ("chimera.yml", "agent"): (
        {"contents": "read", "issues": "read", "pull-requests": "read", "actions": "read"},
        {"LLM_API_KEY"},
    ),
    # verify's one secret: the held-out specs, on its Chimera step only.
    ("chimera.yml", "verify"): ({"contents": "read"}, {HELDOUT_SECRET}),
    ("chimera.yml", "publish"): (
        {"contents": "write", "pull-requests": "write", "issues": "write", "checks": "write"},
        # the App's token for the branch stores only; publish also signs a scheduled run's
        # finish in the schedules' journal
        APP | {"CHIMERA_JOURNAL_SIGNING_KEY"},
    ),
    ("chimera.yml", "start-ci"): ({}, APP),
    # @chimera stop/status: cancels workflow runs; no checkout, no secret.
    ("chimera.yml", "command"): (
        {"issues": "write", "pull-requests": "read", "actions": "write"},
        set(),
    ),
    ("chimera.yml", "drain"): ({}, APP),
    # The schedule tick: no LLM key; the App token writes the journal and dispatches; the
    # journal's signing key signs the tick's commits.
    ("chimera.yml", "tick"): ({"contents": "read"}, APP | {"CHIMERA_JOURNAL_SIGNING_KEY"}),
    # A person's push to a Chimera PR: the Spec check judged by verify, posted by spec-check.
    ("chimera.yml", "refresh"): ({"issues": "read", "pull-requests": "read"}, set()),
    ("chimera.yml", "refresh-verify"): ({"contents": "read"}, {HELDOUT_SECRET}),
    ("chimera.yml", "spec-check"): ({"contents": "read", "checks": "write"}, set()),
}
RANK = {"none": 0, "read": 1, "write": 2}


def load(path: Path) -> dict[Any, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def chimera_steps(job: dict[str, Any]) -> list[dict[str, Any]]:
    """The steps that run Chimera's action: a pinned release, or (in the reusable workflow)
    the self-repository reference ``$/.``, the same commit as the workflow."""
    return [
        s
        for s in job.get("steps", [])
        if str(s.get("uses", "")).startswith("chimera-dev/") or s.get("uses") == "$/."
    ]


def path_of(workflow: str) -> Path:
    return REUSABLE if workflow == "chimera.yml" else EXAMPLES / workflow


def example_jobs() -> list[tuple[str, str]]:
    files = [p for p in sorted(EXAMPLES.glob("*.yml")) if p != CALLER] + [REUSABLE]
    return [(p.name, name) for p in files for name in load(p)["jobs"]]


def test_every_example_job_is_in_the_table() -> None:
    assert sorted(example_jobs()) == sorted(EXPECTED)


def test_the_caller_grants_exactly_what_the_called_jobs_ask_for() -> None:
    """A called workflow's jobs get at most what the calling job grants: the caller grants
    the union of their permissions (a scope less and a job fails; more is never used)."""
    union: dict[str, str] = {}
    for job in load(REUSABLE)["jobs"].values():
        for scope, level in (job.get("permissions") or {}).items():
            if RANK[level] > RANK[union.get(scope, "none")]:
                union[scope] = level
    caller = load(CALLER)
    assert caller["permissions"] == {}
    (call,) = caller["jobs"].values()
    assert call["permissions"] == union
    assert re.fullmatch(
        r"[\w.-]+/chimera/\.github/workflows/chimera\.yml@[0-9a-f]{40}", call["uses"]
    ), call["uses"]
    assert call["secrets"] != "inherit"


@pytest.mark.parametrize(("workflow", "name"), sorted(EXPECTED), ids=lambda v: str(v))
def test_permissions_and_secrets_per_job(workflow: str, name: str) -> None:
    doc = load(path_of(workflow))
    job = doc["jobs"][name]
    perms, secrets = EXPECTED[(workflow, name)]
    # Every workflow denies by default; a job grants only what it uses.
    assert doc["permissions"] in ({}, {"contents": "read"}), workflow
    assert job.get("permissions", {}) == perms
    assert set(SECRET.findall(yaml.safe_dump(job))) == secrets
    assert "env" not in job, "no job-wide environment: a secret there reaches every step"


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_no_workflow_grants_write_all_or_inherits_defaults(path: Path) -> None:
    doc = load(path)
    assert "permissions" in doc, f"{path.name}: no workflow-level permissions (defaults apply)"
    for name, job in doc["jobs"].items():
        assert job.get("permissions") not in ("write-all", "read-all"), (path.name, name)


def test_the_llm_key_reaches_only_the_agent_step() -> None:
    jobs = load(REUSABLE)["jobs"]
    (step,) = chimera_steps(jobs["agent"])
    assert step["with"]["llm-api-key"] == "${{ secrets.LLM_API_KEY }}"
    assert step["with"]["llm-key-variable"] == "${{ inputs.llm-key-variable }}"
    assert REUSABLE.read_text(encoding="utf-8").count("secrets.LLM_API_KEY") == 1
    others = [s for s in jobs["agent"]["steps"] if s is not step]
    assert all("secrets." not in yaml.safe_dump(s) for s in others)


def test_verify_runs_without_credentials_on_decides_base() -> None:
    jobs = load(REUSABLE)["jobs"]
    verify = jobs["verify"]
    checkout = next(s for s in verify["steps"] if "actions/checkout" in str(s.get("uses")))
    assert checkout["with"]["persist-credentials"] is False
    assert checkout["with"]["ref"] == "${{ needs.decide.outputs.base-sha }}"
    (step,) = chimera_steps(verify)
    inputs = step["with"]
    assert inputs["mode"] == "verify" and "github-token" not in inputs
    for output in DECIDE_OUTPUTS:
        name, _ = input_env("decide", output)
        assert inputs[name] == f"${{{{ needs.decide.outputs.{output} }}}}"
    # The agent attempt's own artifact, never the base name (a re-run's would clash).
    assert inputs["agent-artifact"] == "${{ needs.agent.outputs.artifact }}"
    assert jobs["agent"]["outputs"]["artifact"] == "${{ steps.agent.outputs.artifact }}"
    # verify's outputs are exactly the four publish needs, from its own step.
    assert set(verify["outputs"]) == set(VERIFY_OUTPUTS)
    assert all(v == f"${{{{ steps.verify.outputs.{k} }}}}" for k, v in verify["outputs"].items())


def test_every_publish_input_comes_from_decide_verify_or_the_patch() -> None:
    jobs = load(REUSABLE)["jobs"]
    publish = jobs["publish"]
    assert set(publish["needs"]) == {"decide", "agent", "verify"}
    (step,) = chimera_steps(publish)
    inputs: dict[str, str] = step["with"]
    sources: dict[str, str] = {}
    for name, value in inputs.items():
        found = re.findall(r"needs\.([a-z-]+)\.outputs\.([a-z0-9_-]+)", str(value))
        if found:
            sources[name] = ".".join(found[0])
    expected = {input_env("decide", o)[0]: f"decide.{o}" for o in DECIDE_OUTPUTS}
    expected |= {input_env("verify", o)[0]: f"verify.{o}" for o in VERIFY_OUTPUTS}
    # The agent's audit head is recorded next to publish's own log, never acted on; its
    # artifact name says which attempt's patch to download (publish re-hashes it).
    expected["agent-audit-head"] = "agent.audit-head"
    expected["agent-artifact"] = "agent.artifact"
    assert sources == expected
    # The patch itself comes from the artifact (action.yml downloads it in publish mode);
    # publish's token is the workflow's own, so its PR starts no workflow.
    assert "github-token" not in inputs and inputs["mode"] == "publish"
    assert inputs["sandbox"] == chimera_steps(jobs["verify"])[0]["with"]["sandbox"]


def test_ci_starts_only_through_the_app_after_an_approval() -> None:
    jobs = load(REUSABLE)["jobs"]
    start = jobs["start-ci"]
    assert start["needs"] == "decide" and start["if"] == "needs.decide.outputs.start-ci == 'true'"
    (step,) = chimera_steps(start)
    assert step["with"]["mode"] == "start-ci"
    assert step["with"]["github-token"] == "${{ steps.app.outputs.token }}"
    app = next(s for s in start["steps"] if s.get("id") == "app")
    assert app["with"]["permission-pull-requests"] == "write"
    assert [k for k in app["with"] if k.startswith("permission-")] == ["permission-pull-requests"]


def test_the_spec_refresh_runs_pr_code_only_in_verify_and_posts_from_rederived_outputs() -> None:
    jobs = load(REUSABLE)["jobs"]
    # The refresh job checks nothing out; refresh-verify and spec-check check out its base
    # without credentials (the head comes with fetch-depth 0, as data for git diff).
    assert not [s for s in jobs["refresh"]["steps"] if "actions/checkout" in str(s.get("uses"))]
    for name in ("refresh-verify", "spec-check"):
        checkout = next(s for s in jobs[name]["steps"] if "actions/checkout" in str(s.get("uses")))
        assert checkout["with"]["persist-credentials"] is False
        assert checkout["with"]["ref"] == "${{ needs.refresh.outputs.base-sha }}"
    (verify,) = chimera_steps(jobs["refresh-verify"])
    assert verify["with"]["mode"] == "verify" and verify["with"]["sandbox"] == "strict"
    assert set(jobs["refresh-verify"]["outputs"]) == {*VERIFY_OUTPUTS, "results"}
    # Only spec-check may write, and it runs no step but Chimera's own.
    (post,) = chimera_steps(jobs["spec-check"])
    assert post["with"]["mode"] == "spec-check"
    assert [s for s in jobs["spec-check"]["steps"] if "run" in s] == []
    sources = {}
    for name, value in post["with"].items():
        found = re.findall(r"needs\.([a-z-]+)\.outputs\.([a-z0-9_-]+)", str(value))
        if found:
            sources[name] = ".".join(found[0])
    expected = {input_env("decide", o)[0]: f"refresh.{o}" for o in DECIDE_OUTPUTS}
    expected |= {
        input_env("verify", o)[0]: f"refresh-verify.{o}" for o in (*VERIFY_OUTPUTS, "results")
    }
    # Chimera's own login, from the App token step of the app job (which runs no code).
    expected["bot-login"] = "app.bot-login"
    assert sources == expected


def test_each_agent_attempt_uploads_its_own_artifact_and_verify_publish_download_it() -> None:
    steps = {s.get("name"): s for s in load(ROOT / "action.yml")["runs"]["steps"]}
    naming = steps["Name the run artifact"]
    assert naming["id"] == "artifact" and naming["if"] == "always() && inputs.mode == 'agent'"
    assert naming["env"]["CHIMERA_RUN_ATTEMPT"] == "${{ github.run_attempt }}"
    upload = steps["Upload the run artifact"]["with"]
    assert upload["name"] == "${{ steps.artifact.outputs.name }}"
    download = steps["Download the run artifact"]
    assert download["with"]["name"] == "${{ inputs.agent-artifact }}"
    assert "inputs.agent-artifact != ''" in download["if"]  # never every artifact of the run
    publish_log = steps["Upload publish's audit log"]["with"]["name"]
    assert publish_log == "${{ steps.publish-artifact.outputs.name }}"
    outputs = load(ROOT / "action.yml")["outputs"]
    assert outputs["artifact"]["value"] == "${{ steps.artifact.outputs.name }}"


# Each upload's naming step, the step that uploads under its name, and the name's shape.
NAMED_UPLOADS = (
    ("artifact", "Upload the run artifact", r"chimera-run-attempt-3-[0-9a-f]{16}"),
    (
        "publish-artifact",
        "Upload publish's audit log",
        r"chimera-run-publish-attempt-3-[0-9a-f]{16}",
    ),
    (
        "heldout-artifact",
        "Upload the sealed held-out record",
        r"chimera-run-heldout-attempt-3-[0-9a-f]{16}",
    ),
)


@pytest.mark.parametrize(("step_id", "upload", "shape"), NAMED_UPLOADS, ids=lambda v: str(v)[:16])
def test_each_job_draws_its_own_artifact_name_nonce_at_upload_time(
    step_id: str, upload: str, shape: str, tmp_path: Path
) -> None:
    """No job can know a later job's artifact name (an agent job that uploaded under it first
    would have the later upload refused and its log lost): every name ends in a nonce drawn
    by a step of the uploading job itself, after its Chimera step, right before the upload."""
    import os
    import subprocess

    steps = load(ACTION)["runs"]["steps"]
    index = {s.get("id") or s.get("name"): i for i, s in enumerate(steps)}
    naming = steps[index[step_id]]
    assert index["chimera"] < index[step_id] < index[upload]
    assert naming["if"] == steps[index[upload]]["if"]  # named exactly when it uploads
    assert steps[index[upload]]["with"]["name"] == f"${{{{ steps.{step_id}.outputs.name }}}}"
    assert "/dev/urandom" in naming["run"]
    assert set(naming["env"].values()) == {
        "${{ inputs.artifact-name }}",
        "${{ github.run_attempt }}",
    }
    names = []
    for n in range(2):
        out, summary = tmp_path / f"out-{n}", tmp_path / f"summary-{n}"
        out.write_text("")
        subprocess.run(
            ["bash", "-c", naming["run"]],
            env={
                "PATH": os.environ["PATH"],
                "GITHUB_OUTPUT": str(out),
                "GITHUB_STEP_SUMMARY": str(summary),
                "CHIMERA_ARTIFACT_NAME": "chimera-run",
                "CHIMERA_RUN_ATTEMPT": "3",
            },
            check=True,
        )
        (line,) = out.read_text().splitlines()
        name = line.removeprefix("name=")
        assert re.fullmatch(shape, name), name
        names.append(name)
    assert names[0] != names[1]  # drawn afresh by each upload, never derivable beforehand


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_the_heldout_secret_reaches_only_the_verify_step(path: Path) -> None:
    """The held-out specs are referenced once per verify job, as its Chimera step's
    ``heldout-specs`` input, and nowhere else (no env, no other step or job)."""
    text = path.read_text(encoding="utf-8")
    jobs = load(path)["jobs"]
    found: list[tuple[str, str]] = []
    for name, job in jobs.items():
        for step in job.get("steps", []):
            dumped = yaml.safe_dump(step)
            if f"secrets.{HELDOUT_SECRET}" in dumped:
                found.append((name, str(step.get("with", {}).get("mode"))))
                assert step["with"]["heldout-specs"] == f"${{{{ secrets.{HELDOUT_SECRET} }}}}"
                others = {k: v for k, v in step["with"].items() if k != "heldout-specs"}
                assert HELDOUT_SECRET not in yaml.safe_dump(others)
        rest = {k: v for k, v in job.items() if k != "steps"}
        if "uses" in job:
            # A caller passes it by name to the reusable workflow, which hands it to verify.
            passed = rest.pop("secrets", {}).get(HELDOUT_SECRET)
            assert passed in (None, f"${{{{ secrets.{HELDOUT_SECRET} }}}}"), passed
        assert HELDOUT_SECRET not in yaml.safe_dump(rest)
    verify_jobs = [n for n, j in jobs.items() if any(chimera_steps_verify(j))]
    assert found == [(n, "verify") for n in verify_jobs]
    calls = [j for j in jobs.values() if "uses" in j and HELDOUT_SECRET in j.get("secrets", {})]
    assert text.count(f"secrets.{HELDOUT_SECRET}") == len(verify_jobs) + len(calls)


def chimera_steps_verify(job: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for s in chimera_steps(job) if s.get("with", {}).get("mode") == "verify"]


def test_action_yml_maps_the_heldout_input_into_the_verify_run_only() -> None:
    action = load(ACTION)
    refs: list[tuple[str, str]] = []
    for step in action["runs"]["steps"]:
        for key, value in (step.get("env") or {}).items():
            if "inputs.heldout-specs" in str(value):
                refs.append((str(step.get("id")), key))
                assert value == "${{ inputs.mode == 'verify' && inputs.heldout-specs || '' }}"
        for part in ("run", "with", "if"):
            assert "heldout-specs" not in yaml.safe_dump(step.get(part, "")), step.get("name")
    assert refs == [("chimera", "CHIMERA_HELDOUT_SPECS")]


STORE_TOKEN = "${{ steps.app.outputs.token }}"


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_the_store_token_reaches_only_publishs_chimera_step(path: Path) -> None:
    """The App token publish mints (contents: write only) is passed once, as the ``store-token``
    of publish's Chimera step, and never as its ``github-token`` (the PR branch, PR, comments
    and labels keep GITHUB_TOKEN, so no workflow starts on agent-written code)."""
    jobs = load(path)["jobs"]
    found: list[tuple[str, str]] = []
    for name, job in jobs.items():
        for step in job.get("steps", []):
            inputs = step.get("with", {})
            if "store-token" in inputs:
                found.append((name, str(inputs.get("mode"))))
                assert inputs["store-token"] == STORE_TOKEN
                assert "github-token" not in inputs and step in chimera_steps(job)
        if any(s.get("with", {}).get("store-token") for s in job.get("steps", [])):
            others = [s for s in job["steps"] if "store-token" not in s.get("with", {})]
            assert all("steps.app.outputs" not in yaml.safe_dump(s) for s in others)
            (app,) = [s for s in job["steps"] if s.get("id") == "app"]
            assert str(app["uses"]).startswith("actions/create-github-app-token@df432ce")
            assert [k for k in app["with"] if k.startswith("permission-")] == [
                "permission-contents"
            ]
            assert app["with"]["permission-contents"] == "write"
    publish = [n for n, j in jobs.items() if any(s.get("with", {}).get("mode") == "publish"
               for s in chimera_steps(j))]  # fmt: skip
    assert found == [(n, "publish") for n in publish]


def test_action_yml_maps_the_store_token_into_the_publish_run_only() -> None:
    action = load(ACTION)
    refs: list[tuple[str, str]] = []
    for step in action["runs"]["steps"]:
        for key, value in (step.get("env") or {}).items():
            if "inputs.store-token" in str(value):
                refs.append((str(step.get("id")), key))
                assert value == "${{ inputs.mode == 'publish' && inputs.store-token || '' }}"
        for part in ("run", "with", "if"):
            assert "store-token" not in yaml.safe_dump(step.get(part, "")), step.get("name")
    assert refs == [("chimera", "CHIMERA_STORE_TOKEN")]


def _runs_code(job: dict[str, Any]) -> bool:
    """The job runs model-written or PR code: a Chimera step in mode agent or verify."""
    return any(s["with"].get("mode") in ("agent", "verify") for s in chimera_steps(job))


CODE_JOBS = [
    (p.name, name) for p in WORKFLOWS for name, job in load(p)["jobs"].items() if _runs_code(job)
]


@pytest.mark.parametrize(("workflow", "name"), CODE_JOBS, ids=lambda v: str(v))
def test_agent_and_verify_checkouts_hold_what_they_need_and_no_credential(
    workflow: str, name: str
) -> None:
    path = path_of(workflow)
    job = load(path)["jobs"][name]
    checkouts = [s for s in job["steps"] if "actions/checkout" in str(s.get("uses"))]
    assert checkouts, f"{workflow}:{name} has no checkout"
    # actions/checkout persists the token unless told not to: the literal false is required.
    assert all(s["with"]["persist-credentials"] is False for s in checkouts)
    # Nothing later in the job fetches: on a private repository that fetch has no credential
    # (and handing it one would hand it to the model-written code as well).
    for step in job["steps"]:
        text = yaml.safe_dump(step)
        assert "git fetch" not in text and "github.token" not in text
        assert "GITHUB_TOKEN" not in text
    (checkout,) = checkouts
    modes = {s["with"]["mode"] for s in chimera_steps(job)}
    if "agent" in modes:
        # A re-run or a resume iterates on the PR: decide's head is the checked-out commit and
        # all history (the base, for the cumulative diff) comes with it.
        head = "${{ needs.decide.outputs.head-sha || needs.decide.outputs.base-sha }}"
        assert checkout["with"]["ref"] == head
        assert checkout["with"]["fetch-depth"] == 0
        # ...and the agent builds on that same commit (not the head the API reports later).
        (step,) = [s for s in chimera_steps(job) if s["with"]["mode"] == "agent"]
        assert step["with"]["decided-head-sha"] == "${{ needs.decide.outputs.head-sha }}"
    needs = job.get("needs", [])
    refresh = load(path)["jobs"].get(needs if isinstance(needs, str) else "", {})
    if any(s["with"].get("mode") == "refresh" for s in chimera_steps(refresh)):
        assert checkout["with"]["ref"] == "${{ needs.refresh.outputs.base-sha }}"
        # verify diffs base..head itself: all branches (the PR's head among them) are fetched.
        assert checkout["with"]["fetch-depth"] == 0


def test_the_code_jobs_cover_every_agent_and_verify_job() -> None:
    assert ("chimera.yml", "agent") in CODE_JOBS
    assert ("chimera.yml", "verify") in CODE_JOBS
    assert ("chimera.yml", "refresh-verify") in CODE_JOBS
    assert len(CODE_JOBS) == 3
