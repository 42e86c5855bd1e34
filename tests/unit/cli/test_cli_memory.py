"""chimera memory: list, show, add, promote, forget (and undo), export, import."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chimera.cli import main
from chimera.memory.items import TAINTED, Candidate, Tier
from chimera.memory.part import open_local


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["memory", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_memory_round_trip(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = str(tmp_path)
    code, out, _ = run(capsys, "add", "Money is in cents.", "--root", root)
    assert code == 0 and out.startswith("add m-")
    item = out.split()[1]
    assert run(capsys, "add", "money is in CENTS", "--root", root)[1] == f"noop {item}\n"
    code, out, _ = run(
        capsys, "add", "Prefer small PRs.", "--tier", "persona", "--by", "alice", "--root", root
    )
    persona = out.strip()
    tainted = (
        open_local(tmp_path)
        .remember(
            Candidate(
                "CI uses 3.12", Tier.SEMANTIC, provenance=TAINTED, taint_sources=("issue_body",)
            )
        )
        .item_id
    )
    listing = run(capsys, "list", "--root", root)[1]
    assert f"{item}  semantic  trusted" in listing and f"{tainted}  semantic  tainted" in listing
    assert persona in run(capsys, "list", "--tier", "persona", "--root", root)[1]
    shown = run(capsys, "show", tainted, "--root", root)[1]
    assert "taint sources: issue_body" in shown and "history:" in shown
    assert run(capsys, "promote", tainted, "--by", "bob", "--root", root)[1].endswith(
        "promoted to trusted\n"
    )
    assert (
        json.loads(run(capsys, "show", tainted, "--json", "--root", root)[1])["provenance"]
        == "trusted"
    )
    code, _, err = run(capsys, "forget", item, "--root", root)
    assert code == 2 and "needs a reason" in err
    assert "forgotten" in run(capsys, "forget", item, "--reason", "wrong", "--root", root)[1]
    assert item not in run(capsys, "list", "--root", root)[1]
    assert "(forgotten)" in run(capsys, "list", "--all", "--root", root)[1]
    export = tmp_path / "ops.jsonl"
    assert run(capsys, "export", "--output", str(export), "--root", root)[0] == 0
    assert "restored" in run(capsys, "forget", item, "--undo", "--root", root)[1]
    other = tmp_path / "other"
    other.mkdir()
    assert "imported 3 op(s)" in run(capsys, "import", str(export), "--root", str(other))[1]
    # --json is one object, as on every command (docs/reference/cli.md).
    listing = json.loads(run(capsys, "list", "--json", "--all", "--root", str(other))[1])
    lines = listing["items"]
    assert {x["provenance"] for x in lines} == {"tainted"} and len(lines) == 2
    assert json.loads(run(capsys, "list", "--json", "--root", str(tmp_path / "other"))[1])


def test_cli_memory_bad_input_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, "show", "m-nope", "--root", str(tmp_path))
    assert code == 2 and err.strip() == "chimera: error: memory: no item m-nope"
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"op": "add", "id": "m-1"}\n{oops\n')
    code, _, err = run(capsys, "import", str(bad), "--root", str(tmp_path))
    assert code == 2 and f"{bad}:2:2: not JSON" in err
    bad.write_text('{"op": "explode", "id": "m-1"}\n')
    code, _, err = run(capsys, "import", str(bad), "--root", str(tmp_path))
    assert code == 2 and "not a memory op" in err and len(err.splitlines()) == 1
    assert run(capsys, "list", "--root", str(tmp_path / "missing"))[0] == 2
    assert run(capsys)[0] == 2


# A made-up token in GitHub's format (ghp_ and 36 letters/digits): no real credential.
FAKE_TOKEN = "ghp_" + "A1b2C3d4E5" * 3 + "F6g7H8"


@pytest.mark.parametrize("tier", [None, "semantic", "episodic", "persona"])
def test_cli_memory_add_refuses_a_secret_on_every_tier_and_says_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], tier: str | None
) -> None:
    """Before, the default tier printed ``noop`` and exited 0: a refusal that read like a
    duplicate. ``noop`` now means only "already remembered"."""
    root = str(tmp_path)
    extra = ["--tier", tier, "--by", "alice"] if tier else []
    code, out, err = run(capsys, "add", f"deploy token is {FAKE_TOKEN}", *extra, "--root", root)
    assert code == 2 and out == ""
    assert "GitHub token" in err and "never stored" in err and FAKE_TOKEN not in err
    assert len(err.strip().splitlines()) == 1
    assert run(capsys, "list", "--all", "--root", root)[1] == "no memories\n"


def test_remember_reports_a_refusal_not_a_noop(tmp_path: Path) -> None:
    manager = open_local(tmp_path)
    result = manager.remember(Candidate(f"key {FAKE_TOKEN}", Tier.SEMANTIC))
    assert result.op == "REFUSED" and result.refused and "GitHub token" in result.overruled
    added = manager.remember(Candidate("Money is in cents.", Tier.SEMANTIC))
    again = manager.remember(Candidate("money is in CENTS", Tier.SEMANTIC))
    assert (again.op, again.target_id) == ("NOOP", added.item_id) and not again.refused


def test_cli_memory_add_with_a_model_supersedes_a_changed_fact(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = str(tmp_path)
    code, out, _ = run(capsys, "add", "Tests run with pytest -n 2.", "--root", root)
    old = out.split()[1]
    decision = {"op": "UPDATE", "target_id": old, "text": "Tests run with pytest -n 4."}
    script = tmp_path / "m.yaml"
    script.write_text(
        json.dumps({"model": "m", "turns": [{"purpose": "memory", "text": json.dumps(decision)}]})
    )
    code, out, _ = run(
        capsys, "add", "Tests run with pytest -n 4.", "--root", root, "--model",
        f"scripted:{script}",
    )  # fmt: skip
    assert code == 0 and out.startswith(f"update {old}\n") and "supersedes" in out
    listing = run(capsys, "list", "--root", root)[1]
    assert "pytest -n 4" in listing and "pytest -n 2" not in listing
    history = json.loads(run(capsys, "show", old, "--root", root, "--json")[1])["history"]
    assert [h["op"] for h in history] == ["add", "update"]
    assert history[-1]["old_text"] == "Tests run with pytest -n 2."
    # --no-model: the same kind of change is a plain ADD (both stay).
    out = run(capsys, "add", "Tests run with pytest -n 8.", "--root", root, "--no-model")[1]
    assert out.startswith("add m-")
    assert run(capsys, "proposals", "--root", root)[1] == "no proposals\n"
