"""Pre-registered paired A/B comparisons: the only way a default of Chimera changes.

The registration — hypothesis, metric, arms, n, alpha, task ids, holdout ids, seed — is
written and hash-linked into an audit log **before** any run (``ab_registered``), so the
analysis cannot be chosen after the data: a later registration with the same name but another
n, alpha or task set is refused, and ``run`` refuses a registration file that no longer
matches its recorded digest. ``run`` executes both arms on the same tasks (each task in a
fresh copy of the project); ``report`` publishes the result with its interval whether the
treatment wins or loses (``ab_reported``).

Files live in ``.chimera/ab/``: ``audit.jsonl`` (hash-chained), ``NAME/registration.json``,
``NAME/results.jsonl`` and ``NAME/report.{json,md}``. Pre-registration follows the practice of
registered reports (Nosek et al., 2018, "The preregistration revolution").
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from chimera.atomic import atomic_write_text
from chimera.errors import UsageError
from chimera.eval.chain import Chain
from chimera.eval.harness import ArmSettings, TaskRun, run_isolated
from chimera.governance.audit import AuditLog, canonical_json, verify_audit_log
from chimera.localstate import make_dirs
from chimera.spec.yamlmodel import load_yaml_model
from chimera.stats import mcnemar_exact, paired_bootstrap, wilson_interval

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
        self._audit().append(
            "ab_registered",
            name=reg.name,
            digest=digest,
            n=reg.n,
            alpha=reg.alpha,
            tasks=reg.tasks,
            hypothesis=reg.hypothesis,
            source=str(source),
        )
        return reg, True

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
        path = self.dir / name / "results.jsonl"
        out: dict[tuple[str, str], TaskRun] = {}
        if path.is_file():
            for line in path.read_text("utf-8").splitlines():
                if line.strip():
                    data = json.loads(line)
                    arm = data.pop("arm")
                    out[arm, data["task_id"]] = TaskRun(**data)
        return out

    def run(self, name: str, *, model: str, workdir: Path) -> dict[tuple[str, str], TaskRun]:
        """Run both arms on every registered task not run yet (resumable).

        Raises:
            UsageError: the registration is missing or was changed.
        """
        reg = self.load(name)
        chain = reg.chain(self.root)
        done = self.results(name)
        audit = self._audit()
        path = self.dir / name / "results.jsonl"
        for label, arm in (("control", reg.control), ("treatment", reg.treatment)):
            todo = [t for t in reg.tasks if (label, t) not in done]
            if not todo:
                continue
            runs = run_isolated(
                chain, todo, workdir, model=model, arm=arm.settings(), label=f"{name}-{label}"
            )
            for r in runs:
                with path.open("a", encoding="utf-8") as fh:
                    fh.write(json.dumps({"arm": label, **r.to_json()}, sort_keys=True) + "\n")
                audit.append("ab_result", name=name, arm=label, task=r.task_id, passed=r.passed)
                done[label, r.task_id] = r
        return done

    def report(self, name: str, *, model: str = "") -> dict[str, Any]:
        """Analyse a complete run and publish it (``report.json``, ``report.md``), win or lose.

        Raises:
            UsageError: results are missing for some task of either arm.
        """
        reg = self.load(name)
        res = self.results(name)
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
        test = mcnemar_exact(control, treatment)
        verdict = (
            "treatment better"
            if diff.low > 0
            else "control better"
            if diff.high < 0
            else "no significant difference"
        )
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
            "outcomes_seen": outcomes,
        }
        folder = self.dir / name
        atomic_write_text(folder / "report.json", json.dumps(report, indent=2) + "\n")
        atomic_write_text(folder / "report.md", render_report(report))
        self._audit().append("ab_reported", name=name, verdict=verdict, digest=reg.digest())
        return report


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
        f"Registration digest: `{report['registration_digest']}`.",
    ]
    if str(report.get("model", "")).startswith("scripted"):
        lines += ["", "Scripted model: this measures the harness's bookkeeping, not a model."]
    return "\n".join(lines) + "\n"
