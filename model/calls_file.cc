// Reads what `model --calls` reports of a calls file; the arguments are the prober's to read.
//
// Note [A test suite's calls]
// `pytest --mps-audit` (python/mps_audit.py) records a whole test suite into one calls file, in the format a
// program's recording has: each distinct call once, however many tests made it, so that the replay runs it once.
// Beside its sites, each call then carries "tests": the pytest node id of every test that made it -> the phase of
// that test (setup, call, teardown: fixtures apart from the test's body) -> the line of code -> how many calls.
// A program's recording has no "tests"; a reader that predates them ignores the field, as it ignores any other.
#include "model/calls_file.h"

#include <algorithm>

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/ivalue.h>
#include <fmt/format.h>
#include <torch/csrc/jit/serialization/pickle.h>

#include "common/diagnostics.h"
#include "common/output_file.h"
#include "common/torch_compat.h"
#include "probe/device_choices.h"
#include "probe/recorded_samples.h"  // kCallsFormat

namespace mps_audit {
namespace {

using Dict = c10::impl::GenericDict;

const c10::IValue* field(const Dict& d, const char* key) {
  const auto it = d.find(key);
  return it == d.end() ? nullptr : &it->value();
}

std::string text(const Dict& d, const char* key) {
  const c10::IValue* v = field(d, key);
  return v && v->isString() ? v->toStringRef() : "";
}

double number(const Dict& d, const char* key) {
  const c10::IValue* v = field(d, key);
  return v && (v->isDouble() || v->isInt()) ? v->toScalar().toDouble() : 0;
}

std::map<std::string, int64_t> counts(const c10::IValue* v) {
  std::map<std::string, int64_t> out;
  if (!v || !v->isGenericDict()) return out;
  for (const auto& e : v->toGenericDict()) {
    if (e.key().isString() && e.value().isInt()) out[e.key().toStringRef()] = e.value().toInt();
  }
  return out;
}

std::map<std::string, int64_t> counts(const Dict& d, const char* key) {
  return counts(field(d, key));
}

// A call's "tests": test -> phase of the test -> site -> calls (Note [A test suite's calls]).
void read_tests(const c10::IValue& v, RecordedCall& call, const std::string& path) {
  const auto bad = [&] {
    return UserError(fmt::format("call {}: its tests are not test -> setup|call|teardown -> site -> calls", call.index),
                     {path});
  };
  if (!v.isGenericDict()) throw bad();
  for (const auto& test : v.toGenericDict()) {
    if (!test.key().isString() || !test.value().isGenericDict()) throw bad();
    auto& phases = call.tests[test.key().toStringRef()];
    for (const auto& when : test.value().toGenericDict()) {
      if (!when.key().isString() || !when.value().isGenericDict()) throw bad();
      phases[when.key().toStringRef()] = counts(&when.value());
    }
  }
}

}  // namespace

CallsFile load_calls_file(const std::string& path) {
  const std::string bytes_text = read_file(path);
  c10::IValue root;
  try {
    root = torch::jit::pickle_load(std::vector<char>(bytes_text.begin(), bytes_text.end()));
  } catch (const std::exception& e) {
    const std::string why = e.what();
    throw UserError(fmt::format("not a calls file (mps-audit record -o FILE): {}",
                                why.substr(0, std::min<size_t>(why.find('\n'), 160))),
                    {path});
  }
  if (!root.isGenericDict() || text(root.toGenericDict(), "format") != kCallsFormat) {
    throw UserError(fmt::format("not a calls file in format {} (mps-audit record -o FILE)", kCallsFormat), {path});
  }
  const Dict top = root.toGenericDict();
  CallsFile f;
  f.path = path;
  f.torch = text(top, "torch");
  if (const c10::IValue* program = field(top, "program"); program && program->isList()) {
    for (const c10::IValue& a : program->toListRef()) {
      if (a.isString()) f.program.push_back(a.toStringRef());
    }
  }
  const c10::IValue* complete = field(top, "complete");
  f.complete = !complete || !complete->isBool() || complete->toBool();
  f.error = text(top, "error");
  f.seconds = number(top, "seconds");
  f.total = static_cast<int64_t>(number(top, "total"));
  f.dropped = counts(top, "dropped");
  if (const c10::IValue* sources = field(top, "sources"); sources && sources->isGenericDict()) {
    for (const auto& e : sources->toGenericDict()) {
      if (e.key().isString() && e.value().isString()) f.sources[e.key().toStringRef()] = e.value().toStringRef();
    }
  }
  const c10::IValue* calls = field(top, "calls");
  if (!calls || !calls->isList()) throw UserError("a calls file without its calls", {path});
  auto& dispatcher = c10::Dispatcher::singleton();
  for (const c10::IValue& v : calls->toListRef()) {
    const size_t index = f.calls.size();
    if (!v.isGenericDict()) throw UserError(fmt::format("call {} is not a call", index), {path});
    const Dict c = v.toGenericDict();
    RecordedCall call;
    call.index = index;
    call.op = replayed_operator(text(c, "op"));
    if (call.op != text(c, "op")) call.recorded_as = text(c, "op");
    call.dtype = text(c, "dtype");
    if (call.op.empty() || call.dtype.empty()) {
      throw UserError(fmt::format("call {} has no operator or dtype", index), {path});
    }
    const size_t colons = call.op.find("::"), dot = call.op.find('.', colons == std::string::npos ? 0 : colons);
    const auto handle =
        dispatcher.findOp({call.op.substr(0, dot), dot == std::string::npos ? "" : call.op.substr(dot + 1)});
    if (!handle || !handle->hasSchema()) {
      throw UserError(fmt::format("call {} is of {}, an operator the linked libtorch {} does not have (recorded with "
                                  "torch {}: replay it with a build against that release)",
                                  index, call.op, compat::kTorchVersion, f.torch.empty() ? "?" : f.torch),
                      {path});
    }
    call.count = static_cast<int64_t>(number(c, "count"));
    call.seconds = number(c, "seconds");
    call.in_bytes = static_cast<int64_t>(number(c, "in_bytes"));
    call.out_bytes = std::max<int64_t>(0, static_cast<int64_t>(number(c, "out_bytes")));
    call.phases = counts(c, "phases");
    if (const c10::IValue* sites = field(c, "sites"); sites && sites->isGenericDict()) {
      for (const auto& e : sites->toGenericDict()) {
        if (!e.key().isString() || !e.value().isGenericDict()) {
          throw UserError(fmt::format("call {}: its sites are not site -> phase -> calls", index), {path});
        }
        auto& at = call.sites[e.key().toStringRef()];
        for (const auto& p : e.value().toGenericDict()) {
          if (p.key().isString() && p.value().isInt()) at[p.key().toStringRef()] = p.value().toInt();
        }
      }
    }
    if (const c10::IValue* tests = field(c, "tests")) read_tests(*tests, call, path);
    f.calls.push_back(std::move(call));
  }
  return f;
}

}  // namespace mps_audit
