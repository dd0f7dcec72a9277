// Calls a recording's CPU made with operators it chose for itself, and what a Mac runs for them instead: see Note [The
// recording device's own choices] in device_choices.cc.
#pragma once

#include <string>

namespace mps_audit {

struct DeviceChoice {
  std::string recorded;  // "aten::_scaled_dot_product_flash_attention_for_cpu"
  std::string replayed;  // the operator a Mac calls with the same arguments; empty: there is no one such operator
  std::string why_not;   // when `replayed` is empty: the record's message, which says why it is not probed
};

// The entry of a recorded operator that is such a choice, or nullptr.
const DeviceChoice* recording_device_choice(const std::string& op);

// The operator a recorded call of `op` is replayed as: its counterpart on a Mac, or `op` itself.
std::string replayed_operator(const std::string& op);

}  // namespace mps_audit
