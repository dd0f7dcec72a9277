// opspec.yaml loader and validator (yaml-cpp).
#include "probe/spec.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <regex>
#include <set>
#include <sstream>
#include <unordered_set>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "common/output_file.h"
#include "common/target.h"
#include "common/text.h"
#include "common/torch_compat.h"
#include "probe/dtypes.h"

namespace mps_audit {
namespace {

class Reader {
 public:
  Reader(std::string path, const std::vector<std::string>& known_ops, std::string torch_version,
         int64_t max_numel = int64_t{1} << 24)
      : path_(std::move(path)), known_ops_(known_ops), torch_version_(std::move(torch_version)), max_numel_(max_numel) {
    for (const auto& op : known_ops_) {
      known_.insert(op);
      known_.insert(base_operator_name(op));
    }
  }

  SourceLocation at(const YAML::Node& n) const {
    const YAML::Mark m = n.Mark();
    if (m.is_null()) return {path_};
    return {path_, m.line + 1, m.column + 1};
  }
  [[noreturn]] void fail(const YAML::Node& n, const std::string& message) const { throw UserError(message, at(n)); }

  // Every key must be one of `allowed`, and none may repeat.
  void check_keys(const YAML::Node& map, const std::vector<std::string>& allowed, const char* what) const {
    if (!map.IsMap()) fail(map, fmt::format("{} must be a mapping", what));
    std::set<std::string> seen;
    for (const auto& kv : map) {
      const std::string key = scalar(kv.first, "key");
      if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
        fail(kv.first, fmt::format("unknown key '{}' in {}{}", key, what, did_you_mean(key, allowed)));
      }
      if (!seen.insert(key).second) fail(kv.first, fmt::format("duplicate key '{}' in {}", key, what));
    }
  }

  std::string scalar(const YAML::Node& n, const char* what) const {
    if (!n.IsScalar()) fail(n, fmt::format("{} must be a single value", what));
    return n.Scalar();
  }

  bool boolean(const YAML::Node& n, const char* what) const {
    bool value = false;
    if (!n.IsScalar() || !YAML::convert<bool>::decode(n, value)) fail(n, fmt::format("{} must be true or false", what));
    return value;
  }

  // quantized: {dtype: quint8, scale: 0.1, zero_point: 3}: the tensor is made in float32 and quantized per tensor.
  void quantized(const YAML::Node& n, ArgSpec& a) const {
    check_keys(n, {"dtype", "scale", "zero_point"}, "quantized");
    if (!n["dtype"]) fail(n, "quantized needs a dtype (qint8, quint8 or qint32)");
    a.quantized = scalar(n["dtype"], "dtype");
    static const std::vector<std::string> kTypes = {"qint8", "quint8", "qint32"};
    if (std::find(kTypes.begin(), kTypes.end(), a.quantized) == kTypes.end()) {
      fail(n["dtype"], fmt::format("unknown quantized dtype '{}'{}", a.quantized, did_you_mean(a.quantized, kTypes)));
    }
    if (n["scale"]) a.scale = number<double>(n["scale"], "scale");
    if (!(a.scale > 0)) fail(n["scale"] ? n["scale"] : n, "scale must be positive");
    if (n["zero_point"]) a.zero_point = number<int64_t>(n["zero_point"], "zero_point");
    const int64_t lo = a.quantized == "quint8" ? 0 : a.quantized == "qint8" ? -128 : INT32_MIN;
    const int64_t hi = a.quantized == "quint8" ? 255 : a.quantized == "qint8" ? 127 : INT32_MAX;
    if (a.zero_point < lo || a.zero_point > hi) {
      fail(n["zero_point"],
           fmt::format("zero_point {} is outside {}'s range [{}, {}]", a.zero_point, a.quantized, lo, hi));
    }
    if (a.layout != "strided") fail(n, "a quantized tensor must be strided");
  }

  template <typename T>
  T number(const YAML::Node& n, const char* what) const {
    T value{};
    if (!n.IsScalar() || !YAML::convert<T>::decode(n, value)) {
      fail(n, fmt::format("{} must be {}", what, std::is_integral<T>::value ? "an integer" : "a number"));
    }
    return value;
  }

  std::vector<std::string> dtype_list(const YAML::Node& n) const {
    if (!n.IsSequence()) fail(n, "dtypes must be a list, e.g. [float32, int64]");
    std::vector<std::string> out;
    for (const auto& d : n) out.push_back(dtype(d));
    return out;
  }

  std::string dtype(const YAML::Node& n) const {
    const std::string name = scalar(n, "dtype");
    if (!parse_dtype(name)) {
      fail(n, fmt::format("unknown dtype '{}'{}", name, did_you_mean(name, known_dtype_names())));
    }
    return name;
  }

  std::vector<int64_t> shape(const YAML::Node& n) const {
    if (!n.IsSequence()) fail(n, "shape must be a list of sizes, e.g. [3, 4]");
    if (n.size() > 8) fail(n, "shape has more than 8 dimensions");
    std::vector<int64_t> out;
    int64_t numel = 1;
    for (const auto& d : n) {
      const int64_t size = number<int64_t>(d, "a size");
      if (size < 0) fail(d, fmt::format("size {} is negative", size));
      numel *= std::max<int64_t>(size, 1);
      // A known bug's own call may be larger: it is then made on the meta device only (probe/repros.h).
      if (numel > max_numel_) fail(n, fmt::format("shape has more than {} elements", max_numel_text()));
      out.push_back(size);
    }
    return out;
  }

  std::map<std::string, Tolerance> tolerance(const YAML::Node& n) const {
    std::map<std::string, Tolerance> out;
    if (n.IsMap() && (n["atol"] || n["rtol"])) {
      out["*"] = one_tolerance(n);
      return out;
    }
    if (!n.IsMap()) fail(n, "tolerance must be {atol: A, rtol: R} or map dtypes to that");
    for (const auto& kv : n) {
      const std::string d = dtype(kv.first);
      if (out.count(d)) fail(kv.first, fmt::format("duplicate key '{}' in tolerance", d));
      out[d] = one_tolerance(kv.second);
    }
    return out;
  }

  Tolerance one_tolerance(const YAML::Node& n) const {
    check_keys(n, {"atol", "rtol"}, "tolerance");
    Tolerance t;
    if (n["atol"]) t.atol = number<double>(n["atol"], "atol");
    if (n["rtol"]) t.rtol = number<double>(n["rtol"], "rtol");
    if (t.atol < 0 || t.rtol < 0) fail(n, "tolerances must not be negative");
    return t;
  }

  std::string op_name(const YAML::Node& n) const {
    std::string name = scalar(n, "operator name");
    if (name.find("::") == std::string::npos) name = "aten::" + name;
    if (!known_.count(name)) {
      fail(n, fmt::format("unknown operator '{}'{}", name, did_you_mean(name, known_ops_)));
    }
    return name;
  }

  ArgSpec arg(const YAML::Node& n, int depth = 0) const {
    ArgSpec a;
    a.where = at(n);
    if (depth > 2) fail(n, "arguments nest too deeply");
    if (n.IsNull()) return a;
    if (n.IsMap()) {
      if (n["tensors"]) {
        check_keys(n, {"tensors"}, "a tensor list argument");
        if (!n["tensors"].IsSequence()) fail(n["tensors"], "tensors must be a list of tensors");
        if (n["tensors"].size() > 64) fail(n["tensors"], "more than 64 tensors in a list");
        a.kind = ArgSpec::Kind::kTensorList;
        for (const auto& t : n["tensors"]) a.tensors.push_back(arg(t, depth + 1));
        return a;
      }
      check_keys(n,
                 {"shape", "domain", "low", "high", "dtype", "noncontiguous", "unique", "layout", "quantized", "values",
                  "strides", "offset", "memory_format", "on_cpu"},
                 "a tensor argument");
      a.kind = ArgSpec::Kind::kTensor;
      if (n["values"]) values(n["values"], a);
      if (!n["shape"] && !n["values"]) fail(n, "a tensor argument needs a shape (or its values)");
      if (n["shape"]) {
        const std::vector<int64_t> given = shape(n["shape"]);
        if (n["values"] && given != a.shape) fail(n["shape"], "the shape is not that of the values");
        a.shape = given;
      }
      view(n, a);
      if (n["domain"]) {
        a.domain = scalar(n["domain"], "domain");
        static const std::vector<std::string> kDomains = {
            "normal", "positive", "uniform", "int", "index", "mask", "special", "spd", "well_conditioned"};
        if (std::find(kDomains.begin(), kDomains.end(), a.domain) == kDomains.end()) {
          fail(n["domain"], fmt::format("unknown domain '{}'{}", a.domain, did_you_mean(a.domain, kDomains)));
        }
        // Matrices (the last two dimensions), as synthesis makes them for linear algebra (probe/inputs.h).
        const bool spd = a.domain == "spd";
        if ((spd || a.domain == "well_conditioned") &&
            (a.shape.size() < 2 || (spd && a.shape[a.shape.size() - 1] != a.shape[a.shape.size() - 2]))) {
          fail(n["shape"], fmt::format("domain '{}' needs {}: a shape of at least 2 dimensions{}", a.domain,
                                       spd ? "square matrices" : "matrices", spd ? ", the last two equal" : ""));
        }
      }
      if (n["low"]) a.low = number<double>(n["low"], "low");
      if (n["high"]) a.high = number<double>(n["high"], "high");
      if (a.domain == "uniform" && a.low > a.high) fail(n, "domain 'uniform' needs low <= high");
      if ((a.domain == "int" || a.domain == "index") && !(a.low < a.high)) {
        if (a.domain != "index" || a.high <= 0) fail(n, fmt::format("domain '{}' needs low < high", a.domain));
      }
      if (n["dtype"]) a.dtype = dtype(n["dtype"]);
      if (n["noncontiguous"]) a.noncontiguous = boolean(n["noncontiguous"], "noncontiguous");
      if (n["unique"]) {
        a.unique = boolean(n["unique"], "unique");
        if (a.unique && a.domain != "index") fail(n["unique"], "unique needs domain 'index'");
        int64_t numel = 1;
        for (const int64_t size : a.shape) numel *= size;
        if (a.unique && static_cast<double>(numel) > a.high) {
          fail(n["unique"], fmt::format("{} unique indices do not fit below high={:g}", numel, a.high));
        }
      }
      if (n["layout"]) {
        a.layout = scalar(n["layout"], "layout");
        static const std::vector<std::string> kLayouts = {"strided", "sparse_coo", "sparse_csr"};
        if (std::find(kLayouts.begin(), kLayouts.end(), a.layout) == kLayouts.end()) {
          fail(n["layout"], fmt::format("unknown layout '{}'{}", a.layout, did_you_mean(a.layout, kLayouts)));
        }
        if (a.layout == "sparse_csr" && a.shape.size() != 2) fail(n["layout"], "layout sparse_csr needs a 2-d shape");
        if (a.layout != "strided" && a.noncontiguous) fail(n["layout"], "a sparse tensor cannot be noncontiguous");
      }
      if (n["quantized"]) quantized(n["quantized"], a);
      return a;
    }
    if (n.IsSequence()) {
      if (n.size() > 64) fail(n, "more than 64 values in a list");
      if (n.size() && n[0].IsMap()) {  // [{shape: ...}, ...]: a tensor list, as {tensors: [...]}
        a.kind = ArgSpec::Kind::kTensorList;
        for (const auto& t : n) {
          if (!t.IsMap()) fail(t, "a list of tensors holds tensors only");
          a.tensors.push_back(arg(t, depth + 1));
        }
        return a;
      }
      bool all_int = true, all_bool = n.size() > 0;
      for (const auto& e : n) {
        int64_t i = 0;
        double f = 0;
        bool b = false;
        if (!e.IsScalar()) fail(e, "a list argument holds numbers, booleans or tensors only");
        all_int &= YAML::convert<int64_t>::decode(e, i);
        all_bool &= !YAML::convert<double>::decode(e, f) && YAML::convert<bool>::decode(e, b);
      }
      if (all_bool) {
        a.kind = ArgSpec::Kind::kBoolList;
        for (const auto& e : n) a.bools.push_back(e.as<bool>());
        return a;
      }
      a.kind = all_int ? ArgSpec::Kind::kIntList : ArgSpec::Kind::kFloatList;
      for (const auto& e : n) {
        if (all_int) {
          a.ints.push_back(e.as<int64_t>());
        } else {
          a.floats.push_back(number<double>(e, "a list value"));
        }
      }
      return a;
    }
    const std::string text = n.Scalar();
    int64_t i = 0;
    double f = 0;
    bool b = false;
    if (YAML::convert<int64_t>::decode(n, i)) {
      a.kind = ArgSpec::Kind::kInt;
      a.i = i;
    } else if (YAML::convert<double>::decode(n, f)) {
      a.kind = ArgSpec::Kind::kFloat;
      a.f = f;
    } else if (YAML::convert<bool>::decode(n, b)) {
      a.kind = ArgSpec::Kind::kBool;
      a.b = b;
    } else {
      a.kind = ArgSpec::Kind::kString;
      a.s = text;
    }
    return a;
  }

  // values: [[1, 2], [3, nan]]: row-major values (numbers, or nan, -nan, inf, -inf), the shape theirs.
  void values(const YAML::Node& n, ArgSpec& a) const {
    std::vector<int64_t> dims;
    if (n.IsScalar()) {  // a 0-d tensor: values: 2.5
      YAML::Node list(YAML::NodeType::Sequence);
      list.push_back(n);
      collect_values(list, 0, dims, a.values);
      a.shape = {};
      return;
    }
    if (!n.IsSequence()) fail(n, "values must be a number, or a list (of lists) of numbers");
    collect_values(n, 0, dims, a.values);
    a.shape = dims;
  }
  void collect_values(const YAML::Node& n, size_t depth, std::vector<int64_t>& dims, std::vector<double>& out) const {
    if (depth > 8) fail(n, "values nest more than 8 deep");
    const auto size = static_cast<int64_t>(n.size());
    if (dims.size() == depth) {
      dims.push_back(size);
    } else if (dims[depth] != size) {
      fail(n, fmt::format("values: a list of {} where its neighbours have {}", size, dims[depth]));
    }
    for (const auto& e : n) {
      if (e.IsSequence()) {
        collect_values(e, depth + 1, dims, out);
        continue;
      }
      if (dims.size() != depth + 1) fail(e, "values: a number where a list was expected");
      const std::string text = scalar(e, "a value");
      double v = 0;
      if (text == "nan" || text == "-nan") {
        v = std::copysign(std::numeric_limits<double>::quiet_NaN(), text[0] == '-' ? -1.0 : 1.0);
      } else if (text == "inf" || text == "-inf") {
        v = text[0] == '-' ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
      } else if (bool b = false; YAML::convert<bool>::decode(e, b) && !YAML::convert<double>::decode(e, v)) {
        v = b ? 1 : 0;
      } else {
        v = number<double>(e, "a value");
      }
      out.push_back(v);
    }
    if (out.size() > (size_t{1} << 16)) fail(n, "more than 65,536 values");
  }

  // strides, offset, memory_format, on_cpu: how the tensor is laid out and where it stays.
  void view(const YAML::Node& n, ArgSpec& a) const {
    if (n["strides"]) {
      if (!n["strides"].IsSequence()) fail(n["strides"], "strides must be a list of integers");
      for (const auto& e : n["strides"]) {
        const int64_t stride = number<int64_t>(e, "a stride");
        if (stride < 0) fail(e, "a stride must not be negative");
        a.strides.push_back(stride);
      }
      if (a.strides.size() != a.shape.size()) {
        fail(n["strides"], fmt::format("{} strides for a shape of {} dimensions", a.strides.size(), a.shape.size()));
      }
    }
    if (n["offset"]) {
      a.offset = number<int64_t>(n["offset"], "offset");
      if (a.offset < 0 || a.offset > (int64_t{1} << 24)) fail(n["offset"], "offset must be within [0, 16M]");
    }
    if (n["memory_format"]) {
      a.memory_format = scalar(n["memory_format"], "memory_format");
      static const std::vector<std::string> kFormats = {"channels_last", "channels_last_3d"};
      if (std::find(kFormats.begin(), kFormats.end(), a.memory_format) == kFormats.end()) {
        fail(n["memory_format"],
             fmt::format("unknown memory_format '{}'{}", a.memory_format, did_you_mean(a.memory_format, kFormats)));
      }
      if (a.shape.size() != (a.memory_format == "channels_last" ? 4u : 5u)) {
        fail(n["memory_format"], fmt::format("{} needs a shape of {} dimensions", a.memory_format,
                                             a.memory_format == "channels_last" ? 4 : 5));
      }
      if (!a.strides.empty()) fail(n["memory_format"], "give strides or a memory_format, not both");
    }
    if (n["on_cpu"]) {
      a.on_cpu = boolean(n["on_cpu"], "on_cpu");
    }
    if ((!a.strides.empty() || a.offset || !a.memory_format.empty()) && a.noncontiguous) {
      fail(n["noncontiguous"], "give noncontiguous or a layout of strides, offset or memory_format, not both");
    }
  }

  KnownFailure condition(const YAML::Node& e, const char* what) const {
    check_keys(e, {"reason", "targets", "dtypes", "macos", "torch"}, what);
    KnownFailure k;
    k.where = at(e);
    if (!e["reason"]) fail(e, fmt::format("{} needs a reason", what));
    k.reason = scalar(e["reason"], "reason");
    if (e["dtypes"]) k.dtypes = dtype_list(e["dtypes"]);
    if (e["targets"]) {
      const std::vector<std::string>& targets = target_names();
      if (!e["targets"].IsSequence()) fail(e["targets"], "targets must be a list");
      for (const auto& t : e["targets"]) {
        const std::string target = scalar(t, "target");
        if (std::find(targets.begin(), targets.end(), target) == targets.end()) {
          fail(t, fmt::format("unknown target '{}'{}", target, did_you_mean(target, targets)));
        }
        k.targets.push_back(target);
      }
    }
    if (const YAML::Node m = e["macos"]) {
      check_keys(m, {"min", "max"}, "macos (a range of major versions, {min: 13, max: 14})");
      if (m["min"]) k.macos_min = number<int>(m["min"], "macos min");
      if (m["max"]) k.macos_max = number<int>(m["max"], "macos max");
      if (k.macos_max && k.macos_min > k.macos_max) fail(m, "macos: min is above max");
    }
    if (const YAML::Node t = e["torch"]) torch_range(t, k.torch_min, k.torch_max);
    return k;
  }

  void torch_range(const YAML::Node& t, std::string& min, std::string& max) const {
    check_keys(t, {"min", "max"}, "torch (a range of versions, {min: \"2.0\", max: \"2.5\"})");
    static const std::regex kVersion(R"(\d+(\.\d+){0,2})");
    for (const char* bound : {"min", "max"}) {
      if (!t[bound]) continue;
      const std::string v = scalar(t[bound], "a torch version");
      if (!std::regex_match(v, kVersion)) fail(t[bound], fmt::format("'{}' is not a version like 2.5 or 2.5.1", v));
      (std::string(bound) == "min" ? min : max) = v;
    }
  }

  // An entry with `torch: {min, max}` is for those libtorch versions only: with another, it is ignored, and its
  // operator (gone from, or not yet in, that release) need not exist.
  bool for_other_torch(const YAML::Node& n) const {
    if (!n.IsMap() || !n["torch"]) return false;
    std::string min, max;
    torch_range(n["torch"], min, max);
    return !within_versions(torch_version_, min, max);
  }

  OpSpec op(const YAML::Node& key, const YAML::Node& n) const {
    OpSpec o;
    o.name = op_name(key);
    o.where = at(key);
    if (n.IsNull()) return o;
    check_keys(n, {"dtypes", "compare", "tolerance", "skip", "xfail", "group", "description", "samples", "torch"},
               fmt::format("'{}'", o.name).c_str());
    if (n["dtypes"]) o.dtypes = dtype_list(n["dtypes"]);
    if (n["compare"]) {
      const std::string mode = scalar(n["compare"], "compare");
      if (mode == "values")
        o.compare = CompareMode::kValues;
      else if (mode == "shape")
        o.compare = CompareMode::kShape;
      else if (mode == "sorted")
        o.compare = CompareMode::kSorted;
      else if (mode == "indices_by_values")
        o.compare = CompareMode::kIndicesByValues;
      else if (mode == "vectors_up_to_phase")
        o.compare = CompareMode::kVectorsUpToPhase;
      else
        fail(
            n["compare"],
            fmt::format("unknown comparison '{}'{}", mode,
                        did_you_mean(mode, {"values", "shape", "sorted", "indices_by_values", "vectors_up_to_phase"})));
    }
    if (n["tolerance"]) o.tolerance = tolerance(n["tolerance"]);
    if (const YAML::Node k = n["skip"]) {
      if (k.IsSequence()) {
        for (const auto& e : k) o.skip_when.push_back(condition(e, "a skip entry"));
      } else {
        o.skip = scalar(k, "skip (its reason, or a list of {reason, targets, dtypes, macos, torch})");
      }
    }
    if (n["group"]) o.group = scalar(n["group"], "group");
    if (n["description"]) o.description = scalar(n["description"], "description");
    if (const YAML::Node x = n["xfail"]) {
      if (!x.IsSequence()) fail(x, "xfail must be a list of {reason, targets, dtypes, macos, torch}");
      for (const auto& e : x) o.xfail.push_back(condition(e, "an xfail entry"));
    }
    if (const YAML::Node s = n["samples"]) {
      if (!s.IsSequence()) fail(s, "samples must be a list");
      if (s.size() > 64) fail(s, "more than 64 samples");
      std::set<std::string> names;
      for (const auto& e : s) {
        check_keys(e, {"name", "args"}, "a sample");
        SampleSpec sample;
        sample.where = at(e);
        sample.name = e["name"] ? scalar(e["name"], "name") : fmt::format("sample{}", o.samples.size());
        if (!names.insert(sample.name).second) fail(e, fmt::format("duplicate sample name '{}'", sample.name));
        if (const YAML::Node args = e["args"]) sample_args(args, sample);
        o.samples.push_back(std::move(sample));
      }
    }
    return o;
  }

  void sample_args(const YAML::Node& args, SampleSpec& sample) const {
    if (!args.IsMap()) fail(args, "args must map argument names to values");
    for (const auto& kv : args) {
      const std::string arg_name = scalar(kv.first, "argument name");
      if (sample.args.count(arg_name)) fail(kv.first, fmt::format("duplicate argument '{}'", arg_name));
      sample.args[arg_name] = arg(kv.second);
    }
  }

  Spec spec(const YAML::Node& root) const {
    Spec s;
    s.path = path_;
    s.dtypes = default_dtype_names();
    if (root.IsNull()) return s;
    check_keys(root, {"version", "defaults", "ops"}, "the spec");
    if (root["version"] && number<int>(root["version"], "version") != 1)
      fail(root["version"], "only version 1 is known");
    if (const YAML::Node d = root["defaults"]) {
      check_keys(d, {"dtypes", "shape", "tolerance"}, "defaults");
      if (d["dtypes"]) s.dtypes = dtype_list(d["dtypes"]);
      if (d["shape"]) s.shape = shape(d["shape"]);
      if (d["tolerance"]) s.tolerance = tolerance(d["tolerance"]);
    }
    if (const YAML::Node ops = root["ops"]) {
      if (!ops.IsMap()) fail(ops, "ops must map operator names to their entries");
      std::map<std::string, SourceLocation> seen;
      for (const auto& kv : ops) {
        if (for_other_torch(kv.second)) continue;
        OpSpec o = op(kv.first, kv.second);
        if (auto it = seen.find(o.name); it != seen.end()) {
          fail(kv.first, fmt::format("'{}' is listed twice (first at line {})", o.name, it->second.line));
        }
        seen[o.name] = o.where;
        s.ops[o.name] = std::move(o);
      }
    }
    return s;
  }

 private:
  std::string path_;
  const std::vector<std::string>& known_ops_;
  std::unordered_set<std::string> known_;
  const std::string torch_version_;
  const int64_t max_numel_;

  std::string max_numel_text() const { return max_numel_ == (int64_t{1} << 24) ? "16M" : "2^40"; }
};

}  // namespace

bool within_versions(const std::string& version, const std::string& min, const std::string& max) {
  return (min.empty() || compare_versions(version, min) >= 0) && (max.empty() || compare_versions(version, max) <= 0);
}

bool KnownFailure::applies(const std::string& target, const std::string& dtype, int macos_major,
                           const std::string& torch_version) const {
  if (!targets.empty() && std::find(targets.begin(), targets.end(), target) == targets.end()) return false;
  if (!dtypes.empty() && std::find(dtypes.begin(), dtypes.end(), dtype) == dtypes.end()) return false;
  if (macos_min || macos_max) {
    if (macos_major == 0) return false;
    if (macos_min && macos_major < macos_min) return false;
    if (macos_max && macos_major > macos_max) return false;
  }
  return within_versions(torch_version, torch_min, torch_max);
}

const OpSpec* Spec::find(const std::string& op_name) const {
  if (auto it = ops.find(op_name); it != ops.end()) return &it->second;
  if (auto it = ops.find(base_operator_name(op_name)); it != ops.end()) return &it->second;
  return nullptr;
}

const Tolerance* Spec::tolerance_for(const OpSpec* op, const std::string& dtype) const {
  for (const auto* table : {op ? &op->tolerance : nullptr, &tolerance}) {
    if (!table) continue;
    if (auto it = table->find(dtype); it != table->end()) return &it->second;
    if (auto it = table->find("*"); it != table->end()) return &it->second;
  }
  return nullptr;
}

Spec parse_spec(const std::string& text, const std::string& path, const std::vector<std::string>& known_ops,
                const std::string& torch_version) {
  Reader reader(path, known_ops, torch_version.empty() ? compat::kTorchVersion : torch_version);
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw UserError(fmt::format("invalid YAML: {}", e.msg),
                    e.mark.is_null() ? SourceLocation{path} : SourceLocation{path, e.mark.line + 1, e.mark.column + 1});
  }
  try {
    return reader.spec(root);
  } catch (const YAML::Exception& e) {
    throw UserError(fmt::format("invalid spec: {}", e.msg),
                    e.mark.is_null() ? SourceLocation{path} : SourceLocation{path, e.mark.line + 1, e.mark.column + 1});
  }
}

Spec load_spec(const std::string& path, const std::vector<std::string>& known_ops, const std::string& torch_version) {
  return parse_spec(read_file(path), path, known_ops, torch_version);
}

SampleSpec parse_sample_args(const YAML::Node& args, const std::string& path, const std::string& name) {
  static const std::vector<std::string> kNoOps;
  const Reader reader(path, kNoOps, compat::kTorchVersion, int64_t{1} << 40);
  SampleSpec sample;
  sample.name = name;
  sample.where = reader.at(args);
  try {
    reader.sample_args(args, sample);
  } catch (const YAML::Exception& e) {
    throw UserError(fmt::format("invalid sample: {}", e.msg),
                    e.mark.is_null() ? SourceLocation{path} : SourceLocation{path, e.mark.line + 1, e.mark.column + 1});
  }
  return sample;
}

}  // namespace mps_audit
