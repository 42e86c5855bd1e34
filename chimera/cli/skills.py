"""``chimera skills``: inspect and steer learned skills; ``chimera playbook show`` and the
runs' pending proposals (``chimera playbook proposals|accept|reject``, and ``fetch`` for the
Action's, from the learning branch).

Skills live in ``.chimera/skills/<name>/SKILL.md`` (AgentSkills format); every change made
here is a line in ``.chimera/skills/audit.jsonl`` (hash-chained). Promotion by a person makes a
skill trusted — the only way a skill from a tainted run ever is.

Exit status: 0 done, 2 bad usage (unknown skill, invalid file).
"""

from __future__ import annotations

import argparse
import getpass
import sys
from dataclasses import replace
from pathlib import Path

from chimera.cli._base import Subparsers, resolve_root, validate_config
from chimera.errors import UsageError


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser("skills", help="list, show, promote, demote, retire skills")
    parser.add_argument("--root", metavar="DIR", help="the repository (default: current dir)")
    sub = parser.add_subparsers(dest="skills_command", required=True, metavar="ACTION")
    sub.add_parser("list", help="every skill with its state and success interval")
    for action in ("show", "promote", "demote", "retire"):
        p = sub.add_parser(action, help=f"{action} one skill")
        p.add_argument("name")
        if action != "show":
            p.add_argument("--by", help="who decides (default: the current user)")
    exp = sub.add_parser("export", help="copy skills out as AgentSkills folders")
    exp.add_argument("dest", help="a folder; <name>/SKILL.md is written under it")
    imp = sub.add_parser("import", help="read AgentSkills folders in (provisional, untrusted)")
    imp.add_argument("source", help="a folder of <name>/SKILL.md")
    parser.set_defaults(handler=run)
    play = subparsers.add_parser("playbook", help="the ACE playbook of strategies")
    play_sub = play.add_subparsers(dest="playbook_command", required=True, metavar="ACTION")
    show = play_sub.add_parser("show", help="print the playbook")
    show.add_argument("--root", metavar="DIR")
    show.add_argument("--budget", type=int, metavar="TOKENS", help="as a prompt would see it")
    listing = play_sub.add_parser("proposals", help="pending proposals from runs' reflection")
    listing.add_argument("--root", metavar="DIR")
    for action in ("accept", "reject"):
        p = play_sub.add_parser(action, help=f"{action} one proposal (a person's decision)")
        p.add_argument("id", help="the proposal id (lp-...)")
        p.add_argument("--root", metavar="DIR")
        p.add_argument("--by", help="who decides (default: the current user)")
    fetch = play_sub.add_parser(
        "fetch", help="copy the Action's proposals from the learning branch (still pending)"
    )
    fetch.add_argument("--root", metavar="DIR")
    fetch.add_argument("--remote", default="origin", help="the git remote (default: origin)")
    play.set_defaults(handler=run_playbook)


def _root(args: argparse.Namespace) -> Path:
    root = resolve_root(getattr(args, "root", None))
    validate_config(root)
    return root


def run(args: argparse.Namespace) -> int:
    from chimera.evolution.skills import LearnedSkill, SkillState, SkillStore
    from chimera.stats import wilson_interval

    folder = _root(args) / ".chimera" / "skills"
    store = SkillStore(folder)
    out = sys.stdout
    if args.skills_command == "list":
        skills = store.all()
        if not skills:
            out.write("no skills\n")
        for s in skills:
            rate = wilson_interval(s.successes, s.uses).describe(percent=True) if s.uses else "-"
            trust = "trusted" if s.trusted else "tainted"
            out.write(f"{s.name}  v{s.version}  {s.state.value}  {trust}  {rate}\n")
        return 0
    if args.skills_command == "export":
        dest = Path(args.dest)
        for s in store.all():
            (dest / s.name).mkdir(parents=True, exist_ok=True)
            (dest / s.name / "SKILL.md").write_text(s.to_markdown(), encoding="utf-8")
        out.write(f"exported {len(store.all())} skill(s) to {dest}\n")
        return 0
    audit = store.audit()
    if args.skills_command == "import":
        count = 0
        for path in sorted(Path(args.source).glob("*/SKILL.md")):
            found = LearnedSkill.from_markdown(path.read_text("utf-8"), source=str(path))
            if found.name != path.parent.name:
                raise UsageError(f"{path}: name {found.name!r} does not match its folder")
            kept = store.mint(replace(found, trusted=False, sources=(f"import:{path}",)))
            audit.append("skill_imported", name=kept.name, version=kept.version, source=str(path))
            count += 1
        out.write(f"imported {count} skill(s) as provisional and untrusted\n")
        return 0
    skill = store.get(args.name)
    if skill is None:
        raise UsageError(f"no skill named {args.name!r} in {folder}")
    if args.skills_command == "show":
        out.write(skill.to_markdown())
        return 0
    state = {
        "promote": SkillState.PROMOTED,
        "demote": SkillState.DEMOTED,
        "retire": SkillState.RETIRED,
    }[args.skills_command]
    who = args.by or getpass.getuser()
    changed = replace(skill, state=state, trusted=skill.trusted or state is SkillState.PROMOTED)
    store.put(changed)
    audit.append(f"skill_{args.skills_command}d", name=skill.name, version=skill.version, by=who)
    out.write(f"{skill.name}: {skill.state.value} -> {state.value} (by {who})\n")
    return 0


def run_playbook(args: argparse.Namespace) -> int:
    from chimera.evolution.playbook import Playbook
    from chimera.evolution.proposals import ProposalLedger, accept, reject

    if args.playbook_command == "proposals":
        pending = ProposalLedger.at(_root(args)).pending()
        sys.stdout.write("".join(f"{p.describe()}\n" for p in pending) or "no pending proposals\n")
        return 0
    if args.playbook_command == "fetch":
        from chimera.github.learning import branch_sink

        root = _root(args)
        cache = root / ".chimera" / "learning" / "branch.git"
        found = branch_sink(root, cache, remote=args.remote).proposals()
        before = len(ProposalLedger.at(root).proposals())
        ProposalLedger.at(root).record(found)
        added = len(ProposalLedger.at(root).proposals()) - before
        sys.stdout.write(f"{len(found)} proposal(s) on the branch, {added} new (pending)\n")
        return 0
    if args.playbook_command in ("accept", "reject"):
        who = args.by or getpass.getuser()
        if args.playbook_command == "accept":
            sys.stdout.write(
                f"{args.id}: accepted by {who}: {accept(_root(args), args.id, by=who)}\n"
            )
        else:
            reject(_root(args), args.id, by=who)
            sys.stdout.write(f"{args.id}: rejected by {who}\n")
        return 0

    path = _root(args) / ".chimera" / "playbook.md"
    if not path.is_file():
        sys.stdout.write("no playbook yet (.chimera/playbook.md)\n")
        return 0
    book = Playbook.parse(path.read_text("utf-8"), source=str(path))
    text = book.render(args.budget) if args.budget else book.format()
    sys.stdout.write(text.rstrip("\n") + "\n")
    return 0


__all__ = ["register"]
