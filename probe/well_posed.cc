// The well-posed rules of input synthesis (Note [well-posed synthesis]): the operators whose random inputs would
// make the result depend on the kernel, and the inputs they get instead: unique indices, positive definite and
// well-conditioned matrices, non-overlapping strides, indices from a max pooling.
#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <ATen/core/Tensor.h>
#include <ATen/ops/argsort.h>
#include <ATen/ops/eye.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/max_pool2d_with_indices.h>
#include <ATen/ops/max_pool3d_with_indices.h>
#include <ATen/ops/rand.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/randperm.h>
#include <ATen/ops/stack.h>
#include <ATen/ops/view_as_complex.h>

#include "probe/inputs.h"
#include "probe/inputs_impl.h"

namespace mps_audit {

using detail::is_write;
using detail::OpTraits;
using detail::repeat;
using detail::spatial_shape;

namespace {

// A random matrix in float64 (complex128 for a complex type) of the given shape.
at::Tensor random_matrix(const std::vector<int64_t>& shape, c10::ScalarType type, at::Generator& gen) {
  const auto f64 = at::TensorOptions().dtype(c10::ScalarType::Double);
  at::Tensor x = at::randn(shape, gen, f64);
  if (c10::isComplexType(type)) x = at::view_as_complex(at::stack({x, at::randn(shape, gen, f64)}, -1));
  return x;
}

// Index tensors that write each location once. `args` are in schema order.
void unique_indices(const c10::FunctionSchema& schema, const std::string& base, std::vector<c10::IValue>& args,
                    at::Generator& gen) {
  const auto& a = schema.arguments();
  const auto find = [&](const char* name) -> c10::IValue* {
    for (size_t i = 0; i < a.size() && i < args.size(); ++i) {
      if (a[i].name() == name) return &args[i];
    }
    return nullptr;
  };
  c10::IValue* self = find("self");
  if (!self || !self->isTensor() || !self->toTensor().defined()) return;
  const at::Tensor target = self->toTensor();
  const auto long_options = at::TensorOptions().dtype(c10::ScalarType::Long);
  // The first n of a permutation of [0, bound), in the index's shape; unchanged when n > bound.
  const auto permuted = [&](const at::Tensor& index, int64_t bound) {
    if (!index.defined() || index.numel() > bound) return index;
    return at::randperm(bound, gen, long_options).narrow(0, 0, index.numel()).view(index.sizes());
  };
  const auto dim_of = [&]() -> std::optional<int64_t> {
    const c10::IValue* dim = find("dim");
    if (!dim || !dim->isInt()) return std::nullopt;
    const int64_t rank = std::max<int64_t>(target.dim(), 1), d = dim->toInt();
    if (d < -rank || d >= rank) return std::nullopt;
    return d < 0 ? d + rank : d;
  };
  if (base == "put" || base == "put_") {
    if (c10::IValue* index = find("index"); index && index->isTensor())
      *index = permuted(index->toTensor(), target.numel());
  } else if (base.rfind("index_add", 0) == 0 || base.rfind("index_copy", 0) == 0 || base.rfind("index_fill", 0) == 0 ||
             base.rfind("index_reduce", 0) == 0) {
    // A vector index as long as the source along dim (synthesis makes the index in the input's shape).
    c10::IValue* index = find("index");
    const c10::IValue* source = find("source");
    const auto d = dim_of();
    if (!index || !index->isTensor() || !d) return;
    const int64_t bound = target.dim() ? target.size(*d) : 1;
    int64_t length = std::min(index->toTensor().numel(), bound);  // index_fill: no source
    if (source && source->isTensor() && source->toTensor().dim() == target.dim() && target.dim() > 0) {
      length = source->toTensor().size(*d);
    }
    if (length <= bound) *index = at::randperm(bound, gen, long_options).narrow(0, 0, length);
  } else if (base.rfind("index_put", 0) == 0 || base.rfind("_index_put_impl", 0) == 0) {
    c10::IValue* indices = find("indices");
    if (!indices || !indices->isList() || target.dim() == 0) return;
    auto list = indices->toList();
    if (list.size() != 1 || !list.get(0).isTensor()) return;  // tuples of indices: left as made
    c10::List<c10::optional<at::Tensor>> unique;
    unique.push_back(permuted(list.get(0).toTensor(), target.size(0)));
    *indices = unique;
  } else if (base.rfind("scatter", 0) == 0) {
    if (const c10::IValue* reduce = find("reduce"); reduce && !reduce->isNone()) return;
    c10::IValue* index = find("index");
    const auto d = dim_of();
    if (!index || !index->isTensor() || !d || target.dim() == 0) return;
    const at::Tensor old = index->toTensor();
    if (old.dim() != target.dim()) return;
    // Along dim, each slice gets distinct positions: a random ordering of all of them, cut to the index's length.
    std::vector<int64_t> all = old.sizes().vec();
    const int64_t keep = std::min(all[*d], target.size(*d));
    all[*d] = target.size(*d);
    *index = at::rand(all, gen, at::TensorOptions().dtype(c10::ScalarType::Float)).argsort(*d).narrow(*d, 0, keep);
  }
}

// max_unpool's inputs from a max pooling with stride = kernel: indices unique within each plane.
void from_pooling(const c10::FunctionSchema& schema, const OpTraits& op, std::vector<c10::IValue>& args,
                  c10::ScalarType dtype, at::Generator& gen) {
  if (op.spatial != 2 && op.spatial != 3) return;
  std::vector<int64_t> shape = spatial_shape(op.spatial);
  const std::vector<int64_t> window = repeat(op.spatial, 2), zeros = repeat(op.spatial, 0),
                             ones = repeat(op.spatial, 1);
  std::tuple<at::Tensor, at::Tensor> pooled;
  try {
    const at::Tensor input = at::randn(shape, gen, at::TensorOptions().dtype(c10::ScalarType::Float)).to(dtype);
    pooled = op.spatial == 2 ? at::max_pool2d_with_indices(input, window, window, zeros, ones)
                             : at::max_pool3d_with_indices(input, window, window, zeros, ones);
  } catch (const std::exception&) {  // no pooling kernel for this dtype: leave the inputs as made
    return;
  }
  const auto& a = schema.arguments();
  for (size_t i = 0; i < a.size() && i < args.size(); ++i) {
    const std::string& name = a[i].name();
    if (name == "self") args[i] = std::get<0>(pooled);
    if (name == "indices") args[i] = std::get<1>(pooled);
    if (name == "output_size") args[i] = std::vector<int64_t>(shape.begin() + 2, shape.end());
    if (name == "stride") args[i] = window;
    if (name == "padding") args[i] = zeros;
  }
}

}  // namespace

namespace detail {

void make_well_posed(const c10::FunctionSchema& schema, const OpTraits& op, std::vector<c10::IValue>& args,
                     c10::ScalarType dtype, at::Generator& gen) {
  const WellPosed rule = well_posed_rule(op.base);
  const auto& a = schema.arguments();
  switch (rule) {
    case WellPosed::kNone: return;
    case WellPosed::kUniqueIndices: unique_indices(schema, op.base, args, gen); return;
    case WellPosed::kFromPooling: from_pooling(schema, op, args, dtype, gen); return;
    case WellPosed::kNonOverlapping:
      for (size_t i = 0; i < a.size() && i < args.size(); ++i) {
        if (a[i].name() == "storage_offset" && args[i].isInt()) args[i] = int64_t{0};  // set_: within the storage
        if (a[i].name() != "size" || !args[i].isIntList()) continue;
        const std::vector<int64_t> size = args[i].toIntVector();
        std::vector<int64_t> stride(size.size(), 1);
        for (size_t d = size.size(); d-- > 1;) stride[d - 1] = stride[d] * std::max<int64_t>(size[d], 1);
        for (size_t j = 0; j < a.size() && j < args.size(); ++j) {
          if (a[j].name() == "stride" && args[j].isIntList()) args[j] = stride;
        }
      }
      return;
    case WellPosed::kSpd:
    case WellPosed::kWellConditioned:
      for (size_t i = 0; i < a.size() && i < args.size(); ++i) {
        if (is_write(a[i]) || !args[i].isTensor()) continue;
        const at::Tensor t = args[i].toTensor();
        if (!t.defined() || t.dim() < 2 ||
            !(c10::isFloatingType(t.scalar_type()) || c10::isComplexType(t.scalar_type())))
          continue;
        if (rule == WellPosed::kSpd && t.size(-1) != t.size(-2)) continue;
        args[i] = rule == WellPosed::kSpd ? spd_matrix(t.sizes().vec(), t.scalar_type(), gen)
                                          : well_conditioned_matrix(t.sizes().vec(), t.scalar_type(), gen);
      }
      return;
  }
}

}  // namespace detail

// Note [well-posed synthesis]: random inputs make some operators' results depend on the kernel rather than on the
// operator: a location written twice through duplicate indices keeps whichever write came last, and an
// ill-conditioned matrix turns rounding into large differences. The table below names the operators whose
// synthesized inputs are adjusted (docs/synthesis.md); samples from the spec are used as given.
WellPosed well_posed_rule(const std::string& base) {
  static const std::map<std::string, WellPosed> table = [] {
    std::map<std::string, WellPosed> t;
    // index_fill and index_reduce give the same result with duplicates; they are here for a vector index, which
    // synthesis (an index shaped like the input) does not make.
    for (const char* name : {"index_add", "index_add_", "index_copy", "index_copy_", "index_put", "index_put_",
                             "_index_put_impl", "_index_put_impl_", "put", "put_", "scatter", "scatter_", "index_fill",
                             "index_fill_", "index_reduce", "index_reduce_"}) {
      t[name] = WellPosed::kUniqueIndices;
    }
    for (const char* name :
         {"cholesky", "cholesky_inverse", "cholesky_solve", "_cholesky_solve_helper", "linalg_cholesky",
          "linalg_cholesky_ex", "linalg_eigh", "_linalg_eigh", "linalg_eigvalsh", "symeig", "_symeig_helper"}) {
      t[name] = WellPosed::kSpd;
    }
    for (const char* name : {"linalg_solve",
                             "linalg_solve_ex",
                             "_linalg_solve_ex",
                             "linalg_inv",
                             "linalg_inv_ex",
                             "inverse",
                             "linalg_svd",
                             "_linalg_svd",
                             "svd",
                             "linalg_svdvals",
                             "linalg_lstsq",
                             "linalg_det",
                             "_linalg_det",
                             "det",
                             "logdet",
                             "slogdet",
                             "linalg_slogdet",
                             "_linalg_slogdet",
                             "lu",
                             "linalg_lu",
                             "linalg_lu_factor",
                             "linalg_lu_factor_ex",
                             "_lu_with_info",
                             "lu_solve",
                             "linalg_lu_solve",
                             "linalg_qr",
                             "qr",
                             "geqrf",
                             "linalg_pinv",
                             "pinverse",
                             "matrix_exp",
                             "linalg_matrix_exp",
                             "linalg_matrix_power",
                             "matrix_power",
                             "linalg_cond",
                             "linalg_eig",
                             "linalg_eigvals",
                             "linalg_matrix_rank",
                             "triangular_solve",
                             "linalg_solve_triangular",
                             "linalg_tensorinv",
                             "linalg_tensorsolve",
                             "linalg_multi_dot"}) {
      t[name] = WellPosed::kWellConditioned;
    }
    t["as_strided_scatter"] = t["set_"] = t["set"] = WellPosed::kNonOverlapping;
    for (const char* name : {"max_unpool2d", "max_unpool3d"}) t[name] = WellPosed::kFromPooling;
    return t;
  }();
  const auto it = table.find(base);
  return it == table.end() ? WellPosed::kNone : it->second;
}

at::Tensor spd_matrix(const std::vector<int64_t>& shape, c10::ScalarType type, at::Generator& gen) {
  // X X^H / n + I: eigenvalues between 1 and about 1 + 4 for a standard normal X (n >= 1).
  const at::Tensor x = random_matrix(shape, type, gen);
  const int64_t n = shape.back();
  const at::Tensor eye = at::eye(n, at::TensorOptions().dtype(x.scalar_type()));
  return at::matmul(x, x.transpose(-2, -1).conj()).div(static_cast<double>(n)).add(eye).to(type);
}

at::Tensor well_conditioned_matrix(const std::vector<int64_t>& shape, c10::ScalarType type, at::Generator& gen) {
  // Strictly diagonally dominant by rows and by columns on the leading square block, by at least 1: its smallest
  // singular value is at least 1 (Varah's bound), so the condition number stays below the largest row sum.
  at::Tensor x = random_matrix(shape, type, gen);
  const int64_t k = std::min(shape[shape.size() - 2], shape.back());
  const at::Tensor magnitude = x.abs();
  const at::Tensor dominance = magnitude.sum(-1).narrow(-1, 0, k).add(magnitude.sum(-2).narrow(-1, 0, k)).add(1);
  x.diagonal(0, -2, -1).add_(dominance);
  return x.to(type);
}

}  // namespace mps_audit
