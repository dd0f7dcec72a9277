// Reading the limits of MPS's kernels.
#include "emu/mps_limits.h"

#include <algorithm>
#include <regex>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include "common/data_home.h"
#include "common/output_file.h"
#include "common/paths.h"
#include "common/text.h"
#include "emu/known_bugs.h"
#include "emu/yaml_reader.h"

namespace mps_audit::emu {

// Note [MPS limits]
// Some failures on a Mac are not one operator's bug but a limit of the framework its kernels are built on, met by
// every kernel that takes that path: MPSNDArrayScan and MPSNDArraySort take an axis among the four innermost only and
// abort the process past them (cumsum, cumprod, sort, topk, nanmedian along a leading dimension of a rank-5 tensor);
// PyTorch's own MPS kernels refuse what they cannot compute (a convolution whose output has a dimension over 65,536
// on macOS before 15.1, topk for k over 16 in 1.13). Where a limit is stated (in PyTorch's MPS sources, or in the
// assertion Apple's framework prints, quoted by the threads that met it), data/mps_limits.yaml records it: its
// operators, its condition, what a Mac does past it (an abort; an error; a refusal, NotImplementedError), the
// releases whose kernels meet it and the macOS versions where it holds. A condition is a list of atoms that must all
// hold of one call: of its tensor arguments axis_from_last_gt:N (the first, along `dim`), rank_gt:N, rank_lt:N (every
// one), numel_gt:N, bytes_gt:N, dim_gt:N; of its results out_dim_gt:N; of another argument arg:NAME<op>VALUE, compared
// as the known bugs' `arg:` atoms are. The emulator's kernels enforce each limit of the emulated release and macOS
// (Note [MPS emulation] in mps_emulator.cc): before they compute, or, for a limit on results, once they computed them
// (the call then ends as the Mac's, which checked the size it was about to make). An abort is a DeviceAbort, which
// the prober records as a crash with the limit, its source and what met it in the message (a real Mac's process would
// die; the emulated one goes on); an error or refusal is the Mac's c10::Error or NotImplementedError with the Mac's
// message and the same words, marked as a limit's (common/limit_errors.h) so that the record says what it rests on.
// So every call meeting a limit fails in the audit, a replay and the plugin as on a Mac, whichever thread first
// reported it.

namespace {

const std::vector<std::string> kKeys = {"id",  "summary", "outcome", "message", "source", "threads",
                                        "ops", "when",    "since",   "until",   "macos"};
const std::regex kAtom("(axis_from_last_gt|rank_gt|rank_lt|numel_gt|bytes_gt|dim_gt|out_dim_gt):([0-9]+)");
const std::regex kArgumentAtom(R"(arg:([A-Za-z_][A-Za-z0-9_]*)(=|!=|>=|<=|>|<)([^ ]+))");

LimitAtom read_atom(const YamlReader& r, const YAML::Node& n, const std::string& text) {
  using Q = LimitAtom::Quantity;
  LimitAtom a;
  std::smatch m;
  if (std::regex_match(text, m, kArgumentAtom)) {
    a.quantity = Q::kArgument;
    a.name = m[1];
    a.op = m[2];
    a.value = m[3];
    return a;
  }
  if (!std::regex_match(text, m, kAtom)) {
    r.fail(n, fmt::format("unknown condition '{}': expected axis_from_last_gt:N, rank_gt:N, rank_lt:N, numel_gt:N, "
                          "bytes_gt:N, dim_gt:N, out_dim_gt:N or arg:NAME<op>VALUE",
                          text));
  }
  static const std::unordered_map<std::string, Q> kQuantities = {{"axis_from_last_gt", Q::kAxisFromLast},
                                                                 {"rank_gt", Q::kRank},
                                                                 {"rank_lt", Q::kRankBelow},
                                                                 {"numel_gt", Q::kNumel},
                                                                 {"bytes_gt", Q::kBytes},
                                                                 {"dim_gt", Q::kDim},
                                                                 {"out_dim_gt", Q::kResultDim}};
  a.quantity = kQuantities.at(m[1]);
  try {
    a.bound = std::stoll(m[2]);
  } catch (const std::out_of_range&) {
    r.fail(n, fmt::format("condition '{}': the bound is too large", text));
  }
  return a;
}

MpsLimit read_limit(const YamlReader& r, const YAML::Node& e) {
  if (!e.IsMap()) r.fail(e, "a limit must be a mapping");
  r.only_keys(e, kKeys, "a limit");
  MpsLimit l;
  l.where = r.at(e);
  l.id = r.scalar(e, "id", true);
  l.summary = r.scalar(e, "summary", true);
  l.outcome = r.scalar(e, "outcome", true);
  if (l.outcome != "crash" && l.outcome != "error" && l.outcome != "refusal") {
    r.fail(e["outcome"], fmt::format("unknown outcome '{}': expected crash, error or refusal{}", l.outcome,
                                     did_you_mean(l.outcome, {"crash", "error", "refusal"})));
  }
  l.message = r.scalar(e, "message", true);
  l.source = r.scalar(e, "source", true);
  l.threads = r.list(e, "threads", true);
  l.ops = r.list(e, "ops", true);
  for (const auto& op : l.ops) {
    if (op.rfind("aten::", 0) != 0) r.fail(e["ops"], fmt::format("operator '{}': expected aten::NAME", op));
  }
  l.when = r.list(e, "when", true);
  for (size_t i = 0; i < l.when.size(); ++i) l.atoms.push_back(read_atom(r, e["when"][i], l.when[i]));
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

bool MpsLimit::on_results() const {
  return std::any_of(atoms.begin(), atoms.end(),
                     [](const LimitAtom& a) { return a.quantity == LimitAtom::Quantity::kResultDim; });
}

std::string MpsLimit::met_by(const LimitedCall& call) const {
  std::vector<std::string> met;
  for (const LimitAtom& a : atoms) {
    std::string by = a.met_by(call);
    if (by.empty()) return "";
    met.push_back(std::move(by));
  }
  return fmt::format("{}", fmt::join(met, " and "));
}

std::string LimitAtom::met_by(const LimitedCall& call) const {
  using Q = Quantity;
  switch (quantity) {
    case Q::kAxisFromLast: {
      // The first tensor argument is the one the operator scans or sorts along `dim`.
      if (call.shapes.empty() || !call.dim) return "";
      const auto rank = static_cast<int64_t>(call.shapes.front().size());
      if (rank == 0) return "";
      const int64_t dim = *call.dim < 0 ? *call.dim + rank : *call.dim;
      if (dim < 0 || dim >= rank) return "";
      return rank - 1 - dim > bound ? fmt::format("dim {} of a rank-{} tensor", *call.dim, rank) : "";
    }
    case Q::kRankBelow: {
      int64_t highest = 0;
      for (const auto& shape : call.shapes) highest = std::max(highest, static_cast<int64_t>(shape.size()));
      return call.shapes.empty() || highest >= bound ? "" : fmt::format("tensors of rank {} at most", highest);
    }
    case Q::kArgument: {
      const auto it = call.args.find(name);
      if (it == call.args.end() || !argument_compares(it->second, op, value)) return "";
      return fmt::format("{} {}", name, it->second);
    }
    case Q::kResultDim:
      for (const auto& shape : call.results) {
        for (const int64_t size : shape) {
          if (size > bound) return fmt::format("a result of size {} in a dimension", size);
        }
      }
      return "";
    default: break;
  }
  for (size_t i = 0; i < call.shapes.size(); ++i) {
    const auto& shape = call.shapes[i];
    const auto rank = static_cast<int64_t>(shape.size());
    if (quantity == Q::kRank && rank > bound) return fmt::format("a rank-{} tensor", rank);
    if (quantity == Q::kNumel && product(shape) > bound) return fmt::format("a tensor of {} elements", product(shape));
    if (quantity == Q::kBytes) {
      const int64_t bytes = product(shape) * (i < call.itemsizes.size() ? call.itemsizes[i] : 1);
      if (bytes > bound) return fmt::format("a tensor of {} bytes", bytes);
    }
    if (quantity == Q::kDim) {
      for (const int64_t size : shape) {
        if (size > bound) return fmt::format("a tensor of size {} in a dimension", size);
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

std::vector<std::string> MpsLimits::conditions_in(const std::string& release) const {
  std::vector<std::string> out;
  for (const auto& l : limits_) {
    if (l.macos != "*" && l.in_release(release)) out.push_back(l.macos);
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
