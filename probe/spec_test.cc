// Tests of the op spec loader: what it reads, and one diagnostic with file:line:col for each kind of bad input.
#include "probe/spec.h"

#include <gtest/gtest.h>

#include "registry/native_functions.h"
#include "registry/static_registry.h"
#include "test_support.h"

namespace mps_audit {
namespace {

const std::vector<std::string> kOps = {"aten::sin",     "aten::sin.out", "aten::sum", "aten::sum.dim_IntList",
                                       "aten::nonzero", "aten::rand"};

TEST(Spec, ReadsDefaultsAndEntries) {
  const Spec s = parse_spec(R"(
version: 1
defaults:
  dtypes: [float32, int64]
  shape: [2, 5]
  tolerance: {float16: {atol: 1e-3, rtol: 1e-3}}
ops:
  sin: {compare: sorted, tolerance: {atol: 0.5, rtol: 0}}
  aten::sum.dim_IntList:
    dtypes: [float32]
    xfail:
      - {reason: known, targets: [mps-emu], dtypes: [float32]}
    samples:
      - name: rows
        args: {self: {shape: [4, 3], domain: positive}, dim: [0], keepdim: true}
      - args: {self: {tensors: [{shape: [1]}]}}
  aten::rand: {skip: random}
)",
                            "s.yaml", kOps);
  EXPECT_EQ(s.dtypes, std::vector<std::string>({"float32", "int64"}));
  EXPECT_EQ(s.shape, std::vector<int64_t>({2, 5}));
  const OpSpec* sin = s.find("aten::sin.out");  // the bare name covers every overload
  ASSERT_NE(sin, nullptr);
  EXPECT_EQ(sin->compare, CompareMode::kSorted);
  EXPECT_DOUBLE_EQ(s.tolerance_for(sin, "int64")->atol, 0.5);
  EXPECT_DOUBLE_EQ(s.tolerance_for(nullptr, "float16")->rtol, 1e-3);
  EXPECT_EQ(s.tolerance_for(nullptr, "float32"), nullptr);
  const OpSpec* sum = s.find("aten::sum.dim_IntList");
  ASSERT_NE(sum, nullptr);
  EXPECT_EQ(s.find("aten::sum"), nullptr);
  ASSERT_EQ(sum->samples.size(), 2u);
  EXPECT_EQ(sum->samples[0].name, "rows");
  EXPECT_EQ(sum->samples[1].name, "sample1");
  const ArgSpec& self = sum->samples[0].args.at("self");
  EXPECT_EQ(self.kind, ArgSpec::Kind::kTensor);
  EXPECT_EQ(self.shape, std::vector<int64_t>({4, 3}));
  EXPECT_EQ(self.domain, "positive");
  EXPECT_EQ(sum->samples[0].args.at("dim").kind, ArgSpec::Kind::kIntList);
  EXPECT_EQ(sum->samples[0].args.at("keepdim").kind, ArgSpec::Kind::kBool);
  EXPECT_EQ(sum->samples[1].args.at("self").kind, ArgSpec::Kind::kTensorList);
  ASSERT_EQ(sum->xfail.size(), 1u);
  EXPECT_EQ(sum->xfail[0].targets, std::vector<std::string>({"mps-emu"}));
  EXPECT_EQ(s.find("aten::rand")->skip, "random");
}

TEST(Spec, ConditionsOnTargetDtypeMacosAndTorchVersion) {
  const Spec s = parse_spec(R"(
ops:
  sin:
    skip:
      - {reason: no bfloat16 before macOS 14, targets: [mps, mps-emu], dtypes: [bfloat16], macos: {max: 13}}
    xfail:
      - {reason: wrong before 2.1, torch: {max: "2.0.1"}}
      - {reason: wrong on 14 and 15, macos: {min: 14, max: 15}, torch: {min: "2.1"}}
)",
                            "s.yaml", kOps);
  const OpSpec* sin = s.find("aten::sin");
  ASSERT_EQ(sin->skip_when.size(), 1u);
  const KnownFailure& skip = sin->skip_when[0];
  EXPECT_TRUE(skip.applies("mps-emu", "bfloat16", 13, "1.13.0"));
  EXPECT_FALSE(skip.applies("mps-emu", "bfloat16", 14, "1.13.0"));  // macOS out of range
  EXPECT_FALSE(skip.applies("mps-emu", "float16", 13, "1.13.0"));   // other dtype
  EXPECT_FALSE(skip.applies("cuda", "bfloat16", 0, "1.13.0"));      // other target, and no macOS
  ASSERT_EQ(sin->xfail.size(), 2u);
  EXPECT_TRUE(sin->xfail[0].applies("cuda", "float32", 0, "1.13.0"));
  EXPECT_TRUE(sin->xfail[0].applies("cuda", "float32", 0, "2.0.1"));
  EXPECT_FALSE(sin->xfail[0].applies("cuda", "float32", 0, "2.11.0"));
  EXPECT_TRUE(sin->xfail[1].applies("mps", "float32", 15, "2.11.0"));
  EXPECT_FALSE(sin->xfail[1].applies("mps", "float32", 15, "2.0.0"));
  EXPECT_FALSE(sin->xfail[1].applies("cpu", "float32", 0, "2.11.0"));  // a macOS condition needs a macOS
}

TEST(Spec, ReadsUniqueIndicesLayoutsAndQuantizedTensors) {
  const Spec s = parse_spec(R"(
ops:
  sin:
    samples:
      - args: {self: {shape: [3], domain: index, high: 5, unique: true}}
      - args: {self: {shape: [2, 3], layout: sparse_csr}}
      - args: {self: {shape: [4], quantized: {dtype: quint8, scale: 0.25, zero_point: 3}}}
)",
                            "s.yaml", kOps);
  const auto& samples = s.find("aten::sin")->samples;
  ASSERT_EQ(samples.size(), 3u);
  EXPECT_TRUE(samples[0].args.at("self").unique);
  EXPECT_EQ(samples[0].args.at("self").layout, "strided");
  EXPECT_EQ(samples[1].args.at("self").layout, "sparse_csr");
  const ArgSpec& q = samples[2].args.at("self");
  EXPECT_EQ(q.quantized, "quint8");
  EXPECT_DOUBLE_EQ(q.scale, 0.25);
  EXPECT_EQ(q.zero_point, 3);
  EXPECT_TRUE(samples[0].args.at("self").quantized.empty());
}

// An entry for other libtorch versions is ignored, its operator unchecked; one for this version is read and checked.
TEST(Spec, EntriesForOtherTorchVersionsAreIgnored) {
  const std::string text = R"(
ops:
  aten::gone_in_2:
    torch: {max: "1.13.1"}
    skip: removed
  aten::sin:
    torch: {min: "2.0"}
    skip: newer
)";
  const Spec old = parse_spec(text, "s.yaml", {"aten::gone_in_2", "aten::sin"}, "1.13.0");
  ASSERT_TRUE(old.find("aten::gone_in_2"));
  EXPECT_EQ(old.find("aten::gone_in_2")->skip, "removed");
  EXPECT_FALSE(old.find("aten::sin"));
  const Spec recent = parse_spec(text, "s.yaml", {"aten::sin"}, "2.11.0");
  EXPECT_FALSE(recent.find("aten::gone_in_2"));
  ASSERT_TRUE(recent.find("aten::sin"));
  EXPECT_EQ(recent.find("aten::sin")->skip, "newer");
  testing::expect_diagnostic(
      testing::BadInput{"UnknownOpForThisTorch", text.c_str(), 3, 3, "unknown operator 'aten::gone_in_2'"}, "s.yaml",
      [](const std::string& t) { parse_spec(t, "s.yaml", {"aten::sin"}, "1.13.1"); });
}

TEST(Spec, VersionRangesIncludeTheirBounds) {
  EXPECT_TRUE(within_versions("2.1", "2.1", "2.5"));
  EXPECT_TRUE(within_versions("2.5.1", "", "2.5.1"));
  EXPECT_TRUE(within_versions("1.13.0", "", ""));
  EXPECT_FALSE(within_versions("2.10", "", "2.9"));
  EXPECT_FALSE(within_versions("1.13.1", "2.0", ""));
}

TEST(Spec, ComparesVersionsNumerically) {
  EXPECT_LT(compare_versions("2.9", "2.10"), 0);
  EXPECT_EQ(compare_versions("2.1", "2.1.0"), 0);
  EXPECT_GT(compare_versions("1.13.1", "1.13"), 0);
}

using testing::BadInput;

class SpecErrors : public ::testing::TestWithParam<BadInput> {};

TEST_P(SpecErrors, OneDiagnosticWithLocation) {
  testing::expect_diagnostic(GetParam(), "s.yaml", [](const std::string& text) { parse_spec(text, "s.yaml", kOps); });
}

INSTANTIATE_TEST_SUITE_P(
    , SpecErrors,
    ::testing::Values(
        BadInput{"Syntax", "ops: {sin: [\n", 2, 1, "invalid YAML"},
        BadInput{"UnknownTopKey", "version: 1\nopz: {}\n", 2, 1, "unknown key 'opz' in the spec (did you mean 'ops'?)"},
        BadInput{"UnknownOpKey", "ops:\n  sin: {comapre: shape}\n", 2, 9, "unknown key 'comapre'"},
        BadInput{"UnknownOp", "ops:\n  aten::sinn: {}\n", 2, 3, "unknown operator 'aten::sinn' (did you mean"},
        BadInput{"UnknownDtype", "defaults:\n  dtypes: [float32, flaot16]\n", 2, 21,
                 "unknown dtype 'flaot16' (did you mean 'float16'"},
        BadInput{"NegativeSize", "defaults:\n  shape: [3, -4]\n", 2, 14, "size -4 is negative"},
        BadInput{"HugeShape", "defaults:\n  shape: [100000, 100000]\n", 2, 10, "more than 16M elements"},
        BadInput{"DuplicateOp", "ops:\n  sin: {}\n  aten::sin: {}\n", 3, 3,
                 "'aten::sin' is listed twice (first at line 2)"},
        BadInput{"DuplicateKey", "ops:\n  sin: {compare: shape, compare: values}\n", 2, 25, "duplicate key 'compare'"},
        BadInput{"BadCompare", "ops:\n  sin: {compare: exact}\n", 2, 18, "unknown comparison 'exact'"},
        BadInput{"BadTarget", "ops:\n  sin:\n    xfail: [{reason: r, targets: [mpss]}]\n", 3, 35,
                 "unknown target 'mpss' (did you mean 'mps'"},
        BadInput{"XfailWithoutReason", "ops:\n  sin:\n    xfail: [{dtypes: [float32]}]\n", 3, 13, "needs a reason"},
        BadInput{"TensorWithoutShape", "ops:\n  sin:\n    samples: [{args: {self: {domain: positive}}}]\n", 3, 29,
                 "a tensor argument needs a shape"},
        BadInput{"BadDomain", "ops:\n  sin:\n    samples: [{args: {self: {shape: [2], domain: posit}}}]\n", 3, 50,
                 "unknown domain 'posit'"},
        BadInput{"SpdNotSquare", "ops:\n  sin:\n    samples: [{args: {self: {shape: [2, 3], domain: spd}}}]\n", 3, 37,
                 "domain 'spd' needs square matrices"},
        BadInput{"MatrixDomainOfAVector",
                 "ops:\n  sin:\n    samples: [{args: {self: {shape: [4], domain: well_conditioned}}}]\n", 3, 37,
                 "domain 'well_conditioned' needs matrices"},
        BadInput{"Version", "version: 2\n", 1, 10, "only version 1"},
        BadInput{"UniqueWithoutIndex", "ops:\n  sin:\n    samples: [{args: {self: {shape: [2], unique: true}}}]\n", 3,
                 50, "unique needs domain 'index'"},
        BadInput{"UniqueTooMany",
                 "ops:\n  sin:\n    samples: [{args: {self: {shape: [6], domain: index, high: 5, unique: true}}}]\n", 3,
                 74, "6 unique indices do not fit below high=5"},
        BadInput{"BadLayout", "ops:\n  sin:\n    samples: [{args: {self: {shape: [2], layout: sparse}}}]\n", 3, 50,
                 "unknown layout 'sparse'"},
        BadInput{"CsrNot2d", "ops:\n  sin:\n    samples: [{args: {self: {shape: [2], layout: sparse_csr}}}]\n", 3, 50,
                 "layout sparse_csr needs a 2-d shape"},
        BadInput{"QuantizedDtype",
                 "ops:\n  sin:\n    samples: [{args: {self: {shape: [2], quantized: {dtype: qint16}}}}]\n", 3, 61,
                 "unknown quantized dtype 'qint16'"},
        BadInput{"QuantizedScale",
                 "ops:\n  sin:\n    samples: [{args: {self: {shape: [2], quantized: {dtype: qint8, scale: 0}}}}]\n", 3,
                 75, "scale must be positive"},
        BadInput{"QuantizedZeroPoint",
                 "ops:\n  sin:\n    samples: [{args: {self: {shape: [2], quantized: {dtype: quint8, zero_point: "
                 "-1}}}}]\n",
                 3, 81, "zero_point -1 is outside quint8's range [0, 255]"},
        BadInput{"MacosRange", "ops:\n  sin:\n    xfail: [{reason: r, macos: {min: 15, max: 14}}]\n", 3, 32,
                 "macos: min is above max"},
        BadInput{"TorchVersion", "ops:\n  sin:\n    skip: [{reason: r, torch: {min: two}}]\n", 3, 37,
                 "'two' is not a version"},
        BadInput{"DeepNesting",
                 "ops:\n  sin:\n    samples: [{args: {self: {tensors: [{tensors: [{tensors: [{tensors: []}]}]}]}}}]\n",
                 3, 62, "nest too deeply"}),
    testing::bad_input_name);

// The default spec must load on every release the project ships data for, so that `make audit` works against
// libtorch 1.13 as against 2.x.
TEST(Spec, TheDefaultSpecNamesOnlyOperatorsOfEveryShippedRelease) {
  for (const char* release : {"1.13.1", "2.11.0"}) {
    const auto decls =
        read_native_functions(testing::source_path(std::string("data/pytorch-") + release + "/native_functions.yaml"));
    std::vector<std::string> names;
    for (const auto& op : classify_native_functions(decls, {}, "CPU").ops) names.push_back(op.name);
    EXPECT_NO_THROW(load_spec(testing::source_path("opspec.yaml"), names, release)) << release;
  }
}

}  // namespace
}  // namespace mps_audit
