"""The GoalSetter: a run's goal is the whole Spec (repair) or a task's acceptance
requirements (written by a model when the task brings none, vetted, kept in the run's own spec
file).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from chimera.atomic import atomic_write_text
from chimera.errors import ChimeraError, SpecError
from chimera.orchestration.basis import BASIS_KEY, block_ids
from chimera.orchestration.goal import Goal, extract_spec_blocks, vet_acceptance
from chimera.orchestration.run_kit import RunKit
from chimera.orchestration.state import RunState
from chimera.spec.model import Spec
from chimera.spec.results import DriftReport

ACCEPTANCE_HEADER = "# Acceptance requirements of a Chimera task run (added, never edited).\n"


def _same_requirements(files: Sequence[Path], blocks: Sequence[str]) -> bool:
    """Whether ``files`` hold exactly the requirements of ``blocks`` (parsed, in order)."""
    import yaml

    def items(text: str) -> list[Any]:
        data = yaml.safe_load(text)
        found = data.get("requirements") if isinstance(data, dict) else data
        return found if isinstance(found, list) else []

    try:
        held = [r for f in files for r in items(f.read_text(encoding="utf-8"))]
        wanted = [r for body in blocks for r in items(body)]
    except (OSError, yaml.YAMLError):
        return False
    return held == wanted


class GoalSetter:
    """Sets a run's goal over the orchestrator's :class:`RunKit`.

    Args:
        kit: the run's collaborators and plumbing.
    """

    def __init__(self, kit: RunKit) -> None:
        self.kit = kit

    def task_goal(
        self, state: RunState, task: str, spec: Spec, base: DriftReport
    ) -> tuple[Goal | None, DriftReport]:
        """The task's goal (``None`` when no acceptance requirement is usable) and the base
        report extended with the accepted requirements' base results."""
        kit = self.kit
        blocks = extract_spec_blocks(task)
        source = "task"
        try:
            if not blocks and kit.acceptance_writer is not None:
                source = "agent"
                blocks = [kit.acceptance_writer.write_acceptance(task, spec)]
        except ChimeraError as exc:
            state.rejected_acceptance = {"(spec block)": f"writing acceptance failed: {exc}"}
            self.kit.emit("acceptance_rejected", id="(spec block)", reason=str(exc))
            return None, base
        if not blocks:
            return None, base
        ids = block_ids(blocks) if state.extra.get(BASIS_KEY) else None
        if ids:
            earlier = self._earlier_acceptance(spec, ids)
            if (earlier is None or _same_requirements(earlier, blocks)) and all(
                i in spec.by_id() for i in ids
            ):
                # Iterating: an earlier round wrote these requirements into the tree already.
                self.kit.emit("acceptance_carried", ids=ids)
                return self._vetted(state, ids, base, kit.base_drift(state, spec, ids))
            if earlier:
                # The acceptance was edited since: its earlier round's file gives way
                # to the edited block (a re-run by a write-access person adopts the edit).
                for path in earlier:
                    path.unlink(missing_ok=True)
                self.kit.emit("acceptance_replaced", files=sorted(p.name for p in earlier))
                spec = kit.spec()
        try:
            new_ids, reqs, target = self._write_acceptance(state, blocks, spec)
        except ChimeraError as exc:
            state.rejected_acceptance = {"(spec block)": str(exc)}
            self.kit.emit("acceptance_rejected", id="(spec block)", reason=str(exc))
            return None, base
        self.kit.emit("acceptance_written", source=source, ids=new_ids)
        full = kit.spec()
        denied = self.denied_commands(full, new_ids)
        base_new = kit.base_drift(state, full, [i for i in new_ids if i not in denied])
        goal, merged = self._vetted(state, new_ids, base, base_new, denied)
        accepted = list(state.acceptance_ids)
        # Rejected requirements leave the spec: a denied command must never run later, and a
        # broken one must not turn the final check red.
        kept = [r for r in reqs if isinstance(r, dict) and str(r.get("id")) in set(accepted)]
        if kept:
            self._write_spec_file(target, kept)
        else:
            target.unlink(missing_ok=True)
        return goal, merged

    def _earlier_acceptance(self, spec: Spec, ids: Sequence[str]) -> list[Path] | None:
        """The acceptance files an earlier round wrote (Chimera's header) that declare any of
        ``ids``; empty when none of them is declared; ``None`` when one is declared in a file
        Chimera did not write (never replaced: it is carried as it is, or clashes)."""
        by_id = spec.by_id()
        files: set[Path] = set()
        for rid in ids:
            req = by_id.get(rid)
            if req is None:
                continue
            path = Path(req.location.file)
            path = path if path.is_absolute() else self.kit.root / path
            try:
                head = path.read_text(encoding="utf-8").split("\n", 1)[0]
            except OSError:
                return None
            if head != ACCEPTANCE_HEADER.rstrip("\n"):
                return None
            files.add(path)
        return sorted(files)

    def _vetted(
        self,
        state: RunState,
        ids: Sequence[str],
        base: DriftReport,
        base_new: DriftReport,
        denied: dict[str, str] | None = None,
    ) -> tuple[Goal | None, DriftReport]:
        denied = denied or {}
        accepted, rejected = vet_acceptance([i for i in ids if i not in denied], base_new)
        rejected.update(denied)
        state.acceptance_ids = accepted
        state.rejected_acceptance = rejected
        for rid, why in rejected.items():
            self.kit.emit("acceptance_rejected", id=rid, reason=why)
        if not accepted:
            return None, base
        known = {r.id for r in base.results}
        merged = DriftReport(
            base.results + tuple(r for r in base_new if r.id in accepted and r.id not in known)
        )
        return Goal.task(accepted, merged), merged

    def _write_acceptance(
        self, state: RunState, blocks: Sequence[str], spec: Spec
    ) -> tuple[list[str], list[Any], Path]:
        """Add the blocks' requirements as a new spec file.

        Returns:
            Their ids, the raw requirement mappings, and the file written.

        Raises:
            ChimeraError: the blocks are not a valid spec, or clash with existing ids (the
                file is removed again).
        """
        import yaml

        reqs: list[Any] = []
        for body in blocks:
            try:
                data = yaml.safe_load(body)
            except yaml.YAMLError as exc:
                first = str(exc).splitlines()[0]
                raise ChimeraError(f"the chimera block is not valid YAML: {first}") from exc
            items = data.get("requirements") if isinstance(data, dict) else data
            if not isinstance(items, list):
                raise ChimeraError("the chimera block must hold a 'requirements:' list")
            reqs.extend(items)
        kit = self.kit
        name = kit.options.task_spec_name or f"task-{state.run_id}.yaml"
        first_dir = kit.root / kit.spec_paths[0]
        target_dir = first_dir if first_dir.is_dir() else first_dir.parent
        target = target_dir / name
        if target.exists():
            raise ChimeraError(f"{target.name} already exists in the spec; not overwritten")
        self._write_spec_file(target, reqs)
        try:
            kit.spec()
            # Ids are unique across the whole spec directory, whatever --spec selected.
            kit.load_spec([target_dir])
        except SpecError as exc:
            target.unlink()
            # The file existed only to be validated: name the block, and every problem.
            problems = "; ".join(
                f"line {p.line}:{p.col}: {p.message}" if p.line else p.message
                for p in exc.problems
                if Path(p.file).name == target.name
            ) or "; ".join(str(p) for p in exc.problems)
            raise ChimeraError(f"the chimera block is not a valid spec: {problems}") from exc
        except ChimeraError:
            target.unlink()
            raise
        return [str(r.get("id")) for r in reqs if isinstance(r, dict)], reqs, target

    @staticmethod
    def _write_spec_file(target: Path, reqs: list[Any]) -> None:
        import yaml

        text = yaml.safe_dump({"requirements": reqs}, sort_keys=False, allow_unicode=True)
        atomic_write_text(target, ACCEPTANCE_HEADER + text)

    def denied_commands(self, spec: Spec, ids: Sequence[str]) -> dict[str, str]:
        """New requirements whose ``command`` the TrustKernel does not allow (untrusted text:
        it never runs, even in the sandbox, unless the kernel lets it)."""
        from chimera.governance.kernel import TrustKernel

        kernel = TrustKernel()
        by_id = spec.by_id()
        denied: dict[str, str] = {}
        for rid in ids:
            run = getattr(by_id[rid].check, "run", None) if rid in by_id else None
            if not isinstance(run, str):
                continue
            decision = kernel.evaluate_command(run, self.kit.root)
            if decision.denied:
                denied[rid] = f"its command is denied by governance: {decision.message()}"
                self.kit.emit(
                    "acceptance_command_denied",
                    id=rid,
                    verdict=decision.verdict.value,
                    rules=list(decision.rule_ids),
                )
        return denied

    @staticmethod
    def current(state: RunState) -> Goal:
        """The goal a run recorded when it started (its ids, protected and unrelated-red)."""
        return Goal(
            mode=state.mode,
            goal_ids=tuple(state.goal_ids),
            protected=frozenset(state.base_green),
            unrelated_red=tuple(state.unrelated_red),
        )
