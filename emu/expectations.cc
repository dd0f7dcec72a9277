// Reading mps_expectations.tsv, and finding the expectations of one op x dtype.
#include "emu/expectations.h"

#include <algorithm>
#include <array>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "common/output_file.h"
#include "common/paths.h"
#include "common/text.h"

namespace mps_audit::emu {
namespace {

constexpr std::array<std::pair<std::string_view, ExpectationKind>, 7> kKinds = {{
    {"unimplemented", ExpectationKind::kUnimplemented},
    {"wrong", ExpectationKind::kWrong},
    {"error", ExpectationKind::kError},
    {"crash", ExpectationKind::kCrash},
    {"flaky", ExpectationKind::kFlaky},
    {"not_a_bug", ExpectationKind::kNotABug},
    {"passes", ExpectationKind::kPasses},
}};
constexpr std::array<std::pair<std::string_view, ExpectationScope>, 4> kScopes = {{
    {"forward", ExpectationScope::kForward},
    {"gradient", ExpectationScope::kGradient},
    {"error_inputs", ExpectationScope::kErrorInputs},
    {"sparse", ExpectationScope::kSparse},
}};
constexpr const char* kColumns = "operator, dtypes, kind, scope, macos, list, opinfo, mapping, source, reason";
constexpr size_t kColumnCount = 10;

template <typename T, size_t N>
std::optional<T> lookup(const std::array<std::pair<std::string_view, T>, N>& table, std::string_view name) {
  for (const auto& [n, v] : table) {
    if (n == name) return v;
  }
  return std::nullopt;
}

template <typename T, size_t N>
std::vector<std::string> names_of(const std::array<std::pair<std::string_view, T>, N>& table) {
  std::vector<std::string> out;
  for (const auto& entry : table) out.emplace_back(entry.first);
  return out;
}

// Which failure is worst, for find()'s order: what a user meets first.
int failure_rank(ExpectationKind kind) {
  switch (kind) {
    case ExpectationKind::kCrash: return 0;
    case ExpectationKind::kError: return 1;
    case ExpectationKind::kWrong: return 2;
    case ExpectationKind::kUnimplemented: return 3;
    case ExpectationKind::kFlaky: return 4;
    case ExpectationKind::kNotABug: return 5;
    case ExpectationKind::kNotSeenPassing:
    case ExpectationKind::kPasses: return 6;
  }
  return 6;
}

}  // namespace

std::string_view to_string(ExpectationKind kind) {
  if (kind == ExpectationKind::kNotSeenPassing) return "not_seen_passing";
  for (const auto& [n, v] : kKinds) {
    if (v == kind) return n;
  }
  return "error";
}

std::string_view to_string(ExpectationScope scope) {
  for (const auto& [n, v] : kScopes) {
    if (v == scope) return n;
  }
  return "forward";
}

std::optional<MacosVersion> parse_macos_version(std::string_view text) {
  int major = 0, minor = 0;
  size_t i = 0;
  if (i >= text.size() || text[i] < '0' || text[i] > '9') return std::nullopt;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) major = major * 10 + (text[i] - '0');
  if (i < text.size() && text[i] == '.') {
    ++i;
    for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) minor = minor * 10 + (text[i] - '0');
  }
  if (major > 999 || minor > 99) return std::nullopt;
  return major * 100 + minor;
}

std::optional<MacosBounds> parse_macos_condition(std::string_view text, std::string& bad, size_t& bad_offset) {
  MacosBounds bounds;
  if (text == "*") return bounds;
  size_t offset = 0;
  for (const auto& bound : split_list(text)) {
    const bool below = bound.rfind("<", 0) == 0 && bound.rfind("<=", 0) != 0;
    const bool at_least = bound.rfind(">=", 0) == 0;
    const auto version = parse_macos_version(std::string_view(bound).substr(below ? 1 : at_least ? 2 : 0));
    if ((!below && !at_least) || !version) {
      bad = bound;
      bad_offset = offset;
      return std::nullopt;
    }
    bounds.emplace_back(below, *version);
    offset += bound.size() + 1;
  }
  return bounds;
}

bool holds_on(const MacosBounds& bounds, MacosVersion v) {
  for (const auto& [below, bound] : bounds) {
    if (below ? !(v < bound) : !(v >= bound)) return false;
  }
  return true;
}

bool Expectation::holds_on(MacosVersion v) const {
  return emu::holds_on(bounds, v);
}

bool Expectation::covers(std::string_view dtype) const {
  return dtypes.empty() || std::find(dtypes.begin(), dtypes.end(), dtype) != dtypes.end();
}

bool is_failure_kind(std::string_view kind) {
  return kind != to_string(ExpectationKind::kNotABug) && kind != to_string(ExpectationKind::kPasses) &&
         kind != to_string(ExpectationKind::kNotSeenPassing);
}

bool converts(std::string_view opinfo) {
  constexpr std::string_view kDtypeVariant = "with_dtype";
  if (opinfo.size() >= kDtypeVariant.size() && opinfo.substr(opinfo.size() - kDtypeVariant.size()) == kDtypeVariant) {
    return true;
  }
  static const std::set<std::string_view> kConversions = {
      "to",           "type_as",    "double",    "half",      "bfloat16",   "byte",      "char",
      "float",        "int",        "long",      "short",     "bool",       "cfloat",    "cdouble",
      "chalf",        "zeros_like", "ones_like", "full_like", "empty_like", "rand_like", "randn_like",
      "randint_like", "new_zeros",  "new_ones",  "new_full",  "new_empty"};
  return kConversions.count(opinfo) > 0;
}

bool decides_verdict(std::string_view kind, bool every_dtype, std::string_view macos, std::string_view opinfo) {
  const bool evidence = kind == to_string(ExpectationKind::kUnimplemented) ||
                        kind == to_string(ExpectationKind::kWrong) || kind == to_string(ExpectationKind::kError) ||
                        kind == to_string(ExpectationKind::kCrash);
  const bool conditioned = !macos.empty() && macos != "*";
  if (!evidence) return false;
  // A sparse OpInfo (sparse.mmreduce, which names aten::mm) is about sparse inputs, which no probe makes.
  if (opinfo.rfind("sparse.", 0) == 0) return false;
  // A conversion's entry is about converting to a dtype MPS lacks, which the emulator refuses itself: a "with_dtype"
  // variant's always (it passes dtype=), a conversion OpInfo's where it names every dtype.
  if (converts(opinfo) && (every_dtype || opinfo.find("with_dtype") != std::string_view::npos) && !conditioned) {
    return false;
  }
  return true;
}

bool decides_verdict(const ExpectationNote& note) {
  return decides_verdict(note.kind, note.every_dtype, note.macos, note.opinfo);
}

bool Expectation::is_failure() const {
  return decides_verdict(to_string(kind), dtypes.empty(), macos, opinfo);
}

Expectations Expectations::parse(const std::string& text, const std::string& path) {
  Expectations out;
  out.path_ = path;
  out.hash_ = content_hash(text);
  std::istringstream in(text);
  std::string line;
  bool format_seen = false;
  for (int lineno = 1; std::getline(in, line); ++lineno) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    if (line[0] == '#') {
      const std::string_view comment = std::string_view(line).substr(1);
      const size_t start = comment.find_first_not_of(' ');
      const std::string_view body = start == std::string_view::npos ? "" : comment.substr(start);
      if (body.rfind("mps-audit-expectations/", 0) == 0) {
        if (body != kExpectationsFormat) {
          throw UserError(fmt::format("format '{}' is not one this build reads ({})", body, kExpectationsFormat),
                          {path, lineno, static_cast<int>(start) + 2});
        }
        format_seen = true;
      } else if (body.rfind("release:", 0) == 0) {
        out.release_ = std::string(body.substr(8));
        out.release_.erase(0, out.release_.find_first_not_of(' '));
      }
      continue;
    }
    if (!format_seen) {
      throw UserError(fmt::format("not an expectations file: it must begin with '# {}'", kExpectationsFormat),
                      {path, lineno, 1});
    }
    // The columns and where each begins, for diagnostics.
    std::vector<std::string> cols;
    std::vector<int> at;
    for (size_t begin = 0;;) {
      const size_t tab = line.find('\t', begin);
      at.push_back(static_cast<int>(begin) + 1);
      cols.push_back(line.substr(begin, tab == std::string::npos ? std::string::npos : tab - begin));
      if (tab == std::string::npos) break;
      begin = tab + 1;
    }
    if (cols.size() != kColumnCount) {
      throw UserError(
          fmt::format("expected {} tab-separated columns ({}), found {}", kColumnCount, kColumns, cols.size()),
          {path, lineno, cols.size() > kColumnCount ? at[kColumnCount] : 1});
    }
    Expectation e;
    e.where = {path, lineno, 1};
    e.op = cols[0];
    if (e.op.empty() || (e.op != "*" && e.op != "-" && e.op.rfind("aten::", 0) != 0)) {
      throw UserError(fmt::format("operator '{}': expected aten::NAME, aten::NAME.OVERLOAD, '*' or '-'", e.op),
                      {path, lineno, at[0]});
    }
    if (cols[1].empty()) throw UserError("no dtypes: expected a comma-separated list or '*'", {path, lineno, at[1]});
    if (cols[1] != "*") e.dtypes = split_list(cols[1]);
    const auto kind = lookup(kKinds, cols[2]);
    if (!kind) {
      throw UserError(fmt::format("unknown kind '{}'{}", cols[2], did_you_mean(cols[2], names_of(kKinds))),
                      {path, lineno, at[2]});
    }
    e.kind = *kind;
    const auto scope = lookup(kScopes, cols[3]);
    if (!scope) {
      throw UserError(fmt::format("unknown scope '{}'{}", cols[3], did_you_mean(cols[3], names_of(kScopes))),
                      {path, lineno, at[3]});
    }
    e.scope = *scope;
    e.macos = cols[4];
    std::string bad;
    size_t bad_offset = 0;
    const auto bounds = parse_macos_condition(e.macos, bad, bad_offset);
    if (!bounds) {
      throw UserError(fmt::format("macOS condition '{}': expected '*' or bounds such as '<15.0', '>=13.3'", bad),
                      {path, lineno, at[4] + static_cast<int>(bad_offset)});
    }
    e.bounds = *bounds;
    e.list = cols[5];
    e.opinfo = cols[6];
    e.mapping = cols[7];
    e.source = cols[8];
    e.reason = cols[9];
    if (e.op == "-") {
      ++out.unmappable_;
    } else {
      out.by_op_[e.op].push_back(out.rows_.size());
    }
    out.rows_.push_back(std::move(e));
  }
  if (!format_seen) {
    throw UserError(fmt::format("not an expectations file: it must begin with '# {}'", kExpectationsFormat), {path});
  }
  return out;
}

Expectations Expectations::load(const std::string& path) {
  return parse(read_file(path), path);
}

std::vector<const Expectation*> Expectations::find(const std::string& op, std::string_view dtype,
                                                   ExpectationScope scope, MacosVersion macos) const {
  std::vector<const Expectation*> out;
  const auto take = [&](const std::string& key) {
    const auto it = by_op_.find(key);
    if (it == by_op_.end()) return;
    for (size_t i : it->second) {
      const Expectation& e = rows_[i];
      if (e.scope == scope && e.covers(dtype) && e.holds_on(macos)) out.push_back(&e);
    }
  };
  take(op);
  if (const std::string base = base_operator_name(op); base != op) take(base);
  take("*");
  std::stable_sort(out.begin(), out.end(), [](const Expectation* a, const Expectation* b) {
    return failure_rank(a->kind) < failure_rank(b->kind);
  });
  return out;
}

std::vector<const Expectation*> Expectations::naming(const std::string& op) const {
  std::vector<size_t> rows;
  const auto take = [&](const std::string& key) {
    if (const auto it = by_op_.find(key); it != by_op_.end())
      rows.insert(rows.end(), it->second.begin(), it->second.end());
  };
  take(op);
  if (const std::string base = base_operator_name(op); base != op) take(base);
  std::sort(rows.begin(), rows.end());
  std::vector<const Expectation*> out;
  for (size_t i : rows) out.push_back(&rows_[i]);
  return out;
}

std::optional<Expectations> load_release_expectations(const std::string& release_dir) {
  if (release_dir.empty()) return std::nullopt;
  const std::string path = join_path(release_dir, kExpectationsFile);
  if (!path_exists(path)) return std::nullopt;
  return Expectations::load(path);
}

}  // namespace mps_audit::emu
