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

    def test_a_python_file_of_tools_over_700_lines_is_a_finding(self):
        root = self.tree({
            "tools/long.py": "\n" * 701,
            "tools/fits.py": "\n" * 700,
            "tools/expectations/deep.py": "\n" * 702,
            "tests/long_test.py": "\n" * 900,  # tests are not held to it
        })
        self.assertEqual(check_layers.check(root), [
            "tools/expectations/deep.py: 702 lines, over 700",
            "tools/long.py: 701 lines, over 700",
        ])

    @staticmethod
    def function(name, lines, head="void {}() {{\n"):
        """A function of `lines` lines, its signature and closing brace included, a lambda and a block inside."""
        body = ["  auto f = [&](int x) {", "    return x;", "  };"]
        body += ["  if (true) {", "  }"] * ((lines - 5) // 2)
        body += ["  int y = 0;"] * (lines - 5 - len(body) + 3)
        return head.format(name) + "\n".join(body) + "\n}\n"

    def test_a_function_over_150_lines_is_a_finding(self):
        self.assertEqual([self.function("f", n).count("\n") for n in (150, 151, 200)], [150, 151, 200])
        root = self.tree({
            "run/a.cc": "namespace mps_audit {\n" + self.function("fits", 150) + "\n" + self.function("long", 151) +
                        "}  // namespace mps_audit\n",
            "run/a_test.cc": self.function("test", 300),  # tests are not held to it
        })
        self.assertEqual(check_layers.check(root), ["run/a.cc:153: function long is 151 lines, over 150"])

    def test_a_function_is_counted_from_its_signature_to_its_closing_brace(self):
        head = "template <typename T>\nstd::vector<T> Plan::{}(const std::string& s,\n" \
               "                   const std::vector<int>& v = {{}}) const {{\n"
        text = "namespace mps_audit {\nnamespace {\n\n" + self.function("spread", 149, head) + \
            "}  // namespace\n}  // namespace mps_audit\n"
        self.assertEqual(check_layers.check(self.tree({"probe/b.cc": text})),
                         ["probe/b.cc:4: function Plan::spread is 151 lines, over 150"])

    def test_braces_in_strings_comments_and_initializers_are_not_functions(self):
        text = (
            "namespace mps_audit {\n"
            "const std::map<std::string, std::function<void()>> kTable = {\n" + "    {\"a\", [] {}},\n" * 160 +
            "};\n"
            "const char* kCss = R\"css(\na:hover(x) {\n" + "  color: red;\n" * 160 + "}\n)css\";\n"
            "// void commented() {\n"
            "bool opens(char c) { return c == '{' || c == '\"'; }\n"
            "struct Counter : Base<void(int)> {\n"
            "  explicit Counter(int n) : n_{n}, seen_(0) {\n    const char* js = R\"js(\n}\n)js\";\n" +
            "    n_ += 1;\n" * 150 + "  }\n"
            "  int n_{0};\n"
            "  int seen_;\n"
            "};\n"
            "}  // namespace mps_audit\n")
        self.assertEqual(check_layers.check(self.tree({"report/c.cc": text})), [
            "report/c.cc:331: function Counter is 155 lines, over 150",
        ])

    def test_a_marked_flag_table_of_the_command_line_is_exempt_and_only_there(self):
        head = "int {}(int argc, char** argv) {{\n  run->add_option(\"--jobs\", jobs, \"Workers\");\n"
        marked = "// layers: flag table\n" + self.function("main", 200, head)
        root = self.tree({
            "cli/main.cc": "namespace {\nvoid helper() {}\n}  // namespace\n\n" + marked,
            "commands/run.cc": "// layers: flag table\n\n" + self.function("table", 151),
            "commands/merge.cc": "// layers: flag table\n" + self.function("no_flags", 151),
            "model/m.cc": marked,
        })
        self.assertEqual(check_layers.check(root), [
            "model/m.cc:1: a flag table is exempt only in cli/ and commands/",
            "model/m.cc:2: function main is 201 lines, over 150",
            "commands/merge.cc:1: a flag table declares flags (add_option, add_flag)",
            "commands/merge.cc:2: function no_flags is 151 lines, over 150",
            "commands/run.cc:3: function table is 151 lines, over 150",
            'commands/run.cc:1: "// layers: flag table" is not right before a function',
        ])

    def test_two_files_of_one_folder_that_include_each_other_are_a_finding(self):
        root = self.tree({
            "run/worker_main.cc": '#include "run/worker_main.h"\n#include "run/worker_process.h"\n',
            "run/worker_process.cc": '#include "run/worker_process.h"\n\n#include "run/worker_main.h"\n',
            "probe/probe_op.h": '#include "probe/compare.h"\n#include "probe/sample_probe.h"\n',
            "probe/sample_probe.h": '#include "probe/probe_op.h"\n',
            "probe/compare.cc": '#include "probe/compare.h"\n',  # one way only
            "model/a.cc": '#include "run/worker_main.h"\n',  # another folder
            "run/worker_main_test.cc": '#include "run/worker_process.h"\n',
        })
        self.assertEqual(check_layers.check(root), [
            "probe/probe_op.h:2: includes probe/sample_probe.h, and probe/sample_probe.h:1: includes probe/probe_op.h; "
            "files of one folder must not include each other",
            "run/worker_main.cc:2: includes run/worker_process.h, and run/worker_process.cc:3: includes "
            "run/worker_main.h; files of one folder must not include each other",
        ])

    def test_a_target_compared_with_a_target_name_outside_targets_is_a_finding(self):
        root = self.tree({
            "run/audit.cc": 'if (target == "mps-emu") x();\nif (o.target != "cuda") y();\n'
                            'if ("meta" == t.name) z();\nif (request.target.emulated()) w();\n',
            "emu/expected_verdicts.cc": 'if (requested == "auto") a();  // the flag --expectations, not a target\n'
                                        '// target == "mps" in a comment\n',
            "probe/recorded.cc": 'if (kwarg.toStringRef() == "cpu") b();  // a device argument\n',
            "model/audit.cc": 'if (env.target_name() == "mps") c();\n',
            "targets/targets.cc": 'if (request.target == "auto") d();\n',
            "common/target.cc": 'if (n == name) e();\n',
        })
        self.assertEqual(check_layers.check(root), [
            "run/audit.cc:{}: compares a target with a target's name; ask its Target (common/target.h)".format(n)
            for n in (1, 2, 3)
        ] + ["model/audit.cc:1: compares a target with a target's name; ask its Target (common/target.h)"])

    def test_this_tree_keeps_the_order(self):
        r = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "check_layers.py"), ROOT],
                           capture_output=True, text=True)
        self.assertEqual((r.returncode, r.stdout), (0, ""))


if __name__ == "__main__":
    unittest.main()
