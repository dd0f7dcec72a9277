// Tests of the version shims that change behaviour: the cheap stack-trace fetcher workers install.
#include "common/torch_compat.h"

#include <string>

#include <gtest/gtest.h>

namespace mps_audit {
namespace {

std::string thrown_by_torch_check() {
  try {
    TORCH_CHECK(false, "the message kept");
  } catch (const c10::Error& e) {
    EXPECT_EQ(std::string(e.what_without_backtrace()).substr(0, 16), "the message kept");
    return e.what();
  }
  return "";
}

TEST(StackTraceFetcher, ErrorsCarryTheConstantInsteadOfABacktraceAndKeepTheirMessage) {
  compat::install_cheap_stack_trace_fetcher();
  const std::string what = thrown_by_torch_check();
  EXPECT_NE(what.find(compat::kNoBacktrace), std::string::npos) << what;
  EXPECT_EQ(what.find("frame #"), std::string::npos) << what;  // libtorch's own fetcher numbers frames
  EXPECT_EQ(what.substr(0, 16), "the message kept");
}

}  // namespace
}  // namespace mps_audit
