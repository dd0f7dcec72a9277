// Inputs of out= variants (add.out, max.dim_max): those of their functional twin (add.Tensor, max.dim), with out
// tensors shaped like what the twin returns.
#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/zeros.h>
#include <fmt/format.h>

#include "common/ivalue_tensors.h"
#include "probe/inputs.h"
#include "probe/inputs_impl.h"

namespace mps_audit {

using detail::is_out_argument;
using detail::is_write;

std::optional<c10::OperatorHandle> functional_twin(const c10::FunctionSchema& schema) {
  const auto& args = schema.arguments();
  if (std::none_of(args.begin(), args.end(), is_out_argument)) return std::nullopt;
  static const std::map<std::string, std::vector<std::string>> overloads = [] {
    std::map<std::string, std::vector<std::string>> m;
    for (const c10::OperatorName& name : c10::Dispatcher::singleton().getAllOpNames()) {
      m[name.name].push_back(name.overload_name);
    }
    return m;
  }();
  std::vector<std::pair<std::string, std::string>> wanted;
  for (const auto& a : args) {
    if (!is_out_argument(a)) wanted.emplace_back(a.name(), a.real_type()->str());
  }
  const auto it = overloads.find(schema.name());
  if (it == overloads.end()) return std::nullopt;
  for (const std::string& overload : it->second) {
    if (overload == schema.overload_name()) continue;
    auto handle = c10::Dispatcher::singleton().findOp({schema.name(), overload});
    if (!handle || !handle->hasSchema()) continue;
    const auto& twin_args = handle->schema().arguments();
    if (std::any_of(twin_args.begin(), twin_args.end(), is_write) || twin_args.size() != wanted.size()) continue;
    bool same = true;
    for (size_t i = 0; i < wanted.size() && same; ++i) {
      same = twin_args[i].name() == wanted[i].first && twin_args[i].real_type()->str() == wanted[i].second;
    }
    if (same) return *handle;
  }
  return std::nullopt;
}

SampleInputs out_variant_inputs(const c10::FunctionSchema& out_schema, const c10::OperatorHandle& twin,
                                const SampleInputs& twin_inputs, c10::ScalarType dtype) {
  SampleInputs in;
  in.name = twin_inputs.name;
  in.unsupported = twin_inputs.unsupported;
  if (!in.unsupported.empty()) return in;
  // As the prober does for its reference: without a CPU kernel for a low-precision dtype, the twin runs in float32
  // and its float32 returns stand for that dtype.
  std::vector<c10::IValue> returns;
  const bool low = dtype == c10::ScalarType::Half || dtype == c10::ScalarType::BFloat16;
  for (const bool in_float32 : {false, true}) {
    if (in_float32 && !low) break;
    try {
      torch::jit::Stack stack;
      for (const auto& v : twin_inputs.args) {
        stack.push_back(map_tensors(v, [&](const at::Tensor& t) {
          if (!t.defined()) return t;
          return in_float32 && t.scalar_type() == dtype ? t.to(c10::ScalarType::Float) : t.clone();
        }));
      }
      twin.callBoxed(&stack);
      for (const auto& r : stack) {
        // ComplexFloat stands for ComplexHalf too (polar.out); bfloat16 has no complex type.
        returns.push_back(!in_float32 ? r : map_tensors(r, [&](const at::Tensor& t) {
          if (!t.defined()) return t;
          if (t.scalar_type() == c10::ScalarType::Float) return t.to(dtype);
          if (t.scalar_type() == c10::ScalarType::ComplexFloat && dtype == c10::ScalarType::Half) {
            return at::empty({0}, at::TensorOptions().dtype(c10::ScalarType::ComplexHalf));
          }
          return t;
        }));
      }
      break;
    } catch (const std::exception&) {  // the out= variant's own run will say what the CPU rejects
    }
  }
  std::map<std::string, c10::IValue> given;
  const auto& twin_args = twin.schema().arguments();
  for (size_t i = 0; i < twin_args.size() && i < twin_inputs.args.size(); ++i) {
    given[twin_args[i].name()] = twin_inputs.args[i];
  }
  size_t next_return = 0;
  for (const auto& arg : out_schema.arguments()) {
    if (!is_out_argument(arg)) {
      const auto it = given.find(arg.name());
      if (it == given.end()) {
        in.unsupported = fmt::format("argument '{}' is not one of {}'s", arg.name(), twin.schema().name());
        return in;
      }
      in.args.push_back(it->second);
      continue;
    }
    const c10::IValue r = next_return < returns.size() ? returns[next_return] : c10::IValue();
    ++next_return;
    const auto fallback = arg.name().find("indices") != std::string::npos ? c10::ScalarType::Long : dtype;
    // Zeros of the return's shape: some out= variants copy into the out tensor without resizing it (alias_copy,
    // expand_copy); without a return to go by, size 0, which the operator resizes.
    const auto empty_like_return = [&](const c10::IValue& v) {
      if (!v.isTensor() || !v.toTensor().defined()) return at::empty({0}, at::TensorOptions().dtype(fallback));
      const at::Tensor t = v.toTensor();
      if (t.layout() != c10::kStrided || t.is_quantized()) {
        // Sparse compressed layouts have no size-0 tensor: one shaped like the return.
        return t.layout() == c10::kSparse || t.is_quantized() ? at::empty({0}, t.options()) : at::empty_like(t);
      }
      return at::zeros(t.sizes(), at::TensorOptions().dtype(t.scalar_type()));
    };
    if (arg.real_type()->str().rfind("Tensor[]", 0) == 0) {
      c10::List<at::Tensor> outs;
      if (r.isTensorList()) {
        // The list's elements themselves (toListRef), not a c10::List's proxies: g++ 13 reads a reference bound
        // through a proxy as dangling, and a copy as a needless one.
        for (const c10::IValue& t : r.toListRef()) outs.push_back(empty_like_return(t.toTensor()));
      }
      in.args.push_back(outs);
    } else {
      in.args.push_back(empty_like_return(r));
    }
  }
  return in;
}

}  // namespace mps_audit
