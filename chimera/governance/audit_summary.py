"""The readable Markdown summary of a run's audit log (:func:`render_audit_summary`).

``chimera audit show`` prints it; the Action's agent job puts it in the job summary and the
artifact the PR body quotes. It shows trust verdicts, actions denied for review, tool calls,
attempts, costs, check results, taint, and the head hash with the chain's verification.

Every string that came from a model, a tool or an issue is shown inside a code span with
``|``, backticks and angle brackets neutralised and chat-template tokens stripped, so the
summary cannot be used to inject Markdown links, images (tracking pixels) or HTML into a PR
body.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from chimera.governance.audit_chain import AuditVerification, verify_audit_log
from chimera.governance.redactor import cut_redacted
from chimera.governance.sanitize import sanitize

__all__ = ["render_audit_summary"]

_CELL = 160


def _code(value: Any, limit: int = _CELL) -> str:
    """Untrusted text as a safe inline code span for a Markdown table cell."""
    text = sanitize(str(value))
    text = " ".join(text.split())
    if len(text) > limit:
        text = cut_redacted(text, limit - 1) + "…"  # redacted before the cut
    text = text.replace("`", "ʼ").replace("|", "\\|").replace("<", "‹").replace(">", "›")
    return f"`{text}`" if text else ""


def _num(value: Any) -> str:
    if value is None:
        return "unknown"
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


def _read_events(path: Path) -> tuple[list[dict[str, Any]], int]:
    """The parseable events, and the count of lines that were not."""
    events: list[dict[str, Any]] = []
    bad = 0
    with path.open("rb") as handle:
        for raw in handle:
            if not raw.strip():
                continue
            try:
                entry = json.loads(raw)
            except (ValueError, UnicodeDecodeError):
                bad += 1
                continue
            if isinstance(entry, dict) and isinstance(entry.get("fields", {}), dict):
                events.append(entry)
            else:
                bad += 1
    return events, bad


def _table(headers: Iterable[str], rows: Iterable[Iterable[str]]) -> list[str]:
    head = list(headers)
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines.extend("| " + " | ".join(row) + " |" for row in rows)
    return lines


def render_audit_summary(path: Path, head: str | None = None) -> str:
    """A Markdown summary of the audit log at ``path``.

    Args:
        path: the audit JSONL file.
        head: the head hash recorded for the run; when given the summary says whether the log
            still ends there.

    Returns:
        Markdown text (ends with a newline). Sections without events are omitted, except the
        verification and head hash, which are always present.
    """
    verification = verify_audit_log(path, head=head)
    events, unreadable = _read_events(path)
    by_event: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for entry in events:
        by_event[str(entry.get("event", ""))].append(entry.get("fields") or {})
    run_ids = sorted({str(e.get("run_id", "")) for e in events if e.get("run_id")})
    out: list[str] = [f"## Chimera audit — run {_code(', '.join(run_ids) or 'unknown', 80)}", ""]
    out.extend(_verification_lines(path, verification, head, len(events), unreadable))
    if events:
        first, last = events[0].get("ts", "?"), events[-1].get("ts", "?")
        out.append(f"- Time: {_code(first, 40)} → {_code(last, 40)}")
    out.append("")
    out.extend(_outcome(by_event))
    out.extend(_verdicts(by_event))
    out.extend(_tool_calls(by_event))
    out.extend(_attempts(by_event))
    out.extend(_costs(by_event))
    out.extend(_checks(by_event))
    out.extend(_taint(by_event))
    shown = {
        "trust_verdict",
        "tool_call",
        "attempt",
        "attempt_started",
        "model_call",
        "check",
        "check_result",
        "budget_refused",
        "budget_stop",
        "run_started",
        "run_finished",
        "taint_source",
        "split_flow",
        "allowlist_narrowed",
        "secret_redacted",
    }
    others = Counter({k: len(v) for k, v in by_event.items() if k not in shown})
    if others:
        out += ["### Other events", ""]
        out += _table(
            ["event", "count"], ([_code(k, 60), str(n)] for k, n in sorted(others.items()))
        )
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


def _verification_lines(
    path: Path, v: AuditVerification, head: str | None, count: int, unreadable: int
) -> list[str]:
    lines = [f"- Log: `{path.name}`, {count} event(s)"]
    if v.ok:
        tail = " and ends at the recorded head" if head else ""
        lines.append(f"- Hash chain: **verified**{tail}")
    else:
        lines.append(f"- Hash chain: **NOT verified** ({len(v.problems)} problem(s))")
        lines.extend(f"  - {_code(p, 200)}" for p in v.problems[:20])
        if len(v.problems) > 20:
            lines.append(f"  - … and {len(v.problems) - 20} more")
    if unreadable:
        lines.append(f"- Unreadable lines: {unreadable}")
    lines.append(f"- Head hash: `{v.head_hash or 'none'}`")
    if head and head != v.head_hash:
        lines.append(f"- Recorded head: `{_code(head, 80).strip('`')}`")
    return lines


def _outcome(by_event: Mapping[str, list[Mapping[str, Any]]]) -> list[str]:
    started = by_event.get("run_started", [])
    finished = by_event.get("run_finished", [])
    if not started and not finished:
        return []
    lines = ["### Run", ""]
    if started:
        first = started[0]
        lines.append(f"- Tainted input: {'yes' if first.get('tainted') else 'no'}")
        if first.get("sandbox"):
            weaker = " (weaker mode)" if first.get("sandbox_weaker") else ""
            lines.append(f"- Sandbox: {_code(first.get('sandbox'), 40)}{weaker}")
    if finished:
        last = finished[-1]
        lines.append(f"- Outcome: {_code(last.get('outcome', 'unknown'), 60)}")
        if "attempts" in last:
            lines.append(f"- Attempts: {_num(last.get('attempts'))}")
    else:
        lines.append("- Outcome: the run did not record an end (still running, or interrupted)")
    lines.append("")
    return lines


def _verdicts(by_event: Mapping[str, list[Mapping[str, Any]]]) -> list[str]:
    verdicts = by_event.get("trust_verdict", [])
    if not verdicts:
        return []
    counts = Counter(str(v.get("verdict", "?")) for v in verdicts)
    order = ["allow", "warn", "review", "block"]
    lines = ["### Trust verdicts", ""]
    lines += _table(order, [[str(counts.get(o, 0)) for o in order]])
    lines.append("")
    denied = [v for v in verdicts if v.get("verdict") in ("review", "block")]
    if denied:
        lines += [
            f"### Denied actions for review ({len(denied)})",
            "",
            "Not executed; the reason was returned to the agent.",
            "",
        ]
        rows = []
        for i, v in enumerate(denied, 1):
            action = v.get("action") or {}
            summary = (
                action.get("command")
                or ", ".join(action.get("paths") or [])
                or action.get("url", "")
            )
            rows.append(
                [
                    str(i),
                    str(v.get("verdict")),
                    _code(v.get("tool", ""), 40),
                    _code(summary, 120),
                    _code(", ".join(v.get("rule_ids") or []), 80),
                    _code("; ".join(v.get("reasons") or []), 200),
                ]
            )
        lines += _table(["#", "verdict", "tool", "action", "rules", "reason"], rows)
        lines.append("")
    redactions = by_event.get("secret_redacted", [])
    if redactions:
        names = sorted({str(n) for r in redactions for n in (r.get("names") or [])})
        lines += [
            f"- Secrets redacted from tool output: {len(redactions)} time(s) "
            f"({_code(', '.join(names), 160)})",
            "",
        ]
    warned = [v for v in verdicts if v.get("verdict") == "warn"]
    if warned:
        lines += [f"### Warnings ({len(warned)})", ""]
        lines += [
            f"- {_code(v.get('tool', ''), 40)}: {_code('; '.join(v.get('reasons') or []), 200)}"
            for v in warned[:50]
        ]
        lines.append("")
    return lines


def _tool_calls(by_event: Mapping[str, list[Mapping[str, Any]]]) -> list[str]:
    calls = by_event.get("tool_call", [])
    if not calls:
        return []
    per_tool: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for call in calls:
        stats = per_tool[str(call.get("name", "?"))]
        stats[0] += 1
        if not call.get("ok", True):
            stats[1] += 1
    lines = [f"### Tool calls ({len(calls)})", ""]
    lines += _table(
        ["tool", "calls", "failed"],
        ([_code(name, 60), str(n), str(f)] for name, (n, f) in sorted(per_tool.items())),
    )
    lines.append("")
    return lines


def _attempts(by_event: Mapping[str, list[Mapping[str, Any]]]) -> list[str]:
    attempts = by_event.get("attempt", [])
    if not attempts:
        return []
    lines = [f"### Attempts ({len(attempts)})", ""]
    rows = []
    for a in attempts:
        rows.append(
            [
                _num(a.get("number", a.get("attempt"))),
                _code(a.get("verdict", "?"), 40),
                _code(a.get("cause", "") or a.get("signature", ""), 160),
                _num(a.get("tokens")),
                _num(a.get("cost_usd")),
            ]
        )
    lines += _table(["#", "verdict", "cause", "tokens", "cost (USD)"], rows)
    lines.append("")
    return lines


def _costs(by_event: Mapping[str, list[Mapping[str, Any]]]) -> list[str]:
    calls = by_event.get("model_call", [])
    refused = by_event.get("budget_refused", []) + by_event.get("budget_stop", [])
    if not calls and not refused:
        return []
    per_model: dict[str, dict[str, Any]] = {}
    for call in calls:
        stats = per_model.setdefault(
            str(call.get("model", "?")), {"calls": 0, "prompt": 0, "completion": 0, "cost": 0.0}
        )
        stats["calls"] += 1
        stats["prompt"] += int(call.get("prompt_tokens") or 0)
        stats["completion"] += int(call.get("completion_tokens") or 0)
        cost = call.get("cost_usd")
        stats["cost"] = None if cost is None or stats["cost"] is None else stats["cost"] + cost
    lines = ["### Costs", ""]
    if calls:
        rows = [
            [_code(m, 60), str(s["calls"]), str(s["prompt"]), str(s["completion"]), _num(s["cost"])]
            for m, s in sorted(per_model.items())
        ]
        total_cost: float | None = 0.0
        for s in per_model.values():
            total_cost = None if total_cost is None or s["cost"] is None else total_cost + s["cost"]
        rows.append(
            [
                "**total**",
                str(len(calls)),
                str(sum(s["prompt"] for s in per_model.values())),
                str(sum(s["completion"] for s in per_model.values())),
                _num(total_cost),
            ]
        )
        lines += _table(
            ["model", "calls", "prompt tokens", "completion tokens", "cost (USD)"], rows
        )
        lines.append("")
    if refused:
        lines.append(f"- Budget refusals: {len(refused)} (calls refused before sending)")
        lines.append("")
    return lines


def _checks(by_event: Mapping[str, list[Mapping[str, Any]]]) -> list[str]:
    checks = by_event.get("check", []) + by_event.get("check_result", [])
    if not checks:
        return []
    lines = [f"### Check results ({len(checks)} evaluation(s))", ""]
    rows = []
    for c in checks:
        results = c.get("results") or []
        if not isinstance(results, list):
            continue
        statuses = Counter(str(r.get("status", "?")) for r in results if isinstance(r, dict))
        red = [
            str(r.get("id"))
            for r in results
            if isinstance(r, dict) and r.get("status") in ("failed", "error")
        ]
        rows.append(
            [
                _code(c.get("phase", ""), 30),
                _num(c.get("attempt")),
                str(statuses.get("passed", 0)),
                str(statuses.get("failed", 0) + statuses.get("error", 0)),
                _code(", ".join(red), 160),
            ]
        )
    lines += _table(["phase", "attempt", "passed", "red", "red requirements"], rows)
    lines.append("")
    return lines


def _taint(by_event: Mapping[str, list[Mapping[str, Any]]]) -> list[str]:
    sources = by_event.get("taint_source", [])
    flows = by_event.get("split_flow", [])
    if not sources and not flows:
        return []
    lines = ["### Untrusted input", ""]
    for s in sources:
        lines.append(
            f"- {_code(s.get('id', ''), 20)} {_code(s.get('kind', ''), 30)} "
            f"{_code(s.get('label', ''), 80)} ({_num(s.get('chars'))} chars)"
        )
    for f in flows:
        src, sink = f.get("source") or {}, f.get("sink") or {}
        lines.append(
            f"- split flow: {_code(src.get('agent', ''), 30)} ingested "
            f"{_code(src.get('detail', ''), 80)}; {_code(sink.get('agent', ''), 30)} then "
            f"{_code(sink.get('capability', ''), 20)} {_code(sink.get('detail', ''), 80)}"
        )
    lines.append("")
    return lines
