// Stand-in for actions/setup-python (see ../README.md). Finds the requested version in
// $RUNNER_TOOL_CACHE/Python/<version>/x64 (each entry a virtual environment the harness made
// from a Python on the machine) and gives the job its own copy of it, as a hosted runner gives
// each job a fresh machine: what one job pip-installs never reaches another job.
import core from "@actions/core";
import fs from "node:fs";
import path from "node:path";

const UNSUPPORTED = {
  "python-version-file": "",
  cache: "",
  "cache-dependency-path": "",
  "check-latest": "false",
  "allow-prereleases": "false",
  freethreaded: "false",
};

function versionKey(text) {
  return text.split(".").map((part) => Number.parseInt(part, 10) || 0);
}

function newerFirst(a, b) {
  const [x, y] = [versionKey(a), versionKey(b)];
  for (let i = 0; i < Math.max(x.length, y.length); i += 1) {
    if ((x[i] ?? 0) !== (y[i] ?? 0)) return (y[i] ?? 0) - (x[i] ?? 0);
  }
  return 0;
}

function matches(spec, version) {
  // "3.12" and "3.12.x" match any 3.12 patch; "3.12.4" matches itself only.
  const want = spec.replace(/\.x$/, "").split(".");
  const have = version.split(".");
  return want.every((part, i) => part === have[i]);
}

function cachedVersions(root) {
  const base = path.join(root, "Python");
  if (!fs.existsSync(base)) return [];
  return fs
    .readdirSync(base)
    .filter((v) => fs.existsSync(path.join(base, v, "x64", "bin", "python")))
    .sort(newerFirst);
}

// A copy of the cached environment, its files hard links to the cache's (fast, and pip only
// ever replaces files, never edits them in place); the scripts that name the interpreter by
// absolute path are rewritten as new files, so `pip` installs into the copy, not the cache.
function linkTree(source, target) {
  fs.mkdirSync(target, { recursive: true });
  for (const entry of fs.readdirSync(source, { withFileTypes: true })) {
    const from = path.join(source, entry.name);
    const to = path.join(target, entry.name);
    if (entry.isSymbolicLink()) fs.symlinkSync(fs.readlinkSync(from), to);
    else if (entry.isDirectory()) linkTree(from, to);
    else {
      try {
        fs.linkSync(from, to);
      } catch {
        fs.copyFileSync(from, to);
      }
    }
  }
}

function rewrite(file, source, target) {
  const text = fs.readFileSync(file, "latin1");
  if (!text.includes(source)) return;
  const mode = fs.statSync(file).mode;
  fs.unlinkSync(file); // a new file: the cache's copy (a hard link) stays as it was
  fs.writeFileSync(file, text.split(source).join(target), { encoding: "latin1", mode });
}

function copyEnvironment(source, target) {
  fs.rmSync(target, { recursive: true, force: true });
  linkTree(source, target);
  const bin = path.join(target, "bin");
  for (const name of fs.readdirSync(bin)) {
    const file = path.join(bin, name);
    if (!fs.lstatSync(file).isSymbolicLink()) rewrite(file, source, target);
  }
  rewrite(path.join(target, "pyvenv.cfg"), source, target);
}

function run() {
  for (const [name, neutral] of Object.entries(UNSUPPORTED)) {
    const value = core.getInput(name);
    if (value && value !== neutral) {
      throw new Error(`input ${name}=${value} is not covered by the setup-python stand-in`);
    }
  }
  const arch = core.getInput("architecture");
  if (arch && arch !== "x64") throw new Error(`architecture ${arch}: the stand-in has x64 only`);
  const spec = core.getInput("python-version").trim();
  const toolCache = process.env.RUNNER_TOOL_CACHE;
  if (!toolCache) throw new Error("RUNNER_TOOL_CACHE is not set");
  const versions = cachedVersions(toolCache);
  if (versions.length === 0) {
    throw new Error(`no Python in the tool cache ${toolCache} (and the stand-in downloads none)`);
  }
  let version = spec ? versions.find((v) => matches(spec, v)) : versions[0];
  if (!version) {
    // The real action would download the version; offline there is nothing to download.
    version = versions[0];
    core.warning(
      `Python ${spec} is not in the tool cache and cannot be downloaded offline: ` +
        `using ${version}, the newest cached`,
    );
  }
  const source = path.join(toolCache, "Python", version, "x64");
  const temp = process.env.RUNNER_TEMP;
  if (!temp) throw new Error("RUNNER_TEMP is not set");
  const target = path.join(temp, "setup-python", version);
  copyEnvironment(source, target);
  const bin = path.join(target, "bin");
  if (core.getBooleanInput("update-environment")) {
    core.exportVariable("pythonLocation", target);
    core.exportVariable("PKG_CONFIG_PATH", `${target}/lib/pkgconfig`);
    core.exportVariable("Python_ROOT_DIR", target);
    core.exportVariable("Python2_ROOT_DIR", target);
    core.exportVariable("Python3_ROOT_DIR", target);
    core.addPath(bin);
  }
  core.info(`Successfully set up Python (${version}) from the tool cache`);
  core.setOutput("python-version", version);
  core.setOutput("python-path", path.join(bin, "python"));
  core.setOutput("cache-hit", "false");
}

try {
  run();
} catch (error) {
  core.setFailed(error.message);
}
