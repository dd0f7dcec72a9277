// Tests of the known bugs' own calls (Note [Known bugs' own calls]): read from a ledger into the spec, made as the
// ledger says (values, a view's strides and offset), and every call of the shipped ledger run on the CPU.
#include "probe/repros.h"

#include <algorithm>
#include <map>
#include <set>

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <ATen/core/Tensor.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/diagnostics.h"
#include "common/ivalue_tensors.h"
#include "common/text.h"
#include "probe/dtypes.h"
#include "probe/inputs.h"
#include "probe/sample_traits.h"
#include "test_support.h"

namespace mps_audit {
namespace {

std::vector<std::string> all_ops() {
  std::vector<std::string> names;
  auto& d = c10::Dispatcher::singleton();
  for (const auto& name : d.getAllOpNames()) {
    if (name.name.rfind("aten::", 0) == 0) names.push_back(c10::toString(name));
  }
  return names;
}

const char* const kLedger = R"(format: mps-audit-known-bugs/2
entries:
  - id: pytorch-1
    source: https://github.com/pytorch/pytorch/issues/1
    summary: conv on a chunk() view
    kind: wrong_result
    ops: [aten::neg]
    dtypes: [float32]
    when: [storage_offset]
    fixed_in: unknown
    repro:
      op: aten::neg
      args: {self: {values: [[1, 2], [3, nan]], strides: [1, 3], offset: 2}}
  - id: pytorch-2
    source: https://github.com/pytorch/pytorch/issues/2
    summary: an operator this libtorch lacks
    kind: crash
    ops: [aten::no_such_op]
    dtypes: [all]
    when: [any]
    fixed_in: unknown
    repro: {op: aten::no_such_op, args: {self: {shape: [2]}}}
)";

TEST(Repros, AReproIsAConditionSampleMadeAsTheLedgerSays) {
  Spec spec = parse_spec("", "s.yaml", {});
  add_repros(spec, emu::KnownBugs::parse(kLedger, "ledger.yaml"), all_ops());
  ASSERT_EQ(spec.repros.size(), 1u);  // the operator this libtorch lacks is left out
  const auto op = c10::Dispatcher::singleton().findOp({"aten::neg", ""});
  ASSERT_TRUE(op);
  std::vector<ConditionOutcome> large;
  const auto made = repro_samples(*op, "aten::neg", c10::kFloat, "float32", spec, large);
  ASSERT_EQ(made.size(), 1u);
  EXPECT_TRUE(large.empty());
  EXPECT_EQ(made[0].condition, Condition::kRepro);
  EXPECT_EQ(made[0].inputs.name, "repro:pytorch-1");
  EXPECT_TRUE(made[0].inputs.keep_views);
  const at::Tensor self = made[0].inputs.args[0].toTensor();
  EXPECT_EQ(self.sizes().vec(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(self.strides().vec(), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(self.storage_offset(), 2);
  EXPECT_EQ(self[0][1].item<float>(), 2.0f);
  EXPECT_TRUE(std::isnan(self[1][1].item<float>()));
  // Only in the dtypes the entry names.
  EXPECT_TRUE(repro_samples(*op, "aten::neg", c10::kInt, "int32", spec, large).empty());
}

TEST(Repros, ACallTooLargeToRunIsCheckedOnTheMetaDevice) {
  const std::string text = std::string(kLedger) + R"(  - id: pytorch-3
    source: https://github.com/pytorch/pytorch/issues/3
    summary: over 4 GB
    kind: crash
    ops: [aten::neg]
    dtypes: [float32]
    when: [bytes_gt:4294967296]
    fixed_in: unknown
    repro: {op: aten::neg, args: {self: {shape: [65536, 32768]}}}
)";
  Spec spec = parse_spec("", "s.yaml", {});
  add_repros(spec, emu::KnownBugs::parse(text, "ledger.yaml"), all_ops());
  const auto op = c10::Dispatcher::singleton().findOp({"aten::neg", ""});
  std::vector<ConditionOutcome> large;
  const auto made = repro_samples(*op, "aten::neg", c10::kFloat, "float32", spec, large);
  EXPECT_EQ(made.size(), 1u);
  ASSERT_EQ(large.size(), 1u);
  EXPECT_EQ(large[0].sample, "repro:pytorch-3");
  EXPECT_EQ(large[0].verdict, Verdict::kSkip);
  EXPECT_EQ(large[0].traits.max_bytes, int64_t{65536} * 32768 * 4);
  EXPECT_NE(large[0].message.find("the meta device takes its shapes"), std::string::npos) << large[0].message;
}

TEST(Repros, ABadReproIsOneDiagnosticAtItsPlaceInTheLedger) {
  const std::string text = R"(format: mps-audit-known-bugs/2
entries:
  - id: pytorch-1
    source: s
    summary: s
    kind: crash
    ops: [aten::neg]
    dtypes: [float32]
    when: [any]
    fixed_in: unknown
    repro: {op: aten::neg, args: {self: {shape: [2], strides: [1, 1]}}}
)";
  Spec spec = parse_spec("", "s.yaml", {});
  try {
    add_repros(spec, emu::KnownBugs::parse(text, "ledger.yaml"), all_ops());
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.where().file, "ledger.yaml");
    EXPECT_EQ(e.where().line, 11);
    EXPECT_NE(e.message().find("2 strides for a shape of 1 dimensions"), std::string::npos) << e.message();
  }
}

// Every call of the shipped ledger is one the CPU runs (or, where the bug is a missing check on MPS, refuses, as the
// entry says), in every dtype the entry names, on the operators this libtorch has: the ledger's calls are
// well-formed, so that a run's repro samples are the threads' calls and not errors of the ledger.
TEST(Repros, EveryKnownBugsOwnCallRunsOnTheCpu) {
  const emu::KnownBugs bugs = emu::KnownBugs::load(testing::source_path("data/mps_known_bugs.yaml"));
  const std::vector<std::string> known = all_ops();
  const std::set<std::string> have(known.begin(), known.end());
  const Spec empty = parse_spec("", "s.yaml", {});
  std::vector<std::string> problems;
  int ran = 0;
  for (const emu::KnownBug& b : bugs.entries()) {
    if (!b.repro) {
      problems.push_back(b.id + ": no repro");
      continue;
    }
    bool named = false;
    for (const auto& op : b.ops) named = named || op == b.repro->op || op == base_operator_name(b.repro->op);
    if (!named) problems.push_back(fmt::format("{}: the repro calls {}, which its ops do not name", b.id, b.repro->op));
    if (!have.count(b.repro->op)) continue;  // an operator this libtorch lacks
    Spec spec = empty;
    try {
      spec.repros[b.repro->op].push_back(
          {b.id, b.dtypes, parse_sample_args(b.repro->args, bugs.path(), "repro:" + b.id), b.repro->cpu_raises});
    } catch (const UserError& e) {
      problems.push_back(fmt::format("{}: {}", b.id, e.what()));
      continue;
    }
    const auto op = c10::Dispatcher::singleton().findOp(
        {base_operator_name(b.repro->op),
         b.repro->op.find('.') == std::string::npos ? "" : b.repro->op.substr(b.repro->op.find('.') + 1)});
    const std::vector<std::string> dtypes = b.dtypes.empty() ? std::vector<std::string>{"float32"} : b.dtypes;
    for (const auto& dtype : dtypes) {
      const auto type = parse_dtype(dtype);
      if (!type) continue;
      std::vector<ConditionOutcome> large;
      std::vector<ConditionSample> made;
      try {
        made = repro_samples(*op, b.repro->op, *type, dtype, spec, large);
      } catch (const std::exception& e) {
        problems.push_back(fmt::format("{} {}: inputs: {}", b.id, dtype, first_line(e.what())));
        continue;
      }
      if (made.empty() && large.empty()) {
        problems.push_back(fmt::format("{} {}: no inputs could be made", b.id, dtype));
        continue;
      }
      for (const auto& c : made) {
        // The thread's call is one its entry's condition says: a repro that no atom of it meets is one of the two
        // wrong. (Made on the CPU, it has no CPU scalar beside device tensors; that atom is the device's to tell.)
        emu::KnownBug on_cpu = b;
        on_cpu.when.erase(std::remove(on_cpu.when.begin(), on_cpu.when.end(), "cpu_scalar"), on_cpu.when.end());
        const emu::ConditionMet met = emu::condition_met(on_cpu, sample_traits(op->schema(), c.inputs.args));
        if (!met.yes() && !met.maybe()) {
          problems.push_back(
              fmt::format("{} {}: its repro does not meet its condition [{}]", b.id, dtype, fmt::join(b.when, ", ")));
        }
        torch::jit::Stack stack(c.inputs.args.begin(), c.inputs.args.end());
        std::string raised;
        try {
          op->callBoxed(&stack);
        } catch (const std::exception& e) {
          raised = first_line(e.what());
        }
        ++ran;
        // What the linked libtorch's CPU cannot make a reference of: a dtype it has no kernel for (the prober computes
        // such references in float32), operands of two dtypes (mixed-precision layer_norm, CPU kernels of later
        // releases), an operator it has no CPU kernel for (a record of it is a skip, no_cpu_kernel).
        if (raised.find("not implemented for '") != std::string::npos ||
            raised.find("expected scalar type") != std::string::npos ||
            (raised.find("Could not run '") != std::string::npos &&
             raised.find("'CPU' backend") != std::string::npos)) {
          continue;
        }
        if (b.repro->cpu_varies) continue;  // the CPU's rule changed between releases; either outcome is right
        if (raised.empty() && b.repro->cpu_raises) {
          problems.push_back(fmt::format("{} {}: the CPU ran it, and the entry says the CPU refuses it", b.id, dtype));
        } else if (!raised.empty() && !b.repro->cpu_raises) {
          problems.push_back(fmt::format("{} {}: the CPU raised: {}", b.id, dtype, raised));
        }
      }
    }
  }
  for (const auto& p : problems) ADD_FAILURE() << p;
  EXPECT_GT(ran, 100);
}

// An `arg:NAME` condition that no operator of its entry has an argument NAME for is met by no call.
TEST(Repros, EveryArgumentConditionNamesAnArgumentOfItsOperators) {
  const emu::KnownBugs bugs = emu::KnownBugs::load(testing::source_path("data/mps_known_bugs.yaml"));
  std::map<std::string, std::set<std::string>> arguments;  // by operator, and by its name without an overload
  for (const auto& name : c10::Dispatcher::singleton().getAllOpNames()) {
    const auto handle = c10::Dispatcher::singleton().findOp(name);
    if (!handle || !handle->hasSchema()) continue;
    for (const auto& a : handle->schema().arguments()) {
      arguments[c10::toString(name)].insert(a.name());
      arguments[name.name].insert(a.name());
    }
  }
  int checked = 0;
  for (const emu::KnownBug& b : bugs.entries()) {
    for (const std::string& atom : b.when) {
      if (atom.rfind("arg:", 0) != 0) continue;
      const std::string name = atom.substr(4, atom.find_first_of("=!<>") - 4);
      bool known = false, has = false;
      for (const std::string& op : b.ops) {
        const auto it = arguments.find(op);
        known = known || it != arguments.end();
        has = has || (it != arguments.end() && it->second.count(name));
      }
      if (!known) continue;  // operators this libtorch lacks
      ++checked;
      EXPECT_TRUE(has) << b.id << ": no operator of [" << fmt::format("{}", fmt::join(b.ops, ", "))
                       << "] has an argument '" << name << "'";
    }
  }
  EXPECT_GT(checked, 20);
}

}  // namespace
}  // namespace mps_audit
