"""Shared setup of the cost-economics subcommands (``ask``, ``delegations``, ``cascade-bench``).

Not a subcommand (the leading underscore): model resolution, credentials, budgeted backends
and run folders, imported lazily by the handlers.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from chimera.errors import UsageError

if TYPE_CHECKING:
    from chimera.config import ChimeraConfig
    from chimera.governance.audit import AuditLog
    from chimera.protocols import SupportsComplete
    from chimera.providers import TokenBudget

RUNS = Path(".chimera") / "runs"


def resolve_root(value: str | None) -> Path:
    root = Path(value) if value else Path.cwd()
    if not root.is_dir():
        raise UsageError(f"--root {value}: not a directory")
    return root.resolve()


def top_model(config: ChimeraConfig) -> str:
    """The top model: ``models.default`` (``--model`` is applied to it), else $CHIMERA_MODEL."""
    from chimera.orchestration.engine_setup import resolve_model

    return resolve_model(None, config)


def prepare_credentials(root: Path, config: ChimeraConfig, models: Iterable[str]) -> None:
    """Load ``.env`` and fail early, in one line, when a model's key is missing."""
    from chimera.providers import SCRIPTED_PREFIX, check_credentials, load_dotenv_file

    real = [m for m in dict.fromkeys(models) if not m.startswith(SCRIPTED_PREFIX)]
    if real:
        load_dotenv_file(root)
        for m in real:
            check_credentials(m, api_base=config.models.api_base_for(m))


def budgeted(
    model: str,
    config: ChimeraConfig,
    budget: TokenBudget,
    audit: AuditLog | None,
    *,
    max_tokens: int | None = None,
) -> SupportsComplete:
    """``make_backend(model)`` behind a :class:`BudgetedBackend` on ``budget``."""
    from chimera.providers import BudgetedBackend, make_backend

    return BudgetedBackend(
        make_backend(model, config),
        budget,
        model=model,
        default_max_tokens=max_tokens or config.models.max_tokens,
        audit=audit,
    )


def new_run_dir(root: Path) -> tuple[str, Path]:
    from chimera.orchestration.state import new_run_id

    run_id = new_run_id()
    return run_id, root / RUNS / run_id


def shown(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def usd(value: float | None) -> str:
    return "unknown" if value is None else f"${value:.6f}"
