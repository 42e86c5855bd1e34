from __future__ import annotations

from pathlib import Path

import pytest

from chimera.config import ChimeraConfig, ModelPrice, load_config
from chimera.errors import ConfigError


def write(root: Path, name: str, text: str) -> None:
    (root / name).write_text(text, encoding="utf-8")


def test_config_defaults_without_any_file(tmp_path: Path) -> None:
    config = load_config(tmp_path)
    assert config == ChimeraConfig()
    assert config.agent.max_attempts == 3
    assert config.agent.max_steps == 30
    assert config.agent.diff_feedback is False
    assert config.agent.history_token_ceiling == 6000
    assert config.agent.record_diff_chars == 2000
    assert config.agent.command_timeout == 120.0
    assert config.sandbox.mode == "auto"
    assert config.sandbox.network is False
    assert config.budget.usd is None and config.budget.tokens is None
    assert config.models.default is None and config.models.rungs() == []


def test_config_pyproject_without_tool_chimera_gives_defaults(tmp_path: Path) -> None:
    write(tmp_path, "pyproject.toml", '[project]\nname = "x"\n')
    assert load_config(tmp_path) == ChimeraConfig()


def test_config_reads_pyproject_tool_chimera(tmp_path: Path) -> None:
    write(
        tmp_path,
        "pyproject.toml",
        """
[tool.chimera.models]
default = "openai/small"
ladder = ["openai/big", "openai/huge"]
api_base = "http://localhost:9/v1"
api_bases = {"openai/big" = "http://other:1/v1"}

[tool.chimera.models.prices."openai/small"]
input_per_mtok = 0.5
output_per_mtok = 1.5

[tool.chimera.budget]
usd = 2
tokens = 1000

[tool.chimera.agent]
max_attempts = 5
diff_feedback = true

[tool.chimera.sandbox]
mode = "scrubbed"
env_allow = ["PIP_INDEX_URL"]

[tool.chimera.tools]
output_limit = 4096
""",
    )
    config = load_config(tmp_path)
    assert config.models.rungs() == ["openai/small", "openai/big", "openai/huge"]
    assert config.models.api_base_for("openai/small") == "http://localhost:9/v1"
    assert config.models.api_base_for("openai/big") == "http://other:1/v1"
    assert config.models.prices["openai/small"].per_token() == pytest.approx((0.5e-6, 1.5e-6))
    assert config.budget.usd == 2.0 and config.budget.tokens == 1000
    assert config.agent.max_attempts == 5 and config.agent.diff_feedback is True
    assert config.sandbox.mode == "scrubbed" and config.sandbox.env_allow == ["PIP_INDEX_URL"]
    assert config.tools.output_limit == 4096


def test_config_reads_chimera_toml_top_level_tables(tmp_path: Path) -> None:
    write(
        tmp_path, "chimera.toml", '[models]\ndefault = "scripted:demo.yaml"\n[budget]\ntokens = 5\n'
    )
    config = load_config(tmp_path)
    assert config.models.default == "scripted:demo.yaml"
    assert config.budget.tokens == 5


def test_config_in_both_files_is_an_error(tmp_path: Path) -> None:
    write(tmp_path, "pyproject.toml", "[tool.chimera.budget]\ntokens = 1\n")
    write(tmp_path, "chimera.toml", "[budget]\ntokens = 2\n")
    with pytest.raises(ConfigError, match=r"^chimera\.toml: configuration is also in pyproject"):
        load_config(tmp_path)


def test_config_invalid_value_names_file_and_key(tmp_path: Path) -> None:
    write(tmp_path, "pyproject.toml", '[tool.chimera.budget]\nusd = "lots"\n')
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path)
    assert str(info.value).startswith(
        "pyproject.toml: tool.chimera.budget.usd: Input should be a valid number"
    )
    assert "\n" not in str(info.value)


def test_config_invalid_value_in_chimera_toml_has_no_tool_prefix(tmp_path: Path) -> None:
    write(tmp_path, "chimera.toml", "[agent]\nmax_attempts = 0\n")
    with pytest.raises(
        ConfigError, match=r"^chimera\.toml: agent\.max_attempts: Input should be greater"
    ):
        load_config(tmp_path)


@pytest.mark.parametrize(
    ("toml", "expected"),
    [
        (
            "[tool.chimera.budget]\nust = 1\n",
            "tool.chimera.budget.ust: unknown key (did you mean 'usd'?)",
        ),
        (
            "[tool.chimera.model]\ndefault = 'x'\n",
            "tool.chimera.model: unknown key (did you mean 'models'?)",
        ),
        (
            "[tool.chimera.agent]\nmax_step = 3\n",
            "tool.chimera.agent.max_step: unknown key (did you mean 'max_steps'?)",
        ),
        ("[tool.chimera.agent]\nzzz = 3\n", "tool.chimera.agent.zzz: unknown key"),
        (
            "[tool.chimera.models.prices.'openai/x']\ninput_per_mtoc = 1\n",
            "tool.chimera.models.prices.openai/x.input_per_mtoc: unknown key "
            "(did you mean 'input_per_mtok'?)",
        ),
    ],
)
def test_config_unknown_keys_are_errors_with_suggestions(
    tmp_path: Path, toml: str, expected: str
) -> None:
    write(tmp_path, "pyproject.toml", toml)
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path)
    message = str(info.value)
    assert message.startswith(f"pyproject.toml: {expected}")
    if "did you mean" not in expected:
        assert "did you mean" not in message


def test_config_sandbox_mode_must_be_known(tmp_path: Path) -> None:
    write(tmp_path, "pyproject.toml", '[tool.chimera.sandbox]\nmode = "docker"\n')
    with pytest.raises(
        ConfigError,
        match=r"tool\.chimera\.sandbox\.mode: Input should be 'auto', 'bwrap' or 'scrubbed'",
    ):
        load_config(tmp_path)


def test_config_several_errors_are_counted(tmp_path: Path) -> None:
    write(tmp_path, "pyproject.toml", "[tool.chimera.agent]\nmax_steps = 0\nmax_attempts = -1\n")
    with pytest.raises(ConfigError, match=r"\(and 1 more: "):
        load_config(tmp_path)


def test_config_invalid_toml(tmp_path: Path) -> None:
    write(tmp_path, "pyproject.toml", "[tool.chimera\n")
    with pytest.raises(ConfigError, match=r"^pyproject\.toml: invalid TOML: .*line 1"):
        load_config(tmp_path)


def test_config_tool_chimera_must_be_a_table(tmp_path: Path) -> None:
    write(tmp_path, "pyproject.toml", '[tool]\nchimera = "yes"\n')
    with pytest.raises(ConfigError, match=r"^pyproject\.toml: tool\.chimera: must be a table"):
        load_config(tmp_path)


@pytest.mark.parametrize(
    "fields",
    [
        {"input_per_mtok": 1.0},
        {"input_per_mtok": 1.0, "output_per_token": 1e-6},
        {"input_per_mtok": 1.0, "output_per_mtok": 2.0, "input_per_token": 1e-6},
        {},
    ],
)
def test_config_model_price_needs_exactly_one_pair(fields: dict[str, float]) -> None:
    with pytest.raises(ValueError, match="one complete pair"):
        ModelPrice(**fields)


def test_config_model_price_per_token_pair() -> None:
    assert ModelPrice(input_per_token=2e-6, output_per_token=3e-6).per_token() == (2e-6, 3e-6)


def test_config_price_error_reads_as_file_key_message(tmp_path: Path) -> None:
    write(
        tmp_path, "pyproject.toml", "[tool.chimera.models.prices.'openai/x']\ninput_per_mtok = 1\n"
    )
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path)
    assert str(info.value) == (
        "pyproject.toml: tool.chimera.models.prices.openai/x: give input_per_mtok and "
        "output_per_mtok, or input_per_token and output_per_token (one complete pair)"
    )


def test_config_with_overrides_applies_cli_values() -> None:
    base = ChimeraConfig.model_validate(
        {"models": {"default": "openai/a"}, "budget": {"tokens": 9}}
    )
    config = base.with_overrides(
        model="openai/b",
        escalate="openai/c, openai/d",
        budget_usd=1.5,
        budget_tokens=None,
        max_attempts=4,
        diff_feedback=True,
        sandbox="bwrap",
        agent__max_steps=7,
    )
    assert config.models.default == "openai/b"
    assert config.models.ladder == ["openai/c", "openai/d"]
    assert config.budget.usd == 1.5
    assert config.budget.tokens == 9  # None means "flag not given"
    assert config.agent.max_attempts == 4 and config.agent.diff_feedback is True
    assert config.agent.max_steps == 7
    assert config.sandbox.mode == "bwrap"
    assert base.models.default == "openai/a"  # the original is unchanged


def test_config_with_overrides_invalid_value_names_the_flag() -> None:
    with pytest.raises(ConfigError) as info:
        ChimeraConfig().with_overrides(budget_usd="many")
    assert str(info.value).startswith("command line: --budget-usd: Input should be a valid number")


def test_config_with_overrides_unknown_option_suggests() -> None:
    with pytest.raises(
        ConfigError, match=r"unknown option 'max_attempt' \(did you mean 'max_attempts'\?\)"
    ):
        ChimeraConfig().with_overrides(max_attempt=3)


def test_config_with_overrides_unknown_section_key_is_rejected() -> None:
    with pytest.raises(ConfigError, match=r"command line: --agent\.bogus: "):
        ChimeraConfig().with_overrides(agent__bogus=1)
