// The HTML report in headless Chromium (Debian's /usr/bin/chromium, driven by puppeteer-core): a report written by
// the real binary loads without errors and works (one cell per record, filters, search, sorting, details), and the
// golden page of the hostile fixture (tests/data/reports/) shows its hostile strings as text, injecting nothing.
//
// Run by ctest (tests/CMakeLists.txt) with MPS_AUDIT_BINARY and MPS_AUDIT_SOURCE_DIR set. Exit code 77 (a skip)
// when Chromium or puppeteer-core is missing, unless $CI is set: CI must run it.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const ci = !["", "0", "false"].includes((process.env.CI ?? "").toLowerCase());
function missing(why) {
  if (ci) {
    console.error(`error: ${why} (CI must run the browser test: scripts/setup.sh installs it)`);
    process.exit(1);
  }
  console.log(`skip: ${why} (scripts/setup.sh installs it)`);
  process.exit(77);
}

const chromium = process.env.MPS_AUDIT_CHROMIUM || "/usr/bin/chromium";
const binary = process.env.MPS_AUDIT_BINARY;
const sourceDir = process.env.MPS_AUDIT_SOURCE_DIR;
if (!binary || !sourceDir) {
  console.error("error: set MPS_AUDIT_BINARY and MPS_AUDIT_SOURCE_DIR (ctest does)");
  process.exit(2);
}
if (!existsSync(chromium)) missing(`no Chromium at ${chromium}`);
let puppeteer;
try {
  puppeteer = (await import("puppeteer-core")).default;
} catch {
  missing("no puppeteer-core in tests/browser/node_modules");
}

const work = mkdtempSync(join(tmpdir(), "mps-audit-browser-"));
let browser;

// A page and everything it said that it should not have: console errors, uncaught errors, dialogs (an injected
// alert() would open one), and requests for anything but the file itself.
async function open(file) {
  const page = await browser.newPage();
  const problems = [];
  page.on("console", (m) => { if (m.type() === "error") problems.push(`console: ${m.text()}`); });
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("dialog", async (d) => { problems.push(`dialog: ${d.message()}`); await d.dismiss(); });
  page.on("request", (r) => { if (!/^(file|data):/.test(r.url())) problems.push(`request: ${r.url()}`); });
  await page.goto(pathToFileURL(file).href, { waitUntil: "load" });
  await page.waitForFunction(() => document.body.dataset.ready !== undefined, { timeout: 30000 });
  return { page, problems };
}

// The matrix as the page shows it: per record cell, its operator, dtype, verdict class and whether it is visible.
function matrixCells(page) {
  return page.evaluate(() => {
    const dtypes = [...document.querySelectorAll("#matrix thead tr.dt th")].map((th) => th.textContent);
    const out = [];
    for (const tr of document.querySelectorAll("#matrix tbody tr")) {
      const cells = tr.querySelectorAll("td");
      // group, status, native since (MPS runs), one per column, worst
      const fixed = cells.length - dtypes.length - 1;
      for (let c = 0; c < dtypes.length; c++) {
        const td = cells[fixed + c];
        const v = [...td.classList].find((k) => /^v\d+$/.test(k));
        if (!v) continue;
        out.push({ op: tr.cells[0].textContent, dtype: dtypes[c], verdict: v,
                   visible: !tr.hidden && td.checkVisibility({ visibilityProperty: true }), rowHidden: tr.hidden });
      }
    }
    return out;
  });
}

// The verdict names by the page's class numbers, from its legend.
function verdictNames(page) {
  return page.evaluate(() => Object.fromEntries([...document.querySelectorAll(".legend li")].map((li) => {
    const sw = li.querySelector(".sw");
    return [[...sw.classList].find((k) => /^v\d+$/.test(k)), li.childNodes[1].textContent.trim()];
  })));
}

async function clickCell(page, op, dtype) {
  const cell = await page.evaluateHandle((op, dtype) => {
    const c = [...document.querySelectorAll("#matrix thead tr.dt th")].findIndex((th) => th.textContent === dtype);
    const tr = [...document.querySelectorAll("#matrix tbody tr")].find((r) => r.cells[0].textContent === op);
    const fixed = document.querySelectorAll("#matrix thead tr:first-child th[rowspan]").length - 1;  // less "worst"
    return tr.cells[fixed + c];
  }, op, dtype);
  await cell.click();
  return page.evaluate(() => ({
    open: !document.getElementById("details").hidden,
    title: document.querySelector("#details h3").textContent,
    message: document.getElementById("d-message")?.textContent ?? "",
    warnings: document.getElementById("d-warnings")?.textContent ?? "",
    verdict: document.getElementById("d-verdict")?.textContent ?? "",
    observed: document.getElementById("d-observed")?.textContent ?? "",
    expectation: document.getElementById("d-expectation")?.textContent ?? "",
  }));
}

before(async () => {
  const out = join(work, "run");
  const run = spawnSync(binary, [
    "run", "--target", "mps-emu", "--spec", join(sourceDir, "opspec.yaml"),
    "--emu-release", join(sourceDir, "data/pytorch-1.13.1"),
    "--ops", "^aten::(add\\.Tensor|sin|relu|nonzero|cumsum|linalg_inv|_fft_r2c|bernoulli)$",
    "--dtypes", "float32,float16,float64", "--format", "json,html", "--out", out, "--no-progress",
  ], { encoding: "utf8", timeout: 120000 });
  assert.equal(run.status, 0, `mps-audit run failed:\n${run.stdout}\n${run.stderr}`);
  browser = await puppeteer.launch({
    executablePath: chromium,
    headless: true,
    userDataDir: join(work, "profile"),
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
});

after(async () => {
  if (browser) await browser.close();
  rmSync(work, { recursive: true, force: true });
});

test("a run's report: no errors, one cell per record, each with its verdict", async () => {
  const results = JSON.parse(readFileSync(join(work, "run/results.json"), "utf8")).results;
  const { page, problems } = await open(join(work, "run/results.html"));
  console.log(`page ready in ${await page.evaluate(() => document.body.dataset.ready)} ms`);
  const names = await verdictNames(page);
  const cells = await matrixCells(page);
  assert.equal(cells.length, results.length);
  const shown = new Map(cells.map((c) => [`${c.op} ${c.dtype}`, names[c.verdict]]));
  for (const r of results) assert.equal(shown.get(`${r.op} ${r.dtype}`), r.verdict, `${r.op} ${r.dtype}`);
  assert.ok(cells.every((c) => c.visible));
  assert.deepEqual(problems, []);
  await page.close();
});

test("a verdict filter hides that verdict's cells, the rows left with none, and nothing else", async () => {
  const results = JSON.parse(readFileSync(join(work, "run/results.json"), "utf8")).results;
  const { page, problems } = await open(join(work, "run/results.html"));
  const names = await verdictNames(page);
  assert.ok(results.some((r) => r.verdict === "pass") && results.some((r) => r.verdict !== "pass"));
  const pass = await page.evaluateHandle(() =>
    [...document.querySelectorAll("#filter-v label")].find((l) => /\bpass\b/.test(l.textContent)).querySelector("input"));
  await pass.click();
  const onlyPass = new Set(results.map((r) => r.op));
  for (const r of results) if (r.verdict !== "pass") onlyPass.delete(r.op);
  for (const c of await matrixCells(page)) {
    const isPass = names[c.verdict] === "pass";
    assert.equal(c.visible, !isPass, `${c.op} ${c.dtype} ${names[c.verdict]}`);
    assert.equal(c.rowHidden, onlyPass.has(c.op), c.op);
  }
  await pass.click();
  assert.ok((await matrixCells(page)).every((c) => c.visible));
  assert.deepEqual(problems, []);
  await page.close();
});

test("a dtype filter hides that dtype's column, a group or set filter its operators' rows", async () => {
  const results = JSON.parse(readFileSync(join(work, "run/results.json"), "utf8")).results;
  const { page, problems } = await open(join(work, "run/results.html"));
  const box = (set, label) => page.evaluateHandle((set, label) =>
    [...document.querySelectorAll(`#filter-${set} label`)].find((l) => l.textContent.trim().split(/\s+/)[0] === label)
      .querySelector("input"), set, label);
  const float16 = await box("d", "float16");
  await float16.click();
  const onlyFloat16 = new Set(results.map((r) => r.op));
  for (const r of results) if (r.dtype !== "float16") onlyFloat16.delete(r.op);
  for (const c of await matrixCells(page)) {
    assert.equal(c.visible, c.dtype !== "float16" && !onlyFloat16.has(c.op), `${c.op} ${c.dtype}`);
  }
  const headings = await page.$$eval("#matrix thead tr.dt th", (ths) => ths.filter((th) => th.checkVisibility()).map((th) => th.textContent));
  assert.deepEqual(headings, [...new Set(results.map((r) => r.dtype))].filter((d) => d !== "float16"));
  await float16.click();
  // The groups are the report's (op_group() in C++); the column beside the operator says which.
  const groupOf = new Map(await page.$$eval("#matrix tbody tr", (trs) => trs.map((tr) => [tr.cells[0].textContent, tr.querySelector("td.g").textContent])));
  const reduction = await box("g", "reduction");
  await reduction.click();
  for (const c of await matrixCells(page)) assert.equal(c.rowHidden, groupOf.get(c.op) === "reduction", c.op);
  assert.ok([...groupOf.values()].includes("reduction"));
  await reduction.click();
  // The sets (Note [Operator tiers]): the Core ATen operators' rows come first, and their filter hides them.
  const tiers = ["core", "public", "internal", "test"];
  const setOf = await page.$$eval("#matrix tbody tr", (trs) => trs.map((tr) => [tr.cells[0].textContent, tr.querySelector("td.t").textContent]));
  const ranks = setOf.map(([, t]) => tiers.indexOf(t));
  assert.ok(ranks.every((k) => k >= 0), JSON.stringify(setOf));
  assert.deepEqual(ranks, [...ranks].sort((a, b) => a - b));
  assert.ok(ranks.includes(0) && ranks.some((k) => k > 0), JSON.stringify(setOf));
  const core = await box("t", "core");
  await core.click();
  const set = new Map(setOf);
  for (const c of await matrixCells(page)) assert.equal(c.rowHidden, set.get(c.op) === "core", c.op);
  assert.deepEqual(problems, []);
  await page.close();
});

test("the search box narrows the rows to operators whose name contains it", async () => {
  const results = JSON.parse(readFileSync(join(work, "run/results.json"), "utf8")).results;
  const { page, problems } = await open(join(work, "run/results.html"));
  await page.type("#search", "CumSum");
  const rows = await page.$$eval("#matrix tbody tr", (trs) => trs.filter((tr) => !tr.hidden).map((tr) => tr.cells[0].textContent));
  assert.deepEqual(rows, [...new Set(results.map((r) => r.op).filter((op) => op.includes("cumsum")))]);
  assert.match(await page.$eval("#shown", (p) => p.textContent), /^1 of \d+ operators shown/);
  await page.$eval("#search", (s) => { s.value = ""; s.dispatchEvent(new Event("input")); });
  assert.equal(await page.$$eval("#matrix tbody tr", (trs) => trs.filter((tr) => tr.hidden).length), 0);
  assert.deepEqual(problems, []);
  await page.close();
});

test("sorting by operator and by worst verdict reorders the rows", async () => {
  const { page, problems } = await open(join(work, "run/results.html"));
  const order = () => page.$$eval("#matrix tbody tr", (trs) => trs.map((tr) => tr.cells[0].textContent));
  await page.click('th[data-sort="name"]');
  const names = await order();
  assert.deepEqual(names, [...names].sort());
  await page.click('th[data-sort="name"]');
  assert.deepEqual(await order(), [...names].reverse());
  await page.click('th[data-sort="worst"]');
  const severity = await page.$$eval("#matrix tbody tr", (trs) => trs.map((tr) => tr.lastElementChild.title));
  const rank = ["skip", "pass", "xfail", "fallback", "unsupported", "known_failure", "xpass", "mismatch", "error", "timeout",
    "crash"];
  const ranks = severity.map((v) => rank.indexOf(v));
  assert.ok(ranks.every((r) => r >= 0));
  assert.deepEqual(ranks, [...ranks].sort((a, b) => b - a));
  assert.deepEqual(problems, []);
  await page.close();
});

test("clicking a cell shows its record's details", async () => {
  const results = JSON.parse(readFileSync(join(work, "run/results.json"), "utf8")).results;
  const { page, problems } = await open(join(work, "run/results.html"));
  const r = results.find((x) => x.verdict === "unsupported" && x.message);
  assert.ok(r, "the run has an unsupported record with a message");
  const d = await clickCell(page, r.op, r.dtype);
  assert.ok(d.open);
  assert.equal(d.title, `${r.op} \u00b7 ${r.dtype}`);
  assert.equal(d.message, r.message);
  assert.match(d.verdict, /unsupported/);
  await page.keyboard.press("Escape");
  assert.equal(await page.$eval("#details", (e) => e.hidden), true);
  assert.deepEqual(problems, []);
  await page.close();
});

test("a record expected to fail on a real Mac shows what the emulator saw and the evidence", async () => {
  const results = JSON.parse(readFileSync(join(work, "run/results.json"), "utf8")).results;
  const { page, problems } = await open(join(work, "run/results.html"));
  const r = results.find((x) => x.verdict === "known_failure");
  assert.ok(r, "the run has a known_failure record (bernoulli meets a known MPS bug of 1.13)");
  const d = await clickCell(page, r.op, r.dtype);
  assert.match(d.verdict, /known_failure/);
  assert.equal(d.observed, r.observed);
  // PyTorch's list entry, or the known bug with its thread (Note [Known bugs]).
  const evidence = r.expectation ? [r.expectation.list, r.expectation.source] : [r.known_bugs[0].id, r.known_bugs[0].source];
  assert.ok(evidence.every((e) => d.expectation.includes(e)), d.expectation);
  // A flaky entry is a note on what was observed: nonzero falls back.
  const nonzero = results.find((x) => x.op === "aten::nonzero" && x.dtype === "float32");
  assert.equal(nonzero.verdict, "fallback");
  assert.equal(nonzero.expectation.kind, "flaky");
  assert.deepEqual(problems, []);
  await page.close();
});

test("an MPS run's matrix says when each operator got a native MPS kernel, as a range of the releases", async () => {
  const doc = JSON.parse(readFileSync(join(work, "run/results.json"), "utf8"));
  const releases = doc.timeline.releases;
  assert.ok(releases.length >= 2, releases.join(", "));
  const { page, problems } = await open(join(work, "run/results.html"));
  const since = new Map(await page.$$eval("#matrix tbody tr", (trs) =>
    trs.map((tr) => [tr.cells[0].textContent, tr.querySelector("td.ns").textContent])));
  // Note [Since, as a range]: the first release with one, and the release looked at before it.
  const range = (first) => {
    const k = releases.indexOf(first);
    return first === undefined ? "not yet" : k === 0 ? `by ${first}` : `after ${releases[k - 1]}, by ${first}`;
  };
  for (const op of ["aten::add.Tensor", "aten::cumsum", "aten::linalg_inv"]) {
    assert.equal(since.get(op), range(doc.timeline.native_since[op]), op);
  }
  assert.equal(since.get("aten::add.Tensor"), `by ${releases[0]}`);
  assert.match(since.get("aten::cumsum"), /^after \S+, by \S+$/);
  assert.equal(since.get("aten::linalg_inv"), "not yet");
  await page.click('th[data-sort="since"]');
  const order = await page.$$eval("#matrix tbody tr", (trs) => trs.map((tr) => tr.querySelector("td.ns").textContent));
  const rank = (v) => (v === "not yet" ? 99 : releases.indexOf(v.replace(/^.*by /, "")));
  assert.deepEqual(order.map(rank), [...order.map(rank)].sort((a, b) => a - b));
  assert.deepEqual(problems, []);
  await page.close();
});

test("hostile strings of the fixture are shown as text and inject nothing", async () => {
  const fixture = JSON.parse(readFileSync(join(sourceDir, "tests/data/reports/results.json"), "utf8"));
  const hostile = fixture.results.find((r) => r.message.includes("</script><img"));
  const scripted = fixture.results.find((r) => r.warnings.some((w) => w.includes("<script>")));
  const { page, problems } = await open(join(sourceDir, "tests/data/reports/results.html"));
  const injected = await page.evaluate(() => ({
    img: document.querySelectorAll("img").length,
    svgOnload: document.querySelectorAll("[onload], [onerror]").length,
    bold: document.querySelectorAll("b, i").length,
    scripts: document.scripts.length,
  }));
  assert.deepEqual(injected, { img: 0, svgOnload: 0, bold: 0, scripts: 2 });
  const d = await clickCell(page, hostile.op, hostile.dtype);
  assert.equal(d.message, hostile.message);
  await page.keyboard.press("Escape");
  const w = await clickCell(page, scripted.op, scripted.dtype);
  assert.equal(w.warnings, scripted.warnings.join("\n"));
  assert.ok(await page.$$eval("#matrix tbody th", (ths) => ths.some((th) => th.textContent === "aten::<svg onload=alert(2)>")));
  assert.equal(await page.evaluate(() => document.querySelectorAll("img, [onload], [onerror]").length), 0);
  assert.match(await page.$eval(".banner.emu", (b) => b.textContent), /Emulated MPS, not a real Mac/);
  assert.deepEqual(problems, []);
  await page.close();
});
