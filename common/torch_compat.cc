// The parts of the libtorch compatibility layer (torch_compat.h) that need ATen's own headers.
#include "common/torch_compat.h"

#include <ATen/core/Tensor.h>
#if MPS_AUDIT_TORCH_NAMED_TENSORS
#include <ATen/NamedTensorUtils.h>
#include <ATen/core/NamedTensor.h>
#endif

namespace mps_audit::compat {

#if MPS_AUDIT_TORCH_NAMED_TENSORS
bool has_names(const at::Tensor& t) {
  return t.has_names();
}

std::vector<std::string> dimension_names(const at::Tensor& t) {
  std::vector<std::string> out;
  if (!t.has_names()) return out;
  for (const auto& n : t.names()) out.push_back(n.symbol().toQualString());
  return out;
}

at::Tensor without_names(const at::Tensor& t) {
  return t.has_names() ? t.rename(c10::nullopt) : t;
}

void set_dimension_names(const at::Tensor& t, const std::vector<std::string>& qualified) {
  std::vector<at::Dimname> names;
  for (const auto& q : qualified) {
    names.push_back(q == "*" ? at::Dimname::wildcard() : at::Dimname::fromSymbol(at::Symbol::fromQualString(q)));
  }
  at::internal_set_names_inplace(t, std::move(names), /*validate_names=*/true);
}

void copy_names(const at::Tensor& from, const at::Tensor& to) {
  if (from.has_names()) at::internal_set_names_inplace(to, from.names());
}

void with_broadcast_names(const at::Tensor& self, const at::Tensor& other, const std::function<void()>& body) {
  const auto names = at::namedinference::compute_broadcast_outnames(self, other);
  {
    NoNamesGuard no_names;
    body();
  }
  at::namedinference::propagate_names_if_nonempty(self, names);
}

NoNamesGuard::NoNamesGuard() : previous_(at::NamesMode::is_enabled()) {
  at::NamesMode::set_enabled(false);
}

NoNamesGuard::~NoNamesGuard() {
  at::NamesMode::set_enabled(previous_);
}
#else
bool has_names(const at::Tensor&) {
  return false;
}

std::vector<std::string> dimension_names(const at::Tensor&) {
  return {};
}

at::Tensor without_names(const at::Tensor& t) {
  return t;
}

void set_dimension_names(const at::Tensor&, const std::vector<std::string>&) {
  TORCH_CHECK(false, kNoNamedTensors);
}

void copy_names(const at::Tensor&, const at::Tensor&) {}

void with_broadcast_names(const at::Tensor&, const at::Tensor&, const std::function<void()>& body) {
  body();
}

NoNamesGuard::NoNamesGuard() = default;
NoNamesGuard::~NoNamesGuard() = default;
#endif

}  // namespace mps_audit::compat
