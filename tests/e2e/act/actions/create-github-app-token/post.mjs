// The stand-in's post step: DELETE /installation/token revokes the token when the job ends.
import core from "@actions/core";
import request from "./request.mjs";

async function post() {
  if (core.getBooleanInput("skip-token-revoke")) return core.info("Token revocation was skipped");
  const token = core.getState("token");
  if (!token) return core.info("Token is not set");
  const expiresAt = core.getState("expiresAt");
  if (expiresAt && new Date(expiresAt).getTime() < Date.now()) {
    return core.info("Token expired, skipping token revocation");
  }
  try {
    await request("DELETE /installation/token", { headers: { authorization: `token ${token}` } });
    core.info("Token revoked");
  } catch (error) {
    core.warning(`Token revocation failed: ${error.message}`);
  }
}

post();
