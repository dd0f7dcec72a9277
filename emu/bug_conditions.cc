// Whether a sample met a known bug's condition: the atoms of the ledger's `when`.
//
// Note [Conditions of known bugs]
// A bug's `when` is a list of atoms that must all hold of one call (data/README.md lists them): `any`; what the
// prober's traits of a sample say (results/result.h SampleTraits: rank, sizes, elements, bytes, a view, an offset,
// channels-last, empty, repeated or out-of-range indices, a CPU scalar, NaN or infinity among the values); an
// argument's value (`arg:k>16`, `arg:rounding_mode=floor`, `arg:dim=none`; a dtype and a loss's reduction by name,
// `arg:dtype=int32`, `arg:reduction=mean`; an optional tensor, `arg:bias!=none`, as Note [Traits of a sample] in
// probe/sample_traits.cc writes them); and `other`, which no argument can tell,
// with `when_detail` saying what. Each atom is met, not met, or cannot be told: a recorded call's tensor too large to
// keep is described by its shape, so its index values, NaNs and infinities are not known; `other` is never told by
// arguments alone. A sample meets the bug where every atom is met; may meet it where none is not met and some cannot
// be told. The bug's own call (its repro, Note [Known bugs' own calls] in probe/repros.cc) meets it by construction:
// it is the thread's.
#include <algorithm>
#include <cstdlib>
#include <optional>
#include <regex>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "emu/known_bugs.h"

namespace mps_audit::emu {
namespace {

enum class Told { kNo, kMaybe, kYes };

struct Atom {
  Told told = Told::kNo;
  std::string text;  // what met it, or what could not be told
};

std::string without_spaces(std::string s) {
  s.erase(std::remove(s.begin(), s.end(), ' '), s.end());
  return s;
}

std::optional<double> as_number(const std::string& s) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) return std::nullopt;
  return v;
}

// The numbers of a list's text ("[2, 2]"); nullopt for anything else.
std::optional<std::vector<std::string>> list_items(const std::string& value) {
  if (value.size() < 2 || value.front() != '[' || value.back() != ']') return std::nullopt;
  std::vector<std::string> items;
  size_t start = 1;
  while (start < value.size() - 1) {
    const size_t end = std::min(value.find(',', start), value.size() - 1);
    items.push_back(without_spaces(value.substr(start, end - start)));
    start = end + 1;
  }
  return items;
}

const std::regex kArgAtom(R"(arg:([A-Za-z_][A-Za-z0-9_]*)(=|!=|>=|<=|>|<)(.+))");

Atom argument_atom(const std::smatch& m, const SampleTraits& t) {
  const std::string name = m[1].str(), op = m[2].str(), wanted = m[3].str();
  const auto it = t.args.find(name);
  if (it == t.args.end()) return {Told::kNo, ""};
  for (const auto& v : it->second) {
    if (argument_compares(v, op, wanted)) return {Told::kYes, fmt::format("{} {}", name, v)};
  }
  return {Told::kNo, ""};
}

// A flag of the traits: met where set; where it is not set and the values were not read, it cannot be told.
Atom flag(bool set, bool needs_values, const SampleTraits& t, const char* met, const char* unknown) {
  if (set) return {Told::kYes, met};
  if (needs_values && t.values_unknown) return {Told::kMaybe, unknown};
  return {Told::kNo, ""};
}

Atom one_atom(const std::string& atom, const KnownBug& bug, const SampleTraits& t) {
  const size_t colon = atom.find(':');
  const std::string name = atom.substr(0, colon);
  const std::string arg = colon == std::string::npos ? "" : atom.substr(colon + 1);
  if (name == "any") return {Told::kYes, "every sample"};
  if (name == "other") {
    return {Told::kMaybe, bug.when_detail.empty() ? "a condition its arguments cannot tell" : bug.when_detail};
  }
  if (name == "arg") {
    std::smatch m;
    return std::regex_match(atom, m, kArgAtom) ? argument_atom(m, t) : Atom{};
  }
  const auto number = [&] { return std::stoll(arg); };
  if (name == "rank_ge") {
    return t.max_rank >= number() ? Atom{Told::kYes, fmt::format("a rank-{} argument", t.max_rank)} : Atom{};
  }
  if (name == "size_gt") {
    return t.max_size > number() ? Atom{Told::kYes, fmt::format("a dimension of size {}", t.max_size)} : Atom{};
  }
  if (name == "numel_gt") {
    return t.max_numel > number() ? Atom{Told::kYes, fmt::format("an argument of {} elements", t.max_numel)} : Atom{};
  }
  if (name == "bytes_gt") {
    return t.max_bytes > number() ? Atom{Told::kYes, fmt::format("an argument of {} bytes", t.max_bytes)} : Atom{};
  }
  if (name == "non_contiguous") return flag(t.non_contiguous, false, t, "a non-contiguous argument", "");
  if (name == "storage_offset") return flag(t.storage_offset, false, t, "an argument at a storage offset", "");
  if (name == "channels_last") return flag(t.channels_last, false, t, "a channels-last argument", "");
  if (name == "empty") return flag(t.empty, false, t, "an empty argument", "");
  if (name == "cpu_scalar") return flag(t.cpu_scalar, false, t, "a CPU scalar operand", "");
  if (name == "duplicate_indices") {
    return flag(t.duplicate_indices, true, t, "duplicate indices", "whether indices repeat (values not kept)");
  }
  if (name == "out_of_range_indices") {
    return flag(t.out_of_range_indices, true, t, "out-of-range indices",
                "whether indices are in range (values not kept)");
  }
  if (name == "nan") return flag(t.nan, true, t, "a NaN among the values", "whether a NaN is among the values");
  if (name == "inf") {
    return flag(t.inf, true, t, "an infinity among the values", "whether an infinity is among the values");
  }
  if (name == "kwarg") {  // format 1's: a keyword-only argument given
    const bool given = std::find(t.kwargs.begin(), t.kwargs.end(), arg) != t.kwargs.end();
    return given ? Atom{Told::kYes, fmt::format("the keyword argument {}", arg)} : Atom{};
  }
  return {};
}

}  // namespace

// A list against a number: stride [2, 2] against `stride>1` are the ledger's words for "a stride other than 1".
bool argument_compares(const std::string& value, const std::string& op, const std::string& wanted) {
  if (const auto items = list_items(value); items && as_number(wanted)) {
    const auto holds = [&](const std::string& item) { return argument_compares(item, op, wanted); };
    return op == "=" ? std::all_of(items->begin(), items->end(), holds) && !items->empty()
                     : std::any_of(items->begin(), items->end(), holds);
  }
  const auto a = as_number(value), b = as_number(wanted);
  if (a && b) {
    if (op == "=") return *a == *b;
    if (op == "!=") return *a != *b;
    if (op == ">") return *a > *b;
    if (op == ">=") return *a >= *b;
    if (op == "<") return *a < *b;
    return *a <= *b;
  }
  const bool equal = without_spaces(value) == without_spaces(wanted);
  if (op == "=") return equal;
  if (op == "!=") return !equal;
  return false;  // an order of non-numbers: never
}

const std::regex& known_bug_atom() {
  static const std::regex kAtom(
      R"(any|other|non_contiguous|storage_offset|channels_last|empty|duplicate_indices|out_of_range_indices|)"
      R"(cpu_scalar|nan|inf|(rank_ge|size_gt|numel_gt|bytes_gt):[0-9]+|)"
      R"(arg:[A-Za-z_][A-Za-z0-9_]*(=|!=|>=|<=|>|<)[^ ]+)");
  return kAtom;
}

ConditionMet condition_met(const KnownBug& bug, const SampleTraits& traits, bool own_call) {
  if (own_call) return {ConditionMet::How::kYes, "its own call (the thread's)"};
  std::vector<std::string> met, unknown;
  for (const std::string& atom : bug.when) {
    const Atom a = one_atom(atom, bug, traits);
    if (a.told == Told::kNo) return {};
    (a.told == Told::kYes ? met : unknown).push_back(a.text);
  }
  if (!unknown.empty()) return {ConditionMet::How::kMaybe, fmt::format("{}", fmt::join(unknown, "; "))};
  return {ConditionMet::How::kYes, fmt::format("{}", fmt::join(met, " and "))};
}

}  // namespace mps_audit::emu
