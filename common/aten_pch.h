// Precompiled header for the sources that include ATen/c10. Keep it to the headers those sources use:
// everything here is paid for once per build, and only by targets that opt in (see CMakeLists.txt).
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/DispatchKey.h>
#include <c10/core/DispatchKeySet.h>
#include <torch/library.h>
