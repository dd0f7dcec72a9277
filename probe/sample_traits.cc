// Note [Traits of a sample]
// Known MPS bugs depend on the input (data/mps_known_bugs.yaml's `when`: a rank, a size, a view, repeated indices, a
// CPU scalar, a keyword argument), so a record says what the samples it ran on the target were like
// (ProbeResult::traits, merged over them): read from the arguments the target got, after their copy there, so that
// a view the copy kept is a view and one it made contiguous is not. Of tensor arguments, and of each tensor a list
// holds:
// - max_rank, max_numel, max_size: the highest rank, the most elements, the largest size of one dimension;
// - non_contiguous: neither contiguous nor channels-last contiguous (gaps between elements, or another order);
// - storage_offset: starts past its storage's start (a narrow, a slice, a select of a larger tensor);
// - channels_last: a 4-d (5-d) tensor in channels_last (channels_last_3d) layout that is not also contiguous;
// - empty: no elements, except an out= argument, which the operator resizes before it writes;
// - cpu_scalar: a 0-d tensor on the CPU beside tensors on a device (TensorIterator's CPU scalars);
// - duplicate_indices, out_of_range_indices: an index argument (index_arguments()) with a value repeated (within a
//   slice along `dim` for gather's and scatter's, whose slices address one row each), or a value outside [0, n) for
//   the size n of the dimension it indexes, where the schema says which ([-n, n) for the operators that count a
//   negative index from the end: index, index_put, take, put, index_fill); a loss's class target outside
//   [0, classes) other than its ignore_index (the CPU refuses such values, so a sample that ran rarely has one);
// - kwargs: keyword-only arguments (after `*` in the schema, out= excepted) given a value that is not their default;
// - max_bytes: the most bytes of one tensor argument;
// - nan, inf: a floating-point (or complex) tensor argument that holds a NaN, an infinity;
// - args: every other argument's value as text (`arg:` conditions of the ledger: "arg:k>16"), its default where the
//   sample left it out; a dtype and a loss's reduction by name, an optional tensor given as "tensor".
// A factory (randn, zeros: no tensor argument) has the sizes of the tensor its `size` asks for.
// Reading index values copies them to a sorted vector: index arguments are small, and the values are read from the
// sample's CPU arguments, never from the device. So are NaNs and infinities, of tensors up to a million elements; of a
// larger one, or one the CPU arguments lack, they are not known (values_unknown).
#include "probe/sample_traits.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <utility>

#include <ATen/ops/view_as_real.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "probe/dtypes.h"

namespace mps_audit {

bool is_write(const c10::Argument& a) {
  return a.alias_info() && a.alias_info()->isWrite();
}

bool is_out(const c10::Argument& a) {
  return is_write(a) && a.kwarg_only();
}

namespace {

// Calls f(tensor, element) for each defined tensor `v` holds: a Tensor (element -1), or the tensors of a Tensor[] or
// Tensor?[] (their positions in the list).
void each_tensor(const c10::IValue& v, const std::function<void(const at::Tensor&, int)>& f) {
  if (v.isTensor()) {
    if (v.toTensor().defined()) f(v.toTensor(), -1);
  } else if (v.isTensorList()) {
    int k = 0;
    for (at::Tensor t : v.toTensorList()) {
      if (t.defined()) f(t, k);
      ++k;
    }
  } else if (v.isList()) {
    int k = 0;
    for (c10::IValue e : v.toList()) {
      if (e.isTensor() && e.toTensor().defined()) f(e.toTensor(), k);
      ++k;
    }
  }
}

bool is_index_name(const std::string& name) {
  return name == "index" || name == "indices" || name == "idx";
}

bool integral(const at::Tensor& t) {
  return c10::isIntegralType(t.scalar_type(), /*includeBool=*/false);
}

const at::Tensor* tensor_named(const c10::FunctionSchema& schema, const std::vector<c10::IValue>& args,
                               const char* name) {
  for (size_t i = 0; i < schema.arguments().size() && i < args.size(); ++i) {
    if (schema.arguments()[i].name() == name && args[i].isTensor() && args[i].toTensor().defined()) {
      return &args[i].toTensor();
    }
  }
  return nullptr;
}

const c10::IValue* value_named(const c10::FunctionSchema& schema, const std::vector<c10::IValue>& args,
                               const char* name) {
  for (size_t i = 0; i < schema.arguments().size() && i < args.size(); ++i) {
    if (schema.arguments()[i].name() == name) return &args[i];
  }
  return nullptr;
}

// The size of the dimension that a plain index argument's values index, where the schema says which: along `dim` of
// self (index_select, gather, scatter, index_add, ...), the rows of an embedding's weight, the elements of self for
// put and take, the plane of a max_unpool's output.
std::optional<int64_t> index_bound(const c10::FunctionSchema& schema, const std::vector<c10::IValue>& args) {
  const std::string base = base_name(schema);
  if (base.find("max_unpool") != std::string::npos) {
    const c10::IValue* size = value_named(schema, args, "output_size");
    if (!size || !size->isIntList()) return std::nullopt;
    int64_t n = 1;
    for (const int64_t s : size->toIntVector()) n *= s;
    return n;
  }
  if (base.find("embedding") != std::string::npos) {
    if (const at::Tensor* weight = tensor_named(schema, args, "weight"); weight && weight->dim() > 0) {
      return weight->size(0);
    }
    const c10::IValue* rows = value_named(schema, args, "num_weights");
    return rows && rows->isInt() ? std::make_optional(rows->toInt()) : std::nullopt;
  }
  const at::Tensor* self = tensor_named(schema, args, "self");
  if (!self) self = tensor_named(schema, args, "input");
  if (!self) return std::nullopt;
  const c10::IValue* dim = value_named(schema, args, "dim");
  if (dim && dim->isInt()) {
    const int64_t rank = std::max<int64_t>(self->dim(), 1), d = dim->toInt();
    if (d < -rank || d >= rank) return std::nullopt;
    return self->dim() == 0 ? 1 : self->size(d < 0 ? d + rank : d);
  }
  if (base == "take" || base == "put" || base == "put_" || base == "take_along_dim") return self->numel();
  return std::nullopt;
}

// The index values of `t`, sorted within each slice along `along` (all of them, when nullopt), and the length of the
// slices; empty when there are too many to read cheaply or none can be read.
std::pair<std::vector<int64_t>, int64_t> sorted_values(const at::Tensor& t, std::optional<int64_t> along) {
  if (t.numel() == 0 || t.numel() > (int64_t{1} << 20) || t.is_meta() || t.layout() != c10::kStrided) return {};
  at::Tensor longs = t.to(c10::kCPU).to(c10::kLong);
  if (along) longs = longs.movedim(*along, -1);
  longs = longs.contiguous();
  std::vector<int64_t> v(longs.data_ptr<int64_t>(), longs.data_ptr<int64_t>() + longs.numel());
  const int64_t slice = along ? std::max<int64_t>(t.size(*along), 1) : t.numel();
  for (size_t k = 0; k < v.size(); k += static_cast<size_t>(slice)) {
    std::sort(v.begin() + static_cast<std::ptrdiff_t>(k), v.begin() + static_cast<std::ptrdiff_t>(k + slice));
  }
  return {std::move(v), slice};
}

// The tensor at (position, element) of `args`, if any.
at::Tensor tensor_at(const std::vector<c10::IValue>& args, size_t position, int element) {
  if (position >= args.size()) return at::Tensor();
  const c10::IValue& v = args[position];
  if (element < 0) return v.isTensor() ? v.toTensor() : at::Tensor();
  at::Tensor found;
  each_tensor(v, [&](const at::Tensor& t, int k) {
    if (k == element) found = t;
  });
  return found;
}

// Up to this many elements, a tensor's values are read for the traits that need them.
constexpr int64_t kReadValuesUpTo = int64_t{1} << 20;

// Whether `t` (on the CPU) holds a NaN, an infinity; nullopt when its values are not read.
std::optional<std::pair<bool, bool>> nan_inf(const at::Tensor& t) {
  if (!t.defined() || !(t.is_floating_point() || t.is_complex())) return std::make_pair(false, false);
  if (!t.device().is_cpu() || t.numel() > kReadValuesUpTo || t.layout() != c10::kStrided || t.is_quantized()) {
    return std::nullopt;
  }
  if (t.numel() == 0) return std::make_pair(false, false);
  // A loop over the values, not isnan().any(): four operators for each tensor of every sample would cost the audit a
  // quarter of its time.
  at::Tensor real = t.is_complex() ? at::view_as_real(t.resolve_conj()) : t;
  const bool wide = real.scalar_type() == c10::ScalarType::Double;
  real = real.to(wide ? c10::ScalarType::Double : c10::ScalarType::Float).contiguous();
  bool nan = false, inf = false;
  const auto scan = [&](const auto* v) {
    for (int64_t k = 0; k < real.numel(); ++k) {
      nan = nan || std::isnan(v[k]);
      inf = inf || std::isinf(v[k]);
    }
  };
  if (wide) {
    scan(real.data_ptr<double>());
  } else {
    scan(real.data_ptr<float>());
  }
  return std::make_pair(nan, inf);
}

bool same_value(const c10::IValue& a, const c10::IValue& b) {
  if (a.isTensor() || b.isTensor()) return false;
  if ((a.isInt() || a.isDouble() || a.isBool()) && (b.isInt() || b.isDouble() || b.isBool())) {
    return a.toScalar().toDouble() == b.toScalar().toDouble();
  }
  try {
    return a == b;
  } catch (const std::exception&) {
    return false;
  }
}

// An argument's value as the ledger's `arg:` atoms name it: a dtype and a loss's reduction by their names
// ("arg:dtype=int32", "arg:reduction=mean"), as they are integers in the call; an optional tensor given as "tensor"
// ("arg:bias!=none"); the rest as argument_text says.
std::optional<std::string> named_argument_text(const c10::Argument& a, const c10::IValue& v) {
  const std::string type = a.real_type()->str();
  if (v.isInt() && (type == "ScalarType" || type == "ScalarType?")) {
    return dtype_name(static_cast<c10::ScalarType>(v.toInt()));
  }
  if (v.isInt() && a.name() == "reduction" && v.toInt() >= 0 && v.toInt() <= 2) {  // at::Reduction, as Python says it
    return std::string(v.toInt() == 0 ? "none" : v.toInt() == 1 ? "mean" : "sum");
  }
  if (type == "Tensor?" && v.isTensor() && v.toTensor().defined()) return "tensor";  // given, beside "none"
  return argument_text(v);
}

// Whether a loss's class targets (nll_loss's, cross_entropy_loss's: an integer target) hold a value outside
// [0, classes) other than ignore_index, which the CPU refuses ("Target 5 is out of bounds").
bool class_target_out_of_range(const c10::FunctionSchema& schema, const std::vector<c10::IValue>& args,
                               const std::vector<c10::IValue>* values) {
  const std::string base = base_name(schema);
  if (base.rfind("nll_loss", 0) != 0 && base != "cross_entropy_loss") return false;
  const at::Tensor* self = tensor_named(schema, args, "self");
  const at::Tensor* target = tensor_named(schema, args, "target");
  if (!self || !target || !integral(*target) || self->dim() == 0) return false;
  const int64_t classes = self->size(self->dim() == 1 ? 0 : 1);
  const c10::IValue* ignore = value_named(schema, args, "ignore_index");
  const std::optional<int64_t> ignored = ignore && ignore->isInt() ? std::make_optional(ignore->toInt()) : std::nullopt;
  const at::Tensor* on_cpu = values ? tensor_named(schema, *values, "target") : nullptr;  // read there where given
  for (const int64_t v : sorted_values(on_cpu ? *on_cpu : *target, std::nullopt).first) {
    if ((v < 0 || v >= classes) && v != ignored) return true;
  }
  return false;
}

// A factory's (randn, zeros, full: no tensor argument) sizes are those of the tensor it makes: its `size`.
void factory_shape(const c10::FunctionSchema& schema, const std::vector<c10::IValue>& args, SampleTraits& traits) {
  const c10::IValue* size = value_named(schema, args, "size");
  if (!size || !size->isIntList()) return;
  const std::vector<int64_t> sizes = size->toIntVector();
  const c10::IValue* dtype = value_named(schema, args, "dtype");
  const c10::ScalarType type = dtype && dtype->isInt() ? static_cast<c10::ScalarType>(dtype->toInt())
                                                       : c10::typeMetaToScalarType(c10::get_default_dtype());
  int64_t numel = 1;
  for (const int64_t s : sizes) {
    numel *= s;
    traits.max_size = std::max(traits.max_size, s);
  }
  traits.max_rank = static_cast<int>(sizes.size());
  traits.max_numel = numel;
  traits.max_bytes = numel * static_cast<int64_t>(c10::elementSize(type));
  traits.empty = numel == 0;
}

}  // namespace

std::string base_name(const c10::FunctionSchema& schema) {
  const std::string& name = schema.name();
  return name.substr(name.find("::") + 2);
}

std::vector<IndexArgument> index_arguments(const c10::FunctionSchema& schema, const std::vector<c10::IValue>& args) {
  std::vector<IndexArgument> found;
  const auto& a = schema.arguments();
  for (size_t i = 0; i < a.size() && i < args.size(); ++i) {
    if (is_write(a[i])) continue;
    if (args[i].isList() && !args[i].isTensorList() && a[i].real_type()->str() == "Tensor?[]") {
      // index.Tensor, index_put: the k-th entry indexes the dimensions of self after those the entries before it
      // took (a boolean mask takes as many as it has).
      const at::Tensor* self = tensor_named(schema, args, "self");
      int64_t dim = 0;
      int k = 0;
      for (c10::IValue e : args[i].toList()) {
        if (e.isTensor() && e.toTensor().defined() && integral(e.toTensor())) {
          IndexArgument index{i, k, e.toTensor(), std::nullopt, /*wraps=*/true, std::nullopt};
          if (self && dim < self->dim()) index.bound = self->size(dim);
          found.push_back(std::move(index));
          ++dim;
        } else {
          dim += e.isTensor() && e.toTensor().defined() ? std::max<int64_t>(e.toTensor().dim(), 1) : 1;
        }
        ++k;
      }
      continue;
    }
    if (is_index_name(a[i].name()) && args[i].isTensor() && args[i].toTensor().defined() &&
        integral(args[i].toTensor())) {
      const at::Tensor& index = args[i].toTensor();
      const std::string base = base_name(schema);
      const bool wraps = base == "take" || base == "put" || base == "put_" || base == "take_along_dim" ||
                         base == "index_fill" || base == "index_fill_";
      IndexArgument found_one{i, -1, index, index_bound(schema, args), wraps, std::nullopt};
      const c10::IValue* dim = value_named(schema, args, "dim");
      if (index.dim() > 1 && dim && dim->isInt() && dim->toInt() >= -index.dim() && dim->toInt() < index.dim()) {
        found_one.along = dim->toInt() < 0 ? dim->toInt() + index.dim() : dim->toInt();
      }
      found.push_back(std::move(found_one));
    }
  }
  return found;
}

SampleTraits sample_traits(const c10::FunctionSchema& schema, const std::vector<c10::IValue>& args,
                           const std::vector<c10::IValue>* values) {
  SampleTraits traits;
  const auto& a = schema.arguments();
  bool on_device = false, cpu_zero_dim = false, any_tensor = false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (i >= args.size()) {  // left out: its default
      if (const auto text = a[i].default_value() ? named_argument_text(a[i], *a[i].default_value()) : std::nullopt) {
        traits.args[a[i].name()] = {*text};
      }
      continue;
    }
    const bool out = is_out(a[i]);
    if (const auto text = named_argument_text(a[i], args[i]); text && !out) traits.args[a[i].name()] = {*text};
    const c10::IValue* cpu_value = values && i < values->size() ? &(*values)[i] : nullptr;
    each_tensor(args[i], [&](const at::Tensor& t, int element) {
      any_tensor = true;
      traits.max_rank = std::max<int>(traits.max_rank, static_cast<int>(t.dim()));
      traits.max_numel = std::max(traits.max_numel, t.numel());
      traits.max_bytes = std::max(traits.max_bytes, t.numel() * static_cast<int64_t>(t.element_size()));
      for (const int64_t s : t.sizes()) traits.max_size = std::max(traits.max_size, s);
      traits.empty = traits.empty || (t.numel() == 0 && !out);
      if (!out) {
        const at::Tensor on_cpu = cpu_value ? tensor_at(*values, i, element) : t;
        const auto found = nan_inf(on_cpu.defined() ? on_cpu : t);
        if (found) {
          traits.nan = traits.nan || found->first;
          traits.inf = traits.inf || found->second;
        } else {
          traits.values_unknown = true;
        }
      }
      if (t.device().is_cpu()) {
        // A Python number (Note [Wrapped numbers] in sample_probe.cc) is no CPU scalar tensor of the program's.
        cpu_zero_dim = cpu_zero_dim || (t.dim() == 0 && !out && !t.unsafeGetTensorImpl()->is_wrapped_number());
      } else {
        on_device = true;
      }
      if (t.layout() != c10::kStrided || t.is_quantized()) return;
      traits.storage_offset = traits.storage_offset || t.storage_offset() != 0;
      const bool contiguous = t.is_contiguous();
      const c10::MemoryFormat last = t.dim() == 5 ? c10::MemoryFormat::ChannelsLast3d : c10::MemoryFormat::ChannelsLast;
      const bool channels_last = (t.dim() == 4 || t.dim() == 5) && t.is_contiguous(last);
      traits.non_contiguous = traits.non_contiguous || (!contiguous && !channels_last);
      traits.channels_last = traits.channels_last || (channels_last && !contiguous);
    });
    if (a[i].kwarg_only() && !is_write(a[i]) && !args[i].isNone() &&
        !(a[i].default_value() && same_value(args[i], *a[i].default_value()))) {
      traits.kwargs.push_back(a[i].name());
    }
  }
  traits.cpu_scalar = on_device && cpu_zero_dim;
  std::sort(traits.kwargs.begin(), traits.kwargs.end());
  if (!any_tensor) factory_shape(schema, args, traits);
  for (const IndexArgument& index : index_arguments(schema, args)) {
    at::Tensor source = values ? tensor_at(*values, index.position, index.element) : at::Tensor();
    if (!source.defined()) source = index.index;
    const auto [v, slice] = sorted_values(source, index.along);
    for (size_t k = 0; k < v.size(); k += static_cast<size_t>(slice)) {
      const auto begin = v.begin() + static_cast<std::ptrdiff_t>(k), end = begin + slice;
      traits.duplicate_indices = traits.duplicate_indices || std::adjacent_find(begin, end) != end;
      if (index.bound) {
        traits.out_of_range_indices =
            traits.out_of_range_indices || *begin < (index.wraps ? -*index.bound : 0) || *(end - 1) >= *index.bound;
      }
    }
  }
  traits.out_of_range_indices = traits.out_of_range_indices || class_target_out_of_range(schema, args, values);
  return traits;
}

std::optional<c10::ScalarType> wide_operand(const c10::FunctionSchema& schema, const std::vector<c10::IValue>& args,
                                            c10::ScalarType dtype) {
  const auto wide = [&](c10::ScalarType d) {
    if (d == dtype) return false;
    const bool double_precision = d == c10::ScalarType::Double || d == c10::ScalarType::ComplexDouble;
    const bool record_double = dtype == c10::ScalarType::Double || dtype == c10::ScalarType::ComplexDouble;
    return (double_precision && !record_double) || (c10::isComplexType(d) && !c10::isComplexType(dtype));
  };
  std::optional<c10::ScalarType> found;
  for (size_t i = 0; i < schema.arguments().size() && i < args.size() && !found; ++i) {
    if (is_out(schema.arguments()[i])) continue;
    each_tensor(args[i], [&](const at::Tensor& t, int) {
      // A Python number (Note [Wrapped numbers] in sample_probe.cc) is a float64 tensor that is no float64 operand.
      if (!found && !t.unsafeGetTensorImpl()->is_wrapped_number() && wide(t.scalar_type())) found = t.scalar_type();
    });
  }
  return found;
}

bool failed_for_other_dtype(const c10::FunctionSchema& schema, const std::vector<c10::IValue>& args,
                            c10::ScalarType dtype, Verdict verdict, const std::string& message) {
  if (verdict != Verdict::kUnsupported && verdict != Verdict::kError) return false;
  if (wide_operand(schema, args, dtype)) return true;
  bool named = false;
  for (size_t i = 0; i < schema.arguments().size() && i < args.size() && !named; ++i) {
    if (is_out(schema.arguments()[i])) continue;
    each_tensor(args[i], [&](const at::Tensor& t, int) {
      const c10::ScalarType d = t.scalar_type();
      named = named || (d != dtype && (message.find(dtype_name(d)) != std::string::npos ||
                                       message.find(c10::toString(d)) != std::string::npos));
    });
  }
  return named;
}

}  // namespace mps_audit
