"""``chimera init``: write a starter ``specs/`` for an existing repository.

The requirements are inferred statically (see :mod:`chimera.spec.starter`): the main classes
of the top-level packages, the install command the README names, and the test command.
The file is added to what ``chimera check`` would then load — every spec file already under
``specs/`` — so an inferred requirement whose id is already there is left out (and the output
says so), and the whole Spec, old files and new, is validated with the same loader before the
file is written (atomically) and before ``next: chimera check`` is printed. An existing
``specs/`` that does not load is reported and nothing is written; an existing starter file is
never overwritten without ``--force``. When every inferred id is already taken, nothing is
written and the exit status is 0: the Spec already holds them.

``--github`` writes the Action's one workflow instead (:mod:`chimera.cli.init_github`), and
the starter spec too when the repository has no ``specs/``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from chimera.atomic import atomic_write_text
from chimera.cli._base import Subparsers, err
from chimera.errors import ChimeraError, SpecError, UsageError

if TYPE_CHECKING:
    from chimera.spec.model import Requirement

STARTER_FILE = Path("specs") / "starter.yaml"
"""Where the starter spec goes, relative to the root."""


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "init",
        help="write a starter specs/ inferred from the repository",
        description=(
            "Infer a few requirements from the repository (its packages' main classes, the "
            f"README's install command, the test command) and write them to {STARTER_FILE}, "
            "leaving out any whose id a spec file under specs/ already has."
        ),
    )
    parser.add_argument("--root", metavar="DIR", help="the repository (default: current directory)")
    parser.add_argument(
        "--github",
        action="store_true",
        help=(
            "write .github/workflows/chimera.yml, the Action's one workflow, pinned to this "
            "Chimera's release commit (and specs/ when there is none)"
        ),
    )
    parser.add_argument(
        "--pin",
        metavar="COMMIT",
        help=(
            "with --github: pin the caller to this commit of Chimera's repository (40 hex "
            "digits) instead of the running release's"
        ),
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help=f"overwrite an existing {STARTER_FILE} (with --github: show the caller's diff and "
        "replace it)",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    root = Path(args.root) if args.root else Path.cwd()
    if not root.is_dir():
        raise UsageError(f"--root {args.root}: not a directory")
    if args.github:
        return _run_github(args, root)
    if args.pin is not None:
        raise UsageError("--pin goes with --github (it pins the caller workflow)")
    return _write_starter(args, root)


def _run_github(args: argparse.Namespace, root: Path) -> int:
    """The caller, pinned; then the starter spec when there is no ``specs/`` (a repository
    the Action serves needs a Spec to judge by)."""
    from chimera.cli.init_github import CALLER_FILE, write_caller

    shown = root / CALLER_FILE if args.root else CALLER_FILE
    sys.stdout.write(write_caller(root, shown, force=args.force, pin=args.pin))
    if not (root / "specs").exists():
        try:
            _write_starter(args, root)
        except UsageError as exc:
            sys.stdout.write(f"note: no specs/ written: {exc}\n")
    sys.stdout.write(
        "next: the App's secrets CHIMERA_APP_ID and CHIMERA_APP_PRIVATE_KEY, your model key "
        "(ANTHROPIC_API_KEY), and the label `chimera` (docs: Set up the Action and its App)\n"
    )
    return 0


def _write_starter(args: argparse.Namespace, root: Path) -> int:
    from chimera.spec.starter import infer_requirements, render_spec

    target = root / STARTER_FILE
    shown = target if args.root else STARTER_FILE
    if target.exists() and not args.force:
        raise UsageError(f"{shown} already exists; pass --force to overwrite it")

    inference = infer_requirements(root)
    if not inference.requirements:
        reasons = "; ".join(inference.notes)
        raise UsageError(f"nothing to infer in {root} ({reasons}); write specs/ by hand")
    existing = _existing_spec(root, target)
    taken = {r.id: r.location.file for r in existing[1]} if existing else {}
    fresh = [r for r in inference.requirements if r.id not in taken]
    skipped = [
        f"left out {r.id}: {taken[r.id]} already has a requirement with that id"
        for r in inference.requirements
        if r.id in taken
    ]
    out = sys.stdout
    if not fresh:
        for note in skipped:
            out.write(f"note: {note}\n")
        out.write(f"wrote nothing: specs/ already has every requirement inferred for {root}\n")
        return 0
    text = render_spec(fresh)
    requirements = _validate(
        text, target.parent, existing[0] if existing else [], {r.id for r in fresh}
    )
    try:
        atomic_write_text(target, text)
    except OSError as exc:
        raise UsageError(f"cannot write {shown}: {exc.strerror or exc}") from exc

    count = len(requirements)
    out.write(f"wrote {shown} ({count} requirement{'s' if count != 1 else ''}):\n")
    width = max(len(rid) for rid, _ in requirements)
    for rid, describe in requirements:
        out.write(f"  {rid:<{width}}  {describe}\n")
    for note in [*skipped, *inference.notes]:
        out.write(f"note: {note}\n")
    where = "" if not args.root else f" --root {args.root}"
    out.write(f"next: chimera check{where}   (or: pytest --chimera-spec specs/)\n")
    return 0


def _existing_spec(root: Path, target: Path) -> tuple[list[Path], list[Requirement]] | None:
    """The spec files already under ``root/specs`` (``target`` aside: ``--force`` replaces it)
    and their requirements; ``None`` when there are none.

    Raises:
        UsageError: they do not load (each problem is printed first, one line each): init
            adds to a Spec ``chimera check`` can read, never to a broken one.
    """
    from chimera.spec.discovery import discover_spec_files
    from chimera.spec.loader import load_spec

    folder = root / "specs"
    if not folder.is_dir():
        return None
    mine = os.path.realpath(target)
    files = [f for f in discover_spec_files([folder]) if os.path.realpath(f) != mine]
    if not files:
        return None
    try:
        spec = load_spec(files)
    except SpecError as exc:
        for problem in exc.problems:
            err(str(problem))
        count = len(exc.problems)
        raise UsageError(
            f"{folder} holds an invalid spec ({count} problem{'s' if count != 1 else ''}); "
            "fix it before chimera init adds a starter file to it"
        ) from exc
    return files, list(spec.requirements)


def _validate(
    text: str, directory: Path, existing: list[Path], ids: set[str]
) -> list[tuple[str, str]]:
    """Load ``text`` as a spec file with the real loader, together with the ``existing`` spec
    files it joins (the Spec ``chimera check`` will load); ``[(id, describe)]`` of its own
    requirements (``ids``), in its order.

    What init writes must load, alone and beside the files already there: a problem here is a
    bug in the inference, reported as one, and nothing is written.
    """
    from chimera.spec.loader import load_spec

    fd, tmp = tempfile.mkstemp(suffix=".yaml", prefix="chimera-init-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        try:
            spec = load_spec([*existing, Path(tmp)])
        except ChimeraError as exc:
            raise ChimeraError(f"the inferred spec for {directory} does not load: {exc}") from exc
    finally:
        with contextlib.suppress(OSError):
            Path(tmp).unlink()
    return [(r.id, r.check.describe()) for r in spec.requirements if r.id in ids]
