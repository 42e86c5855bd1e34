// The checkout stand-in's post step: the persisted token leaves the local git config when the
// job ends, as with the real action.
import core from "@actions/core";
import fs from "node:fs";
import path from "node:path";
import { git, headerKey } from "./git.mjs";

const repo = core.getState("repositoryPath");
const origin = core.getState("serverOrigin");
if (repo && origin && fs.existsSync(path.join(repo, ".git", "config"))) {
  git(repo, ["config", "--local", "--unset-all", headerKey(origin)], { allowFailure: true });
}
