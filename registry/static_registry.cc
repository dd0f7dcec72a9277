// Static classification of native_functions.yaml declarations.
#include "registry/static_registry.h"

#include <unordered_map>

#include <fmt/format.h>

#include "common/text.h"
#include "registry/dispatch_keys.h"

namespace mps_audit {

// Note [Static classification]
// For each declaration, in the dispatcher's precedence (see OperatorEntry::computeDispatchTableEntryWithDebug):
//  1. native: the key is in its `dispatch:` section; or it has `structured_delegate: X.out` and X.out has the key
//     (torchgen registers the functional and in-place variants of a structured group with the out variant's
//     kernel); or the key is Meta and the operator belongs to a structured group (torchgen generates Meta
//     kernels for those), or is an in-place operator with one return and no composite kernel (torchgen
//     generates a Meta wrapper for those too).
//     A hand registration from the extra registrations overrides this: native, cpu_fallback, or stub.
//  2. composite_explicit: CompositeExplicitAutogradNonFunctional, declared or generated (torchgen generates one
//     for the functional and in-place variants of every structured group); then CompositeExplicitAutograd,
//     declared or generated (every operator listed under another one's `autogen:` gets one, unless that one
//     is CompositeImplicitAutograd and not tagged `core`: torchgen generates nothing for those).
//  3. composite_implicit: CompositeImplicitAutogradNestedTensor for nested-tensor keys; then
//     CompositeImplicitAutograd, declared, or implied by a declaration with neither `dispatch:` nor
//     `structured_delegate:` (unless its kernels are registered by hand: `manual_kernel_registration`).
//  4. none.
// An alias applies only where the linked c10 says it covers the key (alias_includes).

namespace {

struct Classified {
  OpStatus status = OpStatus::kNone;
  std::string kernel;
  std::string source;
  std::string note;
};

std::string line_ref(const NativeFunctionDecl& d) {
  return fmt::format("native_functions.yaml:{}", d.where.line);
}

bool has_composite_kernel(const NativeFunctionDecl& d) {
  return d.kernel_for(kCompositeExplicitNonFunctional) || d.kernel_for(kCompositeExplicit) ||
         d.kernel_for(kCompositeImplicit) || (!d.has_dispatch_section && d.structured_delegate.empty());
}

Classified classify(const NativeFunctionDecl& d, const NativeFunctionDecl* delegate, const std::string& key) {
  const std::string src = line_ref(d);
  if (const std::string* k = d.kernel_for(key)) return {OpStatus::kNative, *k, src, ""};
  if (delegate) {
    if (const std::string* k = delegate->kernel_for(key)) {
      return {OpStatus::kNative, *k, src, fmt::format("kernel of its structured delegate {}", delegate->name)};
    }
  }
  if (key == "Meta") {
    if (d.structured || delegate) return {OpStatus::kNative, "", src, "Meta kernel generated for a structured op"};
    if (d.is_inplace() && d.return_count() == 1 && !has_composite_kernel(d) && !d.manual_kernel_registration) {
      return {OpStatus::kNative, "", src, "Meta kernel generated for an in-place op"};
    }
  }
  if (alias_includes(kCompositeExplicitNonFunctional, key)) {
    if (const std::string* k = d.kernel_for(kCompositeExplicitNonFunctional)) {
      return {OpStatus::kCompositeExplicit, *k, src, ""};
    }
    if (delegate) {
      return {OpStatus::kCompositeExplicit, "", src,
              fmt::format("generated from its structured delegate {}", delegate->name)};
    }
  }
  if (alias_includes(kCompositeExplicit, key)) {
    if (const std::string* k = d.kernel_for(kCompositeExplicit)) return {OpStatus::kCompositeExplicit, *k, src, ""};
  }
  if (alias_includes(kCompositeImplicitNested, key)) {
    if (const std::string* k = d.kernel_for(kCompositeImplicitNested)) {
      return {OpStatus::kCompositeImplicit, *k, src, ""};
    }
  }
  if (alias_includes(kCompositeImplicit, key)) {
    if (const std::string* k = d.kernel_for(kCompositeImplicit)) return {OpStatus::kCompositeImplicit, *k, src, ""};
    if (!d.has_dispatch_section && d.structured_delegate.empty() && !d.manual_kernel_registration) {
      return {OpStatus::kCompositeImplicit, "", src, "no dispatch section: CompositeImplicitAutograd"};
    }
  }
  return {OpStatus::kNone, "", src, ""};
}

}  // namespace

Registry classify_native_functions(const std::vector<NativeFunctionDecl>& decls,
                                   const std::vector<ExtraRegistration>& extra, const std::string& key) {
  std::unordered_map<std::string, const NativeFunctionDecl*> by_name;
  for (const auto& d : decls) by_name.emplace(d.qualified_name(), &d);

  Registry reg;
  reg.key = key;
  reg.origin = "native_functions";
  std::unordered_map<std::string, size_t> index;
  auto add = [&](RegistryEntry e) {
    index.emplace(e.name, reg.ops.size());
    reg.ops.push_back(std::move(e));
  };
  for (const auto& d : decls) {
    const NativeFunctionDecl* delegate = nullptr;
    if (!d.structured_delegate.empty()) delegate = by_name.at(d.ns + "::" + d.structured_delegate);
    Classified c = classify(d, delegate, key);
    add({d.qualified_name(), c.status, d.func, c.kernel, c.source, c.note});
    // torchgen generates no variants for CompositeImplicitAutograd operators (they decompose anyway),
    // except those tagged `core` (since 2.0).
    const bool implicit = d.kernel_for(kCompositeImplicit) || (!d.has_dispatch_section && !delegate);
    const bool generates = !implicit || d.has_tag("core");
    for (const auto& generated : generates ? d.autogen : std::vector<std::string>{}) {
      const std::string name = d.ns + "::" + generated;
      if (by_name.count(name) || index.count(name)) continue;  // declared explicitly as well
      const bool covered = alias_includes(kCompositeExplicit, key);
      add({name, covered ? OpStatus::kCompositeExplicit : OpStatus::kNone, "", "", line_ref(d),
           fmt::format("generated by torchgen from {} (autogen)", d.name)});
    }
  }

  std::vector<std::string> names;
  for (const auto& extra_reg : extra) {
    auto it = index.find(extra_reg.op);
    if (it == index.end()) {
      if (names.empty()) {
        for (const auto& e : reg.ops) names.push_back(e.name);
      }
      throw UserError(fmt::format("unknown operator '{}'{}", extra_reg.op, did_you_mean(extra_reg.op, names)),
                      extra_reg.where);
    }
    RegistryEntry& e = reg.ops[it->second];
    e.source = extra_reg.where.to_string();
    e.kernel.clear();
    switch (extra_reg.kind) {
      case ExtraKind::kNative:
        e.status = OpStatus::kNative;
        e.note = "registered by hand";
        break;
      case ExtraKind::kCpuFallback:
        e.status = OpStatus::kCpuFallback;
        e.note = "registered by hand; always runs the CPU fallback";
        break;
      case ExtraKind::kStub:
        e.status = OpStatus::kNative;
        e.note = "registered by hand as a stub that raises";
        break;
    }
  }
  sort_entries(reg.ops);
  return reg;
}

}  // namespace mps_audit
