"""Pre-registration: recorded before any run, immutable after, published win or lose."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chimera.errors import UsageError
from chimera.eval.ab import SHIPPED, ABStore, Registration
from chimera.eval.harness import TaskRun
from chimera.governance.audit import verify_audit_log

REG = """\
name: small
hypothesis: the treatment does not change the pass rate
suite: inflection
control: {diff_feedback: false}
treatment: {diff_feedback: true}
n: 2
alpha: 0.05
tasks: [t02-shout, t07-initials]
"""


def _write(tmp_path: Path, text: str = REG) -> Path:
    path = tmp_path / "reg.yaml"
    path.write_text(text)
    return path


def test_register_records_the_digest_in_the_audit_log_once(tmp_path: Path) -> None:
    store = ABStore(tmp_path)
    reg, new = store.register(_write(tmp_path))
    assert new
    again, new_again = store.register(_write(tmp_path))
    assert not new_again and again.digest() == reg.digest()
    events = [json.loads(x) for x in store.audit_path.read_text().splitlines()]
    assert [e["event"] for e in events] == ["ab_registered"]
    assert events[0]["fields"]["digest"] == reg.digest()
    assert verify_audit_log(store.audit_path).ok


@pytest.mark.parametrize(
    ("old", "new"), [("n: 2", "n: 3"), ("alpha: 0.05", "alpha: 0.1"), ("t07-initials", "t11-title")]
)
def test_changing_a_registration_is_refused(tmp_path: Path, old: str, new: str) -> None:
    store = ABStore(tmp_path)
    store.register(_write(tmp_path))
    changed = REG.replace(old, new)
    if old == "n: 2":
        changed = changed.replace("t07-initials]", "t07-initials, t11-title]")
    with pytest.raises(UsageError, match="after registration is refused"):
        store.register(_write(tmp_path, changed))


def test_an_edited_registration_file_is_refused_at_run_time(tmp_path: Path) -> None:
    store = ABStore(tmp_path)
    store.register(_write(tmp_path))
    path = store.dir / "small" / "registration.json"
    path.write_text(path.read_text().replace('"alpha": 0.05', '"alpha": 0.2'))
    with pytest.raises(UsageError, match="changed after registration"):
        store.load("small")
    with pytest.raises(UsageError, match="no registration named 'other'"):
        store.load("other")


def test_invalid_registrations_name_the_problem(tmp_path: Path) -> None:
    from chimera.errors import ConfigError

    with pytest.raises(ConfigError, match="n is 3 but 2 task ids"):
        ABStore(tmp_path).register(_write(tmp_path, REG.replace("n: 2", "n: 3")))
    with pytest.raises(UsageError, match="unknown task id"):
        ABStore(tmp_path).register(_write(tmp_path, REG.replace("t07-initials", "t99")))


def _run(task: str, passed: bool) -> TaskRun:
    return TaskRun(task, "f", passed, "solved" if passed else "failed", 1, 0, 0.0, 1.0)


def _results(store: ABStore, rows: list[tuple[str, str, bool]], name: str = "small") -> None:
    for arm, task, passed in rows:
        store.record_result(name, arm, _run(task, passed))
    store.seal(name)


def test_report_needs_every_pair_and_is_published_either_way(tmp_path: Path) -> None:
    store = ABStore(tmp_path)
    store.register(_write(tmp_path))
    _results(store, [("control", "t02-shout", True)])
    with pytest.raises(UsageError, match="no result yet for control:t07-initials"):
        store.report("small")
    _results(
        store,
        [
            ("control", "t07-initials", True),
            ("treatment", "t02-shout", False),
            ("treatment", "t07-initials", False),
        ],
    )
    report = store.report("small", model="scripted")
    # Two tasks can never reach alpha 0.05 with the exact test: no verdict on noise.
    assert report["verdict"] == "insufficient evidence"
    assert "needs at least 5 paired tasks, has 2" in report["reason"]
    md = (store.dir / "small" / "report.md").read_text()
    assert md.startswith("# A/B small: insufficient evidence")
    assert "bookkeeping" in md and report["audit_head"] in md
    events = [json.loads(x)["event"] for x in store.audit_path.read_text().splitlines()]
    assert events == ["ab_registered", *["ab_result"] * 4, "ab_reported"]


TASKS12 = (
    "[t01-counted, t02-shout, t03-place, t04-inventory, t05-slug, t06-podium, t07-initials, "
    "t08-permalink, t09-stock, t10-round, t11-title, t12-tagline]"
)
BIG = REG.replace("n: 2", "n: 12").replace("[t02-shout, t07-initials]", TASKS12)


def _twelve(tmp_path: Path) -> ABStore:
    """A registered 12-task comparison with no real difference: each arm passes 9 tasks,
    the treatment losing 3 where it wins 3."""
    store = ABStore(tmp_path)
    reg, _ = store.register(_write(tmp_path, BIG))
    rows = [("control", t, i % 4 != 0) for i, t in enumerate(reg.tasks)]
    rows += [("treatment", t, i % 4 != 1) for i, t in enumerate(reg.tasks)]
    _results(store, rows)
    assert store.report("small")["verdict"] == "no significant difference"
    return store


def _flip_treatment(path: Path, count: int) -> None:
    lines = path.read_text().splitlines()
    flipped = 0
    for i, line in enumerate(lines):
        data = json.loads(line)
        if data["arm"] == "treatment" and not data["passed"] and flipped < count:
            data["passed"], flipped = True, flipped + 1
        elif data["arm"] == "control" and data["passed"] and flipped < count:
            data["passed"], flipped = False, flipped + 1
        lines[i] = json.dumps(data, sort_keys=True)
    path.write_text("\n".join(lines) + "\n")


def test_edited_result_lines_are_refused_with_the_line(tmp_path: Path) -> None:
    store = _twelve(tmp_path)
    _flip_treatment(store.dir / "small" / "results.jsonl", 6)
    with pytest.raises(UsageError, match=r"results.jsonl:\d+: does not match the audit log"):
        store.report("small")


def test_a_deleted_line_is_refused_and_never_re_run_silently(tmp_path: Path) -> None:
    store = _twelve(tmp_path)
    path = store.dir / "small" / "results.jsonl"
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[:-1]) + "\n")
    with pytest.raises(UsageError, match="has no line \\(deleted\\)"):
        store.report("small")
    with pytest.raises(UsageError, match="deleted"):
        store.run("small", model="scripted", workdir=tmp_path / "w")
    # Deleting it and recording it again leaves two events for one task: refused too.
    store.record_result("small", "treatment", _run("t12-tagline", True))
    with pytest.raises(UsageError, match="treatment:t12-tagline was run twice"):
        store.report("small")


def test_results_and_log_rewritten_consistently_are_refused_by_the_recorded_head(
    tmp_path: Path,
) -> None:
    store = _twelve(tmp_path)
    head = store.recorded_head("small")
    assert head is not None
    # Rebuild the log from scratch with flipped results, chain and all.
    results = store.dir / "small" / "results.jsonl"
    _flip_treatment(results, 6)
    rows = [json.loads(x) for x in results.read_text().splitlines()]
    record = store.record_path("small").read_text()
    store.audit_path.unlink()
    results.unlink()
    (store.dir / "small" / "registration.json").unlink()
    store.register(_write(tmp_path, BIG))
    store.record_path("small").write_text(record)  # the record keeps the real head
    for row in rows:
        store.record_result("small", row.pop("arm"), TaskRun(**row))
    with pytest.raises(UsageError, match="is not in the log: the log was rewritten"):
        store.report("small")
    # Even with the record rewritten too, a head kept elsewhere (a job summary) catches it.
    store.seal("small")
    store.report("small")  # consistent with itself now...
    with pytest.raises(UsageError, match="the head recorded in --head"):
        store.report("small", head=head)


def test_the_shipped_registration_is_valid() -> None:
    from chimera.spec.yamlmodel import load_yaml_model

    reg = load_yaml_model(SHIPPED / "diff-feedback.yaml", Registration, what="r", expected="f")
    assert reg.n == 12 and reg.treatment.diff_feedback and not reg.control.diff_feedback
    assert reg.chain(SHIPPED).name == "inflection-chain"


def test_register_states_the_smallest_effect_the_registered_n_can_detect(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from chimera.cli import main

    assert main(["bench", "ab", "register", "diff-feedback", "--root", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "smallest detectable effect at n = 12, alpha 0.05, 80% power: +58% pass rate" in out
    assert main(["bench", "ab", "register", str(_write(tmp_path)), "--root", str(tmp_path)]) == 0
    assert "n = 2 can never reach alpha 0.05" in capsys.readouterr().out
