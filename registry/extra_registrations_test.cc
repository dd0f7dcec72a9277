// Tests of the hand-registration TSV reader.
#include "registry/extra_registrations.h"

#include <gtest/gtest.h>

namespace mps_audit {
namespace {

TEST(ExtraRegistrations, ReadsKindsSkippingCommentsAndBlankLines) {
  auto regs = parse_extra_registrations(
      "# header\n\nnonzero\tcpu_fallback\r\nbitwise_and.Tensor_out native\n"
      "  _slow_conv2d_forward\tstub\nquantized::foo\tnative\n",
      "x.tsv");
  ASSERT_EQ(regs.size(), 4u);
  EXPECT_EQ(regs[0].op, "aten::nonzero");
  EXPECT_EQ(regs[0].kind, ExtraKind::kCpuFallback);
  EXPECT_EQ(regs[0].where.line, 3);
  EXPECT_EQ(regs[1].op, "aten::bitwise_and.Tensor_out");
  EXPECT_EQ(regs[1].kind, ExtraKind::kNative);
  EXPECT_EQ(regs[2].kind, ExtraKind::kStub);
  EXPECT_EQ(regs[2].where.column, 3);
  EXPECT_EQ(regs[3].op, "quantized::foo");
}

TEST(ExtraRegistrations, DiagnosesBadLines) {
  auto message_of = [](const std::string& text) -> std::string {
    try {
      parse_extra_registrations(text, "x.tsv");
    } catch (const UserError& e) {
      return format_diagnostic(e);
    }
    return "no error";
  };
  EXPECT_EQ(message_of("nonzero\n"), "error: x.tsv:1:1: expected 'operator<TAB>kind'");
  EXPECT_EQ(message_of("a\tnative\nnonzero\tcpu_falback\n"),
            "error: x.tsv:2:9: unknown kind 'cpu_falback', expected native, cpu_fallback or stub "
            "(did you mean 'cpu_fallback'?)");
  EXPECT_EQ(message_of("a\tnative\textra\n"), "error: x.tsv:1:10: expected two columns, 'operator<TAB>kind'");
  EXPECT_EQ(message_of("a\tnative\na\tstub\n"), "error: x.tsv:2:1: 'aten::a' is listed twice (first on line 1)");
}

}  // namespace
}  // namespace mps_audit
