#!/usr/bin/env python3
"""Checks tools/expectations/ (extract.py, opinfo_static.py, check_plain_pass.py) on the small fixtures of
tests/data/expectations/: a 2.x-style common_mps.py with OpInfo DecorateInfos, a 1.13.1-style TestConsistency, a tiny
native_functions.yaml and OpInfo database. Each test names the behaviour it holds the tool to.

usage: /usr/bin/python3 tests/expectations_extract_test.py  (stdlib only; no torch needed)"""
import ast
import io
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOLS = os.path.join(ROOT, "tools", "expectations")
DATA = os.path.join(ROOT, "tests", "data", "expectations")
sys.path.insert(0, TOOLS)

import aten_map  # noqa: E402
import extract  # noqa: E402
import opinfo_static  # noqa: E402
import sandbox  # noqa: E402

MPS_REL = "torch/testing/_internal/common_mps.py"
CMI_REL = "torch/testing/_internal/common_methods_invocations.py"
V1_REL = "test/test_mps.py"
LINE_ABS_ALLOW = "'abs': ['f16', 'f32', 'i16', 'u8']"
LINE_WHERE_BLOCK = "'where': [torch.bool]"


def line_of(path, needle):
    """The 1-based line of the first line of `path` that contains `needle`."""
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if needle in line:
                return n
    raise AssertionError(f"{needle!r} not in {path}")


def run_extract(source, release):
    """-> (rows as dicts, the TSV's text, what it printed, the accounting)."""
    registry = aten_map.Registry(os.path.join(DATA, "native_functions.yaml"),
                                 os.path.join(DATA, "mps_extra_registrations.tsv"))
    db = aten_map.load_opinfo_db(os.path.join(DATA, "opinfo_db.json"))
    lists = MPS_REL if source == "v2" else V1_REL
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "mps_expectations.tsv")
        printed = io.StringIO()
        _, acct = extract.extract(os.path.join(DATA, source), lists, db, registry, release, "the fixtures", out,
                                  stdout=printed)
        with open(out, encoding="utf-8") as f:
            text = f.read()
    rows = [dict(zip(extract.COLUMNS, line.split("\t"))) for line in text.splitlines() if not line.startswith("#")]
    return rows, text, printed.getvalue(), acct


def find(rows, **want):
    return [r for r in rows if all(r[k] == v for k, v in want.items())]


class V2Extraction(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.rows, cls.text, cls.printed, cls.acct = run_extract("v2", "9.9.9")
        cls.mps = os.path.join(DATA, "v2", MPS_REL)
        cls.cmi = os.path.join(DATA, "v2", CMI_REL)

    def one(self, **want):
        found = find(self.rows, **want)
        self.assertEqual(len(found), 1, f"{want}: {found}")
        return found[0]

    def test_maps_a_key_through_aten_name_and_adds_the_inplace_variant(self):
        r = self.one(operator="aten::pow", list="UNIMPLEMENTED_XFAILLIST")
        self.assertEqual((r["dtypes"], r["kind"], r["scope"], r["macos"], r["opinfo"], r["mapping"]),
                         ("bool", "unimplemented", "forward", "*", "pow", "aten_name"))
        self.assertEqual(self.one(operator="aten::abs_", list="UNIMPLEMENTED_XFAILLIST")["mapping"], "inplace")
        self.assertEqual(self.one(operator="aten::abs", list="UNIMPLEMENTED_XFAILLIST")["mapping"], "aten_name")
        # aten_name 'masked.quantile' is no operator, the op callable's name is
        self.assertEqual(self.one(opinfo="masked.quantile", list="ON_MPS_XFAILLIST")["operator"], "aten::quantile")
        self.assertEqual(self.one(opinfo="masked.quantile", list="ON_MPS_XFAILLIST")["mapping"], "op")
        # neither aten_name nor op: the name's last dotted part
        self.assertEqual(self.one(opinfo="linalg.sort", list="ON_MPS_XFAILLIST")["operator"], "aten::sort")
        self.assertEqual(self.one(opinfo="linalg.sort", list="ON_MPS_XFAILLIST")["mapping"], "name")

    def test_keeps_unmappable_keys_as_rows_that_say_why(self):
        self.assertEqual(self.one(opinfo="nn.functional.foo")["operator"], "-")
        self.assertEqual(self.one(opinfo="nn.functional.foo")["mapping"],
                         "unmappable: no OpInfo with key 'nn.functional.foo' in the database")
        self.assertEqual(self.one(opinfo="H", list="UNIMPLEMENTED_XFAILLIST")["mapping"],
                         "unmappable: no operator 'H' in the registry")

    def test_dtype_labels(self):
        self.assertEqual(self.one(operator="aten::abs", list="UNIMPLEMENTED_XFAILLIST")["dtypes"], "float16,uint8")
        self.assertEqual(self.one(opinfo="nn.functional.foo")["dtypes"], "*")
        self.assertEqual(self.one(operator="aten::rand_like", list="UNDEFINED_XFAILLIST")["dtypes"],
                         "float32,float16")

    def test_kinds_by_list_and_comment_keyword(self):
        self.assertEqual(self.one(operator="aten::empty", list="EMPTY_OPS_SKIPLIST")["kind"], "not_a_bug")
        self.assertEqual(self.one(operator="aten::rand_like", list="UNDEFINED_XFAILLIST")["kind"], "not_a_bug")
        self.assertEqual(self.one(operator="aten::conv3d", list="SKIPLIST")["kind"], "crash")
        self.assertEqual(self.one(operator="aten::mul", list="ON_MPS_XFAILLIST")["kind"], "error")  # "Exception:"
        self.assertEqual(self.one(opinfo="linalg.sort", list="ON_MPS_XFAILLIST")["kind"], "crash")  # "hangs"
        self.assertEqual(self.one(opinfo="masked.quantile", list="ON_MPS_XFAILLIST")["kind"], "wrong")
        self.assertEqual(self.one(operator="aten::sort", list="MACOS_BEFORE_14_4_XFAILLIST")["kind"], "wrong")
        self.assertEqual(self.one(operator="aten::pow", list="XFAILLIST_GRAD")["kind"], "wrong")  # "precision"
        self.assertEqual(self.one(operator="aten::abs", list="XFAILLIST_GRAD")["kind"], "error")
        self.assertEqual(self.one(operator="aten::sort", list="XFAILLIST")["kind"], "unimplemented")
        self.assertEqual(self.one(operator="aten::mul", list="XFAILLIST")["kind"], "error")

    def test_scopes(self):
        self.assertEqual(self.one(operator="aten::pow", list="XFAILLIST_GRAD")["scope"], "gradient")
        self.assertEqual(self.one(operator="aten::mul", list="XFAILLIST")["scope"], "error_inputs")
        self.assertEqual(self.one(operator="aten::mul", list="XFAILLIST")["dtypes"], "*")
        sparse = self.one(operator="aten::add", list="UNIMPLEMENTED_XFAILLIST_SPARSE")
        self.assertEqual((sparse["scope"], sparse["dtypes"]), ("sparse", "*"))
        # What the sparse run shares with the plain one is not repeated under sparse.
        self.assertEqual(find(self.rows, scope="sparse", operator="aten::pow"), [])

    def test_macos_conditions(self):
        self.assertEqual(self.one(operator="aten::sort", list="MACOS_BEFORE_14_4_XFAILLIST")["macos"], "<14.4")
        self.assertEqual(self.one(operator="aten::mul", list="MACOS_AFTER_13_1_XFAILLIST")["macos"], ">=13.2")
        self.assertEqual(self.one(operator="aten::quantile", list="UNIMPLEMENTED_XFAILLIST")["macos"], "<15.0")
        scatter = find(self.rows, operator="aten::scatter_reduce", list="UNIMPLEMENTED_XFAILLIST")
        self.assertEqual(sorted((r["dtypes"], r["macos"]) for r in scatter), [("int32", "<15.0"), ("int64", "*")])

    def test_reasons_from_comments(self):
        group = "Failures due to lack of op implementation on MPS backend"
        self.assertEqual(self.one(operator="aten::pow", list="UNIMPLEMENTED_XFAILLIST")["reason"], group)
        # the commented-out entry between the group comment and abs is no reason
        self.assertEqual(self.one(operator="aten::abs", list="UNIMPLEMENTED_XFAILLIST")["reason"], group)
        self.assertEqual(self.one(operator="aten::mul", list="MACOS_AFTER_13_1_XFAILLIST")["reason"],
                         "inconsistency errors between cpu and mps")
        self.assertEqual(self.one(operator="aten::quantile", list="UNIMPLEMENTED_XFAILLIST")["reason"],
                         "Quantile needs macOS 15")
        self.assertEqual(self.one(operator="aten::sort", list="MACOS_BEFORE_14_4_XFAILLIST")["reason"],
                         "These ops work fine in 14.4 but fail in 14.2 or 13.x")

    def test_source_lines(self):
        pow_line = line_of(self.mps, '"pow": [torch.bool]')
        quantile_line = line_of(self.mps, '{"quantile": None}')
        mul_line = line_of(self.mps, '            "mul",')
        self.assertEqual(self.one(operator="aten::pow", list="UNIMPLEMENTED_XFAILLIST")["source"],
                         f"{MPS_REL}:{pow_line}")
        self.assertEqual(self.one(operator="aten::quantile", list="UNIMPLEMENTED_XFAILLIST")["source"],
                         f"{MPS_REL}:{quantile_line}")
        self.assertEqual(self.one(operator="aten::mul", list="XFAILLIST")["source"], f"{MPS_REL}:{mul_line}")

    def test_global_rows(self):
        r = self.one(operator="*", scope="forward")
        self.assertEqual((r["dtypes"], r["kind"], r["list"], r["mapping"], r["macos"]),
                         ("float64,complex128", "unimplemented", "global: float64/complex128", "global", "*"))
        self.assertEqual(r["source"], f"{MPS_REL}:{line_of(self.mps, 'dtypes=[torch.double, torch.cdouble]')}")
        s = self.one(operator="*", scope="sparse")
        self.assertEqual((s["dtypes"], s["list"], s["reason"]),
                         ("complex128", "global: complex128", "Skipped due to MPS not supporting complex128 tensors"))

    def test_complex_rule_reaches_only_opinfos_outside_the_set(self):
        r = self.one(operator="aten::pow", list="SUPPORTED_COMPLEX_OPS (not in it)")
        self.assertEqual((r["dtypes"], r["kind"]), ("complex64,complex32", "unimplemented"))
        self.assertEqual(r["reason"], "If ops is not supported for complex types, expect it to fail")
        self.assertEqual(find(self.rows, opinfo="abs", list="SUPPORTED_COMPLEX_OPS (not in it)"), [])
        self.assertEqual(find(self.rows, opinfo="add", list="SUPPORTED_COMPLEX_OPS (not in it)"), [])
        self.assertEqual(len(find(self.rows, opinfo="addv1", list="SUPPORTED_COMPLEX_OPS (not in it)")), 2)

    def test_opinfo_decorators(self):
        r = self.one(operator="aten::abs", list="OpInfo decorator")
        self.assertEqual((r["dtypes"], r["kind"], r["scope"]), ("bool", "unimplemented", "forward"))
        self.assertEqual(r["reason"], 'NotImplementedError: "abs_cpu" not implemented for \'Bool\'')
        self.assertEqual(r["source"], f"{CMI_REL}:{line_of(self.cmi, 'dtypes=(torch.bool,)') - 1}")
        # A test_output_grad_match skip: gradient only, and only in the dtypes a gradient test runs in.
        p = self.one(operator="aten::pow", list="OpInfo decorator", scope="gradient")
        self.assertEqual((p["dtypes"], p["kind"], p["scope"]), ("float16", "crash", "gradient"))
        # TestConsistency runs on MPS only, so a DecorateInfo for it needs no device_type.
        m = self.one(operator="aten::pow", list="OpInfo decorator", scope="forward")
        self.assertEqual((m["dtypes"], m["kind"]), ("int64", "wrong"))
        # Reached through a helper function that builds the OpInfo.
        self.assertEqual(self.one(operator="aten::sort", list="OpInfo decorator")["opinfo"], "sortstable")

    def test_accounting(self):
        figures = {key: (a.entries, a.rows, len(a.unmappable), a.na_count()) for key, a in self.acct.lists.items()}
        self.assertEqual(figures[("UNIMPLEMENTED_XFAILLIST", "forward")], (7, 8, 2, 1))
        self.assertEqual(figures[("OpInfo decorator", "forward")], (5, 4, 0, 2))
        self.assertEqual(figures[("SUPPORTED_COMPLEX_OPS", "forward")], (2, 0, 0, 2))
        self.assertEqual(figures[("SUPPORTED_COMPLEX_OPS (not in it)", "forward")], (20, 22, 3, 0))
        self.assertEqual(figures[("XFAILLIST", "error_inputs")], (2, 2, 0, 0))
        self.assertIn("not applicable (it names no dtype): 1: mulempty", self.printed)
        self.assertIn("unmappable: H nn.functional.foo", self.printed)
        self.assertIn("not applicable (for TestCommon.test_out): 1:", self.printed)
        self.assertIn("# 51 list entries -> 54 rows; 5 entries unmappable, 5 not applicable", self.text)

    def test_format(self):
        lines = self.text.splitlines()
        self.assertEqual(lines[0], "# mps-audit-expectations/1")
        self.assertEqual(lines[1], "# release: 9.9.9")
        self.assertEqual(lines[4], "# " + "\t".join(extract.COLUMNS))
        body = [line for line in lines if not line.startswith("#")]
        self.assertEqual(len(body), 54)
        self.assertTrue(all(len(line.split("\t")) == 10 for line in body))
        keys = [(r["operator"], r["source"].rsplit(":", 1)[0], int(r["source"].rsplit(":", 1)[1])) for r in self.rows]
        self.assertEqual(keys, sorted(keys))

    def test_deterministic(self):
        self.assertEqual(run_extract("v2", "9.9.9")[1], self.text)


class V1Extraction(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.rows, cls.text, cls.printed, cls.acct = run_extract("v1", "1.13.1")
        cls.src = os.path.join(DATA, "v1", V1_REL)

    def one(self, **want):
        found = find(self.rows, **want)
        self.assertEqual(len(found), 1, f"{want}: {found}")
        return found[0]

    def test_allow_lists_become_passes_less_what_blocklist_takes(self):
        fwd = self.one(operator="aten::abs", list="ALLOWLIST_OP")
        self.assertEqual((fwd["dtypes"], fwd["kind"], fwd["scope"]), ("float32,float16,uint8", "passes", "forward"))
        self.assertEqual(fwd["source"], f"{V1_REL}:{line_of(self.src, LINE_ABS_ALLOW)}")
        grad = self.one(operator="aten::abs", list="ALLOWLIST_OP_GRAD")
        self.assertEqual((grad["dtypes"], grad["scope"]), ("float32,float16", "gradient"))
        self.assertEqual(self.one(operator="aten::abs_", list="ALLOWLIST_OP")["mapping"], "inplace")
        # 'add' covers every OpInfo named add: the unblocked variants v1 and v2 keep uint8 and bool.
        self.assertEqual(self.one(operator="aten::add", list="ALLOWLIST_OP")["dtypes"], "float32,uint8,bool")
        # every variant of div is blocked as flaky: no passes row, counted as not applicable
        self.assertEqual(find(self.rows, operator="aten::div", list="ALLOWLIST_OP"), [])
        self.assertIn("not applicable (every dtype it names is blocked by BLOCKLIST): 1: div", self.printed)
        # nn.functional.pad: padconstant is blocked, padreflect maps to nothing
        self.assertEqual(self.one(opinfo="nn.functional.pad")["operator"], "-")

    def test_blocklist_groups_decide_kinds(self):
        self.assertEqual(self.one(operator="aten::masked_fill")["kind"], "crash")  # hang
        self.assertEqual(self.one(operator="aten::masked_fill")["dtypes"], "uint8,bool")
        self.assertEqual(self.one(operator="aten::abs", list="BLOCKLIST")["kind"], "crash")  # hard crash
        add = self.one(operator="aten::add", list="BLOCKLIST")
        self.assertEqual((add["kind"], add["dtypes"]), ("error", "uint8,bool"))  # 'torch.bool' strings
        div = find(self.rows, operator="aten::div", list="BLOCKLIST")
        self.assertEqual(sorted((r["opinfo"], r["kind"], r["dtypes"]) for r in div),
                         [("divno_rounding_mode", "flaky", "*"), ("divtrunc_rounding", "flaky", "*")])
        self.assertEqual(find(self.rows, opinfo="nn.functional.padconstant"), [])
        self.assertIn("not applicable ('ALLOW_LIST doesn't know about variants'", self.printed)

    def test_crashes_only_with_grad_are_of_the_gradient(self):
        # "+ forward when requires_grad=True or running backward": a floating-point dtype (which alone can require
        # grad) crashes in the gradient test, not in a plain forward call.
        pow_ = self.one(operator="aten::pow", list="BLOCKLIST")
        self.assertEqual((pow_["scope"], pow_["dtypes"]), ("gradient", "float16"))

    def test_blocklist_reasons_carry_their_group(self):
        self.assertEqual(self.one(operator="aten::pow")["reason"],
                         "Functions that hang: + forward when requires_grad=True or running backward")
        self.assertEqual(self.one(operator="aten::sort")["reason"],
                         "Functions that hard crash: moved from section below")
        self.assertEqual(self.one(opinfo="where")["reason"], "Functions that hang")
        self.assertEqual(self.one(opinfo="where")["source"], f"{V1_REL}:{line_of(self.src, LINE_WHERE_BLOCK)}")

    def test_accounting(self):
        figures = {key: (a.entries, a.rows, len(a.unmappable), a.na_count()) for key, a in self.acct.lists.items()}
        self.assertEqual(figures[("ALLOWLIST_OP", "forward")], (5, 6, 2, 1))
        self.assertEqual(figures[("BLOCKLIST", "forward")], (9, 10, 2, 1))
        self.assertEqual(figures[("BLOCKLIST", "gradient")], (1, 1, 0, 0))  # pow float16: see below
        self.assertNotIn(("OpInfo decorator", "forward"), figures)  # no common_methods_invocations.py here


class Sandbox(unittest.TestCase):
    def test_macos_conditions(self):
        points = [12.3, 13.0, 13.3, 14.0, 15.0, 26.0]
        self.assertEqual(sandbox.macos_conditions(set(points), points), ["*"])
        self.assertEqual(sandbox.macos_conditions({13.3, 14.0}, points), [">=13.3,<15.0"])
        self.assertEqual(sandbox.macos_conditions({12.3}, points), ["<13.0"])
        self.assertEqual(sandbox.macos_conditions({15.0, 26.0}, points), [">=15.0"])
        self.assertEqual(sandbox.macos_conditions({12.3, 15.0}, points), ["<13.0", ">=15.0,<26.0"])

    def test_thresholds_of_strict_comparisons_move_to_the_next_minor(self):
        tree = ast.parse("a = MACOS_VERSION > 15.0\nb = MACOS_VERSION < 14.4\n"
                         "c = torch.backends.mps.is_macos13_or_newer(2)")
        self.assertEqual(sorted(sandbox.macos_thresholds(tree)), [13.2, 14.4, 15.1])

    def test_points_always_include_the_floor_and_the_major_releases(self):
        self.assertEqual(sandbox.macos_points(ast.parse("x = 1")), [12.3, 13.0, 14.0, 15.0, 26.0])

    def test_dtype_labels(self):
        self.assertEqual([sandbox.dtype_label(x) for x in ("torch.half", "f16", "b8", "cdouble", "torch.float32")],
                         ["float16", "float16", "bool", "complex128", "float32"])


class DecoratorScopes(unittest.TestCase):
    """Where a release instantiates TestConsistency for device 'cpu' (1.13.1, 2.6.0), its device_type='mps'
    DecorateInfos never apply; device-less ones do."""

    @staticmethod
    def info(cls, test, device, dtypes=None):
        return {"cls": cls, "test": test, "device": device, "dtypes": dtypes}

    def test_test_consistency_on_cpu(self):
        cpu = {"TestConsistency": "cpu", "TestErrorInputs": "mps"}
        self.assertEqual(extract.decorator_scopes(self.info("TestConsistency", None, "mps"), cpu),
                         "TestConsistency runs as device 'cpu' in this release")
        self.assertEqual(extract.decorator_scopes(self.info("TestConsistency", None, None), cpu),
                         ["forward", "gradient"])
        self.assertEqual(extract.decorator_scopes(self.info(None, None, "mps"), cpu), ["error_inputs"])

    def test_test_consistency_on_mps(self):
        self.assertEqual(extract.decorator_scopes(self.info("TestConsistency", "test_output_grad_match", "mps"), {}),
                         ["gradient"])
        self.assertEqual(extract.decorator_scopes(self.info(None, None, "mps", "(torch.half,)"), {}),
                         ["forward", "gradient"])
        self.assertEqual(extract.decorator_scopes(self.info("TestCommon", "test_out", "mps"), {}),
                         "for TestCommon.test_out")


class StaticOpInfos(unittest.TestCase):
    def test_parses_calls_generators_and_helpers(self):
        registry = aten_map.Registry(os.path.join(DATA, "native_functions.yaml"))
        opinfos, parser = opinfo_static.parse(os.path.join(DATA, "v2"), registry)
        keys = sorted(op["name"] + op["variant"] for op in opinfos)
        self.assertEqual(keys, ["abs", "addv1", "addv2", "pow", "sortstable"])
        abs_ = next(op for op in opinfos if op["name"] == "abs")
        self.assertEqual((abs_["aten_name"], abs_["op"], abs_["inplace"]), ("abs", "abs", "abs_"))
        self.assertEqual(parser.stray_mps_decorators(), [])

    def test_compare_with_a_live_database(self):
        registry = aten_map.Registry(os.path.join(DATA, "native_functions.yaml"))
        static = opinfo_static.to_db(opinfo_static.parse(os.path.join(DATA, "v2"), registry)[0], "9.9.9")
        live = aten_map.load_opinfo_db(os.path.join(DATA, "opinfo_db.json"))
        r = opinfo_static.compare(static, live, registry)
        self.assertEqual((r["static"], r["live"], r["both"], r["same_mapping"]), (5, 22, 5, 5))
        self.assertEqual(r["only_static"], [])
        self.assertIn("nn.functional.padconstant", r["only_live"])


class CheckPlainPass(unittest.TestCase):
    TSV = "\n".join([
        "# mps-audit-expectations/1",
        "*\tfloat64,complex128\tunimplemented\tforward\t*\tglobal: float64/complex128\t*\tglobal\tx:1\t",
        "aten::pow\tbool\tunimplemented\tforward\t*\tUNIMPLEMENTED_XFAILLIST\tpow\taten_name\tx:2\t",
        "aten::sort\tcomplex64\twrong\tforward\t<14.4\tMACOS_BEFORE_14_4_XFAILLIST\tsort\taten_name\tx:3\t",
        "aten::mul.Tensor\tint64\terror\tforward\t*\tON_MPS_XFAILLIST\tmul\top\tx:4\t",
        "aten::abs\t*\terror\tgradient\t*\tXFAILLIST_GRAD\tabs\taten_name\tx:5\t",
        "aten::rand_like\t*\tnot_a_bug\tforward\t*\tUNDEFINED_XFAILLIST\trand_like\taten_name\tx:6\t",
        "-\t*\tcrash\tforward\t*\tSKIPLIST\tH\tunmappable: no operator 'H' in the registry\tx:7\t",
    ]) + "\n"
    RECORDS = [
        {"op": "aten::pow.Tensor_Scalar", "dtype": "bool", "verdict": "pass"},
        {"op": "aten::pow.Tensor_Scalar", "dtype": "float32", "verdict": "pass"},
        {"op": "aten::sort", "dtype": "complex64", "verdict": "pass"},
        {"op": "aten::mul.Tensor", "dtype": "int64", "verdict": "mismatch"},
        {"op": "aten::mul.Scalar", "dtype": "int64", "verdict": "pass"},
        {"op": "aten::abs", "dtype": "float32", "verdict": "pass"},
        {"op": "aten::rand_like", "dtype": "float32", "verdict": "pass"},
        {"op": "aten::add.Tensor", "dtype": "float64", "verdict": "unsupported"},
    ]

    def run_tool(self, *args):
        with tempfile.TemporaryDirectory() as d:
            tsv, res = os.path.join(d, "e.tsv"), os.path.join(d, "results.json")
            with open(tsv, "w") as f:
                f.write(self.TSV)
            with open(res, "w") as f:
                json.dump({"results": self.RECORDS}, f)
            return subprocess.run([sys.executable, os.path.join(TOOLS, "check_plain_pass.py"), res, tsv, *args],
                                  capture_output=True, text=True)

    def test_counts_and_lists_the_passes(self):
        run = self.run_tool("--macos", "14.0")
        self.assertEqual(run.returncode, 0, run.stderr)
        # pow bool (base name), sort complex64 (<14.4 holds), mul.Tensor int64 (full name), add float64 (global)
        self.assertIn("4 of 8 op x dtype records are expected to fail on MPS (macOS 14.0); 2 of them pass (50.0%)",
                      run.stdout)
        self.assertIn("  aten::pow.Tensor_Scalar bool: unimplemented (UNIMPLEMENTED_XFAILLIST pow, x:2)", run.stdout)
        self.assertIn("  aten::sort complex64: wrong", run.stdout)

    def test_macos_condition_and_global_flag(self):
        run = self.run_tool("--macos", "15.0", "--no-global")
        self.assertIn("2 of 8 op x dtype records are expected to fail on MPS (macOS 15.0); 1 of them pass (50.0%)",
                      run.stdout)
        self.assertNotIn("aten::sort", run.stdout)

    def test_bad_input_exits_2(self):
        run = subprocess.run([sys.executable, os.path.join(TOOLS, "check_plain_pass.py"), "/nonexistent.json",
                              "/nonexistent.tsv", "--macos", "14.0"], capture_output=True, text=True)
        self.assertEqual(run.returncode, 2)


if __name__ == "__main__":
    unittest.main()
