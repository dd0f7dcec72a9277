#include "emu/device_memory.h"

#include <cerrno>
#include <cstring>

#include <gtest/gtest.h>
#include <unistd.h>

namespace mps_audit::emu {
namespace {

// Whether the CPU may read a byte at `p`, and write one there, asked of the kernel (a pipe's read and write say EFAULT
// where the process cannot), so that the test process itself never faults.
struct Access {
  bool read = false, write = false;
};
Access access_at(void* p) {
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error("pipe");
  Access a;
  a.read = ::write(fds[1], p, 1) == 1;
  const char byte = 7;
  (void)!::write(fds[1], &byte, 1);
  char drained = 0;
  if (a.read) (void)!::read(fds[0], &drained, 1);
  a.write = ::read(fds[0], p, 1) == 1;
  ::close(fds[0]);
  ::close(fds[1]);
  return a;
}

bool kept() {
  return init_device_memory(/*whole_pages=*/false);
}

TEST(DeviceMemory, TensorsAddressesAreUnreachableAndTheHostViewHoldsTheBytes) {
  if (!kept()) GTEST_SKIP() << "emulated MPS memory is heap memory here";
  auto* device = static_cast<char*>(allocate_device_memory(100));
  ASSERT_NE(device, nullptr);
  EXPECT_TRUE(is_device_address(reinterpret_cast<uintptr_t>(device)));
  EXPECT_TRUE(is_device_address(reinterpret_cast<uintptr_t>(device + 99)));
  auto* host = static_cast<char*>(host_address(device));
  EXPECT_NE(host, device);
  EXPECT_FALSE(is_device_address(reinterpret_cast<uintptr_t>(host)));
  const Access at_device = access_at(device);
  EXPECT_FALSE(at_device.read);
  EXPECT_FALSE(at_device.write);
  std::memcpy(host, "emulated", 9);
  EXPECT_STREQ(static_cast<char*>(host_address(device)), "emulated");
  free_device_memory(device);
  int on_the_heap = 0;
  EXPECT_FALSE(is_device_address(reinterpret_cast<uintptr_t>(&on_the_heap)));
  EXPECT_EQ(host_address(&on_the_heap), &on_the_heap);
}

TEST(DeviceMemory, EachAllocationHasPagesOfItsOwn) {
  if (!kept()) GTEST_SKIP() << "emulated MPS memory is heap memory here";
  const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  auto* a = static_cast<char*>(allocate_device_memory(1));
  auto* b = static_cast<char*>(allocate_device_memory(1));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % page, 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b) % page, 0u);
  EXPECT_NE(reinterpret_cast<uintptr_t>(a) / page, reinterpret_cast<uintptr_t>(b) / page);
  EXPECT_EQ(allocate_device_memory(0), nullptr);
  free_device_memory(a);
  free_device_memory(b);
}

TEST(DeviceMemory, FreedBlocksAreReusedAndMerged) {
  if (!kept()) GTEST_SKIP() << "emulated MPS memory is heap memory here";
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  void* a = allocate_device_memory(page);
  void* b = allocate_device_memory(page);
  void* c = allocate_device_memory(page);
  free_device_memory(a);
  EXPECT_EQ(allocate_device_memory(page), a);  // the free block, not a new one
  free_device_memory(a);
  free_device_memory(b);
  EXPECT_EQ(allocate_device_memory(2 * page), a);  // a and b, merged
  free_device_memory(a);
  free_device_memory(c);
}

TEST(DeviceMemory, AWindowOpensItsBlocksAndWhatIsAllocatedInItUntilTheLastOneCloses) {
  if (!kept()) GTEST_SKIP() << "emulated MPS memory is heap memory here";
  void* given = allocate_device_memory(10);
  void* other = allocate_device_memory(10);
  void* made = nullptr;
  {
    DeviceMemoryWindow window({given});
    EXPECT_TRUE(access_at(given).read);
    EXPECT_TRUE(access_at(given).write);
    EXPECT_FALSE(access_at(other).read);  // not the window's
    {
      DeviceMemoryWindow inner({other});
      made = allocate_device_memory(10);
    }
    EXPECT_TRUE(access_at(given).read);  // the outer window is still open
    EXPECT_TRUE(access_at(other).read);
    EXPECT_TRUE(access_at(made).write);
  }
  for (void* p : {given, other, made}) {
    EXPECT_FALSE(access_at(p).read);
    EXPECT_FALSE(access_at(p).write);
  }
  // A window a fault abandoned is closed all the same.
  new DeviceMemoryWindow({given});
  EXPECT_TRUE(access_at(given).read);
  close_abandoned_windows();
  EXPECT_FALSE(access_at(given).read);
  for (void* p : {given, other, made}) free_device_memory(p);
}

}  // namespace
}  // namespace mps_audit::emu
