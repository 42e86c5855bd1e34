"""``chimera doctor``: check a live repository's Chimera set-up through the GitHub API.

One line per check — ``✔`` it holds, ``✘`` it does not (with the fix), ``?`` the token may not
see it (with where to look) — then a total. Exit status: 0 no ``✘``, 1 any ``✘``, 2 bad usage
or an error (a bad token, no such repository, the network: one line, never a traceback).
``--json`` prints one object instead; ``--fix`` creates the missing labels first (the trigger
label among them), which is safe to repeat.

The token comes from ``--token`` or the ``GITHUB_TOKEN`` (else ``GH_TOKEN``) environment
variable; the environment keeps it out of the process list. It is only read with, except
that ``--fix`` creates labels. ``CHIMERA_GITHUB_THROTTLE=0`` switches PyGithub's pacing
between requests off (tests).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys

from chimera.cli._base import Subparsers, paint, use_color
from chimera.errors import UsageError

__all__ = ["register"]

_REPO = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")
_MARKS = {"ok": ("✔", "green"), "fail": ("✘", "red"), "unknown": ("?", "yellow")}


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "doctor",
        help="check a repository's Chimera set-up on GitHub (caller, labels, settings, App)",
        description=(
            "Check a live repository's set-up through the GitHub API: the caller workflow and "
            'its pin, the labels, the "Allow GitHub Actions to create and approve pull '
            'requests" setting, the secrets the caller names, branch protection requiring the '
            "Spec check, and the GitHub App. One line per check with the fix. Exit status: 0 "
            "no problem, 1 a problem found, 2 an error."
        ),
    )
    parser.add_argument(
        "--repo",
        metavar="OWNER/NAME",
        help="the repository (default: the GITHUB_REPOSITORY environment variable)",
    )
    parser.add_argument(
        "--token",
        metavar="TOKEN",
        help="a GitHub token (default: GITHUB_TOKEN, else GH_TOKEN; prefer the environment)",
    )
    parser.add_argument(
        "--api-url",
        metavar="URL",
        help="the REST API (default: GITHUB_API_URL, else https://api.github.com; GitHub "
        "Enterprise Server: https://HOST/api/v3)",
    )
    parser.add_argument(
        "--label", default="chimera", help="the trigger label (the caller's label input)"
    )
    parser.add_argument(
        "--spec-check",
        metavar="NAME",
        action="append",
        help="the name of the Spec's required status check (repeatable; default: spec, "
        "Chimera Spec; '<job> / NAME' matches too)",
    )
    parser.add_argument("--app", metavar="SLUG", default="", help="the GitHub App's slug")
    parser.add_argument(
        "--source",
        metavar="OWNER/NAME",
        action="append",
        help="the repository Chimera's workflow comes from (repeatable; default: any "
        "repository named chimera)",
    )
    parser.add_argument("--fix", action="store_true", help="create the missing labels (idempotent)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(handler=run)


def _options(args: argparse.Namespace) -> tuple[str, str, str]:
    repo = args.repo or os.environ.get("GITHUB_REPOSITORY", "")
    if not repo:
        raise UsageError("chimera doctor: name the repository with --repo OWNER/NAME")
    if not _REPO.fullmatch(repo):
        raise UsageError(f"--repo {repo[:60]!r}: expected OWNER/NAME")
    for source in args.source or ():
        if not _REPO.fullmatch(source):
            raise UsageError(f"--source {source[:60]!r}: expected OWNER/NAME")
    token = args.token or os.environ.get("GITHUB_TOKEN") or os.environ.get("GH_TOKEN") or ""
    if not token.strip():
        raise UsageError("chimera doctor: no token: set GITHUB_TOKEN (or pass --token)")
    from chimera.github.client.client import DEFAULT_API_URL

    api = args.api_url or os.environ.get("GITHUB_API_URL") or DEFAULT_API_URL
    if not api.startswith(("https://", "http://")):
        raise UsageError(f"--api-url {api[:60]!r}: expected an http(s) URL")
    return repo, token.strip(), api


def run(args: argparse.Namespace) -> int:
    from chimera.errors import GitHubError, GitHubNotFound, GitHubPermissionDenied
    from chimera.github.client.client import GitHubClient, RetryPolicy
    from chimera.github.doctor.checks import DoctorOptions, diagnose
    from chimera.github.doctor.report import DEFAULT_SPEC_CHECKS, short

    repo, token, api = _options(args)
    # PyGithub's pacing between requests is GitHub's etiquette; CHIMERA_GITHUB_THROTTLE=0
    # switches it off (tests), as for `chimera action`.
    throttle = os.environ.get("CHIMERA_GITHUB_THROTTLE", "1") not in ("0", "false")
    retry = RetryPolicy(attempts=2, timeout_s=20, backoff_s=0.5)
    client = GitHubClient(repo, token, api_url=api, retry=retry, throttle=throttle)
    options = DoctorOptions(
        label=args.label,
        spec_checks=tuple(args.spec_check or DEFAULT_SPEC_CHECKS),
        app=args.app,
        sources=tuple(args.source or ()),
        fix=args.fix,
    )
    try:
        report = diagnose(client, options)
    except GitHubNotFound as exc:
        raise UsageError(f"no repository {repo} at {api}, or the token may not see it") from exc
    except GitHubPermissionDenied as exc:
        raise UsageError(f"the token was refused by {api} (bad, expired or revoked?)") from exc
    except GitHubError as exc:
        raise UsageError(f"chimera doctor: {short(str(exc), 300)}") from exc
    if args.json:
        sys.stdout.write(json.dumps(report.to_json(), sort_keys=True) + "\n")
        return 0 if report.ok else 1
    color = use_color(sys.stdout)
    print(f"chimera doctor: {report.repository} (default branch {report.default_branch})")
    for line in report.fixed:
        print(f"  fixed: {line}")
    for finding in report.findings:
        mark, hue = _MARKS[finding.mark.value]
        fix = f" — fix: {finding.fix}" if finding.fix else ""
        print(f"{paint(mark, hue, enabled=color)} {finding.name}: {finding.message}{fix}")
    failed = sum(f.mark.value == "fail" for f in report.findings)
    unknown = sum(f.mark.value == "unknown" for f in report.findings)
    verdict = f"{failed} problem(s)" if failed else "no problem found"
    print(f"{verdict}; {unknown} check(s) could not be made with this token")
    return 0 if report.ok else 1
