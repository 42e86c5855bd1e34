// Stand-in for actions/upload-artifact v4 (see ../README.md): the files the path patterns
// select (hidden ones only on request), relative to their search root, uploaded with
// @actions/artifact to the run's artifact service.
import core from "@actions/core";
import glob from "@actions/glob";
import { DefaultArtifactClient } from "@actions/artifact";
import fs from "node:fs";
import path from "node:path";

const NO_FILES = new Set(["warn", "error", "ignore"]);

function inputs() {
  const ifNoFilesFound = core.getInput("if-no-files-found") || "warn";
  if (!NO_FILES.has(ifNoFilesFound)) {
    throw new Error(
      `Unrecognized if-no-files-found input. Provided: ${ifNoFilesFound}. ` +
        "Available options: warn,error,ignore",
    );
  }
  const result = {
    name: core.getInput("name") || "artifact",
    searchPath: core.getInput("path", { required: true }),
    ifNoFilesFound,
    overwrite: core.getBooleanInput("overwrite"),
    includeHidden: core.getBooleanInput("include-hidden-files"),
  };
  const retention = core.getInput("retention-days");
  if (retention) {
    result.retentionDays = Number.parseInt(retention, 10);
    if (Number.isNaN(result.retentionDays)) throw new Error("Invalid retention-days");
  }
  const level = core.getInput("compression-level");
  if (level) {
    result.compressionLevel = Number.parseInt(level, 10);
    if (Number.isNaN(result.compressionLevel) || result.compressionLevel < 0 || result.compressionLevel > 9) {
      throw new Error("Invalid compression-level. Valid values are 0-9");
    }
  }
  return result;
}

// The deepest folder every search path shares (several patterns keep their layout under it).
function commonAncestor(paths) {
  const split = paths.map((p) => path.normalize(p).split(path.sep));
  const shared = [];
  for (let i = 0; i < Math.min(...split.map((s) => s.length)); i += 1) {
    if (split.some((s) => s[i] !== split[0][i])) break;
    shared.push(split[0][i]);
  }
  return shared.join(path.sep) || path.sep;
}

async function findFiles(searchPath, includeHidden) {
  const globber = await glob.create(searchPath, {
    followSymbolicLinks: true,
    implicitDescendants: true,
    omitBrokenSymbolicLinks: true,
    excludeHiddenFiles: !includeHidden,
  });
  const files = [];
  for (const found of await globber.glob()) {
    if (!fs.statSync(found).isDirectory()) files.push(found);
  }
  const roots = globber.getSearchPaths();
  if (roots.length > 1) return { files, root: commonAncestor(roots) };
  // One file named on its own keeps no folder: its parent is the root.
  if (files.length === 1 && roots[0] === files[0]) return { files, root: path.dirname(files[0]) };
  return { files, root: roots[0] };
}

async function run() {
  const s = inputs();
  const { files, root } = await findFiles(s.searchPath, s.includeHidden);
  if (files.length === 0) {
    const message = `No files were found with the provided path: ${s.searchPath}. No artifacts will be uploaded.`;
    if (s.ifNoFilesFound === "error") core.setFailed(message);
    else if (s.ifNoFilesFound === "warn") core.warning(message);
    else core.info(message);
    return;
  }
  core.info(`With the provided path, there will be ${files.length} file(s) uploaded`);
  const client = new DefaultArtifactClient();
  if (s.overwrite) {
    try {
      await client.deleteArtifact(s.name);
    } catch (error) {
      core.debug(`Unable to delete artifact: ${error.message}`);
    }
  }
  const options = {};
  if (s.retentionDays) options.retentionDays = s.retentionDays;
  if (s.compressionLevel !== undefined) options.compressionLevel = s.compressionLevel;
  const uploaded = await client.uploadArtifact(s.name, files, root, options);
  core.info(`Artifact ${s.name} has been successfully uploaded! Artifact ID is ${uploaded.id}`);
  core.setOutput("artifact-id", uploaded.id);
  core.setOutput("artifact-digest", uploaded.digest);
  const [owner, repo] = (process.env.GITHUB_REPOSITORY || "/").split("/");
  const server = process.env.GITHUB_SERVER_URL || "https://github.com";
  core.setOutput(
    "artifact-url",
    `${server}/${owner}/${repo}/actions/runs/${process.env.GITHUB_RUN_ID}/artifacts/${uploaded.id}`,
  );
}

run().catch((error) => core.setFailed(error.message));
