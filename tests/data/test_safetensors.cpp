#include <cstring>

#include "data/safetensors.h"
#include "tests/data/reader_fixture.h"

using namespace ember;
using namespace ember::data;
using namespace ember::test;

namespace {

std::vector<uint8_t> tensor_bytes(const Tensor& t) {
  const auto* p = static_cast<const uint8_t*>(t.data_ptr());
  return std::vector<uint8_t>(p, p + t.nbytes());
}

// A file from a header string (padded by hand or not) and a data buffer.
std::vector<uint8_t> file_bytes(const std::string& header, const std::vector<uint8_t>& data) {
  std::vector<uint8_t> b;
  for (int i = 0; i < 8; ++i) b.push_back(static_cast<uint8_t>(static_cast<uint64_t>(header.size()) >> (8 * i)));
  b.insert(b.end(), header.begin(), header.end());
  b.insert(b.end(), data.begin(), data.end());
  return b;
}

// load_safetensors given the path alone: the reader expect_read_error runs.
void load(const std::string& path) { load_safetensors(path); }

}  // namespace

TEST_CASE_METHOD(ReaderFixture, "safetensors round trip of every dtype, 0-d and empty tensors", "[safetensors]") {
  const std::string path = file("all.safetensors");
  const NamedTensors tensors = {
      {"w.f32", from_vector<float>({1.5f, -2.25f, 3e-8f, 4e30f, 0.0f, -0.0f}, {2, 3})},
      {"h.f16", from_vector<Half>({Half(1.0f), Half(-0.5f), Half(65504.0f), Half(6e-8f)}, {4})},
      {"d.f64", from_vector<double>({3.141592653589793, -1e-300}, {2, 1})},
      {"i.i64", from_vector<int64_t>({-1, 0, INT64_MAX, INT64_MIN}, {4})},
      {"u.u8", from_vector<float>({0, 1, 128, 255, 7}, {5}, TensorOptions(DType::u8))},
      {"scalar", scalar_tensor(42.5)},
      {"empty", empty(Shape{0}, DType::f32)},
      {"empty2d", empty(Shape{2, 0}, DType::i64)},
  };
  const SafetensorsMetadata metadata = {{"epoch", "3"}, {"note", "h\xc3\xa9llo \"quoted\""}};
  save_safetensors(path, tensors, metadata);
  CHECK_FALSE(test::read_bytes(path).empty());
  CHECK_FALSE(std::filesystem::exists(path + ".tmp"));

  SafetensorsMetadata loaded_metadata;
  const std::map<std::string, Tensor> loaded = load_safetensors(path, &loaded_metadata);
  CHECK(loaded_metadata == metadata);
  REQUIRE(loaded.size() == tensors.size());
  for (const auto& [name, t] : tensors) {
    INFO(name);
    REQUIRE(loaded.count(name) == 1);
    const Tensor& l = loaded.at(name);
    CHECK(l.dtype() == t.dtype());
    CHECK(l.shape() == t.shape());
    CHECK(l.device() == kCPU);
    CHECK(tensor_bytes(l) == tensor_bytes(t));  // bit exact, -0.0 and subnormals included
  }
  CHECK(loaded.at("scalar").dim() == 0);
  CHECK(loaded.at("scalar").item<float>() == 42.5f);
  // No metadata: no "__metadata__" key, and the out-parameter is cleared.
  save_safetensors(path, {{"x", scalar_tensor(1.0)}});
  load_safetensors(path, &loaded_metadata);
  CHECK(loaded_metadata.empty());
}

TEST_CASE_METHOD(ReaderFixture, "the safetensors layout is byte exact for a tiny file", "[safetensors]") {
  const std::string path = file("tiny.safetensors");
  save_safetensors(path, {{"a", from_vector<float>({1.0f, 2.0f}, {2})}});
  // 54 bytes of JSON padded with 2 spaces to 56 = 0x38; then 1.0f and 2.0f little-endian.
  const std::string json = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  REQUIRE(json.size() == 54);
  const std::string expected =
      std::string("\x38\0\0\0\0\0\0\0", 8) + json + "  " + std::string("\0\0\x80\x3f\0\0\0\x40", 8);
  const std::vector<uint8_t> actual = read_bytes(path);
  CHECK(std::string(actual.begin(), actual.end()) == expected);

  // Metadata comes first; two tensors follow in the order given, back to back.
  const std::string header = safetensors_header(
      {{"b", from_vector<float>({1}, {1}, TensorOptions(DType::u8))}, {"a", scalar_tensor(0.0, DType::f64)}},
      {{"k", "v"}});
  const std::string json2 =
      R"({"__metadata__":{"k":"v"},"b":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},)"
      R"("a":{"dtype":"F64","shape":[],"data_offsets":[1,9]}})";
  REQUIRE(json2.size() == 130);  // padded with 6 spaces to 136 = 0x88
  CHECK(header == std::string("\x88\0\0\0\0\0\0\0", 8) + json2 + "      ");
}

TEST_CASE_METHOD(ReaderFixture, "safetensors load errors name the file and the field", "[safetensors]") {
  const std::string p = file("bad.safetensors");
  const std::vector<uint8_t> eight(8, 0);
  auto expect_load_error = [&](const std::string& header, const std::vector<uint8_t>& data,
                               const std::vector<std::string>& fragments) {
    expect_read_error(p, file_bytes(header, data), load, fragments);
  };
  expect_read_error(p, {1, 2, 3}, load, {"too short", "3 bytes"});
  expect_read_error(p, {200, 0, 0, 0, 0, 0, 0, 0, '{', '}'}, load, {"header length 200", "beyond the end"});
  expect_read_error(p, {0, 0, 0, 0, 0, 0, 0, 0x80}, load, {"header length"});
  expect_error_contains([&] { load_safetensors(file("missing")); }, {file("missing"), "cannot open"});

  expect_load_error(R"({"w":{"dtype":"F32",)", {}, {"header", "bad JSON"});
  expect_load_error(R"([1, 2])", {}, {"header", "must be a JSON object"});
  expect_load_error(R"({"w":{"dtype":"Q7","shape":[2],"data_offsets":[0,8]}})", eight,
                    {"'w'", "dtype", "unknown dtype \"Q7\""});
  expect_load_error(R"({"w":{"dtype":"BF16","shape":[4],"data_offsets":[0,8]}})", eight,
                    {"'w'", "dtype", "not supported"});
  expect_load_error(R"({"w":{"dtype":7,"shape":[2],"data_offsets":[0,8]}})", eight, {"'w'", "'dtype' must be a string"});
  expect_load_error(R"({"w":{"dtype":"F32","data_offsets":[0,8]}})", eight, {"'w'", "'shape' is missing"});
  expect_load_error(R"({"w":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", eight, {"'w'", "'shape'", "non-negative"});
  expect_load_error(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0]}})", eight, {"'w'", "'data_offsets'", "[begin, end]"});
  expect_load_error(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})", eight, {"'w'", "data_offsets", "begin is after end"});
  expect_load_error(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", {1, 2, 3},
                    {"'w'", "data_offsets", "out of range", "3 bytes"});
  expect_load_error(R"({"w":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", eight,
                    {"'w'", "data_offsets", "holds 8 bytes", "[3]", "needs 12"});
  expect_load_error(R"({"w":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,8]}})", eight,
                    {"'w'", "'shape'", "too large", "2^63 - 1 bytes"});
  expect_load_error(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                    R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                    std::vector<uint8_t>(12, 0), {"'b'", "data_offsets", "overlaps tensor 'a'"});
  expect_load_error(R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},)"
                    R"("b":{"dtype":"U8","shape":[2],"data_offsets":[4,6]}})",
                    std::vector<uint8_t>(6, 0), {"'b'", "data_offsets", "hole", "[2, 4)"});
  expect_load_error(R"({"w":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}})", std::vector<uint8_t>(5, 0),
                    {"data_offsets", "cover 2 bytes", "has 5"});
  expect_load_error(R"({"w":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"w":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}})",
                    {1, 2}, {"header", "'w' appears twice"});
  expect_load_error(R"({"__metadata__":{"epoch":3}})", {}, {"'__metadata__'", "'epoch'", "must be a string"});
  expect_load_error(R"({"__metadata__":[1]})", {}, {"'__metadata__'", "must be an object"});
  expect_load_error(R"({"w":[1,2]})", {}, {"'w'", "must be an object"});

  // A good file cut short: the last bytes of the data are missing.
  save_safetensors(p, {{"a", from_vector<float>({1, 2, 3}, {3})}});
  std::vector<uint8_t> bytes = read_bytes(p);
  bytes.resize(bytes.size() - 3);
  expect_read_error(p, bytes, load, {"'a'", "data_offsets", "out of range"});
}

TEST_CASE_METHOD(ReaderFixture, "safetensors headers nest at most 16 levels", "[safetensors]") {
  const std::string p = file("crafted.safetensors");
  // 200000 nested arrays in a field: printing the field for the error recursed once per level
  // and overflowed the stack (`ember eval --load` died with a segfault).
  const std::string deep = std::string(200000, '[') + std::string(200000, ']');
  expect_read_error(p, file_bytes(R"({"w":{"dtype":)" + deep + R"(,"shape":[1],"data_offsets":[0,4]}})", {0, 0, 0, 0}),
                    load, {"header", "nests deeper than 16 levels"});
  expect_read_error(p, file_bytes(R"({"__metadata__":{"a":)" + deep + "}}", {}), load,
                    {"header", "nests deeper than 16 levels"});
  // 16 levels are fine (here in a field the reader ignores); a long value is quoted cut short.
  const std::string sixteen = std::string(14, '[') + std::string(14, ']');
  write_bytes(p, file_bytes(R"({"w":{"dtype":"U8","shape":[1],"data_offsets":[0,1],"extra":)" + sixteen + "}}", {7}));
  CHECK(load_safetensors(p).at("w").to_vector<uint8_t>() == std::vector<uint8_t>{7});
  expect_read_error(p, file_bytes(R"({"w":{"dtype":")" + std::string(1000, 'x') + R"("}})", {}), load,
                    {"'w'", "'shape' is missing"});
  const std::string long_dtype =
      R"({"w":{"dtype":[")" + std::string(1000, 'x') + R"("],"shape":[],"data_offsets":[0,0]}})";
  expect_read_error(p, file_bytes(long_dtype, {}), load, {"'dtype' must be a string, got [\"xxxx", "xxx..."});
}

TEST_CASE("safetensors files in memory parse like files", "[safetensors]") {
  const std::vector<uint8_t> bytes = file_bytes(R"({"x":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}})", {5, 6});
  CHECK(parse_safetensors(bytes.data(), bytes.size(), "mem").at("x").to_vector<uint8_t>() == std::vector<uint8_t>{5, 6});
  expect_error_contains([&] { parse_safetensors(bytes.data(), 3, "mem.safetensors"); }, {"mem.safetensors", "too short"});
}

TEST_CASE_METHOD(ReaderFixture, "safetensors shapes with a zero size are bounded too", "[safetensors]") {
  const std::string p = file("crafted.safetensors");
  // A 0 size made the byte count 0 and let the others through: [2^32, 2^32, 0] overflowed
  // the tensor's int64 numel, [0, 2^32, 2^32] its strides (signed overflows).
  for (const char* shape : {"[4294967296,4294967296,0]", "[0,4294967296,4294967296]"}) {
    const std::string header = std::string(R"({"w":{"dtype":"F32","shape":)") + shape + R"(,"data_offsets":[0,0]}})";
    expect_read_error(p, file_bytes(header, {}), load, {"'w'", "'shape'", "too large", "2^63 - 1 bytes"});
  }
  // Large sizes whose nonzero product fits are an empty tensor.
  write_bytes(p, file_bytes(R"({"w":{"dtype":"F32","shape":[65536,0,65536],"data_offsets":[0,0]}})", {}));
  CHECK(load_safetensors(p).at("w").shape() == Shape{65536, 0, 65536});
}

TEST_CASE_METHOD(ReaderFixture, "safetensors accepts what the spec allows", "[safetensors]") {
  const std::string p = file("ok.safetensors");
  // Unpadded header, fields in another order, extra whitespace, an empty header.
  write_bytes(p, file_bytes(R"( { "x" : { "data_offsets" : [0, 2], "shape" : [2], "dtype" : "U8" } } )", {5, 6}));
  const auto loaded = load_safetensors(p);
  REQUIRE(loaded.count("x") == 1);
  CHECK(loaded.at("x").to_vector<uint8_t>() == std::vector<uint8_t>{5, 6});
  write_bytes(p, file_bytes("{}", {}));
  CHECK(load_safetensors(p).empty());
}

TEST_CASE_METHOD(ReaderFixture, "a failed save leaves the previous file intact", "[safetensors]") {
  const std::string path = file("model.safetensors");
  save_safetensors(path, {{"w", from_vector<float>({1, 2}, {2})}}, {{"epoch", "1"}});
  const std::vector<uint8_t> good = read_bytes(path);

  // A tensor that cannot be written: nothing is touched.
  expect_error_contains([&] { save_safetensors(path, {{"w", from_vector<float>({3}, {1})}, {"bad", Tensor()}}); },
                        {path, "'bad'", "undefined"});
  expect_error_contains([&] { save_safetensors(path, {{"w", scalar_tensor(1.0)}, {"w", scalar_tensor(2.0)}}); },
                        {path, "'w' appears twice"});
  expect_error_contains([&] { save_safetensors(path, {{"__metadata__", scalar_tensor(1.0)}}); }, {path, "reserved"});
  expect_error_contains([&] { save_safetensors(path, {{"w", scalar_tensor(1.0)}}, {{"k", "\xff\xfe"}}); },
                        {path, "UTF-8"});
  CHECK(read_bytes(path) == good);
  CHECK_FALSE(std::filesystem::exists(path + ".tmp"));

  // The temporary file cannot be created (a directory is in the way; as root a
  // read-only folder would not stop us): the error names it, the old file stays.
  std::filesystem::create_directory(path + ".tmp");
  expect_error_contains([&] { save_safetensors(path, {{"w", from_vector<float>({3}, {1})}}); },
                        {path + ".tmp", "cannot create"});
  CHECK(read_bytes(path) == good);
  std::filesystem::remove(path + ".tmp");

  expect_error_contains([&] { save_safetensors(file("no/such/dir/m.safetensors"), {}); },
                        {"no/such/dir/m.safetensors.tmp", "cannot create"});

  SafetensorsMetadata metadata;
  CHECK(load_safetensors(path, &metadata).at("w").to_vector<float>() == std::vector<float>{1, 2});
  CHECK(metadata.at("epoch") == "1");
  // A successful save replaces it.
  save_safetensors(path, {{"w", from_vector<float>({3}, {1})}});
  CHECK(load_safetensors(path).at("w").to_vector<float>() == std::vector<float>{3});
}
