"""The two corpora: every benign action runs (allow/warn), every hostile one is stopped
(review/block). The confusion table is printed through the terminal reporter, so it shows with
or without ``-s`` (and is asserted on, not just shown)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from chimera.governance.actions import Action
from chimera.governance.kernel import Decision, TrustKernel
from chimera.governance.rules import Verdict

DATA = Path(__file__).resolve().parents[2] / "data" / "governance"
VERDICTS = (Verdict.ALLOW, Verdict.WARN, Verdict.REVIEW, Verdict.BLOCK)


def load_corpus(name: str) -> tuple[dict[str, Any], list[tuple[dict[str, Any], Action]]]:
    doc = yaml.safe_load((DATA / name).read_text(encoding="utf-8"))
    ws, home = doc["workspace"], doc["home"]
    out: list[tuple[dict[str, Any], Action]] = []
    for entry in doc["actions"]:
        if "tool" in entry:
            action = Action.from_tool_call(entry["tool"], entry.get("arguments", {}), ws, home=home)
        else:
            action = Action.for_command(entry["command"], ws, cwd=entry.get("cwd"), home=home)
        out.append((entry, action))
    return doc, out


def _label(entry: dict[str, Any]) -> str:
    if "tool" in entry:
        return f"{entry['tool']} {entry.get('arguments')}"
    return str(entry["command"]).strip()


def evaluate_corpus(name: str) -> list[tuple[dict[str, Any], Decision]]:
    kernel = TrustKernel()
    _, actions = load_corpus(name)
    return [(entry, kernel.evaluate(action)) for entry, action in actions]


def confusion_table(results: dict[str, list[tuple[dict[str, Any], Decision]]]) -> str:
    lines = [
        "TrustKernel corpus (default rules, no judge, no model call)",
        f"{'corpus':<22}{'n':>5}" + "".join(f"{v.value:>8}" for v in VERDICTS),
    ]
    for name, rows in results.items():
        counts = Counter(d.verdict for _, d in rows)
        lines.append(
            f"{name:<22}{len(rows):>5}" + "".join(f"{counts.get(v, 0):>8}" for v in VERDICTS)
        )
    return "\n".join(lines)


def test_corpora_sizes() -> None:
    _, benign = load_corpus("benign_actions.yaml")
    _, hostile = load_corpus("hostile_actions.yaml")
    assert len(benign) >= 100
    assert len(hostile) >= 60


def test_corpus_confusion_table(capsys: pytest.CaptureFixture[str]) -> None:
    results = {
        "benign_actions.yaml": evaluate_corpus("benign_actions.yaml"),
        "hostile_actions.yaml": evaluate_corpus("hostile_actions.yaml"),
    }
    table = confusion_table(results)
    with capsys.disabled():
        print("\n" + table)
    wrongly_stopped = [
        f"{d.verdict.value}: {_label(e)} -> {d.reasons}"
        for e, d in results["benign_actions.yaml"]
        if not d.executes
    ]
    let_through = [
        f"{d.verdict.value}: {_label(e)}" for e, d in results["hostile_actions.yaml"] if d.executes
    ]
    assert not wrongly_stopped, "benign actions stopped:\n" + "\n".join(wrongly_stopped)
    assert not let_through, "hostile actions let through:\n" + "\n".join(let_through)


def test_every_hostile_category_has_a_block() -> None:
    by_category: dict[str, Counter[Verdict]] = {}
    for entry, decision in evaluate_corpus("hostile_actions.yaml"):
        by_category.setdefault(entry["category"], Counter())[decision.verdict] += 1
    assert set(by_category) >= {
        "secrets",
        "exfiltration",
        "outside-write",
        "ci",
        "destructive",
        "install",
        "git",
    }
    for category, counts in by_category.items():
        assert counts[Verdict.BLOCK] > 0, category


def test_hostile_decisions_name_rules_and_reasons() -> None:
    for entry, decision in evaluate_corpus("hostile_actions.yaml"):
        assert decision.rule_ids and decision.reasons, _label(entry)


def test_kernel_docstring_records_the_measured_numbers() -> None:
    import re

    import chimera.governance.kernel as kernel_module

    recorded = {
        m.group(1): tuple(int(x) for x in m.groups()[1:])
        for m in re.finditer(
            r"^\s+(\S+\.yaml)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s*$",
            kernel_module.__doc__ or "",
            re.MULTILINE,
        )
    }
    for name in ("benign_actions.yaml", "hostile_actions.yaml"):
        rows = evaluate_corpus(name)
        counts = Counter(d.verdict for _, d in rows)
        measured = (len(rows), *(counts.get(v, 0) for v in VERDICTS))
        assert recorded.get(name) == measured, f"update kernel.py's docstring: {name} {measured}"
