// Stand-in for actions/download-artifact v4 (see ../README.md): find the artifacts by name,
// ids or pattern (in this run from the artifact service; with github-token, in any run
// through the REST API) and unpack each.
import core from "@actions/core";
import { DefaultArtifactClient } from "@actions/artifact";
import { Minimatch } from "minimatch";
import os from "node:os";
import path from "node:path";


async function run() {
  const s = {
    name: core.getInput("name"),
    ids: core.getInput("artifact-ids"),
    path: core.getInput("path") || process.env.GITHUB_WORKSPACE || process.cwd(),
    pattern: core.getInput("pattern"),
    merge: core.getBooleanInput("merge-multiple"),
    token: core.getInput("github-token"),
    repository: core.getInput("repository"),
    runId: Number.parseInt(core.getInput("run-id"), 10),
  };
  if (s.path.startsWith("~")) s.path = s.path.replace("~", os.homedir());
  if (s.name && s.ids) {
    throw new Error("Inputs 'name' and 'artifact-ids' cannot be used together. Please specify only one.");
  }
  const target = path.resolve(s.path);
  const options = {};
  if (s.token) {
    const [repositoryOwner, repositoryName] = s.repository.split("/");
    if (!repositoryOwner || !repositoryName) {
      throw new Error(`Invalid repository: '${s.repository}'. Must be in format owner/repo`);
    }
    options.findBy = { token: s.token, workflowRunId: s.runId, repositoryName, repositoryOwner };
  }
  const client = new DefaultArtifactClient();
  let artifacts;
  if (s.name) {
    const { artifact } = await client.getArtifact(s.name, options);
    if (!artifact) throw new Error(`Artifact '${s.name}' not found`);
    artifacts = [artifact];
  } else {
    const listed = (await client.listArtifacts({ latest: true, ...options })).artifacts;
    if (s.ids) {
      const wanted = s.ids.split(",").map((id) => id.trim()).filter(Boolean).map((id) => {
        const number = Number.parseInt(id, 10);
        if (Number.isNaN(number)) throw new Error(`Invalid artifact ID: '${id}'. Must be a number.`);
        return number;
      });
      artifacts = listed.filter((a) => wanted.includes(a.id));
      if (artifacts.length === 0) throw new Error("None of the provided artifact IDs were found");
    } else if (s.pattern) {
      const matcher = new Minimatch(s.pattern);
      artifacts = listed.filter((a) => matcher.match(a.name));
    } else {
      artifacts = listed;
    }
  }
  const single = Boolean(s.name);
  for (const artifact of artifacts) {
    core.info(`- ${artifact.name} (ID: ${artifact.id}, Size: ${artifact.size})`);
    const outcome = await client.downloadArtifact(artifact.id, {
      ...options,
      path: single || s.merge ? target : path.join(target, artifact.name),
      expectedHash: artifact.digest,
    });
    if (outcome.digestMismatch) {
      core.warning(`Artifact '${artifact.name}' digest validation failed.`);
    }
  }
  core.info(`Total of ${artifacts.length} artifact(s) downloaded`);
  core.setOutput("download-path", target);
}

run().catch((error) => core.setFailed(`Unable to download artifact(s): ${error.message}`));
