"""``chimera skills``: inspect and steer learned skills; ``chimera playbook show`` and the
runs' pending proposals (``chimera playbook proposals|accept|reject``, and ``fetch`` for the
Action's, from the learning branch).

Skills live in ``.chimera/skills/<name>/SKILL.md`` (AgentSkills format); every change made
here is a line in ``.chimera/skills/audit.jsonl`` (hash-chained). A skill reaches a prompt only
when it is tested (``test``: the re-run gate on a chain's tasks it was not proposed from) *and*
accepted by a person (``accept``, ``playbook accept``, ``import``). Promotion by a person makes
a tested skill trusted — the only way a skill from a tainted run ever is. ``rollback`` puts the
previous version back (or demotes a first version).

Exit status: 0 done, 1 the re-run gate did not pass (``test``), 2 bad usage (unknown skill,
invalid file).
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
    for action in ("show", "accept", "promote", "demote", "retire", "rollback"):
        p = sub.add_parser(action, help=f"{action} one skill")
        p.add_argument("name")
        if action != "show":
            p.add_argument("--by", help="who decides (default: the current user)")
    test = sub.add_parser(
        "test", help="the re-run gate: re-run a chain's tasks without and with the skill"
    )
    test.add_argument("name")
    test.add_argument("--chain", required=True, metavar="FILE", help="the benchmark chain")
    test.add_argument(
        "--task", action="append", default=[], metavar="ID", help="a task to test on (repeat)"
    )
    test.add_argument("--model", default="scripted", help="the re-runs' model (default scripted)")
    test.add_argument("--workdir", metavar="DIR", help="where re-run workspaces go (default temp)")
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
        "fetch",
        help="copy the Action's proposals (still pending) and apply its runs' skill use counts",
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
            use = "usable" if s.usable else "untested" if not s.tested else "not accepted"
            out.write(f"{s.name}  v{s.version}  {s.state.value}  {trust}  {use}  {rate}\n")
        return 0
    if args.skills_command == "test":
        return _test(args)
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
            who = getpass.getuser()
            kept = store.mint(
                replace(found, trusted=False, sources=(f"import:{path}",), tested="",
                        accepted_by=who, uses=0, successes=0, claimed_uses=0,
                        claimed_successes=0)
            )  # fmt: skip
            audit.append("skill_imported", name=kept.name, version=kept.version, source=str(path))
            count += 1
        out.write(
            f"imported {count} skill(s) as provisional, untrusted and untested "
            "(`chimera skills test NAME --chain FILE` admits one into prompts)\n"
        )
        return 0
    skill = store.get(args.name)
    if skill is None:
        raise UsageError(f"no skill named {args.name!r} in {folder}")
    if args.skills_command == "show":
        out.write(skill.to_markdown())
        return 0
    who = args.by or getpass.getuser()
    if args.skills_command == "accept":
        store.put(replace(skill, accepted_by=who))
        audit.append("skill_accepted", name=skill.name, version=skill.version, by=who)
        after = "usable" if skill.tested else "still untested: `chimera skills test` decides"
        out.write(f"{skill.name} v{skill.version}: accepted by {who} ({after})\n")
        return 0
    if args.skills_command == "rollback":
        before, now = store.rollback(skill.name)
        audit.append(
            "skill_rolled_back", name=skill.name, version=before.version,
            restored=now.version, state=now.state.value, by=who,
        )  # fmt: skip
        if now.version == before.version:
            out.write(f"{skill.name}: no earlier version; v{now.version} demoted (by {who})\n")
        else:
            out.write(f"{skill.name}: v{before.version} -> v{now.version} restored (by {who})\n")
        return 0
    if args.skills_command == "promote" and not skill.tested:
        raise UsageError(
            f"{skill.name}: untested; a skill is promoted only after `chimera skills test "
            f"{skill.name} --chain FILE` passes"
        )
    state = {
        "promote": SkillState.PROMOTED,
        "demote": SkillState.DEMOTED,
        "retire": SkillState.RETIRED,
    }[args.skills_command]
    changed = replace(skill, state=state, trusted=skill.trusted or state is SkillState.PROMOTED)
    if state is SkillState.PROMOTED:
        changed = replace(changed, accepted_by=skill.accepted_by or who)
    store.put(changed)
    audit.append(f"skill_{args.skills_command}d", name=skill.name, version=skill.version, by=who)
    out.write(f"{skill.name}: {skill.state.value} -> {state.value} (by {who})\n")
    return 0


def _test(args: argparse.Namespace) -> int:
    import tempfile

    from chimera.evolution.admit import test_skill

    root = _root(args)
    with tempfile.TemporaryDirectory(prefix="chimera-skill-test-") as tmp:
        done = test_skill(
            root, args.name, Path(args.chain), model=args.model, tasks=args.task,
            workdir=Path(args.workdir) if args.workdir else Path(tmp),
        )  # fmt: skip
    out = sys.stdout
    if done.origin:
        out.write(f"left out (proposed from): {', '.join(done.origin)}\n")
    word = "passed" if done.gate.passed else "failed"
    out.write(f"{args.name} v{done.skill.version}: re-run gate {word}: {done.gate.reason}\n")
    if done.gate.passed:
        state = "usable" if done.skill.usable else "tested; awaiting a person's acceptance"
        out.write(f"{args.name}: {state}\n")
    if args.model == "scripted":
        out.write("scripted model: the re-runs measure bookkeeping, not a model\n")
    return 0 if done.gate.passed else 1


def run_playbook(args: argparse.Namespace) -> int:
    from chimera.evolution.playbook import Playbook
    from chimera.evolution.proposals import ProposalLedger, accept, reject

    if args.playbook_command == "proposals":
        pending = ProposalLedger.at(_root(args)).pending()
        sys.stdout.write("".join(f"{p.describe()}\n" for p in pending) or "no pending proposals\n")
        return 0
    if args.playbook_command == "fetch":
        from chimera.github.publish.learning import branch_sink

        root = _root(args)
        cache = root / ".chimera" / "learning" / "branch.git"
        from datetime import UTC, datetime

        from chimera.evolution.usage import apply_use

        sink = branch_sink(root, cache, remote=args.remote)
        found = sink.proposals()
        before = len(ProposalLedger.at(root).proposals())
        ProposalLedger.at(root).record(found)
        added = len(ProposalLedger.at(root).proposals()) - before
        sys.stdout.write(f"{len(found)} proposal(s) on the branch, {added} new (pending)\n")
        uses = sink.uses()
        lines = [line for record in uses for line in apply_use(root, record, datetime.now(UTC))]
        sys.stdout.write(
            f"{len(uses)} Action run use record(s) on the branch applied (claims: they may "
            "demote or retire, never promote)\n"
        )
        sys.stdout.write("".join(f"{line}\n" for line in lines))
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
