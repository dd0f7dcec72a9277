// The errors an emulated kernel raises where a Mac's kernel refuses a call past a limit of MPS (emu/mps_limits.h):
// of the types a Mac's raise (RuntimeError and NotImplementedError in Python), marked so that whoever records the
// outcome can say that it rests on the limit, not on a kernel that ran.
#pragma once

#include <exception>

#include <c10/util/Exception.h>

namespace mps_audit {

class LimitError : public c10::Error {
 public:
  using c10::Error::Error;
};

class LimitRefusal : public c10::NotImplementedError {
 public:
  using c10::NotImplementedError::NotImplementedError;
};

inline bool is_limit_error(const std::exception& e) {
  return dynamic_cast<const LimitError*>(&e) || dynamic_cast<const LimitRefusal*>(&e);
}

}  // namespace mps_audit
