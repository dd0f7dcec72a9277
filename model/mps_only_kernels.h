// CPU references for the operators that only MPS implements (linear_backward, and in 2.x max_pool2d_backward), so
// that the MPS emulator, which computes an "MPS kernel" with the CPU's, can run a model's training step. Real MPS
// never needs them.
#pragma once

namespace mps_audit {

// Registers a CPU kernel for each MPS-only operator that has none in the linked libtorch; once per process.
// Only for mps-emu: on the CPU side it changes nothing a model calls (autograd reaches these operators only
// through MPS kernels).
void register_cpu_references_for_mps_only_ops();

}  // namespace mps_audit
