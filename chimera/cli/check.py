"""``chimera check``: evaluate the Spec once and report every requirement.

The CLI treats the Spec as one unit: if any spec file is invalid, nothing runs and the exit
status is 2. Otherwise every requirement is evaluated by :func:`check_drift` and the exit
status is 0 when all passed, 1 when any is red (``failed`` or ``error``).

Formats (stdout):

* ``text`` (default): one line per requirement (status, id, what it checks), then the
  message and evidence of every red one, then a summary line.
* ``json`` (``--json``): exactly one JSON object, :meth:`DriftReport.to_json` — version,
  ok, counts, results. An invalid spec gives ``{"version", "ok": false, "errors": [...]}``.
* ``github``: the text report plus one GitHub Actions ``::error`` workflow command per red
  requirement, pointing at its first evidence location in the repository (else at the
  requirement in its YAML file), so the failure is annotated on the pull request's diff.

With the result cache on, a run whose output the tree alone decides is stored for
:mod:`chimera.cli._replay`, which prints it again for an unchanged re-check. Hints about the
tree (a virtual environment the scopes select) come from :mod:`chimera.cli._hints`, on stderr.

Past ~400 lines because the three formats render one report and share its pieces (the text
parts the replay stores, the annotation targets, the invalid-spec output of each format).
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chimera.cli._base import Subparsers, err, paint, use_color
from chimera.cli._root import find_root
from chimera.errors import ConfigError, SpecError, SpecProblem, UsageError

if TYPE_CHECKING:
    from chimera.cli._replay import Recorder
    from chimera.spec.engine.options import EngineOptions
    from chimera.spec.parsecache import ParseCache
    from chimera.spec.results import DriftReport, RequirementResult

JSON_VERSION = 1
"""Version of the ``--json`` document (kept equal to ``chimera.spec.results``' version)."""

DEFAULT_MAX_EVIDENCE = 5


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "check",
        help="check the Spec against the tree and report every requirement",
        description=(
            "Evaluate every requirement of the Spec against the tree at --root. "
            "Exit status: 0 all passed, 1 any requirement red, 2 invalid spec or usage."
        ),
    )
    parser.add_argument(
        "spec_paths",
        nargs="*",
        metavar="SPEC_PATH",
        help="spec file or directory of *.yaml/*.yml files, relative to the current "
        "directory (default: specs/ under --root)",
    )
    parser.add_argument(
        "--root",
        metavar="DIR",
        help="the tree to check: the spec's paths are relative to it and its commands run "
        "in it (default: the nearest directory with specs/, else the git repository's root; "
        "see the docs' chimera check output page)",
    )
    fmt = parser.add_mutually_exclusive_group()
    fmt.add_argument(
        "--json",
        dest="format",
        action="store_const",
        const="json",
        help="print one JSON object (the versioned document the docs' chimera check output "
        "page describes)",
    )
    fmt.add_argument(
        "--format",
        dest="format",
        choices=("text", "json", "github"),
        help="output format (default: text); github adds ::error workflow commands",
    )
    parser.add_argument(
        "--only",
        metavar="ID",
        nargs="+",
        action="extend",
        help="check only these requirement ids",
    )
    parser.add_argument(
        "--max-evidence",
        type=int,
        default=DEFAULT_MAX_EVIDENCE,
        metavar="N",
        help=f"evidence locations shown per red requirement (default {DEFAULT_MAX_EVIDENCE})",
    )
    parser.add_argument(
        "--all-evidence",
        action="store_true",
        help="list every evidence location in --json (default: the first 20 per "
        "requirement and evidence_omitted, the count of the rest)",
    )
    parser.add_argument(
        "--no-cache",
        action="store_true",
        help="neither read nor write any cache under .chimera/cache/ (results, reports, "
        "parsed specs, replays; also: CHIMERA_NO_CACHE=1)",
    )
    parser.set_defaults(handler=run, format="text")


def run(args: argparse.Namespace) -> int:
    fmt: str = args.format
    try:
        return _run(args, fmt)
    except (UsageError, ConfigError) as exc:
        if fmt == "json":
            _emit_json({"version": JSON_VERSION, "ok": False, "errors": [_usage_error(exc)]})
        raise


def _run(args: argparse.Namespace, fmt: str) -> int:
    started = time.monotonic()
    cwd = Path.cwd()
    if args.root:
        root = Path(args.root)
        if not root.is_dir():
            raise UsageError(f"--root {args.root}: not a directory")
    else:
        root, why = find_root(cwd)
        if root != cwd:
            # Said first, so a report of a tree other than the current directory is never
            # mistaken for one of the current directory.
            err(f"chimera: checking {root} ({why}; --root sets it)")
    if args.max_evidence < 1:
        raise UsageError("--max-evidence: must be at least 1")
    from chimera.spec.settings import engine_options, load_check_settings

    # The result cache is trusted here (the user's own tree), never in autonomous runs.
    use_cache = not args.no_cache and os.environ.get("CHIMERA_NO_CACHE", "") in ("", "0")
    configs_read = None
    replay_argv = getattr(args, "replay_argv", None)
    if use_cache and replay_argv is not None:
        from chimera.cli._replay import config_digests

        # Before the configuration is read: an edit landing between that read and the
        # replay's key must not store this run's output under the edited bytes.
        configs_read = config_digests(root)
    from chimera.spec.results import DEFAULT_EVIDENCE_LIMIT

    # Evidence past what the output shows is counted, never built (--all-evidence: all).
    shown = None if args.all_evidence else max(args.max_evidence, DEFAULT_EVIDENCE_LIMIT)
    options = dataclasses.replace(
        engine_options(load_check_settings(root)), result_cache=use_cache, evidence_limit=shown
    )
    default_specs = not args.spec_paths
    if default_specs:
        spec_paths = [Path("specs") if root == cwd else root / "specs"]
        if not spec_paths[0].exists():
            raise UsageError(
                f"{spec_paths[0]}: no such directory; pass SPEC_PATH, "
                "run 'chimera init' to write a starter spec, or write one (docs: the Spec "
                "format)"
            )
    else:
        spec_paths = [Path(p) for p in args.spec_paths]

    from chimera.spec.discovery import discover_spec_files

    files = discover_spec_files(spec_paths)
    if not files:
        shown = ", ".join(str(p) for p in spec_paths)
        raise UsageError(f"no spec files (*.yaml, *.yml) in {shown}")
    parse_cache = None
    recorder = None
    if use_cache:
        from chimera.spec.parsecache import ParseCache

        parse_cache = ParseCache.for_root(root)
        if replay_argv is not None:
            from chimera.cli._replay import MAX_ENTRIES, Recorder

            recorder = Recorder(
                replay_argv,
                cwd,
                root,
                files,
                max_bytes=options.cache_max_bytes // MAX_ENTRIES,
                configs_read=configs_read,
            )
            recorder.watch_stderr()
    try:
        return _check(args, fmt, files, root, options, started, parse_cache, recorder)
    finally:
        if recorder is not None:
            recorder.stop()


def _check(
    args: argparse.Namespace,
    fmt: str,
    files: list[Path],
    root: Path,
    options: EngineOptions,
    started: float,
    parse_cache: ParseCache | None,
    recorder: Recorder | None,
) -> int:
    from chimera.spec.loader import load_spec

    try:
        spec = load_spec(files, parse_cache=parse_cache)
    except SpecError as exc:
        _emit_spec_errors(exc.problems, fmt, root=root)
        return 2

    only = _only_ids(args.only, [r.id for r in spec.requirements])

    from chimera.spec.drift import DriftSession
    from chimera.spec.results import DEFAULT_EVIDENCE_LIMIT

    limit = None if args.all_evidence else DEFAULT_EVIDENCE_LIMIT
    # check_drift's own body, keeping the session: its record keys the replay.
    session = DriftSession(spec, root, options=options)
    report = session.report(only)
    elapsed = time.monotonic() - started
    if fmt == "json":
        document = report.to_json(max_evidence=limit)
        _emit_json(document)
        # Nothing is evaluated in a replay: each requirement's honest duration there is 0.
        for item in document["results"]:
            item["duration_s"] = 0.0
        parts = [json.dumps(document, ensure_ascii=False) + "\n"]
    else:
        head, tail = _text_parts(report, max_evidence=args.max_evidence)
        if fmt == "github":
            from chimera.github.action.annotations import drift_annotations

            tail += drift_annotations(report, root=root, max_evidence=args.max_evidence)
        sys.stdout.write(f"{head}{elapsed:.2f}{tail}")
        parts = [head, tail]
    from chimera.cli._hints import venv_hints

    hints = venv_hints(root, (r.requirement for r in report), session.engine.scopes)
    if hints:
        # On stderr (the JSON document stays one object), after the report it belongs to; a
        # run that writes one is not stored for replay, so every re-check says it again.
        sys.stdout.flush()
        for line in hints:
            err(f"chimera: hint: {line}")
    status = 0 if report.ok else 1
    if recorder is not None:
        # A plugin kind anywhere in the Spec (even unselected) depends on installed code.
        builtin = all(
            type(r.check).__module__.startswith("chimera.spec.") for r in spec.requirements
        )
        recorder.save(session.tree_record() if builtin else None, parts, status)
    return status


def _only_ids(requested: Sequence[str] | None, known: Sequence[str]) -> list[str] | None:
    if not requested:
        return None
    known_set = set(known)
    wanted: list[str] = []
    for rid in requested:
        if rid not in known_set:
            close = difflib.get_close_matches(rid, known, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            if not hint and ("/" in rid or rid.endswith((".yaml", ".yml"))):
                # --only takes several ids, so a spec path after it reads as one more id.
                hint = " (--only takes several ids: put SPEC_PATHs before it)"
            raise UsageError(f"--only: unknown requirement id {rid!r}{hint}")
        if rid not in wanted:
            wanted.append(rid)
    return wanted


# --------------------------------------------------------------------------- text


def _text_parts(report: DriftReport, *, max_evidence: int) -> tuple[str, str]:
    """The text report, split where the summary's elapsed seconds go."""
    color = use_color(sys.stdout)
    width = min(max((len(r.id) for r in report), default=0), 40)
    lines: list[str] = []
    for result in report:
        status = result.status.value
        shown = paint(f"{status:<6}", "green" if result.passed else "red", enabled=color)
        lines.append(f"{shown}  {result.id:<{width}}  {result.requirement.check.describe()}\n")
    for result in report.red:
        lines.append("\n" + _red_block(result, max_evidence=max_evidence, color=color) + "\n")
    before, after = _summary(report, color=color)
    return "".join(lines) + "\n" + before, after + "\n"


def _red_block(result: RequirementResult, *, max_evidence: int, color: bool) -> str:
    req = result.requirement
    title = f": {req.title}" if req.title else ""
    head = f"{result.status.value.upper()} {req.id}{title}  [{req.location}]"
    body = result.render(max_evidence=max_evidence)
    return paint(head, "bold", enabled=color) + "\n" + _indent(body, "  ")


def _summary(report: DriftReport, *, color: bool) -> tuple[str, str]:
    """The summary line, split where the elapsed seconds (``0.43``) go."""
    counts = report.counts()
    parts: list[str] = []
    for status in ("failed", "error", "passed"):
        n = counts.get(status, 0)
        if n or (status == "passed" and not parts):
            word = status if status != "error" or n == 1 else "errors"
            parts.append(f"{n} {word}")
    text = f"{', '.join(parts)} in "
    if len(report) == 0:
        text = "no requirements checked in "
    before, after = paint(f"{text}\0s", "green" if report.ok else "red", enabled=color).split("\0")
    return before, after


def _indent(text: str, prefix: str) -> str:
    return "\n".join(prefix + line if line else line for line in text.splitlines())


# --------------------------------------------------------------------------- json


def _emit_json(document: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(document, ensure_ascii=False) + "\n")


def _usage_error(exc: UsageError | ConfigError) -> dict[str, Any]:
    return {"file": None, "line": 0, "col": 0, "message": str(exc)}


# --------------------------------------------------------------------------- invalid spec


def _emit_spec_errors(problems: Sequence[SpecProblem], fmt: str, *, root: Path) -> None:
    for problem in problems:
        err(str(problem))
    count = len(problems)
    err(f"chimera: error: invalid spec ({count} problem{'s' if count != 1 else ''}); nothing ran")
    if fmt == "json":
        _emit_json(
            {
                "version": JSON_VERSION,
                "ok": False,
                "errors": [
                    {"file": p.file, "line": p.line, "col": p.col, "message": p.message}
                    for p in problems
                ],
            }
        )
    elif fmt == "github":
        from chimera.github.action.annotations import spec_problem_annotations

        sys.stdout.write(spec_problem_annotations(problems))
