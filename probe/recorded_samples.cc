// Reads the recordings of tools/record_samples.py and `mps-audit record` and turns each call into arguments for the
// linked libtorch.
#include "probe/recorded_samples.h"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <optional>
#include <variant>

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/ScalarOps.h>
#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/ops/empty_strided.h>
#include <ATen/ops/rand.h>
#include <ATen/ops/randint.h>
#include <ATen/ops/view_as_complex.h>
#include <c10/core/Layout.h>
#include <c10/core/MemoryFormat.h>
#include <fmt/format.h>
#include <torch/csrc/jit/serialization/pickle.h>

#include "common/diagnostics.h"
#include "common/ivalue_tensors.h"
#include "common/output_file.h"
#include "common/paths.h"
#include "common/torch_compat.h"
#include "emu/mps_emulator.h"
#include "probe/device_choices.h"
#include "probe/dtypes.h"

namespace mps_audit {
namespace {

constexpr const char* kFormat = "mps-audit-samples/1";

std::string hash_of(const std::vector<char>& bytes) {
  uint64_t h = 14695981039346656037ull;
  for (char c : bytes) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return fmt::format("fnv1a64:{:016x}", h);
}

// A tagged value ({"dtype": "float32"}, {"complex": [re, im]}, ...): its tag and value; nullopt for other values.
std::optional<std::pair<std::string, c10::IValue>> tagged(const c10::IValue& v) {
  if (!v.isGenericDict()) return std::nullopt;
  const auto dict = v.toGenericDict();
  if (dict.size() != 1 || !dict.begin()->key().isString()) return std::nullopt;
  return std::make_pair(dict.begin()->key().toStringRef(), dict.begin()->value());
}

std::optional<int64_t> enum_value(const std::string& tag, const std::string& name) {
  if (tag == "dtype") {
    if (auto d = parse_dtype(name)) return static_cast<int64_t>(*d);
    if (name == "float64") return static_cast<int64_t>(c10::ScalarType::Double);
    if (name == "complex128") return static_cast<int64_t>(c10::ScalarType::ComplexDouble);
    return std::nullopt;
  }
  if (tag == "layout") {
    if (name == "strided") return static_cast<int64_t>(c10::kStrided);
    return std::nullopt;  // sparse layouts: the prober makes dense tensors only
  }
  if (tag == "memory_format") {
    if (name == "contiguous_format") return static_cast<int64_t>(c10::MemoryFormat::Contiguous);
    if (name == "preserve_format") return static_cast<int64_t>(c10::MemoryFormat::Preserve);
    if (name == "channels_last") return static_cast<int64_t>(c10::MemoryFormat::ChannelsLast);
    if (name == "channels_last_3d") return static_cast<int64_t>(c10::MemoryFormat::ChannelsLast3d);
  }
  return std::nullopt;
}

// A described tensor ({"tensor": {shape, strides, dtype, low, high}}) as a meta tensor of that shape, strides and
// dtype, its range kept in `described`; nullopt when the description is malformed.
std::optional<c10::IValue> stand_in(const c10::IValue& v, std::vector<Recordings::Described>& described) {
  if (!v.isGenericDict()) return std::nullopt;
  const auto d = v.toGenericDict();
  auto ints = [&](const char* key) -> std::optional<std::vector<int64_t>> {
    const auto it = d.find(key);
    if (it == d.end() || !it->value().isList()) return std::nullopt;
    std::vector<int64_t> out;
    for (const c10::IValue& x : it->value().toListRef()) {
      if (!x.isInt() || x.toInt() < 0) return std::nullopt;
      out.push_back(x.toInt());
    }
    return out;
  };
  auto number = [&](const char* key) -> std::optional<double> {
    const auto it = d.find(key);
    if (it == d.end() || !(it->value().isDouble() || it->value().isInt())) return std::nullopt;
    return it->value().toScalar().toDouble();
  };
  const auto shape = ints("shape"), strides = ints("strides");
  const auto low = number("low"), high = number("high");
  const auto dtype_it = d.find("dtype");
  if (!shape || !strides || shape->size() != strides->size() || !low || !high || dtype_it == d.end() ||
      !dtype_it->value().isString()) {
    return std::nullopt;
  }
  const auto dtype = enum_value("dtype", dtype_it->value().toStringRef());
  if (!dtype) return std::nullopt;
  at::Tensor t = at::empty_strided(*shape, *strides,
                                   at::TensorOptions().device(c10::kMeta).dtype(static_cast<c10::ScalarType>(*dtype)));
  described.push_back({t.unsafeGetTensorImpl(), *low, *high});
  return c10::IValue(std::move(t));
}

// A described tensor made: uniform in its recorded range (integers: whole numbers in it), the same every time.
at::Tensor make_described(const at::Tensor& meta, const Recordings::Described& d) {
  int64_t storage = 1;
  for (int64_t i = 0; i < meta.dim(); ++i) {
    if (meta.size(i) == 0) storage = 0;
    if (storage) storage += (meta.size(i) - 1) * meta.stride(i);
  }
  at::Generator gen = at::detail::createCPUGenerator(0);
  const c10::ScalarType dtype = meta.scalar_type();
  at::Tensor base;
  if (dtype == c10::kBool) {
    base = at::randint(0, 2, {storage}, gen, at::TensorOptions().dtype(c10::kLong)).to(c10::kBool);
  } else if (c10::isIntegralType(dtype, /*includeBool=*/false)) {
    const auto low = static_cast<int64_t>(std::ceil(d.low)), high = static_cast<int64_t>(std::floor(d.high));
    base = at::randint(low, std::max(low, high) + 1, {storage}, gen, at::TensorOptions().dtype(dtype));
  } else {
    const c10::ScalarType real = c10::isComplexType(dtype) ? c10::toRealValueType(dtype) : c10::kFloat;
    const int64_t parts = c10::isComplexType(dtype) ? 2 : 1;
    base = at::rand({storage * parts}, gen, at::TensorOptions().dtype(c10::kFloat)).mul(d.high - d.low).add(d.low);
    base = c10::isComplexType(dtype) ? at::view_as_complex(base.to(real).view({storage, 2})) : base.to(dtype);
  }
  return base.as_strided(meta.sizes(), meta.strides());
}

// The recorded value as the schema type wants it, or nullopt when it does not fit. Uses the schema's "fake" types,
// in which ScalarType, Layout, MemoryFormat and SymInt are ints. A described tensor becomes a meta tensor standing in
// for it, its range added to `described`.
std::optional<c10::IValue> convert(const c10::IValue& v, const c10::TypePtr& type,
                                   std::vector<Recordings::Described>& described) {
  using K = c10::TypeKind;
  switch (type->kind()) {
    case K::OptionalType:
      if (v.isNone()) return c10::IValue();
      // The recorded CPU device as the default, as synthesis leaves it: the inputs, not a device argument, say
      // where a probe runs.
      if (type->castRaw<c10::OptionalType>()->getElementType()->kind() == K::DeviceObjType) {
        if (const auto t = tagged(v);
            t && t->first == "device" && t->second.isString() && t->second.toStringRef() == "cpu") {
          return c10::IValue();
        }
      }
      return convert(v, type->castRaw<c10::OptionalType>()->getElementType(), described);
    case K::TensorType:
      if (v.isTensor()) return v;
      if (const auto t = tagged(v); t && t->first == "tensor") return stand_in(t->second, described);
      // A Python number where the operator takes a tensor (x * 0.5): what Python's argument parser makes of it, a
      // 0-d CPU tensor marked as a wrapped number, which type promotion treats as a scalar and which stays on the CPU
      // beside a device's tensors (Note [Wrapped numbers] in sample_probe.cc).
      if (v.isInt() || v.isDouble() || v.isBool()) {
        at::Tensor t = at::scalar_to_tensor(v.toScalar());
        t.unsafeGetTensorImpl()->set_wrapped_number(true);
        return c10::IValue(std::move(t));
      }
      return std::nullopt;
    case K::IntType:
      if (v.isInt()) return v;
      if (v.isBool()) return c10::IValue(static_cast<int64_t>(v.toBool()));
      if (const auto t = tagged(v); t && t->second.isString()) {
        if (auto e = enum_value(t->first, t->second.toStringRef())) return c10::IValue(*e);
      }
      return std::nullopt;
    case K::FloatType:
      if (v.isDouble()) return v;
      if (v.isInt()) return c10::IValue(static_cast<double>(v.toInt()));
      return std::nullopt;
    case K::BoolType:
      if (v.isBool()) return v;
      return std::nullopt;
    case K::StringType:
      if (v.isString()) return v;
      return std::nullopt;
    case K::NumberType:
    case K::ComplexType:
      if (v.isInt() || v.isDouble() || v.isBool()) {
        if (type->kind() == K::ComplexType) return c10::IValue(c10::complex<double>(v.toScalar().toDouble(), 0));
        return v;
      }
      if (const auto t = tagged(v); t && t->first == "complex" && t->second.isList()) {
        const auto parts = t->second.toList();
        if (parts.size() == 2 && parts.get(0).isDouble() && parts.get(1).isDouble()) {
          return c10::IValue(c10::complex<double>(parts.get(0).toDouble(), parts.get(1).toDouble()));
        }
      }
      return std::nullopt;
    case K::DeviceObjType:
      if (const auto t = tagged(v);
          t && t->first == "device" && t->second.isString() && t->second.toStringRef() == "cpu") {
        return c10::IValue(c10::Device(c10::kCPU));
      }
      return std::nullopt;
    case K::ListType: {
      if (!v.isList()) return std::nullopt;
      const c10::TypePtr element = type->castRaw<c10::ListType>()->getElementType();
      c10::impl::GenericList list(element);
      for (const c10::IValue& x : v.toListRef()) {  // toListRef: see the same loop over calls below
        auto c = convert(x, element, described);
        if (!c) return std::nullopt;
        list.push_back(std::move(*c));
      }
      return c10::IValue(std::move(list));
    }
    default:  // Generator (only None fits, handled as optional), Storage, Stream, Any...
      return std::nullopt;
  }
}

// The arguments of one call in schema order, or why they do not fit.
std::variant<std::vector<c10::IValue>, std::string> fit(const c10::FunctionSchema& schema,
                                                        const c10::impl::GenericDict& recorded,
                                                        std::vector<Recordings::Described>& described) {
  for (const auto& entry : recorded) {
    const std::string name = entry.key().toStringRef();
    bool known = false;
    for (const auto& a : schema.arguments()) known = known || a.name() == name;
    if (!known) return std::string("unknown argument name");
  }
  std::vector<c10::IValue> args;
  for (const auto& a : schema.arguments()) {
    const auto it = recorded.find(a.name());
    if (it == recorded.end()) {
      if (a.default_value()) {
        args.push_back(*a.default_value());
      } else if (a.type()->kind() == c10::TypeKind::OptionalType) {
        args.emplace_back();
      } else {
        return std::string("missing required argument");
      }
      continue;
    }
    auto c = convert(it->value(), a.type(), described);
    if (!c) return std::string("argument of the wrong type");
    args.push_back(std::move(*c));
  }
  return args;
}

std::vector<c10::IValue> own_copies(const std::vector<c10::IValue>& args, std::optional<c10::ScalarType> from,
                                    c10::ScalarType to, const std::vector<size_t>& dtype_args,
                                    const std::vector<Recordings::Described>& described) {
  std::vector<c10::IValue> out;
  for (size_t i = 0; i < args.size(); ++i) {
    const c10::IValue& a = args[i];
    // A dtype argument of the recorded dtype (a factory's, a reduction's) asks for the probed one too.
    if (from && std::find(dtype_args.begin(), dtype_args.end(), i) != dtype_args.end() && a.isInt() &&
        a.toInt() == static_cast<int64_t>(*from)) {
      out.emplace_back(static_cast<int64_t>(to));
      continue;
    }
    out.push_back(map_tensors(a, [&](const at::Tensor& t) {
      if (!t.defined() || t.unsafeGetTensorImpl()->is_wrapped_number()) return t;  // a number: as it was
      if (t.is_meta()) {
        for (const auto& d : described) {
          if (d.stand_in != t.unsafeGetTensorImpl()) continue;
          const at::Tensor made = make_described(t, d);
          return from && made.scalar_type() == *from ? made.to(to) : made;
        }
      }
      if (from && t.scalar_type() == *from) return t.to(to).clone();
      return t.clone();
    }));
  }
  return out;
}

}  // namespace

Recordings Recordings::load(const std::string& path) {
  Recordings r;
  const std::string bytes_text = read_file(path);
  const std::vector<char> bytes(bytes_text.begin(), bytes_text.end());
  r.summary_.path = path;
  r.summary_.hash = hash_of(bytes);
  c10::IValue root;
  try {
    root = torch::jit::pickle_load(bytes);
  } catch (const std::exception& e) {
    throw UserError(fmt::format("cannot read recorded samples: {}", std::string(e.what()).substr(0, 200)), {path});
  }
  if (!root.isGenericDict()) throw UserError("not a file of recorded samples (tools/record_samples.py)", {path});
  const auto top = root.toGenericDict();
  const auto format = top.find("format");
  if (format == top.end() || !format->value().isString() ||
      (format->value().toStringRef() != kFormat && format->value().toStringRef() != kCallsFormat)) {
    throw UserError(fmt::format("not a file of recorded samples in format {} or {}", kFormat, kCallsFormat), {path});
  }
  r.program_ = format->value().toStringRef() == kCallsFormat;
  const auto calls = top.find("calls");
  if (calls == top.end() || !calls->value().isList()) throw UserError("recorded samples without calls", {path});
  auto& dispatcher = c10::Dispatcher::singleton();
  // The list's elements themselves (toListRef), not a c10::List's proxies: g++ 13 reads a reference bound through a
  // proxy as dangling (-Wdangling-reference), and a copy as a needless one (-Wrange-loop-construct).
  for (const c10::IValue& call : calls->value().toListRef()) {
    const size_t index = r.summary_.calls;
    ++r.summary_.calls;
    auto drop = [&](const std::string& why) { ++r.summary_.dropped[why]; };
    if (!call.isGenericDict()) {
      drop("malformed call");
      continue;
    }
    const auto c = call.toGenericDict();
    const auto op = c.find("op"), dtype = c.find("dtype"), args = c.find("args");
    if (op == c.end() || dtype == c.end() || args == c.end() || !op->value().isString() || !dtype->value().isString() ||
        !args->value().isGenericDict()) {
      drop("malformed call");
      continue;
    }
    // Note [The recording device's own choices]: the operator a Mac calls in its place.
    const std::string name = replayed_operator(op->value().toStringRef());
    const size_t colons = name.find("::"), dot = name.find('.', colons == std::string::npos ? 0 : colons);
    const auto handle = dispatcher.findOp({name.substr(0, dot), dot == std::string::npos ? "" : name.substr(dot + 1)});
    if (!handle || !handle->hasSchema()) {
      drop("operator not in this libtorch");
      continue;
    }
    std::vector<Described> described;
    auto fitted = fit(handle->schema(), args->value().toGenericDict(), described);
    if (auto* why = std::get_if<std::string>(&fitted)) {
      drop(*why);
      continue;
    }
    // A float64 tensor or dtype in a call of another dtype (vector_norm(dtype=float64) of a float32 tensor) would
    // make the probe of that dtype about float64, which MPS does not have.
    const std::string label = dtype->value().toStringRef();
    if (label != "float64" && label != "complex128") {
      bool wide = false;
      const auto& arguments = handle->schema().arguments();
      const auto& values = std::get<0>(fitted);
      for (size_t i = 0; i < arguments.size(); ++i) {
        c10::TypePtr t = arguments[i].real_type();
        if (t->kind() == c10::TypeKind::OptionalType) t = t->castRaw<c10::OptionalType>()->getElementType();
        if (t->kind() == c10::TypeKind::ScalarTypeType && values[i].isInt()) {
          const auto s = static_cast<c10::ScalarType>(values[i].toInt());
          wide = wide || s == c10::ScalarType::Double || s == c10::ScalarType::ComplexDouble;
        }
        map_tensors(values[i], [&](const at::Tensor& x) {
          if (x.defined() && !x.unsafeGetTensorImpl()->is_wrapped_number()) {  // a Python number is no float64 tensor
            wide =
                wide || x.scalar_type() == c10::ScalarType::Double || x.scalar_type() == c10::ScalarType::ComplexDouble;
          }
          return x;
        });
      }
      if (wide) {
        drop("float64 in a call of another dtype");
        continue;
      }
    }
    ++r.summary_.kept;
    if (!r.dtype_args_.count(name)) {
      auto& indices = r.dtype_args_[name];
      const auto& arguments = handle->schema().arguments();
      for (size_t i = 0; i < arguments.size(); ++i) {
        c10::TypePtr t = arguments[i].real_type();
        if (t->kind() == c10::TypeKind::OptionalType) t = t->castRaw<c10::OptionalType>()->getElementType();
        if (t->kind() == c10::TypeKind::ScalarTypeType) indices.push_back(i);
      }
    }
    r.calls_[name][dtype->value().toStringRef()].push_back(
        {std::move(std::get<0>(fitted)), index, std::move(described)});
  }
  return r;
}

std::vector<RecordedSample> Recordings::samples(const std::string& op, const std::string& dtype, size_t max) const {
  std::vector<RecordedSample> out;
  const auto by_dtype = calls_.find(op);
  const auto to = parse_dtype(dtype);
  if (by_dtype == calls_.end() || !to) return out;
  if (max == 0) max = samples_per_probe();
  if (const auto own = by_dtype->second.find(dtype); own != by_dtype->second.end()) {
    for (const auto& call : own->second) {
      if (out.size() >= max) break;
      out.push_back({program_ ? fmt::format("call:{}", call.index) : fmt::format("recorded:{}", out.size()),
                     own_copies(call.args, std::nullopt, *to, {}, call.described)});
    }
    return out;
  }
  // Another dtype's, float32 first (the dtype every OpInfo supports), then in name order.
  std::vector<std::string> order;
  if (by_dtype->second.count("float32")) order.push_back("float32");
  for (const auto& [label, calls] : by_dtype->second) {
    if (label != "float32" && parse_dtype(label)) order.push_back(label);
  }
  if (order.empty()) return out;
  const auto& calls = by_dtype->second.at(order.front());
  const auto from = parse_dtype(order.front());
  for (const auto& call : calls) {
    if (out.size() >= max) break;
    out.push_back({fmt::format("recorded:{}:from-{}", out.size(), order.front()),
                   own_copies(call.args, from, *to, dtype_args_.at(op), call.described)});
  }
  return out;
}

std::string default_recordings_path() {
  // The release folder the emulator uses for this libtorch: the exact release, else one of its minor release
  // (Debian's 1.13.1 says 1.13.0). Recordings of other minor releases would name other operators and arguments.
  const std::string dir = emu::find_release_dir(compat::kTorchVersion);
  if (dir.empty()) return "";
  const std::string file = join_path(dir, "samples.pt");
  return path_exists(file) ? file : "";
}

// The process's recordings: loaded on first use after each choice.
struct ProcessRecordings {
  std::mutex mutex;
  std::string choice;
  bool loaded = false;
  std::optional<Recordings> recordings;
};

ProcessRecordings& process_state() {
  static ProcessRecordings state;
  return state;
}

void set_recordings_choice(const std::string& choice) {
  ProcessRecordings& s = process_state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.loaded && s.choice == choice) return;
  s.choice = choice;
  s.loaded = false;
  s.recordings.reset();
}

const Recordings* process_recordings() {
  ProcessRecordings& s = process_state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.loaded) {
    s.loaded = true;
    const std::string path = s.choice.empty() ? default_recordings_path() : s.choice;
    if (!path.empty() && path != "none") s.recordings = Recordings::load(path);
  }
  return s.recordings ? &*s.recordings : nullptr;
}

}  // namespace mps_audit
