"""What publish acts on, re-derived: never the agent job's word (DESIGN.md step 5).

:func:`gate` takes decide's and verify's outputs and the patch, and returns a
:class:`GateResult`: whether the change may be pushed, and — computed here from the patch and
the base commit — its risk, ``spec-change`` and scan findings. It refuses (``blocked``) when
the patch is not the one verify judged (its SHA-256), when verify judged another base or
another goal (the Spec digest publish recomputes from the base commit), and when the scan
blocks. ``sandbox: scrubbed`` makes the verdict advisory: a draft labelled ``risk:high``,
never auto-merged.

Every step is written to publish's own hash-chained audit log (:class:`PublishAudit`), a
separate artifact: the inputs it received, what it recomputed, the scan findings, the
decision, and the agent job's audit head as received through a job output.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chimera.errors import ChimeraError
from chimera.github.scan import ScanLimits, ScanResult, scan_patch
from chimera.github.scan.paths import PatchUnreadable, read_changes
from chimera.github.trust.basecommit import changed_since, read_base_files, sha256_text, spec_digest
from chimera.github.trust.chain import Decided, Verified, acceptance_requirements, patch_risk

if TYPE_CHECKING:
    from chimera.github.trust.settings import ActionSettings
    from chimera.governance.audit import AuditLog

__all__ = ["ADVISORY_REASON", "GateResult", "PublishAudit", "gate", "pause_reasons"]

ADVISORY_REASON = "the verdict was not sandboxed (sandbox: scrubbed): it is advisory"


class PublishAudit:
    """publish's own audit log (``audit.jsonl`` in ``folder``); ``None`` folder: not kept."""

    def __init__(self, folder: Path | None, run_id: str) -> None:
        self.log: AuditLog | None = None
        if folder is not None:
            from chimera.orchestration.session_factory import open_audit

            self.log = open_audit(folder, run_id)

    def record(self, event: str, /, **fields: Any) -> None:
        if self.log is not None:
            self.log.append(event, **fields)

    @property
    def head(self) -> str | None:
        return self.log.head_hash if self.log is not None else None


@dataclass
class GateResult:
    """The re-derived facts publish acts on.

    Attributes:
        refusal: ``None`` when the change may be pushed; else ``(kind, detail)``.
        verdict: verify's verdict (``passed``, ``paused``, ``failed``, ``error``, ``held``).
        advisory: ``sandbox: scrubbed`` — the verdict is advisory.
        patch: the patch text (its hash matched verify's).
        scan: the scan of the patch.
        risk_reasons: why the change is risky (empty: low risk); for a resume, what changed
            since the approved head. Spec files the patch adds count here too (they can only
            hold a change for a person, never let one through).
        pause_reasons: why the whole patch is risky from the base commit alone — deletions,
            the base's high-risk paths, ``risk: high`` requirements of decide's acceptance
            block, never a spec file the patch adds. A ``paused`` verdict is acted on only
            when this is not empty (:func:`pause_reasons`).
        spec_change: the patch touches the Spec folder.
    """

    refusal: tuple[str, str] | None
    verdict: str
    advisory: bool
    patch: str = ""
    scan: ScanResult = field(default_factory=ScanResult)
    risk_reasons: list[str] = field(default_factory=list)
    pause_reasons: list[str] = field(default_factory=list)
    spec_change: bool = False

    @property
    def patch_sha(self) -> str:
        return sha256_text(self.patch)

    @property
    def risk_high(self) -> bool:
        return bool(self.risk_reasons)


def _declared_high(reqs: list[dict[str, Any]]) -> list[str]:
    return sorted({str(r.get("id")) for r in reqs if str(r.get("risk", "")).lower() == "high"})


def _acceptance_high(decided: Decided) -> list[str]:
    """Ids declared ``risk: high`` in decide's acceptance block (read as data)."""
    # verify already judged an unreadable block; publish only needs the risk here.
    with contextlib.suppress(ChimeraError):
        return _declared_high(acceptance_requirements(decided.acceptance))
    return []


def pause_reasons(decided: Decided, patch: str, high_risk_paths: Sequence[str]) -> list[str]:
    """Why ``patch`` is risky judged from the base commit alone (see
    :attr:`GateResult.pause_reasons`): its deletions, the base configuration's
    ``high_risk_paths`` it touches, and the ``risk: high`` requirements of decide's
    acceptance block. A spec file the patch adds never counts: its author is the agent."""
    try:
        rows = [(c.path, c.status) for c in read_changes(patch)[0]] if patch.strip() else []
    except PatchUnreadable:
        rows = []
    return patch_risk(
        rows, high_risk_paths=high_risk_paths, high_risk_requirements=_acceptance_high(decided)
    )


def _high_risk_requirements(decided: Decided, patch: str, spec_dir: str) -> list[str]:
    """Ids declared ``risk: high`` in decide's acceptance block or in spec files the patch
    adds (their YAML is read as data; nothing runs). Only ever holds a change for a person."""
    import yaml

    reqs: list[dict[str, Any]] = []
    # verify already judged an unreadable block; publish only needs the risk here.
    with contextlib.suppress(ChimeraError):
        reqs += acceptance_requirements(decided.acceptance)
    try:
        changes, _ = read_changes(patch)
    except PatchUnreadable:
        changes = []
    for change in changes:
        if change.path.startswith(spec_dir) and change.status == "A":
            try:
                data = yaml.safe_load(change.added_text)
            except yaml.YAMLError:
                continue
            items = data.get("requirements") if isinstance(data, dict) else None
            reqs += [i for i in items or [] if isinstance(i, dict)]
    return _declared_high(reqs)


def gate(
    root: Path,
    settings: ActionSettings,
    decided: Decided,
    verified: Verified,
    patch: str,
    audit: PublishAudit,
    *,
    work: Path,
    approved_head: str | None = None,
) -> GateResult:
    """Re-derive what publish acts on (module docstring).

    Args:
        root: publish's checkout (holds ``decided.base_sha``).
        settings: the Action's settings (spec path, scan limits, ``sandbox``).
        decided / verified: the earlier jobs' outputs.
        patch: the patch from the artifact.
        audit: publish's audit log.
        work: a scratch folder for the base commit's files.
        approved_head: for a resume, the head commit a person approved: risk is judged on
            what changed since (a newly risky path needs a fresh approval).

    Raises:
        ChimeraError: the base commit cannot be read.
        ConfigError: the base commit's configuration is invalid.
    """
    advisory = settings.sandbox == "scrubbed"
    patch_hash = sha256_text(patch)
    digest = spec_digest(root, decided.base_sha, settings.spec_path, decided.acceptance_sha256)
    audit.record(
        "inputs",
        decided={
            "issue": decided.issue,
            "mode": decided.mode,
            "base_sha": decided.base_sha,
            "acceptance_sha256": decided.acceptance_sha256,
        },
        verified=verified.to_outputs(),
        sandbox=settings.sandbox,
    )
    audit.record("recomputed", patch_sha256=patch_hash, spec_digest=digest)
    result = GateResult(None, verified.verdict, advisory, patch=patch)
    refusal = _mismatch(decided, verified, patch_hash, digest)
    if refusal is not None:
        result.refusal = ("blocked", refusal)
        audit.record("refused", reason=refusal)
        return result
    spec_dir = settings.spec_path.strip("/") + "/"
    base = read_base_files(root, decided.base_sha, settings.spec_path, work / "base-files")
    if patch.strip():
        result.scan = scan_patch(
            patch,
            workspace=str(root),
            limits=ScanLimits(settings.max_patch_bytes, settings.max_file_bytes),
            base=decided.base_sha,
        )
    if approved_head:
        rows = changed_since(root, decided.base_sha, patch, approved_head)
        risky_ids: list[str] = []  # approved with the head; new spec files show in ``rows``
    else:
        try:
            rows = [(c.path, c.status) for c in read_changes(patch)[0]] if patch.strip() else []
        except PatchUnreadable:
            rows = []
        risky_ids = _high_risk_requirements(decided, patch, spec_dir)
    result.risk_reasons = patch_risk(
        rows, high_risk_paths=base.config.run.high_risk_paths, high_risk_requirements=risky_ids
    )
    result.pause_reasons = pause_reasons(decided, patch, base.config.run.high_risk_paths)
    if verified.verdict == "paused":
        # A paused change is held whatever changed since an approval: say why it is risky.
        result.risk_reasons += [r for r in result.pause_reasons if r not in result.risk_reasons]
    if advisory:
        result.risk_reasons.append(ADVISORY_REASON)
    result.spec_change = any(f.startswith(spec_dir) for f in result.scan.files)
    audit.record(
        "derived",
        risk_reasons=result.risk_reasons,
        pause_reasons=result.pause_reasons,
        spec_change=result.spec_change,
        scan=result.scan.to_json(),
    )
    if result.scan.blocked:
        result.refusal = ("blocked", _blocked_text(result.scan.blocked))
        audit.record("refused", reason="the scan blocked the patch")
    return result


def _mismatch(decided: Decided, verified: Verified, patch_hash: str, digest: str) -> str | None:
    if verified.base_sha != decided.base_sha:
        return (
            f"verify judged the base {verified.base_sha[:12]}, but decide recorded "
            f"{decided.base_sha[:12]}; nothing was published"
        )
    if verified.patch_sha256 != patch_hash:
        return (
            "the patch in the artifact is not the one verify judged (its SHA-256 differs: "
            "changed after verify); nothing was published"
        )
    if verified.spec_digest != digest:
        return (
            "verify judged another Spec or acceptance block than the base commit and decide's "
            "block hold (the Spec digest differs); nothing was published"
        )
    return None


def _blocked_text(blocked: Sequence[Any]) -> str:
    from chimera.github.trust.summary import code

    reasons = "; ".join(
        f"{code(f.path or 'patch', 80)}: {code(f.reason, 160)}" for f in blocked[:10]
    )
    return f"The patch was rejected by the publish scan and was not pushed: {reasons}."
