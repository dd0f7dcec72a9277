// How the recorder keys and keeps a call's arguments: see call_values.h.
#include "recorder/call_values.h"

#include <cmath>

#include <ATen/core/Tensor.h>
#include <ATen/ops/view_as_real.h>

#include "common/torch_compat.h"

namespace mps_audit::recorder {

Dict new_dict() {
  return Dict(c10::StringType::get(), c10::AnyType::get());
}
List new_list() {
  return List(c10::AnyType::get());
}

// --- what the Python recorder calls things -----------------------------------------------------------------------

std::optional<std::string> dtype_label(c10::ScalarType t) {
  switch (t) {
    case c10::ScalarType::Float: return "float32";
    case c10::ScalarType::Half: return "float16";
    case c10::ScalarType::BFloat16: return "bfloat16";
    case c10::ScalarType::Double: return "float64";
    case c10::ScalarType::Long: return "int64";
    case c10::ScalarType::Int: return "int32";
    case c10::ScalarType::Short: return "int16";
    case c10::ScalarType::Char: return "int8";
    case c10::ScalarType::Byte: return "uint8";
    case c10::ScalarType::Bool: return "bool";
    case c10::ScalarType::ComplexFloat: return "complex64";
    case c10::ScalarType::ComplexDouble: return "complex128";
    default: return std::nullopt;  // what torch.save and libtorch's reader do not both take
  }
}

namespace {

// A dtype as Python names it ("complex32"), for what is not kept.
std::string python_dtype_name(c10::ScalarType t) {
  if (t == c10::ScalarType::ComplexHalf) return "complex32";
  if (t == c10::ScalarType::QInt8) return "qint8";
  if (t == c10::ScalarType::QUInt8) return "quint8";
  if (t == c10::ScalarType::QInt32) return "qint32";
  return c10::toString(t);
}

const char* layout_label(int64_t v) {
  switch (static_cast<c10::Layout>(v)) {
    case c10::kStrided: return "strided";
    case c10::kSparse: return "sparse_coo";
    case c10::kSparseCsr: return "sparse_csr";
    default: return "other";
  }
}

const char* memory_format_label(int64_t v) {
  switch (static_cast<c10::MemoryFormat>(v)) {
    case c10::MemoryFormat::Contiguous: return "contiguous_format";
    case c10::MemoryFormat::Preserve: return "preserve_format";
    case c10::MemoryFormat::ChannelsLast: return "channels_last";
    case c10::MemoryFormat::ChannelsLast3d: return "channels_last_3d";
    default: return "other";
  }
}

Dict tagged(const char* tag, c10::IValue v) {
  Dict d = new_dict();
  d.insert(tag, std::move(v));
  return d;
}

}  // namespace

// --- the key of a call ---------------------------------------------------------------------------------------------

// Note [Distinct calls]
// Two calls are the same call when their operator, their tensors' shapes, dtypes, layouts and strides, and their
// other arguments are: integers, booleans, strings and devices by value; floating-point numbers (and the Python
// numbers wrapped as tensors) by kind only: NaN, an infinity, a whole number (by value), or another positive or
// negative number. The first call's value is kept. Where a float changes the path a kernel takes, it is at one of
// those kinds (a 0 or 1 alpha, a NaN fill); a learning rate or a bias correction that changes at every step does not,
// and would make every step's calls distinct, and the replay as long as the suite.

namespace {

template <typename T>
void put(std::string& key, T v) {
  key.append(reinterpret_cast<const char*>(&v), sizeof(v));
}

// A Python number the argument parser wrapped into a 0-d tensor (x * 0.5): kept as the number, as a dispatch mode sees
// it, and keyed by its value.
bool wrapped_number(const at::Tensor& t) {
  return t.defined() && t.unsafeGetTensorImpl()->is_wrapped_number();
}

// A wrapped number's value, read from its memory: no operator runs (the callbacks hold the recorder's lock).
c10::Scalar number_of(const at::Tensor& t) {
  switch (t.scalar_type()) {
    case c10::ScalarType::Double: return *static_cast<const double*>(t.data_ptr());
    case c10::ScalarType::Long: return *static_cast<const int64_t*>(t.data_ptr());
    case c10::ScalarType::Bool: return *static_cast<const bool*>(t.data_ptr());
    case c10::ScalarType::ComplexDouble: return *static_cast<const c10::complex<double>*>(t.data_ptr());
    default: return 0;  // no other type wraps a Python number
  }
}

}  // namespace

void key_of(const c10::IValue& v, std::string& key) {
  if (v.isTensor()) {
    const at::Tensor& t = v.toTensor();
    if (!t.defined()) {
      key += 'u';
      return;
    }
    if (wrapped_number(t)) {
      key += 'w';
      put(key, static_cast<int8_t>(t.scalar_type()));
      key_of(c10::IValue(number_of(t)), key);
      return;
    }
    key += 'T';
    put(key, static_cast<int8_t>(t.scalar_type()));
    put(key, static_cast<int8_t>(t.layout()));
    put(key, static_cast<int16_t>(t.dim()));
    for (const int64_t s : t.sizes()) put(key, s);
    if (t.layout() == c10::kStrided) {
      for (const int64_t s : t.strides()) put(key, s);
    }
  } else if (v.isInt()) {
    key += 'i';
    put(key, v.toInt());
  } else if (v.isDouble()) {
    // By its kind, not its value (Note [Distinct calls]): a learning rate that changes every step, or a bias
    // correction, would make every step's calls distinct.
    key += 'd';
    const double d = v.toDouble();
    const bool whole = std::isfinite(d) && std::abs(d) < 9007199254740992.0 && d == std::floor(d);
    put(key, static_cast<int8_t>(std::isnan(d) ? 0 : std::isinf(d) ? (d > 0 ? 1 : 2) : whole ? 3 : d > 0 ? 4 : 5));
    if (whole) put(key, d);
  } else if (v.isBool()) {
    key += v.toBool() ? 'B' : 'b';
  } else if (v.isNone()) {
    key += 'n';
  } else if (v.isString()) {
    key += 's';
    put(key, static_cast<uint32_t>(v.toStringRef().size()));
    key += v.toStringRef();
  } else if (v.isList()) {
    key += 'L';
    const auto& list = v.toListRef();
    put(key, static_cast<uint32_t>(list.size()));
    for (const auto& e : list) key_of(e, key);
  } else if (v.isIntList()) {
    key += 'I';
    for (const int64_t i : v.toIntVector()) put(key, i);
  } else if (v.isDevice()) {
    key += 'D';
    put(key, static_cast<int8_t>(v.toDevice().type()));
  } else if (v.isComplexDouble()) {
    key += 'c';
    put(key, v.toComplexDouble().real());
    put(key, v.toComplexDouble().imag());
  } else {
    key += '?';  // a generator, an object: the call is dropped when encoded
    key += v.tagKind();
  }
}

// --- a call's arguments, as the Python recorder encodes them -------------------------------------------------------

int64_t tensor_bytes(const c10::IValue& v) {
  int64_t n = 0;
  if (v.isTensor() && v.toTensor().defined() && !wrapped_number(v.toTensor())) {
    n += v.toTensor().numel() * static_cast<int64_t>(v.toTensor().element_size());
  } else if (v.isList()) {
    for (const auto& e : v.toListRef()) n += tensor_bytes(e);
  }
  return n;
}

std::optional<std::string> first_dtype(const c10::IValue& v) {
  if (v.isTensor() && v.toTensor().defined() && !wrapped_number(v.toTensor())) {
    if (auto d = dtype_label(v.toTensor().scalar_type())) return d;
    return std::string(c10::toString(v.toTensor().scalar_type()));
  }
  if (v.isList()) {
    for (const auto& e : v.toListRef()) {
      if (auto d = first_dtype(e)) return d;
    }
  }
  return std::nullopt;
}

namespace {

c10::IValue describe(const at::Tensor& t) {
  Dict d = new_dict();
  d.insert("shape", c10::IValue(t.sizes().vec()));
  d.insert("strides", c10::IValue(t.strides().vec()));
  d.insert("dtype", *dtype_label(t.scalar_type()));
  double low = 0, high = 0;
  if (t.numel()) {
    at::Tensor v = t.is_complex() ? at::view_as_real(t) : t;
    if (v.is_floating_point()) {
      const at::Tensor finite = v.isfinite();
      v = finite.all().item<bool>() ? v : v.masked_select(finite);
    }
    if (v.numel()) {
      low = v.min().item<double>();
      high = v.max().item<double>();
    }
  }
  d.insert("low", low);
  d.insert("high", high);
  return tagged("tensor", d);
}

c10::IValue encode_tensor(const at::Tensor& t, int64_t max_numel) {
  if (!t.defined()) return c10::IValue();
  if (wrapped_number(t)) {
    const c10::Scalar n = number_of(t);
    if (n.isComplex()) {
      List parts = new_list();
      parts.push_back(n.toComplexDouble().real());
      parts.push_back(n.toComplexDouble().imag());
      return tagged("complex", parts);
    }
    return c10::IValue(n);
  }
  if (t.layout() != c10::kStrided || t.is_quantized()) throw Drop{"sparse or quantized tensor"};
  if (mps_audit::compat::has_names(t)) throw Drop{"named tensor"};
  if (!dtype_label(t.scalar_type())) throw Drop{"tensor of dtype " + python_dtype_name(t.scalar_type())};
  at::Tensor plain = t.detach();
  if (plain.is_conj()) plain = plain.resolve_conj();
  if (plain.is_neg()) plain = plain.resolve_neg();
  if (plain.numel() > max_numel) return describe(plain);
  return plain.to(c10::kCPU).clone();  // the operator may write it afterwards
}

}  // namespace

c10::IValue encode(const c10::IValue& v, const std::string& type, int64_t max_numel) {
  std::string base = type;
  if (!base.empty() && base.back() == '?') base.pop_back();
  if (v.isNone()) return v;
  if (v.isTensor()) return encode_tensor(v.toTensor(), max_numel);
  if (v.isInt() && base == "ScalarType") {
    const auto d = dtype_label(static_cast<c10::ScalarType>(v.toInt()));
    if (!d) throw Drop{"dtype argument " + python_dtype_name(static_cast<c10::ScalarType>(v.toInt()))};
    return tagged("dtype", *d);
  }
  if (v.isInt() && base == "Layout") return tagged("layout", std::string(layout_label(v.toInt())));
  if (v.isInt() && base == "MemoryFormat") return tagged("memory_format", std::string(memory_format_label(v.toInt())));
  if (v.isBool() || v.isInt() || v.isDouble() || v.isString()) return v;
  if (v.isComplexDouble()) {
    List parts = new_list();
    parts.push_back(v.toComplexDouble().real());
    parts.push_back(v.toComplexDouble().imag());
    return tagged("complex", parts);
  }
  // The device the program chose is where its calls ran; a replay runs them on the CPU and on the target.
  if (v.isDevice()) return tagged("device", std::string("cpu"));
  if (v.isList() || v.isIntList() || v.isDoubleList() || v.isBoolList() || v.isTensorList()) {
    const std::string element =
        base.size() > 2 && base.substr(base.size() - 2) == "[]" ? base.substr(0, base.rfind('[')) : std::string();
    List out = new_list();
    for (const auto& e : v.toListRef()) out.push_back(encode(e, element, max_numel));
    return out;
  }
  throw Drop{std::string("value of type ") + v.tagKind()};
}

}  // namespace mps_audit::recorder
