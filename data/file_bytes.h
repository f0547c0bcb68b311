#pragma once
// Whole-file reads for the dataset readers. A file that starts with the gzip magic bytes
// (1f 8b) is inflated, so "x.gz" and "x" read the same way; the inflated size is bounded,
// so a small file cannot inflate to gigabytes:
//
//   std::vector<uint8_t> bytes = ember::data::read_file_bytes("data_batch_1.bin.gz", "read_cifar10", 1 << 30);
//
// Every error names `op`, the file and what is wrong (missing, unreadable, more than the
// limit, corrupt or truncated gzip stream). A reader that knows the size from a header
// streams instead (data/byte_stream.h).
#include <cstdint>
#include <string>
#include <vector>

namespace ember::data {

// The file's bytes, inflated when gzipped; more than max_bytes of them is an error.
std::vector<uint8_t> read_file_bytes(const std::string& path, const char* op, uint64_t max_bytes);
// The same for bytes already in memory (`name` labels the errors): what read_file_bytes
// does after reading the file, callable on a buffer (tests/fuzz/ does).
std::vector<uint8_t> decode_file_bytes(std::vector<uint8_t> stored, const std::string& name, const char* op,
                                       uint64_t max_bytes);
// The file's bytes as stored (no gzip detection).
std::vector<uint8_t> read_raw_file_bytes(const std::string& path, const char* op);

// True when a regular file exists at `path`.
bool file_exists(const std::string& path);

// The first of `candidates` (file names inside `folder`) that exists; throws naming `op`, the
// folder and every candidate when none does, or when the folder itself is missing.
std::string find_file(const std::string& folder, const std::vector<std::string>& candidates, const char* op);

}  // namespace ember::data
