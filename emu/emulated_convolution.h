// The convolution kernels of emulated MPS. On a libtorch built with MPS, _convolution picks its MPS backend for an MPS
// input and calls the MPS-only operators (native/Convolution.cpp, a branch compiled only with USE_MPS); without MPS it
// falls through to convolution_overrideable and convolution_backward_overrideable, which the emulator takes at the MPS
// key (kPlumbingOps in mps_emulator.h) to make the same calls. The MPS-only operators compute with the CPU's
// convolution. Boxed kernels, for the emulator's registrations (Note [MPS emulation] in mps_emulator.cc).
#pragma once

#include <ATen/core/stack.h>

namespace c10 {
class OperatorHandle;
}  // namespace c10

namespace mps_audit::emu {

// The MPS-only operators: _mps_convolution, _mps_convolution_transpose, mps_convolution_backward and
// mps_convolution_transpose_backward. Faults planned for them (emu/faults.h) are the caller's to inject first, and
// so is the release's refusal of an input (1.x's of Conv3D): these compute whatever the release.
void mps_convolution_kernel(const c10::OperatorHandle& op, torch::jit::Stack* stack);
void mps_convolution_transpose_kernel(const c10::OperatorHandle& op, torch::jit::Stack* stack);
void mps_convolution_backward_kernel(const c10::OperatorHandle& op, torch::jit::Stack* stack);
void mps_convolution_transpose_backward_kernel(const c10::OperatorHandle& op, torch::jit::Stack* stack);

// convolution_overrideable and convolution_backward_overrideable: the calls _convolution makes on a libtorch with MPS.
void convolution_kernel(const c10::OperatorHandle& op, torch::jit::Stack* stack);
void convolution_backward_kernel(const c10::OperatorHandle& op, torch::jit::Stack* stack);

}  // namespace mps_audit::emu
