// Parsing and lookup of injected faults.
#include "emu/faults.h"

#include <fmt/format.h>

#include "common/diagnostics.h"
#include "common/text.h"

namespace mps_audit::emu {

FaultPlan FaultPlan::parse(std::string_view spec) {
  static const std::map<std::string, FaultKind> kKinds = {{"wrong", FaultKind::kWrong},
                                                          {"crash", FaultKind::kCrash},
                                                          {"hang", FaultKind::kHang},
                                                          {"throw", FaultKind::kThrow},
                                                          {"poison", FaultKind::kPoison},
                                                          {"slow", FaultKind::kSlow},
                                                          {"touch-then-hang", FaultKind::kTouchThenHang},
                                                          {"touch", FaultKind::kTouch}};
  FaultPlan plan;
  for (const auto& entry : split_list(spec)) {
    const size_t eq = entry.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == entry.size()) {
      throw UserError(fmt::format("{}: expected 'operator=kind', got '{}'", kFaultsVariable, entry));
    }
    std::string op = entry.substr(0, eq);
    if (op.find("::") == std::string::npos) op = "aten::" + op;
    const std::string kind = entry.substr(eq + 1);
    auto it = kKinds.find(kind);
    if (it == kKinds.end()) {
      throw UserError(fmt::format(
          "{}: unknown fault '{}' for {}, expected wrong, crash, hang, throw, poison, slow, touch or touch-then-hang{}",
          kFaultsVariable, kind, op,
          did_you_mean(kind, {"wrong", "crash", "hang", "throw", "poison", "slow", "touch", "touch-then-hang"})));
    }
    plan.faults_[op] = it->second;
  }
  return plan;
}

bool FaultPlan::plans(FaultKind kind) const {
  for (const auto& [op, planned] : faults_) {
    if (planned == kind) return true;
  }
  return false;
}

std::optional<FaultKind> FaultPlan::fault_for(const std::string& op_name) const {
  if (faults_.empty()) return std::nullopt;
  if (auto it = faults_.find(op_name); it != faults_.end()) return it->second;
  if (auto it = faults_.find(base_operator_name(op_name)); it != faults_.end()) return it->second;
  return std::nullopt;
}

}  // namespace mps_audit::emu
