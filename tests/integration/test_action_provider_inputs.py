"""The Action's provider inputs (``api-base``, ``litellm-settings``) reach LiteLLM: settings
read the way action.yml passes them, carried by the agent request, applied to the config the
child builds, and sent over real HTTP to the local OpenAI-compatible stub."""

from __future__ import annotations

from pathlib import Path

import pytest

from chimera.config import load_config
from chimera.errors import ConfigError
from chimera.github.agent_child import REQUEST_VERSION, AgentRequest, config_overrides
from chimera.github.settings import ActionSettings
from chimera.providers import make_backend
from chimera.testing import OpenAIStubServer, StubReply


def test_api_base_and_litellm_settings_reach_the_endpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("litellm")
    monkeypatch.setenv("OPENAI_API_KEY", "stub-key")
    with OpenAIStubServer({"served": StubReply(text="hello")}, api_key="stub-key") as stub:
        settings = ActionSettings.from_env(
            {
                "CHIMERA_MODEL": "openai/served",
                "CHIMERA_API_BASE": stub.api_base,
                "CHIMERA_LITELLM_SETTINGS": "temperature=0.2\ntop_p=0.5\n",
            }
        )
        request = AgentRequest(
            version=REQUEST_VERSION,
            action="start",
            root=tmp_path,
            run_id="r1",
            actor="maintainer",
            task="fix it",
            model=settings.model,
        ).model_copy(update=settings.run_overrides())
        config = load_config(tmp_path).with_overrides(
            model=request.model, **config_overrides(request)
        )
        reply = make_backend("openai/served", config).complete([{"role": "user", "content": "hi"}])
        (sent,) = stub.completion_requests("served")
    assert reply.text == "hello"
    assert sent.body["temperature"] == 0.2 and sent.body["top_p"] == 0.5


def test_a_reserved_litellm_setting_is_refused_in_one_line(tmp_path: Path) -> None:
    settings = ActionSettings.from_env({"CHIMERA_LITELLM_SETTINGS": "api_key=sk-oops"})
    with pytest.raises(ConfigError, match="litellm: api_key cannot be set here") as caught:
        load_config(tmp_path).with_overrides(litellm=settings.litellm)
    assert "\n" not in str(caught.value)
