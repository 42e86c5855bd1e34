"""The PR body and the outcome comment, as :class:`~chimera.github.conversation.render.Document`\\
s.

What the writing job re-derived (verify's outputs as publish re-hashed them, the risk it
computed, the links it built, its own sentence about the outcome) is trusted; the agent job's
run report and audit summary are untrusted display data, shown only through the renderer's
inert values and fences. Features add their own sections through ``sections``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from chimera.github.conversation.render import (
    Document,
    Line,
    Section,
    Span,
    Trust,
    trusted,
    untrusted,
)
from chimera.github.trust.summary import OUTCOME_TITLES, artifact_link

if TYPE_CHECKING:
    from chimera.github.trust.report import RunReport

__all__ = ["ADOPTED_ACCEPTANCE", "adopted_section", "outcome_comment", "pr_body"]

ADOPTED_ACCEPTANCE = "adopted the issue's edited acceptance"
"""What a re-run that took the issue's edited acceptance block as its goal says it did."""
_DIGEST = re.compile(r"[0-9a-f]{64}")

_SPEC_MET = (
    "This change was made by Chimera and is accepted only because the Spec says so: the "
    "verify job rebuilt the goal from the base commit, every goal requirement passed "
    "`check_drift` and nothing that passed before turned red."
)
_ADVISORY = (
    "This change was made by Chimera. **Its Spec verdict is advisory: it was not "
    "sandboxed** (`sandbox: scrubbed`), so agent-written code could have influenced it."
)
_UNMET = "This change was made by Chimera. **The Spec is not met yet** (see below)."
_HELD = (
    "> [!IMPORTANT]\n> This change is held for a person: one with write access, other than the "
    "one who started the run, must **approve this PR's head commit**. Then CI starts on that "
    "commit (and a paused run resumes)."
)


def _money(cost: float | None) -> str:
    return "unknown (a model without a price)" if cost is None else f"${cost:.4f}"


def _slots(n: int) -> str:
    return ", ".join(["{}"] * n)


def _goal(report: RunReport) -> list[Line]:
    goal, final = report.goal, report.final_results
    if not goal:
        return [Line("_No goal requirements recorded._")]
    base_green = set(report.base_green)
    rows = [Line("| Requirement | Before | After |"), Line("|---|---|---|")]
    for rid in goal:
        before = "passed" if rid in base_green else "red"
        rows.append(
            Line(
                "| {} | {} | {} |", (Span(rid, 80), before, Span(final.get(rid, "not checked"), 40))
            )
        )
    regressed = sorted(r for r in base_green if final and final.get(r, "passed") != "passed")
    if regressed:
        rows += [
            Line(""),
            Line(
                "Regressed (green on the base, red now): " + _slots(len(regressed)),
                tuple(regressed),
            ),
        ]
    if report.unrelated_red:
        red = [Span(r, 60) for r in report.unrelated_red[:20]]
        rows += [
            Line(""),
            Line(
                "Red on the base and unrelated to this task (reported, not required): "
                + _slots(len(red)),
                tuple(red),
            ),
        ]
    return rows


def _attempts(report: RunReport) -> list[Line]:
    if not report.cards:
        return [Line("_No cards ran._")]
    rows = [Line("| Card | Status | Attempts | Last note |"), Line("|---|---|---|---|")]
    for card in report.cards:
        note = (Span(card.notes[-1], 160),) if card.notes else ()
        rows.append(
            Line(
                "| {} | {} | {} | " + ("{}" if note else "") + " |",
                (Span(card.id, 60), Span(card.status, 40), card.attempts, *note),
            )
        )
    return rows


def _cost(report: RunReport, findings: Sequence[Mapping[str, Any]]) -> list[Line]:
    head = report.audit_head or "(none)"
    denied = [
        Line("  - {} — {}", (Span(d.action, 120), Span(d.reason, 160)))
        for d in report.denied_actions
    ]
    denied += [
        Line("  - patch: {} — {}", (Span(f.get("path", ""), 100), Span(f.get("reason", ""), 160)))
        for f in findings
    ]
    return [
        Line("- Tokens: {} · cost: " + _money(report.cost_usd), (report.tokens,)),
        Line(
            "- Sandbox: {}"
            + (" · task text was untrusted (tainted run)" if report.tainted else ""),
            (Span(report.sandbox_mode or "unknown", 60),),
        ),
        Line("- Actions denied or flagged for review:"),
        *(denied or [Line("  None.")]),
        Line(
            "- Agent audit log head hash: {} (verify with {}; a mismatch with the agent job's "
            "output means the log was cut or altered in transit)",
            (Span(head, 80), Span(f"chimera audit verify audit.jsonl --head {head}", 200)),
        ),
    ]


def _report(report: RunReport, findings: Sequence[Mapping[str, Any]]) -> list[Section]:
    stop = report.stop_reason.value if report.stop_reason else ""
    run = [
        Line(
            "**Run** {} · the agent job reports status **{}** ({}: {})",
            (
                Span(report.run_id, 60),
                report.status.value,
                Span(stop, 40),
                Span(report.stop_detail, 200),
            ),
        )
    ]
    if report.pending_approval:
        held = [Span(p, 60) for p in report.pending_approval]
        run += [
            Line(""),
            Line("Held for approval in the run: " + _slots(len(held)) + ".", tuple(held)),
        ]
    u = Trust.UNTRUSTED
    return [
        Section("report", u, lines=tuple(run)),
        Section(
            "report",
            u,
            title="Goal requirements (as the agent job reports them)",
            lines=tuple(_goal(report)),
        ),
        Section("report", u, title="Attempt history", lines=tuple(_attempts(report))),
        Section("cost", u, title="Cost and safety", lines=tuple(_cost(report, findings))),
    ]


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
    sections: Sequence[Section] = (),
) -> str:
    """The PR body: the issue link, the claim and what the verify job found (trusted), the
    hold for approval with publish's risk reasons, the agent job's report — goal before and
    after, attempt history, cost and tokens, sandbox, denied actions, audit head — and its
    audit summary (untrusted), the artifact link, ``sections`` added by features, and the
    state marker as the trailer.

    ``verification`` lines are Chimera's own Markdown (publish built them from verify's
    outputs); everything from ``report`` and ``audit_summary`` is display data.
    """
    claim = _ADVISORY if advisory else _SPEC_MET if spec_met else _UNMET
    doc = Document(f"Closes #{issue}.", "pr", marker).add(trusted("claim", claim), *sections)
    if verification:
        doc.add(trusted("verification", "\n".join(f"- {line}" for line in verification)))
    if awaiting:
        doc.add(trusted("risk", _HELD))
        if risk_reasons:
            why = Line(
                "Why it is risky: " + "; ".join(["{}"] * len(risk_reasons)),
                tuple(Span(r, 160) for r in risk_reasons),
            )
            doc.add(Section("risk", Trust.TRUSTED, lines=(why,)))
    if report is not None:
        doc.add(*_report(report, findings))
    else:
        doc.add(trusted("report", "_The agent job's run report is missing or unreadable._"))
    link = artifact_link(server_url, repository, workflow_run)
    doc.add(
        trusted(
            "artifacts", f"- Artifacts (audit log, run state, attempt history, spec report): {link}"
        )
    )
    if audit_summary.strip():
        summary = untrusted(
            "audit",
            audit_summary,
            title="Audit summary (written by the agent job: untrusted)",
            info="markdown",
        )
        doc.add(replace(summary, collapsed=True))
    return doc.render()


def adopted_section(before: str, now: str) -> Section | None:
    """The trusted line saying a re-run adopted the issue's edited acceptance, from the
    digest the PR's marker recorded (``before``) to the one this run's goal was rebuilt from
    (``now``), both SHA-256 hex; ``None`` when they are equal or either is not a digest (a
    marker edited by hand carries no Markdown through)."""
    if not (_DIGEST.fullmatch(before) and _DIGEST.fullmatch(now)) or before == now:
        return None
    return trusted(
        "detail",
        f"This re-run {ADOPTED_ACCEPTANCE}: its goal was rebuilt from the issue's acceptance "
        f"block as this run read it (`{now[:16]}`), not the one the PR's earlier run recorded "
        f"(`{before[:16]}`).",
    )


def outcome_comment(
    kind: str,
    *,
    issue: int,
    key: str,
    detail: str,
    link: str | None = None,
    report: RunReport | None = None,
    run_link: str | None = None,
    sections: Sequence[Section] = (),
) -> str:
    """The one comment on the issue for a run's outcome (``kind`` from
    :data:`~chimera.github.trust.summary.OUTCOME_TITLES`).

    ``detail`` is Chimera's own sentence (trusted); parts of it that came from outside must
    already be code spans (:func:`~chimera.github.trust.summary.code`). ``report`` (untrusted)
    adds the run's tokens, cost and audit head; ``sections`` are features' own. The trailer's
    key finds this comment again (:mod:`chimera.github.conversation.outcome`); its kind says whether
    a later attempt of the same run edits it in place.
    """
    title = OUTCOME_TITLES.get(kind, kind)
    marker = {"issue": issue, "key": key, "kind": kind}
    doc = Document(f"**Chimera: {title}.**", "outcome", marker).add(
        trusted("detail", detail), *sections
    )
    if link:
        doc.add(trusted("link", link))
    if report is not None:
        line = Line(
            "Run {}: {} tokens, " + _money(report.cost_usd) + "; audit head {}.",
            (Span(report.run_id, 60), report.tokens, Span(report.audit_head or "(none)", 80)),
        )
        doc.add(Section("cost", Trust.UNTRUSTED, lines=(line,)))
    if run_link:
        doc.add(trusted("artifacts", f"Workflow run and artifacts: {run_link}"))
    return doc.render()
