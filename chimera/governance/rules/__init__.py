"""The lexical RuleSet: deterministic rules for fixed-signature threats, by threat family.

Each :class:`Rule` has an ``id``, a ``description``, the ``verdict`` it gives when it matches,
and a ``test`` — a function of the action's :class:`ActionFacts` that returns the reasons it
matched (empty when it does not). :meth:`RuleSet.evaluate` runs every rule and returns the
matches; :class:`chimera.governance.kernel.TrustKernel` folds them into one decision.

Policy (the invariant the corpora in ``tests/data/governance/`` measure): **never hard-block a
benign action**. Only unambiguous signatures carry ``block`` — an environment dump, a read of a
credential file, data piped to a network tool, a write outside the workspace or into CI
configuration, ``rm -rf /``, ``curl | sh``, ``git push``. Anything merely unusual gets
``review`` (denied for now, listed for the human) or ``warn`` (allowed, noted).

The rules are lexical: commands are shlex-split, paths folded against the workspace (see
:mod:`chimera.governance.shell`). A determined adversary can write a script and run it, or
spell a path in a way no lexer sees; these rules raise the cost of the common attacks and make
them visible in the audit log. They are never the boundary — the sandbox is.

Threat taxonomy after AgentTrust (arXiv 2606.08539) and the usual agent-incident classes. The
families, in precedence order (:data:`FAMILIES`; :func:`default_rules` is their concatenation):

1. ``env-exfiltration`` (:data:`ENV_EXFILTRATION_RULES`) — environment dumps, credential
   variables, ``/proc/*/environ``;
2. ``credentials`` (:data:`CREDENTIAL_RULES`) — credential files, stores, token formats,
   cloud metadata;
3. ``network`` (:data:`NETWORK_RULES`) — exfiltration shapes, reverse shells, network access;
4. ``workspace`` (:data:`WORKSPACE_RULES`) — writes outside the workspace, ``.git/``
   internals, CI/workflow and governance files;
5. ``destruction`` (:data:`DESTRUCTION_RULES`) — ``rm -rf /``, disks, fork bombs, shutdowns;
6. ``supply-chain`` (:data:`SUPPLY_CHAIN_RULES`, with :data:`FETCH_AND_EXECUTE_RULES`) —
   installs from URLs or extra indexes, ``curl | sh``, package-source changes;
7. ``git`` (:data:`GIT_RULES`) — push, remotes, configuration that runs code, history rewrites;
8. ``execution`` (:data:`EXECUTION_RULES`) — shell pipes and ``eval``, privilege, ``gh``,
   container escapes, unparseable commands.

A caller that wants some families alone (the patch scan reads added lines with the lexical
families) takes the tuples, or ``RuleSet(list(rules_for("network", "supply-chain")))``.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from chimera.errors import GovernanceError
from chimera.governance.rules.argv import READ_ONLY_PROGRAMS
from chimera.governance.rules.credentials import CREDENTIAL_RULES
from chimera.governance.rules.destruction import DESTRUCTION_RULES
from chimera.governance.rules.env_exfiltration import ENV_EXFILTRATION_RULES
from chimera.governance.rules.execution import EXECUTION_RULES
from chimera.governance.rules.facts import ActionFacts, Operand, is_network_command
from chimera.governance.rules.git import GIT_RULES
from chimera.governance.rules.model import Rule, RuleMatch, RuleSet, RuleTest, Verdict
from chimera.governance.rules.network import NETWORK_RULES
from chimera.governance.rules.paths import (
    CI_PATTERNS,
    is_ci_path,
    secret_dir_reason,
    secret_file_reason,
)
from chimera.governance.rules.supply_chain import FETCH_AND_EXECUTE_RULES, SUPPLY_CHAIN_RULES
from chimera.governance.rules.workspace import WORKSPACE_RULES
from chimera.governance.secret_detectors import find_secret_formats, is_secret_name

FAMILIES: Mapping[str, tuple[Rule, ...]] = MappingProxyType(
    {
        "env-exfiltration": ENV_EXFILTRATION_RULES,
        "credentials": CREDENTIAL_RULES,
        "network": NETWORK_RULES,
        "workspace": WORKSPACE_RULES,
        "destruction": DESTRUCTION_RULES,
        "supply-chain": SUPPLY_CHAIN_RULES,
        "git": GIT_RULES,
        "execution": EXECUTION_RULES,
    }
)
"""Family name → its rules, in precedence order (the order :func:`default_rules` runs them)."""


def rules_for(*families: str) -> tuple[Rule, ...]:
    """The rules of the named families, in precedence order whatever order they are named in.

    Args:
        families: names from :data:`FAMILIES` (``"network"``, ``"supply-chain"`` ...).

    Returns:
        The families' rules concatenated in :data:`FAMILIES` order; ``()`` for no names.

    Raises:
        GovernanceError: a name is not a family (the message lists the known ones).
    """
    unknown = [name for name in families if name not in FAMILIES]
    if unknown:
        raise GovernanceError(
            f"unknown rule family: {', '.join(unknown)} (known: {', '.join(FAMILIES)})"
        )
    return tuple(rule for name, rules in FAMILIES.items() if name in families for rule in rules)


def default_rules() -> tuple[Rule, ...]:
    """The shipped rules, most specific first. Ids are stable: tests and audits cite them."""
    return rules_for(*FAMILIES)


def default_rule_set() -> RuleSet:
    """The shipped rules (:func:`default_rules`) as a fresh :class:`RuleSet` the caller may
    extend or trim."""
    return RuleSet(list(default_rules()))


__all__ = [
    "CI_PATTERNS",
    "CREDENTIAL_RULES",
    "DESTRUCTION_RULES",
    "ENV_EXFILTRATION_RULES",
    "EXECUTION_RULES",
    "FAMILIES",
    "FETCH_AND_EXECUTE_RULES",
    "GIT_RULES",
    "NETWORK_RULES",
    "READ_ONLY_PROGRAMS",
    "SUPPLY_CHAIN_RULES",
    "WORKSPACE_RULES",
    "ActionFacts",
    "Operand",
    "Rule",
    "RuleMatch",
    "RuleSet",
    "RuleTest",
    "Verdict",
    "default_rule_set",
    "default_rules",
    "find_secret_formats",
    "is_ci_path",
    "is_network_command",
    "is_secret_name",
    "rules_for",
    "secret_dir_reason",
    "secret_file_reason",
]
