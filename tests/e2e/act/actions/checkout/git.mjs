// The git commands and settings the checkout stand-in shares between its main and post steps.
import core from "@actions/core";
import { execFileSync } from "node:child_process";

export function serverOrigin(explicit) {
  const url = explicit || process.env.GITHUB_SERVER_URL || "https://github.com";
  return new URL(url).origin;
}

// The local config key git reads the Authorization header from, for the server's origin only.
export function headerKey(origin) {
  return `http.${origin}/.extraheader`;
}

export function git(cwd, args, { allowFailure = false } = {}) {
  core.info(`[command]git ${args.join(" ")}`);
  try {
    return execFileSync("git", args, {
      cwd,
      encoding: "utf8",
      env: { ...process.env, GIT_TERMINAL_PROMPT: "0", GCM_INTERACTIVE: "Never" },
      stdio: ["ignore", "pipe", "pipe"],
    }).trim();
  } catch (error) {
    if (allowFailure) return null;
    const detail = `${error.stderr ?? ""}${error.stdout ?? ""}`.trim();
    throw new Error(`git ${args[0]} failed (exit ${error.status}): ${detail}`);
  }
}
