// The native recorder: see recorder.h.
//
// Note [Recording at the dispatcher]
// python/mps_audit_record.py's recorder is a TorchDispatchMode: every ATen call goes through Python, where it is
// keyed, counted and given its site by walking the Python stack, 55-60 µs a call; and in torch 1.13 a dispatch mode
// changes what some programs do (torch.Tensor(ndarray) raises under one). This library observes the dispatcher instead,
// with a global RecordFunction callback, as PyTorch's profiler does: it sees every call's inputs as IValues before the
// operator runs, in C++, and changes nothing of what runs. It keeps what the Python recorder keeps:
// - which calls: the outermost call that is not a decomposition. A CompositeImplicitAutograd operator without a CPU
//   kernel (linear, matmul, dropout) is decomposed before it reaches a backend, as under a dispatch mode, so its calls
//   are recorded instead; any call made inside a recorded one (a kernel's own at::empty) is not. Calls made on
//   intra-op worker threads (at::parallel_for) are inside some call of the thread that started them, and are not
//   recorded either. autograd's backward functions are no calls: the calls they make are, in the backward phase;
// - each distinct call once (operator, tensor shapes, dtypes and strides, other arguments' values), keyed by a compact
//   byte string of those, with its arguments encoded as the Python recorder encodes them (small tensors with their
//   values, taken before the operator can write them; bigger ones by shape, strides, dtype and range), its count, time,
//   and bytes in and out;
// - where: the Python site and phase (loss, optimizer: from the Python stack) are asked of Python only when a call is
//   seen in a new context (a test's phase, the backward pass or not), and again at its 2nd, 4th, 8th, ... call there;
//   the calls in between count at the site last asked. So a call made at two lines of one test is attributed to each
//   at least once, and the Python stack is walked a few times per distinct call and test, not per call. Python is
//   called with no lock of the recorder's held: a thread holding the GIL may be waiting for it.
//
// Note [Calls inside a recorded call]
// The calls a recorded call makes (a kernel's at::empty, a composite's parts) are not recorded, yet with a callback
// that needs inputs the dispatcher boxes each one's arguments and builds its RecordFunction before the callback can
// say so. So while a recorded call runs, RecordFunction is turned off in its thread (at::enableRecordFunction, which
// intra-op threads inherit with the thread-local state) and on again at its end; not where the thread has callbacks
// of its own (the profiler's), whose inner events stay as they were.
#include "recorder/recorder.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <ATen/Parallel.h>
#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/record_function.h>
#include <c10/core/DefaultDtype.h>
#include <torch/csrc/jit/serialization/pickle.h>
#include <nlohmann/json.hpp>

#include "common/torch_compat.h"
#include "recorder/call_values.h"

namespace {

using mps_audit::recorder::Dict;
using mps_audit::recorder::Drop;
using mps_audit::recorder::dtype_label;
using mps_audit::recorder::encode;
using mps_audit::recorder::first_dtype;
using mps_audit::recorder::key_of;
using mps_audit::recorder::List;
using mps_audit::recorder::new_dict;
using mps_audit::recorder::new_list;
using mps_audit::recorder::tensor_bytes;

std::string g_error;  // mpsa_error()

// --- one operator, as the recorder knows it ------------------------------------------------------------------------

struct OpInfo {
  std::string name;                // "aten::add.Tensor"
  bool op = false;                 // a dispatcher operator; else a scope of the profiler's ("autograd::engine::...")
  bool aten = false;               // only aten operators are kept (profiler::_record_function_enter is not)
  bool decomposed = false;         // a CompositeImplicitAutograd operator without a CPU kernel: its calls are recorded
  std::vector<std::string> args;   // the schema's argument names
  std::vector<std::string> types;  // and their types ("Tensor", "ScalarType?", "int[]")
};

// --- one distinct call ---------------------------------------------------------------------------------------------

using Counts = std::map<std::string, int64_t>;

struct Call {
  std::string op, dtype;
  Dict args = new_dict();
  int64_t count = 0, in_bytes = 0;
  // Added as calls end, without the recorder's lock: a call's end needs no other of its state.
  std::atomic<int64_t> nanoseconds{0}, out_bytes{-1};
  Counts phases;
  std::map<std::string, Counts> sites;                         // site -> phase -> calls
  std::map<std::string, std::map<std::string, Counts>> tests;  // test -> when -> site -> calls
  // Where its calls count now, in and out of autograd's backward pass: the context they were last asked for, how
  // often since, and the counters of the site and phase Python answered.
  struct Where {
    int context = -2;
    int64_t calls = 0;
    int64_t *phase = nullptr, *site = nullptr, *test = nullptr;
  };
  Where where[2];
  bool sent = false;     // in a delta already
  bool touched = false;  // counted since the last delta
};

// --- the recording -------------------------------------------------------------------------------------------------

struct Recording {
  std::mutex mutex;
  bool suite = false;
  int64_t max_numel = 4096;
  mpsa_site_fn site_fn = nullptr;
  at::CallbackHandle handle = at::INVALID_CALLBACK_HANDLE;
  std::unordered_map<const char*, OpInfo> ops;  // by RecordFunction::name(), the schema's own string
  // The operators last looked up, by their name's address (Note [The operator of a call]).
  struct OpSlot {
    const char* name = nullptr;
    const OpInfo* info = nullptr;
  };
  std::array<OpSlot, 1024> recent_ops{};
  std::unordered_map<std::string, size_t> index;
  std::vector<std::unique_ptr<Call>> calls;
  std::vector<std::pair<std::string, std::string>> contexts;  // (test, when)
  int context = -1;
  int64_t total = 0;
  Counts dropped;
  std::map<std::string, std::string> sources, new_sources;
};

Recording& rec() {
  static Recording* r = new Recording();  // never destroyed: callbacks may run while the process ends
  return *r;
}

// What the current thread is doing, for the callbacks.
struct Frame {
  Call* call = nullptr;   // the call recorded here, or null
  bool blocks = false;    // calls inside it are not recorded: it was recorded, or dropped
  bool silenced = false;  // RecordFunction turned off in this thread for its inner calls
  std::chrono::steady_clock::time_point start;
};
struct ThreadState {
  std::vector<Frame> frames;
  int blocking = 0;   // frames that block
  int backward = 0;   // backward functions running
  bool busy = false;  // the recorder's own work (encoding, asking Python)
  std::string key;
  std::string phase, site, code;  // mpsa_answer()'s
};
// One thread_local, reached once a callback: each is a call into the loader from a shared library.
thread_local ThreadState t_state;

// Note [The operator of a call]
// Every callback asks what operator it is in. An operator's RecordFunction is named by its schema's own string, which
// lives as long as the operator, so its address names it: OpInfo is kept by that address, and a small direct-mapped
// table of the ones last looked up answers nearly every call from memory the callbacks keep warm (a hash table of big
// nodes allocated among the program's own memory cost a cache miss or two a call). A scope that is no operator
// (autograd's "autograd::engine::evaluate_function: MulBackward0", a name given in Python) is named by a string of its
// own RecordFunction, a new address nearly every time: it is kept nowhere (once, the recording grew by an entry a
// backward node) and answered by one OpInfo for all of them. Both tables are read and written under the lock.
const OpInfo& op_info(const at::RecordFunction& fn) {
  static const OpInfo kScope;
  Recording& r = rec();
  const char* name = fn.name();
  auto& slot = r.recent_ops[(reinterpret_cast<uintptr_t>(name) >> 3) % r.recent_ops.size()];
  if (slot.name == name) return *slot.info;
  const OpInfo* found = nullptr;
  if (auto it = r.ops.find(name); it != r.ops.end()) {
    found = &it->second;
  } else if (const auto op_name = fn.operator_name()) {
    OpInfo info;
    info.op = true;
    info.name = op_name->name + (op_name->overload_name.empty() ? "" : "." + op_name->overload_name);
    info.aten = op_name->name.rfind("aten::", 0) == 0;
    if (const auto handle = c10::Dispatcher::singleton().findOp(*op_name); handle && handle->hasSchema()) {
      info.decomposed = handle->hasKernelForDispatchKey(c10::DispatchKey::CompositeImplicitAutograd) &&
                        !handle->hasKernelForDispatchKey(c10::DispatchKey::CPU);
      for (const auto& a : handle->schema().arguments()) {
        info.args.push_back(a.name());
        info.types.push_back(a.real_type()->str());
      }
    }
    found = &r.ops.emplace(name, std::move(info)).first->second;
  } else {
    return kScope;
  }
  slot = {name, found};
  return *found;
}

// A new distinct call's entry; nullopt, with the reason counted, when it cannot be kept.
std::unique_ptr<Call> new_call(const OpInfo& op, c10::ArrayRef<const c10::IValue> inputs, int64_t max_numel) {
  auto call = std::make_unique<Call>();
  call->op = op.name;
  std::optional<std::string> dtype;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (i >= op.args.size()) throw Drop{"more arguments than the schema"};
    call->args.insert(op.args[i], encode(inputs[i], op.types[i], max_numel));
    call->in_bytes += tensor_bytes(inputs[i]);
    if (!dtype) dtype = first_dtype(inputs[i]);
  }
  if (!dtype) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (op.args[i] == "dtype" && inputs[i].isInt())
        dtype = dtype_label(static_cast<c10::ScalarType>(inputs[i].toInt()));
    }
  }
  call->dtype = dtype.value_or(*dtype_label(c10::typeMetaToScalarType(c10::get_default_dtype())));
  return call;
}

// --- where a call counts (Note [Recording at the dispatcher]) -------------------------------------------------------

bool power_of_two(int64_t n) {
  return n > 0 && (n & (n - 1)) == 0;
}

// Points the call's counters at the site and phase Python answered, in the current context.
void count_at(Recording& r, Call& c, Call::Where& w, const std::string& phase, const std::string& site) {
  w.context = r.context;
  w.phase = &c.phases[phase];
  w.site = &c.sites[site][phase];
  w.test = nullptr;
  if (r.context >= 0) {
    const auto& [test, when] = r.contexts[static_cast<size_t>(r.context)];
    w.test = &c.tests[test][when][site];
  }
}

// --- the callbacks -------------------------------------------------------------------------------------------------

std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction& fn) {
  ThreadState& t = t_state;
  if (fn.scope() == at::RecordScope::BACKWARD_FUNCTION) {
    ++t.backward;
    return nullptr;
  }
  t.frames.push_back(Frame{});
  if (t.busy || t.blocking > 0 || at::in_parallel_region()) return nullptr;
  // Its frame by position: the recorder's own work below (encoding, Python) pushes frames of its own.
  const size_t me = t.frames.size() - 1;
  Recording& r = rec();
  std::unique_lock<std::mutex> lock(r.mutex);
  const OpInfo& op = op_info(fn);
  // A decomposition, or a scope that is no operator (autograd's engine evaluating a node): the calls inside it are.
  if (!op.op || op.decomposed) return nullptr;
  // Any other operator's inner calls are its own, as under a dispatch mode: the profiler's record_function too, which
  // is no ATen operator and is not kept.
  t.frames[me].blocks = true;
  ++t.blocking;
  // Note [Calls inside a recorded call]: the dispatcher need not box them for the recorder.
  if (at::isRecordFunctionEnabled() && !at::hasThreadLocalCallbacks()) {
    at::enableRecordFunction(false);
    t.frames[me].silenced = true;
  }
  if (!op.aten) return nullptr;
  if (r.suite && r.context < 0) return nullptr;
  ++r.total;
  const auto inputs = fn.inputs();
  t.key.assign(op.name);
  t.key += '\0';
  for (const auto& v : inputs) key_of(v, t.key);
  auto found = r.index.find(t.key);
  Call* call = nullptr;
  if (found == r.index.end()) {
    t.busy = true;
    try {
      // The copies it makes of the arguments are the recorder's: no profiler of the program's sees them.
      at::DisableRecordFunctionGuard unseen;
      auto made = new_call(op, inputs, r.max_numel);
      r.index.emplace(t.key, r.calls.size());
      r.calls.push_back(std::move(made));
      call = r.calls.back().get();
    } catch (const Drop& d) {
      ++r.dropped[op.name + ": " + d.why];
    } catch (const std::exception& e) {  // recording must never change what the program does
      ++r.dropped[op.name + ": recorder error"];
    }
    t.busy = false;
    if (!call) return nullptr;
  } else {
    call = r.calls[found->second].get();
  }
  // Where it counts: ask Python in a new context, and now and then in the same one.
  const bool backward = t.backward > 0;
  Call::Where& w = call->where[backward ? 1 : 0];
  const bool fresh = w.context != r.context;
  if (fresh) w.calls = 0;
  ++w.calls;
  if ((fresh || power_of_two(w.calls)) && r.site_fn) {
    const int context = r.context;
    const mpsa_site_fn ask = r.site_fn;
    lock.unlock();
    t.busy = true;
    t.phase.clear();
    t.site.clear();
    t.code.clear();
    ask(backward ? 1 : 0);
    t.busy = false;
    lock.lock();
    const std::string phase = backward ? "backward" : t.phase.empty() ? "forward" : t.phase;
    const std::string site = t.site.empty() ? "(torch)" : t.site;
    if (!t.code.empty() && !r.sources.count(site)) {
      r.sources[site] = t.code;
      r.new_sources[site] = t.code;
    }
    if (r.context == context) count_at(r, *call, w, phase, site);
  }
  if (w.context != r.context) count_at(r, *call, w, backward ? "backward" : "forward", "(torch)");
  ++call->count;
  ++*w.phase;
  ++*w.site;
  if (w.test) ++*w.test;
  call->touched = true;
  t.frames[me].call = call;
  t.frames[me].start = std::chrono::steady_clock::now();
  return nullptr;
}

void on_end(const at::RecordFunction& fn, at::ObserverContext*) {
  ThreadState& t = t_state;
  if (fn.scope() == at::RecordScope::BACKWARD_FUNCTION) {
    --t.backward;
    return;
  }
  if (t.frames.empty()) return;  // began before the recorder did
  const Frame frame = t.frames.back();
  t.frames.pop_back();
  if (frame.blocks) --t.blocking;
  if (frame.silenced) at::enableRecordFunction(true);
  if (!frame.call) return;
  frame.call->nanoseconds.fetch_add(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - frame.start).count(),
      std::memory_order_relaxed);
  if (frame.call->out_bytes.load(std::memory_order_relaxed) < 0) {
    int64_t n = 0;
    for (const auto& v : fn.outputs()) n += tensor_bytes(v);
    frame.call->out_bytes.store(n, std::memory_order_relaxed);
  }
}

// --- writing ---------------------------------------------------------------------------------------------------

c10::IValue counts_value(const Counts& c) {
  Dict d = new_dict();
  for (const auto& [k, n] : c) d.insert(k, n);
  return d;
}

template <typename Inner>
c10::IValue nested(const std::map<std::string, Inner>& m) {
  Dict d = new_dict();
  for (const auto& [k, v] : m) {
    if constexpr (std::is_same_v<Inner, Counts>) {
      d.insert(k, counts_value(v));
    } else {
      d.insert(k, nested(v));
    }
  }
  return d;
}

c10::IValue call_value(const Call& c, bool with_tests) {
  Dict d = new_dict();
  d.insert("op", c.op);
  d.insert("dtype", c.dtype);
  d.insert("args", c.args);
  d.insert("count", c.count);
  d.insert("seconds", 1e-9 * static_cast<double>(c.nanoseconds.load()));
  d.insert("in_bytes", c.in_bytes);
  d.insert("out_bytes", c.out_bytes.load());
  d.insert("phases", counts_value(c.phases));
  d.insert("sites", nested(c.sites));
  if (with_tests && !c.tests.empty()) d.insert("tests", nested(c.tests));
  return d;
}

int fail(const std::string& why) {
  g_error = why;
  return -1;
}

int give(const std::vector<char>& bytes, char** out, size_t* size) {
  *out = static_cast<char*>(std::malloc(bytes.size()));
  if (!*out) return fail("out of memory");
  std::memcpy(*out, bytes.data(), bytes.size());
  *size = bytes.size();
  return 0;
}

}  // namespace

extern "C" {

const char* mpsa_torch_version() {
  return mps_audit::compat::kTorchVersion;
}

const char* mpsa_error() {
  return g_error.c_str();
}

int mpsa_answer(const char* phase, const char* site, const char* code) {
  ThreadState& t = t_state;
  t.phase = phase ? phase : "";
  t.site = site ? site : "";
  t.code = code ? code : "";
  return 0;
}

int mpsa_start(int suite, int64_t max_numel, mpsa_site_fn site) {
  Recording& r = rec();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (r.handle != at::INVALID_CALLBACK_HANDLE) return fail("already recording");
  r.suite = suite != 0;
  r.max_numel = max_numel;
  r.site_fn = site;
  r.handle = at::addGlobalCallback(at::RecordFunctionCallback(on_start, on_end)
                                       .needsInputs(true)
                                       .needsOutputs(true)
                                       .scopes({at::RecordScope::FUNCTION, at::RecordScope::BACKWARD_FUNCTION}));
  return 0;
}

int mpsa_stop() {
  Recording& r = rec();
  at::CallbackHandle handle = at::INVALID_CALLBACK_HANDLE;
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    std::swap(handle, r.handle);
    r.site_fn = nullptr;
  }
  if (handle != at::INVALID_CALLBACK_HANDLE) at::removeCallback(handle);
  return 0;
}

int mpsa_reset() {
  Recording& r = rec();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.index.clear();
  r.calls.clear();
  r.contexts.clear();
  r.context = -1;
  r.total = 0;
  r.dropped.clear();
  r.sources.clear();
  r.new_sources.clear();
  return 0;
}

int mpsa_set_context(const char* test, const char* when) {
  Recording& r = rec();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (!test) {
    r.context = -1;
    return 0;
  }
  r.contexts.emplace_back(test, when ? when : "call");
  r.context = static_cast<int>(r.contexts.size()) - 1;
  return 0;
}

int64_t mpsa_total() {
  std::lock_guard<std::mutex> lock(rec().mutex);
  return rec().total;
}

int64_t mpsa_distinct() {
  std::lock_guard<std::mutex> lock(rec().mutex);
  return static_cast<int64_t>(rec().calls.size());
}

int mpsa_delta(const char* test, char** out, size_t* size) {
  ThreadState& t = t_state;
  Recording& r = rec();
  std::lock_guard<std::mutex> lock(r.mutex);
  t.busy = true;
  try {
    List fresh = new_list(), updates = new_list();
    for (size_t i = 0; i < r.calls.size(); ++i) {
      Call& c = *r.calls[i];
      if (!c.sent) {
        List pair = new_list();
        pair.push_back(static_cast<int64_t>(i));
        pair.push_back(call_value(c, false));
        fresh.push_back(pair);
        c.sent = true;
      }
      if (!c.touched) continue;
      c.touched = false;
      List u = new_list();
      u.push_back(static_cast<int64_t>(i));
      u.push_back(c.count);
      u.push_back(1e-9 * static_cast<double>(c.nanoseconds.load()));
      u.push_back(c.out_bytes.load());
      u.push_back(counts_value(c.phases));
      u.push_back(nested(c.sites));
      const auto mine = test ? c.tests.find(test) : c.tests.end();
      u.push_back(mine == c.tests.end() ? c10::IValue(new_dict()) : nested(mine->second));
      updates.push_back(u);
    }
    Dict d = new_dict();
    d.insert("new", fresh);
    d.insert("updates", updates);
    Dict sources = new_dict();
    for (const auto& [site, code] : r.new_sources) sources.insert(site, code);
    r.new_sources.clear();
    d.insert("sources", sources);
    d.insert("total", r.total);
    d.insert("dropped", counts_value(r.dropped));
    const int rc = give(torch::jit::pickle_save(d), out, size);
    t.busy = false;
    return rc;
  } catch (const std::exception& e) {
    t.busy = false;
    return fail(e.what());
  }
}

int mpsa_save(const char* path, const char* program_json, const char* error, double seconds) {
  ThreadState& t = t_state;
  Recording& r = rec();
  std::lock_guard<std::mutex> lock(r.mutex);
  t.busy = true;
  try {
    Dict d = new_dict();
    d.insert("format", std::string("mps-audit-calls/1"));
    d.insert("torch", std::string(mps_audit::compat::kTorchVersion));
    List program = new_list();
    for (const auto& word : nlohmann::json::parse(program_json ? program_json : "[]")) {
      program.push_back(word.get<std::string>());
    }
    d.insert("program", program);
    d.insert("complete", !error || !*error);
    d.insert("error", std::string(error ? error : ""));
    d.insert("seconds", seconds);
    d.insert("total", r.total);
    d.insert("max_numel", r.max_numel);
    d.insert("dropped", counts_value(r.dropped));
    Dict sources = new_dict();
    for (const auto& [site, code] : r.sources) sources.insert(site, code);
    d.insert("sources", sources);
    List calls = new_list();
    for (const auto& c : r.calls) calls.push_back(call_value(*c, true));
    d.insert("calls", calls);
    const std::vector<char> bytes = torch::jit::pickle_save(d);
    FILE* f = std::fopen(path, "wb");
    if (!f) {
      t.busy = false;
      return fail(std::string("cannot write ") + path + ": " + std::strerror(errno));
    }
    const bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
    std::fclose(f);
    t.busy = false;
    return ok ? 0 : fail(std::string("cannot write ") + path);
  } catch (const std::exception& e) {
    t.busy = false;
    return fail(e.what());
  }
}

void mpsa_free(char* bytes) {
  std::free(bytes);
}
}
