#!/usr/bin/python3
"""Tests of the program recorder (python/mps_audit_record.py) with the Python that has the linked torch: what it keeps
of each call (phase, site, count, values or a description), and what it writes when the program fails.

    /usr/bin/python3 tests/recorder_test.py
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
    return torch.load(path)


class Recorder(unittest.TestCase):
    def setUp(self):
        warnings.simplefilter("ignore")  # complex32's "experimental" notice
        self.dir = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.dir.name, "calls.pt")

    def tearDown(self):
        self.dir.cleanup()

    def calls(self, doc, op):
        return [c for c in doc["calls"] if c["op"] == op]

    def test_identical_calls_are_kept_once_with_their_count_and_sites(self):
        x = torch.ones(3, 4)
        with rec.recording(self.path):
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


if __name__ == "__main__":
    unittest.main()
