// Stand-in for actions/checkout (see ../README.md): a real git fetch over smart HTTP from
// <server origin>/<owner>/<name>, authenticated with the token as an extra header, as the
// real action does; then a detached or branch checkout of the ref.
import core from "@actions/core";
import fs from "node:fs";
import path from "node:path";
import { git, headerKey, serverOrigin } from "./git.mjs";

const UNSUPPORTED = {
  "ssh-key": "",
  "ssh-known-hosts": "",
  filter: "",
  "sparse-checkout": "",
  lfs: "false",
  submodules: "false",
};
const SHA = /^[0-9a-fA-F]{40}$/;

function inputs() {
  for (const [name, neutral] of Object.entries(UNSUPPORTED)) {
    const value = core.getInput(name);
    if (value && value !== neutral) {
      throw new Error(`input ${name}=${value} is not covered by the checkout stand-in`);
    }
  }
  const workspace = process.env.GITHUB_WORKSPACE;
  if (!workspace) throw new Error("GITHUB_WORKSPACE not defined");
  const qualified = core.getInput("repository") || process.env.GITHUB_REPOSITORY || "";
  const [owner, name, ...rest] = qualified.split("/");
  if (!owner || !name || rest.length) {
    throw new Error(`Invalid repository '${qualified}'. Expected format {owner}/{repo}.`);
  }
  const repoPath = path.resolve(workspace, core.getInput("path") || ".");
  if (!`${repoPath}${path.sep}`.startsWith(`${path.resolve(workspace)}${path.sep}`)) {
    throw new Error(`Repository path '${repoPath}' is not under '${workspace}'`);
  }
  let ref = core.getInput("ref");
  let commit = "";
  const own = qualified.toUpperCase() === (process.env.GITHUB_REPOSITORY || "").toUpperCase();
  if (!ref) {
    if (own) {
      ref = process.env.GITHUB_REF || "";
      commit = process.env.GITHUB_SHA || "";
      if (commit && ref && !ref.startsWith("refs/")) ref = `refs/heads/${ref}`;
    }
  } else if (SHA.test(ref)) {
    commit = ref;
    ref = "";
  }
  const depth = Number.parseInt(core.getInput("fetch-depth") || "1", 10);
  return {
    owner,
    name,
    repoPath,
    ref,
    commit,
    token: core.getInput("token"),
    clean: (core.getInput("clean") || "true").toUpperCase() === "TRUE",
    fetchDepth: Number.isNaN(depth) ? 1 : depth,
    fetchTags: core.getBooleanInput("fetch-tags"),
    persist: core.getBooleanInput("persist-credentials"),
    origin: serverOrigin(core.getInput("github-server-url")),
  };
}

// An existing checkout of the same URL is cleaned and reused (as on a self-hosted runner);
// anything else in the folder is deleted.
function prepareExisting(s, url) {
  const dotGit = path.join(s.repoPath, ".git");
  let remove = !fs.existsSync(dotGit);
  if (!remove) {
    const current = git(s.repoPath, ["config", "--local", "--get", "remote.origin.url"], {
      allowFailure: true,
    });
    remove = current !== url;
  }
  if (!remove) {
    for (const lock of ["index.lock", "shallow.lock"]) {
      fs.rmSync(path.join(dotGit, lock), { force: true });
    }
    if (git(s.repoPath, ["symbolic-ref", "-q", "HEAD"], { allowFailure: true }) !== null) {
      git(s.repoPath, ["checkout", "--detach"]);
    }
    const branches = git(s.repoPath, ["for-each-ref", "--format=%(refname:short)", "refs/heads"]);
    for (const branch of branches.split("\n").filter(Boolean)) {
      git(s.repoPath, ["branch", "--delete", "--force", branch]);
    }
    if (s.clean) {
      const cleaned = git(s.repoPath, ["clean", "-ffdx"], { allowFailure: true }) !== null;
      remove = !cleaned || git(s.repoPath, ["reset", "--hard", "HEAD"], { allowFailure: true }) === null;
    }
  }
  if (remove) {
    core.info(`Deleting the contents of '${s.repoPath}'`);
    for (const entry of fs.readdirSync(s.repoPath)) {
      fs.rmSync(path.join(s.repoPath, entry), { recursive: true, force: true });
    }
  }
}

function refSpec(ref, commit) {
  const upper = ref.toUpperCase();
  if (commit) {
    if (upper.startsWith("REFS/HEADS/")) {
      return [`+${commit}:refs/remotes/origin/${ref.slice("refs/heads/".length)}`];
    }
    if (upper.startsWith("REFS/PULL/")) {
      return [`+${commit}:refs/remotes/pull/${ref.slice("refs/pull/".length)}`];
    }
    if (upper.startsWith("REFS/TAGS/")) return [`+${commit}:${ref}`];
    return [commit];
  }
  if (!upper.startsWith("REFS/")) {
    return [`+refs/heads/${ref}*:refs/remotes/origin/${ref}*`, `+refs/tags/${ref}*:refs/tags/${ref}*`];
  }
  if (upper.startsWith("REFS/HEADS/")) {
    return [`+${ref}:refs/remotes/origin/${ref.slice("refs/heads/".length)}`];
  }
  if (upper.startsWith("REFS/PULL/")) {
    return [`+${ref}:refs/remotes/pull/${ref.slice("refs/pull/".length)}`];
  }
  return [`+${ref}:${ref}`];
}

async function defaultBranch(s) {
  const api = process.env.GITHUB_API_URL || "https://api.github.com";
  const reply = await fetch(`${api}/repos/${s.owner}/${s.name}`, {
    headers: { authorization: `token ${s.token}`, accept: "application/vnd.github+json" },
  });
  if (!reply.ok) throw new Error(`reading the default branch: HTTP ${reply.status}`);
  return `refs/heads/${(await reply.json()).default_branch}`;
}

function exists(repo, object) {
  return git(repo, ["rev-parse", "--verify", "-q", object], { allowFailure: true }) !== null;
}

function fetchSource(s) {
  const fetch = ["-c", "protocol.version=2", "fetch", "--prune", "--no-recurse-submodules"];
  if (s.fetchDepth <= 0) {
    // A shallow checkout left by an earlier job of this runner is deepened to all history.
    if (fs.existsSync(path.join(s.repoPath, ".git", "shallow"))) fetch.push("--unshallow");
    git(s.repoPath, [...fetch, "origin", "+refs/heads/*:refs/remotes/origin/*", "+refs/tags/*:refs/tags/*"]);
    // The ref may have moved since the event (or be an unadvertised commit): fetch it itself.
    const wanted = s.commit ? `${s.commit}^{commit}` : null;
    if (wanted && !exists(s.repoPath, wanted)) {
      git(s.repoPath, [...fetch, "origin", ...refSpec(s.ref, s.commit)]);
    }
    return;
  }
  const depth = [`--depth=${s.fetchDepth}`, ...(s.fetchTags ? [] : ["--no-tags"])];
  git(s.repoPath, [...fetch.slice(0, 3), ...depth, ...fetch.slice(3), "origin", ...refSpec(s.ref, s.commit)]);
}

function checkoutTarget(s) {
  const upper = s.ref.toUpperCase();
  if (!s.ref) return { ref: s.commit };
  if (upper.startsWith("REFS/HEADS/")) {
    const branch = s.ref.slice("refs/heads/".length);
    return { ref: branch, start: `refs/remotes/origin/${branch}` };
  }
  if (upper.startsWith("REFS/PULL/")) return { ref: `refs/remotes/pull/${s.ref.slice(10)}` };
  if (upper.startsWith("REFS/")) return { ref: s.commit || s.ref };
  if (exists(s.repoPath, `refs/remotes/origin/${s.ref}`)) {
    return { ref: s.ref, start: `refs/remotes/origin/${s.ref}` };
  }
  if (exists(s.repoPath, `refs/tags/${s.ref}`)) return { ref: `refs/tags/${s.ref}` };
  throw new Error(`A branch or tag with the name '${s.ref}' could not be found`);
}

async function run() {
  const s = inputs();
  const url = `${s.origin}/${encodeURIComponent(s.owner)}/${encodeURIComponent(s.name)}`;
  core.info(`Syncing repository: ${s.owner}/${s.name}`);
  fs.mkdirSync(s.repoPath, { recursive: true });
  prepareExisting(s, url);
  core.saveState("repositoryPath", s.repoPath);
  core.saveState("serverOrigin", s.origin);
  if (!fs.existsSync(path.join(s.repoPath, ".git"))) {
    git(s.repoPath, ["init", "-q"]);
    git(s.repoPath, ["remote", "add", "origin", url]);
  }
  git(s.repoPath, ["config", "--local", "gc.auto", "0"]);
  const key = headerKey(s.origin);
  const credential = Buffer.from(`x-access-token:${s.token}`, "utf8").toString("base64");
  core.setSecret(credential);
  try {
    git(s.repoPath, ["config", "--local", key, `AUTHORIZATION: basic ${credential}`]);
    if (!s.ref && !s.commit) s.ref = await defaultBranch(s);
    fetchSource(s);
    const target = checkoutTarget(s);
    const args = ["checkout", "--force"];
    git(s.repoPath, target.start ? [...args, "-B", target.ref, target.start] : [...args, target.ref]);
    const commit = git(s.repoPath, ["log", "-1", "--format=%H"]);
    core.setOutput("ref", s.ref || s.commit);
    core.setOutput("commit", commit);
  } finally {
    if (!s.persist) {
      core.info("Removing auth");
      git(s.repoPath, ["config", "--local", "--unset-all", key], { allowFailure: true });
    }
  }
}

run().catch((error) => core.setFailed(error.message));
