"""Delegation receipts: exact for priced models, None for unpriced, net saving or a reason."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from chimera.economics.receipts import (
    ReceiptLog,
    counterfactual_usd,
    read_receipts,
    summarize_delegations,
)
from chimera.errors import ChimeraError
from chimera.fusion.accounting import CallRecord
from chimera.protocols import Usage

RATES = {"top": (5e-6, 15e-6), "cheap": (0.5e-6, 1.5e-6)}


def price(model: str, p: int, c: int) -> float | None:
    rate = RATES.get(model)
    return None if rate is None else p * rate[0] + c * rate[1]


def call(model: str, p: int, c: int, role: str = "worker") -> CallRecord:
    return CallRecord(role, "w", model, Usage(p, c, price(model, p, c)))


def test_priced_receipts_are_exact_and_the_net_saving_is_computed(tmp_path: Path) -> None:
    log = ReceiptLog(tmp_path / "d.jsonl", "run-7", "top", price=price)
    log.overhead("decompose", [call("top", 100, 20, "decompose")], model="top")
    line = log.delegation(
        "s1",
        "find TTL",
        [call("cheap", 1000, 100), call("cheap", 1100, 90)],
        worker_model="cheap",
        verified=True,
    )
    log.inline("s2", "tiny", [call("top", 50, 10, "inline")], verified=True)
    log.overhead("synthesize", [call("top", 400, 60, "synthesize")], model="top")
    assert line["cost_usd"] == pytest.approx(2100 * 0.5e-6 + 190 * 1.5e-6)
    assert line["inline_cost_usd"] == pytest.approx(2100 * 5e-6 + 190 * 15e-6)
    assert line["inline_model"] == "top" and line["run_id"] == "run-7"
    summary = summarize_delegations(read_receipts(tmp_path / "d.jsonl"))
    overhead = 500 * 5e-6 + 80 * 15e-6
    assert summary.overhead_usd == pytest.approx(overhead)
    assert summary.inline_usd == pytest.approx(50 * 5e-6 + 10 * 15e-6)
    assert summary.net_saving_usd == pytest.approx(
        line["inline_cost_usd"] - line["cost_usd"] - overhead
    )
    assert summary.unknown_prices == []
    text = summary.render()
    assert "run run-7: 1 delegation(s), 1 inline, 0 unverified" in text
    assert "net saving: $" in text


def test_a_loss_is_reported_as_a_loss(tmp_path: Path) -> None:
    log = ReceiptLog(tmp_path / "d.jsonl", "r", "cheap", price=price)
    log.delegation("s", "q", [call("top", 100, 10)], worker_model="top", verified=True)
    assert "net LOSS" in summarize_delegations(read_receipts(tmp_path / "d.jsonl")).render()


def test_an_unpriced_worker_makes_costs_none_and_the_report_says_why(tmp_path: Path) -> None:
    log = ReceiptLog(tmp_path / "d.jsonl", "r", "top", price=price)
    line = log.delegation(
        "s1", "q", [call("local/llama", 900, 80)], worker_model="local/llama", verified=True
    )
    assert line["cost_usd"] is None
    assert line["inline_cost_usd"] == pytest.approx(900 * 5e-6 + 80 * 15e-6)
    summary = summarize_delegations(read_receipts(tmp_path / "d.jsonl"))
    assert summary.net_saving_usd is None and summary.unknown_prices == ["local/llama"]
    assert "cannot be computed: no price is known for local/llama" in summary.render()


def test_an_unpriced_top_model_makes_the_counterfactual_none(tmp_path: Path) -> None:
    log = ReceiptLog(tmp_path / "d.jsonl", "r", "mystery-top", price=price)
    line = log.delegation("s1", "q", [call("cheap", 10, 1)], worker_model="cheap", verified=True)
    assert line["inline_cost_usd"] is None and line["cost_usd"] is not None
    summary = summarize_delegations(read_receipts(tmp_path / "d.jsonl"))
    assert summary.unknown_prices == ["mystery-top"] and summary.net_saving_usd is None
    assert counterfactual_usd([], "mystery-top", price) == 0.0


def test_concurrent_appends_never_interleave_and_a_torn_tail_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    log = ReceiptLog(path, "r", "top", price=price)
    threads = [
        threading.Thread(
            target=lambda i=i: log.delegation(
                f"s{i}", "q" * 500, [call("cheap", 10, 1)], worker_model="cheap", verified=True
            )
        )
        for i in range(20)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(read_receipts(path)) == 20
    with path.open("a") as fh:
        fh.write('{"kind": "deleg')
    assert len(read_receipts(path)) == 20
    path.write_text('{"kind": "x"}\nnot json\n{"kind": "y"}\n')
    with pytest.raises(ChimeraError, match=r"d.jsonl:2: not a JSON receipt"):
        read_receipts(path)


def test_receipts_are_mirrored_into_the_audit_log(tmp_path: Path) -> None:
    from chimera.governance.audit import AuditLog, verify_audit_log

    audit = AuditLog(tmp_path / "audit.jsonl", "r")
    log = ReceiptLog(tmp_path / "d.jsonl", "r", "top", audit=audit, price=price)
    log.delegation("s1", "q", [call("cheap", 10, 1)], worker_model="cheap", verified=False)
    event = json.loads((tmp_path / "audit.jsonl").read_text())
    assert event["event"] == "delegation.receipt" and event["fields"]["verified"] is False
    assert verify_audit_log(tmp_path / "audit.jsonl").ok
