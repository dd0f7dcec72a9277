// A model's inputs, read and made: see model_inputs.h.
#include "model/model_inputs.h"

#include <regex>

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/ops/randint.h>
#include <ATen/ops/randn.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/diagnostics.h"
#include "probe/dtypes.h"

namespace mps_audit {

InputSpec parse_input(const std::string& text) {
  static const std::regex form(R"(^(\d+(?:x\d+)*)?(?::([A-Za-z0-9_]+))?$)");
  std::smatch m;
  if (text.empty() || !std::regex_match(text, m, form)) {
    throw UserError(
        fmt::format("--input '{}': expected a shape like 4x3x32x32, optionally with :DTYPE (2x16:int64)", text));
  }
  InputSpec in;
  const std::string shape = m[1].str();
  for (size_t start = 0; start < shape.size();) {
    const size_t x = shape.find('x', start);
    in.shape.push_back(std::stoll(shape.substr(start, x - start)));
    start = x == std::string::npos ? shape.size() : x + 1;
  }
  if (m[2].matched) {
    const auto dtype = parse_dtype(m[2].str());
    if (!dtype) {
      throw UserError(fmt::format("--input '{}': unknown dtype '{}', expected one of {}", text, m[2].str(),
                                  fmt::join(known_dtype_names(), ", ")));
    }
    in.dtype = *dtype;
  }
  std::string dims;
  for (int64_t d : in.shape) dims += (dims.empty() ? "" : "x") + std::to_string(d);
  in.text = fmt::format("{}:{}", dims.empty() ? "scalar" : dims, dtype_name(in.dtype));
  return in;
}

std::vector<c10::IValue> make_inputs(const std::vector<InputSpec>& specs, int64_t high, uint64_t seed) {
  at::Generator gen = at::detail::createCPUGenerator(seed);
  std::vector<c10::IValue> out;
  for (const auto& s : specs) {
    const auto options = at::TensorOptions().dtype(c10::kFloat);
    at::Tensor t;
    if (c10::isFloatingType(s.dtype) || c10::isComplexType(s.dtype)) {
      t = at::randn(s.shape, gen, options).to(s.dtype);
    } else if (s.dtype == c10::kBool) {
      t = at::randint(0, 2, s.shape, gen, options.dtype(c10::kLong)).to(c10::kBool);
    } else {
      t = at::randint(0, high, s.shape, gen, options.dtype(c10::kLong)).to(s.dtype);
    }
    out.emplace_back(t);
  }
  return out;
}

at::Tensor make_labels(const std::vector<InputSpec>& specs, int64_t classes, uint64_t seed) {
  const int64_t batch = specs.empty() || specs.front().shape.empty() ? 1 : specs.front().shape.front();
  at::Generator gen = at::detail::createCPUGenerator(seed + 1);
  return at::randint(0, classes, {batch}, gen, at::TensorOptions().dtype(c10::kLong));
}

}  // namespace mps_audit
