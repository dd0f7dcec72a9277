// map_tensors over the IValue shapes that operator schemas use.
#include "common/ivalue_tensors.h"

#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

namespace mps_audit {

c10::IValue map_tensors(const c10::IValue& v, const TensorFn& f) {
  if (v.isTensor()) return f(v.toTensor());
  if (v.isStorage()) {  // set_.source_Storage: as a tensor of its bytes, so that it moves between devices too
    const c10::Storage storage = v.toStorage();
    at::Tensor bytes = at::empty({0}, at::TensorOptions().dtype(c10::ScalarType::Byte).device(storage.device()));
    bytes.set_(storage, 0, {static_cast<int64_t>(storage.nbytes())}, {1});
    return c10::IValue(f(bytes).storage());
  }
  if (v.isTensorList()) {
    c10::List<at::Tensor> out;
    for (at::Tensor t : v.toTensorList()) out.push_back(f(t));
    return out;
  }
  if (v.isTuple()) {
    std::vector<c10::IValue> out;
    const auto& tuple = v.toTupleRef();
    for (const auto& e : tuple.elements()) out.push_back(map_tensors(e, f));
    return c10::ivalue::Tuple::create(std::move(out));
  }
  if (v.isList()) {  // Tensor?[]
    auto list = v.toList();
    bool has_tensor = false;
    for (c10::IValue e : list) has_tensor |= e.isTensor();
    if (!has_tensor) return v;
    c10::List<c10::optional<at::Tensor>> out;
    for (c10::IValue e : list) {
      out.push_back(e.isTensor() ? c10::optional<at::Tensor>(f(e.toTensor())) : c10::nullopt);
    }
    return out;
  }
  return v;
}

std::optional<std::string> argument_text(const c10::IValue& v) {
  if (v.isNone()) return "none";
  if (v.isBool()) return v.toBool() ? "true" : "false";
  if (v.isInt()) return std::to_string(v.toInt());
  if (v.isDouble()) return fmt::format("{}", v.toDouble());
  if (v.isString()) return v.toStringRef();
  if (v.isIntList()) return fmt::format("[{}]", fmt::join(v.toIntVector(), ", "));
  if (v.isDoubleList()) return fmt::format("[{}]", fmt::join(v.toDoubleVector(), ", "));
  if (v.isBoolList()) {
    std::vector<std::string> parts;
    for (const bool b : v.toBoolList()) parts.push_back(b ? "true" : "false");
    return fmt::format("[{}]", fmt::join(parts, ", "));
  }
  return std::nullopt;  // tensors, and what no `arg:` condition names (a device, a generator); a dtype is an int here
}

}  // namespace mps_audit
