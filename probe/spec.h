// The op spec (opspec.yaml, documented in docs/opspec.md): defaults, and per operator its dtypes, samples,
// comparison mode, tolerances and known failures. Loading validates everything and reports the first problem with
// file:line:col (UserError).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/diagnostics.h"
#include "common/text.h"
#include "probe/compare.h"

namespace YAML {
class Node;
}  // namespace YAML

namespace mps_audit {

// How one argument of a sample is made.
struct ArgSpec {
  enum class Kind { kTensor, kTensorList, kNone, kBool, kInt, kFloat, kString, kIntList, kFloatList, kBoolList };
  Kind kind = Kind::kNone;
  // kTensor: shape, value domain, optional dtype override (else the probe's dtype), non-contiguous layout.
  std::vector<int64_t> shape;
  std::string domain = "normal";  // normal, positive, uniform, int, index, mask
  double low = 0, high = 1;       // uniform/int/index bounds (index: [0, high))
  std::string dtype;
  bool noncontiguous = false;
  // The values themselves, row-major (NaN and infinities allowed), instead of a domain's; `shape` is theirs.
  std::vector<double> values;
  // A view of a buffer: these strides (in elements) at this storage offset, as a call's view has them (a chunk, a
  // transpose, an expand); empty strides: contiguous.
  std::vector<int64_t> strides;
  int64_t offset = 0;
  std::string memory_format;       // empty, channels_last or channels_last_3d
  bool on_cpu = false;             // stays on the CPU while the other arguments go to the target (a CPU scalar)
  bool unique = false;             // domain index: distinct values (the first of a permutation of [0, high))
  std::string layout = "strided";  // strided, sparse_coo, sparse_csr (2-d): half the elements zero
  std::string quantized;           // empty, or the quantized dtype: qint8, quint8, qint32 (per tensor)
  double scale = 0.1;              // quantized: scale and zero point of quantize_per_tensor
  int64_t zero_point = 0;
  std::vector<ArgSpec> tensors;  // kTensorList
  bool b = false;
  int64_t i = 0;
  double f = 0;
  std::string s;
  std::vector<int64_t> ints;
  std::vector<double> floats;
  std::vector<bool> bools;
  SourceLocation where;
};

struct SampleSpec {
  std::string name;
  std::map<std::string, ArgSpec> args;  // by schema argument name
  SourceLocation where;
  // Its tensors are made on the meta device (shapes, strides, dtypes; no values): a call too large to run here
  // (probe/repros.h), checked for its shapes alone.
  bool on_meta = false;
};

// Where a known failure (or a conditional skip) applies: every condition given must hold.
struct KnownFailure {
  std::string reason;
  std::vector<std::string> targets;  // empty: any
  std::vector<std::string> dtypes;   // empty: any
  int macos_min = 0, macos_max = 0;  // macOS major versions, inclusive; 0: no bound. Only MPS targets have one
  std::string torch_min, torch_max;  // libtorch versions, inclusive ("2.0", "2.5.1"); empty: no bound
  SourceLocation where;

  // `macos_major` 0 when the target has no macOS (cuda, cpu, meta).
  bool applies(const std::string& target, const std::string& dtype, int macos_major,
               const std::string& torch_version) const;
};

// Whether `version` lies within [min, max], both inclusive; an empty bound is no bound.
bool within_versions(const std::string& version, const std::string& min, const std::string& max);

struct OpSpec {
  std::string name;  // "aten::sum" (every overload) or "aten::sum.dim_IntList"
  std::vector<std::string> dtypes;
  std::optional<CompareMode> compare;
  std::map<std::string, Tolerance> tolerance;  // by dtype name; "*" for all
  std::string skip;                            // reason; non-empty: not probed
  std::vector<KnownFailure> skip_when;         // not probed where one of these applies (a list under `skip:`)
  std::vector<KnownFailure> xfail;
  std::string group, description;
  std::vector<SampleSpec> samples;
  SourceLocation where;
};

// A known MPS bug's own call (data/mps_known_bugs.yaml's `repro`), probed as a condition sample of its operator
// (Note [Known bugs' own calls] in probe/repros.cc).
struct ReproSample {
  std::string id;                   // the ledger entry's: "pytorch-169342"
  std::vector<std::string> dtypes;  // the dtypes it is made in; empty: every dtype the CPU takes
  SampleSpec sample;                // named "repro:<id>"
  bool cpu_raises = false;          // the CPU refuses the call: the bug is that MPS does not
  bool cpu_varies = false;          // the CPU refuses it in some releases, takes it in others
};

struct Spec {
  std::string path;
  std::vector<std::string> dtypes;  // defaults
  std::vector<int64_t> shape = {3, 4};
  std::map<std::string, Tolerance> tolerance;
  std::map<std::string, OpSpec> ops;  // by name as written
  // The known bugs' own calls, by operator overload ("aten::conv2d"); added from the ledger (add_repros() in
  // probe/repros.h), not written in the spec.
  std::map<std::string, std::vector<ReproSample>> repros;

  // The entry for an operator: its exact name first, then its bare name. nullptr when none.
  const OpSpec* find(const std::string& op_name) const;
  // The tolerance for an op and dtype: the op's, then the defaults', then nullptr (torch.testing's).
  const Tolerance* tolerance_for(const OpSpec* op, const std::string& dtype) const;
};

// `known_ops`: every operator name the linked libtorch has ("aten::add.Tensor"), for checking names; `torch_version`:
// its version, for entries restricted to some (empty: the linked libtorch's).
Spec parse_spec(const std::string& text, const std::string& path, const std::vector<std::string>& known_ops,
                const std::string& torch_version = "");
Spec load_spec(const std::string& path, const std::vector<std::string>& known_ops,
               const std::string& torch_version = "");

// A sample named `name` whose `args` (a YAML mapping from argument names to values, as a spec sample's) come from
// another file at `path` (the ledger's repros); a bad value is reported at its place there. Throws UserError.
SampleSpec parse_sample_args(const YAML::Node& args, const std::string& path, const std::string& name);

}  // namespace mps_audit
