"""Rendering for GitHub: the PR body, the one outcome comment per run, the job summary — and
the hidden markers that keep Chimera's state on GitHub.

Markers are HTML comments holding one JSON object (``<`` and ``>`` escaped, so a value can
never close the comment):

* ``<!-- chimera:pr {...} -->`` in a Chimera PR body: issue, run id, the workflow run and
  artifact holding the run folder, status, who started the run, risk. An approval locates the
  paused run's state through it.
* ``<!-- chimera:queued {...} -->`` in the "queued" comment on an issue: the original labeller
  and the time it was queued (the ChangeQueue's FIFO order).
* ``<!-- chimera:outcome {...} -->`` in every outcome comment: its key makes a retried or
  re-run publish step post it once.

Markers are read only from PR bodies and comments written by Chimera's own identities (the
caller checks the author), and only from their bot-written trailer (the last line), so a
marker pasted into an issue, or forged inside untrusted text, counts for nothing. Every
string that came from a model, a tool or an issue is shown inside a code span
with backticks, pipes and angle brackets neutralised and chat-template tokens stripped
(:func:`chimera.governance.sanitize.sanitize`), so a summary cannot inject links, images or
HTML into a PR body.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from chimera.governance.sanitize import sanitize

if TYPE_CHECKING:
    from chimera.github.report import RunReport

__all__ = [
    "OUTCOME_TITLES",
    "artifact_link",
    "code",
    "outcome_comment",
    "parse_marker",
    "pr_body",
    "render_marker",
]

_WORD = re.compile(r"[a-z_ ]{1,30}")
_MARKER = re.compile(r"<!-- chimera:(?P<kind>[a-z]+) (?P<json>\{[^\n]*\}) -->")

OUTCOME_TITLES: Mapping[str, str] = {
    "pr_opened": "Pull request opened",
    "pr_updated": "Pull request updated",
    "awaiting_approval": "Draft pull request opened: a risky change awaits approval",
    "resumed": "Approved change resumed",
    "spec_not_met": "Spec not met",
    "budget_exhausted": "Budget exhausted",
    "rate_limited": "Rate-limited by GitHub",
    "blocked": "Blocked by governance",
    "hollow": "Hollow success: nothing to publish",
    "held": "Held: a held-out check failed",
    "queued": "Queued",
    "running": "Started",
    "cancelled": "Cancelled",
    "crashed": "Crashed",
    "refused": "Not started",
}


def render_marker(kind: str, data: Mapping[str, Any]) -> str:
    """``<!-- chimera:KIND {json} -->`` with ``<``, ``>`` and ``&`` escaped."""
    text = json.dumps(dict(data), sort_keys=True, separators=(",", ":"))
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return f"<!-- chimera:{kind} {text} -->"


def parse_marker(text: str, kind: str) -> dict[str, Any] | None:
    """The ``kind`` marker's object in the bot-written trailer of ``text``, or ``None``.

    The trailer is the last non-blank line, and it must be exactly one marker: Chimera writes
    every marker last, after any untrusted text (which is fenced with its markers removed),
    so a marker anywhere else — forged in an agent's summary, pasted into evidence — is never
    read, and neither is one that an unterminated comment earlier in the body swallowed.
    """
    lines = [line for line in (text or "").splitlines() if line.strip()]
    if not lines:
        return None
    match = _MARKER.fullmatch(lines[-1].strip())
    if match is None or match.group("kind") != kind:
        return None
    try:
        data = json.loads(match.group("json"))
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def code(value: Any, limit: int = 200) -> str:
    """``value`` as an inert Markdown code span (sanitized, one line, at most ``limit``)."""
    text = sanitize(str(value)).replace("\r", " ").replace("\n", " ")
    text = text.replace("`", "'").replace("|", "\\|").replace("<", "‹").replace(">", "›")
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return f"`{text}`" if text else "` `"


def artifact_link(server_url: str, repository: str, workflow_run: int | str | None) -> str:
    """A link to the workflow run whose artifacts hold the audit log and run state."""
    if not workflow_run:
        return "(no workflow run: a local run)"
    return f"{server_url.rstrip('/')}/{repository}/actions/runs/{workflow_run}"


def _money(cost: float | None) -> str:
    return "unknown (a model without a price)" if cost is None else f"${cost:.4f}"


def _word(value: str) -> str:
    """A status word as is (a bare lowercase word cannot carry Markdown), anything else as a
    code span: the report is untrusted."""
    return value if _WORD.fullmatch(value) else code(value, 40)


def _goal_table(report: RunReport) -> list[str]:
    goal = report.goal
    base_green = set(report.base_green)
    final = report.final_results
    if not goal:
        return ["_No goal requirements recorded._"]
    rows = ["| Requirement | Before | After |", "|---|---|---|"]
    for rid in goal:
        before = "passed" if rid in base_green else "red"
        after = final.get(rid, "not checked")
        rows.append(f"| {code(rid, 80)} | {before} | {_word(after)} |")
    regressed = sorted(r for r in base_green if final and final.get(r, "passed") != "passed")
    if regressed:
        rows.append("")
        rows.append(
            "Regressed (green on the base, red now): " + ", ".join(code(r) for r in regressed)
        )
    if report.unrelated_red:
        rows.append("")
        rows.append(
            "Red on the base and unrelated to this task (reported, not required): "
            + ", ".join(code(r, 60) for r in report.unrelated_red[:20])
        )
    return rows


def _attempts(report: RunReport) -> list[str]:
    if not report.cards:
        return ["_No cards ran._"]
    rows = ["| Card | Status | Attempts | Last note |", "|---|---|---|---|"]
    for card in report.cards:
        note = code(card.notes[-1], 160) if card.notes else ""
        rows.append(f"| {code(card.id, 60)} | {_word(card.status)} | {card.attempts} | {note} |")
    return rows


def _denied(report: RunReport, findings: Sequence[Mapping[str, Any]]) -> list[str]:
    lines = [f"- {code(d.action, 120)} — {code(d.reason, 160)}" for d in report.denied_actions]
    for f in findings:
        lines.append(f"- patch: {code(f.get('path', ''), 100)} — {code(f.get('reason', ''), 160)}")
    return lines or ["None."]


def pr_body(
    *,
    issue: int,
    report: RunReport | None,
    marker: Mapping[str, Any],
    repository: str,
    server_url: str,
    workflow_run: int | str | None,
    awaiting: bool = False,
    audit_summary: str = "",
    findings: Sequence[Mapping[str, Any]] = (),
    risk_reasons: Sequence[str] = (),
    verification: Sequence[str] = (),
    spec_met: bool = True,
    advisory: bool = False,
) -> str:
    """The PR body: the issue link, what the verify job found, goal before/after, attempt
    history, cost and tokens, sandbox mode, actions denied for review, the audit head hash,
    the artifact link, the audit summary, and — last, as the bot-written trailer — the state
    marker.

    ``report`` and ``audit_summary`` are untrusted display data (the agent job wrote them):
    values are shown inside sanitised code spans, the summary inside a fence with its
    comments, markers, mentions and references made inert. What the body asserts
    (``verification``, ``awaiting``, the risk reasons, ``spec_met``, ``advisory``, the
    marker) is the publisher's re-derived decision, passed in.
    """
    from chimera.github.untrusted import fence_block

    if spec_met and not advisory:
        claim = (
            "This change was made by Chimera and is accepted only because the Spec says so: the "
            "verify job rebuilt the goal from the base commit, every goal requirement passed "
            "`check_drift` and nothing that passed before turned red."
        )
    elif advisory:
        claim = (
            "This change was made by Chimera. **Its Spec verdict is advisory: it was not "
            "sandboxed** (`sandbox: scrubbed`), so agent-written code could have influenced it."
        )
    else:
        claim = "This change was made by Chimera. **The Spec is not met yet** (see below)."
    lines = [f"Closes #{issue}.", "", claim, ""]
    lines += [f"- {line}" for line in verification]
    if verification:
        lines.append("")
    if awaiting:
        lines += [
            "> [!IMPORTANT]",
            "> This change is held for a person: one with write access, other than the one who "
            "started the run, must **approve this PR's head commit**. Then CI starts on that "
            "commit (and a paused run resumes).",
            "",
        ]
        if risk_reasons:
            lines += ["Why it is risky: " + "; ".join(code(r, 160) for r in risk_reasons), ""]
    if report is not None:
        lines += _report_sections(report, findings)
    else:
        lines += ["_The agent job's run report is missing or unreadable._", ""]
    lines += [
        f"- Artifacts (audit log, run state, attempt history, spec report): "
        f"{artifact_link(server_url, repository, workflow_run)}",
        "",
    ]
    if audit_summary.strip():
        lines += [
            "<details><summary>Audit summary (written by the agent job: untrusted)</summary>",
            "",
            fence_block(audit_summary.strip(), info="markdown"),
            "",
            "</details>",
            "",
        ]
    lines.append(render_marker("pr", marker))
    return "\n".join(lines)


def _report_sections(report: RunReport, findings: Sequence[Mapping[str, Any]]) -> list[str]:
    """The agent job's report (display data), each value in a sanitised code span."""
    head = code(report.audit_head or "(none)", 80).strip("`")
    stop_reason = report.stop_reason.value if report.stop_reason else ""
    lines = [
        f"**Run** {code(report.run_id, 60)} · the agent job reports status "
        f"**{report.status.value}** ({code(stop_reason, 40)}: {code(report.stop_detail, 200)})",
        "",
    ]
    if report.pending_approval:
        pending = ", ".join(code(p, 60) for p in report.pending_approval)
        lines += [f"Held for approval in the run: {pending}.", ""]
    lines += ["### Goal requirements (as the agent job reports them)", "", *_goal_table(report)]
    lines += ["", "### Attempt history", "", *_attempts(report), ""]
    lines += [
        "### Cost and safety",
        "",
        f"- Tokens: {report.tokens} · cost: {_money(report.cost_usd)}",
        f"- Sandbox: {code(report.sandbox_mode or 'unknown', 60)}"
        + (" · task text was untrusted (tainted run)" if report.tainted else ""),
        "- Actions denied or flagged for review:",
        *[f"  {line}" for line in _denied(report, findings)],
        f"- Agent audit log head hash: `{head}` (verify with `chimera audit verify audit.jsonl "
        f"--head {head}`; a mismatch with the agent job's output means the log was cut or "
        "altered in transit)",
    ]
    return lines


def outcome_comment(
    kind: str,
    *,
    issue: int,
    key: str,
    detail: str,
    link: str | None = None,
    report: RunReport | None = None,
    run_link: str | None = None,
) -> str:
    """The one comment on the issue for a run's outcome (``kind`` from :data:`OUTCOME_TITLES`).

    ``detail`` is Chimera's own sentence; parts of it that came from outside must already be
    wrapped with :func:`code`. ``report`` (untrusted display data) adds the run's tokens, cost
    and audit head.
    """
    title = OUTCOME_TITLES.get(kind, kind)
    lines = [f"**Chimera: {title}.**", "", detail]
    if link:
        lines += ["", link]
    if report is not None:
        head = code(report.audit_head or "(none)", 80).strip("`")
        lines += [
            "",
            f"Run {code(report.run_id, 60)}: {report.tokens} tokens, "
            f"{_money(report.cost_usd)}; audit head `{head}`.",
        ]
    if run_link:
        lines += ["", f"Workflow run and artifacts: {run_link}"]
    # The key finds this comment again (chimera.github.outcome); the kind says whether a later
    # attempt of the same run edits it in place.
    lines += ["", render_marker("outcome", {"issue": issue, "key": key, "kind": kind})]
    return "\n".join(lines)
