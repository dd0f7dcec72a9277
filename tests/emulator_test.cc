// Tests of the MPS emulator against what ../shared/MPS_FACTS.md says real MPS does. The process runs with the
// emulator active (emulator_test_main.cc); expectations that depend on the release come from its registry.
#include <sys/wait.h>
#include <unistd.h>

#include <sstream>

#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/ops/_efficientzerotensor.h>
#include <ATen/ops/_grid_sampler_2d_cpu_fallback.h>
#include <ATen/ops/add.h>
#include <ATen/ops/allclose.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/conv2d.h>
#include <ATen/ops/conv3d.h>
#include <ATen/ops/conv_transpose2d.h>
#include <ATen/ops/cos.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/equal.h>
#include <ATen/ops/exp.h>
#include <ATen/ops/heaviside.h>
#include <ATen/ops/index.h>
#include <ATen/ops/max.h>
#include <ATen/ops/nonzero.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/sin.h>
#include <ATen/ops/tan.h>
#include <gtest/gtest.h>

#include "common/torch_compat.h"
#include "emu/mps_emulator.h"
#include "probe/caught_faults.h"
#include "probe/dispatch_trace.h"
#include "registry/extra_registrations.h"
#include "registry/native_functions.h"
#include "registry/release_data.h"
#include "registry/static_registry.h"

namespace mps_audit {
namespace {

const c10::Device kMps(c10::DeviceType::MPS, 0);

const emu::EmulatorInfo& info() {
  return *emu::active_mps_emulator();
}

// The active release's MPS classification.
const Registry& release() {
  static const Registry reg = [] {
    ReleaseFiles files = resolve_release(info().release_dir, "MPS");
    std::vector<ExtraRegistration> extra;
    if (!files.extra_registrations.empty()) extra = read_extra_registrations(files.extra_registrations);
    return classify_native_functions(read_native_functions(files.native_functions), extra, "MPS");
  }();
  return reg;
}

OpStatus status_in_release(const std::string& name) {
  return release().find(name)->status;
}

at::Tensor sample(c10::ScalarType type) {
  at::Tensor t = at::arange(-3, 9, at::TensorOptions().dtype(at::kFloat)).reshape({3, 4});
  if (type == at::kBool) return t.gt(0);
  return t.to(type);
}

TEST(Emulator, RoundTripsEveryAcceptedDtype) {
  std::vector<c10::ScalarType> types = {at::kFloat, at::kHalf, at::kLong, at::kInt,      at::kShort,
                                        at::kChar,  at::kByte, at::kBool, at::kBFloat16, at::kComplexFloat};
  for (auto type : types) {
    at::Tensor cpu = sample(type);
    at::Tensor mps = cpu.to(kMps);
    EXPECT_EQ(mps.device(), kMps) << type;
    EXPECT_EQ(mps.scalar_type(), type);
    EXPECT_TRUE(at::equal(mps.to(at::kCPU), cpu)) << type;
  }
}

TEST(Emulator, RefusesFloat64AndComplex128WithMpsMessage) {
  for (auto type : {at::kDouble, at::kComplexDouble}) {
    try {
      sample(at::kFloat).to(type).to(kMps);
      FAIL() << "expected a TypeError for " << type;
    } catch (const c10::TypeError& e) {
      EXPECT_NE(std::string(e.what()).find("MPS framework doesn't support float64"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(at::empty({2}, at::TensorOptions().device(kMps).dtype(at::kDouble)), c10::TypeError);
}

TEST(Emulator, NativeOpsComputeLikeTheCpuAndLookNativeInATrace) {
  at::Tensor cpu = sample(at::kFloat);
  at::Tensor x = cpu.to(kMps);
  at::Tensor y;
  {
    DispatchTrace trace;
    y = at::sin(x);
    EXPECT_TRUE(trace.ran("aten::sin"));
    EXPECT_FALSE(trace.ran("aten::_to_cpu"));
  }
  ASSERT_EQ(status_in_release("aten::sin"), OpStatus::kNative);
  EXPECT_EQ(y.device(), kMps);
  EXPECT_TRUE(at::equal(y.to(at::kCPU), at::sin(cpu)));
  EXPECT_FLOAT_EQ(x.sum().item<float>(), cpu.sum().item<float>());
}

TEST(Emulator, ConvolutionReachesTheMpsOnlyKernelsAsOnAMac) {
  const at::Tensor input = at::randn({2, 3, 6, 6}), weight = at::randn({4, 3, 3, 3}), bias = at::randn({4});
  at::Tensor y;
  {
    DispatchTrace trace;
    y = at::conv2d(input.to(kMps), weight.to(kMps), bias.to(kMps), {1, 1}, {1, 1});
    EXPECT_TRUE(trace.ran("aten::_mps_convolution"));
    EXPECT_FALSE(trace.ran("aten::_to_cpu"));
  }
  EXPECT_EQ(y.device(), kMps);
  EXPECT_TRUE(at::allclose(y.to(at::kCPU), at::conv2d(input, weight, bias, {1, 1}, {1, 1}), 1e-4, 1e-5));
  // Transposed, with the bias added after the MPS kernel, as native/Convolution.cpp does.
  const at::Tensor t =
      at::conv_transpose2d(input.to(kMps), weight.transpose(0, 1).contiguous().to(kMps), bias.to(kMps));
  EXPECT_TRUE(
      at::allclose(t.to(at::kCPU), at::conv_transpose2d(input, weight.transpose(0, 1).contiguous(), bias), 1e-4, 1e-5));
  // Half precision, which Metal convolves and the CPU kernel does not.
  const at::Tensor h = at::conv2d(input.to(at::kHalf).to(kMps), weight.to(at::kHalf).to(kMps));
  EXPECT_EQ(h.scalar_type(), at::kHalf);
  // 1.13's _mps_convolution refuses 5-d inputs.
  if (info().release_version.rfind("1.", 0) == 0) {
    try {
      at::conv3d(at::randn({1, 3, 4, 4, 4}).to(kMps), at::randn({2, 3, 2, 2, 2}).to(kMps));
      FAIL() << "expected conv3d to be refused";
    } catch (const c10::Error& e) {
      EXPECT_NE(std::string(e.what()).find("Conv3D is not supported on MPS"), std::string::npos) << e.what();
    }
  }
}

TEST(Emulator, DimensionNamesFollowTheLinkedLibtorchsRules) {
  if (!compat::kNamedTensors) GTEST_SKIP() << compat::kNoNamedTensors;
  at::Tensor cpu = sample(at::kFloat);
  compat::set_dimension_names(cpu, {"dimname::rows", "dimname::cols"});
#if MPS_AUDIT_TORCH_AT_LEAST(2, 0)
  // Newer libtorch refuses names on MPS tensors (NamedTensor.cpp), on a Mac too: copying a named tensor fails.
  try {
    cpu.to(kMps);
    FAIL() << "expected a named tensor to be refused on MPS";
  } catch (const c10::Error& e) {
    EXPECT_NE(std::string(e.what()).find("named tensors only support"), std::string::npos) << e.what();
  }
#else
  // 1.13 keeps them: through the composite copy_ and a native kernel's name inference.
  const at::Tensor mps = cpu.to(kMps);
  EXPECT_EQ(compat::dimension_names(mps), compat::dimension_names(cpu));
  EXPECT_EQ(compat::dimension_names(at::sin(mps)), compat::dimension_names(cpu));
#endif
}

TEST(Emulator, AlwaysCpuKernelsFallBackWhateverTheVariable) {
  at::Tensor cpu = sample(at::kFloat);
  DispatchTrace trace;
  at::Tensor y = at::nonzero(cpu.to(kMps));
  EXPECT_TRUE(at::equal(y.to(at::kCPU), at::nonzero(cpu)));
  EXPECT_EQ(y.device(), kMps);
  // nonzero is an always-CPU kernel in 1.13.1 and a Metal kernel in 2.11.0: the trace must say which.
  EXPECT_EQ(trace.ran("aten::_to_cpu"), status_in_release("aten::nonzero") == OpStatus::kCpuFallback);
}

TEST(Emulator, InPlaceOutAndViewSemantics) {
  at::Tensor cpu = sample(at::kFloat);
  at::Tensor x = cpu.to(kMps);
  const void* storage = x.data_ptr();
  at::Tensor& same = x.add_(1);
  EXPECT_EQ(&same, &x);
  EXPECT_EQ(x.data_ptr(), storage);
  EXPECT_TRUE(at::equal(x.to(at::kCPU), at::add(cpu, 1)));

  at::Tensor out = at::empty({1}, at::TensorOptions().device(kMps));  // wrong size: out= resizes it
  at::sin_out(out, x);
  EXPECT_EQ(out.sizes(), x.sizes());
  EXPECT_TRUE(at::equal(out.to(at::kCPU), at::sin(at::add(cpu, 1))));

  at::Tensor v = x.view({12});
  EXPECT_EQ(v.device(), kMps);
  EXPECT_EQ(v.data_ptr(), x.data_ptr());
  v.zero_();
  EXPECT_EQ(x.abs().sum().item<float>(), 0.0f);
  at::Tensor row = x.select(0, 1);  // a composite view over as_strided
  EXPECT_EQ(row.storage().data_ptr().get(), x.storage().data_ptr().get());
}

TEST(Emulator, EmptyingATensorKeepsItOnMps) {
  at::Tensor x = sample(at::kFloat).to(kMps);
  x.set_();
  EXPECT_EQ(x.device(), kMps);
  EXPECT_EQ(x.numel(), 0);
  EXPECT_EQ(x.storage().device(), kMps);
}

TEST(Emulator, CopyingAZeroTensorWritesZeros) {
  at::Tensor m = at::ones({2, 3}, at::TensorOptions().device(kMps));
  m.copy_(at::_efficientzerotensor({2, 3}, at::TensorOptions().dtype(at::kFloat)));
  EXPECT_EQ(m.abs().sum().item<float>(), 0.0f);
}

// Lazy negation and conjugation survive the trip back to the CPU.
TEST(Emulator, LazyNegationIsMaterialisedOnCopy) {
  at::Tensor cpu = sample(at::kFloat);
  EXPECT_TRUE(at::equal(cpu.to(kMps)._neg_view().to(at::kCPU).resolve_neg(), cpu._neg_view().resolve_neg()));
}

TEST(Emulator, MultipleOutputsListsAndOptionalTensors) {
  at::Tensor cpu = sample(at::kFloat);
  at::Tensor x = cpu.to(kMps);
  auto [values, indices] = at::max(x, 1);
  auto [cpu_values, cpu_indices] = at::max(cpu, 1);
  EXPECT_EQ(values.device(), kMps);
  EXPECT_TRUE(at::equal(values.to(at::kCPU), cpu_values));
  EXPECT_TRUE(at::equal(indices.to(at::kCPU), cpu_indices));

  at::Tensor joined = at::cat({x, x}, 0);
  EXPECT_TRUE(at::equal(joined.to(at::kCPU), at::cat({cpu, cpu}, 0)));

  at::Tensor idx = at::arange(0, 2, at::TensorOptions().dtype(at::kLong));
  c10::List<c10::optional<at::Tensor>> cpu_index({c10::optional<at::Tensor>(idx)});
  c10::List<c10::optional<at::Tensor>> mps_index({c10::optional<at::Tensor>(idx.to(kMps))});
  EXPECT_TRUE(at::equal(at::index(x, mps_index).to(at::kCPU), at::index(cpu, cpu_index)));
}

// The emulated kernel set is the release's registration set, restricted to operators this libtorch has, plus
// the plumbing operators: copy_ and the convolution entry points (emu::kPlumbingOps says why), plus MPS's fallback
// for the operators the release has no kernel for and this libtorch a CompositeExplicitAutograd one (Note [Kernels the
// linked libtorch lacks]; none when the release is the linked one).
TEST(Emulator, KernelSetEqualsTheReleasesRegistrations) {
  auto& dispatcher = c10::Dispatcher::singleton();
  std::set<std::string> expected, registered;
  size_t fallbacks = 0;
  for (const auto& op : release().ops) {
    if (op.status == OpStatus::kNative || op.status == OpStatus::kCpuFallback) expected.insert(op.name);
    const size_t dot = op.name.find('.', op.name.find("::"));
    const auto here =
        dispatcher.findOp({op.name.substr(0, dot), dot == std::string::npos ? "" : op.name.substr(dot + 1)});
    if (op.status == OpStatus::kNone && here &&
        (here->hasKernelForDispatchKey(c10::DispatchKey::CompositeExplicitAutograd) ||
         here->hasKernelForDispatchKey(c10::DispatchKey::CompositeExplicitAutogradNonFunctional))) {
      expected.insert(op.name);
      ++fallbacks;
    }
  }
  EXPECT_EQ(info().release_fallbacks, fallbacks);
  if (info().release_version.substr(0, 4) == std::string(compat::kTorchVersion).substr(0, 4)) EXPECT_EQ(fallbacks, 0u);
  for (const auto& absent : info().absent_ops) expected.erase(absent);
  for (const char* plumbing : emu::kPlumbingOps) expected.insert(std::string("aten::") + plumbing);
  for (const c10::OperatorName& name : dispatcher.getAllOpNames()) {
    auto op = dispatcher.findOp(name);
    if (op && op->hasKernelForDispatchKey(c10::DispatchKey::MPS)) registered.insert(c10::toString(name));
  }
  EXPECT_EQ(registered, expected);
  EXPECT_EQ(info().native_kernels + info().cpu_fallback_kernels + info().stub_kernels + info().release_fallbacks +
                std::size(emu::kPlumbingOps),
            expected.size());
  for (const auto& absent : info().absent_ops) EXPECT_FALSE(dispatcher.findOp(c10::OperatorName(absent, "")));
}

TEST(Emulator, SaysItIsEmulated) {
  EXPECT_EQ(info().label(), "emulated MPS (PyTorch " + info().release_version + " registry, macOS " +
                                std::to_string(info().macos_major) + " rules)");
  EXPECT_THROW(emu::activate_mps_emulator({info().release_dir, info().macos_major + 1, std::nullopt}), UserError);
}

// heaviside decomposes (CompositeExplicitAutogradNonFunctional) into heaviside.out, which has no MPS kernel in
// either release: the backend fallback decides.
TEST(EmulatorErrorFallback, RaisesMpsNotImplementedError) {
  ASSERT_FALSE(info().fallback_enabled);
  at::Tensor x = sample(at::kFloat).to(kMps);
  try {
    at::heaviside(x, x);
    FAIL() << "expected NotImplementedError";
  } catch (const c10::NotImplementedError& e) {
    EXPECT_NE(std::string(e.what()).find("The operator 'aten::heaviside.out' is not currently implemented for the "
                                         "MPS device"),
              std::string::npos)
        << e.what();
  }
}

TEST(EmulatorCpuFallback, RunsOnTheCpuAndSaysSo) {
  ASSERT_TRUE(info().fallback_enabled);
  at::Tensor cpu = sample(at::kFloat);
  at::Tensor x = cpu.to(kMps);
  compat::torch_warnings::set_warnAlways(true);
  compat::CollectingWarningHandler warnings;
  compat::torch_warnings::WarningHandlerGuard guard(&warnings);
  DispatchTrace trace;
  at::Tensor y = at::heaviside(x, x);
  compat::torch_warnings::set_warnAlways(false);
  EXPECT_EQ(y.device(), kMps);
  EXPECT_TRUE(at::equal(y.to(at::kCPU), at::heaviside(cpu, cpu)));
  const auto fell_back = fallback_ops(trace.events());  // Note [Operators that fell back]
  ASSERT_FALSE(fell_back.empty());
  EXPECT_EQ(fell_back[0], "aten::heaviside.out");  // the leaf that fell back, not the composite called
  ASSERT_FALSE(warnings.messages.empty());
  EXPECT_NE(warnings.messages[0].find("The operator 'aten::heaviside.out' is not currently supported on the MPS "
                                      "backend and will fall back to run on the CPU"),
            std::string::npos)
      << warnings.messages[0];
}

// Note [Emulated MPS memory]: the emulator's own kernels, copies and the metadata operators that move a storage's
// bytes (resize_ growing a tensor, set_ onto a larger view of a storage) reach MPS memory; nothing faults while they
// run, with faults on MPS memory caught as in a probe.
TEST(Emulator, EmulatedKernelsAndCopiesReachMpsMemory) {
#ifndef __linux__
  GTEST_SKIP() << "emulated MPS memory is kept from the CPU on Linux only";
#endif
  ASSERT_TRUE(info().memory_kept_from_cpu);
  const at::Tensor cpu = sample(at::kFloat);
  at::Tensor x = cpu.to(kMps), grown, on_storage;
  float first = 0;
  std::ostringstream printed;
  const auto fault = run_catching_device_faults({}, kMps, [&] {
    at::Tensor y = at::sin(x);
    y.add_(1);
    grown = y.clone();
    grown.resize_({64});  // a larger storage: the old bytes are copied into it
    on_storage = at::empty({0}, at::TensorOptions().device(kMps));
    on_storage.set_(y.storage(), 0, {3, 8}, {8, 1});  // larger than y's storage: grown by set_
    first = x.select(0, 1).sum().item<float>();
    printed << x;
  });
  ASSERT_FALSE(fault.has_value()) << fault->description;
  EXPECT_TRUE(at::allclose(grown.to(at::kCPU).slice(0, 0, 12).view({3, 4}), at::sin(cpu).add(1)));
  EXPECT_TRUE(at::allclose(on_storage.to(at::kCPU).view({-1}).slice(0, 0, 12), at::sin(cpu).add(1).view({-1})));
  EXPECT_EQ(first, cpu.select(0, 1).sum().item<float>());
  EXPECT_NE(printed.str().find("MPSFloatType{3,4}"), std::string::npos) << printed.str();
}

// Note [Kernels registered before the fork]: a process forked from one with the emulator active (a run's worker)
// finds the kernels registered and sets up device memory of its own, where it computes as its parent does; the
// parent's memory is untouched by it.
TEST(Emulator, AProcessForkedFromOneWithTheEmulatorComputesInItsOwnMemory) {
  const at::Tensor cpu = sample(at::kFloat);
  const at::Tensor parents = cpu.to(kMps).add(1);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    bool ok = false;
    try {
      const emu::EmulatorInfo& again = emu::activate_mps_emulator({info().release_dir, info().macos_major, {}});
      const at::Tensor mine = cpu.to(kMps).mul(3);
      ok = again.memory_kept_from_cpu == info().memory_kept_from_cpu && at::equal(mine.to(at::kCPU), cpu.mul(3)) &&
           at::sin(mine).device() == kMps;
    } catch (...) {
    }
    ::_exit(ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  EXPECT_TRUE(at::equal(parents.to(at::kCPU), cpu.add(1)));
}

// A CPU kernel that PyTorch registers for every backend reads its arguments' memory itself: on a Mac an MPS tensor's
// data pointer is a Metal buffer's handle, and on emulated MPS the read faults (Note [Emulated MPS memory]), caught as
// the prober catches it and named by argument; the native kernel and the CPU fallback's copies before it in the same
// run reach MPS memory, and MPS works as before after it.
TEST(EmulatorCpuFallback, CpuCodeThatReadsMpsMemoryFaultsWhereTheEmulatorsKernelsDoNot) {
#ifndef __linux__
  GTEST_SKIP() << "emulated MPS memory is kept from the CPU on Linux only";
#endif
  const at::Tensor cpu = sample(at::kFloat);
  const at::Tensor input = cpu.reshape({1, 1, 3, 4}).to(kMps);
  const at::Tensor grid = at::arange(-1, 1, 1.0 / 9, at::TensorOptions().dtype(at::kFloat)).reshape({1, 3, 3, 2});
  const at::Tensor mps_grid = grid.to(kMps);
  const auto& schema =
      c10::Dispatcher::singleton().findSchemaOrThrow("aten::_grid_sampler_2d_cpu_fallback", "").schema();
  const std::vector<c10::IValue> args = {input, mps_grid, int64_t{0}, int64_t{0}, false};
  at::Tensor native, fell_back;
  bool returned = false;
  DispatchTrace trace;
  const auto fault = run_catching_device_faults(device_memory_of(schema, args, kMps), kMps, [&] {
    native = at::sin(input);
    fell_back = at::heaviside(input, input);
    at::_grid_sampler_2d_cpu_fallback(input, mps_grid, 0, 0, false);
    returned = true;
  });
  ASSERT_TRUE(fault.has_value());
  EXPECT_FALSE(returned);
  EXPECT_EQ(fault->what, "argument 'grid'");
#ifdef __x86_64__
  EXPECT_EQ(fault->description,
            "signal 11 (Segmentation fault): code on the CPU read argument 'grid', which is in mps:0 memory");
#endif
  EXPECT_EQ(fallback_ops(trace.events()), std::vector<std::string>{"aten::heaviside.out"});
  EXPECT_TRUE(at::equal(native.to(at::kCPU), at::sin(cpu).reshape({1, 1, 3, 4})));
  EXPECT_TRUE(at::equal(fell_back.to(at::kCPU), at::heaviside(cpu, cpu).reshape({1, 1, 3, 4})));
  // MPS computes as before after the fault.
  EXPECT_TRUE(at::allclose(at::cos(input).to(at::kCPU), at::cos(cpu).reshape({1, 1, 3, 4})));
}

TEST(EmulatorMacos13, RefusesBfloat16AndComplex) {
  ASSERT_EQ(info().macos_major, 13);
  try {
    sample(at::kFloat).to(at::kBFloat16).to(kMps);
    FAIL() << "expected a TypeError";
  } catch (const c10::TypeError& e) {
    EXPECT_NE(std::string(e.what()).find("MPS bfloat16 type is supported on MacOS 14.0 or newer."), std::string::npos);
  }
  EXPECT_THROW(sample(at::kFloat).to(at::kComplexFloat).to(kMps), c10::TypeError);
  EXPECT_NO_THROW(sample(at::kHalf).to(kMps));
}

// Run with MPS_AUDIT_EMU_FAULTS="aten::sin=wrong,aten::cos=crash,aten::tan=hang,aten::exp=throw".
TEST(EmulatorFaults, EachKindOfFault) {
  at::Tensor cpu = sample(at::kFloat);
  at::Tensor x = cpu.to(kMps);
  EXPECT_FALSE(at::equal(at::sin(x).to(at::kCPU), at::sin(cpu)));
  EXPECT_TRUE(at::equal(at::add(x, x).to(at::kCPU), at::add(cpu, cpu)));  // other ops are untouched
  try {
    at::exp(x);
    FAIL() << "expected the injected exception";
  } catch (const c10::Error& e) {
    EXPECT_NE(std::string(e.what()).find("injected fault: aten::exp throws"), std::string::npos);
  }
  EXPECT_DEATH(at::cos(x), "");
  EXPECT_EXIT(
      {
        alarm(2);
        at::tan(x);
      },
      ::testing::KilledBySignal(SIGALRM), "");
}

}  // namespace
}  // namespace mps_audit
