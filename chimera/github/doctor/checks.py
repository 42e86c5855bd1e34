"""``chimera doctor``'s checks: a live repository's Chimera set-up, read through the REST API.

Each check is one :class:`Finding`: ``ok``, ``fail`` (with the fix), or ``unknown`` when the
token may not read what the check needs (it says what it could not see, and where a person
looks instead). The checks, in order:

* **caller**: a workflow in ``.github/workflows/`` calls Chimera (:mod:`.doctor_caller`),
  pinned to a 40-hex commit;
* **labels**: the trigger label exists (decide only runs once an issue carries it); the other
  labels are created by decide on first use, or now with ``--fix``;
* **pr-setting**: "Allow GitHub Actions to create and approve pull requests"
  (``GET .../actions/permissions/workflow``: an admin's token);
* **secrets**: each secret the caller names exists, in the repository or shared by its
  organization (``GET .../actions/secrets``: a token that may list secrets);
* **protection**: the default branch requires the Spec check, through a ruleset (readable
  with read access) or branch protection (an admin's token);
* **app**: a GitHub App is installed on the repository with the permissions Chimera's jobs
  ask for — visible only to a person's token of the account (or organization owner) that
  installed it; a caller that passes no App secrets is the GITHUB_TOKEN-only tier, reported
  as such, never as a failure.

Findings are data for :mod:`chimera.cli.doctor`, which prints them. What the API answers is
shown cut short: a label or file name is text anyone with write access chose.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING
from urllib.parse import quote

from chimera.errors import GitHubNotFound, GitHubPermissionDenied
from chimera.github.doctor.access import check_app, check_protection
from chimera.github.doctor.caller import ChimeraUse, scan_workflow
from chimera.github.doctor.report import (
    DEFAULT_SECRETS,
    DoctorContext,
    DoctorOptions,
    DoctorReport,
    Finding,
    Mark,
    short,
)
from chimera.github.queue.labels import chimera_labels, ensure_labels

if TYPE_CHECKING:
    from chimera.github.client.client import GitHubClient

__all__ = ["DoctorOptions", "DoctorReport", "Finding", "Mark", "diagnose"]

WORKFLOWS = ".github/workflows"
_MAX_FILES = 60


def diagnose(client: GitHubClient, options: DoctorOptions | None = None) -> DoctorReport:
    """Check ``client``'s repository (see the module docstring).

    Raises:
        GitHubNotFound: no such repository, or the token may not see it.
        GitHubPermissionDenied: the token was refused (bad or expired).
        GitHubError: the API failed after retries (a network error included).
    """
    opts = options or DoctorOptions()
    repo = client._call(
        f"GET repository {client.repository}",
        lambda: client._raw("GET", f"/repos/{client.repository}"),
    )
    ctx = DoctorContext(client, opts, repo if isinstance(repo, dict) else {})
    checks: tuple[Callable[[DoctorContext], Finding], ...] = (
        _caller, _labels, _pr_setting, _secrets, check_protection, check_app,
    )  # fmt: skip
    findings = tuple(check(ctx) for check in checks)
    return DoctorReport(ctx.name, ctx.branch, findings, tuple(ctx.fixed))


# -- caller ------------------------------------------------------------------------------------


def _read_workflows(ctx: DoctorContext) -> list[tuple[str, str]] | None:
    """``(path, text)`` of each workflow file on the default branch; ``None``: no folder;
    ``[]`` also when the token may not read the repository's contents."""
    import base64
    import binascii

    base = f"/repos/{ctx.name}/contents/{WORKFLOWS}?ref={quote(ctx.branch)}"
    try:
        listing = ctx.get(f"GET {WORKFLOWS}", base)
    except GitHubNotFound:
        return None
    except GitHubPermissionDenied:
        return []  # the caller says what it could not read
    files = [
        str(e.get("path"))
        for e in (listing if isinstance(listing, list) else [])
        if isinstance(e, dict)
        and e.get("type") == "file"
        and str(e.get("name", "")).endswith((".yml", ".yaml"))
    ][:_MAX_FILES]
    out = []
    for path in files:
        url = f"/repos/{ctx.name}/contents/{quote(path)}?ref={quote(ctx.branch)}"
        try:
            data = ctx.get(f"GET {path}", url)
            text = base64.b64decode(str(data.get("content") or "")).decode("utf-8-sig")
        except (GitHubNotFound, binascii.Error, UnicodeDecodeError, AttributeError):
            continue
        out.append((path, text))
    return out


def _can_read_contents(ctx: DoctorContext) -> bool:
    try:
        ctx.get("GET contents", f"/repos/{ctx.name}/contents/?ref={quote(ctx.branch)}")
    except GitHubPermissionDenied:
        return False
    except GitHubNotFound:
        return True  # an empty repository: nothing to read, and no refusal
    return True


def _use_line(use: ChimeraUse) -> str:
    return f"{use.path} ({use.job}): {short(use.target, 120)}"


def _caller(ctx: DoctorContext) -> Finding:
    init = "run `chimera init --github` and commit .github/workflows/chimera.yml"
    try:
        files = _read_workflows(ctx)
    except GitHubPermissionDenied:
        files = []
    if files == [] and not _can_read_contents(ctx):
        return Finding(
            "caller",
            Mark.UNKNOWN,
            f"could not read {WORKFLOWS}/: the token may not read the repository's contents "
            "(a fine-grained token needs Contents: read)",
        )
    if files is None:
        return Finding("caller", Mark.FAIL, f"no {WORKFLOWS}/ folder on {ctx.branch}", init)
    ctx.scans = [scan_workflow(path, text, sources=ctx.options.sources) for path, text in files]
    uses = [u for scan in ctx.scans for u in scan.uses]
    if not uses:
        problems = [s.problem for s in ctx.scans if s.problem]
        unread = f" ({'; '.join(problems[:2])})" if problems else ""
        return Finding(
            "caller",
            Mark.FAIL,
            f"no workflow in {WORKFLOWS}/ calls Chimera's reusable workflow{unread}",
            init,
        )
    loose = [u for u in uses if not u.pinned]
    if loose:
        shown = "; ".join(f"{_use_line(u)} is a {u.ref_kind}" for u in loose[:3])
        return Finding(
            "caller",
            Mark.FAIL,
            f"not pinned to a commit: {shown}",
            "pin it to the release's 40-hex commit SHA (`uses: …@<sha>  # vX.Y.Z`): a tag or "
            "branch can be moved to run other code with your secrets; `chimera init --github` "
            "writes the pinned caller",
        )
    reusable = [u for u in uses if u.reusable]
    shown = _use_line((reusable or uses)[0])
    older = "" if reusable else " (the action directly: the older set-up of several files)"
    more = f", and {len(uses) - 1} more use(s)" if len(uses) > 1 else ""
    return Finding("caller", Mark.OK, f"{shown}, pinned to a commit{older}{more}")


# -- labels ------------------------------------------------------------------------------------


def _labels(ctx: DoctorContext) -> Finding:
    specs = chimera_labels(ctx.options.label)
    trigger = specs[0]
    note = ""
    if ctx.options.fix:
        ensured = ensure_labels(ctx.client, specs)
        ctx.fixed.extend(f"created the label {name}" for name in ensured.created)
        note = ensured.note
    try:
        present = ctx.client.label_names()
    except (GitHubPermissionDenied, GitHubNotFound):
        return Finding(
            "labels", Mark.UNKNOWN, "could not check the labels: the token may not list them"
        )
    missing = [s.name for s in specs[1:] if s.name not in present]
    if trigger.name not in present:
        fix = f"`chimera doctor --fix`, or `{trigger.gh_command()}`"
        why = f" ({note})" if note else ""
        return Finding(
            "labels",
            Mark.FAIL,
            f"the trigger label {trigger.name} is missing: decide never runs{why}",
            fix,
        )
    others = (
        f"; {len(missing)} other label(s) are created by decide on first use "
        f"({', '.join(missing[:3])}{'…' if len(missing) > 3 else ''}; `--fix` creates them now)"
        if missing
        else ", and Chimera's other labels"
    )
    return Finding("labels", Mark.OK, f"the trigger label {trigger.name} exists{others}")


# -- the Actions setting -----------------------------------------------------------------------


def _pr_setting(ctx: DoctorContext) -> Finding:
    setting = '"Allow GitHub Actions to create and approve pull requests"'
    try:
        data = ctx.get(
            "GET workflow permissions", f"/repos/{ctx.name}/actions/permissions/workflow"
        )
    except (GitHubPermissionDenied, GitHubNotFound):
        return Finding(
            "pr-setting",
            Mark.UNKNOWN,
            f"could not check {setting}: the token may not read the repository's Actions "
            "settings (an admin's token can); look in Settings → Actions → General",
        )
    if isinstance(data, dict) and data.get("can_approve_pull_request_reviews") is True:
        return Finding("pr-setting", Mark.OK, f"{setting} is on")
    return Finding(
        "pr-setting",
        Mark.FAIL,
        f"{setting} is off: publish cannot open Chimera's pull request with GITHUB_TOKEN",
        f"Settings → Actions → General → Workflow permissions: tick {setting}, or `gh api -X PUT "
        f"repos/{ctx.name}/actions/permissions/workflow -F can_approve_pull_request_reviews=true`",
    )


# -- secrets -----------------------------------------------------------------------------------


def _secret_names(ctx: DoctorContext, url: str) -> set[str]:
    names: set[str] = set()
    page = 1
    while True:
        data = ctx.get("GET secrets", f"{url}?per_page=100&page={page}")
        batch = data.get("secrets") if isinstance(data, dict) else None
        if not isinstance(batch, list) or not batch:
            return names
        names |= {str(s.get("name")) for s in batch if isinstance(s, dict)}
        if len(batch) < 100:
            return names
        page += 1


def _secrets(ctx: DoctorContext) -> Finding:
    named = sorted({n for scan in ctx.scans if scan.uses for n in scan.secrets})
    inherits = any(scan.inherits for scan in ctx.scans)
    wanted = sorted(set(named) | (set(DEFAULT_SECRETS) if inherits else set()))
    if not wanted:
        known = ctx.scans and any(scan.uses for scan in ctx.scans)
        what = "the caller names no secrets" if known else "no caller to read secret names from"
        return Finding("secrets", Mark.UNKNOWN, f"nothing to check: {what}")
    try:
        present = _secret_names(ctx, f"/repos/{ctx.name}/actions/secrets")
    except (GitHubPermissionDenied, GitHubNotFound):
        return Finding(
            "secrets",
            Mark.UNKNOWN,
            f"could not check the secrets {', '.join(wanted)}: the token may not list them "
            "(a token with Secrets: read, or a collaborator's with write access, can); look in "
            "Settings → Secrets and variables → Actions",
        )
    # The repository's own secrets were readable; an organization's are extra.
    with contextlib.suppress(GitHubPermissionDenied, GitHubNotFound):
        present |= _secret_names(ctx, f"/repos/{ctx.name}/actions/organization-secrets")
    missing = [name for name in wanted if name not in present]
    if missing:
        return Finding(
            "secrets",
            Mark.FAIL,
            f"missing secret(s): {', '.join(missing)} (the caller passes them)",
            " ; ".join(f"`gh secret set {name} --repo {ctx.name}`" for name in missing[:4]),
        )
    inherit = " (`secrets: inherit`: the App's documented names)" if inherits else ""
    return Finding("secrets", Mark.OK, f"the secrets {', '.join(wanted)} exist{inherit}")
