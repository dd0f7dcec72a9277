// Note [Emulated MPS memory]
// On a Mac, an MPS tensor's data pointer is a Metal buffer's handle, not its bytes: code on the CPU that takes it for
// the data (a CPU kernel that PyTorch registers for every backend, CompositeExplicitAutograd's
// _grid_sampler_2d_cpu_fallback or range.out_, a hand-written loop over data_ptr()) reads or writes something else,
// and the process usually dies of it, as it dies of reading a CUDA tensor's memory. Emulated MPS memory is host
// memory, which any code could read; so, on Linux, tensors never get an address at which it can be read.
//
// The memory is one memfd, mapped twice when the emulator is activated: its device view, whose addresses tensors
// hold (storage data pointers), has no access at all, and its host view, at other addresses, is readable and
// writable. The emulator's kernels compute through the host view: cpu_view() (emulated_device.cc) gives a CPU tensor
// over the host addresses of the same bytes, and every native kernel, copy and fill of the emulator reads and writes
// through such views. Everything else sees the device view, and faults on the first byte it reads or writes. The
// fault is caught where the prober arms for it (Note [Caught faults] in probe/caught_faults.cc), which asks
// is_device_address() whether the address is emulated MPS memory, and the record names the argument it belongs to:
// "signal 11 (Segmentation fault): code on the CPU read argument 'grid', which is in mps:0 memory". Nothing is
// listed: which operators fault is observed, as on CUDA.
//
// Nothing per kernel is paid for this: the two views are set up once (a memfd of 1 TiB, less where the address space
// will not take it, whose pages exist only once touched), and each allocation is whole pages of it, from free lists
// of this file's own (best fit, neighbours merged), so that no tensor's bytes share a page with another's. Opening
// and closing the pages around each kernel instead (mprotect) would cost two system calls per storage per kernel,
// about 5 us each on this project's 2-core virtual machine, where a probe of the default audit takes 0.15 ms on
// average: a dozen calls a probe, a third more time. Freed blocks of 32 MiB or more give their pages back to the
// system.
//
// The exceptions are CPU kernels the emulator runs on MPS tensors themselves because they only change metadata
// (Note [MPS emulation]), and of those, the few that may move a storage's bytes: resize_ and set_ (and what calls
// them) copy a storage that grows into a new allocation with memcpy at the device addresses. Those run inside a
// DeviceMemoryWindow: their arguments' blocks, and every block allocated until the window closes, are opened at
// their device addresses for the call and closed after it (windows nest, on any thread: the last one closed closes
// what all of them opened). A fault caught inside a window abandons it; close_abandoned_windows() closes what it
// held.
//
// The mappings are neither inherited by a forked child (which would share the bytes: a fork's writes would be the
// parent's) nor dumped into a core file. Where the two views cannot be set up (memfd_create refused, no address
// space for them), and on other systems than Linux, the memory is ordinary heap memory that any code on the CPU can
// read, as it was before: then code that reads MPS memory on the CPU passes, and only the touch fault (emu/faults.h)
// makes a tensor's memory unreadable, which needs whole pages of its own while one is planned.
#include "emu/device_memory.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <new>
#include <set>
#include <unordered_map>

#ifdef __APPLE__
#include <malloc/malloc.h>
#else
#include <malloc.h>
#endif
#include <sys/mman.h>
#include <unistd.h>
#ifdef __linux__
#include <fcntl.h>
#endif

namespace mps_audit::emu {
namespace {

size_t page() {
  static const size_t size = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  return size;
}

// --- heap memory, where the two views are not set up ---------------------------------------------------------------

bool g_whole_pages = false;

size_t usable_size(void* p) {
#ifdef __APPLE__
  return malloc_size(p);
#else
  return malloc_usable_size(p);
#endif
}

void* heap_allocate(size_t bytes) {
  const size_t align = g_whole_pages ? page() : 64;
  void* p = std::aligned_alloc(align, (bytes + align - 1) / align * align);
  if (!p) throw std::bad_alloc();
  return p;
}

void heap_free(void* p) {
  // Pages a touch fault made unreadable become the heap's again.
  if (g_whole_pages) ::mprotect(p, usable_size(p) / page() * page(), PROT_READ | PROT_WRITE);
  std::free(p);
}

// --- the two views ---------------------------------------------------------------------------------------------------

#ifdef __linux__
size_t pages_for(size_t bytes) {
  return (bytes + page() - 1) / page();
}

// A freed block at least this large gives its pages back to the system.
constexpr size_t kGiveBackBytes = size_t{32} << 20;

struct Arena {
  int fd = -1;
  char* device = nullptr;  // the view tensors address: no access, but in windows
  char* host = nullptr;    // the view the emulator's kernels compute through
  size_t pages = 0;
  std::mutex mutex;                             // guards what follows
  size_t top = 0;                               // the pages below it have been handed out
  std::map<size_t, size_t> free_at;             // first page -> pages, of the free blocks below top
  std::set<std::pair<size_t, size_t>> by_size;  // (pages, first page) of the same blocks
  std::unordered_map<size_t, size_t> live;      // first page -> pages, of the allocations
  std::vector<size_t> opened;                   // the allocations open in the current windows
  int windows = 0;
};

// Set once by init_device_memory(), before the first allocation, and kept for the process's life.
Arena* g_arena = nullptr;

Arena* map_arena() {
  const int fd = ::memfd_create("mps-audit emulated MPS memory", MFD_CLOEXEC);
  if (fd < 0) return nullptr;
  for (size_t bytes = size_t{1} << 40; bytes >= size_t{1} << 32; bytes /= 2) {
    if (::ftruncate(fd, static_cast<off_t>(bytes)) != 0) continue;
    void* device = ::mmap(nullptr, bytes, PROT_NONE, MAP_SHARED | MAP_NORESERVE, fd, 0);
    if (device == MAP_FAILED) continue;
    void* host = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
    if (host == MAP_FAILED) {
      ::munmap(device, bytes);
      continue;
    }
    for (void* view : {device, host}) {
      ::madvise(view, bytes, MADV_DONTFORK);
      ::madvise(view, bytes, MADV_DONTDUMP);
    }
    auto* arena = new Arena();
    arena->fd = fd;
    arena->device = static_cast<char*>(device);
    arena->host = static_cast<char*>(host);
    arena->pages = bytes / page();
    return arena;
  }
  ::close(fd);
  return nullptr;
}

bool in_arena(const void* p) {
  const auto* c = static_cast<const char*>(p);
  return g_arena && c >= g_arena->device && c < g_arena->device + g_arena->pages * page();
}

size_t first_page(const void* p) {
  return static_cast<size_t>(static_cast<const char*>(p) - g_arena->device) / page();
}

// With the arena's mutex held, from here on.

void protect(Arena& a, size_t first, size_t pages, int protection) {
  ::mprotect(a.device + first * page(), pages * page(), protection);
}

void open_block(Arena& a, size_t first, size_t pages) {
  protect(a, first, pages, PROT_READ | PROT_WRITE);
  a.opened.push_back(first);
}

void close_all(Arena& a) {
  for (size_t first : a.opened) {
    if (auto it = a.live.find(first); it != a.live.end()) protect(a, first, it->second, PROT_NONE);
  }
  a.opened.clear();
}

void add_free(Arena& a, size_t first, size_t pages) {
  a.free_at.emplace(first, pages);
  a.by_size.emplace(pages, first);
}

void remove_free(Arena& a, std::map<size_t, size_t>::iterator it) {
  a.by_size.erase({it->second, it->first});
  a.free_at.erase(it);
}

size_t take_pages(Arena& a, size_t pages) {
  if (auto it = a.by_size.lower_bound({pages, 0}); it != a.by_size.end()) {
    const auto [size, first] = *it;
    remove_free(a, a.free_at.find(first));
    if (size > pages) add_free(a, first + pages, size - pages);
    return first;
  }
  if (a.pages - a.top < pages) throw std::bad_alloc();
  a.top += pages;
  return a.top - pages;
}

// Returns a block to the free lists, merged with its free neighbours; a block that ends at the top lowers it.
void give_back(Arena& a, size_t first, size_t pages) {
  if (auto next = a.free_at.find(first + pages); next != a.free_at.end()) {
    pages += next->second;
    remove_free(a, next);
  }
  if (auto next = a.free_at.lower_bound(first); next != a.free_at.begin()) {
    auto previous = std::prev(next);
    if (previous->first + previous->second == first) {
      first = previous->first;
      pages += previous->second;
      remove_free(a, previous);
    }
  }
  if (first + pages == a.top) {
    a.top = first;
  } else {
    add_free(a, first, pages);
  }
}
#endif

}  // namespace

bool init_device_memory(bool whole_pages) {
  // Once a process: a child forked from a process that set it up has no arena (MADV_DONTFORK), and maps its own.
  static pid_t mapped_in = 0;
  if (mapped_in != ::getpid()) {
    g_whole_pages = whole_pages;
#ifdef __linux__
    g_arena = map_arena();
#endif
    mapped_in = ::getpid();
  }
  return device_memory_kept_from_cpu();
}

bool device_memory_kept_from_cpu() {
#ifdef __linux__
  return g_arena != nullptr;
#else
  return false;
#endif
}

void* allocate_device_memory(size_t bytes) {
  if (bytes == 0) return nullptr;
#ifdef __linux__
  if (g_arena) {
    Arena& a = *g_arena;
    const size_t pages = pages_for(bytes);
    std::lock_guard<std::mutex> lock(a.mutex);
    const size_t first = take_pages(a, pages);
    a.live.emplace(first, pages);
    if (a.windows > 0) open_block(a, first, pages);
    return a.device + first * page();
  }
#endif
  return heap_allocate(bytes);
}

void free_device_memory(void* p) {
  if (!p) return;
#ifdef __linux__
  if (in_arena(p)) {
    Arena& a = *g_arena;
    const size_t first = first_page(p);
    std::lock_guard<std::mutex> lock(a.mutex);
    const auto it = a.live.find(first);
    if (it == a.live.end()) return;
    const size_t pages = it->second;
    a.live.erase(it);
    if (auto o = std::find(a.opened.begin(), a.opened.end(), first); o != a.opened.end()) {
      protect(a, first, pages, PROT_NONE);  // a free block is never open
      a.opened.erase(o);
    }
    if (pages * page() >= kGiveBackBytes) {
      ::fallocate(a.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(first * page()),
                  static_cast<off_t>(pages * page()));
    }
    give_back(a, first, pages);
    return;
  }
#endif
  heap_free(p);
}

void* host_address(const void* device) {
#ifdef __linux__
  if (in_arena(device)) return g_arena->host + (static_cast<const char*>(device) - g_arena->device);
#endif
  return const_cast<void*>(device);
}

bool is_device_address(uintptr_t address) {
#ifdef __linux__
  return in_arena(reinterpret_cast<const void*>(address));
#else
  (void)address;
  return false;
#endif
}

DeviceMemoryWindow::DeviceMemoryWindow(const std::vector<const void*>& blocks) {
#ifdef __linux__
  if (!g_arena) return;
  Arena& a = *g_arena;
  std::lock_guard<std::mutex> lock(a.mutex);
  ++a.windows;
  for (const void* p : blocks) {
    if (!in_arena(p)) continue;
    const size_t first = first_page(p);
    const auto it = a.live.find(first);
    if (it != a.live.end() && std::find(a.opened.begin(), a.opened.end(), first) == a.opened.end()) {
      open_block(a, first, it->second);
    }
  }
#else
  (void)blocks;
#endif
}

DeviceMemoryWindow::~DeviceMemoryWindow() {
#ifdef __linux__
  if (!g_arena) return;
  Arena& a = *g_arena;
  std::lock_guard<std::mutex> lock(a.mutex);
  if (a.windows > 0 && --a.windows == 0) close_all(a);
#endif
}

void close_abandoned_windows() {
#ifdef __linux__
  if (!g_arena) return;
  Arena& a = *g_arena;
  std::lock_guard<std::mutex> lock(a.mutex);
  a.windows = 0;
  close_all(a);
#endif
}

}  // namespace mps_audit::emu
