// MPS data type rules, with the messages of PyTorch's MPS backend.
#include "emu/dtype_rules.h"

namespace mps_audit::emu {

std::optional<std::string> mps_dtype_refusal(c10::ScalarType type, int macos_major) {
  switch (type) {
    case c10::ScalarType::Double:
      return std::string(
          "Cannot convert a MPS Tensor to float64 dtype as the MPS framework doesn't support float64. "
          "Please use float32 instead.");
    case c10::ScalarType::ComplexDouble:
      return std::string(
          "Cannot convert a MPS Tensor to complex128 dtype as the MPS framework doesn't support float64. "
          "Please use complex64 instead.");
    case c10::ScalarType::BFloat16:
      if (macos_major < 14) return std::string("MPS bfloat16 type is supported on MacOS 14.0 or newer.");
      return std::nullopt;
    case c10::ScalarType::ComplexFloat:
    case c10::ScalarType::ComplexHalf:
      if (macos_major < 14) return std::string("MPS complex types are only supported on MacOS 14.0 or newer.");
      return std::nullopt;
    default: return std::nullopt;
  }
}

}  // namespace mps_audit::emu
