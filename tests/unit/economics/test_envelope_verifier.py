"""EnvelopeVerifier: schema → criteria → seeded spot check, deterministic before the judge."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TypedDict

import pytest

from chimera.economics import (
    AcceptanceCriteria,
    EnvelopeVerifier,
    RepoReader,
    SpotCheck,
)
from chimera.economics.envelope import scope_criteria
from chimera.governance.audit import AuditLog
from chimera.providers import ScriptedBackend

SOURCE = "import os\n\n\ndef load(path):\n    with open(path) as fh:\n        return fh.read()\n"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "io.py").write_text(SOURCE)
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text("secret")
    return tmp_path


class Cite(TypedDict, total=False):
    """The citation fields a case overrides (never ``answer`` or ``found``)."""

    file: str
    line: int
    end_line: int
    quote: str


def env(answer: str = "load() reads a file", found: bool = True, **cite: object) -> str:
    citation = {"file": "pkg/io.py", "line": 4, "quote": "def load(path):", **cite}
    return json.dumps({"answer": answer, "found": found, "evidence": [citation]})


def test_a_faithful_envelope_passes_every_stage(repo: Path) -> None:
    verdict = EnvelopeVerifier(RepoReader(repo).read).verify(env(), key="s1")
    assert verdict.ok and verdict.spot_checked and verdict.failed_stage is None
    assert verdict.envelope is not None and verdict.envelope.evidence[0].line == 4


def test_schema_stage(repo: Path) -> None:
    verdict = EnvelopeVerifier(RepoReader(repo).read).verify("load reads files", key="s1")
    assert verdict.failed_stage == "schema" and "no JSON object" in verdict.problems[0]


@pytest.mark.parametrize(
    ("text", "criteria", "problem"),
    [
        (
            json.dumps({"answer": "yes", "evidence": []}),
            AcceptanceCriteria(),
            "at least 1 citation",
        ),
        (env(quote=""), AcceptanceCriteria(), "the quote is empty"),
        (
            env(),
            scope_criteria(AcceptanceCriteria(), ["other.py"]),
            "'pkg/io.py' is not one of the files you were given",
        ),
    ],
)
def test_criteria_stage(repo: Path, text: str, criteria: AcceptanceCriteria, problem: str) -> None:
    verdict = EnvelopeVerifier(RepoReader(repo).read).verify(text, key="s", criteria=criteria)
    assert verdict.failed_stage == "criteria"
    assert any(problem in p for p in verdict.problems), verdict.problems


def test_not_found_needs_no_evidence(repo: Path) -> None:
    text = json.dumps({"answer": "nothing about caching here", "found": False, "evidence": []})
    assert EnvelopeVerifier(RepoReader(repo).read).verify(text, key="s").ok


@pytest.mark.parametrize(
    ("cite", "problem"),
    [
        ({"file": "pkg/missing.py"}, "cited file 'pkg/missing.py' does not exist"),
        ({"file": "../outside.py"}, "does not exist"),
        ({"file": ".git/config", "quote": "secret"}, "does not exist"),
        ({"line": 40}, "has 6 lines, cited line 40"),
        ({"quote": "def load(path, mode):"}, "quote not found verbatim"),
        ({"line": 1, "quote": "return fh.read()"}, "quote occurs at line 6 of pkg/io.py, not at"),
    ],
)
def test_deterministic_spot_check(repo: Path, cite: Cite, problem: str) -> None:
    verdict = EnvelopeVerifier(RepoReader(repo).read).verify(env(**cite), key="s")
    assert verdict.failed_stage == "spot_check" and verdict.spot_checked
    assert any(problem in p for p in verdict.problems), verdict.problems


def test_line_tolerance_and_multi_line_quotes(repo: Path) -> None:
    quote = "    with open(path) as fh:\n        return fh.read()"
    verdict = EnvelopeVerifier(RepoReader(repo).read).verify(
        env(line=4, end_line=6, quote=quote), key="s"
    )
    assert verdict.ok, verdict.problems


def test_sampling_is_seeded_and_a_reask_is_always_checked(repo: Path) -> None:
    bad = env(file="pkg/missing.py")
    verifier = EnvelopeVerifier(RepoReader(repo).read, spot_check=SpotCheck(rate=0.5, seed=7))
    keys = [f"s{i}" for i in range(40)]
    first = [verifier.verify(bad, key=k).spot_checked for k in keys]
    again = [verifier.verify(bad, key=k).spot_checked for k in keys]
    assert first == again and 5 < sum(first) < 35
    other_seed = EnvelopeVerifier(RepoReader(repo).read, spot_check=SpotCheck(rate=0.5, seed=8))
    assert [other_seed.verify(bad, key=k).spot_checked for k in keys] != first
    skipped = keys[first.index(False)]
    assert verifier.verify(bad, key=skipped).ok  # not drawn: passes unchecked
    reasked = verifier.verify(bad, key=skipped, reask=True)
    assert reasked.spot_checked and not reasked.ok and reasked.reask
    never = EnvelopeVerifier(RepoReader(repo).read, spot_check=SpotCheck(rate=0.0))
    assert never.verify(bad, key="x", reask=True).failed_stage == "spot_check"


def test_model_judge_runs_only_after_deterministic_checks_pass(repo: Path, tmp_path: Path) -> None:
    judge = ScriptedBackend(
        [
            {
                "text": '{"faithful": false, "problems": ["load() does not cache"]}',
                "usage": {"prompt_tokens": 40, "completion_tokens": 9, "cost_usd": 0.003},
                "expect": ["def load(path):", "load() caches files"],
            }
        ],
        name="judge",
    )
    audit = AuditLog(tmp_path / "audit.jsonl", "run")
    verifier = EnvelopeVerifier(
        RepoReader(repo).read, spot_check=SpotCheck(judge=judge, judge_model="j"), audit=audit
    )
    bad_quote = verifier.verify(env(quote="nope"), key="a")
    assert bad_quote.failed_stage == "spot_check" and not bad_quote.judged
    assert judge.calls == []
    unfaithful = verifier.verify(env(answer="load() caches files"), key="b", question="q?")
    assert unfaithful.judged and unfaithful.problems == ("judge: load() does not cache",)
    assert unfaithful.calls[0].usage.cost_usd == 0.003
    lines = (tmp_path / "audit.jsonl").read_text().splitlines()
    events = [json.loads(x) for x in lines]
    assert [e["event"] for e in events] == ["envelope.verdict", "envelope.verdict"]
    assert events[1]["fields"]["judged"] is True and events[1]["fields"]["key"] == "b"


def test_invalid_rate_is_rejected() -> None:
    with pytest.raises(ValueError, match="in \\[0, 1\\]"):
        SpotCheck(rate=1.5)
