// Measures an HTML report in headless Chromium (not a test: figures for docs/reports.md). For each of three fresh
// page loads: wall time until the matrix is ready, the page script's own time, and how long a verdict filter, a
// search and a sort by worst verdict take, including the layout they cause.
//   node tests/browser/measure_html.mjs out/results.html
import puppeteer from "puppeteer-core";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const file = process.argv[2];
if (!file) {
  console.error("usage: node tests/browser/measure_html.mjs RESULTS.html");
  process.exit(2);
}
const profile = mkdtempSync(join(tmpdir(), "mps-audit-measure-"));
const browser = await puppeteer.launch({
  executablePath: process.env.MPS_AUDIT_CHROMIUM || "/usr/bin/chromium", headless: true, userDataDir: profile,
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"],
});
try {
  for (let i = 0; i < 3; i++) {
    const page = await browser.newPage();
    await page.setViewport({ width: 1400, height: 1000 });
    const t0 = Date.now();
    await page.goto(pathToFileURL(resolve(file)).href, { waitUntil: "load" });
    await page.waitForFunction(() => document.body.dataset.ready !== undefined);
    const wall = Date.now() - t0;
    const m = await page.evaluate(() => {
      const time = (f) => { const t = performance.now(); f(); void document.body.offsetHeight; return Math.round(performance.now() - t); };
      const box = document.querySelector("#filter-v input");
      const search = document.getElementById("search");
      const out = {
        records: document.querySelectorAll("#matrix tbody td:not(.g):not(.s):not(.n):not(.w)").length,
        operators: document.querySelectorAll("#matrix tbody tr").length,
        script_ms: +document.body.dataset.ready,
        filter_ms: time(() => box.click()),
      };
      box.click();
      search.value = "linalg";
      out.search_ms = time(() => search.dispatchEvent(new Event("input")));
      search.value = "";
      search.dispatchEvent(new Event("input"));
      out.sort_ms = time(() => document.querySelector('th[data-sort="worst"]').click());
      return out;
    });
    console.log(JSON.stringify({ load_ms: wall, ...m }));
    await page.close();
  }
} finally {
  await browser.close();
  rmSync(profile, { recursive: true, force: true });
}
