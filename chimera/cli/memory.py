"""``chimera memory``: inspect and edit the project's memory (``.chimera/memory.db``).

* ``list [--tier T] [--all] [--json]``: items (``--all`` includes tombstones; ``--json``: one
  object, ``{"items": [...]}``);
* ``show ID [--json]``: one item with its history;
* ``add TEXT [--tier semantic|episodic|persona] [--by NAME] [--model M | --no-model]``: a
  person's memory (trusted; persona only here). With a model (``--model``, else ``[models]
  default`` when configured) it decides ADD / UPDATE / DELETE / NOOP against the nearest
  memories, so a changed fact replaces the old one (history kept); prints ``add ID``,
  ``update ID``, ``delete ID`` (the new item's; the old one is forgotten) or ``noop ID`` when
  item ``ID`` already says it; a text holding a secret is refused with the reason (exit 2) on
  every tier;
* ``promote ID [--by NAME]``: a person marks a tainted item trusted;
* ``proposals``: the supersession proposals waiting for a person (a tainted source asked to
  change a trusted item); ``accept ID [--by NAME]`` applies one (``forget ID`` rejects it);
* ``forget ID --reason TEXT [--undo]``: tombstone an item (``--undo`` restores it);
* ``export [--output FILE]`` / ``import FILE [--trusted]``: JSONL of ops (imports are tainted
  unless ``--trusted``).

Exit status 0, 2 for bad usage or a refusal (an unknown id, an empty text, a secret).
"""

from __future__ import annotations

import argparse
import getpass
import json
import sys
from pathlib import Path
from typing import Any

from chimera.cli._base import CliParser, Subparsers, validate_config, write_text_atomic
from chimera.errors import UsageError
from chimera.governance.sanitize import one_line, sanitize

TIERS = ("episodic", "semantic", "persona")


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "memory",
        help="list, show, add, promote, forget, accept, export or import memories",
        description="Work with the project's memory (.chimera/memory.db).",
    )
    common = CliParser(add_help=False)
    common.add_argument("--root", type=Path, default=Path(), help="the project root")
    sub = parser.add_subparsers(dest="memory_command", metavar="ACTION", title="actions")
    listing = sub.add_parser("list", parents=[common], help="list memories")
    listing.add_argument("--tier", choices=TIERS)
    listing.add_argument("--all", action="store_true", help="include forgotten items")
    listing.add_argument(
        "--json", action="store_true", help='print one JSON object: {"items": [...]}'
    )
    listing.set_defaults(handler=_list)
    show = sub.add_parser("show", parents=[common], help="one memory and its history")
    show.add_argument("id")
    show.add_argument("--json", action="store_true", help="print one JSON object")
    show.set_defaults(handler=_show)
    add = sub.add_parser(
        "add",
        parents=[common],
        help=(
            "remember TEXT (written by a person: trusted); 'noop ID' means item ID already "
            "says it; a text holding a secret is refused (exit 2)"
        ),
    )
    add.add_argument("text")
    add.add_argument("--tier", choices=TIERS, default="semantic")
    add.add_argument("--by", help="who writes it (default: the current user)")
    model = add.add_mutually_exclusive_group()
    model.add_argument(
        "--model",
        help="the model deciding ADD/UPDATE/DELETE/NOOP (default: [models] default, if set)",
    )
    model.add_argument("--no-model", action="store_true", help="no model: every new text is an ADD")
    add.set_defaults(handler=_add)
    proposals = sub.add_parser(
        "proposals", parents=[common], help="supersession proposals waiting for a person"
    )
    proposals.add_argument(
        "--json", action="store_true", help='print one JSON object: {"proposals": [...]}'
    )
    proposals.set_defaults(handler=_proposals)
    accept = sub.add_parser(
        "accept",
        parents=[common],
        help="accept a supersession proposal: its target takes the proposed text",
    )
    accept.add_argument("id")
    accept.add_argument("--by", help="who accepts it (default: the current user)")
    accept.set_defaults(handler=_accept)
    promote = sub.add_parser("promote", parents=[common], help="mark a tainted memory trusted")
    promote.add_argument("id")
    promote.add_argument("--by", help="who promotes it (default: the current user)")
    promote.set_defaults(handler=_promote)
    forget = sub.add_parser(
        "forget", parents=[common], help="forget a memory (restorable with --undo)"
    )
    forget.add_argument("id")
    forget.add_argument("--reason", default="", help="why (required unless --undo)")
    forget.add_argument("--undo", action="store_true", help="restore a forgotten memory")
    forget.add_argument("--by", help="who forgets it (default: the current user)")
    forget.set_defaults(handler=_forget)
    export = sub.add_parser("export", parents=[common], help="write every memory as JSONL ops")
    export.add_argument("--output", type=Path, help="write to FILE (default: stdout)")
    export.set_defaults(handler=_export)
    imp = sub.add_parser(
        "import", parents=[common], help="read JSONL ops (tainted unless --trusted)"
    )
    imp.add_argument("file", type=Path)
    imp.add_argument("--trusted", action="store_true", help="keep trusted and persona items")
    imp.set_defaults(handler=_import)
    parser.set_defaults(handler=_missing_action)


def _missing_action(args: argparse.Namespace) -> int:
    raise UsageError(
        "chimera memory: an action is required (list, show, add, promote, forget, proposals, "
        "accept, export, import)"
    )


def _manager(args: argparse.Namespace) -> Any:
    from chimera.memory.part import open_local

    if not Path(args.root).is_dir():
        raise UsageError(f"--root {args.root}: not a directory")
    validate_config(Path(args.root))
    return open_local(Path(args.root))


def _by(args: argparse.Namespace) -> str:
    return str(args.by or getpass.getuser())


def _list(args: argparse.Namespace) -> int:
    from chimera.memory.items import Tier

    tiers = [Tier(args.tier)] if args.tier else None
    items = _manager(args).store.items(tiers, include_deleted=args.all)
    if args.json:
        # One object, as every --json of the CLI (docs/reference/cli.md).
        listing = {"items": [item.to_json() for item in items]}
        sys.stdout.write(json.dumps(listing, indent=2, ensure_ascii=False) + "\n")
        return 0
    for item in items:
        mark = " (forgotten)" if item.deleted else ""
        # One line per item whatever its fields hold (an imported item's id is data).
        text = one_line(item.text)
        sys.stdout.write(
            f"{one_line(item.id, 40)}  {item.tier.value:<8}  {item.provenance:<7}  "
            f"uses {item.uses:<3}  {text[:90]}{'...' if len(text) > 90 else ''}{mark}\n"
        )
    if not items:
        sys.stdout.write("no memories\n")
    return 0


def _show(args: argparse.Namespace) -> int:
    manager = _manager(args)
    item = manager.store.get(args.id)
    if item is None:
        raise UsageError(f"memory: no item {args.id}")
    history = manager.store.history(item.id)
    if args.json:
        sys.stdout.write(json.dumps({**item.to_json(), "history": history}, indent=2) + "\n")
        return 0
    # Each field on its own line, sanitized: the header cannot be forged by a field's text.
    out = [f"{one_line(item.id)} ({item.tier.value}, {item.provenance})"]
    if item.taint_sources:
        out.append(f"taint sources: {', '.join(one_line(s) for s in item.taint_sources)}")
    out.append(
        f"run {one_line(item.source_run) or '-'}, commit {one_line(item.source_commit) or '-'}"
    )
    out.append(
        f"created {one_line(item.created)}, updated {one_line(item.updated)}, uses {item.uses}"
    )
    if item.deleted:
        out.append(f"forgotten: {one_line(item.evidence)}")
    out += ["", sanitize(item.text), "", "history:"]
    out += [
        f"  {one_line(str(h['ts']))} {one_line(str(h['op']))} by "
        f"{one_line(str(h['run'] or '-'))} {one_line(str(h['evidence']))}".rstrip()
        for h in history
    ]
    sys.stdout.write("\n".join(out) + "\n")
    return 0


def _add(args: argparse.Namespace) -> int:
    from chimera.memory.items import Candidate, Tier
    from chimera.orchestration.memory_model import memory_backend

    manager = _manager(args)
    if args.tier == "persona":
        sys.stdout.write(manager.add_persona(args.text, by=_by(args)) + "\n")
        return 0
    manager.backend = None if args.no_model else memory_backend(Path(args.root), args.model)
    result = manager.remember(Candidate(args.text, Tier(args.tier), source_run=_by(args)))
    if result.refused:
        raise UsageError(f"memory: not remembered: {result.overruled}")
    sys.stdout.write(f"{result.op.lower()} {result.item_id or result.target_id}\n")
    if result.target_id and result.op in ("UPDATE", "DELETE"):
        sys.stdout.write(f"  supersedes {result.target_id} (its old text is in its history)\n")
    if result.overruled:
        sys.stdout.write(f"  the model proposed {result.proposed}: {result.overruled}\n")
    return 0


def _proposals(args: argparse.Namespace) -> int:
    manager = _manager(args)
    found = manager.proposals()
    if args.json:
        listing = {"proposals": [item.to_json() for item in found]}
        sys.stdout.write(json.dumps(listing, indent=2, ensure_ascii=False) + "\n")
        return 0
    for item in found:
        target = manager.store.get(item.supersedes)
        verb = "forget" if item.kind == "proposed-delete" else "replace"
        old = " ".join(target.text.split())[:70] if target else "(gone)"
        new = " ".join(item.text.split())[:70]
        how = "because" if verb == "forget" else "with"
        sys.stdout.write(
            f"{item.id}  would {verb} {item.supersedes} ({old!r}) {how} {new!r}  "
            f"[{item.provenance}: {', '.join(item.taint_sources) or '?'}; run "
            f"{item.source_run or '-'}]\n"
        )
    if not found:
        sys.stdout.write("no proposals\n")
    return 0


def _accept(args: argparse.Namespace) -> int:
    target = _manager(args).accept(args.id, by=_by(args))
    sys.stdout.write(f"{args.id}: accepted; {target} now says what it proposed\n")
    return 0


def _promote(args: argparse.Namespace) -> int:
    changed = _manager(args).promote(args.id, by=_by(args))
    sys.stdout.write(f"{args.id}: {'promoted to trusted' if changed else 'already trusted'}\n")
    return 0


def _forget(args: argparse.Namespace) -> int:
    manager = _manager(args)
    if args.undo:
        changed = manager.restore(args.id, by=_by(args))
        sys.stdout.write(f"{args.id}: {'restored' if changed else 'not forgotten'}\n")
        return 0
    changed = manager.forget(args.id, reason=args.reason, by=_by(args))
    sys.stdout.write(f"{args.id}: {'forgotten' if changed else 'already forgotten'}\n")
    return 0


def _export(args: argparse.Namespace) -> int:
    from chimera.memory.transfer import export_ops

    ops = export_ops(_manager(args))
    text = "".join(json.dumps(op, ensure_ascii=False) + "\n" for op in ops)
    if args.output:
        write_text_atomic(args.output, text)
    else:
        sys.stdout.write(text)
    return 0


def _import(args: argparse.Namespace) -> int:
    from chimera.memory.transfer import import_ops

    try:
        lines = args.file.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise UsageError(f"{args.file}: cannot read: {exc.strerror or exc}") from exc
    ops = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            ops.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise UsageError(f"{args.file}:{number}:{exc.colno}: not JSON: {exc.msg}") from exc
    try:
        applied = import_ops(_manager(args), ops, trusted=args.trusted)
    except UsageError as exc:
        raise UsageError(f"{args.file}: {exc}") from exc
    sys.stdout.write(f"imported {applied} op(s) from {args.file}\n")
    return 0
