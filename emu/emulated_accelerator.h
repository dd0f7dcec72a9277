// Emulated MPS as the process's accelerator, as MPS is on a Mac, so that libtorch 2.x's autograd engine can run a
// backward pass on it: see Note [Emulated MPS as the accelerator] in emulated_accelerator.cc.
#pragma once

#include <string>

namespace mps_audit::emu {

// Makes emulated MPS this process's accelerator, hiding a CUDA built into the linked libtorch (its hooks and its
// devices) from the process. Call it before anything in the process asks libtorch about CUDA or MPS, in a process
// that will use no CUDA. Returns "" when emulated MPS is the accelerator now (or the linked libtorch's autograd engine
// needs none), else why it is not.
std::string make_emulated_mps_the_accelerator();

}  // namespace mps_audit::emu
