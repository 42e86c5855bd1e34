"""``chimera audit``: verify a run's audit log, or render it as a readable summary.

* ``chimera audit verify PATH [--head HASH]`` checks the hash chain
  (:func:`chimera.governance.audit.verify_audit_log`): an edited, deleted, reordered or
  malformed line is named (``file:line: what``), and with ``--head`` (the head hash recorded
  in the run state, job summary or PR body) a truncated tail or a rewritten chain is caught.
  Exit status: 0 verified, 1 not verified, 2 bad usage (missing file).
* ``chimera audit show PATH [--head HASH] [--output FILE]`` renders the Markdown summary the
  Action puts in the job summary and the PR body
  (:func:`chimera.governance.audit_summary.render_audit_summary`): trust
  verdicts, actions denied for review, tool calls, attempts, costs, check results, taint, and
  the head hash with the verification result. Exit status 0 (the summary states whether the
  chain verified), 2 for bad usage.

Every string that came from a model, a tool or an issue is shown inside a code span with
``|``, backticks and angle brackets neutralised and chat-template tokens stripped, so the
summary cannot be used to inject Markdown links, images (tracking pixels) or HTML into a PR
body.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from chimera.cli._base import Subparsers, write_text_atomic
from chimera.errors import UsageError

EXIT_VERIFIED = 0
EXIT_NOT_VERIFIED = 1


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "audit",
        help="verify or summarise a run's audit log",
        description="Work with a run's hash-chained audit log (JSONL).",
    )
    sub = parser.add_subparsers(dest="audit_command", metavar="ACTION", title="actions")
    verify = sub.add_parser(
        "verify",
        help="check the hash chain; name any edited, deleted, reordered or truncated line",
        description=(
            "Check the audit log's hash chain. With --head, also detect a truncated tail. "
            "Exit status: 0 verified, 1 not verified, 2 bad usage."
        ),
    )
    verify.add_argument("path", metavar="PATH", type=Path, help="the audit .jsonl file")
    verify.add_argument(
        "--head", metavar="HASH", help="the head hash recorded for the run (detects truncation)"
    )
    verify.add_argument("--json", action="store_true", help="print one JSON object")
    verify.set_defaults(handler=_verify)
    show = sub.add_parser(
        "show",
        help="render the log as a readable Markdown summary",
        description="Render a Markdown summary of the audit log (job summary / PR body).",
    )
    show.add_argument("path", metavar="PATH", type=Path, help="the audit .jsonl file")
    show.add_argument("--head", metavar="HASH", help="the head hash recorded for the run")
    show.add_argument(
        "--output", metavar="FILE", type=Path, help="write the summary to FILE (atomically)"
    )
    show.set_defaults(handler=_show)
    parser.set_defaults(handler=_missing_action)


def _missing_action(args: argparse.Namespace) -> int:
    raise UsageError("chimera audit: an action is required (verify, show)")


def _check_path(path: Path) -> None:
    if not path.is_file():
        raise UsageError(f"{path}: no such audit log")


def _verify(args: argparse.Namespace) -> int:
    from chimera.governance.audit import verify_audit_log

    _check_path(args.path)
    result = verify_audit_log(args.path, head=args.head)
    if args.json:
        sys.stdout.write(
            json.dumps(
                {
                    "ok": result.ok,
                    "count": result.count,
                    "head_hash": result.head_hash,
                    "problems": list(result.problems),
                },
                sort_keys=True,
            )
            + "\n"
        )
    elif result.ok:
        against = " (matches --head)" if args.head else ""
        print(f"OK: {args.path}: {result.count} event(s), head {result.head_hash}{against}")
    else:
        for problem in result.problems:
            print(problem)
        print(f"NOT VERIFIED: {args.path}: {len(result.problems)} problem(s)")
    return EXIT_VERIFIED if result.ok else EXIT_NOT_VERIFIED


def _show(args: argparse.Namespace) -> int:
    from chimera.governance.audit_summary import render_audit_summary

    _check_path(args.path)
    text = render_audit_summary(args.path, head=args.head)
    if args.output is not None:
        try:
            write_text_atomic(args.output, text)
        except OSError as exc:
            raise UsageError(f"{args.output}: cannot write: {exc.strerror or exc}") from exc
    else:
        sys.stdout.write(text)
    return 0


__all__ = ["register"]
