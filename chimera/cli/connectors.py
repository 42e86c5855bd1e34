"""``chimera connectors list|check|add``: the declared connectors and their tools.

* ``check`` validates ``.chimera.d/connectors/*.yaml`` (every problem at file:line:col);
  ``--start`` also starts each connector and lists its tools.
* ``list`` starts every connector and shows each tool, its source and the token cost of the
  schemas the model is sent (``--model`` counts with that model's tokenizer).
* ``add NAME`` writes one declaration (an MCP server by ``--command``/``--url``, or an
  OpenAPI document by ``--openapi`` and ``--base-url``), validated before it is kept.

Exit status: 0 clean; 1 a connector failed to start or two tools clash; 2 bad usage or an
invalid declaration.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Literal

from chimera.cli._base import Subparsers, validate_config
from chimera.errors import UsageError


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "connectors",
        help="list, check or add connectors (MCP servers, OpenAPI documents)",
        description=(
            "Connectors declared in .chimera.d/connectors/*.yaml. Exit status: 0 clean, "
            "1 a connector failed to start, 2 bad usage or an invalid declaration."
        ),
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    for name, help_text in (
        ("list", "start every connector and list its tools and their token cost"),
        ("check", "validate the declarations (--start: also start them)"),
    ):
        sub = actions.add_parser(name, help=help_text, description=help_text)
        sub.add_argument("--root", metavar="DIR", help="the project (default: current dir)")
        sub.add_argument("--rev", metavar="COMMIT", help="read the declarations from a commit")
        sub.add_argument("--model", help="count schema tokens with this model's tokenizer")
        sub.add_argument(
            "--sandbox",
            choices=("bwrap", "scrubbed"),
            default="bwrap",
            help="how stdio servers start (default bwrap; scrubbed is weaker)",
        )
        sub.add_argument("--json", action="store_true", help="print one JSON object")
        if name == "check":
            sub.add_argument("--start", action="store_true", help="start them and list tools")
        sub.set_defaults(handler=run)
    add = actions.add_parser("add", help="declare a connector", description="declare a connector")
    add.add_argument("name", help="the connector's name (prefixes its tool names)")
    add.add_argument("--root", metavar="DIR", help="the project (default: current dir)")
    add.add_argument("--description", default="")
    source = add.add_mutually_exclusive_group(required=True)
    source.add_argument("--command", help="a stdio MCP server's program")
    source.add_argument("--url", help="a Streamable HTTP MCP server's URL")
    source.add_argument("--openapi", metavar="DOC", help="an OpenAPI document in the project")
    add.add_argument("--arg", action="append", default=[], help="an argument of --command")
    add.add_argument("--env", action="append", default=[], help="a variable passed to it")
    add.add_argument("--base-url", help="the API's base URL (with --openapi)")
    add.add_argument("--include", action="append", default=[], help="a tool name pattern")
    add.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from chimera.integrations.service import add_connector, check_connectors, dumps

    root = Path(args.root or ".").resolve()
    if not root.is_dir():
        raise UsageError(f"--root {args.root!r} is not a directory")
    validate_config(root)
    if args.action == "add":
        kind: Literal["mcp", "openapi"]
        if args.openapi is not None:
            if not args.base_url:
                raise UsageError("--openapi needs --base-url")
            kind = "openapi"
            settings = {"document": args.openapi, "base_url": args.base_url}
        else:
            kind = "mcp"
            settings = {"command": args.command, "url": args.url, "args": args.arg, "env": args.env}
        path = add_connector(
            root, args.name, kind, settings, description=args.description, include=args.include
        )
        sys.stdout.write(f"wrote {path.relative_to(root)}\n")
        return 0
    report = check_connectors(
        root,
        start=args.action == "list" or bool(getattr(args, "start", False)),
        model=args.model,
        rev=args.rev,
        sandbox=args.sandbox,
    )
    sys.stdout.write((dumps(report) if args.json else report.render()) + "\n")
    return report.exit_code
