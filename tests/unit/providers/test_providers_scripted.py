from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from chimera.errors import ConfigError, ProviderError
from chimera.protocols import Purpose, SupportsComplete, Usage
from chimera.providers import ScriptedBackend, make_backend

USER = [{"role": "user", "content": "fix the bug"}]

SCRIPT_YAML = """\
model: demo
turns:
  - purpose: plan
    text: "1. edit calc.py"
  - tool_calls:
      - name: write_file
        arguments: {path: calc.py, content: "x = 1\\n"}
      - name: run_command
        arguments: '{"command": "pytest -q"'
        id: call-7
    usage: {prompt_tokens: 900, completion_tokens: 120}
  - text: done
    usage: {prompt_tokens: 10, completion_tokens: 2, cost_usd: 0.5}
"""


def write_script(tmp_path: Path, text: str = SCRIPT_YAML, name: str = "script.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_scripted_replays_turns_from_yaml(tmp_path: Path) -> None:
    backend = ScriptedBackend.from_file(write_script(tmp_path))
    assert isinstance(backend, SupportsComplete)
    plan = backend.complete(USER, purpose=Purpose.PLAN)
    assert plan.text == "1. edit calc.py" and plan.tool_calls == ()
    assert plan.usage == Usage(0, 0, 0.0)  # no usage given: nothing was spent
    assert plan.model == "scripted:demo"

    act = backend.complete(USER, tools=[{"type": "function", "function": {"name": "write_file"}}])
    first, second = act.tool_calls
    assert first.name == "write_file" and first.id == "call_2_0"
    assert json.loads(first.arguments) == {"path": "calc.py", "content": "x = 1\n"}
    assert second.id == "call-7"
    assert second.arguments == '{"command": "pytest -q"'  # invalid JSON passes through untouched
    assert act.usage == Usage(900, 120, None)  # usage without cost: priced by the budget layer

    last = backend.complete(USER)
    assert last.text == "done" and last.usage == Usage(10, 2, 0.5)
    assert backend.position == 3 and backend.remaining == 0


def test_scripted_reads_json_list_form(tmp_path: Path) -> None:
    turns = [{"text": "a"}, {"tool_calls": [{"name": "list_dir", "arguments": {"path": "."}}]}]
    path = write_script(tmp_path, json.dumps(turns), "s.json")
    backend = make_backend(f"scripted:{path}")
    assert isinstance(backend, ScriptedBackend)
    assert backend.model == "scripted:s"
    assert backend.complete(USER).text == "a"
    assert backend.complete(USER).tool_calls[0].name == "list_dir"


def test_scripted_exhaustion_is_a_clear_provider_error() -> None:
    backend = ScriptedBackend([{"text": "only"}])
    backend.complete(USER)
    with pytest.raises(ProviderError, match=r"^script exhausted at turn 2 \(script has 1 turns"):
        backend.complete(USER)


def test_scripted_purpose_mismatch_does_not_advance() -> None:
    backend = ScriptedBackend([{"purpose": "review", "text": "LGTM"}])
    with pytest.raises(
        ProviderError, match=r"turn 1 .* is for purpose 'review' but the call's purpose is 'act'"
    ):
        backend.complete(USER, purpose=Purpose.ACT)
    assert backend.position == 0
    assert backend.complete(USER, purpose=Purpose.REVIEW).text == "LGTM"


def test_scripted_expect_checks_the_request() -> None:
    backend = ScriptedBackend([{"text": "ok", "expect": "Why earlier attempts failed"}])
    with pytest.raises(
        ProviderError, match="expects the request to contain 'Why earlier attempts failed'"
    ):
        backend.complete(USER)
    assert backend.position == 0
    retry = [
        *USER,
        {"role": "user", "content": "Why earlier attempts failed (do NOT repeat these):"},
    ]
    assert backend.complete(retry).text == "ok"


def test_scripted_position_restore_replays_deterministically() -> None:
    turns = [{"text": f"t{i}"} for i in range(5)]
    first = ScriptedBackend(turns)
    seen = [first.complete(USER).text for _ in range(2)]
    saved = first.position
    after = [first.complete(USER).text for _ in range(3)]

    resumed = ScriptedBackend(turns)
    resumed.restore(saved)
    assert [resumed.complete(USER).text for _ in range(3)] == after
    assert seen == ["t0", "t1"]
    with pytest.raises(ValueError, match=r"outside 0\.\.5"):
        resumed.restore(6)


def test_scripted_records_calls() -> None:
    backend = ScriptedBackend([{"text": "x"}])
    backend.complete(USER, purpose=Purpose.SUMMARIZE, max_tokens=99)
    (call,) = backend.calls
    assert call.turn == 1 and call.purpose is Purpose.SUMMARIZE and call.max_tokens == 99
    assert call.messages == USER and call.tools is None


def test_scripted_is_thread_safe() -> None:
    backend = ScriptedBackend([{"text": str(i)} for i in range(200)])
    out: list[str] = []
    lock = threading.Lock()

    def worker() -> None:
        for _ in range(20):
            text = backend.complete(USER).text
            with lock:
                out.append(text)

    threads = [threading.Thread(target=worker) for _ in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(out, key=int) == [str(i) for i in range(200)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "- text: a\n- txt: b\n",
            r"script\.yaml:2:3: turns\.1\.txt: unknown field; did you mean 'text'\?",
        ),
        ("- purpose: dream\n", r"script\.yaml:1:12: turns\.0\.purpose: Input should be 'act'"),
        (
            "- tool_calls:\n    - arguments: {}\n",
            r"script\.yaml:2:7: turns\.0\.tool_calls\.0\.name: Field required",
        ),
        ("turns: [\n", r"script\.yaml:\d+:\d+: invalid YAML"),
        ("", r"script\.yaml:1:1: the script is empty"),
        ("- text: a\n- text: b\n  text: c\n", r"script\.yaml:3:3: .*duplicate"),
    ],
)
def test_scripted_invalid_script_names_file_line_col(
    tmp_path: Path, text: str, expected: str
) -> None:
    with pytest.raises(ConfigError, match=expected):
        ScriptedBackend.from_file(write_script(tmp_path, text))


def test_scripted_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read the script"):
        make_backend(f"scripted:{tmp_path / 'nope.yaml'}")


def test_scripted_invalid_turn_in_code() -> None:
    with pytest.raises(
        ConfigError, match=r"^script: turns\.0\.usage\.prompt_tokens: Input should be greater"
    ):
        ScriptedBackend([{"usage": {"prompt_tokens": -1}}])
