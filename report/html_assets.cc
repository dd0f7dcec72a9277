// The style sheet and the script of results.html, as text: what the page looks like and how it behaves, apart from
// what it shows (report/html.cc).
#include "report/html_assets.h"

#include <fmt/format.h>

namespace mps_audit::detail {

std::string style_sheet() {
  std::string css = R"CSS(
:root{--fg:#1d2129;--muted:#5b6270;--line:#d5d8de;--bg:#fff;--head:#f4f5f7}
*{box-sizing:border-box}
body{margin:0;font:14px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
header,main{padding:0 20px}
h1{font-size:22px;margin:14px 0 6px}
h2{font-size:17px;margin:18px 0 8px}
h3{font-size:15px;margin:10px 0 6px}
.banner{margin:0;padding:12px 20px;font-size:16px;font-weight:600}
.banner.emu{background:#7a1fa2;color:#fff}
.banner.emu strong{font-size:19px;letter-spacing:.02em;text-transform:uppercase}
.banner.incomplete{background:#b3261e;color:#fff}
.overview{display:grid;grid-template-columns:repeat(auto-fit,minmax(520px,1fr));gap:0 28px;align-items:start}
.runs{display:flex;flex-wrap:wrap;gap:12px;margin-top:4px}
.run{flex:1 1 400px;border:1px solid var(--line);border-radius:6px;padding:8px 12px}
.run.emulated{border:3px solid #7a1fa2}
.tag{display:inline-block;border-radius:4px;padding:1px 6px;margin-left:6px;font-size:12px;font-weight:700;
  vertical-align:middle}
.tag.emu{background:#7a1fa2;color:#fff}.tag.real{background:#1b6e35;color:#fff}.tag.inc{background:#b3261e;color:#fff}
dl.env{display:grid;grid-template-columns:max-content 1fr;gap:0 12px;margin:4px 0}
dl.env dt{color:var(--muted)}dl.env dd{margin:0;overflow-wrap:anywhere}
.run ul{margin:4px 0;padding-left:18px;color:var(--muted);font-size:13px}
svg.chart{display:block;max-width:100%;height:auto;margin:4px 0 10px}
svg.chart text{font:13px system-ui,sans-serif;fill:var(--fg)}
svg.chart text.lab{text-anchor:end}svg.chart text.in{text-anchor:middle;font-size:12px}
svg.chart text.sm{font-size:12px;fill:var(--muted)}
.legend{display:flex;flex-wrap:wrap;gap:4px 14px;margin:4px 0 8px;padding:0;list-style:none;font-size:13px}
.legend li{display:flex;align-items:baseline;gap:5px;cursor:help}
.sw{display:inline-block;min-width:22px;text-align:center;border-radius:3px;padding:0 3px;font-weight:700}
.legend .m,.hint{color:var(--muted);font-size:12px}
.explorer{display:grid;grid-template-columns:270px minmax(0,1fr);gap:14px;align-items:start}
#filters{display:flex;flex-direction:column;gap:6px}
#filters fieldset{border:1px solid var(--line);border-radius:6px;margin:0;padding:2px 8px 5px}
#filters legend{color:var(--muted);font-size:12px;padding:0 4px}
#filters label{display:inline-flex;align-items:center;gap:3px;margin-right:6px;white-space:nowrap;font-size:13px}
#filters .n{color:var(--muted);font-size:11px}
#filters button{font-size:11px;margin-left:4px}
#search{font-size:14px;padding:3px 6px;width:100%}
#shown{margin:0 0 2px}.hint{margin:0 0 6px}
.wrap{overflow:auto;max-height:85vh;border:1px solid var(--line)}
#matrix{border-collapse:separate;border-spacing:0;font-size:13px}
#matrix th,#matrix td{border-bottom:1px solid #eceef1;padding:1px 6px;white-space:nowrap}
#matrix thead th{position:sticky;background:var(--head);z-index:2;border-bottom:1px solid var(--line)}
#matrix thead tr:first-child th{top:0}#matrix thead tr.dt th{top:var(--dt-top,24px);font-weight:500;font-size:12px}
#matrix thead th.sort{cursor:pointer;user-select:none}
#matrix thead th.sort:after{content:" \2195";color:#aab}
#matrix thead th[aria-sort=ascending]:after{content:" \25B2";color:var(--fg)}
#matrix thead th[aria-sort=descending]:after{content:" \25BC";color:var(--fg)}
#matrix th.run{border-left:2px solid #9aa0aa;max-width:420px;white-space:normal;font-size:12px}
#matrix tbody th{max-width:330px;overflow:hidden;text-overflow:ellipsis;text-align:left;font-weight:500;font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px}
#matrix tbody td{text-align:center;min-width:30px;cursor:pointer}
#matrix tbody td.t,#matrix tbody td.g,#matrix tbody td.s{text-align:left;color:var(--muted);cursor:default}
#matrix tbody td.n,#matrix tbody td.w{cursor:default}
#matrix td.w{border-left:2px solid #9aa0aa}
#matrix td.first,#matrix th.first{border-left:2px solid #9aa0aa}
#matrix td.sel{outline:3px solid #1d2129;outline-offset:-3px}
#matrix td.cond sup{color:#b3261e;font-weight:700}
#matrix tbody tr:hover th{background:#eef2ff}
#details{position:fixed;right:16px;bottom:16px;width:min(520px,calc(100vw - 32px));max-height:60vh;overflow:auto;
  background:#fff;border:1px solid #9aa0aa;border-radius:8px;box-shadow:0 6px 24px rgba(0,0,0,.2);padding:10px 14px;
  z-index:5}
#details h3{margin:0 24px 6px 0;font-family:ui-monospace,Menlo,Consolas,monospace;overflow-wrap:anywhere}
#details .close{position:absolute;right:8px;top:6px;border:0;background:none;font-size:20px;cursor:pointer}
#details dl{display:grid;grid-template-columns:max-content 1fr;gap:3px 12px;margin:0}
#details dt{color:var(--muted)}
#details dd{margin:0;white-space:pre-wrap;overflow-wrap:anywhere;font-family:ui-monospace,Menlo,Consolas,monospace;
  font-size:12px}
footer{color:var(--muted);padding:16px 20px;font-size:12px}
)CSS";
  // Per verdict: the cell and legend colours, the chart fill, and the rule that hides its cells when its filter
  // is off (a class on the table, so one toggle hides thousands of cells).
  for (const auto& s : kVerdictStyles) {
    const size_t v = verdict_index(s.verdict);
    css += fmt::format(
        ".v{0}{{background:{1};color:{2}}}.f{0}{{fill:{1}}}#matrix.h{0} td.v{0}:not(.w){{visibility:hidden}}\n", v,
        s.background, s.text);
  }
  return css;
}

const char* const kScript = R"JS(
"use strict";
(function () {
  const t0 = performance.now();
  const D = JSON.parse(document.getElementById("mps-audit-data").textContent);
  const S = D.strings, V = D.verdicts, ops = D.ops, recs = D.records, cols = D.columns;
  // Fixed columns: set (the operator's tier: Core ATen first), group, registry status and, with a release timeline
  // (MPS runs), when it got a native MPS kernel, as a range.
  const SINCE = D.timeline.length > 0, nc = cols.length, FIXED = SINCE ? 5 : 4;
  const table = document.getElementById("matrix"), tbody = table.tBodies[0];
  const ESC = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"};
  const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ESC[c]);

  // The record of each (operator, column), -1 where there is none.
  const cell = new Int32Array(ops.length * nc).fill(-1);
  for (let r = 0; r < recs.length; r++) cell[recs[r][0] * nc + recs[r][1]] = r;
  const statusText = (o) => {
    const seen = [];
    for (const s of o[3]) if (s >= 0 && !seen.includes(s)) seen.push(s);
    return seen.map((s) => D.statuses[s] || "\u2014").join(" / ");
  };

  // The header: operator, set, group, status, then one column group per run with its dtypes.
  const runCols = D.runs.map(() => []);
  cols.forEach((c, i) => runCols[c[0]].push(i));
  let head = '<tr><th class="sort" data-sort="name" rowspan="2" scope="col">operator</th>' +
      '<th class="sort" data-sort="tier" rowspan="2" scope="col" title="core: the Core ATen opset; then other ' +
      'public operators, internal ones (a name starting with _) and those only for PyTorch\'s tests">set</th>' +
      '<th class="sort" data-sort="group" rowspan="2" scope="col">group</th>' +
      '<th class="sort" data-sort="status" rowspan="2" scope="col">registry status</th>' +
      (SINCE ? '<th class="sort" data-sort="since" rowspan="2" scope="col" title="when it got a native MPS kernel, ' +
               'as far as the releases ' + esc(D.timeline.join(", ")) + ' tell">native since</th>' : "");
  D.runs.forEach((name, r) => {
    if (runCols[r].length) {
      head += '<th class="run" data-run="' + r + '" colspan="' + runCols[r].length + '" scope="colgroup">' +
          esc(name) + "</th>";
    }
  });
  head += '<th class="sort" data-sort="worst" rowspan="2" scope="col">worst</th></tr><tr class="dt">';
  cols.forEach((c, i) => {
    head += "<th" + (runCols[c[0]][0] === i ? ' class="first"' : "") + ' scope="col">' + esc(c[1]) + "</th>";
  });
  table.tHead.innerHTML = head + "</tr>";
  // The dtype row sticks below the run row, whatever height the run names wrap to.
  const runTh = table.tHead.querySelector("th.run");
  if (runTh) table.style.setProperty("--dt-top", runTh.offsetHeight + "px");

  // The body: one string, one innerHTML.
  const sym = V.map((v) => esc(v.symbol));
  const firstCol = new Uint8Array(nc);
  runCols.forEach((cs) => { if (cs.length) firstCol[cs[0]] = 1; });
  const parts = new Array(ops.length);
  for (let i = 0; i < ops.length; i++) {
    const o = ops[i];
    const name = esc(o[0]);
    let row = '<tr data-o="' + i + '"><th scope="row" title="' + name + '">' + name + '</th><td class="t">' +
        esc(D.tiers[o[4]]) + '</td><td class="g">' + esc(D.groups[o[1]]) +
        '</td><td class="s">' + esc(statusText(o)) + "</td>" +
        (SINCE ? '<td class="ns">' + esc(S[o[5]]) + "</td>" : "");
    for (let c = 0; c < nc; c++) {
      const r = cell[i * nc + c], f = firstCol[c] ? " first" : "";
      // A record that fails under a condition only (Note [Conditional failures in reports]) is marked beside it.
      const cond = r >= 0 && recs[r].length > 17 && recs[r][17] ? ' cond" title="fails under a condition' : "";
      row += r < 0 ? '<td class="n' + f + '"></td>'
                   : '<td class="v' + recs[r][2] + f + cond + '">' + sym[recs[r][2]] + (cond ? "<sup>c</sup>" : "") + "</td>";
    }
    parts[i] = row + '<td class="w v' + o[2] + '" title="' + esc(V[o[2]].name) + '">' + sym[o[2]] + "</td></tr>";
  }
  tbody.innerHTML = parts.join("");
  const rows = Array.from(tbody.rows);
  const lower = ops.map((o) => o[0].toLowerCase());

  // --- filters -------------------------------------------------------------------------------------------------
  const vOn = V.map(() => true), gOn = D.groups.map(() => true), sOn = D.statuses.map(() => true);
  const tOn = D.tiers.map(() => true);
  const dtypes = [...new Set(cols.map((c) => c[1]))], dOn = new Map(dtypes.map((d) => [d, true]));
  let query = "";
  const colOn = () => cols.map((c) => dOn.get(c[1]));
  const shown = document.getElementById("shown");
  const colStyle = document.getElementById("column-filter");

  function visible(i, con) {
    const o = ops[i];
    if (!gOn[o[1]] || !tOn[o[4]]) return false;
    if (!o[3].some((s) => s >= 0 && sOn[s])) return false;
    if (query && !lower[i].includes(query)) return false;
    for (let c = 0; c < nc; c++) {
      const r = cell[i * nc + c];
      if (r >= 0 && con[c] && vOn[recs[r][2]]) return true;
    }
    return false;
  }
  function apply() {
    const con = colOn();
    let nOps = 0, nCells = 0;
    for (let i = 0; i < ops.length; i++) {
      const v = visible(i, con);
      if (rows[i].hidden === v) rows[i].hidden = !v;
      if (!v) continue;
      nOps++;
      for (let c = 0; c < nc; c++) {
        const r = cell[i * nc + c];
        if (r >= 0 && con[c] && vOn[recs[r][2]]) nCells++;
      }
    }
    V.forEach((_, v) => table.classList.toggle("h" + v, !vOn[v]));
    // Hidden dtypes: their columns go, and each run's header spans what is left.
    let css = "";
    con.forEach((on, c) => {
      if (!on) css += "#matrix tbody td:nth-child(" + (FIXED + c + 1) + "),#matrix tr.dt th:nth-child(" + (c + 1) + "){display:none}";
    });
    colStyle.textContent = css;
    table.tHead.querySelectorAll("th.run").forEach((th) => {
      const n = runCols[+th.dataset.run].filter((c) => con[c]).length;
      th.hidden = n === 0;
      if (n) th.colSpan = n;
    });
    shown.textContent = nOps.toLocaleString("en-US") + " of " + ops.length.toLocaleString("en-US") +
        " operators shown, " + nCells.toLocaleString("en-US") + " of " + recs.length.toLocaleString("en-US") + " records";
  }
  const filters = document.getElementById("filters");
  filters.addEventListener("change", (e) => {
    const t = e.target;
    if (t.type !== "checkbox") return;
    const k = t.dataset.f, on = t.checked;
    if (k === "v") vOn[+t.value] = on;
    else if (k === "g") gOn[+t.value] = on;
    else if (k === "t") tOn[+t.value] = on;
    else if (k === "s") sOn[+t.value] = on;
    else if (k === "d") dOn.set(t.value, on);
    apply();
  });
  filters.addEventListener("click", (e) => {
    const b = e.target.closest("button[data-all]");
    if (!b) return;
    const on = b.dataset.all === "1";
    b.closest("fieldset").querySelectorAll("input[type=checkbox]").forEach((x) => {
      if (x.checked !== on) { x.checked = on; x.dispatchEvent(new Event("change", {bubbles: true})); }
    });
  });
  const search = document.getElementById("search");
  search.addEventListener("input", () => { query = search.value.trim().toLowerCase(); apply(); });

  // --- sorting -------------------------------------------------------------------------------------------------
  const byName = (a, b) => (ops[a][0] < ops[b][0] ? -1 : ops[a][0] > ops[b][0] ? 1 : 0);
  const statusKey = (i) => { const s = ops[i][3].filter((x) => x >= 0); return s.length ? Math.min(...s) : 1e9; };
  const keys = {
    name: null,
    tier: (i) => ops[i][4],
    group: (i) => ops[i][1],
    status: statusKey,
    since: (i) => ops[i][6],
    worst: (i) => -V[ops[i][2]].severity,
  };
  table.tHead.addEventListener("click", (e) => {
    const th = e.target.closest("th[data-sort]");
    if (!th) return;
    const dir = th.getAttribute("aria-sort") === "ascending" ? -1 : 1;
    table.tHead.querySelectorAll("th[aria-sort]").forEach((x) => x.removeAttribute("aria-sort"));
    th.setAttribute("aria-sort", dir === 1 ? "ascending" : "descending");
    const key = keys[th.dataset.sort];
    const order = ops.map((_, i) => i);
    order.sort((a, b) => dir * ((key ? key(a) - key(b) : 0) || byName(a, b)));
    const frag = document.createDocumentFragment();
    for (const i of order) frag.appendChild(rows[i]);
    tbody.appendChild(frag);
  });

  // --- details -------------------------------------------------------------------------------------------------
  const details = document.getElementById("details");
  const dl = details.querySelector("dl"), title = details.querySelector("h3");
  let selected = null;
  function add(name, value, id) {
    if (value === undefined || value === null || value === "" || (Array.isArray(value) && !value.length)) return;
    const dt = document.createElement("dt"), dd = document.createElement("dd");
    dt.textContent = name;
    dd.textContent = Array.isArray(value) ? value.join("\n") : String(value);
    if (id) dd.id = id;
    dl.append(dt, dd);
  }
  function show(r, td) {
    const t = recs[r], v = V[t[2]], col = cols[t[1]], o = ops[t[0]];
    const num = (k) => (t.length > k ? t[k] : 0), str = (k) => S[num(k)];
    const list = (k) => (t.length > k ? t[k].map((x) => S[x]) : []);
    title.textContent = o[0] + " \u00b7 " + col[1];
    dl.replaceChildren();
    add("verdict", v.symbol + " " + v.name, "d-verdict");
    if (D.runs.length > 1) add("run", D.runs[col[0]]);
    add("message", str(3), "d-message");
    add("skip reason", str(9));
    add("fallback ops", list(7), "d-fallback");
    add("warnings", list(8), "d-warnings");
    if (num(10) || num(11) || num(12)) {
      add("max abs error", num(10));
      add("max rel error", num(11));
      add("mismatches", num(12));
      add("first mismatch", str(13));
    }
    add("rests on", str(14) || D.bases[col[0]]);
    add("observed", str(15), "d-observed");
    add("PyTorch's expectation", str(16), "d-expectation");
    add("fails under a condition", str(17), "d-conditional");
    add("registry status", D.statuses[o[3][col[0]]]);
    add("set", D.tiers[o[4]]);
    add("group", D.groups[o[1]]);
    add("sample", str(4));
    add("samples", num(5));
    add("seconds", num(6));
    if (selected) selected.classList.remove("sel");
    selected = td;
    td.classList.add("sel");
    details.hidden = false;
  }
  tbody.addEventListener("click", (e) => {
    const td = e.target.closest("td");
    if (!td || td.cellIndex < FIXED || td.cellIndex >= FIXED + nc) return;
    const i = +td.parentElement.dataset.o, r = cell[i * nc + td.cellIndex - FIXED];
    if (r >= 0) show(r, td);
  });
  details.querySelector(".close").addEventListener("click", () => {
    details.hidden = true;
    if (selected) selected.classList.remove("sel");
    selected = null;
  });
  document.addEventListener("keydown", (e) => { if (e.key === "Escape") details.querySelector(".close").click(); });

  apply();
  document.body.dataset.ready = (performance.now() - t0).toFixed(0);
})();
)JS";

}  // namespace mps_audit::detail
