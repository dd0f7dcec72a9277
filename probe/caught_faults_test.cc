// Tests of catching faults on device memory (Note [Caught faults]): unreadable pages stand for a device's memory.
#include "probe/caught_faults.h"

#include <csignal>
#include <stdexcept>

#include <ATen/core/Tensor.h>
#include <ATen/core/function_schema.h>
#include <ATen/core/grad_mode.h>
#include <ATen/ops/ones.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

namespace mps_audit {
namespace {

const c10::Device kCpu(c10::DeviceType::CPU);

#ifdef __linux__

// Two pages the process cannot read or write.
class Unreachable {
 public:
  Unreachable() : size_(2 * static_cast<size_t>(::sysconf(_SC_PAGESIZE))) {
    memory_ = static_cast<char*>(::mmap(nullptr, size_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  }
  ~Unreachable() { ::munmap(memory_, size_); }
  Unreachable(const Unreachable&) = delete;
  Unreachable& operator=(const Unreachable&) = delete;
  volatile char* at(size_t offset) const { return memory_ + offset; }
  DeviceMemory as(const std::string& what) const {
    const auto begin = reinterpret_cast<uintptr_t>(memory_);
    return {begin, begin + size_, what};
  }

 private:
  size_t size_;
  char* memory_;
};

TEST(CaughtFaults, AReadOfTheMemoryIsCaughtAndSaysWhatWasRead) {
  const Unreachable shape;
  const size_t before = faults_caught();
  bool after_the_read = false;
  const auto fault = run_catching_device_faults({shape.as("argument 'shape'")}, kCpu, [&] {
    (void)*shape.at(100);
    after_the_read = true;
  });
  ASSERT_TRUE(fault.has_value());
  EXPECT_FALSE(after_the_read);
  EXPECT_EQ(fault->signal, SIGSEGV);
  EXPECT_EQ(fault->what, "argument 'shape'");
#ifdef __x86_64__
  EXPECT_EQ(fault->access, "read");
  EXPECT_EQ(fault->description,
            "signal 11 (Segmentation fault): code on the CPU read argument 'shape', which is in cpu memory");
#endif
  EXPECT_EQ(faults_caught(), before + 1);
}

TEST(CaughtFaults, AWriteSaysSoAndTheSecondOfTwoMemoriesIsNamed) {
  const Unreachable first, second;
  const auto fault = run_catching_device_faults({first.as("argument 'self'"), second.as("argument 'out'")}, kCpu,
                                                [&] { *second.at(4096 + 8) = 1; });
  ASSERT_TRUE(fault.has_value());
  EXPECT_EQ(fault->what, "argument 'out'");
#ifdef __x86_64__
  EXPECT_EQ(fault->access, "wrote to");
#endif
}

// An argument that the function gave other memory before it faulted there (an out= argument resized first): the
// memory is still named as the argument's.
TEST(CaughtFaults, MemoryAnArgumentWasGivenInTheFunctionIsTheArgumentsToo) {
  const Unreachable given;
  at::Tensor out = at::ones({4});
  const c10::FunctionSchema schema("test::f", "", {c10::Argument("out", c10::TensorType::get())}, {});
  const auto memory = device_memory_of(schema, {out}, kCpu);
  const auto fault = run_catching_device_faults(memory, kCpu, [&] {
    out.storage().set_data_ptr_noswap(c10::DataPtr(const_cast<char*>(given.at(0)), kCpu));
    *given.at(8) = 1;
  });
  ASSERT_TRUE(fault.has_value());
  EXPECT_EQ(fault->what, "argument 'out'");
}

// Memory that is no argument's, which the device says is its own (an operator's own allocation on a CUDA device).
TEST(CaughtFaults, AFaultOnOtherMemoryOfTheDeviceIsCaught) {
  const Unreachable argument, internal;
  const uintptr_t begin = internal.as("").begin, end = internal.as("").end;
  const auto fault = run_catching_device_faults(
      {argument.as("argument 'out'")}, kCpu, [&] { *internal.at(8) = 1; },
      [&](uintptr_t address) { return address >= begin && address < end; });
  ASSERT_TRUE(fault.has_value());
  EXPECT_EQ(fault->what, "cpu memory that is not an argument's");
#ifdef __x86_64__
  EXPECT_EQ(fault->description,
            "signal 11 (Segmentation fault): code on the CPU wrote to cpu memory that is not an "
            "argument's");
#endif
}

TEST(CaughtFaults, WithoutAFaultTheFunctionRunsAndNothingIsCaught) {
  const Unreachable memory;
  const size_t before = faults_caught();
  int ran = 0;
  EXPECT_FALSE(run_catching_device_faults({memory.as("argument 'self'")}, kCpu, [&] { ++ran; }).has_value());
  EXPECT_FALSE(run_catching_device_faults({}, kCpu, [&] { ++ran; }).has_value());
  EXPECT_EQ(ran, 2);
  EXPECT_EQ(faults_caught(), before);
  EXPECT_THROW(
      run_catching_device_faults({memory.as("argument 'self'")}, kCpu, [] { throw std::runtime_error("raised"); }),
      std::runtime_error);
}

// The function's frames are abandoned with their guards; the thread's ATen state is as it was before.
TEST(CaughtFaults, TheThreadsATenStateIsRestored) {
  const Unreachable memory;
  ASSERT_TRUE(at::GradMode::is_enabled());
  ASSERT_FALSE(c10::impl::tls_is_dispatch_key_excluded(c10::DispatchKey::AutogradCPU));
  const auto fault = run_catching_device_faults({memory.as("argument 'self'")}, kCpu, [&] {
    at::AutoGradMode no_grad(false);
    c10::impl::ExcludeDispatchKeyGuard no_autograd(c10::DispatchKey::AutogradCPU);
    (void)*memory.at(0);
  });
  ASSERT_TRUE(fault.has_value());
  EXPECT_TRUE(at::GradMode::is_enabled());
  EXPECT_FALSE(c10::impl::tls_is_dispatch_key_excluded(c10::DispatchKey::AutogradCPU));
}

TEST(CaughtFaultsDeathTest, AFaultElsewhereEndsTheProcessAsWithoutCatching) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const Unreachable caught, elsewhere;
  EXPECT_EXIT(run_catching_device_faults({caught.as("argument 'self'")}, kCpu, [&] { (void)*elsewhere.at(0); }),
              ::testing::KilledBySignal(SIGSEGV), "");
  // Nor one the device disowns.
  EXPECT_EXIT(run_catching_device_faults(
                  {}, kCpu, [&] { (void)*elsewhere.at(0); }, [](uintptr_t) { return false; }),
              ::testing::KilledBySignal(SIGSEGV), "");
  // Once the function returned, a fault on the same memory is not caught either.
  EXPECT_EXIT(
      {
        run_catching_device_faults({caught.as("argument 'self'")}, kCpu, [] {});
        (void)*caught.at(0);
      },
      ::testing::KilledBySignal(SIGSEGV), "");
}

#endif

TEST(CaughtFaults, DeviceMemoryIsEachTensorArgumentsStorageOnTheDevice) {
  const at::Tensor a = at::ones({2, 3}), b = at::ones({4}), c = at::ones({5});
  const c10::FunctionSchema schema(
      "test::f", "",
      {c10::Argument("self", c10::TensorType::get()), c10::Argument("tensors", c10::ListType::ofTensors()),
       c10::Argument("alpha", c10::IntType::get())},
      {});
  const std::vector<c10::IValue> args = {a, c10::List<at::Tensor>({b, c}), 2};
  const auto memory = device_memory_of(schema, args, kCpu);
  ASSERT_EQ(memory.size(), 3u);
  EXPECT_EQ(memory[0].what, "argument 'self'");
  EXPECT_EQ(memory[0].begin, reinterpret_cast<uintptr_t>(a.data_ptr()));
  EXPECT_EQ(memory[0].end - memory[0].begin, 6 * sizeof(float));
  EXPECT_EQ(memory[1].what, "argument 'tensors'");
  EXPECT_EQ(memory[2].begin, reinterpret_cast<uintptr_t>(c.data_ptr()));
  EXPECT_TRUE(device_memory_of(schema, args, c10::Device(c10::DeviceType::Meta)).empty());
}

}  // namespace
}  // namespace mps_audit
