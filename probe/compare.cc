// Output comparison, on the CPU in float64 (or exactly for integers and booleans).
#include "probe/compare.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include <ATen/Dispatch.h>
#include <ATen/ScalarOps.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/gather.h>
#include <ATen/ops/ones_like.h>
#include <ATen/ops/view_as_real.h>
#include <ATen/ops/zeros.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/torch_compat.h"
#include "probe/dtypes.h"

namespace mps_audit {
namespace {

std::string index_of(const at::Tensor& t, int64_t flat) {
  std::string out = "[";
  std::vector<int64_t> idx(t.dim());
  for (int64_t d = t.dim() - 1; d >= 0; --d) {
    idx[d] = flat % t.size(d);
    flat /= t.size(d);
  }
  for (size_t i = 0; i < idx.size(); ++i) out += (i ? ", " : "") + std::to_string(idx[i]);
  return out + "]";
}

void merge(Comparison& into, Comparison&& part, const std::string& where) {
  if (part.equal) {
    into.max_abs_error = std::max(into.max_abs_error, part.max_abs_error);
    into.max_rel_error = std::max(into.max_rel_error, part.max_rel_error);
    return;
  }
  if (into.equal) {
    into = std::move(part);
    if (!where.empty()) into.message = where + ": " + into.message;
  }
}

std::string names_of(const at::Tensor& t) {
  const auto names = compat::dimension_names(t);
  if (names.empty()) return "none";
  std::string out;
  for (const auto& n : names) out += std::string(out.empty() ? "" : ", ") + n.substr(n.find("::") + 2);
  return "(" + out + ")";
}

// Named tensors: the names must agree; the values are compared without them.
at::Tensor unnamed(const at::Tensor& t) {
  return compat::without_names(t);
}

// `a` with each vector along `dim` (-2: the columns, -1: the rows) turned by the sign or unit phase that brings it
// closest to the matching vector of `e`: the phase of their inner product.
at::Tensor aligned(const at::Tensor& e, const at::Tensor& a, int64_t dim) {
  const auto wide = e.is_complex() ? c10::ScalarType::ComplexDouble : c10::ScalarType::Double;
  const at::Tensor ew = e.to(wide), aw = a.to(wide);
  const at::Tensor inner = aw.conj().mul(ew).sum(dim, /*keepdim=*/true);
  const at::Tensor magnitude = inner.abs();
  const at::Tensor phase = inner.div(magnitude.clamp_min(1e-300)).where(magnitude.gt(0), at::ones_like(inner));
  return aw.mul(phase).to(a.scalar_type());
}

// Note [Comparing element by element]
// A probe compares every output of every sample, and most outputs are a few dozen elements: the comparison is one
// pass over both tensors' memory, not a chain of ATen operators (each of which costs microseconds to dispatch and
// allocate, far more than the arithmetic). Every element is read as a double (complex ones as two, real part
// first), and the statistics are what torch.testing.assert_close computes: the absolute difference, allowed up to
// atol + rtol * |expected|; NaN must meet NaN; an infinity must meet the same infinity. Integers and booleans must be
// equal, and their largest difference is reported in float64 as well. Tensors whose memory is the same bytes are
// equal with no difference, as the pass would find: that is checked first, and spares the pass where a target computes
// as the CPU does (a 32,769-element sample, Note [Condition samples] in condition_samples.cc, on emulated MPS).
struct ValueStats {
  int64_t mismatches = 0;
  int64_t first = -1;  // flat index of the first mismatch (in real and imaginary parts, for complex tensors)
  double max_abs = 0;  // the largest finite difference
  double max_rel = 0;  // the largest finite difference relative to |expected| (at least 1e-300)
};

struct FloatChecker {
  double atol, rtol;
  ValueStats s;
  void operator()(double x, double y, int64_t k) {
    const bool nan_x = std::isnan(x), nan_y = std::isnan(y);
    const bool unequal = !(x == y) && !nan_x;  // == covers matching infinities
    const double diff = std::abs(x - y);
    const bool infinite = std::isinf(x) || std::isinf(y);
    // Bad: NaN in one place only; an infinity that is not the same infinity on both sides (its tolerance would be
    // infinite too); otherwise a difference beyond tolerance.
    const bool bad = nan_x != nan_y || (infinite && unequal) || (diff > std::abs(x) * rtol + atol && unequal);
    if (std::isfinite(diff)) {
      s.max_abs = std::max(s.max_abs, diff);
      s.max_rel = std::max(s.max_rel, diff / std::max(std::abs(x), 1e-300));
    }
    if (bad && s.mismatches++ == 0) s.first = k;
  }
};

template <typename T>
ValueStats scan(const T* e, const T* a, int64_t n, const Tolerance& t) {
  if constexpr (c10::is_complex<T>::value) {
    FloatChecker check{t.atol, t.rtol, {}};
    for (int64_t i = 0; i < n; ++i) {
      check(static_cast<double>(e[i].real()), static_cast<double>(a[i].real()), 2 * i);
      check(static_cast<double>(e[i].imag()), static_cast<double>(a[i].imag()), 2 * i + 1);
    }
    return check.s;
  } else if constexpr (std::is_floating_point<T>::value || std::is_same<T, c10::Half>::value ||
                       std::is_same<T, c10::BFloat16>::value) {
    FloatChecker check{t.atol, t.rtol, {}};
    for (int64_t i = 0; i < n; ++i) check(static_cast<double>(e[i]), static_cast<double>(a[i]), i);
    return check.s;
  } else {
    ValueStats s;
    for (int64_t i = 0; i < n; ++i) {
      if (e[i] == a[i]) continue;
      if (s.mismatches++ == 0) s.first = i;
      s.max_abs = std::max(s.max_abs, std::abs(static_cast<double>(e[i]) - static_cast<double>(a[i])));
    }
    return s;
  }
}

// `e` and `a`: contiguous CPU tensors of one dtype and size. Dtypes beyond the usual ones are widened first, without
// changing a value: other floating types to float64, other complex types to their parts in float64 (in the order
// a complex tensor's parts are stored), other integer types to int64 (the unsigned ones by their bits, so that equal
// stays equal).
ValueStats value_stats(at::Tensor e, at::Tensor a, const Tolerance& t) {
  if (e.nbytes() == a.nbytes() && std::memcmp(e.data_ptr(), a.data_ptr(), e.nbytes()) == 0) return ValueStats();
  switch (e.scalar_type()) {
    case c10::ScalarType::Float:
    case c10::ScalarType::Double:
    case c10::ScalarType::Half:
    case c10::ScalarType::BFloat16:
    case c10::ScalarType::ComplexFloat:
    case c10::ScalarType::ComplexDouble:
    case c10::ScalarType::Long:
    case c10::ScalarType::Int:
    case c10::ScalarType::Short:
    case c10::ScalarType::Char:
    case c10::ScalarType::Byte:
    case c10::ScalarType::Bool: break;
    default:
      if (e.is_complex()) {  // by parts, interleaved as a complex tensor's are
        e = at::view_as_real(e).to(c10::ScalarType::Double);
        a = at::view_as_real(a).to(c10::ScalarType::Double);
      } else {
        const auto wide = e.is_floating_point() ? c10::ScalarType::Double : c10::ScalarType::Long;
        e = e.to(wide);
        a = a.to(wide);
      }
  }
  ValueStats s;
  AT_DISPATCH_ALL_TYPES_AND_COMPLEX_AND3(
      c10::ScalarType::Half, c10::ScalarType::BFloat16, c10::ScalarType::Bool, e.scalar_type(), "compare",
      [&] { s = scan(e.data_ptr<scalar_t>(), a.data_ptr<scalar_t>(), e.numel(), t); });
  return s;
}

Comparison compare_tensors(const at::Tensor& named_e, const at::Tensor& named_a, CompareMode mode,
                           const Tolerance* tol) {
  if (mode == CompareMode::kVectorsUpToPhase) {
    const bool vectors = named_e.defined() && named_a.defined() && named_e.dim() >= 2 && !compat::has_names(named_e) &&
                         named_e.sizes() == named_a.sizes() && named_e.scalar_type() == named_a.scalar_type() &&
                         named_e.layout() == c10::kStrided && named_a.layout() == c10::kStrided &&
                         (named_e.is_floating_point() || named_e.is_complex()) && named_e.numel() > 0 &&
                         !named_e.is_meta() && !named_a.is_meta();
    if (!vectors) return compare_tensors(named_e, named_a, CompareMode::kValues, tol);
    // Columns (eigenvectors, U), else rows (Vh): which one a result holds is the operator's.
    Comparison columns = compare_tensors(named_e, aligned(named_e, named_a, -2), CompareMode::kValues, tol);
    if (columns.equal) return columns;
    Comparison rows = compare_tensors(named_e, aligned(named_e, named_a, -1), CompareMode::kValues, tol);
    return rows.equal ? rows : columns;
  }
  Comparison c;
  if (named_e.defined() != named_a.defined()) {
    c.equal = false;
    c.message = named_e.defined() ? "undefined tensor, expected one" : "tensor, expected an undefined one";
    return c;
  }
  if (!named_e.defined()) return c;
  if (names_of(named_e) != names_of(named_a)) {
    c.equal = false;
    c.message = fmt::format("dimension names {} differ from the CPU's {}", names_of(named_a), names_of(named_e));
    return c;
  }
  const at::Tensor e = unnamed(named_e), a = unnamed(named_a);
  if (e.scalar_type() != a.scalar_type()) {
    c.equal = false;
    c.message =
        fmt::format("dtype {} differs from the CPU's {}", dtype_name(a.scalar_type()), dtype_name(e.scalar_type()));
    return c;
  }
  if (e.sizes() != a.sizes()) {
    c.equal = false;
    c.message = fmt::format("shape {} differs from the CPU's {}", fmt::join(a.sizes(), "x"), fmt::join(e.sizes(), "x"));
    return c;
  }
  if (mode == CompareMode::kShape || e.numel() == 0 || e.is_meta() || a.is_meta()) return c;
  if (e.layout() != a.layout()) {
    c.equal = false;
    c.message = a.layout() == c10::kStrided ? "a dense tensor, the CPU gave a sparse one"
                                            : "a sparse tensor, the CPU gave another layout";
    return c;
  }
  // Sparse results are compared by their dense values.
  // Quantized results by the values they stand for.
  // Zero tensors (_efficientzerotensor: no memory behind them) by the zeros they stand for.
  const auto dense = [](const at::Tensor& t) {
    const at::Tensor d = t.layout() == c10::kStrided ? t : t.to_dense();
    if (d._is_zerotensor()) return at::zeros(d.sizes(), d.options());
    return d.is_quantized() ? d.dequantize() : d;
  };
  at::Tensor ee = dense(e).resolve_conj().resolve_neg().contiguous();
  at::Tensor aa = dense(a).resolve_conj().resolve_neg().contiguous();
  if (mode == CompareMode::kSorted && !e.is_complex() && e.scalar_type() != c10::ScalarType::Bool) {
    ee = std::get<0>(ee.reshape({-1}).sort());
    aa = std::get<0>(aa.reshape({-1}).sort());
  }
  const Tolerance t = tol ? *tol : default_tolerance(e.scalar_type());
  const ValueStats s = value_stats(ee, aa, t);
  c.mismatches = s.mismatches;
  if (!e.is_floating_point() && !e.is_complex()) {
    if (c.mismatches > 0) {
      c.equal = false;
      c.first_mismatch = index_of(e, s.first);
      c.message = fmt::format("{} of {} elements differ; first at {}", c.mismatches, e.numel(), c.first_mismatch);
      c.max_abs_error = s.max_abs;
    }
    return c;
  }
  c.max_abs_error = s.max_abs;
  c.max_rel_error = s.max_rel;
  if (c.mismatches > 0) {
    c.equal = false;
    c.first_mismatch = index_of(e, e.is_complex() ? s.first / 2 : s.first);
    c.message = fmt::format("{} of {} elements differ beyond atol={:g}, rtol={:g}; max abs error {:g}, first at {}",
                            c.mismatches, e.is_complex() ? 2 * e.numel() : e.numel(), t.atol, t.rtol, c.max_abs_error,
                            c.first_mismatch);
  }
  return c;
}

// Indices are right when they are in range and select the values the CPU's indices select.
Comparison compare_indices(const at::Tensor& e, const at::Tensor& a, const IndexSource& source, const Tolerance* tol) {
  Comparison c = compare_tensors(e, a, CompareMode::kShape, nullptr);
  if (!c.equal || !e.defined() || e.numel() == 0) return c;
  if (!c10::isIntegralType(e.scalar_type(), /*includeBool=*/false))
    return compare_tensors(e, a, CompareMode::kValues, tol);
  at::Tensor input = unnamed(source.input);
  at::Tensor ei = unnamed(e).to(c10::ScalarType::Long), ai = unnamed(a).to(c10::ScalarType::Long);
  int64_t dim = source.dim.value_or(0);
  if (!source.dim || input.dim() == 0) {
    input = input.reshape({-1});
    ei = ei.reshape({-1});
    ai = ai.reshape({-1});
    dim = 0;
  }
  if (dim < 0) dim += input.dim();
  if (dim < 0 || dim >= input.dim() || ei.dim() > input.dim()) {
    return compare_tensors(e, a, CompareMode::kValues, nullptr);  // not indices into this input: plain values
  }
  if (ei.dim() < input.dim()) {  // a reduced dimension (keepdim=False)
    ei = ei.unsqueeze(dim);
    ai = ai.unsqueeze(dim);
  }
  const int64_t size = input.size(dim);
  const at::Tensor out_of_range = ai.lt(0).logical_or(ai.ge(size));
  c.mismatches = out_of_range.sum().item<int64_t>();
  if (c.mismatches > 0) {
    c.equal = false;
    c.first_mismatch = index_of(a, out_of_range.reshape({-1}).to(c10::ScalarType::Byte).argmax().item<int64_t>());
    c.message = fmt::format("{} of {} indices are outside [0, {}); first at {}", c.mismatches, a.numel(), size,
                            c.first_mismatch);
    return c;
  }
  c = compare_tensors(input.gather(dim, ei), input.gather(dim, ai), CompareMode::kValues, tol);
  if (!c.equal) c.message = "indices select different values: " + c.message;
  return c;
}

}  // namespace

Tolerance default_tolerance(c10::ScalarType type) {
  switch (type) {
    case c10::ScalarType::Half: return {1e-5, 1e-3};
    case c10::ScalarType::BFloat16: return {1e-5, 1.6e-2};
    case c10::ScalarType::Float:
    case c10::ScalarType::ComplexFloat: return {1e-5, 1.3e-6};
    case c10::ScalarType::Double:
    case c10::ScalarType::ComplexDouble: return {1e-7, 1e-7};
    default: return {0, 0};
  }
}

namespace {

// The path of a nested output in messages: "output 1" at the top, "output 1[0]" for an element of a list in it.
std::string child_path(const std::string& path, size_t i) {
  return path.empty() ? fmt::format("output {}", i) : fmt::format("{}[{}]", path, i);
}

// Prefixes a leaf comparison's message with where the leaf is; nested ones already carry their path.
Comparison at_path(Comparison c, const std::string& path) {
  if (!c.equal && !path.empty()) c.message = path + ": " + c.message;
  return c;
}

Comparison compare_at(const c10::IValue& expected, const c10::IValue& actual, CompareMode mode,
                      const Tolerance* tolerance_override, const IndexSource* indices, const std::string& path) {
  Comparison c;
  if (mode == CompareMode::kIndicesByValues && indices && indices->input.defined()) {
    const auto is_index = [&](size_t i) {
      const auto& io = indices->index_outputs;
      return std::find(io.begin(), io.end(), i) != io.end();
    };
    if (expected.isTensor() && actual.isTensor() && is_index(0)) {
      return at_path(compare_indices(expected.toTensor(), actual.toTensor(), *indices, tolerance_override), path);
    }
    if (expected.isTuple() && actual.isTuple()) {
      const auto& ev = expected.toTupleRef().elements();
      const auto& av = actual.toTupleRef().elements();
      if (ev.size() == av.size()) {
        for (size_t i = 0; i < ev.size(); ++i) {
          merge(c,
                is_index(i) && ev[i].isTensor() && av[i].isTensor()
                    ? at_path(compare_indices(ev[i].toTensor(), av[i].toTensor(), *indices, tolerance_override),
                              child_path(path, i))
                    : compare_at(ev[i], av[i], CompareMode::kValues, tolerance_override, nullptr, child_path(path, i)),
                "");
        }
        return c;
      }
    }
    mode = CompareMode::kValues;
  }
  if (expected.isTensor() && actual.isTensor()) {
    return at_path(compare_tensors(expected.toTensor(), actual.toTensor(), mode, tolerance_override), path);
  }
  if ((expected.isTuple() && actual.isTuple()) || (expected.isList() && actual.isList())) {
    const auto ev = expected.isTuple() ? expected.toTupleRef().elements().vec() : expected.toList().vec();
    const auto av = actual.isTuple() ? actual.toTupleRef().elements().vec() : actual.toList().vec();
    if (ev.size() != av.size()) {
      c.equal = false;
      c.message = fmt::format("{} outputs, the CPU gave {}", av.size(), ev.size());
      return at_path(c, path);
    }
    for (size_t i = 0; i < ev.size(); ++i) {
      merge(c, compare_at(ev[i], av[i], mode, tolerance_override, nullptr, child_path(path, i)), "");
    }
    return c;
  }
  if (expected.isNone() && actual.isNone()) return c;
  if (expected.tagKind() != actual.tagKind()) {
    c.equal = false;
    c.message = fmt::format("a {}, the CPU gave a {}", actual.tagKind(), expected.tagKind());
    return at_path(c, path);
  }
  if (mode == CompareMode::kShape) return c;
  if (expected.isDouble() || expected.isComplexDouble() || (expected.isScalar() && actual.isScalar())) {
    const at::Tensor e = at::scalar_to_tensor(expected.toScalar()), a = at::scalar_to_tensor(actual.toScalar());
    return at_path(compare_tensors(e, a.to(e.scalar_type()), mode, tolerance_override), path);
  }
  if (expected.isString() && expected.toStringRef() != actual.toStringRef()) {
    c.equal = false;
    c.message = fmt::format("'{}', the CPU gave '{}'", actual.toStringRef(), expected.toStringRef());
  }
  return at_path(c, path);
}

}  // namespace

Comparison compare_outputs(const c10::IValue& expected, const c10::IValue& actual, CompareMode mode,
                           const Tolerance* tolerance_override, const IndexSource* indices) {
  return compare_at(expected, actual, mode, tolerance_override, indices, "");
}

}  // namespace mps_audit
