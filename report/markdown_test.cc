// Tests of the Markdown report.
#include "report/renderers.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace mps_audit {
namespace {

TEST(ResultsMarkdown, CountsSkipsByEveryReason) {
  const std::vector<std::string> messages = {
      "spec: not now",
      "cannot synthesize argument 'filename' of type str; give a sample in the spec",
      "no reference: the CPU raised: Could not run 'aten::x' with arguments from the 'CPU' backend.",
      "no reference: the CPU raised: \"elu_cpu\" not implemented for 'Long'",
      "no reference: the CPU raised: Dimension out of range",
      "no reference: the CPU run killed the worker (it died of signal 11 (Segmentation fault))",
      "no reference: the CPU gives different results from run to run (1 of 12 elements differ)",
      "not probed: libtorch 1.13.0 lacks aten::_foreach_max, which PyTorch 2.11.0 has",
      "not probed: the recording's CPU chose this operator for itself (the backward of its flash attention)"};
  ASSERT_EQ(messages.size(), kSkipReasons.size());  // one message of each kind
  std::vector<ProbeResult> results;
  for (const auto& m : messages) {
    ProbeResult r;
    r.op = "aten::sin";
    r.dtype = "float32";
    r.message = m;
    results.push_back(r);
  }
  RunEnvironment env;
  env.target = "cpu";
  const std::string md =
      render_markdown(Results{kResultsSchemaVersion, env, {results.size(), results.size(), "", ""}, results});
  for (std::string_view reason : kSkipReasons) {
    EXPECT_NE(md.find(fmt::format("| {} | 1 |", reason)), std::string::npos) << reason << "\n" << md;
  }
  EXPECT_NE(md.find("| cpu_unstable | 1 |"), std::string::npos) << md;
  // What the linked libtorch cannot show is said at the top, not only in the skip table.
  EXPECT_LT(md.find("> 1 op x dtype pairs are not probed: libtorch"), md.find("## Summary")) << md;
}

}  // namespace
}  // namespace mps_audit
