"""What a path means: a credential file or directory, CI configuration, a governance file."""

from __future__ import annotations

import re

import pathspec

from chimera.governance.actions import Action
from chimera.governance.shell import is_within
from chimera.sandbox.layout import is_secret_dotenv
from chimera.sandbox.secret_files import is_key_file, is_secret_file

_KEY_BASENAMES = re.compile(r"^id_(rsa|dsa|ecdsa|ed25519|ecdsa_sk|ed25519_sk)$")
_HOME_SECRET_FILES = (
    ".aws/credentials",
    ".netrc",
    ".git-credentials",
    ".pypirc",
    ".docker/config.json",
    ".kube/config",
    ".config/gh/hosts.yml",
    ".npmrc",
    ".config/gcloud/credentials.db",
    ".config/gcloud/access_tokens.db",
    ".config/gcloud/application_default_credentials.json",
    ".azure/accessTokens.json",
    ".azure/msal_token_cache.json",
    ".config/hub",
    ".terraform.d/credentials.tfrc.json",
    ".vault-token",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".gem/credentials",
    ".config/pip/pip.conf",
)
_HOME_SECRET_DIRS = (
    ".ssh",
    ".aws",
    ".gnupg",
    ".config/gh",
    ".kube",
    ".docker",
    ".config/gcloud",
    ".azure",
    ".password-store",
    ".local/share/keyrings",
    ".mozilla",
    ".config/google-chrome",
    ".config/chromium",
)
_HOME_HISTORY = (".bash_history", ".zsh_history", ".python_history", ".psql_history")
_SYSTEM_SECRETS = ("/etc/shadow", "/etc/gshadow", "/etc/sudoers", "/etc/ssl/private")
_SYSTEM_SECRET_DIRS = ("/run/secrets", "/var/run/secrets", "/root")
KEY_MATERIAL = re.compile(r"\.(pem|key|p12|pfx|jks|keystore|kdbx|gpg|asc)$", re.IGNORECASE)
TEXT_SECRETS = re.compile(
    r"\.aws/credentials|\.ssh/id_[a-z0-9_]+(?!\.pub)\b|\.git-credentials|(?<![\w.])\.netrc\b"
    r"|/etc/shadow|\.docker/config\.json|\.kube/config|gh/hosts\.yml|\.vault-token"
    r"|/var/run/secrets|/run/secrets/|\.pypirc"
)
PROC_ENVIRON = re.compile(r"/proc/[^/\s'\"]+/(environ|mem)\b")


def secret_file_reason(action: Action, resolved: str) -> str | None:
    """Why ``resolved`` is a credential file, or ``None``."""
    home = action.home_dir
    base = resolved.rsplit("/", 1)[-1]
    if is_secret_dotenv(base):
        return f"{resolved} (a dotenv file: holds secrets)"
    if _KEY_BASENAMES.match(base):
        return f"{resolved} (an SSH private key)"
    # Keys and PEM files by suffix only warn (_key_material): in a workspace they are mostly
    # test fixtures. The sandbox masks them all the same.
    if is_secret_file(base) and not is_key_file(base):
        return f"{resolved} (a secret file: chimera.sandbox.secret_files)"
    for rel in _HOME_SECRET_FILES:
        if resolved == f"{home}/{rel}" or resolved.endswith("/" + rel):
            return f"{resolved} (a credential file)"
    for rel in _HOME_HISTORY:
        if resolved == f"{home}/{rel}":
            return f"{resolved} (a shell history: often holds secrets)"
    for path in _SYSTEM_SECRETS:
        if is_within(resolved, path):
            return f"{resolved} (system secrets)"
    if PROC_ENVIRON.search(resolved + " "):
        return f"{resolved} (a process's environment or memory)"
    return None


def secret_dir_reason(action: Action, resolved: str) -> str | None:
    """Why ``resolved`` lies in a credential directory, or ``None``."""
    home = action.home_dir
    for rel in _HOME_SECRET_DIRS:
        if is_within(resolved, f"{home}/{rel}"):
            return f"{resolved} (inside ~/{rel}, credentials)"
    for path in _SYSTEM_SECRET_DIRS:
        if is_within(resolved, path) and not is_within(action.workspace, path):
            return f"{resolved} (inside {path})"
    return None


CI_PATTERNS = (
    ".github/workflows/**",
    ".github/actions/**",
    ".gitlab-ci.yml",
    ".gitlab-ci.yaml",
    ".gitlab/ci/**",
    ".circleci/**",
    ".travis.yml",
    "azure-pipelines.yml",
    "azure-pipelines.yaml",
    ".azure-pipelines/**",
    "Jenkinsfile",
    "Jenkinsfile.*",
    "bitbucket-pipelines.yml",
    ".buildkite/**",
    ".drone.yml",
    ".drone.star",
    "appveyor.yml",
    ".appveyor.yml",
    ".woodpecker.yml",
    ".woodpecker/**",
    "cloudbuild.yaml",
    "cloudbuild.yml",
    ".cirrus.yml",
    ".semaphore/**",
    "codefresh.yml",
    "bitrise.yml",
    ".github/workflows",
    ".github/actions",
    ".circleci",
    ".buildkite",
)
"""Workspace-relative gitignore-style patterns of CI/workflow configuration."""

_CI_SPEC = pathspec.GitIgnoreSpec.from_lines([p.lower() for p in CI_PATTERNS])
GOVERNANCE_FILES = pathspec.GitIgnoreSpec.from_lines(
    [
        *("CODEOWNERS", ".github/CODEOWNERS", "docs/CODEOWNERS", ".github/settings.yml"),
        *("/action.yml", "/action.yaml", ".github/dependabot.yml", ".gitmodules"),
        # Chimera's own settings (sandbox mode, network, environment allowlist, budgets): an
        # agent must not loosen what confines it; a resumed or approved run re-reads them.
        "/chimera.toml",
    ],
)


def is_ci_path(relative: str) -> bool:
    """Whether a workspace-relative path is CI configuration (case-insensitive)."""
    rel = relative.lower()
    while rel.startswith("./"):
        rel = rel[2:]
    return bool(rel) and _CI_SPEC.match_file(rel)


def ci_in_text(text: str) -> bool:
    lowered = text.lower()
    return bool(
        re.search(
            r"\.github/(workflows|actions)|\.gitlab-ci\.ya?ml|\.circleci/|\.travis\.yml"
            r"|azure-pipelines\.ya?ml|jenkinsfile|bitbucket-pipelines\.yml|\.buildkite/"
            r"|\.drone\.yml|\.woodpecker",
            lowered,
        )
    )


__all__ = [
    "CI_PATTERNS",
    "GOVERNANCE_FILES",
    "KEY_MATERIAL",
    "PROC_ENVIRON",
    "TEXT_SECRETS",
    "ci_in_text",
    "is_ci_path",
    "secret_dir_reason",
    "secret_file_reason",
]
