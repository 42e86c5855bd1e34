"""Reading a Hermes Agent or OpenClaw home into :class:`~chimera.migration.model.Found` items.
Nothing here writes; every path read is checked to stay inside the source home.

Layouts, as verified with the search tool (stored public sources):

* Hermes (NousResearch/hermes-agent, ``website/docs/user-guide/configuration.md``):
  ``~/.hermes/`` holds ``config.yaml`` (settings: model, terminal...), ``.env`` (API keys),
  ``auth.json``, ``SOUL.md`` (the agent identity, slot #1 of the system prompt),
  ``memories/`` (``MEMORY.md`` agent notes and ``USER.md`` user profile, entries separated by
  ``§``: ``ENTRY_DELIMITER = "\\n§\\n"`` in Hermes'
  ``optional-skills/migration/openclaw-migration/scripts/openclaw_to_hermes.py``),
  ``skills/`` (agent-created skills, AgentSkills ``SKILL.md``), ``cron/``, ``sessions/``,
  ``logs/``. The same migrator names its report statuses (migrated, archived, skipped,
  conflict, error), backs up before writing and imports MCP servers into ``mcp_servers``.
* OpenClaw (docs.openclaw.ai ``concepts/memory``): the workspace (``agents.defaults.workspace``,
  default ``~/.openclaw/workspace``) holds ``MEMORY.md`` (curated long-term memory) and
  ``memory/YYYY-MM-DD.md`` (append-only daily logs); workspace files ``AGENTS.md``,
  ``SOUL.md``, ``USER.md``, ``IDENTITY.md``, ``TOOLS.md``; the config is
  ``~/.openclaw/openclaw.json`` (JSON5); shared skills live in ``~/.openclaw/skills/``
  (Hermes' migrator: "Copy shared OpenClaw skills from ~/.openclaw/skills/").

Also found: Hermes' cron module stores jobs in ``~/.hermes/cron/jobs.json``; OpenClaw's MCP
servers sit under ``mcp.servers.<name>`` of ``openclaw.json`` (docs.openclaw.ai ``cli/mcp``).

Not verified (taken from the issue, read defensively): Hermes profiles
(``active_profile`` naming ``profiles/<name>/``); the jobs' exact shape (read as a list or
``{"jobs": [...]}``, each with ``id``/``name``, a ``prompt`` or ``payload.message``, and a
``schedule`` that is a cron string or ``{"kind": "cron", "expr": ..., "tz": ...}``); whether
OpenClaw keeps cron jobs at ``cron/jobs.json`` too; Hermes' ``agent.system_prompt`` key; the
legacy ``~/.clawdbot``/``~/.moltbot`` homes and their ``clawdbot.json``/``moltbot.json``. The
OpenClaw ``migrate-hermes`` extension named in the issue was not found in the stored sources.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import yaml

from chimera.errors import ConfigError, UsageError
from chimera.migration.model import Found, json5_loads, secret_key

__all__ = ["hermes_home", "openclaw_home", "read_hermes", "read_openclaw"]

HERMES_DELIMITER = "\n§\n"
_DAILY = re.compile(r"^\d{4}-\d{2}-\d{2}\.md$")
_PERSONA_FILES = ("AGENTS.md", "SOUL.md", "IDENTITY.md", "TOOLS.md")


def _inside(home: Path, path: Path) -> bool:
    try:
        path.resolve().relative_to(home.resolve())
    except ValueError:
        return False
    return True


def hermes_home(path: str | None, environ: Mapping[str, str] | None = None) -> Path:
    """The Hermes home to read: ``path``, else ``$HERMES_HOME``, else ``~/.hermes``; with an
    ``active_profile`` file, its ``profiles/<name>/``.

    Raises:
        UsageError: the folder does not exist, or the profile escapes the home.
    """
    env = os.environ if environ is None else environ
    home = Path(path or env.get("HERMES_HOME") or Path.home() / ".hermes").expanduser()
    if not home.is_dir():
        raise UsageError(f"migrate hermes: {home}: no such folder")
    marker = home / "active_profile"
    if marker.is_file():
        name = marker.read_text(encoding="utf-8").strip()
        profile = home / "profiles" / name
        if not name or ".." in Path(name).parts or not _inside(home, profile):
            raise UsageError(f"migrate hermes: active_profile {name!r} escapes {home}")
        if profile.is_dir():
            return profile
    return home


def openclaw_home(path: str | None, environ: Mapping[str, str] | None = None) -> Path:
    """The OpenClaw home: ``path``, else ``$OPENCLAW_HOME``, else the first of
    ``~/.openclaw``, ``~/.clawdbot``, ``~/.moltbot`` that exists.

    Raises:
        UsageError: none exists.
    """
    env = os.environ if environ is None else environ
    if path or env.get("OPENCLAW_HOME"):
        home = Path(path or env["OPENCLAW_HOME"]).expanduser()
        if not home.is_dir():
            raise UsageError(f"migrate openclaw: {home}: no such folder")
        return home
    for name in (".openclaw", ".clawdbot", ".moltbot"):
        if (Path.home() / name).is_dir():
            return Path.home() / name
    raise UsageError("migrate openclaw: no ~/.openclaw, ~/.clawdbot or ~/.moltbot; give PATH")


def _rel(home: Path, path: Path) -> str:
    return path.relative_to(home).as_posix()


def _read(home: Path, path: Path) -> tuple[str | None, Found | None]:
    rel = _rel(home, path)
    if not _inside(home, path):
        return None, Found("refused", rel, reason="a link that escapes the source home")
    try:
        return path.read_text(encoding="utf-8"), None
    except (OSError, UnicodeDecodeError) as exc:
        return None, Found("error", rel, reason=f"cannot read: {exc}")


def _entries(text: str) -> list[str]:
    """Markdown split into entries: ``§``-separated when present, else bullets/paragraphs
    (headings dropped)."""
    if "§" in text:
        return [e.strip() for e in re.split(r"\n?^§\s*$\n?", text, flags=re.M) if e.strip()]
    out: list[str] = []
    for block in re.split(r"\n\s*\n", text):
        lines = [ln for ln in block.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
        if lines and all(re.match(r"\s*[-*+]\s", ln) for ln in lines):
            out.extend(re.sub(r"^\s*[-*+]\s+", "", ln).strip() for ln in lines)
        elif lines:
            out.append(" ".join(ln.strip() for ln in lines))
    return [e for e in out if e]


def _memory(home: Path, path: Path, tier: str, kind: str) -> Iterator[Found]:
    text, problem = _read(home, path)
    if problem is not None:
        yield problem
        return
    for entry in _entries(text or ""):
        yield Found("memory", _rel(home, path), text=entry, tier=tier, name=kind)


def _persona_candidate(home: Path, path: Path) -> Iterator[Found]:
    text, problem = _read(home, path)
    if problem is not None:
        yield problem
    elif text and text.strip():
        yield Found("persona-candidate", _rel(home, path), text=text)


def _skills(home: Path, folder: Path) -> Iterator[Found]:
    if not folder.is_dir() or not _inside(home, folder):
        return
    for path in sorted(folder.rglob("SKILL.md")):
        text, problem = _read(home, path)
        yield problem or Found("skill", _rel(home, path), text=text or "", name=path.parent.name)


def _connectors(source: str, servers: Any) -> Iterator[Found]:
    if not isinstance(servers, dict):
        return
    for name, spec in servers.items():
        if not isinstance(spec, dict):
            yield Found("error", source, name=str(name), reason="an MCP server must be a mapping")
            continue
        yield Found("connector", source, name=str(name), data=dict(spec), human_config=True)


def _secrets(source: str, data: Any, prefix: str = "") -> Iterator[Found]:
    """Every credential-named key with a literal value (names only; values never kept)."""
    if isinstance(data, dict):
        for key, value in data.items():
            where = f"{prefix}.{key}" if prefix else str(key)
            if isinstance(value, str) and value and secret_key(str(key)):
                yield Found("secret", source, name=where, reason="a credential")
            else:
                yield from _secrets(source, value, where)


def _cron(home: Path, path: Path) -> Iterator[Found]:
    text, problem = _read(home, path)
    if problem is not None:
        yield problem
        return
    rel = _rel(home, path)
    try:
        data = json.loads(text or "")
    except json.JSONDecodeError as exc:
        yield Found("error", rel, reason=f"{rel}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}")
        return
    jobs = data.get("jobs", []) if isinstance(data, dict) else data
    for job in jobs if isinstance(jobs, list) else []:
        if isinstance(job, dict):
            name = str(job.get("id") or job.get("name") or "job")
            payload = job.get("payload")
            prompt = job.get("prompt") or (
                payload.get("message") or payload.get("text") if isinstance(payload, dict) else ""
            )
            yield Found("schedule", rel, name=name, data=job, text=str(prompt or ""))


def _archive(home: Path, path: Path, reason: str) -> Iterator[Found]:
    if path.is_file():
        yield Found("archive", _rel(home, path), reason=reason)


def read_hermes(home: Path) -> list[Found]:
    """Everything a Hermes home holds that Chimera can take or must report."""
    found: list[Found] = []
    config = home / "config.yaml"
    if config.is_file():
        text, problem = _read(home, config)
        try:
            data = yaml.safe_load(text or "") if problem is None else None
        except yaml.YAMLError as exc:
            problem = Found("error", "config.yaml", reason=f"invalid YAML: {exc}".splitlines()[0])
            data = None
        if problem is not None:
            found.append(problem)
        elif isinstance(data, dict):
            found.extend(_config(data, "config.yaml", data.get("model"), ("mcp_servers",)))
            agent = data.get("agent")
            prompt = agent.get("system_prompt") if isinstance(agent, dict) else None
            if isinstance(prompt, str) and prompt.strip():
                found.append(Found("persona", "config.yaml", text=prompt, human_config=True))
    mem = home / "memories"
    if (mem / "MEMORY.md").is_file():
        found.extend(_memory(home, mem / "MEMORY.md", "semantic", "fact"))
    if (mem / "USER.md").is_file():
        found.extend(_memory(home, mem / "USER.md", "semantic", "user-profile"))
    if (home / "SOUL.md").is_file():
        found.extend(_persona_candidate(home, home / "SOUL.md"))
    found.extend(_skills(home, home / "skills"))
    if (home / "cron" / "jobs.json").is_file():
        found.extend(_cron(home, home / "cron" / "jobs.json"))
    found.extend(_env(home))
    return found


def _config(
    data: dict[str, Any], source: str, model: Any, mcp_keys: tuple[str, ...]
) -> list[Found]:
    out: list[Found] = []
    if isinstance(model, dict):
        model = model.get("primary") or model.get("default") or model.get("model_name")
    if isinstance(model, str) and model:
        out.append(Found("config", source, name="model", data={"model": model}, human_config=True))
    node: Any = data
    for key in mcp_keys:
        node = node.get(key) if isinstance(node, dict) else None
    out.extend(_connectors(source, node))
    out.extend(_secrets(source, data))
    out.extend(_archive_config(source))
    return out


def _archive_config(source: str) -> list[Found]:
    return [
        Found("archive", source, reason="settings with no Chimera equivalent (kept for review)")
    ]


def _env(home: Path) -> Iterator[Found]:
    env = home / ".env"
    if not env.is_file():
        return
    text, problem = _read(home, env)
    if problem is not None:
        yield problem
        return
    for line in (text or "").splitlines():
        key, sep, value = line.strip().partition("=")
        if sep and value.strip() and not key.startswith("#"):
            yield Found("secret", ".env", name=key.strip(), reason="a credential")


def read_openclaw(home: Path) -> list[Found]:
    """Everything an OpenClaw (or legacy clawdbot/moltbot) home holds that Chimera can take
    or must report. A broken ``openclaw.json`` is an ``error`` item; the rest still reads."""
    found: list[Found] = []
    data: Any = {}
    for name in ("openclaw.json", "clawdbot.json", "moltbot.json"):
        if (home / name).is_file():
            text, problem = _read(home, home / name)
            try:
                data = json5_loads(text or "", source=name) if problem is None else {}
            except ConfigError as exc:
                problem, data = Found("error", name, reason=str(exc)), {}
            if problem is not None:
                found.append(problem)
            elif isinstance(data, dict):
                agents = data.get("agents", {})
                defaults = agents.get("defaults", {}) if isinstance(agents, dict) else {}
                model = defaults.get("model") if isinstance(defaults, dict) else None
                found.extend(_config(data, name, model, ("mcp", "servers")))
            break
    workspace = home / "workspace"
    agents = data.get("agents") if isinstance(data, dict) else None
    defaults = agents.get("defaults") if isinstance(agents, dict) else None
    configured = defaults.get("workspace") if isinstance(defaults, dict) else None
    if isinstance(configured, str) and configured:
        candidate = Path(configured.replace("~/.openclaw", str(home))).expanduser()
        if not _inside(home, candidate):
            found.append(
                Found(
                    "refused",
                    "openclaw.json",
                    name="agents.defaults.workspace",
                    reason=f"workspace {configured!r} is outside the source home",
                )
            )
            return found
        workspace = candidate
    if workspace.is_dir():
        for name in _PERSONA_FILES:
            if (workspace / name).is_file():
                found.extend(_persona_candidate(home, workspace / name))
        if (workspace / "USER.md").is_file():
            found.extend(_memory(home, workspace / "USER.md", "semantic", "user-profile"))
        if (workspace / "MEMORY.md").is_file():
            found.extend(_memory(home, workspace / "MEMORY.md", "semantic", "fact"))
        daily = workspace / "memory"
        for path in sorted(daily.glob("*.md")) if daily.is_dir() else []:
            if _DAILY.match(path.name):
                found.extend(_memory(home, path, "episodic", "daily-log"))
            else:
                found.extend(_archive(home, path, "a memory note outside the daily-log layout"))
        found.extend(_skills(home, workspace / "skills"))
    found.extend(_skills(home, home / "skills"))
    if (home / "cron" / "jobs.json").is_file():
        found.extend(_cron(home, home / "cron" / "jobs.json"))
    return found
