"""``chimera schema``: print the JSON Schema of spec files (for editors and validators).

The schema is generated from the registered kinds' models, so a kind added by a plugin
appears in it. Point an editor at it, e.g. with a first line in a spec file::

    # yaml-language-server: $schema=./spec.schema.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from chimera.atomic import atomic_write_text
from chimera.cli._base import Subparsers
from chimera.errors import UsageError


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "schema",
        help="print the JSON Schema of spec files",
        description="Print the JSON Schema (draft 2020-12) that spec files follow.",
    )
    parser.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="write the schema to FILE (atomically) instead of stdout",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from chimera.spec.schema import spec_json_schema

    text = json.dumps(spec_json_schema(), indent=2, ensure_ascii=False) + "\n"
    if args.output is None:
        sys.stdout.write(text)
        return 0
    target = Path(args.output)
    try:
        atomic_write_text(target, text)
    except OSError as exc:
        raise UsageError(f"cannot write {target}: {exc.strerror or exc}") from exc
    sys.stderr.write(f"wrote {target}\n")
    return 0
