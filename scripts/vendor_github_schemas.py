#!/usr/bin/env python3
"""Regenerate the small vendored GitHub test data Chimera's tests use.

1. ``tests/data/github/openapi-subset.json``: from GitHub's published OpenAPI description
   (npm package ``@octokit/openapi``, MIT), only the operations Chimera calls — their
   success-response schemas and every component schema those reference, without examples or
   descriptions. The full description is tens of MB; the subset is small.
2. ``tests/data/github/webhooks/*.json``: real webhook payloads from the npm package
   ``@octokit/webhooks-examples`` (MIT), one file per event/action Chimera reacts to.

Usage::

    python scripts/vendor_github_schemas.py                # npm-installs both into a temp dir
    python scripts/vendor_github_schemas.py --from DIR     # a node_modules folder holding them

The packages are installed with ``npm install --prefix <temp dir>`` (the npm registry must be
reachable); nothing is installed into the project.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT_DIR = ROOT / "tests" / "data" / "github"

# (method, path template) of every REST call Chimera makes (chimera/github/client/client.py), and
# of the calls the GitHub fake serves for the tests of the trust chain.
OPERATIONS: tuple[tuple[str, str], ...] = (
    ("get", "/user"),
    ("get", "/users/{username}"),
    ("get", "/repos/{owner}/{repo}"),
    ("get", "/repos/{owner}/{repo}/issues"),
    ("get", "/repos/{owner}/{repo}/issues/{issue_number}"),
    ("patch", "/repos/{owner}/{repo}/issues/{issue_number}"),
    ("get", "/repos/{owner}/{repo}/issues/{issue_number}/comments"),
    ("post", "/repos/{owner}/{repo}/issues/{issue_number}/comments"),
    ("post", "/repos/{owner}/{repo}/issues/{issue_number}/labels"),
    ("delete", "/repos/{owner}/{repo}/issues/{issue_number}/labels/{name}"),
    ("get", "/repos/{owner}/{repo}/labels/{name}"),
    ("post", "/repos/{owner}/{repo}/labels"),
    ("get", "/repos/{owner}/{repo}/collaborators/{username}/permission"),
    ("get", "/repos/{owner}/{repo}/pulls"),
    ("post", "/repos/{owner}/{repo}/pulls"),
    ("get", "/repos/{owner}/{repo}/pulls/{pull_number}"),
    ("patch", "/repos/{owner}/{repo}/pulls/{pull_number}"),
    ("post", "/repos/{owner}/{repo}/pulls/{pull_number}/requested_reviewers"),
    ("get", "/repos/{owner}/{repo}/pulls/{pull_number}/reviews"),
    ("get", "/repos/{owner}/{repo}/rules/branches/{branch}"),
    ("post", "/repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches"),
    ("get", "/repos/{owner}/{repo}/actions/runs/{run_id}/artifacts"),
    # Served by the GitHub fake for the trust chain (reviews, the Spec check, statuses).
    ("post", "/repos/{owner}/{repo}/pulls/{pull_number}/reviews"),
    ("get", "/repos/{owner}/{repo}/commits/{ref}"),
    ("post", "/repos/{owner}/{repo}/check-runs"),
    ("get", "/repos/{owner}/{repo}/check-runs/{check_run_id}"),
    ("patch", "/repos/{owner}/{repo}/check-runs/{check_run_id}"),
    ("get", "/repos/{owner}/{repo}/commits/{ref}/check-runs"),
    ("post", "/repos/{owner}/{repo}/statuses/{sha}"),
    ("get", "/repos/{owner}/{repo}/commits/{ref}/statuses"),
    ("get", "/repos/{owner}/{repo}/commits/{ref}/status"),
    # What `chimera doctor` reads of a repository's set-up (and `--fix` writes: labels).
    ("get", "/repos/{owner}/{repo}/contents/{path}"),
    ("get", "/repos/{owner}/{repo}/labels"),
    ("get", "/repos/{owner}/{repo}/actions/permissions/workflow"),
    ("get", "/repos/{owner}/{repo}/actions/secrets"),
    ("get", "/repos/{owner}/{repo}/actions/organization-secrets"),
    ("get", "/repos/{owner}/{repo}/branches/{branch}/protection"),
    ("get", "/user/installations"),
    ("get", "/user/installations/{installation_id}/repositories"),
    ("get", "/orgs/{org}/installations"),
)

# webhook file name -> (event name in the examples, action, index among that action's examples)
WEBHOOKS: dict[str, tuple[str, str | None, int]] = {
    "issues.labeled.json": ("issues", "labeled", 0),
    "issues.unlabeled.json": ("issues", "unlabeled", 0),
    "pull_request_review.submitted.json": ("pull_request_review", "submitted", 0),
    "pull_request.closed.json": ("pull_request", "closed", 0),
    "workflow_dispatch.json": ("workflow_dispatch", None, 0),
}

_DROP = {"description", "examples", "example", "summary", "externalDocs"}


def npm_install(prefix: Path) -> Path:
    subprocess.run(
        [
            "npm",
            "install",
            "--no-audit",
            "--no-fund",
            "--prefix",
            str(prefix),
            "@octokit/openapi",
            "@octokit/webhooks-examples",
        ],
        check=True,
    )
    return prefix / "node_modules"


def _strip(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _strip(v) for k, v in node.items() if k not in _DROP}
    if isinstance(node, list):
        return [_strip(v) for v in node]
    return node


def _refs(node: Any, found: set[str]) -> None:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/components/schemas/"):
            found.add(ref.rsplit("/", 1)[1])
        for value in node.values():
            _refs(value, found)
    elif isinstance(node, list):
        for value in node:
            _refs(value, found)


def openapi_subset(description: dict[str, Any]) -> dict[str, Any]:
    """The operations in OPERATIONS with their success responses and referenced schemas."""
    paths: dict[str, Any] = {}
    for method, template in OPERATIONS:
        op = description["paths"][template][method]
        responses = {}
        for status, resp in op["responses"].items():
            if not status.startswith("2"):
                continue
            resp = (
                description["components"]["responses"][resp["$ref"].rsplit("/", 1)[1]]
                if "$ref" in resp
                else resp
            )
            schema = (resp.get("content") or {}).get("application/json", {}).get("schema")
            responses[status] = {"schema": _strip(schema)} if schema else {}
        paths.setdefault(template, {})[method] = {
            "operationId": op.get("operationId"),
            "responses": responses,
        }
    wanted: set[str] = set()
    _refs(paths, wanted)
    schemas: dict[str, Any] = {}
    todo = sorted(wanted)
    while todo:
        name = todo.pop()
        if name in schemas:
            continue
        schema = _strip(description["components"]["schemas"][name])
        schemas[name] = schema
        more: set[str] = set()
        _refs(schema, more)
        todo.extend(sorted(more - set(schemas)))
    return {
        "source": "npm @octokit/openapi (MIT), generated/api.github.com.json",
        "openapi_version": description.get("info", {}).get("version"),
        "paths": paths,
        "components": {"schemas": dict(sorted(schemas.items()))},
    }


def webhook_examples(index: list[dict[str, Any]]) -> dict[str, Any]:
    by_name = {entry["name"]: entry for entry in index}
    out: dict[str, Any] = {}
    for filename, (event, action, nth) in WEBHOOKS.items():
        examples = [
            e for e in by_name[event]["examples"] if action is None or e.get("action") == action
        ]
        out[filename] = examples[nth]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--from", dest="source", metavar="NODE_MODULES", help="use installed packages"
    )
    parser.add_argument("--out", default=str(OUT_DIR), help="output folder")
    args = parser.parse_args(argv)
    out = Path(args.out)
    with tempfile.TemporaryDirectory() as tmp:
        modules = Path(args.source) if args.source else npm_install(Path(tmp))
        openapi_pkg = modules / "@octokit" / "openapi"
        hooks_pkg = modules / "@octokit" / "webhooks-examples"
        description = json.loads((openapi_pkg / "generated" / "api.github.com.json").read_text())
        subset = openapi_subset(description)
        subset["package_version"] = json.loads((openapi_pkg / "package.json").read_text())[
            "version"
        ]
        out.mkdir(parents=True, exist_ok=True)
        (out / "openapi-subset.json").write_text(
            json.dumps(subset, indent=1, sort_keys=True) + "\n"
        )
        hooks_version = json.loads((hooks_pkg / "package.json").read_text())["version"]
        index = json.loads((hooks_pkg / "api.github.com" / "index.json").read_text())
        hook_dir = out / "webhooks"
        hook_dir.mkdir(parents=True, exist_ok=True)
        for filename, payload in webhook_examples(index).items():
            (hook_dir / filename).write_text(json.dumps(payload, indent=2, sort_keys=True) + "\n")
        (hook_dir / "SOURCE.md").write_text(
            "# Webhook payloads\n\n"
            f"Real example payloads from the npm package `@octokit/webhooks-examples` "
            f"{hooks_version} (`api.github.com/index.json`), published under the MIT license "
            "by the Octokit contributors (repository: github:octokit/webhooks). Copied "
            "unchanged by `scripts/vendor_github_schemas.py`.\n\n"
            "The package holds no `pull_request_review` example whose state is `approved` or "
            "`changes_requested` (only `commented`); the tests derive those two from "
            "`pull_request_review.submitted.json` by setting `review.state` (and the "
            "reviewer), in code, so the file here stays the real payload.\n\n"
            "MIT License, Copyright (c) Octokit contributors: permission is hereby granted, "
            "free of charge, to any person obtaining a copy of this software and associated "
            "documentation files, to deal in the Software without restriction, subject to "
            "including the copyright notice and this permission notice in all copies or "
            'substantial portions of the Software. THE SOFTWARE IS PROVIDED "AS IS", WITHOUT '
            "WARRANTY OF ANY KIND.\n"
        )
    size = (out / "openapi-subset.json").stat().st_size
    sys.stdout.write(
        f"wrote {out / 'openapi-subset.json'} ({size} bytes) and {len(WEBHOOKS)} webhook payloads\n"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
