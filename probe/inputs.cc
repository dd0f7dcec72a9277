// Input synthesis for the prober: the arguments of a sample from the spec, from defaults, or made from the schema,
// with the synthesis variants to try and a backward operator's arguments from a run of its forward. The well-posed
// rules are in well_posed.cc, the inputs of out= variants in out_variants.cc.
#include "probe/inputs.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <map>
#include <optional>

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/from_blob.h>
#include <ATen/ops/full.h>
#include <ATen/ops/quantize_per_tensor.h>
#include <ATen/ops/randint.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/randperm.h>
#include <ATen/ops/stack.h>
#include <ATen/ops/view_as_complex.h>
#include <ATen/ops/zeros.h>
#include <fmt/format.h>

#include "common/ivalue_tensors.h"
#include "common/torch_compat.h"
#include "probe/dtypes.h"
#include "probe/inputs_impl.h"

namespace mps_audit {
namespace detail {

OpTraits traits_of(const c10::FunctionSchema& schema) {
  OpTraits t;
  const std::string& name = schema.name();
  t.base = name.substr(name.find("::") + 2);
  t.overload = schema.overload_name();
  for (size_t i = 1; i + 1 < t.base.size(); ++i) {
    const char c = t.base[i];
    if (c >= '1' && c <= '3' && t.base[i + 1] == 'd' && (i + 2 == t.base.size() || t.base[i + 2] == '_') &&
        !std::isdigit(static_cast<unsigned char>(t.base[i - 1]))) {
      t.spatial = c - '0';
      break;
    }
  }
  t.pad = t.base.find("pad") != std::string::npos && t.base.find("pool") == std::string::npos;
  std::string overload = t.overload;
  std::transform(overload.begin(), overload.end(), overload.begin(), [](unsigned char c) { return std::tolower(c); });
  t.named = overload.find("name") != std::string::npos || t.base == "rename" || t.base == "rename_" ||
            t.base == "refine_names" || t.base == "align_to";
  return t;
}

std::vector<int64_t> repeat(int n, int64_t v) {
  return std::vector<int64_t>(static_cast<size_t>(n), v);
}

std::vector<int64_t> spatial_shape(int n) {
  std::vector<int64_t> shape = {2, 3};
  for (int i = 0; i < n; ++i) shape.push_back(6);
  return shape;
}

bool is_write(const c10::Argument& a) {
  return a.alias_info() && a.alias_info()->isWrite();
}

bool is_out_argument(const c10::Argument& a) {
  return is_write(a) && a.kwarg_only() && a.real_type()->str().rfind("Tensor", 0) == 0;
}

}  // namespace detail

using detail::is_out_argument;
using detail::is_write;
using detail::make_well_posed;
using detail::OpTraits;
using detail::repeat;
using detail::spatial_shape;
using detail::traits_of;

namespace {

// The quantized dtypes a spec names: qint8, quint8, qint32.
std::optional<c10::ScalarType> quantized_dtype(const std::string& name) {
  if (name == "qint8") return c10::ScalarType::QInt8;
  if (name == "quint8") return c10::ScalarType::QUInt8;
  if (name == "qint32") return c10::ScalarType::QInt32;
  return std::nullopt;
}

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
    if (domain == "spd" || domain == "well_conditioned") {
      // Noncontiguous: the same matrices stored by columns.
      t = domain == "spd" ? spd_matrix(shape, type, gen_) : well_conditioned_matrix(shape, type, gen_);
      return noncontiguous ? t.transpose(-2, -1).contiguous().transpose(-2, -1) : t;
    } else if (domain == "index") {
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

  // The spec's values, in `type` (complex ones with no imaginary part).
  static at::Tensor given_values(const std::vector<double>& values, const std::vector<int64_t>& shape,
                                 c10::ScalarType type) {
    std::vector<double> copy = values;
    const at::Tensor t = at::from_blob(copy.data(), {static_cast<int64_t>(copy.size())},
                                       at::TensorOptions().dtype(c10::ScalarType::Double));
    return t.reshape(shape).to(type, /*non_blocking=*/false, /*copy=*/true);  // of its own: `copy` goes
  }

  // `t`'s values in a view of a buffer of its own with these strides (contiguous ones where none are given) at this
  // storage offset; the rest of the buffer zero. Where the strides make elements share memory (an expand), the last
  // element written to a place keeps it, as the view's own values would show.
  static at::Tensor laid_out(const at::Tensor& t, std::vector<int64_t> strides, int64_t offset) {
    if (strides.empty()) strides = t.contiguous().strides().vec();
    int64_t extent = 1;
    for (size_t d = 0; d < strides.size(); ++d) extent += (t.size(static_cast<int64_t>(d)) - 1) * strides[d];
    if (t.numel() == 0) extent = 0;
    at::Tensor buffer = at::zeros({offset + extent}, t.options());
    at::Tensor view = buffer.as_strided(t.sizes(), strides, offset);
    // Element by element, so that places several elements share are written as well as a copy_ would refuse to.
    const at::Tensor flat = t.contiguous().view({-1});
    const at::Tensor positions = at::arange(t.numel(), at::TensorOptions().dtype(c10::ScalarType::Long));
    at::Tensor storage_index = at::full({t.numel()}, offset, positions.options());
    int64_t step = 1;
    for (int64_t d = t.dim() - 1; d >= 0; --d) {
      storage_index += positions.div(step, "floor").remainder(t.size(d)).mul(strides[static_cast<size_t>(d)]);
      step *= t.size(d);
    }
    buffer.index_copy_(0, storage_index, flat);
    return view;
  }

  // A spec's tensor on the meta device, laid out as it says.
  static at::Tensor on_meta(const ArgSpec& a, c10::ScalarType type) {
    const auto options = at::TensorOptions().dtype(type).device(c10::kMeta);
    std::vector<int64_t> strides = a.strides;
    if (strides.empty()) strides = at::empty(a.shape, options).strides().vec();
    int64_t extent = 1;
    for (size_t d = 0; d < strides.size(); ++d) extent += (a.shape[d] - 1) * strides[d];
    for (const int64_t size : a.shape) extent = size == 0 ? 0 : extent;
    at::Tensor t = at::empty({a.offset + extent}, options).as_strided(a.shape, strides, a.offset);
    if (!a.memory_format.empty()) {
      t = t.contiguous(a.memory_format == "channels_last" ? c10::MemoryFormat::ChannelsLast
                                                          : c10::MemoryFormat::ChannelsLast3d);
    }
    return t;
  }
  void make_on_meta(bool on) { on_meta_ = on; }

  at::Tensor default_tensor() { return tensor(shape_, dtype_); }
  at::Generator& gen() { return gen_; }
  const std::vector<int64_t>& shape() const { return shape_; }

  c10::IValue from_spec(const ArgSpec& a) {
    switch (a.kind) {
      case ArgSpec::Kind::kTensor: {
        auto type = a.dtype.empty() ? dtype_ : *parse_dtype(a.dtype);
        if (on_meta_) return on_meta(a, type);
        if (!a.quantized.empty()) type = c10::ScalarType::Float;  // quantized from float32 values
        at::Tensor t = a.values.empty() ? tensor(a.shape, type, a.domain, a.low, a.high, a.noncontiguous)
                                        : given_values(a.values, a.shape, type);
        if (!a.strides.empty() || a.offset) t = laid_out(t, a.strides, a.offset);
        if (!a.memory_format.empty()) {
          t = t.contiguous(a.memory_format == "channels_last" ? c10::MemoryFormat::ChannelsLast
                                                              : c10::MemoryFormat::ChannelsLast3d);
        }
        if (a.unique) {  // the spec checked that the values fit below high
          t = at::randperm(static_cast<int64_t>(a.high), gen_, at::TensorOptions().dtype(c10::ScalarType::Long))
                  .narrow(0, 0, t.numel())
                  .view(t.sizes());
        }
        if (!a.quantized.empty()) {
          t = at::quantize_per_tensor(t, a.scale, a.zero_point, *quantized_dtype(a.quantized));  // the spec checked it
        }
        if (a.layout != "strided") {  // half the elements zero, so that the sparse tensor is sparse
          t = t.mul(
              at::randint(0, 2, t.sizes(), gen_, at::TensorOptions().dtype(c10::ScalarType::Long)).to(t.scalar_type()));
          t = a.layout == "sparse_csr" ? t.to_sparse_csr() : t.to_sparse();
        }
        return t;
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
      case ArgSpec::Kind::kBoolList: {
        c10::List<bool> list;
        for (const bool b : a.bools) list.push_back(b);
        return list;
      }
    }
    return c10::IValue();
  }

 private:
  c10::ScalarType dtype_;
  const Spec& spec_;
  std::vector<int64_t> shape_;
  at::Generator gen_;
  bool on_meta_ = false;
};

std::vector<int64_t> int_list_for(const std::string& name, const std::vector<int64_t>& shape, const OpTraits& op,
                                  bool spatial) {
  if (name == "size" || name == "sizes" || name == "shape" || name == "input_size") return shape;
  if (spatial) {
    const int n = op.spatial;
    if (name == "kernel_size") return repeat(n, 2);
    if (name == "stride" || name == "dilation") return repeat(n, 1);
    if (name == "padding") return op.pad ? repeat(2 * n, 1) : repeat(n, 0);
    if (name == "output_padding") return repeat(n, 0);
    if (name == "output_size") return repeat(n, 2);
  }
  if (name == "dim" || name == "dims") return {1};
  if (name == "kernel_size" || name == "output_size") return {2, 2};
  if (name == "stride" || name == "dilation") return {1, 1};
  if (name == "padding" || name == "pad") return {1, 1};
  if (name == "repeats") return {2, 1};
  return {1};
}

// A value for a string argument, by its name; nullopt: none is known.
std::optional<std::string> string_for(const std::string& name, const OpTraits& op) {
  if (name == "reduce") {
    if (op.base.find("segment") != std::string::npos) return "sum";
    return op.base.rfind("scatter", 0) == 0 && op.base.find("scatter_reduce") == std::string::npos ? "add" : "amax";
  }
  if (name == "norm") return "backward";           // fft_*
  if (name == "interpolation") return "linear";    // quantile
  if (name == "p" || name == "ord") return "fro";  // linalg_cond, linalg_norm
  if (name == "padding") return "same";            // conv*.padding, _convolution_mode
  if (name == "equation") return "ij,ij->i";       // einsum of two inputs of one shape
  if (name == "indexing") return "ij";             // meshgrid
  if (name == "pad_mode") return "reflect";        // stft
  if (name == "api_name") return "linalg.probe";   // _linalg_check_errors
  if (name == "rounding_mode") return "trunc";     // div.Tensor_mode
  return std::nullopt;
}

// Dimension names for Dimname overloads: the input's dimensions are d0, d1, ... A Dimname travels in an IValue as
// a string with its symbol namespace.
std::string dimname(int64_t i) {
  return fmt::format("dimname::d{}", i);
}

std::optional<c10::IValue> dimname_for(const std::string& name, const std::string& type, const OpTraits& op,
                                       const c10::FunctionSchema& schema, int64_t rank) {
  const auto d = [&](int64_t i) { return dimname(std::min(i, std::max<int64_t>(rank - 1, 0))); };
  if (type == "str[]") {
    if (name == "names" && op.base == "unflatten") {
      return c10::IValue(std::vector<std::string>{"dimname::u0", "dimname::u1"});
    }
    if (name == "names" || name == "order") {  // refine_names, rename, align_to: every dimension
      std::vector<std::string> all;
      for (int64_t i = 0; i < rank; ++i) all.push_back(d(i));
      return c10::IValue(all);
    }
    return c10::IValue(std::vector<std::string>{d(1)});
  }
  bool has_dim2 = false;
  for (const auto& a : schema.arguments()) has_dim2 = has_dim2 || a.name() == "dim2";
  if (name == "dim0" || name == "start_dim" || (name == "dim1" && has_dim2)) return c10::IValue(d(0));
  if (name == "dim" || name == "dim1" || name == "dim2" || name == "end_dim") return c10::IValue(d(1));
  if (name == "out_dim" || name == "outdim") return c10::IValue(std::string("dimname::merged"));
  return std::nullopt;
}

void name_dimensions(const c10::IValue& v) {
  map_tensors(v, [](const at::Tensor& t) {
    if (!t.defined() || t.dim() == 0) return t;
    std::vector<std::string> names;
    for (int64_t i = 0; i < t.dim(); ++i) names.push_back(dimname(i));
    compat::set_dimension_names(t, names);
    return t;
  });
}

const std::vector<Synthesis>& plain_variants() {
  static const std::vector<Synthesis> variants = {
      {"default", {}, false},           {"default+optionals", {}, true},           {"4x4", {4, 4}, false},
      {"2x3x4x4", {2, 3, 4, 4}, false}, {"2x3x4x4+optionals", {2, 3, 4, 4}, true}, {"4", {4}, false},
      {"2x3x4", {2, 3, 4}, false},      {"2x3x4+optionals", {2, 3, 4}, true},
  };
  return variants;
}

// The forward operator of a backward one: upsample_nearest2d_backward.grad_input -> upsample_nearest2d.
std::optional<c10::OperatorHandle> forward_of(const c10::FunctionSchema& schema) {
  const OpTraits op = traits_of(schema);
  const size_t at = op.base.rfind("_backward");
  if (at == std::string::npos || at == 0) return std::nullopt;
  const std::string name = "aten::" + op.base.substr(0, at);
  std::string overload = op.overload;
  if (overload.size() > 4 && overload.compare(overload.size() - 4, 4, "_out") == 0)
    overload.resize(overload.size() - 4);
  for (const std::string& candidate : {overload, std::string()}) {
    if (auto handle = c10::Dispatcher::singleton().findOp({name, candidate}); handle && handle->hasSchema()) {
      return *handle;
    }
  }
  return std::nullopt;
}

// Arguments of a backward operator taken from a run of its forward on the CPU: the forward's own arguments by name,
// the incoming gradient shaped like the forward's first output, input_size from its input, indices and output from
// its outputs. Empty when the forward rejects its inputs.
std::map<std::string, c10::IValue> from_forward(const c10::OperatorHandle& forward, c10::ScalarType dtype,
                                                const Spec& spec, const std::string& seed_key, const Synthesis& how) {
  std::map<std::string, c10::IValue> given;
  Synthesis plain = how;
  plain.from_forward = false;
  const SampleInputs in = make_inputs(forward.schema(), dtype, spec, nullptr, seed_key + "/forward", &plain);
  if (!in.unsupported.empty()) return given;
  torch::jit::Stack stack = in.args;
  try {
    forward.callBoxed(&stack);
  } catch (const std::exception&) {
    return given;
  }
  const auto& args = forward.schema().arguments();
  for (size_t i = 0; i < args.size(); ++i) {
    if (!is_write(args[i])) given[args[i].name()] = in.args[i];
  }
  if (given.count("self") && !given.count("input")) given["input"] = given["self"];
  if (given.count("input") && !given.count("self")) given["self"] = given["input"];
  if (auto self = given.find("self"); self != given.end() && self->second.isTensor()) {
    given["input_size"] = self->second.toTensor().sizes().vec();
  }
  const auto& returns = forward.schema().returns();
  for (size_t i = 0; i < stack.size() && i < returns.size(); ++i) {
    if (!stack[i].isTensor()) continue;
    const at::Tensor out = stack[i].toTensor();
    if (i == 0) {
      given["output"] = given["result"] = out;
      Maker maker(dtype, spec, out.sizes().vec(), std::hash<std::string>()(seed_key + "/grad") & 0x7fffffffffffull);
      for (const char* grad : {"grad_output", "grad", "grad_out"}) given[grad] = maker.default_tensor();
    }
    if (!returns[i].name().empty() && !given.count(returns[i].name())) given[returns[i].name()] = out;
    if (i == 1 && out.scalar_type() == c10::ScalarType::Long && !given.count("indices")) given["indices"] = out;
  }
  return given;
}

// What the arguments of one synthesis share: the operator, its dtype and shape, the variant's choices.
struct Synthesizing {
  const c10::FunctionSchema& schema;
  const OpTraits& op;
  c10::ScalarType dtype;
  const std::vector<int64_t>& shape;
  Maker& maker;
  bool fill_optionals = false;
  bool spatial = false;               // a spatial variant of a spatial operator
  bool has_optional_indices = false;  // index, index_put: their values are 0-dim
  bool has_output_size = false;       // upsample: scale_factors is left out
};

// A spec sample's value for `arg`, in the argument's type.
c10::IValue sample_value(const c10::Argument& arg, const ArgSpec& given, const Synthesizing& s) {
  c10::IValue v = s.maker.from_spec(given);
  if (s.op.named && v.isInt() && arg.real_type()->str() == "str") v = dimname(v.toInt());  // dim: 1 -> d1
  const std::string arg_type = arg.real_type()->str();
  if (v.isDoubleList() && arg_type == "Scalar[]") {  // spacing: [0.5, 2.0]
    c10::impl::GenericList scalars(c10::NumberType::get());
    for (const double x : v.toDoubleVector()) scalars.push_back(c10::IValue(x));
    v = scalars;
  }
  if (v.isString() && (arg_type == "Device" || arg_type == "Device?")) {  // device: cpu, or mps (the target's)
    v = c10::Device(c10::kCPU);  // the reference's; the target's own on the target (SampleInputs::target_device)
  }
  if (v.isString() && (arg_type == "Scalar" || arg_type == "Scalar?" || arg_type == "float" || arg_type == "float?")) {
    const std::string& text = v.toStringRef();  // value: -inf
    if (text == "inf" || text == "-inf") v = text[0] == '-' ? -INFINITY : INFINITY;
    if (text == "nan") v = std::nan("");
  }
  if (v.isString() && arg.name() == "reduction" && (arg_type == "int" || arg_type == "int?")) {
    const std::string& text = v.toStringRef();  // reduction: none, mean, sum (at::Reduction)
    if (text == "none" || text == "mean" || text == "sum") v = int64_t{text == "none" ? 0 : text == "mean" ? 1 : 2};
  }
  if (v.isString() && (arg_type == "ScalarType" || arg_type == "ScalarType?")) {  // dtype: quint8, int32, ...
    const std::string name = v.toStringRef();
    if (const auto t = quantized_dtype(name) ? quantized_dtype(name) : parse_dtype(name)) v = *t;
  }
  if (v.isIntList() && v.toIntVector().empty() && arg_type.rfind("Tensor", 0) == 0) {  // []: no tensors
    v = c10::List<at::Tensor>();
  }
  if (v.isTensorList() && arg.real_type()->str() == "Tensor?[]") {  // indices of index/index_put
    c10::List<c10::optional<at::Tensor>> optional_list;
    for (at::Tensor t : v.toTensorList()) optional_list.push_back(t);
    v = optional_list;
  }
  return v;
}

// A synthesized tensor for `arg`, by its name.
c10::IValue tensor_value(const c10::Argument& arg, const Synthesizing& s) {
  Maker& maker = s.maker;
  if (arg.name().find("mask") != std::string::npos) return maker.tensor(maker.shape(), c10::ScalarType::Bool, "mask");
  if (arg.name() == "index" || arg.name() == "indices") {
    // in range along any dimension of a default-shaped input
    const auto& sh = maker.shape();
    const int64_t smallest = sh.empty() ? 1 : *std::min_element(sh.begin(), sh.end());
    return maker.tensor(sh, c10::ScalarType::Long, "index", 0, static_cast<double>(smallest));
  }
  if (arg.name() == "value" || (arg.name() == "values" && s.has_optional_indices)) {
    return maker.tensor({}, s.dtype);  // fill_.Tensor, masked_fill_.Tensor, index_put: 0-dim
  }
  if (arg.name() == "p" || arg.name() == "std") {  // probabilities, deviations
    return maker.tensor(maker.shape(), s.dtype, "uniform", 0.1, 0.9);
  }
  if (s.spatial && arg.name() == "weight") {  // 3 channels in and out, kernel 2
    std::vector<int64_t> w = {3, 3};
    for (int i = 0; i < s.op.spatial; ++i) w.push_back(2);
    return maker.tensor(w, s.dtype);
  }
  if (s.spatial && arg.name() == "bias") return maker.tensor({3}, s.dtype);
  if (s.spatial && arg.name() == "grid") {  // sampling positions in [-1, 1]
    std::vector<int64_t> g = {2};
    for (int i = 0; i < s.op.spatial; ++i) g.push_back(4);
    g.push_back(s.op.spatial);
    return maker.tensor(g, s.dtype, "uniform", -1, 1);
  }
  return maker.default_tensor();
}

// A synthesized value of a type other than Tensor (`type` without its '?'); nullopt when there is none.
std::optional<c10::IValue> other_value(const c10::Argument& arg, const std::string& type, const Synthesizing& s) {
  Maker& maker = s.maker;
  const c10::ScalarType dtype = s.dtype;
  if (type == "Tensor[]") return c10::List<at::Tensor>({maker.default_tensor(), maker.default_tensor()});
  if (type == "Tensor?[]") {  // index, index_put: one index tensor into the first dimension
    c10::List<c10::optional<at::Tensor>> indices;
    indices.push_back(maker.tensor({2}, c10::ScalarType::Long, "index", 0, static_cast<double>(s.shape.at(0))));
    return indices;
  }
  if (type == "int" || type == "SymInt") return int64_t{1};
  if (type == "int[]" || type == "SymInt[]") return int_list_for(arg.name(), s.shape, s.op, s.spatial);
  if (type == "float") return 0.5;
  if (type == "Scalar") {
    return c10::isFloatingType(dtype) || c10::isComplexType(dtype) ? c10::IValue(0.5) : c10::IValue(2);
  }
  if (type == "Scalar[]") {  // one per tensor of a Tensor[] (or per dimension: gradient's spacing)
    c10::impl::GenericList scalars(c10::NumberType::get());
    for (int i = 0; i < 2; ++i) scalars.push_back(c10::IValue(c10::isFloatingType(dtype) ? 0.5 + i : 2.0 + i));
    return scalars;
  }
  if (type == "bool") return false;
  if (type == "bool[]") {  // output_mask of backward ops: every gradient (bool[2], bool[3], bool[4])
    c10::List<bool> every;
    for (int64_t i = 0; i < arg.N().value_or(3); ++i) every.push_back(true);
    return every;
  }
  if (type == "ScalarType") return dtype;
  if (type == "Storage") return c10::IValue(maker.default_tensor().storage());  // set_.source_Storage
  if (auto text = type == "str" ? string_for(arg.name(), s.op) : std::nullopt) return *text;
  return std::nullopt;
}

// The value of an argument no spec sample gives: the forward's (a backward's from-forward variant), an empty out=
// tensor, its default, a dimension name, or one synthesized; nullopt when none can be.
std::optional<c10::IValue> argument_value(const c10::Argument& arg, const std::map<std::string, c10::IValue>& given,
                                          const Synthesizing& s) {
  if (auto it = given.find(arg.name()); it != given.end() && !is_write(arg)) {
    return map_tensors(it->second, [](const at::Tensor& t) { return t.defined() ? t.clone() : t; });
  }
  std::string type = arg.real_type()->str();
  const bool optional = !type.empty() && type.back() == '?';
  if (optional) type.pop_back();
  if (is_write(arg) && arg.kwarg_only() && type == "Tensor") {  // out=: the op resizes it
    const bool index = arg.name().find("indices") != std::string::npos;
    return at::empty({0}, at::TensorOptions().dtype(index ? c10::ScalarType::Long : s.dtype));
  }
  const bool fillable = type == "Tensor" || type == "Scalar" || type == "float" || type == "int" || type == "SymInt" ||
                        (type == "int[]" && arg.name() != "scale_factors") || type == "SymInt[]" ||
                        (type == "str" && string_for(arg.name(), s.op));
  const bool left_out = arg.name() == "scale_factors" && s.has_output_size;  // upsample: one of the two
  if (arg.default_value() && !(type == "Tensor" && !optional) &&
      !(s.fill_optionals && optional && fillable && !left_out)) {
    return *arg.default_value();
  }
  if (s.op.named && (type == "str" || type == "str[]")) {
    if (auto v = dimname_for(arg.name(), type, s.op, s.schema, static_cast<int64_t>(s.shape.size()))) return *v;
  }
  if (type == "Tensor") return tensor_value(arg, s);
  if (optional && !(s.fill_optionals && fillable && !left_out)) return c10::IValue();
  return other_value(arg, type, s);
}

// The first tensor and the first tensor list of a named operator's arguments get dimension names (an in-place self
// too).
void name_first_tensors(const c10::FunctionSchema& schema, std::vector<c10::IValue>& args) {
  bool tensor = false, list = false;
  for (size_t i = 0; i < args.size(); ++i) {
    if (is_out_argument(schema.arguments()[i])) continue;
    if (args[i].isTensor() && !tensor) {
      tensor = true;
      name_dimensions(args[i]);
    } else if (args[i].isTensorList() && !list) {
      list = true;
      name_dimensions(args[i]);
    }
  }
}

}  // namespace

std::vector<Synthesis> synthesis_variants(const c10::FunctionSchema& schema) {
  std::vector<Synthesis> variants = plain_variants();
  const OpTraits op = traits_of(schema);
  if (op.spatial) {
    variants.push_back({fmt::format("{}-d", op.spatial), spatial_shape(op.spatial), false, true});
    variants.push_back({fmt::format("{}-d+optionals", op.spatial), spatial_shape(op.spatial), true, true});
  }
  if (forward_of(schema)) {  // first: a backward kernel may read garbage from inconsistent inputs
    std::vector<Synthesis> first;
    for (Synthesis v : variants) {
      v.name = "from-forward:" + v.name;
      v.from_forward = true;
      first.push_back(v);
    }
    variants.insert(variants.begin(), first.begin(), first.end());
  }
  return variants;
}

SampleInputs make_inputs(const c10::FunctionSchema& schema, c10::ScalarType dtype, const Spec& spec,
                         const SampleSpec* sample, const std::string& seed_key, const Synthesis* how) {
  SampleInputs in;
  // A spec sample of an out= variant (or of its bare name) names the twin's arguments; the out tensors follow, unless
  // it gives one itself (a known bug's out= view: its strides are the bug).
  const auto gives_out = [&] {
    const auto& a = schema.arguments();
    return sample && std::any_of(a.begin(), a.end(), [&](const c10::Argument& arg) {
             return is_out_argument(arg) && sample->args.count(arg.name());
           });
  };
  if (auto twin = functional_twin(schema); twin && !gives_out()) {
    return out_variant_inputs(schema, *twin, make_inputs(twin->schema(), dtype, spec, sample, seed_key, how), dtype);
  }
  const OpTraits op = traits_of(schema);
  in.name = sample ? sample->name : how ? how->name : "default";
  std::vector<int64_t> shape = !sample && how && !how->shape.empty() ? how->shape : spec.shape;
  Maker maker(dtype, spec, shape, std::hash<std::string>()(seed_key + "/" + in.name) & 0x7fffffffffffull);
  maker.make_on_meta(sample && sample->on_meta);
  std::map<std::string, c10::IValue> given;
  if (!sample && how && how->from_forward) {
    if (auto forward = forward_of(schema)) given = from_forward(*forward, dtype, spec, seed_key + "/" + in.name, *how);
  }
  Synthesizing s{schema, op, dtype, shape, maker};
  s.fill_optionals = !sample && how && how->fill_optionals;
  s.spatial = !sample && how && how->spatial && op.spatial;
  for (const auto& arg : schema.arguments()) {
    s.has_optional_indices = s.has_optional_indices || arg.real_type()->str() == "Tensor?[]";
    s.has_output_size = s.has_output_size || arg.name() == "output_size";
  }
  for (const auto& arg : schema.arguments()) {
    if (sample) {
      if (auto it = sample->args.find(arg.name()); it != sample->args.end()) {
        const ArgSpec& given_arg = it->second;
        // A view stays a view, and a CPU scalar on the CPU, on the target (SampleInputs).
        in.keep_views = in.keep_views || !given_arg.strides.empty() || given_arg.offset != 0;
        if (given_arg.on_cpu) in.on_cpu.push_back(in.args.size());
        const std::string type = arg.real_type()->str();
        if ((type == "Device" || type == "Device?") && given_arg.kind == ArgSpec::Kind::kString &&
            given_arg.s != "cpu") {
          in.target_device.push_back(in.args.size());
        }
        in.args.push_back(sample_value(arg, given_arg, s));
        continue;
      }
    }
    std::optional<c10::IValue> v = argument_value(arg, given, s);
    if (!v) {
      in.unsupported = fmt::format("cannot synthesize argument '{}' of type {}; give a sample in the spec", arg.name(),
                                   arg.real_type()->str());
      return in;
    }
    in.args.push_back(std::move(*v));
  }
  if (!sample) make_well_posed(schema, op, in.args, dtype, maker.gen());
  if (op.named && !compat::kNamedTensors) {  // a skip that says why, never a probe without its names
    in.unsupported = compat::kNoNamedTensors;
    return in;
  }
  if (op.named) name_first_tensors(schema, in.args);
  return in;
}

}  // namespace mps_audit