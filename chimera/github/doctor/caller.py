"""Reading an adopter's workflows for ``chimera doctor``: which of them call Chimera, pinned to
what, and which secrets they pass.

A workflow calls Chimera when a job ``uses:`` Chimera's reusable workflow
(``OWNER/chimera/.github/workflows/FILE.yml@REF``: the one caller ``chimera init --github``
writes) or a step ``uses:`` Chimera's action (``OWNER/chimera@REF``: the older set-up of
several files). Only a full 40-hex commit is a pin: a tag or a branch can be moved to run other
code with the caller's secrets. The text is data: it is parsed as YAML, never run, and what is
shown of it is cut short.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import yaml

__all__ = ["CallerScan", "ChimeraUse", "scan_workflow"]

_SHA = re.compile(r"[0-9a-f]{40}")
_REUSABLE = re.compile(
    r"(?P<repo>[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)/\.github/workflows/[A-Za-z0-9_.-]+\.ya?ml@(?P<ref>\S+)"
)
_ACTION = re.compile(
    r"(?P<repo>[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)(?:/[A-Za-z0-9_./-]*)?@(?P<ref>\S+)"
)
_SECRET = re.compile(r"\bsecrets\.([A-Za-z_][A-Za-z0-9_]*)")
# Secrets GitHub provides itself: never missing.
_BUILT_IN = frozenset({"GITHUB_TOKEN"})


@dataclass(frozen=True)
class ChimeraUse:
    """One ``uses:`` of Chimera.

    Attributes:
        path: the workflow file (``.github/workflows/chimera.yml``).
        job: the job id it is in.
        target: the ``uses:`` value (cut to 200 characters).
        ref: what follows ``@``.
        reusable: a job calling the reusable workflow (else a step using the action).
    """

    path: str
    job: str
    target: str
    ref: str
    reusable: bool

    @property
    def pinned(self) -> bool:
        """The ref is a full commit SHA."""
        return _SHA.fullmatch(self.ref) is not None

    @property
    def ref_kind(self) -> str:
        """``commit``, ``short SHA`` (GitHub refuses it), or ``tag or branch``."""
        if self.pinned:
            return "commit"
        if re.fullmatch(r"[0-9a-f]{7,39}", self.ref):
            return "short SHA"
        return "tag or branch"


@dataclass(frozen=True)
class CallerScan:
    """What one workflow file says about Chimera.

    Attributes:
        uses: each ``uses:`` of Chimera, in file order.
        secrets: the secrets the file names (``secrets.NAME``), sorted, GitHub's own left out.
        inherits: a job calling Chimera passes ``secrets: inherit``.
        problem: why the file could not be read as a workflow (``""``: it could).
    """

    uses: tuple[ChimeraUse, ...] = ()
    secrets: tuple[str, ...] = ()
    inherits: bool = False
    problem: str = ""


def _is_chimera(repo: str, sources: tuple[str, ...]) -> bool:
    if sources:
        return repo.lower() in {s.lower() for s in sources}
    return repo.split("/", 1)[1].lower() == "chimera"


def scan_workflow(path: str, text: str, *, sources: tuple[str, ...] = ()) -> CallerScan:
    """Scan one workflow file's ``text``.

    Args:
        path: the file's path in the repository (shown in findings).
        text: its content.
        sources: the ``owner/name`` repositories that are Chimera (``()``: any repository
            named ``chimera``, such as ``chimera-dev/chimera`` or a fork).

    Returns:
        The scan; a file that is no YAML mapping has ``problem`` set and nothing else.
    """
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        return CallerScan(problem=f"{path}: not valid YAML{where}")
    if not isinstance(data, dict):
        return CallerScan(problem=f"{path}: not a workflow (no mapping at the top)")
    jobs = data.get("jobs")
    uses: list[ChimeraUse] = []
    inherits = False
    for job_id, job in jobs.items() if isinstance(jobs, dict) else ():
        if not isinstance(job, dict):
            continue
        called = job.get("uses")
        target = called.strip() if isinstance(called, str) else ""
        match = _REUSABLE.fullmatch(target)
        if match and _is_chimera(match["repo"], sources):
            uses.append(ChimeraUse(path, str(job_id), target[:200], match["ref"], True))
            inherits = inherits or job.get("secrets") == "inherit"
        for step in job.get("steps") or ():
            used = step.get("uses") if isinstance(step, dict) else None
            step_target = used.strip() if isinstance(used, str) else ""
            found = _ACTION.fullmatch(step_target)
            if found and _is_chimera(found["repo"], sources):
                uses.append(ChimeraUse(path, str(job_id), step_target[:200], found["ref"], False))
    if not uses:
        return CallerScan()
    names = sorted({name for name in _SECRET.findall(text) if name not in _BUILT_IN})
    return CallerScan(tuple(uses), tuple(names), inherits)
