// The REST client of the stand-in: @octokit/request at the github-api-url input.
import core from "@actions/core";
import { request } from "@octokit/request";

export default request.defaults({
  headers: { "user-agent": "create-github-app-token-stand-in" },
  baseUrl: core.getInput("github-api-url").replace(/\/$/, ""),
});
