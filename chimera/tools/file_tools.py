"""The native file tools: ``read_file``, ``write_file``, ``edit_file``, ``list_dir`` and
``search``, every path resolved inside the workspace (:mod:`chimera.tools.native`).
"""

from __future__ import annotations

import time
from typing import Any

import regex

from chimera.atomic import atomic_write_bytes
from chimera.errors import ToolError
from chimera.protocols import ToolResult
from chimera.runner import word_safe_head
from chimera.tools.native_base import (
    LIST_MAX_ENTRIES,
    MAX_READ_BYTES,
    SEARCH_FILE_TIMEOUT_S,
    SEARCH_MAX_RESULTS,
    SEARCH_TOTAL_TIMEOUT_S,
    NativeTool,
    cap_output,
    read_text,
)
from chimera.tools.workspace import Workspace


class ReadFile(NativeTool):
    def __init__(self, workspace: Workspace, output_limit: int) -> None:
        super().__init__(workspace, output_limit)
        self.name = "read_file"
        self.description = (
            "Read a text file of the workspace, with line numbers. Optionally only lines "
            "start_line..end_line (1-based, inclusive). Long output is truncated."
        )
        self.parameters = {
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Path relative to the root."},
                "start_line": {"type": "integer", "minimum": 1},
                "end_line": {"type": "integer", "minimum": 1},
            },
            "required": ["path"],
            "additionalProperties": False,
        }

    def __call__(self, **kwargs: Any) -> ToolResult:
        shown = kwargs["path"]
        path = self.workspace.resolve(shown)
        lines = read_text(path, shown).splitlines()
        total = len(lines)
        start = int(kwargs.get("start_line") or 1)
        end = int(kwargs.get("end_line") or total)
        if total and start > total:
            raise ToolError(f"start_line {start} is past the end of {shown} ({total} lines)")
        if end < start:
            raise ToolError(f"end_line {end} is before start_line {start}")
        end = min(end, total)
        width = len(str(end)) if end else 1
        body = "\n".join(f"{n:>{width}}\t{lines[n - 1]}" for n in range(start, end + 1))
        header = f"{self.workspace.relative(path)} (lines {start}-{end} of {total})\n"
        if not total:
            return ToolResult(output=f"{self.workspace.relative(path)} is empty", meta={})
        hint = "; read a smaller range with start_line/end_line"
        return ToolResult(
            output=cap_output(header + body, self.output_limit, hint),
            meta={"path": self.workspace.relative(path), "lines": total},
        )


class WriteFile(NativeTool):
    def __init__(self, workspace: Workspace, output_limit: int) -> None:
        super().__init__(workspace, output_limit)
        self.name = "write_file"
        self.description = (
            "Create or overwrite a file with the given content (parent folders are created)."
        )
        self.parameters = {
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Path relative to the root."},
                "content": {"type": "string", "description": "The complete new content."},
            },
            "required": ["path", "content"],
            "additionalProperties": False,
        }

    def __call__(self, **kwargs: Any) -> ToolResult:
        shown, content = kwargs["path"], kwargs["content"]
        path = self.workspace.resolve(shown)
        if path == self.workspace.root or path.is_dir():
            raise ToolError(f"{shown} is a directory")
        existed = path.exists()
        data = content.encode("utf-8")
        atomic_write_bytes(path, data)
        verb = "overwrote" if existed else "created"
        rel = self.workspace.relative(path)
        return ToolResult(output=f"{verb} {rel} ({len(data)} bytes)", meta={"path": rel})


class EditFile(NativeTool):
    def __init__(self, workspace: Workspace, output_limit: int) -> None:
        super().__init__(workspace, output_limit)
        self.name = "edit_file"
        self.description = (
            "Replace one exact occurrence of old_text with new_text in a file. old_text must "
            "occur exactly once (include surrounding lines to make it unique)."
        )
        self.parameters = {
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Path relative to the root."},
                "old_text": {"type": "string", "description": "Exact text to replace."},
                "new_text": {"type": "string", "description": "Replacement text."},
            },
            "required": ["path", "old_text", "new_text"],
            "additionalProperties": False,
        }

    def __call__(self, **kwargs: Any) -> ToolResult:
        shown, old, new = kwargs["path"], kwargs["old_text"], kwargs["new_text"]
        if not old:
            raise ToolError("old_text is empty; use write_file to create or replace a file")
        path = self.workspace.resolve(shown)
        if path.is_dir():
            raise ToolError(f"{shown} is a directory")
        if not path.exists():
            raise ToolError(f"file not found: {shown}")
        raw = path.read_bytes()
        if b"\x00" in raw[:8192]:
            raise ToolError(f"{shown} is a binary file; edit_file works on text")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ToolError(
                f"{shown} is not UTF-8 text ({exc.reason} at byte {exc.start})"
            ) from exc
        count = text.count(old)
        if count == 0 and "\r\n" in text and "\r\n" not in old:
            # The model speaks "\n"; a CRLF file keeps its line ends.
            old, new = old.replace("\n", "\r\n"), new.replace("\n", "\r\n")
            count = text.count(old)
        rel = self.workspace.relative(path)
        if count == 0:
            raise ToolError(
                f"old_text was not found in {rel}; read the file and copy the text exactly "
                "(whitespace and indentation included)"
            )
        if count > 1:
            raise ToolError(
                f"old_text occurs {count} times in {rel}; include more surrounding lines so "
                "it matches exactly once"
            )
        index = text.index(old)
        first_line = text.count("\n", 0, index) + 1
        updated = text[:index] + new + text[index + len(old) :]
        atomic_write_bytes(path, updated.encode("utf-8"))
        last_line = first_line + new.count("\n")
        return ToolResult(
            output=f"edited {rel}: replaced 1 occurrence (now lines {first_line}-{last_line})",
            meta={"path": rel},
        )


class ListDir(NativeTool):
    def __init__(self, workspace: Workspace, output_limit: int) -> None:
        super().__init__(workspace, output_limit)
        self.name = "list_dir"
        self.description = (
            "List a folder of the workspace (folders end with '/'); files matched by "
            ".gitignore are left out. recursive=true lists the whole subtree."
        )
        self.parameters = {
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Folder relative to the root."},
                "recursive": {"type": "boolean"},
            },
            "additionalProperties": False,
        }

    def __call__(self, **kwargs: Any) -> ToolResult:
        shown = kwargs.get("path") or "."
        path = self.workspace.resolve(shown)
        if not path.is_dir():
            raise ToolError(f"{shown} is not a folder" if path.exists() else f"not found: {shown}")
        entries: list[str] = []
        if kwargs.get("recursive"):
            for file in self.workspace.walk_files(path):
                entries.append(file.relative_to(path).as_posix())
                if len(entries) > LIST_MAX_ENTRIES:
                    break
        else:
            for child in sorted(path.iterdir(), key=lambda p: p.name):
                if child.name in (".git", ".chimera") or self.workspace.is_hidden(child):
                    continue
                is_dir = child.is_dir() and not child.is_symlink()
                if self.workspace.is_ignored(child, is_dir=is_dir):
                    continue
                entries.append(child.name + ("/" if is_dir else ""))
                if len(entries) > LIST_MAX_ENTRIES:
                    break
        more = ""
        if len(entries) > LIST_MAX_ENTRIES:
            entries = entries[:LIST_MAX_ENTRIES]
            more = f"\n[... more than {LIST_MAX_ENTRIES} entries; list a subfolder ...]"
        rel = self.workspace.relative(path)
        body = "\n".join(entries) if entries else "(empty)"
        return ToolResult(
            output=cap_output(f"{rel}/\n{body}{more}", self.output_limit),
            meta={"path": rel, "entries": len(entries)},
        )


class Search(NativeTool):
    def __init__(self, workspace: Workspace, output_limit: int) -> None:
        super().__init__(workspace, output_limit)
        self.name = "search"
        self.description = (
            "Search the workspace's text files for a regular expression (Python 'regex' "
            "syntax, per line); prints path:line: text. .gitignore'd files are skipped."
        )
        self.parameters = {
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "Regular expression."},
                "path": {"type": "string", "description": "Folder or file to search in."},
                "ignore_case": {"type": "boolean"},
                "max_results": {"type": "integer", "minimum": 1, "maximum": 1000},
            },
            "required": ["pattern"],
            "additionalProperties": False,
        }

    def __call__(self, **kwargs: Any) -> ToolResult:
        flags = regex.MULTILINE | (regex.IGNORECASE if kwargs.get("ignore_case") else 0)
        try:
            pattern = regex.compile(kwargs["pattern"], flags)
        except regex.error as exc:
            raise ToolError(f"invalid regular expression: {exc}") from exc
        shown = kwargs.get("path") or "."
        start = self.workspace.resolve(shown)
        if not start.exists():
            raise ToolError(f"not found: {shown}")
        limit = int(kwargs.get("max_results") or SEARCH_MAX_RESULTS)
        files = [start] if start.is_file() else self.workspace.walk_files(start)
        hits: list[str] = []
        notes: list[str] = []
        deadline = time.monotonic() + SEARCH_TOTAL_TIMEOUT_S
        for file in files:
            if time.monotonic() > deadline:
                notes.append(f"stopped after {SEARCH_TOTAL_TIMEOUT_S:.0f}s")
                break
            try:
                if file.stat().st_size > MAX_READ_BYTES:
                    continue
                data = file.read_bytes()
            except OSError:
                continue
            if b"\x00" in data[:8192]:
                continue
            text = data.decode("utf-8", errors="replace")
            rel = self.workspace.relative(file)
            try:
                for match in pattern.finditer(text, timeout=SEARCH_FILE_TIMEOUT_S):
                    line_no = text.count("\n", 0, match.start()) + 1
                    line_start = text.rfind("\n", 0, match.start()) + 1
                    line_end = text.find("\n", match.start())
                    line = text[line_start : line_end if line_end >= 0 else len(text)]
                    if len(hits) >= limit:
                        notes.append(f"stopped after {limit} matches; narrow the pattern or path")
                        break
                    line = line.rstrip()
                    # Cut on whitespace: a cut through a token keeps a piece (word_safe_head).
                    shown = line if len(line) <= 300 else word_safe_head(line[:300])
                    hits.append(f"{rel}:{line_no}: {shown}")
            except TimeoutError:
                notes.append(f"pattern timed out in {rel} (skipped)")
            if notes and notes[-1].startswith("stopped"):
                break
        body = "\n".join(hits) if hits else "no matches"
        if notes:
            body += "\n[" + "; ".join(notes) + "]"
        return ToolResult(output=cap_output(body, self.output_limit), meta={"matches": len(hits)})
