"""The op journal on a real orphan git branch: one commit per run, pushes that lose the race
are refused, and replay trusts only signed commits by the allowed key.

``remote`` is the conftest fixture: a bare repository, an SSH signing key and its allowed
signers file."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from chimera.errors import JournalConflict, JournalError
from chimera.scheduler.journal import AnyOf, TrustNothing, VerifiedBy
from chimera.scheduler.state import BaselineOp, FireOp, TickOp

T0 = datetime(2025, 3, 1, 6, 0, tzinfo=UTC)


def test_append_then_replay_round_trips_on_an_orphan_branch(remote: Any) -> None:
    journal = remote.clone("a")
    assert journal.fetch() is None
    ops = [TickOp(run="r1", at=T0), BaselineOp(run="r1", at=T0, job="nightly")]
    first = journal.append("r1", ops, parent=None)
    fire = FireOp(run="r2", at=T0 + timedelta(days=1), job="nightly", due=T0 + timedelta(days=1))
    second = journal.append("r2", [TickOp(run="r2", at=fire.at), fire], parent=first)

    reader = remote.clone("reader")
    tip = reader.fetch()
    assert tip == second
    replay = reader.replay(remote.trust)
    assert replay.trusted == (first, second)
    assert replay.untrusted == () and replay.problems == ()
    assert [op.op for op in replay.ops] == ["tick", "baseline", "tick", "fire"]
    job = replay.state.job("nightly")
    assert job.since == fire.due and job.fired == (fire.at,) and job.in_flight == ("r2", fire.at)
    # An orphan branch: the first commit has no parent; each run added exactly one file.
    assert remote.git(remote.bare, "rev-list", "--max-parents=0", "chimera/journal") == first
    assert remote.git(remote.bare, "ls-tree", "-r", "--name-only", "chimera/journal").split() == [
        "runs/r1.jsonl",
        "runs/r2.jsonl",
    ]


def test_the_second_of_two_overlapping_writers_loses_and_sees_the_first(remote: Any) -> None:
    a, b = remote.clone("a"), remote.clone("b")
    base = a.append("r0", [TickOp(run="r0", at=T0)], parent=None)
    assert a.fetch() == base and b.fetch() == base
    a.append("ra", [FireOp(run="ra", at=T0, job="j", due=T0)], parent=base)
    with pytest.raises(JournalConflict, match="another tick wrote first"):
        b.append("rb", [FireOp(run="rb", at=T0, job="j", due=T0)], parent=base)
    b.fetch()
    assert b.replay(remote.trust).state.job("j").in_flight == ("ra", T0)


def test_a_second_orphan_root_is_refused_when_the_branch_exists(remote: Any) -> None:
    a, b = remote.clone("a"), remote.clone("b")
    a.append("r0", [TickOp(run="r0", at=T0)], parent=None)
    with pytest.raises(JournalConflict):
        b.append("r1", [TickOp(run="r1", at=T0)], parent=None)


def test_unsigned_commits_under_the_app_name_are_not_trusted(remote: Any) -> None:
    app = remote.clone("app")
    first = app.append("r1", [TickOp(run="r1", at=T0)], parent=None)
    forger = remote.clone("forger", signed=False)  # same author name and e-mail, no key
    forger.fetch()
    forged = forger.append("evil", [FireOp(run="evil", at=T0, job="deploy", due=T0)], parent=first)
    reader = remote.clone("reader")
    reader.fetch()
    replay = reader.replay(remote.trust)
    assert replay.trusted == (first,)
    assert [sha for sha, _ in replay.untrusted] == [forged]
    assert "deploy" not in replay.state.jobs


def test_a_trusted_commit_cannot_rewrite_an_earlier_run(remote: Any, tmp_path: Path) -> None:
    app = remote.clone("app")
    first = app.append("r1", [BaselineOp(run="r1", at=T0, job="j")], parent=None)
    # A signed commit that edits runs/r1.jsonl instead of adding its own file.
    work = tmp_path / "work"
    remote.git(tmp_path, "clone", "-q", "-b", "chimera/journal", str(remote.bare), str(work))
    (work / "runs" / "r1.jsonl").write_text(
        FireOp(run="r1", at=T0, job="j", due=T0).model_dump_json() + "\n"
    )
    signing = remote.signing_flags()
    remote.git(work, *signing, "commit", "-q", "-S", "-am", "rewrite")
    remote.git(work, "push", "-q", "origin", "chimera/journal")
    reader = remote.clone("reader")
    reader.fetch()
    replay = reader.replay(remote.trust)
    assert len(replay.trusted) == 2 and replay.trusted[0] == first
    assert [op.op for op in replay.ops] == ["baseline"]


def test_default_policy_trusts_nothing_and_lookups_can_vouch(remote: Any) -> None:
    app = remote.clone("app", signed=False)
    sha = app.append("r1", [TickOp(run="r1", at=T0)], parent=None)
    assert app.replay().ops == ()
    assert app.replay(TrustNothing()).untrusted[0][0] == sha
    vouched = AnyOf([remote.trust, VerifiedBy(lambda s: s == sha)])
    assert app.replay(vouched).trusted == (sha,)


def test_bad_lines_and_stray_files_are_problems_not_crashes(remote: Any, tmp_path: Path) -> None:
    app = remote.clone("app")
    app.append("r1", [TickOp(run="r1", at=T0)], parent=None)
    work = tmp_path / "work"
    remote.git(tmp_path, "clone", "-q", "-b", "chimera/journal", str(remote.bare), str(work))
    (work / "runs" / "r2.jsonl").write_text('{"op": "explode"}\nnot json\n')
    (work / "notes.txt").write_text("hello\n")
    signing = remote.signing_flags()
    remote.git(work, "add", ".")
    remote.git(work, *signing, "commit", "-q", "-S", "-m", "junk")
    remote.git(work, "push", "-q", "origin", "chimera/journal")
    reader = remote.clone("reader")
    reader.fetch()
    replay = reader.replay(remote.trust)
    assert len(replay.ops) == 1
    assert len(replay.problems) == 3
    assert any("notes.txt: not a run journal" in p for p in replay.problems)
    assert any("runs/r2.jsonl:2: not a journal operation" in p for p in replay.problems)


def test_bad_run_ids_and_repeated_runs_are_refused(remote: Any) -> None:
    app = remote.clone("app")
    with pytest.raises(JournalError, match="letters, digits"):
        app.append("../x", [], parent=None)
    tip = app.append("r1", [TickOp(run="r1", at=T0)], parent=None)
    with pytest.raises(JournalError, match=r"already holds runs/r1\.jsonl"):
        app.append("r1", [TickOp(run="r1", at=T0)], parent=tip)
