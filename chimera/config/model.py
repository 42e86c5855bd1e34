"""Chimera's configuration: ``[tool.chimera]`` in ``pyproject.toml``, or ``chimera.toml``.

Every section is a pydantic model that forbids unknown keys, so a typo is an error with a
suggestion instead of a silently ignored setting. Errors read ``file: key: message``, e.g.
``pyproject.toml: tool.chimera.budget.usd: Input should be a valid number``. Command-line
flags override the file through :meth:`ChimeraConfig.with_overrides`.

Example (``pyproject.toml``)::

    [tool.chimera.models]
    default = "anthropic/claude-sonnet-4-5"
    ladder = ["anthropic/claude-opus-4-1"]          # escalation rungs after the default
    api_base = "http://localhost:8000/v1"          # optional, for every model
    api_bases = {"openai/local" = "http://localhost:9000/v1"}  # optional, per model

    [tool.chimera.models.prices."openai/local"]     # registered with LiteLLM's cost map
    input_per_mtok = 0.15                           # USD per million tokens
    output_per_mtok = 0.60

    [tool.chimera.budget]
    usd = 2.0
    tokens = 400000

    [tool.chimera.agent]
    max_attempts = 3

    [tool.chimera.sandbox]
    mode = "auto"
    env_allow = ["PIP_INDEX_URL"]

In ``chimera.toml`` the same tables sit at the top level (``[models]``, ``[budget]``...).
Later subsystems add sections by adding fields to :class:`ChimeraConfig`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from chimera.config.check import CheckSettings, config_table
from chimera.config.economics import CascadeConfig, EffortConfig, HierarchyConfig
from chimera.config.fusion import FusionConfig, RoutingConfig
from chimera.config.heldout import HeldOutConfig
from chimera.config.memory import MemoryConfig
from chimera.config.problems import describe, suggest
from chimera.config.review import ReviewConfig
from chimera.config.run import RunConfig
from chimera.errors import ConfigError

__all__ = [
    "AgentConfig",
    "BudgetConfig",
    "ChimeraConfig",
    "ModelPrice",
    "ModelsConfig",
    "SandboxConfig",
    "Section",
    "ToolsConfig",
    "load_config",
]


class Section(BaseModel):
    """Base of every configuration section: unknown keys are errors."""

    model_config = ConfigDict(extra="forbid", validate_default=True)


class ModelPrice(Section):
    """A custom model price, in USD: per million tokens (``*_per_mtok``) or per token.

    Give exactly one pair: ``input_per_mtok`` + ``output_per_mtok``, or ``input_per_token`` +
    ``output_per_token``.
    """

    input_per_mtok: float | None = Field(default=None, ge=0)
    output_per_mtok: float | None = Field(default=None, ge=0)
    input_per_token: float | None = Field(default=None, ge=0)
    output_per_token: float | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _one_pair(self) -> Self:
        mtok = (self.input_per_mtok, self.output_per_mtok)
        tok = (self.input_per_token, self.output_per_token)
        mtok_set = sum(v is not None for v in mtok)
        tok_set = sum(v is not None for v in tok)
        if (mtok_set, tok_set) not in ((2, 0), (0, 2)):
            raise ValueError(
                "give input_per_mtok and output_per_mtok, or input_per_token and "
                "output_per_token (one complete pair)"
            )
        return self

    def per_token(self) -> tuple[float, float]:
        """(input, output) USD per token."""
        if self.input_per_token is not None and self.output_per_token is not None:
            return self.input_per_token, self.output_per_token
        assert self.input_per_mtok is not None and self.output_per_mtok is not None
        return self.input_per_mtok / 1_000_000, self.output_per_mtok / 1_000_000


_RESERVED_LITELLM = frozenset(
    {"model", "messages", "tools", "max_tokens", "timeout", "max_retries", "api_key", "api_base"}
)


class ModelsConfig(Section):
    """Which models run, how they are reached and what they cost.

    Attributes:
        default: the model of the first rung (a LiteLLM model name or ``scripted:PATH``).
        ladder: escalation rungs after the default, weakest first.
        prices: custom prices by model name, registered with LiteLLM's cost map.
        api_base: an endpoint for every model (e.g. a local OpenAI-compatible server).
        api_bases: per-model endpoints; win over ``api_base``.
        timeout: seconds per provider call.
        num_retries: LiteLLM's transport retries per call (not agent attempts).
        max_tokens: the completion cap sent with each call unless a caller sets one.
        litellm: further keyword arguments for every ``litellm.completion`` call (e.g.
            ``aws_region_name``, ``vertex_project``, ``vertex_location``); never a key.
    """

    default: str | None = None
    ladder: list[str] = Field(default_factory=list)
    prices: dict[str, ModelPrice] = Field(default_factory=dict)
    api_base: str | None = None
    api_bases: dict[str, str] = Field(default_factory=dict)
    timeout: float = Field(default=120.0, gt=0)
    num_retries: int = Field(default=2, ge=0)
    max_tokens: int = Field(default=4096, gt=0)
    litellm: dict[str, str | int | float | bool] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _no_reserved_litellm_keys(self) -> Self:
        taken = sorted(set(self.litellm) & _RESERVED_LITELLM)
        if taken:
            raise ValueError(
                f"litellm: {', '.join(taken)} cannot be set here (Chimera sets them, and a "
                "key belongs in the environment, not the configuration)"
            )
        return self

    def api_base_for(self, model: str) -> str | None:
        """The endpoint configured for ``model``, if any."""
        return self.api_bases.get(model, self.api_base)

    def rungs(self) -> list[str]:
        """The default model followed by the ladder (empty when no default is set)."""
        return [self.default, *self.ladder] if self.default else list(self.ladder)


class BudgetConfig(Section):
    """A run's budgets; ``None`` means unlimited. USD needs a priced model or a token budget."""

    usd: float | None = Field(default=None, ge=0)
    tokens: int | None = Field(default=None, ge=0)


class AgentConfig(Section):
    """The AutonomousAgent's limits and its failure carry-forward settings."""

    max_attempts: int = Field(default=3, ge=1)
    max_steps: int = Field(default=30, ge=1)
    diff_feedback: bool = False
    history_token_ceiling: int = Field(default=6000, ge=1)
    record_diff_chars: int = Field(default=2000, ge=0)
    command_timeout: float = Field(default=120.0, gt=0)


class SandboxConfig(Section):
    """How commands of an autonomous run are isolated.

    Attributes:
        mode: ``auto`` (bubblewrap when available, else scrubbed), ``bwrap`` (required) or
            ``scrubbed`` (allowlisted environment only; reported as weaker).
        env_allow: extra environment variable names passed into the sandbox.
        network: allow network access inside the sandbox.
        deps_dir: the project's dependency folder, outside the checkout, shown read-only
            with its programs first on ``PATH`` (:mod:`chimera.sandbox.deps`); relative paths
            are from the project root, ``~`` is expanded. The Action's ``deps-dir`` input
            overrides it.
        write_cap_mib: the most one command may write into the workspace in total, MiB
            (enforced while it runs by a size-limited overlay: past it the command fails and
            its writes are reverted; :mod:`chimera.sandbox.capped`); ``0``: no total cap
            (each file is still capped by the 1 GiB file-size limit).
        unmask: gitignore-style patterns (from the project root) of files that match a secret
            file pattern (:mod:`chimera.sandbox.secret_files`: ``*.pem``, ``*.key``,
            ``secrets.*`` ...) but hold no secret, such as ``tests/fixtures/*.pem``: the
            sandbox shows them instead of masking them.
    """

    mode: Literal["auto", "bwrap", "scrubbed"] = "auto"
    env_allow: list[str] = Field(default_factory=list)
    network: bool = False
    deps_dir: str | None = None
    write_cap_mib: int = Field(default=1024, ge=0)
    unmask: list[str] = Field(default_factory=list)

    def deps_path(self, root: Path) -> Path | None:
        """``deps_dir`` as an absolute path (relative to ``root``), or ``None`` when unset."""
        if not self.deps_dir:
            return None
        return (Path(root) / Path(self.deps_dir).expanduser()).resolve()


class ToolsConfig(Section):
    """Native tool settings; ``output_limit`` is in bytes, past it output is truncated."""

    output_limit: int = Field(default=20_000, ge=256)


class ChimeraConfig(Section):
    """The whole configuration. Every field has a default, so an empty file is valid."""

    models: ModelsConfig = Field(default_factory=ModelsConfig)
    budget: BudgetConfig = Field(default_factory=BudgetConfig)
    agent: AgentConfig = Field(default_factory=AgentConfig)
    sandbox: SandboxConfig = Field(default_factory=SandboxConfig)
    tools: ToolsConfig = Field(default_factory=ToolsConfig)
    # Reasoning core and cost economics (chimera.config.fusion, chimera.config.economics).
    fusion: FusionConfig = Field(default_factory=FusionConfig)
    routing: RoutingConfig = Field(default_factory=RoutingConfig)
    cascades: dict[str, CascadeConfig] = Field(default_factory=dict)
    effort: EffortConfig = Field(default_factory=EffortConfig)
    hierarchy: HierarchyConfig = Field(default_factory=HierarchyConfig)
    # The project run (chimera.config.run).
    run: RunConfig = Field(default_factory=RunConfig)
    # Spec check limits (chimera.config.check; `chimera check` and the plugin use only these).
    check: CheckSettings = Field(default_factory=CheckSettings)
    # Who reviews an attempt (chimera.config.review): a review crew instead of one call.
    review: ReviewConfig = Field(default_factory=ReviewConfig)
    # Requirements the agent never sees (chimera.config.heldout).
    heldout: HeldOutConfig = Field(default_factory=HeldOutConfig)
    # The memory's optional vector ranking (chimera.config.memory).
    memory: MemoryConfig = Field(default_factory=MemoryConfig)

    def with_overrides(self, **cli_values: Any) -> ChimeraConfig:
        """A copy with command-line values applied; ``None`` values (flag not given) are skipped.

        Keys are the CLI's option names (``model``, ``escalate``, ``budget_usd``,
        ``budget_tokens``, ``max_attempts``, ``max_steps``, ``diff_feedback``,
        ``command_timeout``, ``sandbox``, ``network``, ``output_limit``, ...) or an explicit
        ``section__key``. ``escalate`` may be a comma-separated string.

        Raises:
            ConfigError: ``command line: --flag: message`` for an invalid value or an
                unknown option name.
        """
        # Only what was set: which sections the file has stays known (an absent
        # [tool.chimera.effort] applies no effort policy).
        data = _dump_set(self)
        flags: dict[tuple[str, ...], str] = {}
        for name, value in cli_values.items():
            if value is None:
                continue
            path = _CLI_KEYS.get(name)
            if path is None and "__" in name:
                path = tuple(name.split("__"))
            if path is None:
                hint = suggest(name, [*_CLI_KEYS])
                raise ConfigError(f"command line: unknown option '{name}'{hint}")
            if path == ("models", "ladder") and isinstance(value, str):
                value = [part.strip() for part in value.split(",") if part.strip()]
            target = data
            for part in path[:-1]:
                node = target.setdefault(part, {})
                if not isinstance(node, dict):
                    raise ConfigError(f"command line: --{_flag(name)}: not a section: {part}")
                target = node
            target[path[-1]] = value
            flags[path] = name
        try:
            return type(self).model_validate(data)
        except ValidationError as exc:
            first = exc.errors()[0]
            loc = tuple(str(p) for p in first["loc"])
            name = next((f for p, f in flags.items() if loc[: len(p)] == p), ".".join(loc))
            raise ConfigError(f"command line: --{_flag(name)}: {first['msg']}") from exc


def _dump_set(model: BaseModel) -> dict[str, Any]:
    """``model_dump(exclude_unset=True)``, plus every section holding a set field although its
    parent never set the section: a value assigned on a section the file lacks
    (``config.run.max_iterations = 5``) is in the section's ``model_fields_set`` only, and a
    plain unset-excluding dump drops it on the rebuild."""
    data = model.model_dump(exclude_unset=True)
    for name in type(model).model_fields:
        value = getattr(model, name)
        if isinstance(value, BaseModel):
            inner = _dump_set(value)
            if inner or name in data:
                data[name] = inner
    return data


_CLI_KEYS: dict[str, tuple[str, ...]] = {
    "model": ("models", "default"),
    "escalate": ("models", "ladder"),
    "ladder": ("models", "ladder"),
    "api_base": ("models", "api_base"),
    "timeout": ("models", "timeout"),
    "num_retries": ("models", "num_retries"),
    "max_tokens": ("models", "max_tokens"),
    "budget_usd": ("budget", "usd"),
    "budget_tokens": ("budget", "tokens"),
    "max_attempts": ("agent", "max_attempts"),
    "max_steps": ("agent", "max_steps"),
    "diff_feedback": ("agent", "diff_feedback"),
    "history_token_ceiling": ("agent", "history_token_ceiling"),
    "record_diff_chars": ("agent", "record_diff_chars"),
    "command_timeout": ("agent", "command_timeout"),
    "sandbox": ("sandbox", "mode"),
    "sandbox_mode": ("sandbox", "mode"),
    "network": ("sandbox", "network"),
    "env_allow": ("sandbox", "env_allow"),
    "deps_dir": ("sandbox", "deps_dir"),
    "litellm": ("models", "litellm"),
    "output_limit": ("tools", "output_limit"),
}


def _flag(name: str) -> str:
    return name.replace("__", ".").replace("_", "-")


def load_config(root: Path) -> ChimeraConfig:
    """Read the configuration of the project at ``root``.

    Looks for ``chimera.toml`` (tables at the top level) and ``[tool.chimera]`` in
    ``pyproject.toml``; with neither, every default applies. Custom prices are *not*
    registered here (that needs LiteLLM); :func:`chimera.providers.make_backend` does it.

    Raises:
        ConfigError: invalid TOML, an invalid value or unknown key (``file: key: message``),
            or configuration in both files.
    """
    table, file, prefix = config_table(root)
    if prefix and table is not None and not isinstance(table, dict):
        raise ConfigError(f"{file}: tool.chimera: must be a table")
    if table is None:
        return ChimeraConfig()
    try:
        return ChimeraConfig.model_validate(table)
    except ValidationError as exc:
        raise ConfigError(describe(exc, file, prefix, ChimeraConfig)) from exc
