"""pytest plugin: a test suite's ATen calls, replayed on a Mac's MPS (emulated, or real), per test. See docs/pytest.md.

    PYTHONPATH="$(mps-audit record --module-path)" pytest -p mps_audit --mps-audit[=DIR] [--mps-audit-strict]

`--mps-audit` records every ATen call of each test (its setup, call and teardown apart) while the suite runs unchanged,
then replays each distinct call once on the target (`mps-audit model --calls`: default emulated MPS of the newest
release the tool ships) and reports per test the calls that would fall back to the CPU, be refused, or fail on a Mac,
each with its line of code. A test accepts known ones with `@pytest.mark.mps_audit(allow=["aten::cumsum"])`.

Note [Verdicts after the tests]
The replay needs every test's calls (each distinct call is replayed once, whichever tests made it), so the verdicts
come after the last test, in a pytest_runtestloop wrapper, before pytest reports the session: the way pytest-cov's
--cov-fail-under fails a session. `--mps-audit-strict` (`--mps-audit-flagged=fail`) then turns the passing tests
flagged into failures, in the terminal's counts, its FAILURES section and short summary, the JUnit file and the exit
status (1); `--mps-audit-flagged=xfail` turns them into expected failures; `report` (the default) changes no outcome.
What pytest printed while a test ran (its dot) and what it recorded then (the cache of last failures) stays as it was.
"""
import os
import re
import subprocess
import sys
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.append(HERE)

import mps_audit_suite as suite  # noqa: E402

DEFAULT_FOLDER = "mps-audit"
OWN_FILES = [os.path.abspath(__file__), os.path.join(HERE, "mps_audit_suite.py")]


def _release(value):
    """--mps-audit-release: a shipped release's version, or a release folder."""
    releases = suite.shipped_releases()
    if value in releases or os.path.isdir(value) or (not releases and re.match(r"^\d+\.\d+\.\d+$", value)):
        return value
    import argparse
    raise argparse.ArgumentTypeError("invalid choice: {!r} (choose from {}, or a release folder)".format(
        value, ", ".join(repr(r) for r in releases)))


# The flags are checked as the CLI checks its own (emu/emulated_mac.cc parse_emu_macos, parse_chip), in its words;
# tests/pytest_plugin_test.py runs both on the same values.
MACOS_MAJORS = (12, 13, 14, 15, 26, 27)
CHIPS = ("m1", "m2", "m3", "m4", "m5", "any")


def _macos(value):
    """--mps-audit-macos: major.minor (14 is 14.0), as --emu-macos takes it."""
    import argparse
    major, _, minor = value.partition(".")
    minor = minor if _ else "0"
    if not (major.isdigit() and len(major) <= 2 and minor.isdigit() and len(minor) == 1 and
            int(major) in MACOS_MAJORS):
        raise argparse.ArgumentTypeError(
            "invalid value: {!r} (a macOS version major.minor such as 13.2, 13.3, 14.4, 15.2 or 26.1: majors 12 to 15, "
            "26 and 27; minors 0 to 9; default: the newest the release's data names)".format(value))
    return "{}.{}".format(int(major), minor)


def _chip(value):
    import argparse
    if value not in CHIPS:
        raise argparse.ArgumentTypeError(
            "invalid choice: {!r} (m1, m2, m3, m4 or m5; any: no chip in particular)".format(value))
    return value


def pytest_addoption(parser):
    group = parser.getgroup("mps-audit", "what the suite's ATen calls would do on a Mac's MPS (mps-audit)")
    group.addoption("--mps-audit", nargs="?", const=DEFAULT_FOLDER, default=None, metavar="DIR", dest="mps_audit",
                    help="record each test's ATen calls, replay them on MPS after the last test, report per test; "
                         "reports in DIR (default: {})".format(DEFAULT_FOLDER))
    group.addoption("--mps-audit-target", choices=suite.TARGETS, default="mps-emu", dest="mps_audit_target",
                    help="where the calls are replayed: mps-emu (default: emulated MPS), mps (a Mac), auto, cuda, cpu")
    group.addoption("--mps-audit-release", type=_release, default=None, dest="mps_audit_release", metavar="RELEASE",
                    help="mps-emu: the PyTorch release to emulate (default: the newest the tool ships), or a folder")
    group.addoption("--mps-audit-macos", type=_macos, default=None, dest="mps_audit_macos", metavar="X.Y",
                    help="mps-emu: the Mac's macOS, major.minor (13.3; default: the newest the release's data names)")
    group.addoption("--mps-audit-chip", type=_chip, default=None, dest="mps_audit_chip", metavar="CHIP",
                    help="mps-emu: the Mac's chip: m1, m2, m3, m4, m5 or any (default: any)")
    group.addoption("--mps-audit-strict", action="store_true", default=False, dest="mps_audit_strict",
                    help="a passing test with calls that would not run natively fails (--mps-audit-flagged=fail)")
    group.addoption("--mps-audit-flagged", choices=suite.STRICT, default=None, dest="mps_audit_flagged",
                    help="what becomes of a passing test with calls that would not run natively: fail, xfail, or "
                         "report (its outcome stays; the default without --mps-audit-strict)")
    group.addoption("--mps-audit-binary", default=None, dest="mps_audit_binary", metavar="PATH",
                    help="the mps-audit binary that replays (default: $MPS_AUDIT_BINARY, the install's, PATH's)")


def pytest_configure(config):
    config.addinivalue_line("markers", "mps_audit(allow=[...]): operators (aten::cumsum) whose fallbacks or failures "
                                       "on a Mac this test accepts under pytest --mps-audit")
    folder = config.getoption("mps_audit")
    if folder is None:
        given = [flag for flag, dest, default in (("--mps-audit-strict", "mps_audit_strict", False),
                                                  ("--mps-audit-flagged", "mps_audit_flagged", None),
                                                  ("--mps-audit-release", "mps_audit_release", None),
                                                  ("--mps-audit-macos", "mps_audit_macos", None),
                                                  ("--mps-audit-chip", "mps_audit_chip", None),
                                                  ("--mps-audit-target", "mps_audit_target", "mps-emu"))
                 if config.getoption(dest) != default]
        if given:
            raise pytest.UsageError("{} needs --mps-audit[=DIR]".format(", ".join(given)))
        return
    if getattr(config.option, "numprocesses", None) or hasattr(config, "workerinput"):
        raise pytest.UsageError("--mps-audit records in the one process that runs the tests: run it without -n")
    path = os.path.join(str(config.invocation_params.dir), folder)
    if os.path.isfile(path) or (os.path.isdir(path) and any(n.endswith(".py") for n in os.listdir(path))):
        raise pytest.UsageError("--mps-audit {}: a folder of the suite's own, not one for reports: give the reports' "
                                "folder as --mps-audit=DIR".format(folder))
    config.pluginmanager.register(SuiteAudit(config, folder), "mps_audit_suite")


def _allowances(item):
    """The operators the item's mps_audit markers allow; pytest.UsageError for a marker of another shape."""
    out = []
    for mark in item.iter_markers("mps_audit"):
        allow = mark.kwargs.get("allow", ())
        allow = [allow] if isinstance(allow, str) else allow
        if mark.args or set(mark.kwargs) - {"allow"} or not isinstance(allow, (list, tuple)) or \
                not all(isinstance(a, str) and a for a in allow):
            raise pytest.UsageError("{}: @pytest.mark.mps_audit takes allow=[...], a list of operators such as "
                                    "'aten::cumsum'".format(item.nodeid))
        out += [a if "::" in a else "aten::" + a for a in allow]
    return out


class _Crash:
    def __init__(self, message):
        self.message = message


class AuditFailure:
    """A strict audit's failure of a test, as pytest's reports show one (FAILURES, the short summary)."""

    def __init__(self, text, message):
        self.text = text
        self.reprcrash = _Crash(message)

    def toterminal(self, tw):
        for line in self.text.splitlines():
            tw.line(line)

    def __str__(self):
        return self.text


def _mode_getter():
    """The function that returns the innermost dispatch mode, or None where this torch has none."""
    try:
        from torch.utils._python_dispatch import _get_current_dispatch_mode
    except ImportError:
        return None
    return _get_current_dispatch_mode


class SuiteAudit:
    """The audit of one session: registered as a plugin when --mps-audit is given."""

    def __init__(self, config, folder):
        self.config = config
        self.folder = os.path.abspath(os.path.join(str(config.invocation_params.dir), folder))
        self.options = {"target": config.getoption("mps_audit_target"),
                        "release": config.getoption("mps_audit_release"),
                        "macos": config.getoption("mps_audit_macos"),
                        "chip": config.getoption("mps_audit_chip")}
        self.strict = config.getoption("mps_audit_flagged") or ("fail" if config.getoption("mps_audit_strict") else
                                                                "report")
        self.binary_given = config.getoption("mps_audit_binary") or os.environ.get("MPS_AUDIT_BINARY")
        self.unavailable = None  # why nothing is recorded
        self.rec = self.mode = self.journal = self.watcher = None
        self.active = False
        self.journal_failed = None  # why the journal stopped (Note [A suite's recording survives its process])
        self.stopped = None  # (nodeid, phase, why): the recording stopped there
        self.reports = {}  # nodeid -> phase -> report
        self.allow = {}  # nodeid -> operators its marker allows
        self.state = None  # the verdicts, once replayed
        self.failure = None  # the audit's own failure, one line
        self.started = time.perf_counter()
        self._load()

    def _load(self):
        try:
            import torch
            import mps_audit_record as rec
        except Exception as e:  # ImportError, or a torch that fails as it loads
            self.unavailable = "{} cannot import torch ({}: {}): the suite runs without the audit".format(
                sys.executable, type(e).__name__, str(e).splitlines()[0] if str(e) else "")
            return
        self.torch, self.recorder, self.current_mode = torch, rec, _mode_getter()
        for f in OWN_FILES:
            rec.OWN_FILES.add(f)
        self.said = []  # what the recorder said of itself (recording in Python, and why)

    # --- the recording -----------------------------------------------------------------------------------------

    def pytest_sessionstart(self, session):
        if self.unavailable or self.config.option.collectonly:
            return
        try:
            os.makedirs(self.folder, exist_ok=True)
            suite.remove_outputs(self.folder)
            path = os.path.join(self.folder, "calls.pt")
            program = ["pytest"] + list(self.config.invocation_params.args)
            base = str(self.config.rootpath) if hasattr(self.config, "rootpath") else str(self.config.rootdir)
            binary, _ = suite.find_binary(self.binary_given)
            self.rec = self.recorder.new_recording(path, program=program, base=base, suite=True, say=self.said.append,
                                                   binary=binary)
            if self.rec.native:
                self.rec.start()  # records only inside a test's phase (its context)
            else:
                self.rec = _suite_recording(self.recorder)(path, program=program, base=base)
                self.mode = self.recorder._Recorder(self.rec)
            self.journal = suite.Journal(os.path.join(self.folder, suite.JOURNAL))
            self.journal.write("session", {"program": self.rec.program, "base": self.rec.base,
                                           "max_numel": self.rec.max_numel, "options": self.options,
                                           "strict": self.strict, "binary": binary, "allow": self.allow})
        except Exception as e:  # a folder it cannot write, most likely
            self.unavailable = "cannot record into {} ({}: {}): the suite runs without the audit".format(
                self.folder, type(e).__name__, e)
            self.rec = None
            return
        try:
            self._start_watcher()
        except OSError as e:  # the audit goes on; a test that ended the process would end it too
            self.journal_failed = "no watcher ({}): the journal is kept, but nothing would report a test that " \
                                  "ended the process".format(e)

    def _start_watcher(self):
        capman = self.config.pluginmanager.getplugin("capturemanager")
        cmd = [sys.executable, os.path.join(HERE, "mps_audit_suite.py"), "--watch", str(os.getpid()), self.folder]
        if capman is not None:
            with capman.global_and_fixture_disabled():
                self.watcher = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, start_new_session=True)
        else:
            self.watcher = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, start_new_session=True)

    def pytest_collection_modifyitems(self, session, config, items):
        for item in items:
            allow = _allowances(item)
            if allow:
                self.allow[item.nodeid] = allow
        if self.journal is not None:
            self.journal.write("allow", self.allow)

    def _enter(self, item, when):
        nodeid = item.nodeid
        if self.rec is None or self.stopped is not None:
            return
        try:
            self.journal.write("phase", nodeid, when)
            # Where no frame is the project's, a call's site is the test's own line (Note [Sites]).
            path, line, _ = item.location
            self.rec.sites.default = "{}:{}".format(path, (line or 0) + 1)
            self.rec.context = (nodeid, when)
            if self.mode is not None:
                self.mode.__enter__()
            self.active = True
        except Exception as e:
            self._stop(nodeid, when, "the recorder could not start ({}: {})".format(type(e).__name__, e))

    def _leave(self, nodeid, when):
        if not self.active:
            return
        self.active = False
        self.rec.context = None
        if self.mode is None:  # the native recorder: no dispatch mode of its own that a test could disturb
            return
        top = self.current_mode() if self.current_mode else self.mode
        if top is self.mode:
            try:
                self.mode.__exit__(None, None, None)
                return
            except Exception as e:
                top = e
        # The test pushed a mode of its own and left it, or removed the recorder's: what the stack holds is no longer
        # the recorder's to undo, so it records nothing more.
        self._stop(nodeid, when, "the test left torch's dispatch mode stack changed ({})".format(
            "the recorder could not leave it: {}".format(top) if isinstance(top, Exception) else
            "{} on top".format(type(top).__name__) if top is not None else "no mode"))

    def _stop(self, nodeid, when, why):
        """Nothing more is recorded; the report names the test and the recording is incomplete."""
        self.rec.context = None
        self.stopped = (nodeid, when, why)
        try:
            self.journal.write("stopped", nodeid, when)
        except Exception:
            pass

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_setup(self, item):
        self._enter(item, "setup")
        yield
        self._leave(item.nodeid, "setup")

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item):
        self._enter(item, "call")
        yield
        self._leave(item.nodeid, "call")

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_teardown(self, item, nextitem):
        self._enter(item, "teardown")
        yield
        self._leave(item.nodeid, "teardown")

    def pytest_runtest_logreport(self, report):
        self.reports.setdefault(report.nodeid, {})[report.when] = report

    def pytest_runtest_logfinish(self, nodeid, location):
        if self.rec is None or self.journal_failed:
            return
        try:
            suite.flush_test(self.journal, self.rec, nodeid, suite.test_outcome(self.reports.get(nodeid, {})))
        except Exception as e:  # the recording goes on; only a crash after this test would lose its calls
            self.journal_failed = "the journal stopped at {} ({}: {}): a test that ended the process after it would " \
                                  "have lost the calls before it".format(nodeid, type(e).__name__, e)

    # --- the verdicts (Note [Verdicts after the tests]) --------------------------------------------------------

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtestloop(self, session):
        outcome = yield
        if self.rec is None:
            return
        exc = outcome.excinfo
        interrupted = exc is not None and issubclass(exc[0], KeyboardInterrupt) and \
            not issubclass(exc[0], session.Interrupted)
        try:
            self._finish(session, interrupted, exc is not None and not interrupted)
        except Exception as e:  # the audit's own failure: one line, and the suite's outcome stands
            self.failure = "the audit failed ({}: {}); the calls are in {}".format(
                type(e).__name__, e, os.path.join(self.folder, "calls.pt"))
            if self.strict == "fail":
                session.testsfailed += 1

    def _finish(self, session, interrupted, stopped_early):
        rec = self.rec
        rec.context = None
        error = None
        if interrupted:
            error = "the session was interrupted"
        elif self.stopped is not None:
            error = "the recording stopped at {} ({}): {}".format(*self.stopped)
        if rec.native:
            rec.stop()
        rec.save(error)
        saved = time.perf_counter()  # what follows is the replay and the reports, not the recording's cost
        outcomes = {n: suite.test_outcome(r) for n, r in self.reports.items()}
        doc, replay_error, replay_seconds = None, "", 0.0
        if interrupted:
            replay_error = "not replayed: the session was interrupted (mps-audit model --calls {})".format(rec.path)
        elif rec.distinct:
            binary, looked = suite.find_binary(self.binary_given)
            if binary is None:
                replay_error = "no mps-audit binary (looked for {}): give --mps-audit-binary; the calls are in " \
                               "{}".format(", ".join(looked), rec.path)
            else:
                start = time.perf_counter()
                doc, replay_error = suite.replay(binary, rec.path, self.folder, self.options)
                replay_seconds = time.perf_counter() - start
        recorded = [] if doc else suite.recorded_calls(rec)
        tests, operators = suite.verdicts(doc, recorded, self.allow, outcomes,
                                          stopped_at=self.stopped[0] if self.stopped else None)
        self.state = {"where": suite.where_it_ran(doc) if doc else self.options["target"], "options": self.options,
                      "complete": error is None, "incomplete": error or "", "replay_error": replay_error or "",
                      "strict": self.strict, "total": rec.total, "distinct": rec.distinct,
                      "recorder": "native" if rec.native else "python", "recorder_note": " ".join(self.said),
                      "record_seconds": saved - self.started, "replay_seconds": replay_seconds, "tests": tests,
                      "operators": operators, "stopped_early": bool(stopped_early),
                      "journal_error": self.journal_failed or ""}
        self._apply_strict(session)
        self.state["report_seconds"] = time.perf_counter() - saved
        suite.write_json(os.path.join(self.folder, "pytest.json"), suite.report_document(self.state))
        self.journal.write("done")

    def _apply_strict(self, session):
        """--mps-audit-strict: a passing test flagged fails (fail) or becomes an expected failure (xfail)."""
        if self.strict == "fail" and self.state["replay_error"] and self.state["distinct"]:
            session.testsfailed += 1  # no verdicts: the gate cannot pass
        if self.strict == "report":
            return
        tr = self.config.pluginmanager.getplugin("terminalreporter")
        for t in self.state["tests"]:
            rep = self.reports.get(t["nodeid"], {}).get("call")
            if t["audit"] != "flagged" or rep is None or not rep.passed or hasattr(rep, "wasxfail"):
                continue
            flagged = [f for f in t["findings"] if not f["allowed"]]
            message = "{} ({}) {} at {}{}".format(
                flagged[0]["op"], flagged[0]["dtype"], suite.first_line(flagged[0]["why"], 80), flagged[0]["site"],
                ", and {} more".format(len(flagged) - 1) if len(flagged) > 1 else "")
            text = "\n".join(["mps-audit (--mps-audit-flagged={}): calls that would not run natively on {}:".format(
                self.strict, self.state["where"])] + ["  " + suite.finding_line(f) for f in flagged])
            if self.strict == "fail":
                rep.outcome, rep.longrepr = "failed", AuditFailure(text, message)
                session.testsfailed += 1
                key = "failed"
            else:
                rep.outcome, rep.wasxfail = "skipped", "mps-audit: " + message
                key = "xfailed"
            t["outcome"] = t["strict_outcome"] = key
            if tr is not None and rep in tr.stats.get("passed", []):
                tr.stats["passed"].remove(rep)
                tr.stats.setdefault(key, []).append(rep)

    # --- the reports -------------------------------------------------------------------------------------------

    def pytest_terminal_summary(self, terminalreporter, exitstatus, config):
        tr = terminalreporter
        if self.unavailable:
            tr.write_line("mps-audit: " + self.unavailable, yellow=True)
            return
        if self.failure:
            tr.write_line("mps-audit: " + self.failure, red=True)
        if self.state is None:
            return
        s = self.state
        tr.write_sep("=", "mps-audit: " + s["where"])
        if s["incomplete"]:
            tr.write_line("the recording is incomplete: {}".format(s["incomplete"]), red=True)
        if s["stopped_early"]:
            tr.write_line("the session stopped early: only the {} tests that ran are audited".format(len(s["tests"])))
        if s["replay_error"]:
            tr.write_line("the calls were not replayed: " + s["replay_error"], red=True)
        if s["journal_error"]:
            tr.write_line("mps-audit: " + s["journal_error"])
        if s.get("recorder_note"):
            tr.write_line(s["recorder_note"])
        folder = os.path.relpath(self.folder, str(config.invocation_params.dir))
        folder = self.folder if folder.startswith("..") else folder
        for text, markup in suite.summary_lines(s, folder, verbose=config.option.verbose > 0):
            tr.write_line(text, **markup)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session, exitstatus):
        path = getattr(self.config.option, "xmlpath", None)
        if not path or self.state is None or not os.path.exists(path):
            return
        try:
            _junit(path, self.state, self.config, self.folder)
        except Exception as e:  # a JUnit file of another shape: the audit's reports stand
            self.failure = "could not add the audit to {}: {}: {}".format(path, type(e).__name__, e)

    def pytest_unconfigure(self, config):
        if self.journal is not None:
            self.journal.write("done")
            self.journal.close()
            try:
                os.remove(self.journal.path)
            except OSError:
                pass
        if self.watcher is not None:
            self.watcher.terminate()
            self.watcher.wait()


def _suite_recording(rec):
    """A Recording in Python (mps_audit_record, Note [Two recorders]) that records only inside a test, and keeps what
    the journal needs."""

    class SuiteRecording(rec.Recording):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.new, self.touched, self.flushed_sources, self.position = [], set(), set(), {}

        def before(self, func, args, kwargs):
            return None if self.context is None else super().before(func, args, kwargs)

        def kept(self, entry, named):
            pos = len(self.calls) - 1
            self.position[id(entry)] = pos
            self.new.append(pos)

        def after(self, entry, out, seconds):
            super().after(entry, out, seconds)
            self.touched.add(self.position[id(entry)])

    return SuiteRecording


def _junit_names(nodeid, prefix):
    """The classname and name pytest's JUnit XML gives a test (_pytest.junitxml.mangle_test_address)."""
    path, bracket, params = nodeid.partition("[")
    names = path.split("::")
    names[0] = re.sub(r"\.py$", "", names[0].replace("/", "."))
    names[-1] += bracket + params
    classnames = ([prefix] if prefix else []) + names[:-1]
    return ".".join(classnames), names[-1]


def _junit(path, state, config, folder):
    """The audit in pytest's JUnit file: per test case, properties (mps_audit: its result; mps_audit.finding: each
    call that would not run natively), and the failure or expected failure of --mps-audit-strict."""
    import xml.etree.ElementTree as ET
    tree = ET.parse(path)
    cases = {}
    for ts in tree.getroot().iter("testsuite"):
        for case in ts.iter("testcase"):
            cases[(case.get("classname"), case.get("name"))] = (ts, case)
        props = ts.find("properties")
        if props is None:
            props = ET.Element("properties")
            ts.insert(0, props)
        for name, value in (("mps_audit.where", state["where"]), ("mps_audit.report", folder),
                            ("mps_audit.complete", str(state["complete"]).lower())):
            ET.SubElement(props, "property", name=name, value=value)
    prefix = getattr(config.option, "junitprefix", None)
    for t in state["tests"]:
        found = cases.get(_junit_names(t["nodeid"], prefix))
        if found is None:
            continue
        ts, case = found
        props = case.find("properties")
        if props is None:
            props = ET.Element("properties")
            case.insert(0, props)
        ET.SubElement(props, "property", name="mps_audit", value=t["audit"])
        for f in t["findings"]:
            ET.SubElement(props, "property", name="mps_audit.finding", value=suite.finding_line(f))
        flagged = [suite.finding_line(f) for f in t["findings"] if not f["allowed"]]
        if t.get("strict_outcome"):
            if t["strict_outcome"] == "failed":
                ET.SubElement(case, "failure", message="mps-audit: " + flagged[0]).text = "\n".join(flagged)
                ts.set("failures", str(int(ts.get("failures", "0")) + 1))
            else:
                ET.SubElement(case, "skipped", type="pytest.xfail", message="mps-audit: " + flagged[0])
                ts.set("skipped", str(int(ts.get("skipped", "0")) + 1))
    tree.write(path, encoding="utf-8", xml_declaration=True)
