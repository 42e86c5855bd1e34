"""Pre-registered paired A/B comparisons: the only way a default of Chimera changes.

The registration — hypothesis, metric, arms, n, alpha, task ids, holdout ids, seed — is
written and hash-linked into an audit log **before** any run (``ab_registered``), so the
analysis cannot be chosen after the data: a later registration with the same name but another
n, alpha or task set is refused, and ``run`` refuses a registration file that no longer
matches its recorded digest. ``run`` executes both arms on the same tasks (each task in a
fresh copy of the project); ``report`` publishes the result with its interval whether the
treatment wins or loses (``ab_reported``).

Files live in ``.chimera/ab/``: ``audit.jsonl`` (hash-chained), ``NAME/registration.json``,
``NAME/record.json`` (the registration record), ``NAME/results.jsonl`` and
``NAME/report.{json,md}``. Pre-registration follows the practice of registered reports (Nosek
et al., 2018, "The preregistration revolution").

**Results are bound to the audit log.** Every result line is written by :meth:`ABStore.
record_result` together with an ``ab_result`` event carrying the line's SHA-256; after each run
the log's head hash goes into the registration record (and, from the CLI, the job summary:
``$GITHUB_STEP_SUMMARY``). ``report`` (and a resumed ``run``) first checks, in order: the
log's chain; that the recorded head — or one given with ``--head``, e.g. from a job summary or
a branch commit — is in it (a log rewritten consistently with edited results no longer holds
it); that no ``(arm, task)`` has two ``ab_result`` events (a deleted line, re-run); and that
the result lines and those events match one to one, in order (an edited or deleted line). Any
failure refuses with one line saying which. The verdict is the two-sided exact McNemar test
after the gates' minimum-sample rule (:func:`ab_verdict`).

The module is past 400 lines because a comparison's record is one thing — registration, the
bound results and the published report share its folder, its audit log and its checks — and
splitting it would spread the tamper checks over modules that each trust the other.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from chimera.atomic import atomic_write_text
from chimera.errors import UsageError
from chimera.eval.chain import Chain
from chimera.eval.gates import MIN_PAIRS, sample_refusal
from chimera.eval.harness import ArmSettings, TaskRun, run_isolated
from chimera.governance.audit import AuditLog, canonical_json, verify_audit_log
from chimera.localstate import make_dirs
from chimera.spec.yamlmodel import load_yaml_model
from chimera.stats import McNemar, mcnemar_exact, paired_bootstrap, wilson_interval

SHIPPED = Path(__file__).parent / "registrations"
CHAINS = Path(__file__).parent / "chains"


class Arm(BaseModel):
    """One arm's settings (each maps to a ``chimera solve`` option)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    memory: bool = True
    diff_feedback: bool = False
    max_attempts: int | None = Field(default=None, ge=1, le=10)

    def settings(self) -> ArmSettings:
        return ArmSettings(self.memory, self.diff_feedback, self.max_attempts)


class Registration(BaseModel):
    """A pre-registered comparison of ``control`` against ``treatment``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: Literal[1] = 1
    name: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    hypothesis: str = Field(min_length=10)
    metric: Literal["pass_rate"] = "pass_rate"
    suite: str = Field(description="a shipped chain name (e.g. inflection) or a chain file")
    control: Arm
    treatment: Arm
    n: int = Field(ge=2)
    alpha: float = Field(gt=0, lt=0.5)
    tasks: list[str]
    holdout: list[str] = Field(default_factory=list)
    seed: int = 0

    @model_validator(mode="after")
    def _consistent(self) -> Registration:
        if len(self.tasks) != self.n:
            raise ValueError(f"n is {self.n} but {len(self.tasks)} task ids are listed")
        if len(set(self.tasks)) != len(self.tasks):
            raise ValueError("task ids repeat")
        if set(self.holdout) & set(self.tasks):
            raise ValueError("holdout ids overlap the task ids")
        if self.control == self.treatment:
            raise ValueError("control and treatment are the same arm")
        return self

    def digest(self) -> str:
        """SHA-256 of the canonical JSON of the registration (what the audit log records)."""
        return hashlib.sha256(canonical_json(self.model_dump(mode="json")).encode()).hexdigest()

    def chain(self, base: Path) -> Chain:
        """The task suite: a shipped chain by name, or a chain file relative to ``base``."""
        shipped = CHAINS / self.suite / "chain.yaml"
        path = shipped if shipped.is_file() else base / self.suite
        chain = Chain.load(path)
        unknown = [t for t in self.tasks if t not in {x.id for x in chain.tasks}]
        if unknown:
            raise UsageError(f"registration {self.name}: unknown task id(s) {', '.join(unknown)}")
        return chain


class ABStore:
    """The A/B folder of a repository (``ROOT/.chimera/ab``)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.dir = root / ".chimera" / "ab"
        self.audit_path = self.dir / "audit.jsonl"

    def _audit(self) -> AuditLog:
        make_dirs(self.dir)
        return AuditLog(self.audit_path, "ab")

    def _events(self, event: str, name: str) -> list[dict[str, Any]]:
        if not self.audit_path.is_file():
            return []
        check = verify_audit_log(self.audit_path)
        if not check.ok:
            raise UsageError(f"{self.audit_path}: does not verify: {check.problems[0]}")
        out = []
        for line in self.audit_path.read_text("utf-8").splitlines():
            entry = json.loads(line)
            if entry["event"] == event and entry["fields"].get("name") == name:
                out.append(entry)
        return out

    def register(self, source: Path) -> tuple[Registration, bool]:
        """Record a registration from a YAML file; returns it and whether it is new.

        Raises:
            ConfigError: the file is invalid (``file:line:col``).
            UsageError: a registration of that name exists with a different digest.
        """
        reg = load_yaml_model(source, Registration, what="the registration", expected="fields")
        reg.chain(source.parent)  # refuse unknown tasks before recording anything
        digest = reg.digest()
        known = self._events("ab_registered", reg.name)
        if known:
            if known[0]["fields"]["digest"] == digest:
                return reg, False
            raise UsageError(
                f"registration {reg.name} exists with digest {known[0]['fields']['digest'][:12]}; "
                "changing n, alpha, arms or the task set after registration is refused "
                "(register under a new name)"
            )
        folder = self.dir / reg.name
        make_dirs(folder)
        atomic_write_text(folder / "registration.json", reg.model_dump_json(indent=2) + "\n")
        audit = self._audit()
        audit.append(
            "ab_registered",
            name=reg.name,
            digest=digest,
            n=reg.n,
            alpha=reg.alpha,
            tasks=reg.tasks,
            hypothesis=reg.hypothesis,
            source=str(source),
        )
        self._write_record(reg.name, digest, audit.head_hash, runs=[])
        return reg, True

    def record_path(self, name: str) -> Path:
        return self.dir / name / "record.json"

    def _write_record(
        self, name: str, digest: str, registered: str, *, runs: list[dict[str, Any]]
    ) -> None:
        record = {"name": name, "digest": digest, "registered_head": registered, "runs": runs}
        atomic_write_text(self.record_path(name), json.dumps(record, indent=2) + "\n")

    def recorded_head(self, name: str) -> str | None:
        """The audit head the registration record holds after the last run (``None``: no
        record, or no run yet)."""
        try:
            data = json.loads(self.record_path(name).read_text("utf-8"))
        except (OSError, ValueError):
            return None
        runs = data.get("runs") if isinstance(data, dict) else None
        if isinstance(runs, list) and runs and isinstance(runs[-1], dict):
            head = runs[-1].get("audit_head")
            return head if isinstance(head, str) else None
        return None

    def record_result(self, name: str, arm: str, run: TaskRun) -> str:
        """Append one result line and its ``ab_result`` audit event (the line's SHA-256);
        returns the log's head after it. The only way a result is written."""
        path = self.dir / name / "results.jsonl"
        line = json.dumps({"arm": arm, **run.to_json()}, sort_keys=True)
        with path.open("a", encoding="utf-8") as fh:
            fh.write(line + "\n")
        audit = self._audit()
        audit.append(
            "ab_result", name=name, arm=arm, task=run.task_id, passed=run.passed,
            outcome=run.outcome, line_sha256=hashlib.sha256(line.encode()).hexdigest(),
        )  # fmt: skip
        return audit.head_hash

    def seal(self, name: str) -> str:
        """Record the log's current head in the registration record (after a run); returns
        it. Show it somewhere no later edit of ``.chimera/ab`` reaches (a job summary)."""
        reg = self.load(name)
        audit = self._audit()
        head = audit.head_hash
        try:
            data = json.loads(self.record_path(name).read_text("utf-8"))
        except (OSError, ValueError):
            data = {}
        runs = list(data.get("runs") or []) if isinstance(data, dict) else []
        runs.append({"audit_head": head, "results": len(self._lines(name))})
        registered = str(data.get("registered_head", "")) if isinstance(data, dict) else ""
        self._write_record(name, reg.digest(), registered, runs=runs)
        return head

    def _lines(self, name: str) -> list[str]:
        path = self.dir / name / "results.jsonl"
        if not path.is_file():
            return []
        return [ln for ln in path.read_text("utf-8").splitlines() if ln.strip()]

    def verify_results(self, name: str, head: str | None = None) -> dict[tuple[str, str], TaskRun]:
        """The results of ``name``, after checking they are bound to the audit log (module
        docstring); ``head`` overrides the registration record's.

        Raises:
            UsageError: one line naming the first problem found.
        """
        where = self.dir / name / "results.jsonl"
        if not self.audit_path.is_file():
            if self._lines(name):
                raise UsageError(f"{where}: results without an audit log; refused")
            return {}
        check = verify_audit_log(self.audit_path)
        if not check.ok:
            raise UsageError(f"{self.audit_path}: does not verify: {check.problems[0]}")
        entries = [json.loads(x) for x in self.audit_path.read_text("utf-8").splitlines()]
        hashes = [e["hash"] for e in entries]
        anchor = head or self.recorded_head(name)
        if anchor is not None and anchor not in hashes:
            source = "--head" if head else f"{self.record_path(name)}"
            raise UsageError(
                f"{self.audit_path}: the head recorded in {source} ({anchor[:12]}) is not in the "
                "log: the log was rewritten (with the results, or instead of them); refused"
            )
        events = [
            e["fields"] for e in entries
            if e["event"] == "ab_result" and e["fields"].get("name") == name
        ]  # fmt: skip
        seen: set[tuple[str, str]] = set()
        for fields in events:
            key = (str(fields.get("arm")), str(fields.get("task")))
            if key in seen:
                raise UsageError(
                    f"{self.audit_path}: {key[0]}:{key[1]} was run twice (a result line deleted "
                    "and re-run); refused"
                )
            seen.add(key)
        lines = self._lines(name)
        for number, (line, fields) in enumerate(zip(lines, events, strict=False), 1):
            if hashlib.sha256(line.encode()).hexdigest() != fields.get("line_sha256"):
                raise UsageError(
                    f"{where}:{number}: does not match the audit log's ab_result for "
                    f"{fields.get('arm')}:{fields.get('task')} (edited or deleted); refused"
                )
        if len(lines) < len(events):
            gone = events[len(lines)]
            raise UsageError(
                f"{where}: the result of {gone.get('arm')}:{gone.get('task')} in the audit log "
                "has no line (deleted); refused"
            )
        if len(lines) > len(events):
            raise UsageError(
                f"{where}:{len(events) + 1}: a result line with no ab_result event in the audit "
                "log (added by hand); refused"
            )
        out: dict[tuple[str, str], TaskRun] = {}
        for line in lines:
            data = json.loads(line)
            arm = data.pop("arm")
            out[arm, data["task_id"]] = TaskRun(**data)
        return out

    def load(self, name: str) -> Registration:
        """The recorded registration, checked against the digest in the audit log.

        Raises:
            UsageError: not registered, or the file was changed after registration.
        """
        known = self._events("ab_registered", name)
        path = self.dir / name / "registration.json"
        if not known or not path.is_file():
            raise UsageError(f"no registration named {name!r} (chimera bench ab register FILE)")
        reg = Registration.model_validate_json(path.read_text("utf-8"))
        if reg.digest() != known[0]["fields"]["digest"]:
            raise UsageError(
                f"{path}: changed after registration (digest differs from the audit log); refused"
            )
        return reg

    def results(self, name: str) -> dict[tuple[str, str], TaskRun]:
        """The verified results of ``name`` (see :meth:`verify_results`)."""
        return self.verify_results(name)

    def run(self, name: str, *, model: str, workdir: Path) -> dict[tuple[str, str], TaskRun]:
        """Run both arms on every registered task not run yet (resumable).

        Raises:
            UsageError: the registration is missing or was changed.
        """
        reg = self.load(name)
        chain = reg.chain(self.root)
        done = self.results(name)  # refuses edited, deleted or re-run lines before running
        for label, arm in (("control", reg.control), ("treatment", reg.treatment)):
            todo = [t for t in reg.tasks if (label, t) not in done]
            if not todo:
                continue
            runs = run_isolated(
                chain, todo, workdir, model=model, arm=arm.settings(), label=f"{name}-{label}"
            )
            for r in runs:
                self.record_result(name, label, r)
                done[label, r.task_id] = r
        self.seal(name)
        return done

    def report(self, name: str, *, model: str = "", head: str | None = None) -> dict[str, Any]:
        """Analyse a complete run and publish it (``report.json``, ``report.md``), win or lose.

        Args:
            head: an audit head recorded elsewhere (a job summary, a branch commit) that the
                log must hold; default: the registration record's.

        Raises:
            UsageError: results are missing for some task of either arm, or they are not the
                ones the audit log bound (one line saying how).
        """
        reg = self.load(name)
        res = self.verify_results(name, head)
        missing = [
            f"{a}:{t}" for a in ("control", "treatment") for t in reg.tasks if (a, t) not in res
        ]
        if missing:
            raise UsageError(f"{name}: no result yet for {', '.join(missing[:5])} (run it first)")
        control = [res["control", t].passed for t in reg.tasks]
        treatment = [res["treatment", t].passed for t in reg.tasks]
        diff = paired_bootstrap(
            [float(x) for x in control],
            [float(x) for x in treatment],
            confidence=1 - reg.alpha,
            seed=reg.seed,
        )
        verdict, test, why = ab_verdict(control, treatment, reg.alpha)
        outcomes = sorted({r.outcome for r in res.values()})
        report = {
            "version": 1,
            "name": reg.name,
            "registration_digest": reg.digest(),
            "hypothesis": reg.hypothesis,
            "model": model,
            "control": wilson_interval(sum(control), reg.n).to_json(),
            "treatment": wilson_interval(sum(treatment), reg.n).to_json(),
            "difference_treatment_minus_control": diff.to_json(),
            "mcnemar_p": test.p_value,
            "alpha": reg.alpha,
            "verdict": verdict,
            "reason": why,
            "audit_head": head or self.recorded_head(name),
            "outcomes_seen": outcomes,
        }
        folder = self.dir / name
        atomic_write_text(folder / "report.json", json.dumps(report, indent=2) + "\n")
        atomic_write_text(folder / "report.md", render_report(report))
        self._audit().append("ab_reported", name=name, verdict=verdict, digest=reg.digest())
        return report


def ab_verdict(
    control: Sequence[bool], treatment: Sequence[bool], alpha: float, *, min_n: int = MIN_PAIRS
) -> tuple[str, McNemar, str]:
    """The registered comparison's verdict: two-sided exact McNemar at ``alpha``, after the
    gates' minimum-sample rule (a refusal is ``insufficient evidence``, with the reason).

    Returns:
        ``(verdict, test, reason)``: ``treatment better``, ``control better``, ``no significant
        difference`` or ``insufficient evidence``; the test; one line.
    """
    test = mcnemar_exact(control, treatment)
    refused = sample_refusal(len(control), alpha, min_n, two_sided=True)
    counts = f"{test.only_b} task(s) only the treatment passed, {test.only_a} only the control"
    if refused is not None:
        return "insufficient evidence", test, f"refused: {refused}"
    if test.p_value <= alpha and test.only_b != test.only_a:
        verdict = "treatment better" if test.only_b > test.only_a else "control better"
    else:
        verdict = "no significant difference"
    return verdict, test, f"{counts}; exact McNemar p = {test.p_value:.4g} (two-sided)"


def render_report(report: dict[str, Any]) -> str:
    """The published Markdown report (the same whichever arm won)."""
    c, t, d = (
        report["control"],
        report["treatment"],
        report["difference_treatment_minus_control"],
    )
    conf = f"{1 - report['alpha']:.0%}"
    lines = [
        f"# A/B {report['name']}: {report['verdict']}",
        "",
        f"Hypothesis (registered before any run): {report['hypothesis']}",
        "",
        "| arm | pass rate | interval |",
        "|---|---|---|",
        f"| control | {c['estimate']:.3f} | [{c['low']:.3f}, {c['high']:.3f}] |",
        f"| treatment | {t['estimate']:.3f} | [{t['low']:.3f}, {t['high']:.3f}] |",
        "",
        f"Paired difference (treatment − control): {d['estimate']:+.3f}, {conf} interval "
        f"[{d['low']:+.3f}, {d['high']:+.3f}] over {d['n']} tasks; exact McNemar "
        f"p = {report['mcnemar_p']:.4g}.",
        f"Verdict: {report['verdict']} ({report.get('reason', '')}).",
        f"Registration digest: `{report['registration_digest']}`.",
    ]
    if report.get("audit_head"):
        lines.append(f"Results verified against audit head `{report['audit_head']}`.")
    if str(report.get("model", "")).startswith("scripted"):
        lines += [
            "",
            "Scripted model: this measures the harness's bookkeeping (the arms, the Spec gate, "
            "the records), not a model.",
        ]
    return "\n".join(lines) + "\n"
