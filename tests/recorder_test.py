#!/usr/bin/python3
"""Tests of the program recorders (python/mps_audit_record.py, Note [Two recorders]: the native one, and the Python
one it falls back to) with the Python that has the linked torch: what each keeps of each call (phase, site, count,
values or a description), that both keep the same, and what they write when the program fails.

    MPS_AUDIT_RECORDER_LIBRARY=build/libmps_audit_recorder.so /usr/bin/python3 tests/recorder_test.py
"""
import os
import sys
import tempfile
import unittest
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))

import torch  # noqa: E402

import mps_audit_record as rec  # noqa: E402


def load(path):
    return rec.load(path)


class Recorder(unittest.TestCase):
    """The tests of both recorders: this class runs them with the native one."""
    native = True

    def setUp(self):
        warnings.simplefilter("ignore")  # complex32's "experimental" notice
        self.dir = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.dir.name, "calls.pt")
        self.saved = rec._NATIVE
        if self.native:
            lib, why = rec.native_library()
            self.assertIsNotNone(lib, why)
        else:
            rec._NATIVE = (None, "MPS_AUDIT_RECORDER=python")

    def tearDown(self):
        rec._NATIVE = self.saved
        self.dir.cleanup()

    def calls(self, doc, op):
        return [c for c in doc["calls"] if c["op"] == op]

    def test_identical_calls_are_kept_once_with_their_count_and_sites(self):
        x = torch.ones(3, 4)
        with rec.recording(self.path, base=HERE):  # the program's folder: this file's
            for _ in range(5):
                torch.sin(x)  # the same call five times
            torch.sin(torch.ones(2, 2))  # another shape: another call
        doc = load(self.path)
        sins = self.calls(doc, "aten::sin")
        self.assertEqual(sorted(c["count"] for c in sins), [1, 5])
        five = [c for c in sins if c["count"] == 5][0]
        self.assertEqual(list(five["sites"].values()), [{"forward": 5}])  # site -> phase -> calls
        site = list(five["sites"])[0]
        self.assertTrue(site.split(":")[0].endswith("recorder_test.py"), site)
        self.assertEqual(doc["sources"][site], "torch.sin(x)  # the same call five times")
        self.assertEqual(five["phases"], {"forward": 5})
        self.assertTrue(torch.equal(five["args"]["self"], x))
        self.assertEqual(five["in_bytes"], 3 * 4 * 4)
        self.assertEqual(five["out_bytes"], 3 * 4 * 4)
        self.assertTrue(doc["complete"])
        self.assertEqual(doc["dropped"], {})

    def test_phases_forward_loss_backward_optimizer(self):
        lin = torch.nn.Linear(4, 2)
        opt = torch.optim.SGD(lin.parameters(), lr=0.1)
        with rec.recording(self.path):
            loss = torch.nn.CrossEntropyLoss()(lin(torch.randn(8, 4)), torch.tensor([0, 1] * 4))
            opt.zero_grad()
            loss.backward()
            opt.step()
        doc = load(self.path)
        phases = {}
        for c in doc["calls"]:
            for p in c["phases"]:
                phases.setdefault(p, set()).add(c["op"])
        self.assertIn("aten::addmm", phases["forward"])
        self.assertIn("aten::nll_loss_forward", phases["loss"])
        self.assertIn("aten::nll_loss_backward", phases["backward"])
        self.assertIn("aten::mm", phases["backward"])
        self.assertIn("aten::add_.Tensor", phases["optimizer"])
        self.assertNotIn("aten::add_.Tensor", phases.get("backward", set()))
        self.assertFalse(any(not c["op"].startswith("aten::") for c in doc["calls"]))  # the profiler's are left out
        self.assertEqual(doc["dropped"], {})

    def test_a_big_tensor_is_described_with_its_range(self):
        weight = torch.randn(10, 3)
        idx = torch.randint(2, 7, (40, 30))
        with rec.recording(self.path, max_numel=100):
            torch.nn.functional.embedding(idx.t(), weight)
        doc = load(self.path)
        [emb] = self.calls(doc, "aten::embedding")
        self.assertTrue(torch.equal(emb["args"]["weight"], weight))  # small: kept
        d = emb["args"]["indices"]["tensor"]
        self.assertEqual(d["shape"], [30, 40])
        self.assertEqual(d["strides"], [1, 30])
        self.assertEqual(d["dtype"], "int64")
        self.assertEqual((d["low"], d["high"]), (float(idx.min()), float(idx.max())))

    def test_values_are_taken_before_an_in_place_operator_writes_them(self):
        x = torch.zeros(3)
        with rec.recording(self.path):
            x.add_(1)
        [add] = self.calls(load(self.path), "aten::add_.Tensor")
        self.assertTrue(torch.equal(add["args"]["self"], torch.zeros(3)))

    def test_a_failing_block_writes_what_it_recorded_marked_incomplete(self):
        with self.assertRaises(ValueError):
            with rec.recording(self.path):
                torch.cos(torch.ones(2))
                raise ValueError("boom")
        doc = load(self.path)
        self.assertFalse(doc["complete"])
        self.assertEqual(doc["error"], "ValueError: boom")
        self.assertEqual(len(self.calls(doc, "aten::cos")), 1)

    def test_a_suites_calls_keep_the_test_and_phase_that_made_them(self):
        x = torch.ones(3)
        with rec.recording(self.path) as r:
            for test, when, n in (("test_a.py::test_one", "setup", 1), ("test_a.py::test_two", "call", 2)):
                r.context = (test, when)
                for _ in range(n):
                    torch.sin(x)  # one line, one distinct call
            r.context = None
            torch.cos(x)  # a program's call: no tests
        doc = load(self.path)
        [sin] = self.calls(doc, "aten::sin")
        site = list(sin["sites"])[0]
        self.assertEqual(sin["tests"], {"test_a.py::test_one": {"setup": {site: 1}},
                                        "test_a.py::test_two": {"call": {site: 2}}})
        [cos] = self.calls(doc, "aten::cos")
        self.assertNotIn("tests", cos)

    def test_a_value_libtorch_cannot_read_is_counted_not_kept(self):
        x = torch.ones(2, dtype=torch.complex32)
        with rec.recording(self.path):
            x.clone()
        doc = load(self.path)
        self.assertTrue(any("complex32" in k for k in doc["dropped"]), doc["dropped"])


    def test_a_call_inside_the_standard_library_is_the_programs_line_that_made_it(self):
        import copy
        layer = torch.nn.Linear(3, 2)
        with rec.recording(self.path, base=HERE):
            copy.deepcopy(layer)  # deepcopy clones the parameters inside copy.py
        doc = load(self.path)
        sites = {site for c in doc["calls"] for site in c["sites"]}
        self.assertTrue(sites, doc["calls"])
        for site in sites:
            self.assertTrue(site.split(":")[0].endswith("recorder_test.py"), sites)
        self.assertIn("copy.deepcopy(layer)  # deepcopy clones the parameters inside copy.py", doc["sources"].values())

    def test_a_call_from_no_frame_of_the_program_has_the_site_its_caller_sets(self):
        other = tempfile.TemporaryDirectory()  # the program's folder: no frame of this file is in it
        with rec.recording(self.path, base=other.name) as r:
            r.sites.default = "test_x.py:7"
            torch.sin(torch.ones(2))
        other.cleanup()
        [sin] = self.calls(load(self.path), "aten::sin")
        self.assertEqual(list(sin["sites"]), ["test_x.py:7"])


class PythonRecorder(Recorder):
    """The same tests with the recorder in Python (Note [Two recorders])."""
    native = False


class NativeRecorder(unittest.TestCase):
    def setUp(self):
        self.saved = rec._NATIVE
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        rec._NATIVE = self.saved
        self.dir.cleanup()

    def record(self, native, program):
        path = os.path.join(self.dir.name, "native.pt" if native else "python.pt")
        rec._NATIVE = self.saved if native else (None, "MPS_AUDIT_RECORDER=python")
        with rec.recording(path):
            program()
        return load(path)

    def test_both_recorders_keep_the_same_calls(self):
        def step():
            torch.manual_seed(0)
            model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU(), torch.nn.Flatten(),
                                        torch.nn.Linear(4 * 6 * 6, 5))
            opt = torch.optim.Adam(model.parameters(), lr=0.01)
            x, y = torch.randn(2, 3, 8, 8), torch.tensor([1, 3])
            for _ in range(3):
                loss = torch.nn.functional.cross_entropy(model(x), y)
                opt.zero_grad()
                loss.backward()
                opt.step()

        native, python = self.record(True, step), self.record(False, step)

        # A dispatch mode sees calls of its own making (autograd's detach of the outputs it saves, in torch 1.13), and
        # not those made inside torch.tensor() and the like below the Python key (at::empty, detach_): the recorders
        # differ in those only.
        internal = {"aten::detach", "aten::detach_", "aten::empty.memory_format"}

        def kept(doc):
            return sorted((c["op"], c["dtype"], c["count"], tuple(sorted(c["phases"].items())))
                          for c in doc["calls"] if c["op"] not in internal)

        self.assertEqual(kept(native), kept(python))
        self.assertGreater(len(kept(native)), 20)

    def test_a_program_runs_as_without_the_recorder(self):
        import numpy as np

        def legacy():
            t = torch.Tensor(np.ones((2, 2)))  # raises under a dispatch mode in torch 1.13
            self.assertEqual(t.sum().item(), 4)

        doc = self.record(True, legacy)
        self.assertTrue(doc["complete"], doc["error"])

    def test_a_profiler_inside_the_recording_sees_what_it_sees_without_it(self):
        # Note [Calls inside a recorded call]: the recorder silences RecordFunction inside the calls it records, but
        # not in a thread with callbacks of its own, the profiler's: its events are the same with the recorder.
        x, w = torch.randn(4, 8), torch.randn(8)

        def profiled():
            with torch.autograd.profiler.profile() as prof:
                torch.nn.functional.layer_norm(x, (8,), w)  # native_layer_norm makes calls of its own
                x.sum(dim=0).mul_(2)
            return sorted(e.name for e in prof.function_events)

        alone = profiled()
        with rec.recording(os.path.join(self.dir.name, "p.pt")) as r:
            recorded = profiled()
        self.assertTrue(r.native)
        self.assertEqual(recorded, alone)
        self.assertGreater(len(alone), 4)

    def test_a_library_built_against_another_libtorch_is_not_loaded(self):
        lib = rec._library_candidates()[0]
        other = os.path.join(self.dir.name, "libmps_audit_recorder.so")
        os.symlink(os.path.abspath(lib), other)
        with open(os.path.join(self.dir.name, "libmps_audit_recorder.json"), "w") as f:
            f.write('{"torch": "9.9.9", "c10": "/elsewhere/libc10.so"}')
        rec._NATIVE = None
        os.environ["MPS_AUDIT_RECORDER_LIBRARY"] = other
        try:
            said = []
            r = rec.new_recording(os.path.join(self.dir.name, "x.pt"), say=said.append)
        finally:
            os.environ["MPS_AUDIT_RECORDER_LIBRARY"] = lib
        self.assertFalse(r.native)
        self.assertEqual(len(said), 1)
        self.assertIn("built against libtorch 9.9.9 (/elsewhere/libc10.so)", said[0])


if __name__ == "__main__":
    unittest.main()
