"""``chimera migrate hermes|openclaw [PATH]``: import config, skills and long-term memory from
Hermes Agent or OpenClaw into the project at ``--root``.

A dry run by default: prints the plan and changes nothing anywhere. ``--apply`` writes, never
overwriting (a conflict is reported), and records the run under
``.chimera/migration/<tool>/runs/<id>/`` (``report.json``, ``summary.md``, ``audit.jsonl``,
backups). A second apply finds everything already there and writes nothing new. See the docs:
``docs/how-to/migration.md``.

Exit status: 0; 1 when an item is in conflict or in error; 2 for bad usage.
"""

from __future__ import annotations

import argparse
import getpass
import sys
from pathlib import Path

from chimera.cli._base import Subparsers
from chimera.errors import UsageError


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "migrate",
        help="import memory, skills and config from Hermes Agent or OpenClaw (dry run first)",
        description="Import from Hermes Agent or OpenClaw (docs: Migrate from Hermes or "
        "OpenClaw). A dry run unless --apply.",
    )
    parser.add_argument("tool", choices=("hermes", "openclaw"))
    parser.add_argument(
        "path", nargs="?", help="the source home (default: $HERMES_HOME or ~/.hermes; ~/.openclaw)"
    )
    parser.add_argument("--root", metavar="DIR", default=".", help="the project (default: .)")
    parser.add_argument("--apply", action="store_true", help="write (default: print the plan)")
    parser.add_argument("--by", metavar="NAME", help="who runs it (default: the login name)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument(
        "--model",
        help="a model that decides each curated memory against the nearest ones (a changed "
        "fact supersedes or is proposed; default: every new item is added)",
    )
    parser.set_defaults(handler=_handle)


def _handle(args: argparse.Namespace) -> int:
    import json

    from chimera.migration import hermes_home, migrate, openclaw_home, read_hermes, read_openclaw
    from chimera.migration.model import Status
    from chimera.migration.report import render

    root = Path(args.root)
    if not root.is_dir():
        raise UsageError(f"--root {root}: not a directory")
    if args.tool == "hermes":
        home = hermes_home(args.path)
        found = read_hermes(home)
    else:
        home = openclaw_home(args.path)
        found = read_openclaw(home)
    if root.resolve() == home.resolve() or home.resolve() in root.resolve().parents:
        raise UsageError(f"--root {root}: inside the source home {home}; the source is read-only")
    by = str(args.by or getpass.getuser())
    backend = None
    if args.model:
        from chimera.orchestration.memory_model import memory_backend

        backend = memory_backend(root, args.model)
    result = migrate(args.tool, home, found, root, apply=args.apply, by=by, backend=backend)
    if args.json:
        body: dict[str, object] = {"applied": result.applied, "counts": result.counts()}
        body["items"] = [o.to_json() for o in result.outcomes]
        sys.stdout.write(json.dumps(body, indent=2) + "\n")
    else:
        sys.stdout.write(render(result))
    bad = {Status.CONFLICT, Status.ERROR}
    return 1 if any(o.status in bad for o in result.outcomes) else 0
