// Writes the seed corpus of the fuzz targets, tests/fuzz/corpus/<target>/seed-*, from the real
// Fashion-MNIST subset and ember's own writers (the regression inputs beside them are kept):
//
//   build-asan/tests/fuzz/make_seed_corpus tests/data/fashion-mnist-subset tests/fuzz/corpus
//
// Small on purpose: libFuzzer mutates inputs up to the largest seed's size.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "autograd/ops.h"
#include "core/generator.h"
#include "data/cifar10_reader.h"
#include "data/idx_reader.h"
#include "data/safetensors.h"
#include "kernels/factories.h"
#include "memory/empty.h"
#include "memory/memory_run.h"
#include "memory/recorder.h"
#include "models/mlp.h"
#include "tests/support/gzip_bytes.h"

namespace {

using namespace ember;
using Bytes = std::vector<uint8_t>;

std::string corpus_root;

void write(const std::string& target, const std::string& name, const Bytes& bytes) {
  const std::filesystem::path dir = std::filesystem::path(corpus_root) / target;
  std::filesystem::create_directories(dir);
  std::ofstream out(dir / name, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + (dir / name).string());
}

void write_text(const std::string& target, const std::string& name, const std::string& text) {
  write(target, name, Bytes(text.begin(), text.end()));
}

// The first `count` records (along the first dimension) of a real IDX file, as an IDX file.
Bytes idx_prefix(const std::string& path, int64_t count) {
  data::IdxArray a = data::read_idx(path);
  int64_t record_bytes = 1;
  for (size_t d = 1; d < a.dims.size(); ++d) record_bytes *= a.dims[d];
  a.dims[0] = std::min(a.dims[0], count);
  Bytes b = {0, 0, 0x08, static_cast<uint8_t>(a.dims.size())};
  for (int64_t d : a.dims)
    for (int shift = 24; shift >= 0; shift -= 8) b.push_back(static_cast<uint8_t>(d >> shift));
  b.insert(b.end(), a.values.begin(), a.values.begin() + a.dims[0] * record_bytes);
  return b;
}

void idx_seeds(const std::string& subset) {
  const Bytes images = idx_prefix(subset + "/train-images-idx3-ubyte.gz", 3);
  const Bytes labels = idx_prefix(subset + "/train-labels-idx1-ubyte.gz", 20);
  const Bytes test_images = idx_prefix(subset + "/t10k-images-idx3-ubyte.gz", 2);
  const Bytes test_labels = idx_prefix(subset + "/t10k-labels-idx1-ubyte.gz", 10);
  write("fuzz_idx", "seed-train-images-3.idx", images);
  write("fuzz_idx", "seed-train-labels-20.idx", labels);
  write("fuzz_idx", "seed-t10k-labels-10.idx", test_labels);
  write("fuzz_idx", "seed-t10k-images-2.idx.gz", test::gzip_bytes(test_images));
  write("fuzz_idx_gz", "seed-train-images-3.idx.gz", test::gzip_bytes(images));
  write("fuzz_idx_gz", "seed-train-labels-20.idx.gz", test::gzip_bytes(labels));
  write("fuzz_idx_gz", "seed-t10k-labels-10.idx", test_labels);  // the target gzips it
}

// CIFAR-10 records whose pixels are real Fashion-MNIST rows (no CIFAR files are committed).
void cifar_seeds(const std::string& subset) {
  const data::IdxArray images = data::read_idx(subset + "/train-images-idx3-ubyte.gz", 3);
  Bytes records;
  for (size_t r = 0; r < 2; ++r) {
    records.push_back(static_cast<uint8_t>(r * 7 % 10));
    for (int64_t i = 0; i < data::kCifar10RecordBytes - 1; ++i) records.push_back(images.values[r * 784 + i % 784]);
  }
  write("fuzz_cifar10", "seed-2-records.bin", records);
  const Bytes one(records.begin(), records.begin() + data::kCifar10RecordBytes);
  write("fuzz_cifar10", "seed-1-record.bin.gz", test::gzip_bytes(one));
}

Bytes file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A saved file's header JSON, a NUL, then its data: fuzz_safetensors_header's input.
Bytes header_input(const Bytes& file) {
  uint64_t length = 0;
  for (int i = 0; i < 8; ++i) length |= static_cast<uint64_t>(file[static_cast<size_t>(i)]) << (8 * i);
  Bytes b(file.begin() + 8, file.begin() + 8 + static_cast<std::ptrdiff_t>(length));
  b.push_back(0);
  b.insert(b.end(), file.begin() + 8 + static_cast<std::ptrdiff_t>(length), file.end());
  return b;
}

void safetensors_seeds(const std::string& scratch) {
  manual_seed(1);
  // A real model's weights: 0.weight [4, 2], 0.bias [4], 2.weight [3, 4], 2.bias [3].
  const auto model = std::make_shared<nn::MLP>(2, std::vector<int64_t>{4}, 3);
  const std::string weights = scratch + "/mlp.safetensors";
  data::save_safetensors(weights, model->named_parameters(), {{"epoch", "1"}, {"model", "mlp"}});
  const std::string dtypes = scratch + "/dtypes.safetensors";
  data::save_safetensors(dtypes, {{"f32", from_vector<float>({1.5f, -2.0f}, {2})},
                                  {"f16", from_vector<float>({1.0f, 0.5f}, {1, 2}, TensorOptions(DType::f16))},
                                  {"f64", from_vector<double>({3.25}, {1})},
                                  {"i64", from_vector<int64_t>({-1, 7}, {2, 1})},
                                  {"u8", from_vector<float>({0, 255}, {2}, TensorOptions(DType::u8))},
                                  {"scalar", scalar_tensor(2.0)},
                                  {"empty", empty(Shape{0, 3}, DType::f32)}});
  for (const auto& [name, path] : {std::pair<const char*, std::string>{"mlp", weights}, {"dtypes", dtypes}}) {
    const Bytes file = file_bytes(path);
    write("fuzz_safetensors", std::string("seed-") + name + ".safetensors", file);
    write("fuzz_safetensors_header", std::string("seed-") + name + ".header", header_input(file));
  }
}

void memory_run_seed(const std::string& scratch) {
  manual_seed(2);
  const auto model = std::make_shared<nn::MLP>(2, std::vector<int64_t>{4}, 3);
  MemoryRecorder recorder(kCPU);
  recorder.start();
  const Tensor x = randn({5, 2});
  const Tensor labels = from_vector<int64_t>({0, 1, 2, 0, 1}, {5});
  cross_entropy(model->forward(x), labels).backward();
  recorder.stop();
  const std::string path = scratch + "/run.json";
  save_memory_run(path, memory_run_from(recorder, "mlp, batch 5", {{"ms_per_step", 0.5}}));
  write("fuzz_memory_run", "seed-mlp-step.json", file_bytes(path));
}

void text_seeds() {
  for (const char* s : {"512MiB", "1.5GiB", "0", "64M", "2GB", "1000000", "9223372036854775807", "0.1MiB", "4k", "17B"})
    write_text("fuzz_byte_size", std::string("seed-") + s, s);
  for (const char* s : {"cpu", "cuda", "cuda:1", "cuda:15"}) {
    std::string name = std::string("seed-") + s;
    std::replace(name.begin(), name.end(), ':', '-');
    write_text("fuzz_device_string", name, s);
  }
  for (const char* s : {"none", "sqrt", "4", "12"}) write_text("fuzz_checkpoint_policy", std::string("seed-") + s, s);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: make_seed_corpus <fashion-mnist-subset folder> <corpus folder>\n";
    return 2;
  }
  corpus_root = argv[2];
  const std::filesystem::path scratch = std::filesystem::temp_directory_path() / "ember-seed-corpus";
  std::filesystem::create_directories(scratch);
  try {
    idx_seeds(argv[1]);
    cifar_seeds(argv[1]);
    safetensors_seeds(scratch.string());
    memory_run_seed(scratch.string());
    text_seeds();
  } catch (const std::exception& e) {
    std::cerr << "make_seed_corpus: " << e.what() << "\n";
    return 1;
  }
  std::filesystem::remove_all(scratch);
  return 0;
}
