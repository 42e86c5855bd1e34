"""Pre-registration: recorded before any run, immutable after, published win or lose."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chimera.errors import UsageError
from chimera.eval.ab import SHIPPED, ABStore, Registration
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


def _results(store: ABStore, rows: list[tuple[str, str, bool]]) -> None:
    path = store.dir / "small" / "results.jsonl"
    with path.open("a") as fh:
        for arm, task, passed in rows:
            run = {
                "task_id": task,
                "family": "f",
                "passed": passed,
                "outcome": "x",
                "attempts": 1,
                "tokens": 0,
                "cost_usd": 0.0,
                "seconds": 1.0,
                "detail": "",
            }
            fh.write(json.dumps({"arm": arm, **run}) + "\n")


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
    assert report["verdict"] == "control better"
    md = (store.dir / "small" / "report.md").read_text()
    assert md.startswith("# A/B small: control better")
    assert "bookkeeping" in md
    events = [json.loads(x)["event"] for x in store.audit_path.read_text().splitlines()]
    assert events == ["ab_registered", "ab_reported"]


def test_the_shipped_registration_is_valid() -> None:
    from chimera.spec.yamlmodel import load_yaml_model

    reg = load_yaml_model(SHIPPED / "diff-feedback.yaml", Registration, what="r", expected="f")
    assert reg.n == 12 and reg.treatment.diff_feedback and not reg.control.diff_feedback
    assert reg.chain(SHIPPED).name == "inflection-chain"
