"""``chimera doctor``'s checks of who may do what: branch protection requiring the Spec check,
and the GitHub App's installation and permissions (as far as the token may see them).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from chimera.errors import GitHubNotFound, GitHubPermissionDenied
from chimera.github.doctor.report import APP_PERMISSIONS, DoctorContext, Finding, Mark, short

__all__ = ["check_app", "check_protection"]

_LEVEL = {"read": 1, "write": 2, "admin": 3}


def _is_spec(context: str, names: tuple[str, ...]) -> bool:
    lowered = context.strip().lower()
    return any(lowered == n.lower() or lowered.endswith(f" / {n.lower()}") for n in names)


def check_protection(ctx: DoctorContext) -> Finding:
    """The ``protection`` finding: the default branch requires a status check named as
    ``ctx.options.spec_checks`` says, through a ruleset or branch protection.

    Raises:
        GitHubError: the API failed after retries (a refusal is ``unknown``, not an error).
    """
    branch = ctx.branch
    names = ctx.options.spec_checks
    required: list[str] = []
    for rule in ctx.client.branch_rules(branch):
        if rule.get("type") == "required_status_checks":
            params = rule.get("parameters") or {}
            for check in params.get("required_status_checks") or ():
                if isinstance(check, dict) and check.get("context"):
                    required.append(str(check["context"]))
    readable = True
    guarded = bool(required)
    try:
        data = ctx.get(
            f"GET protection of {branch}", f"/repos/{ctx.name}/branches/{quote(branch)}/protection"
        )
        guarded = True
        checks = data.get("required_status_checks") if isinstance(data, dict) else None
        if isinstance(checks, dict):
            required += [str(c) for c in checks.get("contexts") or ()]
            required += [
                str(c.get("context")) for c in checks.get("checks") or () if isinstance(c, dict)
            ]
    except GitHubNotFound:
        pass  # "Branch not protected" (a ruleset may still require the check)
    except GitHubPermissionDenied:
        readable = False
    fix = (
        f"Settings → Branches (or Rules → Rulesets): protect {branch} and require the status "
        f"check `{names[0]}` (the Spec check's job) before merging"
    )
    if any(_is_spec(c, names) for c in required):
        found = next(c for c in required if _is_spec(c, names))
        return Finding(
            "protection", Mark.OK, f"{branch} requires the Spec check ({short(found, 60)})"
        )
    if not readable and not guarded:
        return Finding(
            "protection",
            Mark.UNKNOWN,
            f"could not check {branch}'s branch protection: no ruleset requires the Spec check "
            "and the token may not read branch protection (an admin's token can)",
        )
    if guarded:
        others = ", ".join(short(c, 40) for c in sorted(set(required))[:4]) or "none"
        return Finding(
            "protection",
            Mark.FAIL,
            f"{branch} is protected but does not require the Spec check (required: {others})",
            fix,
        )
    return Finding(
        "protection", Mark.FAIL, f"{branch} has no branch protection or ruleset requiring the "
        "Spec check: a red Spec does not block merging", fix,
    )  # fmt: skip


# -- the App -----------------------------------------------------------------------------------


def _uses_app(ctx: DoctorContext) -> bool:
    """The caller passes an App's credentials (or every secret): the App tier."""
    scans = [s for s in ctx.scans if s.uses]
    if not scans:
        return True  # no caller yet: the documented set-up has an App
    return any(
        s.inherits or any("APP" in n and ("KEY" in n or "ID" in n) for n in s.secrets)
        for s in scans
    )


def _lacks(granted: dict[str, Any]) -> list[str]:
    return [
        f"{scope}: {level}"
        for scope, level in APP_PERMISSIONS.items()
        if _LEVEL.get(str(granted.get(scope, "")), 0) < _LEVEL[level]
    ]


def _covers(ctx: DoctorContext, inst: dict[str, Any]) -> bool | None:
    """Whether installation ``inst`` reaches this repository (``None``: cannot tell)."""
    if inst.get("repository_selection") == "all":
        return True
    try:
        data = ctx.get(
            "GET installation repositories",
            f"/user/installations/{int(inst.get('id') or 0)}/repositories?per_page=100",
        )
    except (GitHubPermissionDenied, GitHubNotFound):
        return None
    repos = data.get("repositories") if isinstance(data, dict) else None
    names = {str(r.get("full_name", "")).lower() for r in repos or () if isinstance(r, dict)}
    return ctx.name.lower() in names


def check_app(ctx: DoctorContext) -> Finding:
    """The ``app`` finding: an installation reaching the repository grants
    :data:`APP_PERMISSIONS` (``--app`` narrows it to one slug); ``unknown`` for the
    GITHUB_TOKEN-only tier and whenever the token cannot list installations.

    Raises:
        GitHubError: the API failed after retries (a refusal is ``unknown``, not an error).
    """
    needs = ", ".join(f"{k.replace('_', ' ')}: {v}" for k, v in APP_PERMISSIONS.items())
    if not _uses_app(ctx):
        return Finding(
            "app",
            Mark.UNKNOWN,
            "no App: the caller passes no App credentials, the GITHUB_TOKEN-only tier (no CI "
            "on Chimera's pull requests, no signed memory commits, no queue slots across "
            "jobs; see the docs' page on it)",
        )
    raw_owner = ctx.repo.get("owner")
    owner: dict[str, Any] = raw_owner if isinstance(raw_owner, dict) else {}
    org = str(owner.get("login", "")) if owner.get("type") == "Organization" else ""
    url = f"/orgs/{quote(org)}/installations?per_page=100" if org else "/user/installations"
    cannot = (
        f"could not check the App: the token may not list {'the organization' if org else 'your'}"
        f" App installations ({'an organization owner' if org else 'the installing account'}'s "
        f"own token can); check Settings → GitHub Apps lists it with {needs}"
    )
    try:
        data = ctx.get("GET installations", url)
    except (GitHubPermissionDenied, GitHubNotFound):
        return Finding("app", Mark.UNKNOWN, cannot)
    found = data.get("installations") if isinstance(data, dict) else None
    installs = [i for i in found or () if isinstance(i, dict)]
    if ctx.options.app:
        installs = [i for i in installs if i.get("app_slug") == ctx.options.app]
    reach = [(i, _covers(ctx, i)) for i in installs]
    here = [i for i, covered in reach if covered]
    ready = [i for i in here if not _lacks(i.get("permissions") or {})]
    if ready:
        slug = short(str(ready[0].get("app_slug", "?")), 40)
        return Finding("app", Mark.OK, f"the App {slug} is installed on {ctx.name} with {needs}")
    if here:
        slug = short(str(here[0].get("app_slug", "?")), 40)
        lacking = ", ".join(_lacks(here[0].get("permissions") or {}))
        return Finding(
            "app",
            Mark.FAIL,
            f"the App {slug} is installed on {ctx.name} but lacks {lacking}",
            f"in the App's settings → Permissions, grant {lacking}; then accept the new "
            "permissions on its installation",
        )
    if any(covered is None for _, covered in reach):
        return Finding("app", Mark.UNKNOWN, f"{cannot} (its repositories are not listed)")
    rights = ctx.repo.get("permissions")
    if not (isinstance(rights, dict) and rights.get("admin") is True):
        # GitHub lists a person only the installations they administer: an empty list from
        # a non-admin's token says nothing about the repository.
        return Finding("app", Mark.UNKNOWN, f"{cannot} (this token is no admin's of {ctx.name})")
    which = f"the App {ctx.options.app}" if ctx.options.app else "no GitHub App"
    return Finding(
        "app",
        Mark.FAIL,
        f"{which} is installed on {ctx.name} (the caller passes App credentials)",
        f"create a GitHub App with {needs}, install it on {ctx.name}, and store its id and "
        "private key as the caller's secrets",
    )
