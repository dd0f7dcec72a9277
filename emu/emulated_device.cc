// The device of emulated MPS: see emulated_device.h.
#include "emu/emulated_device.h"

#include <cstring>

#include <ATen/EmptyTensor.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <unistd.h>

#include "common/torch_compat.h"
#include "emu/device_memory.h"
#include "emu/dtype_rules.h"

namespace mps_audit::emu {
namespace {

constexpr c10::DeviceType kMps = c10::DeviceType::MPS;
// The emulated macOS, whose dtype rules check_dtype applies: set once, as the device is registered.
int g_macos_major = 14;

// Memory that says it lives on mps:0 (Note [Emulated MPS memory] in device_memory.cc). Both allocate() signatures are
// declared: libtorch 1.13's base class has the const one, 2.x the other; whichever the base declares is the override
// (see common/torch_compat.h). copy_data, 2.x's (a copy-on-write storage's copy), copies through the host view.
class EmulatedMpsAllocator final : public c10::Allocator {
 public:
  c10::DataPtr allocate(size_t n) const { return make(n); }
  c10::DataPtr allocate(size_t n) { return make(n); }
  void copy_data(void* dest, const void* src, std::size_t count) const {
    std::memcpy(host_address(dest), host_address(src), count);
  }
  c10::DeleterFnPtr raw_deleter() const override { return &free_device_memory; }

 private:
  static c10::DataPtr make(size_t n) {
    void* p = allocate_device_memory(n);
    return {p, p, &free_device_memory, c10::Device(kMps, 0)};
  }
};

// The device guard of emulated MPS: one device, one stream, and events that are done as soon as they are recorded,
// since every kernel runs synchronously on host memory. c10's NoOpDeviceGuardImpl refuses events, and autograd's
// engine in libtorch 2.x records and waits on them for every backward pass on a device (the real MPSGuardImpl has
// them), so a training step needs these. Streams and devices carry index 0, the tensors' own (mps:0): the engine
// matches a node's stream to its inputs' device by it.
struct EmulatedMpsGuard final : public c10::impl::DeviceGuardImplInterface {
  c10::DeviceType type() const override { return kMps; }
  c10::Device exchangeDevice(c10::Device) const override { return c10::Device(kMps, 0); }
  c10::Device getDevice() const override { return c10::Device(kMps, 0); }
  void setDevice(c10::Device) const override {}
  void uncheckedSetDevice(c10::Device) const noexcept override {}
  c10::Stream getStream(c10::Device) const noexcept override {
    return c10::Stream(c10::Stream::DEFAULT, c10::Device(kMps, 0));
  }
  c10::Stream exchangeStream(c10::Stream) const noexcept override {
    return c10::Stream(c10::Stream::DEFAULT, c10::Device(kMps, 0));
  }
  c10::DeviceIndex deviceCount() const noexcept override { return 1; }
  void record(void** event, const c10::Stream&, const c10::DeviceIndex, const c10::EventFlag) const override {
    static char recorded;
    *event = &recorded;  // any non-null handle: nothing is ever pending
  }
  void block(void*, const c10::Stream&) const override {}
  bool queryEvent(void*) const override { return true; }
  void destroyEvent(void*, const c10::DeviceIndex) const noexcept override {}
  bool queryStream(const c10::Stream&) const override { return true; }
  void synchronizeStream(const c10::Stream&) const override {}
};

}  // namespace

size_t page_size() {
  static const size_t size = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  return size;
}

c10::Allocator& emulated_allocator() {
  static EmulatedMpsAllocator instance;
  return instance;
}

bool register_emulated_device(bool whole_pages, int macos_major) {
  g_macos_major = macos_major;
  const bool kept_from_cpu = init_device_memory(whole_pages);
  static EmulatedMpsGuard guard;
  static c10::impl::DeviceGuardImplRegistrar guard_registrar(kMps, &guard);
  c10::SetAllocator(kMps, &emulated_allocator());
  return kept_from_cpu;
}

bool low_precision(c10::ScalarType type) {
  return type == c10::ScalarType::Half || type == c10::ScalarType::BFloat16;
}

void check_dtype(c10::ScalarType type) {
  if (auto refusal = mps_dtype_refusal(type, g_macos_major)) TORCH_CHECK_TYPE(false, *refusal);
}

at::Tensor cpu_view(const at::Tensor& t) {
  const c10::Storage& src = t.storage();
  c10::Storage storage(c10::Storage::use_byte_size_t(), src.nbytes(),
                       c10::DataPtr(host_address(src.data_ptr().get()), c10::Device(c10::kCPU)), nullptr, false);
  auto impl =
      c10::make_intrusive<c10::TensorImpl>(std::move(storage), c10::DispatchKeySet(c10::DispatchKey::CPU), t.dtype());
  impl->set_sizes_and_strides(t.sizes(), t.strides());
  impl->set_storage_offset(t.storage_offset());
  impl->_set_conj(t.is_conj());  // lazy conjugation and negation travel with the view
  impl->_set_neg(t.is_neg());
  at::Tensor view(std::move(impl));
  compat::copy_names(t, view);  // so that the CPU kernel's name inference sees them
  return view;
}

at::Tensor host_view(const at::Tensor& t) {
  return t.device().type() == kMps ? cpu_view(t) : t;
}

at::Tensor empty_mps_strided(c10::IntArrayRef sizes, c10::IntArrayRef strides, c10::ScalarType dtype) {
  check_dtype(dtype);
  return at::Tensor(at::detail::empty_strided_generic(sizes, strides, &emulated_allocator(),
                                                      c10::DispatchKeySet(c10::DispatchKey::MPS), dtype));
}

at::Tensor to_mps(const at::Tensor& cpu) {
  at::Tensor out = empty_mps_strided(cpu.sizes(), cpu.strides(), cpu.scalar_type());
  {
    compat::NoNamesGuard no_names;
    cpu_view(out).copy_(cpu);
  }
  compat::copy_names(cpu, out);
  return out;
}

}  // namespace mps_audit::emu
