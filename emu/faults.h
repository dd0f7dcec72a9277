// Fault injection for the MPS emulator, so that tests can prove the prober catches each kind of failure:
// MPS_AUDIT_EMU_FAULTS="aten::sin=wrong,aten::cos=crash,aten::tan=hang,aten::exp=throw,aten::abs=poison,
// aten::neg=touch,aten::sub=slow,aten::cosh=touch-then-hang".
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace mps_audit::emu {

enum class FaultKind {
  kWrong,          // the kernel returns a perturbed result
  kCrash,          // the process aborts
  kHang,           // the kernel never returns
  kThrow,          // the kernel throws
  kPoison,         // the kernel throws and leaves the device unusable: every later operator on it throws, as every CUDA
                   // call does after an illegal memory access
  kSlow,           // the kernel takes 20 ms longer, and then computes as usual
  kTouchThenHang,  // as touch the first time; every later call of the operator in that process never returns, as
                   // on a lock the caught fault left held
  kTouch,  // code on the CPU reads the first tensor argument's device memory, which (as a CUDA device's) it cannot
           // reach: the access faults (SIGSEGV). Caught, it stands for what a fault may leave behind: from then on,
           // every other operator's results are wrong in that process. Where emulated MPS memory is heap memory
           // (Note [Emulated MPS memory] in device_memory.cc), it comes in whole pages while such a fault is planned,
           // so that one tensor's can be made unreadable alone.
};

inline constexpr const char* kFaultsVariable = "MPS_AUDIT_EMU_FAULTS";

// Operator name ("aten::sin", or "aten::add.Tensor") -> fault. A name without overload matches every overload.
class FaultPlan {
 public:
  // Throws UserError naming the variable and the bad entry.
  static FaultPlan parse(std::string_view spec);
  std::optional<FaultKind> fault_for(const std::string& op_name) const;
  bool empty() const { return faults_.empty(); }
  bool plans(FaultKind kind) const;

 private:
  std::map<std::string, FaultKind> faults_;
};

}  // namespace mps_audit::emu
