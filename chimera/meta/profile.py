"""A profile: a specialised agent as data — never code.

A profile file (``PROFILE.yaml``, the output of ``chimera meta design`` and the input of
``--agent``) says who the agent is and what it may use, and names exactly one kind key — how
the agent works — the way a requirement names exactly one check::

    profile: careful-slugger
    description: Reads the tests first; writes the smallest general change.
    instructions: |
      Read the module and its tests before writing. Never special-case an input.
    tools: [read_file, list_dir, search, write_file, edit_file]
    model: scripted:careful.yaml       # or rung: 1 (the run's ladder), or neither
    budget: {tokens: 40000, usd: 0.50}
    skills: [slug-rules]               # AgentSkills in the project's skill store
    review: review                     # a review crew (.chimera.d/crews/review.yaml)
    solver: {max_attempts: 2, max_steps: 12}

Kinds are pluggable (:mod:`chimera.meta.registry`); the built-in ``solver`` is the
verify-or-revert agent of ``chimera solve`` and ``chimera run``. A profile's ``tools`` are an
allowlist, never a grant: :func:`isolate` cuts them to a ceiling (the designer's own
allowlist), and the session part (:mod:`chimera.meta.part`) hands the agent only those.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Annotated, Any, ClassVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

if TYPE_CHECKING:
    from chimera.governance.redactor import SecretRedactor

__all__ = [
    "AGENT_TOOLS",
    "COMMON_FIELDS",
    "READ_ONLY_TOOLS",
    "Profile",
    "ProfileBudget",
    "ProfileFields",
    "ProfileKind",
    "Solver",
    "isolate",
    "render_profile",
]

AGENT_TOOLS: tuple[str, ...] = (
    "read_file",
    "write_file",
    "edit_file",
    "list_dir",
    "search",
    "run_command",
)
"""The native tools a profile may allow (the verify-or-revert agent's tools)."""

READ_ONLY_TOOLS: tuple[str, ...] = ("read_file", "list_dir", "search")

COMMON_FIELDS: tuple[str, ...] = (
    "profile",
    "description",
    "instructions",
    "tools",
    "model",
    "rung",
    "budget",
    "skills",
    "review",
)
"""Top-level keys of a profile besides its one kind key; no kind may take these names."""

NAME_PATTERN = r"^[A-Za-z][A-Za-z0-9_-]{0,39}$"
_NAME = re.compile(NAME_PATTERN.replace("$", r"\Z"))
_SKILL = re.compile(r"^(?=.{1,64}\Z)[a-z0-9]+(?:-[a-z0-9]+)*\Z")
MAX_INSTRUCTIONS = 8000


def _name(value: str) -> str:
    if not _NAME.match(value):
        raise ValueError(
            f"invalid name {value!r}: a letter, then up to 39 letters, digits, '_' or '-'"
        )
    return value


def _skill(value: str) -> str:
    if not _SKILL.match(value):
        raise ValueError(
            f"invalid skill name {value!r}: lowercase letters, digits and single hyphens"
        )
    return value


Name = Annotated[str, AfterValidator(_name)]
SkillName = Annotated[str, AfterValidator(_skill)]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ProfileBudget(_Model):
    """The agent's ceiling per run: tokens (prompt + completion) and/or US dollars."""

    tokens: int | None = Field(default=None, ge=1)
    usd: float | None = Field(default=None, ge=0)


class ProfileFields(_Model):
    """The common fields of a profile file (everything but the kind key)."""

    profile: Name
    description: str = ""
    instructions: str = Field(default="", max_length=MAX_INSTRUCTIONS)
    tools: list[str] = Field(default_factory=lambda: list(AGENT_TOOLS))
    model: str | None = Field(default=None, min_length=1)
    rung: int | None = Field(default=None, ge=0)
    budget: ProfileBudget = Field(default_factory=ProfileBudget)
    skills: list[SkillName] = Field(default_factory=list)
    review: Name | None = None

    @model_validator(mode="after")
    def _model_or_rung(self) -> ProfileFields:
        if self.model is not None and self.rung is not None:
            raise ValueError("a profile names a 'model' or a 'rung', not both")
        return self


class ProfileKind(_Model):
    """Base of every profile kind (how the agent works).

    A subclass sets ``kind_name`` (the YAML key), declares its fields, and implements
    :meth:`overrides` (configuration values the kind sets, by ``with_overrides`` name).
    """

    kind_name: ClassVar[str] = ""

    def overrides(self) -> dict[str, Any]:
        """``ChimeraConfig.with_overrides`` keyword arguments (``None`` values skipped)."""
        return {}

    def describe(self) -> str:
        return self.kind_name


class Solver(ProfileKind):
    """``solver: {max_attempts, max_steps, diff_feedback}`` — the verify-or-revert agent of
    ``chimera solve`` and ``chimera run``; unset values keep the run's configuration."""

    kind_name: ClassVar[str] = "solver"

    max_attempts: int | None = Field(default=None, ge=1, le=10)
    max_steps: int | None = Field(default=None, ge=1, le=100)
    diff_feedback: bool | None = None

    def overrides(self) -> dict[str, Any]:
        return {
            "max_attempts": self.max_attempts,
            "max_steps": self.max_steps,
            "diff_feedback": self.diff_feedback,
        }

    def describe(self) -> str:
        shown = [f"{k}={v}" for k, v in self.overrides().items() if v is not None]
        return "solver" + (f" ({', '.join(shown)})" if shown else "")


@dataclass(frozen=True)
class Profile:
    """A validated profile (see the module docstring).

    Attributes:
        fields: the common fields; ``kind``: the kind object; ``source``: the file (or
            ``designer:candidate-N``) as shown in messages.
    """

    fields: ProfileFields
    kind: ProfileKind
    source: str = ""

    @property
    def name(self) -> str:
        return self.fields.profile

    @property
    def tools(self) -> tuple[str, ...]:
        return tuple(self.fields.tools)

    def system_text(self, skills: Sequence[tuple[str, str]] = ()) -> str:
        """The text the profile adds to every system message of its agent: its
        instructions, then each ``(name, body)`` skill as guidance. Empty when neither."""
        parts: list[str] = []
        if self.fields.instructions.strip():
            parts.append(f"## Agent profile '{self.name}'\n{self.fields.instructions.strip()}")
        for name, body in skills:
            parts.append(f"## Skill '{name}' (guidance, not instructions to obey blindly)\n{body}")
        return "\n\n".join(parts)

    def overrides(self, ladder: Sequence[str] = ()) -> dict[str, Any]:
        """``ChimeraConfig.with_overrides`` keywords: the model (or the rung's model from
        ``ladder``, the run's ``[model, *escalations]``), the budget and the kind's settings.

        Raises:
            ValueError: ``rung`` is past the end of ``ladder``.
        """
        f = self.fields
        model = f.model
        if f.rung is not None:
            if f.rung >= len(ladder):
                raise ValueError(
                    f"profile {self.name}: rung {f.rung} is past the run's ladder "
                    f"({len(ladder)} model(s))"
                )
            model = ladder[f.rung]
        values: dict[str, Any] = {
            "model": model,
            "budget_tokens": f.budget.tokens,
            "budget_usd": f.budget.usd,
        }
        values.update(self.kind.overrides())
        return values

    def to_data(self) -> dict[str, Any]:
        """The profile as plain data, in file order (what :func:`dump_profile` writes)."""
        data = self.fields.model_dump(exclude_defaults=False, exclude_none=True)
        data["budget"] = self.fields.budget.model_dump(exclude_none=True)
        data[self.kind.kind_name] = self.kind.model_dump(exclude_none=True)
        return data


def isolate(profile: Profile, ceiling: Iterable[str]) -> tuple[Profile, list[str]]:
    """``profile`` with its tools cut to ``ceiling`` (the designer's own allowlist), and the
    tools it asked for and does not get, in its order. Whatever a design says, the result
    never holds a tool outside ``ceiling``."""
    allowed = set(ceiling)
    kept = [t for t in profile.fields.tools if t in allowed]
    denied = [t for t in profile.fields.tools if t not in allowed]
    if not denied:
        return profile, []
    fields = profile.fields.model_copy(update={"tools": kept})
    return replace(profile, fields=fields), denied


def render_profile(
    profile: Profile, header: str = "", *, redactor: SecretRedactor | None = None
) -> str:
    """The profile as a profile file's text (``header`` lines become ``#`` comments); with
    ``redactor``, its values pass it first (a designer model's instructions may quote a
    credential; redacting the data, not the text, keeps the YAML valid)."""
    import yaml

    data: Any = profile.to_data()
    if redactor is not None:
        data, _ = redactor.redact_json(data)
    comments = "".join(f"# {line}\n" if line else "#\n" for line in header.splitlines())
    return comments + yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
