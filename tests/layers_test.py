#!/usr/bin/env python3
"""Tests of tools/check_layers.py on small trees made here, and the check of this tree itself.

    python3 tests/layers_test.py
"""
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tools"))

import check_layers  # noqa: E402


class Layers(unittest.TestCase):
    def tree(self, files):
        d = tempfile.TemporaryDirectory()
        self.addCleanup(d.cleanup)
        for rel, text in files.items():
            path = os.path.join(d.name, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(text)
        return d.name

    def test_an_include_back_up_the_order_is_a_finding(self):
        root = self.tree({
            "common/a.h": '#include "common/b.h"\n#include "results/r.h"\n',
            "run/pool.cc": '#include "probe/probe_op.h"\n#include "common/a.h"\n',
            "common/b.cc": '#include "report/x.h"\n',
            "run/pool_test.cc": '#include "cli/anything.h"\n',  # tests may include anything
        })
        self.assertEqual(check_layers.check(root), [
            "common/a.h:2: common includes results/, which comes after it in the dependency order",
            "common/b.cc:1: common includes report/, which comes after it in the dependency order",
        ])

    def test_a_class_defined_in_two_files_is_a_finding_unless_file_local(self):
        root = self.tree({
            "probe/compare.h": "namespace mps_audit {\nstruct Comparison {\n  int a;\n};\n}  // namespace mps_audit\n",
            "results/compare.h": "namespace mps_audit {\nstruct Comparison {\n  int b;\n};\n}  // namespace mps_audit\n",
            "run/a.cc": "namespace mps_audit {\nnamespace {\nstruct Local {\n};\n}  // namespace\n}  // namespace mps_audit\n",
            "run/b.cc": "namespace mps_audit {\nnamespace {\nstruct Local {\n};\n}  // namespace\n"
                        "void f() {\n  struct Inner {\n  };\n}\n}  // namespace mps_audit\n",
            "model/c.cc": "namespace mps_audit {\nvoid g() {\n  struct Inner {\n  };\n}\n}  // namespace mps_audit\n",
        })
        self.assertEqual(check_layers.check(root), [
            "Comparison is defined in 2 files: results/compare.h:2, probe/compare.h:2",
        ])

    def test_a_library_file_over_700_lines_is_a_finding(self):
        root = self.tree({"run/long.cc": "\n" * 701, "run/fits.cc": "\n" * 700, "run/long_test.cc": "\n" * 900})
        self.assertEqual(check_layers.check(root), ["run/long.cc: 701 lines, over 700"])

    def test_this_tree_keeps_the_order(self):
        r = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "check_layers.py"), ROOT],
                           capture_output=True, text=True)
        self.assertEqual((r.returncode, r.stdout), (0, ""))


if __name__ == "__main__":
    unittest.main()
