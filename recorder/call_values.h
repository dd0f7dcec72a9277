// A recorded call's arguments, as the calls file holds them and as python/mps_audit_record.py's recorder encodes them
// (small tensors with their values, bigger ones described by shape, strides, dtype and range; dtypes, layouts and
// memory formats tagged), and the compact key that tells one distinct call from another (Note [Distinct calls] in
// call_values.cc).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <ATen/core/Dict.h>
#include <ATen/core/List.h>
#include <ATen/core/ivalue.h>

namespace mps_audit::recorder {

using Dict = c10::impl::GenericDict;
using List = c10::impl::GenericList;

Dict new_dict();
List new_list();

// A dtype as the calls file names it ("float32"); nullopt for one that torch.save and libtorch's reader do not both
// take.
std::optional<std::string> dtype_label(c10::ScalarType t);

// Why a call cannot be kept (a sparse tensor, a generator): thrown by encode(), counted by the recorder.
struct Drop {
  std::string why;
};

// Appends `v`'s part of its call's key.
void key_of(const c10::IValue& v, std::string& key);
// The bytes of the tensors in `v`, Python numbers aside.
int64_t tensor_bytes(const c10::IValue& v);
// The dtype of the first tensor in `v`, Python numbers aside.
std::optional<std::string> first_dtype(const c10::IValue& v);
// `v`, an argument of schema type `type` ("Tensor?", "int[]", "ScalarType"), as the calls file keeps it; tensors of at
// most `max_numel` elements with their values. Throws Drop.
c10::IValue encode(const c10::IValue& v, const std::string& type, int64_t max_numel);

}  // namespace mps_audit::recorder
