"""``chimera init``: write a starter ``specs/`` for an existing repository.

The requirements are inferred statically (see :mod:`chimera.spec.starter`): the main classes
of the top-level packages, the install command the README names, and the test command.
The file is validated with the same loader ``chimera check`` uses before it is written
(atomically), and an existing file is never overwritten without ``--force``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
from pathlib import Path

from chimera.atomic import atomic_write_text
from chimera.cli._base import Subparsers
from chimera.errors import ChimeraError, UsageError

STARTER_FILE = Path("specs") / "starter.yaml"
"""Where the starter spec goes, relative to the root."""


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "init",
        help="write a starter specs/ inferred from the repository",
        description=(
            "Infer a few requirements from the repository (its packages' main classes, the "
            f"README's install command, the test command) and write them to {STARTER_FILE}."
        ),
    )
    parser.add_argument("--root", metavar="DIR", help="the repository (default: current directory)")
    parser.add_argument(
        "--force", action="store_true", help=f"overwrite an existing {STARTER_FILE}"
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from chimera.spec.starter import infer_requirements, render_spec

    root = Path(args.root) if args.root else Path.cwd()
    if not root.is_dir():
        raise UsageError(f"--root {args.root}: not a directory")
    target = root / STARTER_FILE
    shown = target if args.root else STARTER_FILE
    if target.exists() and not args.force:
        raise UsageError(f"{shown} already exists; pass --force to overwrite it")

    inference = infer_requirements(root)
    if not inference.requirements:
        reasons = "; ".join(inference.notes)
        raise UsageError(f"nothing to infer in {root} ({reasons}); write specs/ by hand")
    text = render_spec(inference.requirements)
    requirements = _validate(text, target.parent)
    try:
        atomic_write_text(target, text)
    except OSError as exc:
        raise UsageError(f"cannot write {shown}: {exc.strerror or exc}") from exc

    out = sys.stdout
    count = len(requirements)
    out.write(f"wrote {shown} ({count} requirement{'s' if count != 1 else ''}):\n")
    width = max(len(rid) for rid, _ in requirements)
    for rid, describe in requirements:
        out.write(f"  {rid:<{width}}  {describe}\n")
    for note in inference.notes:
        out.write(f"note: {note}\n")
    where = "" if not args.root else f" --root {args.root}"
    out.write(f"next: chimera check{where}   (or: pytest --chimera-spec specs/)\n")
    return 0


def _validate(text: str, directory: Path) -> list[tuple[str, str]]:
    """Load ``text`` as a spec file with the real loader; ``[(id, describe)]``.

    What init writes must load: a problem here is a bug in the inference, reported as one.
    """
    from chimera.spec.loader import load_spec

    fd, tmp = tempfile.mkstemp(suffix=".yaml", prefix="chimera-init-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        try:
            spec = load_spec([Path(tmp)])
        except ChimeraError as exc:
            raise ChimeraError(f"the inferred spec for {directory} does not load: {exc}") from exc
    finally:
        with contextlib.suppress(OSError):
            Path(tmp).unlink()
    return [(r.id, r.check.describe()) for r in spec.requirements]
