"""What an issue's runs cost, for ``@chimera status``: tokens and USD from each finished run's
artifact — the run report's counters (the run state's, as the agent job wrote them) and its
delegation receipts (``delegations.jsonl``), as
the economics layer records them.

The command job holds no checkout and no run folder: it downloads the artifact of each
workflow run Chimera's "working on it" comments name (the agent job uploads it when it ends;
a run still in its agent job has none yet, and says so). The artifact is untrusted display
data: only numbers are read from it, and a malformed one counts as "unknown".
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chimera.errors import ChimeraError, GitHubApiError

if TYPE_CHECKING:
    from chimera.github.client.client import GitHubClient
    from chimera.github.trust.settings import ActionSettings

__all__ = [
    "MAX_RUNS",
    "RUN_KINDS",
    "RunCost",
    "cost_lines",
    "latest_artifact",
    "run_cost",
    "spending_runs",
]

# Runs whose artifacts one status reply downloads at most (newest first).
MAX_RUNS = 5
# The outcome comments a run that reached its agent job leaves: "running" (decide's, until
# publish edits it) and publish's own. Command replies (status, refusals) are not runs.
RUN_KINDS = frozenset(
    {
        "running",
        "pr_opened",
        "pr_updated",
        "awaiting_approval",
        "resumed",
        "spec_not_met",
        "budget_exhausted",
        "blocked",
        "hollow",
    }
)


def spending_runs(client: GitHubClient, settings: ActionSettings, issue: int) -> list[int]:
    """The workflow runs Chimera's own outcome comments on ``issue`` name (kinds in
    :data:`RUN_KINDS`), newest first; anyone else's comment is never read.

    Raises:
        GitHubError: the API failed after retries.
    """
    from chimera.github.trust.summary import parse_marker

    found: list[int] = []
    for _cid, author, body in client.comments(issue):
        if not settings.is_self(author):
            continue
        marker = parse_marker(body, "outcome")
        if not marker or marker.get("issue") != issue or marker.get("kind") not in RUN_KINDS:
            continue
        run = str(marker.get("key") or "").split(":", 1)[0]
        if run.isdigit():
            found.append(int(run))
    return list(dict.fromkeys(reversed(found)))


@dataclass(frozen=True)
class RunCost:
    """One workflow run's spend.

    Attributes:
        workflow_run: the workflow run's id.
        finished: its artifact exists (the agent job ended); else the other fields are zero.
        tokens: tokens the run spent (the run state's counter).
        cost_usd: USD the run spent; ``None`` for a model without a price or an unreadable
            state.
        delegated_usd: USD of its delegation receipts (``None``: unknown price; ``0.0``: no
            delegation).
        receipts: how many receipts it wrote.
    """

    workflow_run: int
    finished: bool
    tokens: int = 0
    cost_usd: float | None = None
    delegated_usd: float | None = 0.0
    receipts: int = 0


def latest_artifact(client: GitHubClient, workflow_run: int, base: str) -> str | None:
    """The name of the newest agent artifact of ``workflow_run``:
    ``<base>-attempt-<n>-<nonce>`` (or, from Actions versions before the nonce,
    ``<base>-attempt-<n>``) with the highest ``n`` (a re-run job uploads its own), else
    ``base`` itself (a local run's); ``None`` when it has neither (the agent job has not
    ended).

    Raises:
        GitHubError: the API failed after retries.
    """
    url = f"/repos/{client.repository}/actions/runs/{workflow_run}/artifacts?per_page=100"

    def get() -> Any:
        return client._raw("GET", url)

    listing = client._call(f"GET artifacts of run {workflow_run}", get)
    items = listing.get("artifacts", []) if isinstance(listing, dict) else []
    names = {str(a.get("name")) for a in items if isinstance(a, dict) and not a.get("expired")}
    pattern = re.compile(re.escape(base) + r"-attempt-(\d+)(?:-[0-9a-f]{16})?")
    attempts = [(int(m.group(1)), n) for n in names if (m := pattern.fullmatch(n))]
    if attempts:
        return max(attempts)[1]
    return base if base in names else None


def run_cost(client: GitHubClient, workflow_run: int, artifact: str, folder: Path) -> RunCost:
    """Download the newest agent artifact of ``workflow_run`` (``artifact`` is the base name,
    see :func:`latest_artifact`) into ``folder`` (removed again) and read its counters;
    ``finished=False`` when the run has none yet.

    Raises:
        GitHubError: the API failed after retries (other than a missing artifact).
    """
    from chimera.economics.receipts import RECEIPTS_FILE, read_receipts, summarize_delegations
    from chimera.github.trust.report import read_report

    name = latest_artifact(client, workflow_run, artifact)
    if name is None:
        return RunCost(workflow_run, finished=False)
    try:
        client.download_artifact(workflow_run, name, folder)
    except GitHubApiError as exc:
        if exc.status != 404:
            raise
        return RunCost(workflow_run, finished=False)
    try:
        try:
            report = read_report(folder)  # typed, version-checked; display data
        except ChimeraError:
            report = None
        path = folder / "run" / RECEIPTS_FILE
        try:
            # Never through a link the artifact planted (the folder or the file).
            linked = path.parent.is_symlink() or path.is_symlink()
            receipts = read_receipts(path) if path.is_file() and not linked else []
        except ChimeraError:  # unreadable receipts are display data gone bad, not a crash
            receipts = []
        summary = summarize_delegations(receipts)
        return RunCost(
            workflow_run,
            finished=True,
            tokens=report.tokens if report is not None else 0,
            cost_usd=report.cost_usd if report is not None else None,
            delegated_usd=summary.delegated_usd,
            receipts=len(receipts),
        )
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _usd(value: float | None) -> str:
    return "unknown" if value is None else f"${value:.4f}"


def cost_lines(costs: list[RunCost]) -> list[str]:
    """The status reply's cost lines (Markdown bullets) for ``costs``, newest first."""
    done = [c for c in costs if c.finished]
    running = [c for c in costs if not c.finished]
    lines: list[str] = []
    if done:
        tokens = sum(c.tokens for c in done)
        usd: float | None = 0.0
        for c in done:
            usd = None if usd is None or c.cost_usd is None else usd + c.cost_usd
        lines.append(
            f"- cost so far: {tokens:,} tokens, {_usd(usd)} over {len(done)} finished run(s)"
        )
        for c in done:
            receipts = (
                f"; {c.receipts} delegation receipt(s), {_usd(c.delegated_usd)} delegated"
                if c.receipts
                else ""
            )
            lines.append(
                f"  - run {c.workflow_run}: {c.tokens:,} tokens, {_usd(c.cost_usd)}{receipts}"
            )
    for c in running:
        lines.append(
            f"- run {c.workflow_run}: still in its agent job, or ended before it (no run "
            "artifact yet; its job log prints each attempt's tokens and cost)"
        )
    return lines
