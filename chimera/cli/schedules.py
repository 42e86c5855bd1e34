"""``chimera schedules``: list, check, show the next fire times of, and approve the schedules
declared in ``.chimera.d/schedules/*.yaml``.

* ``list`` — one line per schedule: id, state (on / off / awaiting approval), trigger, action.
* ``check`` — validate every file; each problem on its own line (``file:line:col: message``);
  exit 2 when there is any.
* ``next [ID] [--now ISO] [--count N]`` — the next fire times after ``--now`` (default: the
  system clock), in UTC and in the schedule's zone; a dry run that changes nothing.
* ``approve ID [--by NAME]`` — a person enables an agent-proposed schedule (default name:
  ``git config user.name``); the edit is two lines, for review.
* ``proposals [--timezone TZ] [--dry-run]`` — the CronLearner reads the run history
  (``.chimera/runs``, verified audit logs only) and proposes a cron for each task people keep
  starting at regular times; the proposals go to ``.chimera.d/schedules/learned.yaml``
  disabled (``created_by: agent``) until a person approves one.

Exit status: 0; 2 for invalid schedules or bad usage.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from chimera.cli._base import Subparsers, validate_config
from chimera.errors import UsageError

if TYPE_CHECKING:
    from chimera.scheduler.model import Schedule, ScheduleLoad

EXIT_INVALID = 2


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "schedules",
        help="list, check, preview or approve the crons and event SOPs in .chimera.d/schedules/",
        description="Schedules declared in .chimera.d/schedules/*.yaml (see the docs: Schedules).",
    )
    parser.add_argument("--root", metavar="DIR", default=".", help="the repository (default: .)")
    actions = parser.add_subparsers(dest="schedules_command", metavar="ACTION", required=True)
    actions.add_parser("list", help="one line per schedule")
    actions.add_parser("check", help="validate every file; exit 2 on any problem")
    nxt = actions.add_parser("next", help="the next fire times (a dry run)")
    nxt.add_argument("id", nargs="?", help="one schedule (default: every time-driven one)")
    nxt.add_argument("--now", metavar="ISO", help="start from this instant (with an offset)")
    nxt.add_argument("--count", type=int, default=3, metavar="N", help="how many (default 3)")
    props = actions.add_parser(
        "proposals", help="crons the CronLearner proposes from the run history (disabled)"
    )
    props.add_argument("--timezone", default="UTC", help="the zone cadences are read in")
    props.add_argument("--dry-run", action="store_true", help="print only; write no file")
    approve = actions.add_parser("approve", help="enable an agent-proposed schedule")
    approve.add_argument("id")
    approve.add_argument("--by", metavar="NAME", help="the approver (default: git user.name)")
    parser.set_defaults(handler=_handle)


def _handle(args: argparse.Namespace) -> int:
    from chimera.scheduler.loader import load_schedules

    root = Path(args.root)
    if not root.is_dir():
        raise UsageError(f"--root {root}: not a directory")
    validate_config(root)
    if args.schedules_command == "approve":
        return _approve(root, args)
    load = load_schedules(root)
    if args.schedules_command == "proposals":
        return _proposals(root, load, args)
    if args.schedules_command == "check" or not load.ok:
        for problem in load.problems:
            sys.stdout.write(f"{problem}\n")
        if load.problems:
            sys.stderr.write(f"{len(load.problems)} problem(s) in the schedules\n")
            return EXIT_INVALID
        sys.stdout.write(f"{len(load.schedules)} schedule(s) in {len(load.files)} file(s): ok\n")
        return 0
    if args.schedules_command == "list":
        if not load.schedules:
            sys.stdout.write("no schedules (.chimera.d/schedules/*.yaml)\n")
        for s in load.schedules:
            action = f"check {s.fields.check}" if s.fields.check else f"task: {s.fields.task}"
            sys.stdout.write(f"{s.id}\t{_state(s)}\t{s.trigger.describe()}\t{_cut(action)}\n")
        return 0
    return _next(load, args)


def _state(s: Schedule) -> str:
    if s.active:
        return "on"
    if s.fields.created_by.value == "agent" and s.fields.approved_by is None:
        return "awaiting approval"
    return "off"


def _cut(text: str, limit: int = 70) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _next(load: ScheduleLoad, args: argparse.Namespace) -> int:
    from chimera.scheduler.clock import SystemClock, parse_instant
    from chimera.scheduler.cron import zone

    if not 1 <= args.count <= 100:
        raise UsageError("--count takes 1 to 100")
    now = parse_instant(args.now) if args.now else SystemClock().now()
    chosen = [s for s in load.schedules if args.id in (None, s.id)]
    if args.id and not chosen:
        raise UsageError(f"no schedule {args.id!r}")
    for s in chosen:
        t = s.trigger.next_after(now)
        if t is None:
            sys.stdout.write(f"{s.id}\t{s.trigger.describe()} (not time-driven)\n")
            continue
        name = str(getattr(s.trigger, "timezone", "UTC"))
        for _ in range(args.count):
            local = t.astimezone(zone(name))
            sys.stdout.write(f"{s.id}\t{t.isoformat()}\t{local.isoformat()} {name}\n")
            following = s.trigger.next_after(t)
            if following is None:
                break
            t = following
    return 0


def _proposals(root: Path, load: ScheduleLoad, args: argparse.Namespace) -> int:
    from chimera.scheduler.history import run_history
    from chimera.scheduler.learner import CronLearner, write_proposals

    history, skipped = run_history(root)
    for why in skipped:
        sys.stderr.write(f"skipped: {why}\n")
    found = CronLearner(args.timezone).propose(history, existing=load.schedules)
    if not found:
        sys.stdout.write(f"no recurring task in {len(history)} recorded run(s)\n")
        return 0
    for p in found:
        sys.stdout.write(
            f"{p.id}\t{p.cron} ({p.timezone})\t{p.runs} runs, fit {p.precision:.2f}/"
            f"{p.recall:.2f}\t{_cut(p.task)}\n"
        )
    if args.dry_run:
        sys.stdout.write("dry run: nothing written\n")
        return 0
    path = write_proposals(root, found)
    sys.stdout.write(
        f"wrote {len(found)} proposal(s) to {path} disabled: a person runs "
        "`chimera schedules approve ID` (a change to review) to turn one on\n"
    )
    return 0


def _approve(root: Path, args: argparse.Namespace) -> int:
    from chimera.scheduler.edit import approve

    person = args.by or _git_user(root)
    if not person:
        raise UsageError("who approves? pass --by NAME (git config user.name is not set)")
    path = approve(root, args.id, person)
    sys.stdout.write(f"approved {args.id} as {person}: {path} (commit it for review)\n")
    return 0


def _git_user(root: Path) -> str:
    try:
        done = subprocess.run(
            ["git", "config", "user.name"], cwd=root, capture_output=True, text=True, check=False
        )
    except OSError:
        return ""
    return done.stdout.strip()
