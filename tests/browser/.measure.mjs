import puppeteer from "puppeteer-core";
const file = process.argv[2];
const b = await puppeteer.launch({executablePath: "/usr/bin/chromium", headless: true, userDataDir: "/tmp/measure/prof" + Date.now(),
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"]});
for (let i = 0; i < 3; i++) {
  const p = await b.newPage();
  await p.setViewport({width: 1400, height: 1000});
  const errs = []; p.on("console", m => { if (m.type() === "error") errs.push(m.text()); }); p.on("pageerror", e => errs.push(e.message));
  const t0 = Date.now();
  await p.goto("file://" + file, {waitUntil: "load"});
  await p.waitForFunction(() => document.body.dataset.ready !== undefined);
  const load = Date.now() - t0;
  const r = await p.evaluate(() => {
    const nav = performance.getEntriesByType("navigation")[0];
    const cells = document.querySelectorAll("#matrix tbody td").length;
    const rows = document.querySelectorAll("#matrix tbody tr").length;
    const cb = [...document.querySelectorAll("#filter-v input")][0];
    let t = performance.now(); cb.click(); document.body.offsetHeight; const filter = performance.now() - t;
    cb.click();
    const s = document.getElementById("search"); s.value = "linalg";
    t = performance.now(); s.dispatchEvent(new Event("input")); document.body.offsetHeight; const search = performance.now() - t;
    s.value = ""; s.dispatchEvent(new Event("input"));
    t = performance.now(); document.querySelector('th[data-sort="worst"]').click(); document.body.offsetHeight; const sort = performance.now() - t;
    return {script_ms: +document.body.dataset.ready, loadEventEnd: Math.round(nav.loadEventEnd), rows, cells, filter: Math.round(filter), search: Math.round(search), sort: Math.round(sort)};
  });
  console.log(JSON.stringify({wall_ms: load, ...r, errs}));
  await p.close();
}
await b.close();
