// Note [Condition samples]
// Known MPS bugs depend on the input (data/mps_known_bugs.yaml's `when`): a view at a storage offset, a non-contiguous
// tensor, rank 5, a dimension past the size where a kernel changes route, repeated indices, a CPU scalar operand.
// Recorded and synthesized samples are small, contiguous and of low rank, so few of them meet any of these, and a
// record can only be said to meet a known bug when one of its samples did (Note [Traits of a sample] in
// sample_traits.cc). So a probe adds samples derived from one of its samples the CPU took (its base: the first, or the
// first without an operand of another dtype, then with a tensor of two elements or more), each meeting a condition,
// where the condition is well-posed for the operator:
// - view: every tensor argument with elements (in lists too, in-place ones included) becomes a view of the same
//   values, non-contiguous and at a storage offset: one row into a buffer with a row more (x[1:]), every other element
//   of the last dimension (x[..., ::2]); a 0-d one, x[1] of a vector of two. One sample for both: a kernel that
//   ignores a view's strides or its offset fails either way, and the trait says which the sample had;
// - rank5: where the operator takes any rank (below), the tensor arguments get leading dimensions up to rank 5, the
//   first of size 2 (the values twice), the others of size 1;
// - size1025, size32769: where the operator takes any rank, the tensor arguments become 1 x ... x 1 x 1,025 (past the
//   route changes at 256 and 1,024 elements of the known bugs) or 32,769 (past 32,768), their values repeated in order
//   (so class and index values stay in range). The known bugs past 65,536 are convolutions', whose weight no such
//   sample can follow;
// - duplicate-indices: an index argument (index_arguments() in sample_traits.h) gets its second value equal to its
//   first; where the operator writes by index and the last write would win (index_copy, scatter with src and no
//   reduction, put and index_put without accumulation), the values written through the repeated index are made equal
//   too, so that the result does not depend on the order of the writes; max_unpool, whose indices come from a pooling,
//   gets none;
// - cpu-scalar: a binary operator's `other` (or `exponent`) becomes a 0-d tensor of its first value that stays on the
//   CPU while the other arguments go to the target (SampleInputs::on_cpu), as PyTorch lets TensorIterator operators
//   take such a scalar.
// An operator takes any rank when every tensor argument of rank 1 or more has the same shape (elementwise operators,
// reductions, scans, sorts, softmax) and it is not an internal (_name) or backward one, whose kernels trust their
// callers for their arguments' shapes (_thnn_differentiable_lstm_cell_backward reads past inputs of rank 5).
// Each is a sample like any other: the same inputs on every target, compared with the CPU's result, the worst of a
// record's samples deciding its verdict (Note [A record rests on its own samples] in sample_probe.cc); on emulated MPS,
// whose kernels compute on the CPU, they match wherever the base does. What keeps them well-posed and cheap:
// - The CPU must be a reference: a condition sample whose reference the CPU refuses is dropped (it is not the
//   record's), and so is a view whose reference differs, to the bit, from the base's (a CPU kernel that mishandles
//   views, or rounds otherwise on them: Note [Views on the target] in sample_probe.cc). The operator's later dtypes do
//   not try a refused condition again (ConditionMemory): an operator that needs rank 2 raises once, not in every dtype.
// - Out= variants get none: they run their functional twin's kernel, which gets its own, and the CPU's kernels
//   themselves write wrongly into non-contiguous out tensors (narrow_copy.out, the padding operators' out=).
// - The sizes are first tried on the meta device, where the operator has kernels there (its own or a composite's):
//   its results must stay within 8 times the input's elements and 16 tensors (outer, kron, combinations, unbind would
//   make millions). The CPU scalar too: TensorIterator operators take it there, and a CPU tensor beside device tensors
//   is an error elsewhere on any device, not a finding. Half precision gets no size sample: it cannot sum a thousand
//   values to what a float32 reference makes of them. Nor do operators with index arguments, well-posed synthesis
//   rules (docs/synthesis.md) or sorted inputs (searchsorted, bucketize), whose values repeated in order would no
//   longer be unique or sorted.
// - Cost: the default audit has 10 dtypes, and a sample costs about as much as any other. So the view, rank 5 and the
//   sizes are made in the dtypes the known bugs of their conditions name (data/mps_known_bugs.yaml, 2026-11), each
//   standing for the other dtypes of its kind, whose kernels mostly take the same route for a layout or a shape
//   (wanted()): the view in float32, int64, int32 and bool; rank 5 in float32, int32 and bool; the smaller size in
//   float32 and int64; the larger size in float32; repeated indices and the CPU scalar in float32 and int64. Which
//   samples are made is a function of the operator, its base sample and the dtype alone, never of a clock: the same
//   run makes the same samples on a busy machine as on an idle one (a check of the larger size's cost on the CPU by
//   the time it took made `tan` float32 get it in one run and not in another). The meta check above bounds the work:
//   results of at most 8 times the input's elements. The default audit's time stays within a fifth of what it was
//   (docs/inputs.md).
// - Operators whose result depends on memory outside the view or on its strides (as_strided, set_, _reshape_alias)
//   get no condition samples, nor do samples with named, sparse or quantized tensors, nor a program's calls replayed
//   by `mps-audit model --calls`, whose verdicts are over the program's own inputs (Note [Replaying a program's calls]
//   in model/calls_replay.cc).
#include "probe/condition_samples.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <utility>

#include <ATen/core/Tensor.h>
#include <ATen/ops/empty_strided.h>
#include <ATen/ops/zeros.h>

#include "common/ivalue_tensors.h"
#include "common/torch_compat.h"
#include "probe/sample_traits.h"

namespace mps_audit {
namespace {

bool starts_with(const std::string& s, const char* prefix) {
  return s.rfind(prefix, 0) == 0;
}

// Operators whose result depends on memory outside a view or on its strides.
bool reads_storage(const c10::FunctionSchema& schema) {
  const std::string base = base_name(schema);
  if (starts_with(base, "as_strided") || starts_with(base, "_reshape_alias") || base == "set" || base == "set_") {
    return true;
  }
  return std::any_of(schema.arguments().begin(), schema.arguments().end(), [](const c10::Argument& a) {
    return a.name() == "storage_offset" || a.real_type()->str() == "Storage";
  });
}

// A tensor a condition sample may remake: strided, on the CPU, not quantized, named or requiring gradients.
bool remakeable(const at::Tensor& t) {
  return t.defined() && t.layout() == c10::kStrided && t.device().is_cpu() && !t.is_quantized() &&
         !compat::has_names(t) && !t.requires_grad();
}

// `base`'s arguments with each remakeable tensor replaced by f(tensor); nullopt when none changed.
std::optional<std::vector<c10::IValue>> remade(const SampleInputs& base,
                                               const std::function<at::Tensor(const at::Tensor&)>& f) {
  std::vector<c10::IValue> args = base.args;
  bool changed = false;
  for (c10::IValue& v : args) {
    v = map_tensors(v, [&](const at::Tensor& t) {
      if (!remakeable(t)) return t;
      at::Tensor r = f(t);
      changed = changed || !r.is_same(t);
      return r;
    });
  }
  if (!changed) return std::nullopt;
  return args;
}

// The same values, one row into a larger buffer (x[1:] of a buffer with a row more), with gaps in the last
// dimension (every other element of a buffer twice as long there); a 0-d tensor, x[1] of a vector of two.
at::Tensor viewed(const at::Tensor& t) {
  if (t.numel() == 0) return t;
  if (t.dim() == 0) {
    at::Tensor view = at::zeros({2}, t.options()).select(0, 1);
    view.copy_(t);
    return view;
  }
  at::Tensor view;
  if (t.dim() == 1) {
    view = at::zeros({2 * t.size(0) + 1}, t.options()).slice(0, 1, 2 * t.size(0) + 1, 2);
  } else {
    std::vector<int64_t> sizes = t.sizes().vec();
    sizes[0] += 1;
    sizes.back() *= 2;
    view = at::zeros(sizes, t.options()).narrow(0, 1, t.size(0)).slice(-1, 0, sizes.back(), 2);
  }
  view.copy_(t);
  return view;
}

// The shape every tensor argument of rank 1 or more has (the operator takes any rank: elementwise ones, reductions,
// scans, sorts); nullopt when two differ (a broadcast operand, a weight, an index), since an internal kernel may not
// check that the shapes it is given agree.
std::optional<std::vector<int64_t>> one_shape(const c10::FunctionSchema& schema, const std::vector<c10::IValue>& args) {
  std::optional<std::vector<int64_t>> shape;
  bool agree = true;
  for (size_t i = 0; i < args.size() && i < schema.arguments().size(); ++i) {
    if (is_out(schema.arguments()[i])) continue;
    map_tensors(args[i], [&](const at::Tensor& t) {
      if (!t.defined() || t.dim() == 0) return t;
      if (!remakeable(t) || (shape && *shape != t.sizes().vec())) agree = false;
      if (!shape) shape = t.sizes().vec();
      return t;
    });
  }
  if (!agree) return std::nullopt;
  return shape;
}

// Whether an operator may be given inputs of another shape than its sample's: not an internal one (its name begins
// with _) or a backward one, whose kernels may trust their callers for the shapes of their arguments
// (_thnn_differentiable_lstm_cell_backward reads past inputs of rank 5).
bool any_rank(const c10::FunctionSchema& schema) {
  const std::string name = base_name(schema);
  return name[0] != '_' && name.find("backward") == std::string::npos;
}

// `base` with the tensors of its one shape remade by `reshape`.
std::optional<std::vector<c10::IValue>> reshaped(const SampleInputs& base, const std::vector<int64_t>& main_shape,
                                                 const std::function<at::Tensor(const at::Tensor&)>& reshape) {
  return remade(base, [&](const at::Tensor& t) { return t.sizes().vec() == main_shape ? reshape(t) : t; });
}

// Whether `op` has kernels for the meta device: its own, or a composite one, made of other operators.
bool runs_on_meta(const c10::OperatorHandle& op) {
  return op.hasKernelForDispatchKey(c10::DispatchKey::Meta) ||
         op.hasKernelForDispatchKey(c10::DispatchKey::CompositeImplicitAutograd) ||
         op.hasKernelForDispatchKey(c10::DispatchKey::CompositeExplicitAutograd);
}

// Whether `op` takes `args` on the meta device, the arguments at `on_cpu` staying on the CPU, with results of at most
// `max_numel` elements in all and at most 16 tensors (unbind of a dimension of 32,769 makes as many).
bool meta_takes(const c10::OperatorHandle& op, const std::vector<c10::IValue>& args, const std::vector<size_t>& on_cpu,
                int64_t max_numel) {
  if (!runs_on_meta(op)) return false;
  torch::jit::Stack stack;
  bool plain = true;
  for (size_t i = 0; i < args.size(); ++i) {
    if (std::find(on_cpu.begin(), on_cpu.end(), i) != on_cpu.end()) {
      stack.push_back(args[i]);
      continue;
    }
    stack.push_back(map_tensors(args[i], [&](const at::Tensor& t) {
      if (!t.defined()) return t;
      if (t.layout() != c10::kStrided || t.is_quantized()) {
        plain = false;
        return t;
      }
      return at::empty_strided(t.sizes(), t.strides(), t.options().device(c10::kMeta));
    }));
  }
  if (!plain) return false;
  try {
    op.callBoxed(&stack);
  } catch (const std::exception&) {
    return false;
  }
  int64_t total = 0, tensors = 0;
  for (const c10::IValue& v : stack) {
    map_tensors(v, [&](const at::Tensor& t) {
      if (t.defined()) total += t.numel();
      ++tensors;
      return t;
    });
  }
  return total <= max_numel && tensors <= 16;
}

std::optional<std::vector<c10::IValue>> rank5(const c10::FunctionSchema& schema, const SampleInputs& base) {
  if (!any_rank(schema)) return std::nullopt;
  const auto main = one_shape(schema, base.args);
  if (!main || main->empty() || main->size() > 4) return std::nullopt;
  // The first new dimension of size 2 (the values twice), the others of size 1: rank 5, at twice the cost.
  std::vector<int64_t> shape(5 - main->size(), 1);
  shape.front() = 2;
  shape.insert(shape.end(), main->begin(), main->end());
  return reshaped(base, *main, [&](const at::Tensor& t) { return t.expand(shape).contiguous(); });
}

// `base` with its main shape 1 x ... x 1 x `size`, its values repeated in order.
std::optional<std::vector<c10::IValue>> stretched(const SampleInputs& base, const std::vector<int64_t>& main,
                                                  int64_t size) {
  int64_t numel = 1;
  for (const int64_t s : main) numel *= s;
  std::vector<int64_t> shape(main.size(), 1);
  shape.back() = size;
  const int64_t repeats = (size + numel - 1) / numel;
  return reshaped(base, main, [&](const at::Tensor& t) {
    // A tensor of its own, not a view (detach_ refuses a view on the CPU target, which runs on the sample's tensors).
    return t.reshape({-1}).repeat({repeats}).narrow(0, 0, size).reshape(shape).clone();
  });
}

// `size`: kSmallerSize or kLargerSize.
std::optional<std::vector<c10::IValue>> sized(const c10::OperatorHandle& op, c10::ScalarType dtype,
                                              const SampleInputs& base, int64_t size, ConditionMemory& memory) {
  const c10::FunctionSchema& schema = op.schema();
  const std::string name = base_name(schema);
  const Condition condition = size == kLargerSize ? Condition::kSize32769 : Condition::kSize1025;
  // Half precision cannot sum a thousand values to what float32 makes of them.
  if (dtype == c10::ScalarType::Half || dtype == c10::ScalarType::BFloat16 || !any_rank(schema) ||
      well_posed_rule(name) != WellPosed::kNone || name == "searchsorted" || name == "bucketize" ||
      !index_arguments(schema, base.args).empty()) {
    return std::nullopt;
  }
  const auto main = one_shape(schema, base.args);
  if (!main || main->empty() || sample_traits(schema, base.args).max_size >= size) return std::nullopt;
  for (const int64_t s : *main) {
    if (s == 0) return std::nullopt;
  }
  auto args = stretched(base, *main, size);
  if (!args) return std::nullopt;
  if (!meta_takes(op, *args, {}, 8 * size)) {
    memory.refused |= condition_bit(condition);
    return std::nullopt;
  }
  return args;
}

// How an operator that writes by index treats a location written twice.
enum class Writes { kAny, kIndexCopy, kScatter, kPut, kIndexPut };

Writes writes_of(const c10::FunctionSchema& schema, const std::vector<c10::IValue>& args) {
  const std::string name = base_name(schema);
  bool accumulate = false, reduce = false, src = false;
  for (size_t i = 0; i < schema.arguments().size() && i < args.size(); ++i) {
    const std::string& arg = schema.arguments()[i].name();
    accumulate = accumulate || (arg == "accumulate" && args[i].isBool() && args[i].toBool());
    reduce = reduce || (arg == "reduce" && !args[i].isNone());
    src = src || (arg == "src" && args[i].isTensor());
  }
  if (accumulate || reduce) return Writes::kAny;
  if (name == "index_copy" || name == "index_copy_" || name == "_index_copy_") return Writes::kIndexCopy;
  if ((name == "scatter" || name == "scatter_") && src) return Writes::kScatter;
  if (name == "put" || name == "put_") return Writes::kPut;
  if (name.find("index_put") != std::string::npos) return Writes::kIndexPut;
  return Writes::kAny;
}

c10::IValue* argument(const c10::FunctionSchema& schema, std::vector<c10::IValue>& args, const char* name) {
  for (size_t i = 0; i < schema.arguments().size() && i < args.size(); ++i) {
    if (schema.arguments()[i].name() == name) return &args[i];
  }
  return nullptr;
}

std::optional<int64_t> dim_of(const c10::FunctionSchema& schema, std::vector<c10::IValue>& args, int64_t rank) {
  const c10::IValue* dim = argument(schema, args, "dim");
  if (!dim || !dim->isInt() || rank < 1 || dim->toInt() < -rank || dim->toInt() >= rank) return std::nullopt;
  return dim->toInt() < 0 ? dim->toInt() + rank : dim->toInt();
}

// Makes slice 1 of `t` along `d` equal to slice 0 (within `extent`, the sizes of the index that selects its values);
// false when `t` has no such slices.
bool second_like_first(at::Tensor& t, int64_t d, c10::IntArrayRef extent = {}) {
  if (t.dim() <= d || t.size(d) < 2) return false;
  t = t.clone(at::MemoryFormat::Contiguous);
  at::Tensor part = t;
  for (int64_t k = 0; k < static_cast<int64_t>(extent.size()) && k < part.dim(); ++k) {
    part = part.narrow(k, 0, std::min(extent[k], part.size(k)));
  }
  if (part.size(d) < 2) return false;
  part.select(d, 1).copy_(part.select(d, 0));
  return true;
}

// The values an index_put writes through index `index` (entry `element` of its indices), with the writes through its
// first two values made equal; false when they cannot be.
bool index_put_values(at::Tensor& values, const at::Tensor& self, const at::Tensor& index, int element) {
  if (values.numel() <= 1) return true;
  if (index.dim() != 1) return false;
  const int64_t vd = values.dim() - (self.dim() - element);  // the dimension of values the index's one meets
  if (vd < 0 || values.size(vd) == 1) return true;           // broadcast: the same values either way
  return second_like_first(values, vd);
}

std::optional<std::vector<c10::IValue>> duplicated(const c10::FunctionSchema& schema, const SampleInputs& base) {
  if (base_name(schema).find("max_unpool") != std::string::npos) return std::nullopt;
  const std::vector<IndexArgument> indices = index_arguments(schema, base.args);
  if (indices.empty() || sample_traits(schema, base.args).duplicate_indices) return std::nullopt;
  const IndexArgument& chosen = indices.front();
  if (chosen.index.numel() < 2 || !remakeable(chosen.index)) return std::nullopt;
  std::vector<c10::IValue> args = base.args;
  at::Tensor index = chosen.index.clone(at::MemoryFormat::Contiguous);
  const Writes writes = writes_of(schema, args);
  c10::IValue* self = argument(schema, args, "self");
  const at::Tensor target = self && self->isTensor() ? self->toTensor() : at::Tensor();
  if (writes == Writes::kScatter) {
    c10::IValue* src = argument(schema, args, "src");
    const auto d = dim_of(schema, args, index.dim());
    at::Tensor values = src->toTensor();
    if (!d || values.dim() != index.dim() || !second_like_first(index, *d) ||
        !second_like_first(values, *d, index.sizes())) {
      return std::nullopt;
    }
    *src = values;
  } else {
    at::Tensor flat = index.view({-1});
    flat.narrow(0, 1, 1).copy_(flat.narrow(0, 0, 1));
    if (writes == Writes::kIndexCopy) {
      c10::IValue* source = argument(schema, args, "source");
      const auto d = source && source->isTensor() ? dim_of(schema, args, source->toTensor().dim()) : std::nullopt;
      at::Tensor values = d ? source->toTensor() : at::Tensor();
      if (!d || index.dim() != 1 || !second_like_first(values, *d)) return std::nullopt;
      *source = values;
    } else if (writes == Writes::kPut) {
      c10::IValue* source = argument(schema, args, "source");
      if (!source || !source->isTensor() || source->toTensor().numel() != index.numel()) return std::nullopt;
      at::Tensor values = source->toTensor().clone(at::MemoryFormat::Contiguous);
      at::Tensor flat = values.view({-1});
      flat.narrow(0, 1, 1).copy_(flat.narrow(0, 0, 1));
      *source = values;
    } else if (writes == Writes::kIndexPut) {
      c10::IValue* values = argument(schema, args, "values");
      if (!values || !values->isTensor() || !target.defined() || indices.size() != 1) return std::nullopt;
      at::Tensor v = values->toTensor();
      if (!index_put_values(v, target, index, chosen.element)) return std::nullopt;
      *values = v;
    }
  }
  if (chosen.element < 0) {
    args[chosen.position] = index;
  } else {
    c10::List<c10::optional<at::Tensor>> list;
    int k = 0;
    for (c10::IValue e : args[chosen.position].toList()) {
      list.push_back(k++ == chosen.element ? c10::optional<at::Tensor>(index)
                                           : (e.isTensor() ? c10::optional<at::Tensor>(e.toTensor()) : c10::nullopt));
    }
    args[chosen.position] = list;
  }
  return args;
}

// A binary operator's second operand as a 0-d CPU tensor; the position it is at.
std::optional<std::pair<std::vector<c10::IValue>, size_t>> cpu_scalar(const c10::OperatorHandle& op,
                                                                      const SampleInputs& base,
                                                                      ConditionMemory& memory) {
  const c10::FunctionSchema& schema = op.schema();
  const auto& a = schema.arguments();
  for (size_t i = 0; i < a.size() && i < base.args.size(); ++i) {
    if ((a[i].name() != "other" && a[i].name() != "exponent") || a[i].real_type()->str() != "Tensor" ||
        is_write(a[i]) || !base.args[i].isTensor()) {
      continue;
    }
    const at::Tensor other = base.args[i].toTensor();
    if (!remakeable(other) || other.numel() == 0) return std::nullopt;
    bool beside = false;
    for (size_t j = 0; j < a.size() && j < base.args.size(); ++j) {
      beside = beside || (j != i && !is_out(a[j]) && base.args[j].isTensor() && base.args[j].toTensor().defined() &&
                          base.args[j].toTensor().dim() > 0);
    }
    if (!beside) return std::nullopt;
    std::vector<c10::IValue> args = base.args;
    args[i] = other.reshape({-1}).select(0, 0).clone();
    if (!meta_takes(op, args, {i}, std::numeric_limits<int64_t>::max())) {
      memory.refused |= condition_bit(Condition::kCpuScalar);
      return std::nullopt;
    }
    return std::make_pair(std::move(args), i);
  }
  return std::nullopt;
}

// Whether condition `c` is tried in `dtype` (Note [Condition samples], "Cost").
bool wanted(Condition c, c10::ScalarType dtype) {
  using T = c10::ScalarType;
  switch (c) {
    case Condition::kView: return dtype == T::Float || dtype == T::Long || dtype == T::Int || dtype == T::Bool;
    case Condition::kRank5: return dtype == T::Float || dtype == T::Int || dtype == T::Bool;
    case Condition::kSize1025: return dtype == T::Float || dtype == T::Long;
    case Condition::kSize32769: return dtype == T::Float;
    case Condition::kDuplicateIndices:
    case Condition::kCpuScalar: return dtype == T::Float || dtype == T::Long;
    case Condition::kRepro: return true;
  }
  return false;
}

}  // namespace

std::string_view condition_name(Condition c) {
  switch (c) {
    case Condition::kView: return "view";
    case Condition::kRank5: return "rank5";
    case Condition::kSize1025: return "size1025";
    case Condition::kSize32769: return "size32769";
    case Condition::kDuplicateIndices: return "duplicate-indices";
    case Condition::kCpuScalar: return "cpu-scalar";
    case Condition::kRepro: return "repro";
  }
  return "";
}

std::vector<ConditionSample> condition_samples(const c10::OperatorHandle& op, c10::ScalarType dtype,
                                               const SampleInputs& base, ConditionMemory& memory) {
  const c10::FunctionSchema& schema = op.schema();
  std::vector<ConditionSample> made;
  const auto& a = schema.arguments();
  if (reads_storage(schema) || std::any_of(a.begin(), a.end(), is_out) || !base.unsupported.empty()) return made;
  std::vector<const c10::TensorImpl*> kept;  // the base's tensors
  for (const c10::IValue& v : base.args) {
    bool odd = false;
    map_tensors(v, [&](const at::Tensor& t) {
      if (!t.defined()) return t;
      odd = odd || t.layout() != c10::kStrided || t.is_quantized() || compat::has_names(t);
      kept.push_back(t.unsafeGetTensorImpl());
      return t;
    });
    if (odd) return made;
  }
  const auto add = [&](Condition c, const std::function<std::optional<std::vector<c10::IValue>>()>& make,
                       std::vector<size_t> on_cpu = {}) {
    if ((memory.refused & condition_bit(c)) != 0 || !wanted(c, dtype)) return;
    std::optional<std::vector<c10::IValue>> args;
    try {
      args = make();
    } catch (const std::exception&) {  // values the condition cannot be given: no such sample
    }
    if (!args) return;
    ConditionSample s{c, SampleInputs()};
    s.inputs.name = base.name + "+" + std::string(condition_name(c));
    // The base's tensors a sample keeps as they are are copied, so that a run of the base in place on the CPU target
    // (which gets the sample's own tensors) leaves the sample's inputs as they were, the same on every target.
    for (c10::IValue& v : *args) {
      v = map_tensors(v, [&](const at::Tensor& t) {
        const bool shared = t.defined() && std::find(kept.begin(), kept.end(), t.unsafeGetTensorImpl()) != kept.end();
        return shared ? t.clone() : t;
      });
    }
    s.inputs.args = std::move(*args);
    s.inputs.keep_views = c == Condition::kView;
    s.inputs.on_cpu = std::move(on_cpu);
    made.push_back(std::move(s));
  };
  add(Condition::kView, [&] { return remade(base, viewed); });
  add(Condition::kRank5, [&] { return rank5(schema, base); });
  add(Condition::kSize1025, [&] { return sized(op, dtype, base, kSmallerSize, memory); });
  add(Condition::kSize32769, [&] { return sized(op, dtype, base, kLargerSize, memory); });
  add(Condition::kDuplicateIndices, [&] { return duplicated(schema, base); });
  size_t scalar_at = 0;
  add(Condition::kCpuScalar,
      [&]() -> std::optional<std::vector<c10::IValue>> {
        auto scalar = cpu_scalar(op, base, memory);
        if (!scalar) return std::nullopt;
        scalar_at = scalar->second;
        return std::move(scalar->first);
      },
      {});
  if (!made.empty() && made.back().condition == Condition::kCpuScalar) made.back().inputs.on_cpu = {scalar_at};
  return made;
}

}  // namespace mps_audit
