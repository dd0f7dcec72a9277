// What one sample's arguments are like (results/result.h SampleTraits: ranks, sizes, views, repeated indices, a CPU
// scalar, keyword arguments set), the index arguments it holds, and whether a sample that failed failed because of an
// operand of another dtype than its record's (Note [Traits of a sample] in sample_traits.cc).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <ATen/core/function_schema.h>
#include <ATen/core/ivalue.h>
#include <c10/core/ScalarType.h>

#include "common/ivalue_tensors.h"
#include "results/result.h"

namespace mps_audit {

// The traits of a sample whose arguments (in schema order) are `args`, as the target got them: shapes, layouts and
// devices are read from `args`; index values from `values` where given (the same arguments on the CPU, so that
// reading them costs no copy from the device), else from `args`.
SampleTraits sample_traits(const c10::FunctionSchema& schema, const std::vector<c10::IValue>& args,
                           const std::vector<c10::IValue>* values = nullptr);

// The operator's name without its namespace: "index_select" of aten::index_select.
std::string base_name(const c10::FunctionSchema& schema);

// An argument the operator writes (Tensor(a!)), and one of those that is an out= argument (keyword-only).
bool is_write(const c10::Argument& a);
bool is_out(const c10::Argument& a);

// An index argument: an integer tensor passed to an argument named index, indices or idx, or held by a Tensor?[]
// argument (index.Tensor, index_put), with the size of the dimension its values index where the schema tells it.
struct IndexArgument {
  size_t position = 0;           // the argument's position in the schema
  int element = -1;              // its position in a Tensor?[] argument; -1 for a plain tensor argument
  at::Tensor index;              // as the sample holds it
  std::optional<int64_t> bound;  // valid values are in [0, bound), or [-bound, bound) where `wraps`
  bool wraps = false;            // a negative value counts from the end (index, index_put, take, put, index_fill)
  // For an index of rank 2 or more beside a `dim` argument (gather, scatter): the dimension along which its values
  // address self; a value is repeated when it is within one slice along it.
  std::optional<int64_t> along;
};
std::vector<IndexArgument> index_arguments(const c10::FunctionSchema& schema, const std::vector<c10::IValue>& args);

// An operand of the sample whose dtype is not `dtype` and that a target may well refuse for it: a float64 or
// complex128 operand, or a complex operand of a real record. Nullopt when there is none.
std::optional<c10::ScalarType> wide_operand(const c10::FunctionSchema& schema, const std::vector<c10::IValue>& args,
                                            c10::ScalarType dtype);

// Whether a sample of a `dtype` record that the target refused (unsupported, error) with `message` failed because of an
// operand of another dtype: it has a wide_operand(), or an operand of another dtype that `message` names.
bool failed_for_other_dtype(const c10::FunctionSchema& schema, const std::vector<c10::IValue>& args,
                            c10::ScalarType dtype, Verdict verdict, const std::string& message);

}  // namespace mps_audit
