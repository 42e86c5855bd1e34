// Stand-in for actions/create-github-app-token (see ../README.md). With the App's JWT
// (@octokit/auth-app): GET /repos/{owner}/{repo}/installation (or /users/{owner}/installation
// for every repository of an owner), then POST /app/installations/{id}/access_tokens with the
// repositories and permission-* inputs; outputs token, installation-id and app-slug.
import core from "@actions/core";
import { createAppAuth } from "@octokit/auth-app";
import request from "./request.mjs";

function permissionInputs(env) {
  let permissions;
  for (const [key, value] of Object.entries(env)) {
    if (!key.startsWith("INPUT_PERMISSION-") || !value) continue;
    const name = key.slice("INPUT_PERMISSION-".length).toLowerCase().replaceAll("-", "_");
    permissions = { ...(permissions ?? {}), [name]: value };
  }
  return permissions; // undefined: the token inherits every permission of the installation
}

function target() {
  const owner = core.getInput("owner");
  const repositories = core
    .getInput("repositories")
    .split(/[\n,]+/)
    .map((s) => s.trim())
    .filter(Boolean);
  if (!owner && repositories.length === 0) {
    const [own, repo] = String(process.env.GITHUB_REPOSITORY).split("/");
    return { owner: own, repositories: [repo] };
  }
  return { owner: owner || String(process.env.GITHUB_REPOSITORY_OWNER), repositories };
}

async function installation(auth, owner, repositories) {
  const route = repositories.length
    ? ["GET /repos/{owner}/{repo}/installation", { owner, repo: repositories[0] }]
    : ["GET /users/{username}/installation", { username: owner }];
  const response = await request(route[0], { ...route[1], request: { hook: auth.hook } });
  return response.data;
}

async function run() {
  if (!process.env.GITHUB_REPOSITORY) {
    throw new Error("GITHUB_REPOSITORY missing, must be set to '<owner>/<repo>'");
  }
  const { owner, repositories } = target();
  const auth = createAppAuth({
    appId: core.getInput("app-id"),
    privateKey: core.getInput("private-key"),
    request,
  });
  const found = await installation(auth, owner, repositories);
  const authentication = await auth({
    type: "installation",
    installationId: found.id,
    ...(repositories.length ? { repositoryNames: repositories } : {}),
    permissions: permissionInputs(process.env),
  });
  core.setSecret(authentication.token);
  core.setOutput("token", authentication.token);
  core.setOutput("installation-id", found.id);
  core.setOutput("app-slug", found.app_slug);
  if (!core.getBooleanInput("skip-token-revoke")) {
    core.saveState("token", authentication.token);
    core.saveState("expiresAt", authentication.expiresAt);
  }
}

run().catch((error) => core.setFailed(error.message));
