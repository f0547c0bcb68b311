// Reading safetensors files: every field is checked before a byte is copied.
#include <algorithm>
#include <cstring>
#include <set>

#include <nlohmann/json.hpp>

#include "core/bad_alloc_error.h"
#include "core/error.h"
#include "data/file_bytes.h"
#include "data/header_sizes.h"
#include "data/safetensors.h"
#include "memory/empty.h"

namespace ember::data {
namespace {

// The reference implementation refuses headers over 100 MB; so do we (a corrupt
// length must not make us parse gigabytes).
constexpr uint64_t kMaxHeaderBytes = 100'000'000;
// The format nests 3 levels (header object, tensor object, shape array); the cap leaves
// room for extra fields but stops a crafted header before nesting costs memory and stack
// (printing a value recurses once per level).
constexpr int kMaxHeaderDepth = 16;
// A JSON value quoted in an error is cut to this many characters.
constexpr size_t kMaxQuotedChars = 80;

using Json = nlohmann::json;

struct TensorEntry {
  std::string name;
  DType dtype = DType::f32;
  Shape shape;
  uint64_t begin = 0, end = 0;
};

// `value` as JSON text for an error message, cut short when long.
std::string quoted(const Json& value) {
  std::string text = value.dump();
  if (text.size() > kMaxQuotedChars) text = text.substr(0, kMaxQuotedChars) + "...";
  return text;
}

DType parse_dtype_field(const Json& value, const std::string& where) {
  EMBER_CHECK(value.is_string(), where << ": field 'dtype' must be a string, got " << quoted(value));
  const std::string name = value.get<std::string>();
  static const std::pair<const char*, DType> kSupported[] = {
      {"F32", DType::f32}, {"F16", DType::f16}, {"F64", DType::f64}, {"I64", DType::i64}, {"U8", DType::u8}};
  for (const auto& [text, dtype] : kSupported)
    if (name == text) return dtype;
  static const std::set<std::string> kOtherSpecDtypes = {"BOOL", "I8",  "I16",     "U16",     "BF16",    "I32",
                                                         "U32",  "U64", "F8_E5M2", "F8_E4M3", "F8_E8M0", "C64"};
  EMBER_CHECK(kOtherSpecDtypes.count(name) == 0,
              where << ": field 'dtype': \"" << name << "\" is not supported (ember reads F32, F16, F64, I64, U8)");
  EMBER_THROW(where << ": field 'dtype': unknown dtype \"" << name << "\"");
}

uint64_t parse_unsigned(const Json& value, const std::string& where, const char* field) {
  EMBER_CHECK(value.is_number_unsigned() || (value.is_number_integer() && value.get<int64_t>() >= 0),
              where << ": field '" << field << "' must hold non-negative integers, got " << quoted(value));
  return value.get<uint64_t>();
}

TensorEntry parse_entry(const std::string& name, const Json& entry, const std::string& file) {
  const std::string where = file + ": tensor '" + name + "'";
  EMBER_CHECK(entry.is_object(), where << ": must be an object with dtype, shape and data_offsets");
  for (const char* field : {"dtype", "shape", "data_offsets"})
    EMBER_CHECK(entry.contains(field), where << ": field '" << field << "' is missing");
  TensorEntry t;
  t.name = name;
  t.dtype = parse_dtype_field(entry["dtype"], where);
  const Json& shape = entry["shape"];
  EMBER_CHECK(shape.is_array(), where << ": field 'shape' must be an array, got " << quoted(shape));
  std::vector<int64_t> sizes;
  for (const Json& s : shape) {
    const uint64_t size = parse_unsigned(s, where, "shape");
    EMBER_CHECK(size <= static_cast<uint64_t>(INT64_MAX), where << ": field 'shape': size " << size << " is too large");
    sizes.push_back(static_cast<int64_t>(size));
  }
  t.shape = Shape(std::move(sizes));
  const Json& offsets = entry["data_offsets"];
  EMBER_CHECK(offsets.is_array() && offsets.size() == 2,
              where << ": field 'data_offsets' must be [begin, end], got " << quoted(offsets));
  t.begin = parse_unsigned(offsets[0], where, "data_offsets");
  t.end = parse_unsigned(offsets[1], where, "data_offsets");
  EMBER_CHECK(t.begin <= t.end, where << ": field 'data_offsets' [" << t.begin << ", " << t.end
                                      << "]: begin is after end");
  const uint64_t span = t.end - t.begin;
  uint64_t bytes = 0;
  EMBER_CHECK(checked_byte_count(t.shape.sizes(), dtype_size(t.dtype), INT64_MAX, &bytes),
              where << ": field 'shape': shape " << t.shape << " of " << safetensors_dtype_name(t.dtype)
                    << " is too large: the product of its nonzero sizes exceeds 2^63 - 1 bytes");
  EMBER_CHECK(bytes == span, where << ": field 'data_offsets' [" << t.begin << ", " << t.end << "] holds " << span
                                   << " bytes but shape " << t.shape << " of " << safetensors_dtype_name(t.dtype)
                                   << " needs " << bytes);
  return t;
}

SafetensorsMetadata parse_metadata(const Json& value, const std::string& file) {
  EMBER_CHECK(value.is_object(), file << ": field '__metadata__' must be an object of strings, got " << quoted(value));
  SafetensorsMetadata metadata;
  for (const auto& [key, v] : value.items()) {
    EMBER_CHECK(v.is_string(), file << ": field '__metadata__': value of '" << key << "' must be a string, got "
                                    << quoted(v));
    metadata[key] = v.get<std::string>();
  }
  return metadata;
}

// The header's object, parsed; duplicate top-level names are an error (the JSON
// library would silently keep the last).
Json parse_header(const uint8_t* begin, const uint8_t* end, const std::string& file) {
  std::string duplicate;
  std::set<std::string> names;
  auto callback = [&](int depth, Json::parse_event_t event, Json& parsed) {
    const bool opens = event == Json::parse_event_t::object_start || event == Json::parse_event_t::array_start;
    // depth counts the containers already open: this one would be level depth + 1.
    EMBER_CHECK(!opens || depth < kMaxHeaderDepth,
                file << ": header: the JSON nests deeper than " << kMaxHeaderDepth << " levels");
    if (event == Json::parse_event_t::key && depth == 1 && !names.insert(parsed.get<std::string>()).second)
      duplicate = parsed.get<std::string>();
    return true;
  };
  Json header;
  try {
    header = Json::parse(begin, end, callback);
  } catch (const Json::exception& e) {
    EMBER_THROW(file << ": header: bad JSON (" << e.what() << ")");
  }
  EMBER_CHECK(header.is_object(), file << ": header: must be a JSON object, got " << header.type_name());
  EMBER_CHECK(duplicate.empty(), file << ": header: tensor '" << duplicate << "' appears twice");
  return header;
}

// Sorted by offset, the tensors must tile [0, buffer_bytes) exactly.
void check_layout(std::vector<TensorEntry> entries, uint64_t buffer_bytes, const std::string& file) {
  std::sort(entries.begin(), entries.end(),
            [](const TensorEntry& a, const TensorEntry& b) { return a.begin != b.begin ? a.begin < b.begin : a.end < b.end; });
  uint64_t covered = 0;
  const TensorEntry* previous = nullptr;
  for (const TensorEntry& t : entries) {
    EMBER_CHECK(t.end <= buffer_bytes, file << ": tensor '" << t.name << "': field 'data_offsets' [" << t.begin
                                            << ", " << t.end << "] is out of range: the data buffer has "
                                            << buffer_bytes << " bytes");
    EMBER_CHECK(t.begin >= covered, file << ": tensor '" << t.name << "': field 'data_offsets' [" << t.begin << ", "
                                         << t.end << "] overlaps tensor '" << previous->name << "' ["
                                         << previous->begin << ", " << previous->end << "]");
    EMBER_CHECK(t.begin == covered, file << ": tensor '" << t.name << "': field 'data_offsets' [" << t.begin << ", "
                                         << t.end << "] leaves a hole: bytes [" << covered << ", " << t.begin
                                         << ") belong to no tensor");
    covered = t.end;
    previous = &t;
  }
  EMBER_CHECK(covered == buffer_bytes, file << ": data_offsets: the tensors cover " << covered
                                            << " bytes but the data buffer has " << buffer_bytes
                                            << " (trailing bytes or a wrong header length)");
}

}  // namespace

std::map<std::string, Tensor> parse_safetensors(const uint8_t* data, size_t size, const std::string& name,
                                                SafetensorsMetadata* metadata) {
  const std::string file = "load_safetensors: " + name;
  return with_bad_alloc_as_error(file, [&] {
    EMBER_CHECK(size >= kSafetensorsLengthBytes, file << ": file too short (" << size
                                                 << " bytes; a safetensors file starts with an 8-byte header length)");
    uint64_t header_length = 0;
    for (size_t i = 0; i < kSafetensorsLengthBytes; ++i) header_length |= static_cast<uint64_t>(data[i]) << (8 * i);
    const uint64_t available = size - kSafetensorsLengthBytes;
    EMBER_CHECK(header_length <= available, file << ": header length " << header_length
                                                 << " is beyond the end of the file (" << available
                                                 << " bytes follow the length; truncated file?)");
    EMBER_CHECK(header_length <= kMaxHeaderBytes, file << ": header length " << header_length
                                                       << " exceeds the limit of " << kMaxHeaderBytes << " bytes");
    const uint8_t* header_begin = data + kSafetensorsLengthBytes;
    const Json header = parse_header(header_begin, header_begin + header_length, file);

    std::vector<TensorEntry> entries;
    SafetensorsMetadata parsed_metadata;
    for (const auto& [key, value] : header.items()) {
      if (key == "__metadata__")
        parsed_metadata = parse_metadata(value, file);
      else
        entries.push_back(parse_entry(key, value, file));
    }
    const uint64_t buffer_bytes = available - header_length;
    check_layout(entries, buffer_bytes, file);

    // Every tensor lies inside the buffer now, so the allocations below add up to the file's size at most.
    const uint8_t* buffer = header_begin + header_length;
    std::map<std::string, Tensor> tensors;
    for (const TensorEntry& t : entries) {
      Tensor tensor = empty(t.shape, TensorOptions(t.dtype));
      if (t.end > t.begin) std::memcpy(tensor.data_ptr(), buffer + t.begin, t.end - t.begin);
      tensors.emplace(t.name, std::move(tensor));
    }
    if (metadata != nullptr) *metadata = std::move(parsed_metadata);
    return tensors;
  });
}

std::map<std::string, Tensor> load_safetensors(const std::string& path, SafetensorsMetadata* metadata) {
  return with_bad_alloc_as_error("load_safetensors: " + path, [&] {
    const std::vector<uint8_t> bytes = read_raw_file_bytes(path, "load_safetensors");
    return parse_safetensors(bytes.data(), bytes.size(), path, metadata);
  });
}

}  // namespace ember::data
