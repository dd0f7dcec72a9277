// Input synthesis for the prober.
#include "probe/inputs.h"

#include <algorithm>
#include <cmath>
#include <functional>

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/randint.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/stack.h>
#include <ATen/ops/view_as_complex.h>
#include <fmt/format.h>

#include "probe/dtypes.h"

namespace mps_audit {
namespace {

class Maker {
 public:
  Maker(c10::ScalarType dtype, const Spec& spec, std::vector<int64_t> shape, uint64_t seed)
      : dtype_(dtype), spec_(spec), shape_(std::move(shape)), gen_(at::detail::createCPUGenerator(seed)) {}

  at::Tensor tensor(const std::vector<int64_t>& shape, c10::ScalarType type, const std::string& domain = "normal",
                    double low = 0, double high = 1, bool noncontiguous = false) {
    std::vector<int64_t> made = shape;
    if (noncontiguous && !made.empty()) made.back() *= 2;
    at::Tensor t;
    const auto f32 = at::TensorOptions().dtype(c10::ScalarType::Float);
    if (domain == "index") {
      t = at::randint(0, std::max<int64_t>(1, static_cast<int64_t>(high)), made, gen_,
                      at::TensorOptions().dtype(c10::ScalarType::Long));
      type = c10::ScalarType::Long;
    } else if (domain == "mask" || type == c10::ScalarType::Bool) {
      t = at::randint(0, 2, made, gen_, at::TensorOptions().dtype(c10::ScalarType::Long)).to(c10::ScalarType::Bool);
      type = c10::ScalarType::Bool;
    } else if (domain == "int" || c10::isIntegralType(type, /*includeBool=*/false)) {
      const int64_t lo = domain == "int" ? static_cast<int64_t>(low) : (type == c10::ScalarType::Byte ? 0 : -5);
      const int64_t hi = domain == "int" ? static_cast<int64_t>(high) : 6;
      t = at::randint(lo, hi, made, gen_, at::TensorOptions().dtype(c10::ScalarType::Long));
    } else if (domain == "special") {  // NaN, infinities, huge and tiny values among normal ones
      t = at::randn(made, gen_, f32);
      const float specials[] = {std::nanf(""), INFINITY, -INFINITY, 1e30f, -1e30f, 1e-30f, 0.0f, -0.0f};
      at::Tensor flat = t.view({-1});
      for (int64_t i = 0; i < flat.numel(); i += 2) flat[i].fill_(specials[(i / 2) % 8]);
    } else if (domain == "uniform") {
      t = at::randn(made, gen_, f32).sigmoid().mul(high - low).add(low);
    } else if (domain == "positive") {
      t = at::randn(made, gen_, f32).abs().add(0.1);
    } else {
      t = at::randn(made, gen_, f32);
    }
    if (c10::isComplexType(type)) {
      t = at::view_as_complex(at::stack({t, at::randn(made, gen_, f32)}, -1));
    }
    t = t.to(type);
    if (noncontiguous && !made.empty()) t = t.slice(-1, 0, made.back(), 2);
    return t;
  }

  at::Tensor default_tensor() { return tensor(shape_, dtype_); }
  const std::vector<int64_t>& shape() const { return shape_; }

  c10::IValue from_spec(const ArgSpec& a) {
    switch (a.kind) {
      case ArgSpec::Kind::kTensor: {
        const auto type = a.dtype.empty() ? dtype_ : *parse_dtype(a.dtype);
        return tensor(a.shape, type, a.domain, a.low, a.high, a.noncontiguous);
      }
      case ArgSpec::Kind::kTensorList: {
        c10::List<at::Tensor> list;
        for (const auto& t : a.tensors) list.push_back(from_spec(t).toTensor());
        return list;
      }
      case ArgSpec::Kind::kNone: return c10::IValue();
      case ArgSpec::Kind::kBool: return a.b;
      case ArgSpec::Kind::kInt: return a.i;
      case ArgSpec::Kind::kFloat: return a.f;
      case ArgSpec::Kind::kString: return a.s;
      case ArgSpec::Kind::kIntList: return a.ints;
      case ArgSpec::Kind::kFloatList: return a.floats;
    }
    return c10::IValue();
  }

 private:
  c10::ScalarType dtype_;
  const Spec& spec_;
  std::vector<int64_t> shape_;
  at::Generator gen_;
};

std::vector<int64_t> int_list_for(const std::string& name, const std::vector<int64_t>& shape) {
  if (name == "size" || name == "sizes" || name == "shape") return shape;
  if (name == "dim" || name == "dims") return {1};
  if (name == "kernel_size" || name == "output_size") return {2, 2};
  if (name == "stride" || name == "dilation") return {1, 1};
  if (name == "padding" || name == "pad") return {1, 1};
  if (name == "repeats") return {2, 1};
  return {1};
}

bool is_write(const c10::Argument& a) {
  return a.alias_info() && a.alias_info()->isWrite();
}

}  // namespace

const std::vector<Synthesis>& synthesis_variants() {
  static const std::vector<Synthesis> variants = {
      {"default", {}, false},           {"default+optionals", {}, true},           {"4x4", {4, 4}, false},
      {"2x3x4x4", {2, 3, 4, 4}, false}, {"2x3x4x4+optionals", {2, 3, 4, 4}, true}, {"4", {4}, false},
      {"2x3x4", {2, 3, 4}, false},      {"2x3x4+optionals", {2, 3, 4}, true},
  };
  return variants;
}

SampleInputs make_inputs(const c10::FunctionSchema& schema, c10::ScalarType dtype, const Spec& spec,
                         const SampleSpec* sample, const std::string& seed_key, const Synthesis* how) {
  SampleInputs in;
  const bool fill_optionals = !sample && how && how->fill_optionals;
  in.name = sample ? sample->name : how ? how->name : "default";
  std::vector<int64_t> shape = !sample && how && !how->shape.empty() ? how->shape : spec.shape;
  Maker maker(dtype, spec, shape, std::hash<std::string>()(seed_key + "/" + in.name) & 0x7fffffffffffull);
  for (const auto& arg : schema.arguments()) {
    if (sample) {
      if (auto it = sample->args.find(arg.name()); it != sample->args.end()) {
        c10::IValue v = maker.from_spec(it->second);
        if (v.isTensorList() && arg.real_type()->str() == "Tensor?[]") {  // indices of index/index_put
          c10::List<c10::optional<at::Tensor>> optional_list;
          for (const at::Tensor& t : v.toTensorList()) optional_list.push_back(t);
          v = optional_list;
        }
        in.args.push_back(std::move(v));
        continue;
      }
    }
    std::string type = arg.real_type()->str();
    const bool optional = !type.empty() && type.back() == '?';
    if (optional) type.pop_back();
    if (is_write(arg) && arg.kwarg_only() && type == "Tensor") {  // out=: the op resizes it
      const bool index = arg.name().find("indices") != std::string::npos;
      in.args.push_back(at::empty({0}, at::TensorOptions().dtype(index ? c10::ScalarType::Long : dtype)));
      continue;
    }
    const bool fillable = type == "Tensor" || type == "Scalar" || type == "float" || type == "int" ||
                          type == "SymInt" || type == "int[]" || type == "SymInt[]";
    if (arg.default_value() && !(type == "Tensor" && !optional) && !(fill_optionals && optional && fillable)) {
      in.args.push_back(*arg.default_value());
      continue;
    }
    if (type == "Tensor" && arg.name().find("mask") != std::string::npos) {
      in.args.push_back(maker.tensor(maker.shape(), c10::ScalarType::Bool, "mask"));
    } else if (type == "Tensor" && (arg.name() == "index" || arg.name() == "indices")) {
      // in range along any dimension of a default-shaped input
      const auto& sh = maker.shape();
      const int64_t smallest = sh.empty() ? 1 : *std::min_element(sh.begin(), sh.end());
      in.args.push_back(maker.tensor(sh, c10::ScalarType::Long, "index", 0, static_cast<double>(smallest)));
    } else if (type == "Tensor" && arg.name() == "value") {  // fill_.Tensor, masked_fill_.Tensor: 0-dim
      in.args.push_back(maker.tensor({}, dtype));
    } else if (type == "Tensor" && (arg.name() == "p" || arg.name() == "std")) {  // probabilities, deviations
      in.args.push_back(maker.tensor(maker.shape(), dtype, "uniform", 0.1, 0.9));
    } else if (type == "Tensor") {
      in.args.push_back(maker.default_tensor());
    } else if (optional && !(fill_optionals && fillable)) {
      in.args.push_back(c10::IValue());
    } else if (type == "Tensor[]") {
      in.args.push_back(c10::List<at::Tensor>({maker.default_tensor(), maker.default_tensor()}));
    } else if (type == "int" || type == "SymInt") {
      in.args.push_back(int64_t{1});
    } else if (type == "int[]" || type == "SymInt[]") {
      in.args.push_back(int_list_for(arg.name(), shape));
    } else if (type == "float") {
      in.args.push_back(0.5);
    } else if (type == "Scalar") {
      in.args.push_back(c10::isFloatingType(dtype) || c10::isComplexType(dtype) ? c10::IValue(0.5) : c10::IValue(2));
    } else if (type == "bool") {
      in.args.push_back(false);
    } else if (type == "bool[]") {  // output_mask of backward ops: every gradient
      in.args.push_back(c10::List<bool>({true, true, true}));
    } else if (type == "ScalarType") {
      in.args.push_back(dtype);
    } else {
      in.unsupported = fmt::format("cannot synthesize argument '{}' of type {}; give a sample in the spec", arg.name(),
                                   arg.real_type()->str());
      return in;
    }
  }
  return in;
}

}  // namespace mps_audit
