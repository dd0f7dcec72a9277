// Reading the limits of MPS's kernels.
#include "emu/mps_limits.h"

#include <algorithm>
#include <regex>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "common/data_home.h"
#include "common/output_file.h"
#include "common/paths.h"
#include "common/text.h"
#include "emu/yaml_reader.h"

namespace mps_audit::emu {

// Note [MPS limits]
// Some crashes on a Mac are not one operator's bug but a limit of the framework its kernels are built on, met by every
// kernel that takes that path: MPSNDArrayScan and MPSNDArraySort take an axis among the four innermost only and abort
// the process past them (cumsum, cumprod, sort, topk, nanmedian along a leading dimension of a rank-5 tensor). Where a
// limit is stated (in PyTorch's MPS sources, or in the assertion Apple's framework prints, quoted by the threads
// that met it), data/mps_limits.yaml records it: its operators, the quantity and bound, what a Mac does past it (an
// abort, or an error PyTorch raises), the releases whose kernels meet it and the macOS versions where it holds. The
// emulator's native kernels enforce each limit of the emulated release and macOS before they compute (Note [MPS
// emulation] in mps_emulator.cc): an abort is a DeviceAbort, which the prober records as a crash with the limit, its
// source and what met it in the message (a real Mac's process would die; the emulated one goes on), an error a
// c10::Error with the Mac's message and the same words. So every call meeting a limit is a crash in the audit, a
// replay and the plugin, whichever thread first reported it.

namespace {

const std::vector<std::string> kKeys = {"id",  "summary", "outcome", "message", "source", "threads",
                                        "ops", "when",    "since",   "until",   "macos"};
const std::regex kWhen("(axis_from_last_gt|rank_gt|numel_gt|bytes_gt):([0-9]+)");

MpsLimit read_limit(const YamlReader& r, const YAML::Node& e) {
  if (!e.IsMap()) r.fail(e, "a limit must be a mapping");
  r.only_keys(e, kKeys, "a limit");
  MpsLimit l;
  l.where = r.at(e);
  l.id = r.scalar(e, "id", true);
  l.summary = r.scalar(e, "summary", true);
  l.outcome = r.scalar(e, "outcome", true);
  if (l.outcome != "crash" && l.outcome != "error") {
    r.fail(e["outcome"], fmt::format("unknown outcome '{}': expected crash or error{}", l.outcome,
                                     did_you_mean(l.outcome, {"crash", "error"})));
  }
  l.message = r.scalar(e, "message", true);
  l.source = r.scalar(e, "source", true);
  l.threads = r.list(e, "threads", true);
  l.ops = r.list(e, "ops", true);
  for (const auto& op : l.ops) {
    if (op.rfind("aten::", 0) != 0) r.fail(e["ops"], fmt::format("operator '{}': expected aten::NAME", op));
  }
  l.when = r.scalar(e, "when", true);
  std::smatch m;
  if (!std::regex_match(l.when, m, kWhen)) {
    r.fail(e["when"], fmt::format("unknown condition '{}': expected axis_from_last_gt:N, rank_gt:N, numel_gt:N or "
                                  "bytes_gt:N",
                                  l.when));
  }
  const std::string q = m[1];
  l.quantity = q == "axis_from_last_gt" ? MpsLimit::Quantity::kAxisFromLast
               : q == "rank_gt"         ? MpsLimit::Quantity::kRank
               : q == "numel_gt"        ? MpsLimit::Quantity::kNumel
                                        : MpsLimit::Quantity::kBytes;
  try {
    l.bound = std::stoll(m[2]);
  } catch (const std::out_of_range&) {
    r.fail(e["when"], fmt::format("condition '{}': the bound is too large", l.when));
  }
  l.since = r.version(e, "since", false);
  l.until = r.version(e, "until", false);
  l.macos = r.scalar(e, "macos", false);
  if (l.macos.empty()) l.macos = "*";
  std::string bad;
  size_t offset = 0;
  const auto bounds = parse_macos_condition(l.macos, bad, offset);
  if (!bounds) r.fail(e["macos"], fmt::format("macOS condition '{}': expected bounds such as '<15.0', '>=13.3'", bad));
  l.bounds = *bounds;
  return l;
}

int64_t product(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (const int64_t s : shape) n *= s;
  return n;
}

}  // namespace

bool MpsLimit::in_release(const std::string& release) const {
  if (since != "unknown" && compare_versions(release, since) < 0) return false;
  return until == "unknown" || compare_versions(release, until) < 0;
}

std::string MpsLimit::met_by(const LimitedCall& call) const {
  for (size_t i = 0; i < call.shapes.size(); ++i) {
    const auto& shape = call.shapes[i];
    const auto rank = static_cast<int64_t>(shape.size());
    switch (quantity) {
      case Quantity::kAxisFromLast: {
        // The first tensor argument is the one the operator scans or sorts along `dim`.
        if (i > 0 || !call.dim || rank == 0) return "";
        const int64_t dim = *call.dim < 0 ? *call.dim + rank : *call.dim;
        if (dim < 0 || dim >= rank) return "";
        if (rank - 1 - dim > bound) return fmt::format("dim {} of a rank-{} tensor", *call.dim, rank);
        return "";
      }
      case Quantity::kRank:
        if (rank > bound) return fmt::format("a rank-{} tensor", rank);
        break;
      case Quantity::kNumel:
        if (product(shape) > bound) return fmt::format("a tensor of {} elements", product(shape));
        break;
      case Quantity::kBytes: {
        const int64_t bytes = product(shape) * (i < call.itemsizes.size() ? call.itemsizes[i] : 1);
        if (bytes > bound) return fmt::format("a tensor of {} bytes", bytes);
        break;
      }
    }
  }
  return "";
}

MpsLimits MpsLimits::parse(const std::string& text, const std::string& path) {
  const YamlReader reader(path);
  const YAML::Node limits = reader.document_list(text, kMpsLimitsFormat, "a file of MPS limits", "limits");
  MpsLimits out;
  out.path_ = path;
  out.hash_ = content_hash(text);
  for (const auto& e : limits) {
    MpsLimit l = read_limit(reader, e);
    for (const auto& other : out.limits_) {
      if (other.id == l.id) reader.fail(e["id"], fmt::format("a second limit '{}'", l.id));
    }
    out.limits_.push_back(std::move(l));
    for (const auto& op : out.limits_.back().ops) out.by_op_[op].push_back(out.limits_.size() - 1);
  }
  return out;
}

MpsLimits MpsLimits::load(const std::string& path) {
  return parse(read_file(path), path);
}

std::vector<const MpsLimit*> MpsLimits::of(const std::string& op, const std::string& release,
                                           MacosVersion macos) const {
  std::vector<const MpsLimit*> out;
  for (const size_t i : rows_naming(by_op_, op)) {
    const MpsLimit& l = limits_[i];
    if (l.in_release(release) && holds_on(l.bounds, macos)) out.push_back(&l);
  }
  return out;
}

std::optional<MpsLimits> load_shipped_mps_limits() {
  const std::string path = release_root_file(kMpsLimitsFile);
  if (path.empty()) return std::nullopt;
  return MpsLimits::load(path);
}

std::string limit_message(const MpsLimit& limit, const std::string& met_by) {
  return fmt::format("{} (emulated MPS limit {}: {}; {})", limit.message, limit.id, met_by, limit.source);
}

}  // namespace mps_audit::emu
