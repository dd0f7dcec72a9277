// A run's flags, checked once: see request.h.
#include "run/request.h"

#include <algorithm>
#include <thread>

#include <fmt/format.h>

#include "common/data_home.h"
#include "common/diagnostics.h"
#include "common/flags.h"
#include "common/paths.h"
#include "common/torch_compat.h"
#include "emu/expected_verdicts.h"
#include "probe/dtypes.h"
#include "probe/recorded_samples.h"
#include "report/renderers.h"

namespace mps_audit {

RunRequest check_run_options(const RunOptions& o) {
  RunRequest r;
  check_choice("--fallback", o.fallback, {"on", "off"});
  check_choices("--dtypes", o.dtypes, known_dtype_names());
  check_positive_seconds("--timeout", o.timeout_s, "for no practical limit, give a large one such as 86400");
  if (o.jobs) check_at_least("--jobs", *o.jobs, 1);
  if (!o.shard.empty()) r.shard = parse_shard(o.shard);
  try {
    r.filter = std::regex(o.ops.empty() ? ".*" : o.ops);
  } catch (const std::regex_error& e) {
    throw UserError(fmt::format("--ops: invalid regular expression '{}': {}", o.ops, e.what()));
  }
  r.target = make_target(o.target, r.target_choice);
  r.requested_target = o.target.target;
  r.expectations = emu::expectation_mode(o.expectations, r.target);
  if (r.target.emulated() && r.target.emu.release_dir.empty()) {
    throw UserError(
        fmt::format("no registry data for libtorch {} to emulate MPS with: pass --emu-release with a "
                    "folder holding its native_functions.yaml",
                    compat::kTorchVersion));
  }
  // The spec and recorded samples the flags name, or the defaults (Note [Data homes]): the workers get these paths.
  r.spec = o.spec.empty() ? default_spec_path() : o.spec;
  r.samples = "none";
  if (o.samples != "none") {
    const std::string path = o.samples.empty() ? default_recordings_path() : o.samples;
    if (!o.samples.empty() && !path_exists(path)) throw UserError("--samples: no such file", {path});
    if (!path.empty()) r.samples = path;
  }
  const long cores = std::max<long>(1, static_cast<long>(std::thread::hardware_concurrency()));
  r.jobs = static_cast<size_t>(o.jobs ? *o.jobs : cores);
  r.ops = o.ops;
  r.dtypes = o.dtypes;
  r.out_dir = o.out_dir;
  r.fallback = o.fallback;
  r.timeout_s = o.timeout_s;
  r.resume = o.resume;
  r.pairs = o.pairs;
  r.not_probed = o.not_probed;
  r.self = o.self;
  r.progress = o.progress;
  r.native_since = shows_native_since(o.formats);
  return r;
}

}  // namespace mps_audit
