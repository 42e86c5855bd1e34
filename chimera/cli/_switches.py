"""The session-part switches every run surface takes: ``--no-memory``, ``--no-skills``,
``--no-learning`` and ``--no-reflection`` (``chimera solve``, ``run``, ``resume``, ``approve``).

``--no-skills`` leaves out learned skills, the playbook and the end-of-run Reflector and
Curator and keeps memory; ``--no-learning`` is ``--no-skills --no-memory`` (a run neither
recalls nor is shaped by anything learned).

One place, so the surfaces say the same thing and pass the same request fields; a run does
not record them, so a resume or an approval says them again.
"""

from __future__ import annotations

import argparse
from typing import TypedDict


class PartSwitches(TypedDict):
    """The request fields the switches set (``SolveRequest``, ``RunRequest``, ``ResumeRequest``)."""

    memory: bool
    learning: bool
    reflection: bool


def add_part_switches(parser: argparse.ArgumentParser, *, memory_help: str) -> None:
    """Add the four switches to ``parser`` (``memory_help``: what ``--no-memory`` leaves out
    on this surface)."""
    parser.add_argument("--no-memory", action="store_true", help=memory_help)
    parser.add_argument(
        "--no-skills",
        action="store_true",
        help=(
            "no learned skills or playbook in the prompts and no end-of-run lessons; memory "
            "stays on (add --no-memory for neither)"
        ),
    )
    parser.add_argument(
        "--no-learning",
        action="store_true",
        help="--no-skills and --no-memory together: nothing learned is recalled or applied",
    )
    parser.add_argument(
        "--no-reflection",
        action="store_true",
        help=(
            "no end-of-run Reflector/Curator: no model calls for lessons, no proposals "
            "(memory, skills and playbook unchanged)"
        ),
    )


def part_switches(args: argparse.Namespace) -> PartSwitches:
    """``{"memory", "learning", "reflection"}`` for a request, from the parsed switches
    (``learning`` is skills and the playbook; ``--no-learning`` turns memory off too)."""
    return {
        "memory": not (args.no_memory or args.no_learning),
        "learning": not (args.no_skills or args.no_learning),
        "reflection": not args.no_reflection,
    }
