#!/usr/bin/env python3
"""Tests of the pytest plugin (python/mps_audit.py, `pytest --mps-audit`): pytest run, with this Python's torch, on the
example suite (examples/pytest_suite/: cumsum, erfinv, mode, float64, a transformer layer, an optimizer step, a test
without torch, a skipped one) and on suites made here that crash, hang, disturb the recorder, stop early, or are
given bad options. The replay is the mps-audit binary's (emulated MPS).

    python3 tests/pytest_plugin_test.py BINARY      (exit 77 without pytest, except under CI)
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PLUGIN_DIR = os.path.join(ROOT, "python")
SUITE = os.path.join(ROOT, "examples", "pytest_suite")
BINARY = None


def line_of(path, text):
    """The line number of the first line of `path` holding `text`: what a finding names."""
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if text in line:
                return n
    raise AssertionError("{} has no line with {!r}".format(path, text))


class Run:
    def __init__(self, proc, out, err, folder):
        self.code, self.out, self.err, self.folder = proc.returncode, out, err, folder
        path = os.path.join(folder, "pytest.json")
        self.doc = None
        if os.path.exists(path):
            with open(path) as f:
                self.doc = json.load(f)

    def tests(self):
        return {t["nodeid"]: t for t in self.doc["tests"]}

    def audit(self):
        return {t["nodeid"]: t["audit"] for t in self.doc["tests"]}

    def sites(self, nodeid):
        return {(f["site"], f["op"], f["status"]) for f in self.tests()[nodeid]["findings"]}


class Plugin(unittest.TestCase):
    def setUp(self):
        d = tempfile.TemporaryDirectory()
        self.addCleanup(d.cleanup)
        self.dir = d.name

    def suite_copy(self):
        dest = os.path.join(self.dir, "suite")
        shutil.copytree(SUITE, dest)
        return dest

    def write_suite(self, files):
        dest = os.path.join(self.dir, "suite")
        os.makedirs(dest, exist_ok=True)
        for name, text in files.items():
            with open(os.path.join(dest, name), "w") as f:
                f.write(text)
        return dest

    def env(self):
        env = dict(os.environ, PYTHONPATH=PLUGIN_DIR, PYTHONDONTWRITEBYTECODE="1")
        env.pop("PYTEST_ADDOPTS", None)
        return env

    def pytest(self, cwd, *args, audit=True, launcher=None, started=None):
        """pytest in `cwd` with the plugin; reports in self.dir/out. `started`: a file whose appearance means the
        suite hangs: then pytest is ended with SIGTERM, as a CI job's timeout ends it."""
        folder = os.path.join(self.dir, "out")
        cmd = (launcher or [sys.executable, "-m", "pytest"]) + ["-p", "mps_audit", "-p", "no:cacheprovider"]
        if audit:
            cmd += ["--mps-audit=" + folder, "--mps-audit-binary=" + BINARY]
        proc = subprocess.Popen(cmd + list(args), cwd=cwd, env=self.env(), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, universal_newlines=True)
        if started:
            deadline = time.time() + 120
            while not os.path.exists(started) and time.time() < deadline and proc.poll() is None:
                time.sleep(0.1)
            proc.send_signal(signal.SIGTERM)
        # The watcher, if it takes over, holds the same pipes: they close when its report is written.
        out, err = proc.communicate(timeout=300)
        return Run(proc, out, err, folder)

    def assertNoPluginTraceback(self, run):
        for text in (run.out, run.err):
            for block in text.split("Traceback (most recent call last)")[1:]:
                self.assertNotIn("mps_audit", block, text)

    # --- the example suite -------------------------------------------------------------------------------------

    def test_the_example_suite_on_the_newest_release_names_each_test_that_would_not_run_natively(self):
        cwd = self.suite_copy()
        run = self.pytest(cwd, "-q")
        self.assertEqual(run.code, 0, run.out + run.err)  # report only: no outcome changes
        self.assertIn("8 passed, 1 skipped", run.out)
        audit = run.audit()
        # mode has no MPS kernel in any shipped release; MPS has no float64; the rest runs natively (no false alarm).
        self.assertEqual({n for n, a in audit.items() if a == "flagged"},
                         {"test_ops.py::test_mode", "test_ops.py::test_float64_solve"}, audit)
        for name in ("test_cumsum", "test_erfinv"):
            self.assertEqual(audit["test_ops.py::" + name], "native")
        for name in ("test_transformer_layer", "test_optimizer_step"):
            self.assertEqual(audit["test_models.py::" + name], "native")
        self.assertEqual(audit["test_ops.py::test_no_torch"], "no_calls")
        self.assertEqual(audit["test_ops.py::test_skipped"], "not_run")
        self.assertEqual(audit["test_ops.py::test_cumsum_allowed"], "native")
        self.assertEqual(run.tests()["test_ops.py::test_cumsum_allowed"]["unused_allow"], ["aten::cumsum"])
        ops_py = os.path.join(cwd, "test_ops.py")
        mode_line = "test_ops.py:{}".format(line_of(ops_py, "torch.mode(labels"))
        self.assertIn((mode_line, "aten::mode", "fallback"), run.sites("test_ops.py::test_mode"))
        float64 = run.tests()["test_ops.py::test_float64_solve"]["findings"]
        self.assertTrue(float64 and all(f["dtype"] == "float64" and f["status"] in ("refused", "expected_failure")
                                        for f in float64), float64)
        self.assertIn("test_ops.py:{}".format(line_of(ops_py, "a @ torch.ones")), {f["site"] for f in float64})
        # The terminal: the section, the test with its line, the operator with its count, the totals.
        self.assertIn("mps-audit: emulated MPS (PyTorch {}".format(run.doc["where"].split("PyTorch ")[1].split()[0]),
                      run.out)
        self.assertRegex(run.out, r"test_ops.py::test_mode \[flagged\]\n +{} aten::mode \(float32, call\): falls "
                                  r"back to the CPU".format(re.escape(mode_line)))
        self.assertIn("aten::mode (float32): falls back to the CPU (aten::mode ran there): 1 call in 1 test", run.out)
        self.assertIn("mps-audit: 2 of 9 tests would not run natively on emulated MPS", run.out)
        self.assertTrue(run.doc["complete"])
        self.assertNoPluginTraceback(run)

    def test_each_distinct_call_is_replayed_once_with_the_tests_and_phases_that_made_it(self):
        cwd = self.suite_copy()
        run = self.pytest(cwd, "-q", "-k", "cumsum")
        with open(os.path.join(run.folder, "model.json")) as f:
            model = json.load(f)
        self.assertEqual(model["program"]["distinct_calls"], len(model["calls"]))
        self.assertEqual(run.doc["distinct_calls"], len(model["calls"]))
        # Both cumsum tests call running_sum on the fixture's 8x16 batch: one distinct call, made by both.
        [cumsum] = [c for c in model["calls"] if c["op"] == "aten::cumsum"]
        site = "test_ops.py:{}".format(line_of(os.path.join(cwd, "test_ops.py"), "torch.cumsum(x, dim=1)"))
        self.assertEqual(cumsum["tests"], {"test_ops.py::test_cumsum": {"call": {site: 1}},
                                           "test_ops.py::test_cumsum_allowed": {"call": {site: 1}}})
        # The fixture's randn is the setup phase's, at the fixture's line.
        [randn] = [c for c in model["calls"] if c["op"] == "aten::randn"]
        fixture = "conftest.py:{}".format(line_of(os.path.join(cwd, "conftest.py"), "torch.randn"))
        self.assertEqual(randn["tests"]["test_ops.py::test_cumsum"], {"setup": {fixture: 1}})
        # -k: only the selected tests are in the report.
        self.assertEqual(set(run.audit()), {"test_ops.py::test_cumsum", "test_ops.py::test_cumsum_allowed"})
        with open(os.path.join(run.folder, "model.md")) as f:
            self.assertIn("## By test", f.read())

    def test_an_older_release_names_its_fallbacks_and_the_marker_allows_one(self):
        cwd = self.suite_copy()
        junit = os.path.join(self.dir, "junit.xml")
        run = self.pytest(cwd, "-q", "--mps-audit-release=1.13.1", "--mps-audit-strict", "--junitxml=" + junit)
        audit = run.audit()
        ops_py = os.path.join(cwd, "test_ops.py")
        cumsum = "test_ops.py:{}".format(line_of(ops_py, "torch.cumsum(x, dim=1)"))
        erfinv = "test_ops.py:{}".format(line_of(ops_py, "torch.erfinv(p)"))
        self.assertIn((cumsum, "aten::cumsum", "fallback"), run.sites("test_ops.py::test_cumsum"))
        self.assertIn((erfinv, "aten::erfinv", "fallback"), run.sites("test_ops.py::test_erfinv"))
        self.assertEqual(audit["test_ops.py::test_cumsum"], "flagged")
        self.assertEqual(audit["test_ops.py::test_cumsum_allowed"], "allowed")
        # --mps-audit-strict: the flagged tests fail, the allowed one passes; exit status 1.
        self.assertEqual(run.code, 1, run.out + run.err)
        outcome = {t["nodeid"]: t["outcome"] for t in run.doc["tests"]}
        self.assertEqual(outcome["test_ops.py::test_cumsum"], "failed")
        self.assertEqual(outcome["test_ops.py::test_cumsum_allowed"], "passed")
        flagged = sum(1 for a in audit.values() if a == "flagged")
        self.assertIn("{} failed, {} passed, 1 skipped".format(flagged, 8 - flagged), run.out)
        self.assertRegex(run.out, r"FAILED test_ops.py::test_cumsum - aten::cumsum \(float32\) falls back")
        cases = {c.get("name"): c for c in ET.parse(junit).getroot().iter("testcase")}
        self.assertIsNotNone(cases["test_cumsum"].find("failure"))
        self.assertIsNone(cases["test_cumsum_allowed"].find("failure"))
        props = {(p.get("name"), p.get("value")) for p in cases["test_cumsum"].find("properties")}
        self.assertIn(("mps_audit", "flagged"), props)
        self.assertTrue(any(n == "mps_audit.finding" and v.startswith(cumsum + " aten::cumsum") for n, v in props))
        self.assertIn(("mps_audit", "no_calls"), {(p.get("name"), p.get("value"))
                                                  for p in cases["test_no_torch"].find("properties")})

    def test_flagged_tests_can_be_expected_failures_instead(self):
        cwd = self.suite_copy()
        run = self.pytest(cwd, "-q", "test_ops.py::test_mode", "test_ops.py::test_no_torch",
                          "--mps-audit-flagged=xfail")
        self.assertEqual(run.code, 0, run.out + run.err)
        self.assertIn("1 passed, 1 xfailed", run.out)
        self.assertEqual(run.tests()["test_ops.py::test_mode"]["outcome"], "xfailed")

    NOTES = '''import copy

import torch


def test_pow():
    x = torch.rand(4, 5)
    assert (x.pow(2) >= 0).all()


def test_shapes():
    for n in (3, 4, 5):
        torch.mode(torch.ones(n, 4), 1)


def test_deepcopy():
    layer = torch.nn.Linear(3, 2).double()
    copy.deepcopy(layer)
'''

    def test_notes_flag_nothing_and_each_finding_is_the_projects_line_once(self):
        cwd = self.write_suite({"test_n.py": self.NOTES})
        run = self.pytest(cwd, "-v", "--mps-audit-release=1.13.1")
        self.assertEqual(run.code, 0, run.out + run.err)
        tests = run.tests()
        # 1.13.1's lists expect pow and ge to be unverified or flaky on a real Mac: notes, listed, flagging nothing.
        self.assertEqual(tests["test_n.py::test_pow"]["audit"], "native")
        self.assertEqual(tests["test_n.py::test_pow"]["findings"], [])
        self.assertTrue(any(n.startswith("aten::pow.Tensor_Scalar (float32): PyTorch 1.13.1's") and
                            "(a note: it decides nothing)" in n for n in tests["test_n.py::test_pow"]["notes"]),
                        tests["test_n.py::test_pow"]["notes"])
        self.assertIn("note: aten::pow.Tensor_Scalar (float32)", run.out)  # -v shows notes
        # Three shapes at one line: one finding, three calls.
        shapes = "test_n.py:{}".format(line_of(os.path.join(cwd, "test_n.py"), "torch.mode("))
        self.assertEqual([(f["site"], f["op"], f["status"], f["calls"]) for f in tests["test_n.py::test_shapes"]
                          ["findings"]], [(shapes, "aten::mode", "fallback", 3)])
        self.assertIn(shapes + " aten::mode (float32, call): falls back to the CPU (aten::mode ran there) x3", run.out)
        # deepcopy's clones are made inside copy.py: their site is the test's line that called deepcopy.
        deep = "test_n.py:{}".format(line_of(os.path.join(cwd, "test_n.py"), "copy.deepcopy(layer)"))
        findings = tests["test_n.py::test_deepcopy"]["findings"]
        self.assertIn(("aten::clone", "float64"), {(f["op"], f["dtype"]) for f in findings})
        self.assertEqual({f["site"] for f in findings if f["op"] == "aten::clone"}, {deep})
        for t in tests.values():  # only the project's lines, each (site, operator, dtype, status) once
            keys = [(f["site"], f["op"], f["dtype"], f["status"]) for f in t["findings"]]
            self.assertEqual(len(keys), len(set(keys)), keys)
            self.assertTrue(all(k[0].startswith("test_n.py:") for k in keys), keys)
        # The cause first: MPS has no float64.
        self.assertRegex(run.out, r"MPS has no float64: 1 test calls it \(\d+ calls\); run the suite in float32")

    def test_a_call_the_replay_cannot_judge_is_a_note_with_why(self):
        import torch
        if int(torch.__version__.split(".")[0]) < 2:
            self.skipTest("torch {} has no MPS kernel of _to_sparse to emulate".format(torch.__version__))
        cwd = self.write_suite({"test_s.py": "import torch\n\n\ndef test_sparse():\n"
                                             "    assert torch.ones(4, 5).to_sparse().to_dense().sum() == 20\n"})
        run = self.pytest(cwd, "-q", "--mps-audit-release=2.14.1")
        self.assertEqual(run.code, 0, run.out + run.err)
        [test] = run.doc["tests"]
        self.assertEqual(test["audit"], "native", test)
        self.assertIn("aten::_to_sparse (float32): not judged: the emulator cannot hold the sparse result of "
                      "aten::_to_sparse on emulated MPS", test["notes"])

    # --- suites that stop, crash, hang or disturb the recorder --------------------------------------------------

    BAD = '''import os, signal, time
import torch


def test_before():
    torch.mode(torch.ones(3, 4), 1)


def test_bad():
    torch.sin(torch.ones(2))
    how = os.environ.get("BAD", "")
    if how == "fail":
        assert False, "a failing test"
    if how == "segv":
        os.kill(os.getpid(), signal.SIGSEGV)
    if how == "exit":
        os._exit(3)
    if how == "hang":
        open(os.environ["HANG_FILE"], "w").close()
        time.sleep(600)
    if how == "mode":
        from torch.utils._python_dispatch import TorchDispatchMode

        class Passing(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                return func(*args, **(kwargs or {}))
        Passing().__enter__()  # and never leaves it


def test_after():
    torch.mode(torch.ones(5, 4), 1)
'''

    def bad_run(self, how, *args, started=None):
        cwd = self.write_suite({"test_bad.py": self.BAD})
        os.environ["BAD"] = how
        os.environ["HANG_FILE"] = os.path.join(self.dir, "hanging")
        try:
            return self.pytest(cwd, "-q", *args, started=started)
        finally:
            del os.environ["BAD"], os.environ["HANG_FILE"]

    def test_minus_x_audits_the_tests_that_ran(self):
        run = self.bad_run("fail", "-x")
        self.assertEqual(run.code, 1)
        self.assertEqual(run.audit(), {"test_bad.py::test_before": "flagged", "test_bad.py::test_bad": "native"})
        self.assertEqual(run.tests()["test_bad.py::test_bad"]["outcome"], "failed")
        self.assertIn("the session stopped early: only the 2 tests that ran are audited", run.out)

    def assert_ended_in_test_bad(self, run):
        self.assertIsNotNone(run.doc, run.out + run.err)
        self.assertFalse(run.doc["complete"])
        self.assertEqual(run.doc["ended_in"], {"test": "test_bad.py::test_bad", "phase": "call"})
        self.assertEqual(run.audit(), {"test_bad.py::test_before": "flagged", "test_bad.py::test_bad": "ended_process"})
        self.assertIn("mps-audit: the test process ended during test_bad.py::test_bad (call), before the session "
                      "finished: the recording is incomplete", run.err)
        self.assertIn("test_bad.py::test_before [flagged]", run.err)  # the tests before it have their verdicts
        self.assertNoPluginTraceback(run)

    def test_a_test_that_kills_the_process_is_named_and_the_recording_marked_incomplete(self):
        for how, code in (("segv", -signal.SIGSEGV), ("exit", 3)):
            with self.subTest(how=how):
                run = self.bad_run(how)
                self.assertEqual(run.code, code)
                self.assert_ended_in_test_bad(run)

    def test_a_hanging_test_ended_from_outside_is_named(self):
        run = self.bad_run("hang", started=os.path.join(self.dir, "hanging"))
        self.assertEqual(run.code, -signal.SIGTERM)
        self.assert_ended_in_test_bad(run)

    def test_a_test_that_leaves_a_dispatch_mode_is_recorded_on(self):
        # The native recorder sits at the dispatcher, under any Python dispatch mode: the tests after it are audited.
        run = self.bad_run("mode")
        self.assertEqual(run.code, 0, run.out + run.err)
        self.assertEqual(run.doc["recorder"], "native")
        self.assertTrue(run.doc["complete"])
        self.assertEqual(run.audit(), {"test_bad.py::test_before": "flagged", "test_bad.py::test_bad": "native",
                                       "test_bad.py::test_after": "flagged"})

    def test_the_python_recorder_stops_where_a_test_leaves_a_dispatch_mode_and_names_it(self):
        os.environ["MPS_AUDIT_RECORDER"] = "python"  # Note [Two recorders]: the recorder where no native one loads
        try:
            run = self.bad_run("mode")
        finally:
            del os.environ["MPS_AUDIT_RECORDER"]
        self.assertEqual(run.code, 0, run.out + run.err)
        self.assertEqual(run.doc["recorder"], "python")
        self.assertFalse(run.doc["complete"])
        self.assertIn("the recording stopped at test_bad.py::test_bad (call): the test left torch's dispatch mode "
                      "stack changed (Passing on top)", run.out)
        self.assertEqual(run.audit()["test_bad.py::test_after"], "not_recorded")
        self.assertEqual(run.audit()["test_bad.py::test_before"], "flagged")

    # --- bad input -------------------------------------------------------------------------------------------

    def test_a_bad_option_is_pytests_usage_error_with_the_choices(self):
        cwd = self.write_suite({"test_x.py": "def test_x():\n    pass\n"})
        cases = [(["--mps-audit-target=gpu"], "argument --mps-audit-target: invalid choice: 'gpu' (choose from "
                                              "'mps-emu', 'mps', 'auto', 'cuda', 'cpu')"),
                 (["--mps-audit-release=9.9.9"], "argument --mps-audit-release: invalid choice: '9.9.9' (choose from "
                                                 "'1.13.1'"),
                 (["--mps-audit-macos=5"], "argument --mps-audit-macos: invalid value: '5' (a macOS version "
                                           "major.minor such as 13.2"),
                 (["--mps-audit-macos=14.x"], "argument --mps-audit-macos: invalid value: '14.x'"),
                 (["--mps-audit-chip=m9"], "argument --mps-audit-chip: invalid choice: 'm9' (m1, m2, m3, m4 or m5; "
                                           "any: no chip in particular)"),
                 (["--mps-audit-flagged=maybe"], "argument --mps-audit-flagged: invalid choice: 'maybe' (choose from "
                                                 "'fail', 'xfail', 'report')")]
        for args, message in cases:
            with self.subTest(args=args):
                run = self.pytest(cwd, *args)
                self.assertEqual(run.code, 4, run.err)
                self.assertIn(message, run.err)
        run = self.pytest(cwd, "--mps-audit-strict", audit=False)
        self.assertEqual(run.code, 4)
        self.assertIn("--mps-audit-strict needs --mps-audit[=DIR]", run.err)

    def test_a_marker_of_another_shape_is_a_usage_error(self):
        cwd = self.write_suite({"test_x.py": "import pytest\n\n\n@pytest.mark.mps_audit(allow=3)\ndef test_x():\n"
                                             "    pass\n"})
        run = self.pytest(cwd)
        self.assertEqual(run.code, 4, run.out + run.err)
        self.assertIn("test_x.py::test_x: @pytest.mark.mps_audit takes allow=[...], a list of operators", run.err)

    def test_without_torch_one_line_and_the_suite_runs(self):
        cwd = self.write_suite({"test_x.py": "def test_x():\n    assert 1 + 1 == 2\n"})
        hide = "import sys; sys.modules['torch'] = None; import pytest; sys.exit(pytest.main())"
        run = self.pytest(cwd, launcher=[sys.executable, "-c", hide])
        self.assertEqual(run.code, 0, run.out + run.err)
        self.assertIn("1 passed", run.out)
        lines = [l for l in run.out.splitlines() if l.startswith("mps-audit:")]
        self.assertEqual(len(lines), 1, run.out)
        self.assertIn("mps-audit: {} cannot import torch (".format(sys.executable), lines[0])
        self.assertIn("the suite runs without the audit", lines[0])

    def test_no_binary_leaves_the_calls_and_a_strict_run_fails(self):
        cwd = self.write_suite({"test_x.py": "import torch\n\n\ndef test_x():\n    torch.ones(2).sin()\n"})
        for strict, code in (([], 0), (["--mps-audit-strict"], 1)):
            with self.subTest(strict=strict):
                run = self.pytest(cwd, "--mps-audit-binary=" + os.path.join(self.dir, "none"), *strict)
                self.assertEqual(run.code, code, run.out + run.err)
                self.assertIn("the calls were not replayed: no mps-audit binary", run.out)
                self.assertTrue(os.path.exists(os.path.join(run.folder, "calls.pt")))
                self.assertEqual(run.audit(), {"test_x.py::test_x": "unknown"})


def main():
    global BINARY
    if len(sys.argv) < 2:
        sys.stderr.write("usage: pytest_plugin_test.py BINARY\n")
        return 2
    BINARY = os.path.abspath(sys.argv.pop(1))
    try:
        import pytest  # noqa: F401
    except ImportError:
        if os.environ.get("CI"):
            sys.stderr.write("CI runs the pytest plugin's tests: install pytest (Debian: python3-pytest)\n")
            return 1
        sys.stderr.write("skipped: {} has no pytest\n".format(sys.executable))
        return 77
    return 0 if unittest.main(exit=False).result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
