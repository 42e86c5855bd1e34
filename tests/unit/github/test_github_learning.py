"""Publish's learning step on its own: what it keeps of an artifact's learning.json depends only
on what publish re-derived (verify's verdict, the hash of the judged patch, the base commit's
skills), never on the artifact's claims."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Sequence
from pathlib import Path

from chimera.evolution.proposals import Proposal
from chimera.evolution.skills import LearnedSkill, SkillState
from chimera.github.publish.learning import learn_from_artifact, publish_learning
from chimera.github.trust.basecommit import sha256_text
from chimera.github.trust.chain import Verified

PATCH = "diff --git a/calc.py b/calc.py\n--- a/calc.py\n+++ b/calc.py\n@@ -1 +1,2 @@\n x\n+y\n"


class ListSink:
    def __init__(self) -> None:
        self.stored: list[tuple[str, list[Proposal]]] = []

    def store(self, proposals: Sequence[Proposal], *, run_id: str, issue: int | None) -> str | None:
        self.stored.append((run_id, list(proposals)))
        return "c0ffee" if proposals else None


def _skill(
    name: str, state: SkillState = SkillState.PROVISIONAL, *, trusted: bool = False
) -> LearnedSkill:
    body = "Use the builtin sum.\n"
    return LearnedSkill(name, "Sum lists next to the helpers.", body, state=state, trusted=trusted)


def _base(tmp_path: Path, promoted: LearnedSkill | None = None) -> tuple[Path, str]:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "calc.py").write_text("x\n")
    if promoted is not None:
        folder = root / ".chimera" / "skills" / promoted.name
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(promoted.to_markdown())
    git = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "base"], check=True)
    sha = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True)
    return root, sha.stdout.strip()


def _artifacts(tmp_path: Path, doc: object, patch: str = PATCH) -> Path:
    folder = tmp_path / "artifacts"
    (folder / "run").mkdir(parents=True)
    (folder / "patch.diff").write_text(patch)
    (folder / "run" / "learning.json").write_text(json.dumps(doc))
    return folder


def _verified(base: str, verdict: str = "passed", patch: str = PATCH) -> Verified:
    return Verified(base, sha256_text(patch), "0" * 64, verdict)


def _doc(*skills: LearnedSkill) -> dict[str, object]:
    bullets = [{"section": "Strategies", "text": "Keep helpers next to what they serve."}]
    return {"run_id": "claimed", "skills": [s.to_markdown() for s in skills], "bullets": bullets}


def test_kept_items_are_stored_under_publishs_run_id(tmp_path: Path) -> None:
    root, base = _base(tmp_path)
    sink = ListSink()
    doc = _doc(_skill("list-sums", SkillState.PROMOTED, trusted=True))
    art = _artifacts(tmp_path, doc)
    learned = learn_from_artifact(root, art, _verified(base), sink, run_id="gh-4-9", issue=4)
    ((run_id, kept),) = sink.stored
    assert run_id == "gh-4-9" and [p.kind for p in kept] == ["skill", "bullet"]
    skill = LearnedSkill.from_markdown(kept[0].skill)
    assert (skill.state, skill.trusted, skill.sources) == (
        SkillState.PROVISIONAL, False, ("gh-4-9",),
    )  # fmt: skip
    assert learned.commit == "c0ffee" and learned.stored == tuple(p.id for p in kept)


def test_a_patch_verify_did_not_judge_keeps_nothing(tmp_path: Path) -> None:
    root, base = _base(tmp_path)
    sink = ListSink()
    art = _artifacts(tmp_path, _doc(_skill("list-sums")), patch=PATCH + "+z\n")
    learned = learn_from_artifact(root, art, _verified(base), sink, run_id="r", issue=1)
    assert sink.stored == [] and "not the one verify judged" in learned.refused[0]


def test_a_failed_verdict_or_an_empty_patch_keeps_nothing(tmp_path: Path) -> None:
    root, base = _base(tmp_path)
    sink = ListSink()
    art = _artifacts(tmp_path, _doc(_skill("list-sums")))
    failed = learn_from_artifact(root, art, _verified(base, "failed"), sink, run_id="r", issue=1)
    assert "verdict failed" in failed.refused[0]
    empty = tmp_path / "empty"
    art2 = _artifacts(empty, _doc(_skill("list-sums")), patch="")
    hollow = learn_from_artifact(root, art2, _verified(base, patch=""), sink, run_id="r", issue=1)
    assert "hollow" in hollow.refused[0]
    assert [kept for _, kept in sink.stored] == [[], []]


def test_a_skill_the_base_commit_holds_promoted_is_never_replaced(tmp_path: Path) -> None:
    root, base = _base(tmp_path, _skill("list-sums", SkillState.PROMOTED, trusted=True))
    sink = ListSink()
    art = _artifacts(tmp_path, _doc(_skill("list-sums")))
    learned = learn_from_artifact(root, art, _verified(base), sink, run_id="r", issue=1)
    assert any("promoted by a person" in r for r in learned.refused)
    ((_, kept),) = sink.stored
    assert [p.kind for p in kept] == ["bullet"]


def test_no_learning_file_touches_no_branch_and_junk_is_refused(tmp_path: Path) -> None:
    root, base = _base(tmp_path)
    cache = tmp_path / "cache.git"
    bare = tmp_path / "artifacts-none"
    bare.mkdir()
    assert publish_learning(root, bare, _verified(base), cache=cache, run_id="r", issue=1) == {}
    assert not cache.exists()
    art = _artifacts(tmp_path, ["not", "an", "object"])
    learned = learn_from_artifact(root, art, _verified(base), ListSink(), run_id="r", issue=1)
    assert learned.refused == ("learning.json: not a JSON object",)


def _remote_pair(tmp_path: Path) -> tuple[Path, Path]:
    """A bare remote, and a local repository whose origin it is."""
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    local = tmp_path / "local"
    local.mkdir()
    subprocess.run(["git", "-C", str(local), "init", "-q"], check=True)
    subprocess.run(["git", "-C", str(local), "remote", "add", "origin", str(remote)], check=True)
    return remote, local


def _claim(tmp_path: Path, name: str, skills: object) -> Path:
    folder = tmp_path / name
    (folder / "run").mkdir(parents=True)
    (folder / "patch.diff").write_text(PATCH)
    (folder / "run" / "uses.json").write_text(json.dumps({"skills": skills, "bullets": []}))
    return folder


def test_the_agent_jobs_claimed_use_counts_with_verifys_verdict_and_never_promotes(
    tmp_path: Path,
) -> None:
    """Which skills a run used is the agent job's word; the outcome is verify's. Thirty
    claimed failures retire a skill; forty claimed successes never promote one."""
    from dataclasses import replace

    from chimera.cli import main
    from chimera.evolution.lifecycle import retrievable
    from chimera.evolution.skills import SkillStore
    from chimera.github.publish.learning import branch_sink, claimed_use, learn_uses

    _, local = _remote_pair(tmp_path)
    good = replace(_skill("list-sums", trusted=True), tested="gate", accepted_by="ana")
    bad = replace(_skill("bad-sums", trusted=True), tested="gate", accepted_by="ana")
    store = SkillStore(local / ".chimera" / "skills")
    store.put(good)
    store.put(bad)
    sink = branch_sink(local, tmp_path / "publish-cache.git")
    claims = [{"name": "list-sums", "version": 1}, {"name": "Not A Name", "version": 1}]
    art = _claim(tmp_path, "a", claims)
    record = claimed_use(art, _verified("b" * 40, "failed"), run_id="gh-1-1")
    assert record is not None and record.skills == (("list-sums", 1),) and not record.passed
    ok = _claim(tmp_path, "ok", [{"name": "list-sums", "version": 1}])
    report = learn_uses(ok, _verified("b" * 40, "passed"), sink, run_id="gh-1-0", issue=1)
    assert report["passed"] is True and report["commit"]
    bad_art = _claim(tmp_path, "bad", [{"name": "bad-sums", "version": 1}])
    learn_uses(bad_art, _verified("b" * 40, "failed"), sink, run_id="gh-2-0", issue=2)
    # The rest in two commits (one per run on GitHub; fewer here to keep the test quick).
    more_ok = [replace(record, run_id=f"gh-1-{n}", skills=(("list-sums", 1),), passed=True)
               for n in range(1, 40)]  # fmt: skip
    more_bad = [replace(record, run_id=f"gh-2-{n}", skills=(("bad-sums", 1),))
                for n in range(1, 30)]  # fmt: skip
    sink.store_uses(more_ok, run_id="gh-1", issue=1)
    sink.store_uses(more_bad, run_id="gh-2", issue=2)
    assert main(["playbook", "fetch", "--root", str(local)]) == 0
    kept = store.get("list-sums")
    assert kept is not None and kept.claimed_uses == 40 and kept.uses == 0
    assert kept.state is SkillState.PROVISIONAL  # claims never promote
    retired = store.get("bad-sums")
    assert retired is not None and retired.state is SkillState.RETIRED
    assert not retrievable(retired)
    assert main(["playbook", "fetch", "--root", str(local)]) == 0  # counted once
    again = store.get("list-sums")
    assert again is not None and again.claimed_uses == 40
