#pragma once
// The safetensors weight format (https://github.com/huggingface/safetensors):
//
//   8 bytes  N, the header length, a little-endian u64
//   N bytes  a UTF-8 JSON object, padded with spaces to a multiple of 8 bytes:
//            {"__metadata__":{"epoch":"3"},"fc.weight":{"dtype":"F32","shape":[10,784],"data_offsets":[0,31360]},...}
//   rest     the byte buffer: each tensor row-major, little-endian, at [begin, end) of
//            data_offsets (relative to the buffer's start); together the tensors
//            cover the buffer exactly, with no holes and no overlaps.
//
//   ember::data::save_safetensors("model.safetensors", {{"fc.weight", w}, {"fc.bias", b}}, {{"epoch", "3"}});
//   std::map<std::string, std::string> metadata;
//   auto tensors = ember::data::load_safetensors("model.safetensors", &metadata);  // name -> CPU tensor
//
// dtypes: F32, F16, F64, I64, U8. A save writes path + ".tmp", fsyncs it and renames
// it over path, so a failed save never clobbers the last good file. A load checks
// everything and each error names the file and the field at fault. A header is at most
// 100 MB and nests at most 16 levels; a shape's nonzero sizes multiply to at most 2^63 - 1
// bytes (a 0 size does not excuse the others).
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/named_tensors.h"
#include "core/tensor.h"

namespace ember::data {

using NamedTensors = ember::NamedTensors;
// The first field: N, the header length, as a little-endian u64.
inline constexpr size_t kSafetensorsLengthBytes = 8;
using SafetensorsMetadata = std::map<std::string, std::string>;

// Tensors are written in the order given (CUDA tensors are copied to the host first).
void save_safetensors(const std::string& path, const NamedTensors& tensors, const SafetensorsMetadata& metadata = {});
// Every tensor of the file, by name, on the CPU; the "__metadata__" map into *metadata when given.
std::map<std::string, Tensor> load_safetensors(const std::string& path, SafetensorsMetadata* metadata = nullptr);
// The same for a file's bytes in memory; `name` (the file) labels the errors.
std::map<std::string, Tensor> parse_safetensors(const uint8_t* data, size_t size, const std::string& name,
                                                SafetensorsMetadata* metadata = nullptr);

// The bytes save_safetensors writes before the tensor data: length prefix, JSON, padding.
std::string safetensors_header(const NamedTensors& tensors, const SafetensorsMetadata& metadata = {});
// The format's name of a dtype: "F32", "F16", "F64", "I64", "U8".
const char* safetensors_dtype_name(DType dtype);

}  // namespace ember::data
