"""What `pytest --mps-audit` (mps_audit.py, the pytest plugin) does beside pytest: the recording of a whole suite, its
journal, the replay of its distinct calls with the mps-audit binary, and the verdicts per test. See docs/pytest.md.

Nothing here imports pytest, and nothing imports torch until a recording starts, so that the watcher (the end of this
file: `python3 mps_audit_suite.py --watch PID FOLDER`) starts at once and the plugin loads in a Python without torch.

Note [A suite's recording survives its process]
A test may end the process that records it (a segfault, os._exit, a kill from outside after a hang), and with it the
calls recorded in memory. So each test's calls go, at its end, to a journal in the report folder (its new distinct
calls whole, and what the test added to the others), and a watcher, a process of its own session started with the
suite, waits for the test process to end. When it ends without writing "done" in the journal, the watcher rebuilds
the recording from the journal (the calls of every finished test; those of the test that was running since its
last phase began are lost), saves it marked incomplete with the test that was running, replays it and writes the
report: which test ended the process, and the verdicts of the tests before it.
"""
import json
import os
import pickle
import subprocess
import sys
import time

FORMAT = "mps-audit-pytest/1"
HERE = os.path.dirname(os.path.abspath(__file__))
TARGETS = ("mps-emu", "mps", "auto", "cuda", "cpu")
STRICT = ("fail", "xfail", "report")
JOURNAL = ".mps-audit-journal"
# Files of an earlier run in the folder that a run writes again: removed first, so that none is left from it.
OUTPUTS = ("calls.pt", "model.json", "model.md", "model.html", "pytest.json", JOURNAL)


def data_home():
    """The folder with data/ and opspec.yaml: $MPS_AUDIT_DATA, else the one above this file (the install's
    share/mps-audit, or the source tree). None when neither has data/."""
    for home in (os.environ.get("MPS_AUDIT_DATA"), os.path.dirname(HERE)):
        if home and os.path.isdir(os.path.join(home, "data")):
            return home
    return None


def shipped_releases():
    """The releases whose data the binary beside this file has, oldest first."""
    home = data_home()
    if home is None:
        return []
    names = [d[len("pytorch-"):] for d in os.listdir(os.path.join(home, "data")) if d.startswith("pytorch-")]
    return sorted(names, key=lambda v: tuple(int(p) if p.isdigit() else 0 for p in v.split(".")))


def find_binary(given=None):
    """The mps-audit binary: `given` (--mps-audit-binary, $MPS_AUDIT_BINARY), else the install's (<prefix>/bin beside
    <prefix>/share/mps-audit/python), else the one on PATH, else the source tree's build/. (path, places looked)."""
    import shutil
    if given:
        return (given if os.path.isfile(given) and os.access(given, os.X_OK) else None), [given]
    prefix = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
    candidates = [os.path.join(prefix, "bin", "mps-audit"), shutil.which("mps-audit"),
                  os.path.join(os.path.dirname(HERE), "build", "mps-audit")]
    for c in candidates:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c, candidates
    return None, [c for c in candidates if c] + ["PATH"]


def remove_outputs(folder):
    for name in OUTPUTS:
        try:
            os.remove(os.path.join(folder, name))
        except OSError:
            pass


# --- the journal (Note [A suite's recording survives its process]) ------------------------------------------------

class Journal:
    """Appends records to the journal; each is flushed to the operating system at once, so that it outlives the
    process."""

    def __init__(self, path):
        self.path = path
        self.file = open(path, "wb")

    def write(self, *record):
        pickle.dump(record, self.file, protocol=4)
        self.file.flush()

    def close(self):
        self.file.close()


def flush_test(journal, rec, nodeid, outcome):
    """One test's calls into the journal: the distinct calls first seen in it, whole (with torch.save, all of them in
    one go: a tensor pickled alone costs a torch.save of its own), and for every call it made, the call's totals and
    this test's share. The native recorder gives these itself (recorder.h mpsa_delta)."""
    if rec.native:
        journal.write("native", nodeid, outcome, rec.delta(nodeid))
        return
    import io
    import torch
    new = b""
    if rec.new:
        buf = io.BytesIO()
        torch.save([(pos, {k: v for k, v in rec.calls[pos].items() if k != "tests"}) for pos in rec.new], buf)
        new = buf.getvalue()
    updates = []
    for pos in rec.touched:
        e = rec.calls[pos]
        updates.append((pos, e["count"], e["seconds"], e["out_bytes"], dict(e["phases"]),
                        {s: dict(p) for s, p in e["sites"].items()}, e.get("tests", {}).get(nodeid, {})))
    sources = {s: rec.sources[s] for s in rec.sources if s not in rec.flushed_sources}
    rec.flushed_sources.update(sources)
    journal.write("test", nodeid, outcome, new, updates, sources, rec.total, dict(rec.dropped))
    rec.new.clear()
    rec.touched.clear()


def _load_calls(blob):
    """What a journal's record holds in torch.save's form (flush_test)."""
    if not blob:
        return []
    import io
    import mps_audit_record
    return mps_audit_record.load(io.BytesIO(blob))


def read_journal(path):
    """The recording as far as the journal has it: a dict of session, calls, sources, total, dropped, outcomes
    (nodeid -> outcome), running (nodeid, phase) of the test that had begun a phase and not finished, and done."""
    out = {"session": {}, "calls": {}, "sources": {}, "total": 0, "dropped": {}, "outcomes": {}, "running": None,
           "done": False, "stopped": None}
    with open(path, "rb") as f:
        while True:
            try:
                record = pickle.load(f)
            except EOFError:
                break
            except Exception:  # a record cut short by the end of the process
                break
            kind = record[0]
            if kind == "session":
                out["session"] = record[1]
            elif kind == "phase":
                out["running"] = (record[1], record[2])
            elif kind == "allow":
                out["session"]["allow"] = record[1]
            elif kind == "stopped":
                out["stopped"] = (record[1], record[2])
            elif kind == "done":
                out["done"] = True
            elif kind in ("test", "native"):
                if kind == "native":  # the native recorder's delta: one torch.load-able dict
                    _, nodeid, outcome, blob = record
                    delta = _load_calls(blob)
                    new, updates, sources = delta["new"], delta["updates"], delta["sources"]
                    total, dropped = delta["total"], delta["dropped"]
                else:
                    _, nodeid, outcome, new, updates, sources, total, dropped = record
                    new = _load_calls(new)
                for pos, entry in new:
                    out["calls"][pos] = entry
                for pos, count, seconds, out_bytes, phases, sites, mine in updates:
                    e = out["calls"][pos]
                    e.update(count=count, seconds=seconds, out_bytes=out_bytes, phases=phases, sites=sites)
                    if mine:
                        e.setdefault("tests", {})[nodeid] = mine
                out["sources"].update(sources)
                out["total"], out["dropped"] = total, dropped
                out["outcomes"][nodeid] = outcome
                if out["running"] and out["running"][0] == nodeid:
                    out["running"] = None
    out["calls"] = [out["calls"][i] for i in sorted(out["calls"])]
    return out


# --- the replay -------------------------------------------------------------------------------------------------

def replay(binary, calls_path, folder, options):
    """`mps-audit model --calls` over the suite's calls into `folder`: (model.json as a dict, None) or (None, why)."""
    cmd = [binary, "model", "--calls", calls_path, "--target", options["target"], "--out", folder,
           "--format", "json,md,html"]
    if options.get("release"):
        cmd += ["--emu-release", options["release"]]
    if options.get("macos") is not None:
        cmd += ["--emu-macos", str(options["macos"])]
    if options.get("chip") is not None:
        cmd += ["--emu-chip", options["chip"]]
    try:
        done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    except OSError as e:
        return None, "cannot run {}: {}".format(binary, e)
    if done.returncode != 0:
        lines = [l for l in done.stderr.splitlines() if l.startswith("error:")] or done.stderr.strip().splitlines()
        return None, "{} exited with {}: {}".format(os.path.basename(binary), done.returncode,
                                                    lines[-1] if lines else "no message")
    try:
        with open(os.path.join(folder, "model.json")) as f:
            return json.load(f), None
    except (OSError, ValueError) as e:
        return None, "the replay wrote no readable model.json: {}".format(e)


def where_it_ran(doc):
    env = doc.get("environment", {})
    if env.get("emulated") and env.get("emulator"):
        return env["emulator"]
    return "{} ({})".format(env.get("target", "?"), env.get("device", "?"))


def first_line(text, limit=200):
    """The first line of `text`, cut at a word to at most `limit` characters."""
    line = (text or "").strip().splitlines()[0] if (text or "").strip() else ""
    if len(line) <= limit:
        return line
    cut = line[:limit - 3]
    return (cut.rsplit(" ", 1)[0] if " " in cut else cut).rstrip(" ,;:(") + "..."


# Note [One set of rules]
# What flags a test is what `mps-audit run` calls a failure, decided once, by the replay (model.json): a call whose
# status is not native (it falls back, is refused, gives wrong results, raises, crashes, hangs), or that the replay
# expects to fail on a real Mac (`expected_failure`: PyTorch's own MPS lists decide its record, Note [Expected
# verdicts], or the call's own arguments meet a known bug, Note [Known bugs a call meets]). What decides nothing there
# (a flaky entry, a dtype an allow list is silent on, a known bug the call may meet, a call the replay could not
# judge) is a note: listed in pytest.json and with -v, never a flag.
NOT_NATIVE = {"fallback", "refused", "wrong", "known_failure", "error", "crash", "timeout"}
# The dtypes MPS does not have at all: one cause, whatever the operators (Note [Causes first]).
MISSING_DTYPES = ("float64", "complex128")


def expectation_text(e):
    scope = "" if e.get("scope") in (None, "", "forward") else " of its " + e["scope"]
    return "PyTorch {}'s {} expects {}{} on a real Mac".format(e.get("release", "?"), e.get("list", "?"),
                                                               e.get("kind", "?"), scope)


def met_bugs(call):
    return [b for b in call.get("known_bugs") or [] if b.get("applies")]


def bug_text(b, how="meets"):
    fixed = "not known fixed" if b.get("fixed_in", "unknown") == "unknown" else "fixed in " + b["fixed_in"]
    return "{} known MPS bug {} ({}, when {}: {}; {}): {} {}".format(
        how, b.get("id"), b.get("kind"), b.get("when"), b.get("met_by"), fixed, b.get("summary", ""),
        b.get("source", ""))


def call_finding(call):
    """The status of a replayed call that would not run natively on a Mac (Note [One set of rules]), or None."""
    status = call.get("status", "not_probed")
    if status in NOT_NATIVE:
        return status
    if status == "native" and call.get("expected_failure"):
        return "expected_failure"
    return None


def call_notes(call):
    """What the replay says of a call that decides nothing (Note [One set of rules])."""
    notes = []
    e = call.get("expectation")
    if e and not e.get("decided"):
        notes.append("{} (a note: it decides nothing)".format(expectation_text(e)))
    for b in call.get("known_bugs") or []:
        if b.get("maybe"):
            notes.append(bug_text(b, "may meet"))
    if call.get("status") == "not_judged":  # the replay's own limit, never the operator's error
        why = first_line(call.get("message", ""))
        notes.append(why if why.startswith("not judged: ") else "not judged: " + why)
    return notes


def why_text(status, call):
    message = first_line(call.get("message", ""))
    if status == "fallback":
        ops = call.get("fallback_ops") or []
        return "falls back to the CPU ({} ran there)".format(", ".join(ops)) if ops else "falls back to the CPU"
    if status == "expected_failure":
        e = call.get("expectation")
        if e and e.get("decided"):
            return expectation_text(e)
        bugs = met_bugs(call)
        return bug_text(bugs[0]) if bugs else "expected to fail on a real Mac"
    words = {"refused": "refused", "wrong": "gives wrong results", "known_failure": "fails, as expected",
             "error": "fails", "crash": "crashes the process", "timeout": "does not finish"}
    return words.get(status, status) + (": " + message if message else "")


def also_expected(status, call):
    """What else the replay expects of a call that fails here, where its message does not say so already."""
    if status == "expected_failure":
        return ""
    parts = []
    e = call.get("expectation")
    if e and e.get("decided") and e.get("list", "?") not in call.get("message", ""):
        parts.append(expectation_text(e))
    parts += [bug_text(b) for b in met_bugs(call)]
    return "; ".join(parts)


def allowed(allow, op, recorded_as):
    """The test's @pytest.mark.mps_audit(allow=[...]) accepts the call: an entry names its operator, or its overload."""
    names = {op, op.split(".")[0]}
    if recorded_as:
        names |= {recorded_as, recorded_as.split(".")[0]}
    return sorted(a for a in allow if a in names)


def missing_dtype(f):
    """The dtype MPS lacks that a finding is about (Note [Causes first]), or None."""
    return f["dtype"] if f["status"] in ("refused", "expected_failure") and f["dtype"] in MISSING_DTYPES else None


def verdicts(doc, recorded, allow, outcomes, stopped_at=None):
    """Per test and per operator, what the replay (`doc`, model.json) says of the suite's calls. `recorded`: the
    recording's calls (with "tests"), for a suite that was not replayed; `allow`: nodeid -> the operators its marker
    accepts; `outcomes`: nodeid -> pytest's outcome, in the order the tests ran; `stopped_at`: the test after which
    nothing was recorded. A test's findings of one site, operator, dtype and status are one, with their calls counted
    (a call made with several shapes is several distinct calls, one line)."""
    calls = doc.get("calls", []) if doc else recorded
    sources = {s["site"]: s.get("code", "") for s in doc.get("sites", [])} if doc else {}
    tests = {n: {"nodeid": n, "outcome": o, "calls": 0, "findings": {}, "notes": [], "allowed_ops": set()}
             for n, o in outcomes.items()}
    operators = {}
    for call in calls:
        status = call_finding(call) if doc else None
        notes = call_notes(call) if doc else []
        op = call.get("op", "?")
        dtype = call.get("dtype", "?")
        for nodeid, phases in call.get("tests", {}).items():
            t = tests.setdefault(nodeid, {"nodeid": nodeid, "outcome": "unknown", "calls": 0, "findings": {},
                                          "notes": [], "allowed_ops": set()})
            made = sum(n for sites in phases.values() for n in sites.values())
            t["calls"] += made
            for note in notes:
                line = "{} ({}): {}".format(op, dtype, note)
                if line not in t["notes"]:
                    t["notes"].append(line)
            if status is None:
                continue
            ok = allowed(allow.get(nodeid, ()), op, call.get("recorded_as"))
            t["allowed_ops"].update(ok)
            for when, sites in phases.items():
                for site, n in sites.items():
                    f = t["findings"].setdefault((site, op, dtype, status), {
                        "when": when, "site": site, "code": sources.get(site, ""), "op": op, "dtype": dtype,
                        "calls": 0, "status": status, "why": why_text(status, call),
                        "expected": also_expected(status, call), "allowed": bool(ok)})
                    f["calls"] += n
                    if when not in f["when"].split(", "):
                        f["when"] += ", " + when
            o = operators.setdefault((op, dtype, status), {"op": op, "dtype": dtype, "status": status,
                                                           "why": why_text(status, call), "calls": 0, "tests": set(),
                                                           "allowed_in": set()})
            o["calls"] += made
            o["tests"].add(nodeid)
            if ok:
                o["allowed_in"].add(nodeid)
    order = {"setup": 0, "call": 1, "teardown": 2}
    after_stop = False
    for t in tests.values():
        t["findings"] = sorted(t["findings"].values(),
                               key=lambda f: (order.get(f["when"].split(", ")[0], 3), f["site"], f["op"]))
        t["unused_allow"] = sorted(set(allow.get(t["nodeid"], ())) - t.pop("allowed_ops"))
        t["audit"] = "not_recorded" if after_stop else test_audit(t, doc is not None)
        if t["nodeid"] == stopped_at:
            t["stopped_recording"] = True
            after_stop = True
    ops = sorted(operators.values(), key=lambda o: (-len(o["tests"]), -o["calls"], o["op"]))
    for o in ops:
        o["tests"], o["allowed_in"] = len(o["tests"]), len(o["allowed_in"])
    return list(tests.values()), ops


def test_audit(t, replayed):
    """A test's result in the audit: flagged (a call that would not run natively, not allowed), allowed (only allowed
    ones), native, no_calls, or unknown (no replay)."""
    if t["outcome"] in ("skipped", "deselected") and not t["calls"]:
        return "not_run"
    if not t["calls"]:
        return "no_calls"
    if not replayed:
        return "unknown"
    if any(not f["allowed"] for f in t["findings"]):
        return "flagged"
    return "allowed" if t["findings"] else "native"


def test_outcome(reports):
    """pytest's outcome of a test from its reports (when -> report)."""
    setup, call, teardown = (reports.get(w) for w in ("setup", "call", "teardown"))
    if setup is not None and setup.failed:
        return "error"
    if setup is not None and setup.skipped:
        return "skipped"
    outcome = "unknown"
    if call is not None:
        xfail = hasattr(call, "wasxfail")
        outcome = ("xfailed" if call.skipped and xfail else "xpassed" if call.passed and xfail else call.outcome)
    if teardown is not None and teardown.failed:
        return "error"
    return outcome


def finding_line(f):
    """"test_ops.py:30 aten::mode (float32, call): falls back to the CPU (aten::mode ran there)", and "x3" where the
    site made the call three times."""
    return "{} {} ({}, {}): {}{}{}{}".format(f["site"], f["op"], f["dtype"], f["when"], first_line(f["why"], 160),
                                            " x{}".format(f["calls"]) if f["calls"] > 1 else "",
                                            "; " + f["expected"] if f["expected"] else "",
                                            " (allowed by the test's mps_audit marker)" if f["allowed"] else "")


def counts(tests):
    out = {}
    for t in tests:
        out[t["audit"]] = out.get(t["audit"], 0) + 1
    return out


def write_json(path, doc):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(tmp, path)


def recorded_calls(rec):
    """The recording's calls (with their tests), for a suite that was not replayed: the Python recorder's, or the
    native one's calls file."""
    if not rec.native:
        return rec.calls
    try:
        import mps_audit_record
        return mps_audit_record.load(rec.path).get("calls", [])
    except Exception:  # no file (nothing recorded), or one cut short
        return []


def report_document(state):
    """pytest.json: the run's audit per test and per operator."""
    return {"format": FORMAT, "where": state["where"], "options": state["options"], "complete": state["complete"],
            "incomplete": state["incomplete"], "replay_error": state["replay_error"], "strict": state["strict"],
            "calls": state["total"], "distinct_calls": state["distinct"], "record_seconds": state["record_seconds"],
            "replay_seconds": state["replay_seconds"], "report_seconds": state.get("report_seconds", 0.0),
            "counts": counts(state["tests"]), "tests": state["tests"], "recorder": state.get("recorder", "python"),
            "causes": missing_dtype_lines(state),
            "operators": state["operators"], "ended_in": state.get("ended_in"),
            "journal_error": state.get("journal_error", "")}


# Note [Causes first]
# A suite in float64 (torch.set_default_dtype(torch.float64), a numeric library's habit) has nearly every test flagged
# by dozens of refused float64 calls, and the one fact that matters is hidden among them: MPS has no float64 (nor
# complex128). So the report leads with causes: that one line, with the tests it holds back and what to do (run the
# suite in float32 to see the rest); then, by operator, the fallbacks and failures of the other dtypes. A test lists
# its float64 findings as one line too.
def missing_dtype_lines(state):
    lines = []
    for dtype in MISSING_DTYPES:
        tests = [t for t in state["tests"] if any(missing_dtype(f) == dtype for f in t["findings"])]
        if not tests:
            continue
        calls = sum(f["calls"] for t in tests for f in t["findings"] if missing_dtype(f) == dtype)
        lines.append("MPS has no {}: {} test{} call{} it ({} call{}); run the suite in {} to see the rest "
                     "(torch.set_default_dtype(torch.{}))".format(
                         dtype, len(tests), "s" if len(tests) != 1 else "", "" if len(tests) != 1 else "s", calls,
                         "s" if calls != 1 else "", "float32" if dtype == "float64" else "complex64",
                         "float32" if dtype == "float64" else "complex64"))
    return lines


def summary_lines(state, folder, verbose=False):
    """The terminal's report: the causes first (Note [Causes first]), per test its calls that would not run natively
    (each with its line), then per operator, then one line of totals. [(text, markup)] for pytest's terminal writer."""
    lines = [(line, {"bold": True, "red": True}) for line in missing_dtype_lines(state)]
    limit = None if verbose else 8
    for t in state["tests"]:
        shown = [f for f in t["findings"] if (verbose or not f["allowed"]) and not missing_dtype(f)]
        lacking = {}
        for f in t["findings"]:
            if missing_dtype(f):
                lacking[f["dtype"]] = lacking.get(f["dtype"], 0) + f["calls"]
        notes = t["notes"] if verbose else []
        if not shown and not lacking and not t["unused_allow"] and not notes:
            continue
        lines.append(("{} [{}]".format(t["nodeid"], t["audit"]), {"bold": True}))
        for dtype, n in sorted(lacking.items()):
            lines.append(("    {} call{} in {}, which MPS does not have".format(n, "s" if n != 1 else "", dtype),
                          {"red": True}))
        for f in shown[:limit]:
            lines.append(("    " + finding_line(f), {"yellow" if f["allowed"] else "red": True}))
        if limit is not None and len(shown) > limit:
            lines.append(("    and {} more (pytest.json)".format(len(shown) - limit), {}))
        for note in notes:  # Note [One set of rules]: -v, and pytest.json
            lines.append(("    note: " + note, {}))
        for a in t["unused_allow"]:
            lines.append(("    its marker allows {}, which it does not need here".format(a), {}))
    by_operator = [o for o in state["operators"]
                   if not (o["dtype"] in MISSING_DTYPES and o["status"] in ("refused", "expected_failure"))]
    if by_operator:
        lines.append(("by operator:", {"bold": True}))
        for o in by_operator:
            lines.append(("    {} ({}): {}: {} call{} in {} test{}{}".format(
                o["op"], o["dtype"], first_line(o["why"], 120), o["calls"], "s" if o["calls"] != 1 else "", o["tests"],
                "s" if o["tests"] != 1 else "", ", allowed in {}".format(o["allowed_in"]) if o["allowed_in"] else ""),
                {}))
    lines.append((totals_line(state, folder), {"bold": True}))
    return lines


def totals_line(state, folder):
    c = counts(state["tests"])
    parts = ["{} run natively".format(c.get("native", 0))]
    for key, words in (("allowed", "only allowed ones"), ("no_calls", "made no ATen calls"),
                       ("not_run", "did not run"), ("unknown", "not replayed"), ("ended_process", "ended the process"),
                       ("not_recorded", "not recorded")):
        if c.get(key):
            parts.append("{} {}".format(c[key], words))
    head = "mps-audit: {} of {} tests would not run natively on {}".format(
        c.get("flagged", 0), len(state["tests"]), state["where"])
    replayed = "{} calls ({} distinct) recorded, replayed in {:.1f} s".format(
        state["total"], state["distinct"], state["replay_seconds"]) if state["replay_seconds"] else \
        "{} calls ({} distinct) recorded".format(state["total"], state["distinct"])
    return "{}: {}; {}; reports in {}".format(head, ", ".join(parts), replayed, folder)


# --- the watcher (Note [A suite's recording survives its process]) ------------------------------------------------

def watch(pid, folder):
    """Waits for the test process `pid` (this process's parent) to end; when it ended without finishing its report,
    writes the report of what the journal holds. Its output goes where the test process's went."""
    import signal
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while os.getppid() == pid:
        time.sleep(0.1)
    journal = os.path.join(folder, JOURNAL)
    if not os.path.exists(journal):
        return 0
    try:
        state = read_journal(journal)
        if state["done"]:
            return 0
        return take_over(state, folder)
    except Exception as e:  # one line, as everywhere
        sys.stderr.write("mps-audit: the test process ended before the session finished, and its report could not be "
                         "written ({}: {}); the journal is {}\n".format(type(e).__name__, e, journal))
        return 1


def take_over(journal, folder):
    session = journal["session"]
    sys.path.insert(0, HERE)
    import mps_audit_record as rec  # noqa: E402  (imports torch)
    running = journal["running"]
    ended = "{} ({})".format(*running) if running else "between tests"
    recording = rec.Recording(os.path.join(folder, "calls.pt"), session.get("max_numel", rec.DEFAULT_MAX_NUMEL),
                              session.get("program"), session.get("base"))
    recording.calls, recording.sources = journal["calls"], journal["sources"]
    recording.total, recording.dropped = journal["total"], journal["dropped"]
    error = "the test process ended during {}".format(ended)
    recording.save(error)
    out = sys.stderr
    out.write("\nmps-audit: {}, before the session finished: the recording is incomplete (the calls of the tests that "
              "finished before it are kept)\n".format(error))
    outcomes = dict(journal["outcomes"])
    if running:
        outcomes[running[0]] = "ended the process"
    options = session.get("options", {})
    state = {"where": options.get("target", "?"), "options": options, "complete": False, "incomplete": error,
             "replay_error": "", "strict": session.get("strict", "report"), "total": recording.total,
             "distinct": len(recording.calls), "record_seconds": 0.0, "replay_seconds": 0.0,
             "ended_in": {"test": running[0], "phase": running[1]} if running else None}
    doc = None
    if recording.calls and session.get("binary"):
        start = time.perf_counter()
        doc, state["replay_error"] = replay(session["binary"], recording.path, folder, options)
        state["replay_seconds"] = time.perf_counter() - start
        if doc:
            state["where"] = where_it_ran(doc)
    state["tests"], state["operators"] = verdicts(doc, recording.calls, session.get("allow", {}), outcomes,
                                                  stopped_at=(journal["stopped"] or (None,))[0])
    if running:
        for t in state["tests"]:
            if t["nodeid"] == running[0]:
                t["audit"] = "ended_process"
    write_json(os.path.join(folder, "pytest.json"), report_document(state))
    if state["replay_error"]:
        out.write("mps-audit: the replay failed: {}\n".format(state["replay_error"]))
    for text, _ in summary_lines(state, folder):
        out.write(text + "\n")
    out.flush()
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--watch":
        sys.exit(watch(int(sys.argv[2]), sys.argv[3]))
    sys.stderr.write("usage: {} --watch PID FOLDER (started by the pytest plugin mps_audit)\n".format(sys.argv[0]))
    sys.exit(2)
