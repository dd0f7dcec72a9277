// Tests of the native_functions.yaml reader: fields, expansions and diagnostics.
#include "registry/native_functions.h"

#include <gtest/gtest.h>

#include "test_support.h"

namespace mps_audit {
namespace {

const char* const kYaml = R"(
- func: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
  structured_delegate: add.out
  tags: [core, pointwise]

- func: add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
  structured: True
  ufunc_inner_loop:
    Generic: add (AllAndComplex, BFloat16, Half, ComplexHalf)
  dispatch:
    SparseCPU, SparseCUDA: add_out_sparse
    MPS: add_out_mps

- func: _foo(Tensor self) -> (Tensor, Tensor)
  dispatch:
    CPU: foo_cpu
  autogen: _foo.out
)";

TEST(NativeFunctions, ReadsDeclarations) {
  auto decls = parse_native_functions(kYaml, "nf.yaml");
  ASSERT_EQ(decls.size(), 3u);
  EXPECT_EQ(decls[0].qualified_name(), "aten::add.Tensor");
  EXPECT_EQ(decls[0].structured_delegate, "add.out");
  EXPECT_TRUE(decls[0].has_tag("core"));
  EXPECT_EQ(decls[0].where.line, 2);
  EXPECT_EQ(decls[0].where.column, 9);
  EXPECT_FALSE(decls[0].has_dispatch_section);

  EXPECT_TRUE(decls[1].structured);
  ASSERT_NE(decls[1].kernel_for("SparseCUDA"), nullptr);  // comma-separated keys are expanded
  EXPECT_EQ(*decls[1].kernel_for("SparseCUDA"), "add_out_sparse");
  EXPECT_EQ(*decls[1].kernel_for("MPS"), "add_out_mps");
  ASSERT_NE(decls[1].kernel_for("CPU"), nullptr);  // from ufunc_inner_loop, as torchgen does
  ASSERT_NE(decls[1].kernel_for("CUDA"), nullptr);
  EXPECT_EQ(decls[1].kernel_for("Meta"), nullptr);

  EXPECT_EQ(decls[2].autogen, std::vector<std::string>({"_foo.out"}));
  EXPECT_EQ(decls[2].return_count(), 2u);
  EXPECT_EQ(decls[0].return_count(), 1u);
}

TEST(NativeFunctions, RecognisesInPlaceNames) {
  auto decl = [](const std::string& func) {
    NativeFunctionDecl d;
    d.func = func;
    d.name = func.substr(0, func.find('('));
    return d;
  };
  EXPECT_TRUE(decl("add_.Tensor(Tensor(a!) self) -> Tensor(a!)").is_inplace());
  EXPECT_TRUE(decl("__iand__.Scalar(Tensor(a!) self) -> Tensor(a!)").is_inplace());
  EXPECT_FALSE(decl("__and__.Scalar(Tensor self) -> Tensor").is_inplace());
  EXPECT_FALSE(decl("add.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)").is_inplace());
  EXPECT_EQ(decl("_foreach_add_(Tensor(a!)[] self) -> ()").return_count(), 0u);
}

using testing::BadInput;

class NativeFunctionsErrors : public ::testing::TestWithParam<BadInput> {};

TEST_P(NativeFunctionsErrors, GiveOneDiagnosticWithLocation) {
  testing::expect_diagnostic(GetParam(), "nf.yaml",
                             [](const std::string& text) { parse_native_functions(text, "nf.yaml"); });
}

INSTANTIATE_TEST_SUITE_P(
    , NativeFunctionsErrors,
    ::testing::Values(
        BadInput{"InvalidYaml", "- func: a() -> Tensor\n  dispatch: [CPU\n", 3, 1, "invalid YAML"},
        BadInput{"NotAList", "func: a() -> Tensor\n", 1, 1, "expected a list of operator declarations"},
        BadInput{"MissingFunc", "- dispatch:\n    CPU: x\n", 1, 3, "without 'func:'"},
        BadInput{"BadSchema", "- func: not a schema\n", 1, 9, "must read 'name(arguments) -> returns'"},
        BadInput{"DispatchNotAMap", "- func: a() -> Tensor\n  dispatch: CPU\n", 2, 13, "'dispatch' must map"},
        BadInput{"KernelNotAString", "- func: a() -> Tensor\n  dispatch:\n    CPU: [x]\n", 3, 10,
                 "'dispatch' must be a string"},
        BadInput{"BadBoolean", "- func: a() -> Tensor\n  structured: maybe\n", 2, 15, "must be True or False"},
        BadInput{"Duplicate", "- func: a() -> Tensor\n- func: a() -> Tensor\n", 2, 9,
                 "declared twice (first at line 1)"},
        BadInput{"UnknownDelegate", "- func: a() -> Tensor\n  structured_delegate: b.out\n", 1, 9,
                 "unknown operator 'b.out'"},
        BadInput{"EntryNotAMap", "- 42\n", 1, 3, "expected an operator declaration"}),
    testing::bad_input_name);

TEST(NativeFunctions, ReadsTheShippedReleases) {
  for (const char* release : {"data/pytorch-1.13.1", "data/pytorch-2.11.0"}) {
    auto decls = read_native_functions(testing::source_path(std::string(release) + "/native_functions.yaml"));
    EXPECT_GT(decls.size(), 2400u) << release;
  }
}

}  // namespace
}  // namespace mps_audit
