// native_functions.yaml reader (yaml-cpp). Only the fields that decide kernel registration are read;
// fields this reader does not know are ignored, so that newer releases still load.
#include "registry/native_functions.h"

#include <map>
#include <mutex>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "common/output_file.h"
#include "common/text.h"

namespace mps_audit {
namespace {

SourceLocation location_of(const YAML::Mark& mark, const std::string& file) {
  if (mark.is_null()) return {file};
  return {file, mark.line + 1, mark.column + 1};
}

std::string scalar(const YAML::Node& node, const char* field, const std::string& file) {
  if (!node.IsScalar()) {
    throw UserError(fmt::format("'{}' must be a string", field), location_of(node.Mark(), file));
  }
  return node.Scalar();
}

bool boolean(const YAML::Node& node, const char* field, const std::string& file) {
  bool value = false;
  if (!node.IsScalar() || !YAML::convert<bool>::decode(node, value)) {
    throw UserError(fmt::format("'{}' must be True or False", field), location_of(node.Mark(), file));
  }
  return value;
}

NativeFunctionDecl parse_entry(const YAML::Node& entry, const std::string& file) {
  if (!entry.IsMap()) {
    throw UserError("expected an operator declaration (a mapping with 'func:')", location_of(entry.Mark(), file));
  }
  const YAML::Node func = entry["func"];
  if (!func) throw UserError("operator declaration without 'func:'", location_of(entry.Mark(), file));

  NativeFunctionDecl decl;
  decl.func = scalar(func, "func", file);
  decl.where = location_of(func.Mark(), file);
  const size_t paren = decl.func.find('(');
  if (paren == std::string::npos || paren == 0 || decl.func.find("->", paren) == std::string::npos) {
    throw UserError(fmt::format("'func' must read 'name(arguments) -> returns', got '{}'", decl.func), decl.where);
  }
  std::string qualified = decl.func.substr(0, paren);
  if (size_t colons = qualified.find("::"); colons != std::string::npos) {
    decl.ns = qualified.substr(0, colons);
    qualified = qualified.substr(colons + 2);
  }
  decl.name = qualified;

  if (const YAML::Node dispatch = entry["dispatch"]) {
    if (!dispatch.IsMap()) {
      throw UserError("'dispatch' must map dispatch keys to kernels", location_of(dispatch.Mark(), file));
    }
    decl.has_dispatch_section = true;
    for (const auto& kv : dispatch) {
      const std::string keys = scalar(kv.first, "dispatch", file);
      const std::string kernel = scalar(kv.second, "dispatch", file);
      for (auto& key : split_list(keys)) decl.dispatch.emplace_back(std::move(key), kernel);
    }
  }
  // torchgen turns a `ufunc_inner_loop:` into CPU and CUDA kernels (UFUNC_DISPATCH_KEYS).
  if (entry["ufunc_inner_loop"]) {
    for (const char* key : {"CPU", "CUDA"}) {
      if (!decl.kernel_for(key)) decl.dispatch.emplace_back(key, "ufunc_inner_loop");
    }
    decl.has_dispatch_section = true;
  }
  if (const YAML::Node n = entry["structured"]) decl.structured = boolean(n, "structured", file);
  if (const YAML::Node n = entry["structured_delegate"]) {
    decl.structured_delegate = scalar(n, "structured_delegate", file);
  }
  if (const YAML::Node n = entry["manual_kernel_registration"]) {
    decl.manual_kernel_registration = boolean(n, "manual_kernel_registration", file);
  }
  if (const YAML::Node n = entry["autogen"]) decl.autogen = split_list(scalar(n, "autogen", file));
  if (const YAML::Node n = entry["tags"]) {
    if (n.IsSequence()) {
      for (const auto& tag : n) decl.tags.push_back(scalar(tag, "tags", file));
    } else {
      decl.tags = split_list(scalar(n, "tags", file));
    }
  }
  return decl;
}

}  // namespace

std::string NativeFunctionDecl::qualified_name() const {
  return ns + "::" + name;
}

const std::string* NativeFunctionDecl::kernel_for(std::string_view key) const {
  for (const auto& [k, kernel] : dispatch) {
    if (k == key) return &kernel;
  }
  return nullptr;
}

bool NativeFunctionDecl::is_inplace() const {
  // torchgen's BaseOperatorName: dunder methods are in-place when spelled __iop__, others end in '_'.
  std::string_view base(name);
  base = base.substr(0, base.find('.'));
  if (base.size() > 4 && base.substr(0, 2) == "__" && base.substr(base.size() - 2) == "__") {
    static const char* const kAugmented[] = {"add",    "sub",    "mul", "div", "mod", "pow",
                                             "lshift", "rshift", "and", "xor", "or"};
    std::string_view inner = base.substr(2, base.size() - 4);
    if (inner.empty() || inner[0] != 'i') return false;
    for (const char* op : kAugmented) {
      if (inner.substr(1) == op) return true;
    }
    return false;
  }
  return !base.empty() && base.back() == '_';
}

bool NativeFunctionDecl::has_tag(std::string_view tag) const {
  for (const auto& t : tags) {
    if (t == tag) return true;
  }
  return false;
}

size_t NativeFunctionDecl::return_count() const {
  std::string_view returns(func);
  returns = returns.substr(returns.rfind("->") + 2);
  while (!returns.empty() && returns.front() == ' ') returns.remove_prefix(1);
  if (returns.empty() || returns.front() != '(') return 1;
  size_t depth = 0, count = 1;
  bool any = false;
  for (char c : returns.substr(1)) {
    if (c == '(' || c == '[') ++depth;
    if ((c == ')' || c == ']') && depth-- == 0) break;
    if (c == ',' && depth == 0) ++count;
    if (c != ' ' && c != ')') any = true;
  }
  return any ? count : 0;
}

std::vector<NativeFunctionDecl> parse_native_functions(const std::string& text, const std::string& file) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw UserError(fmt::format("invalid YAML: {}", e.msg), location_of(e.mark, file));
  }
  if (!root.IsSequence()) {
    throw UserError("expected a list of operator declarations ('- func: ...')", location_of(root.Mark(), file));
  }
  std::vector<NativeFunctionDecl> decls;
  decls.reserve(root.size());
  std::unordered_map<std::string, size_t> index;
  try {
    for (const auto& entry : root) {
      NativeFunctionDecl decl = parse_entry(entry, file);
      auto [it, inserted] = index.emplace(decl.qualified_name(), decls.size());
      if (!inserted) {
        throw UserError(
            fmt::format("operator '{}' is declared twice (first at line {})", decl.name, decls[it->second].where.line),
            decl.where);
      }
      decls.push_back(std::move(decl));
    }
  } catch (const YAML::Exception& e) {
    throw UserError(fmt::format("invalid YAML: {}", e.msg), location_of(e.mark, file));
  }
  for (const auto& decl : decls) {
    if (!decl.structured_delegate.empty() && !index.count(decl.ns + "::" + decl.structured_delegate)) {
      throw UserError(fmt::format("'{}' delegates to unknown operator '{}'", decl.name, decl.structured_delegate),
                      decl.where);
    }
  }
  return decls;
}

std::vector<NativeFunctionDecl> read_native_functions(const std::string& path) {
  // A file read before with the same text is not parsed again: a run parses its release's YAML before it forks its
  // workers (Note [Forked workers] in run/worker_process.cc), and each worker activating the MPS emulator, one for each
  // operator whose fault a worker caught among them (Note [Caught faults] in probe/caught_faults.cc), would otherwise
  // parse it again, a third of a second of a core each.
  static std::mutex mutex;
  static std::map<std::string, std::pair<std::string, std::vector<NativeFunctionDecl>>> parsed;  // path -> text, decls
  std::string text = read_file(path);
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = parsed.find(path); it != parsed.end() && it->second.first == text) return it->second.second;
  }
  std::vector<NativeFunctionDecl> decls = parse_native_functions(text, path);
  std::lock_guard<std::mutex> lock(mutex);
  parsed[path] = {std::move(text), decls};
  return decls;
}

}  // namespace mps_audit
