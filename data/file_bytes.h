#pragma once
// Whole-file reads for the dataset readers. A file that starts with the gzip
// magic bytes (1f 8b) is inflated, so "x.gz" and "x" read the same way:
//
//   std::vector<uint8_t> bytes = ember::data::read_file_bytes("train-images-idx3-ubyte.gz", "read_idx");
//
// Every error names `op`, the file and what is wrong (missing, unreadable,
// corrupt or truncated gzip stream).
#include <cstdint>
#include <string>
#include <vector>

namespace ember::data {

std::vector<uint8_t> read_file_bytes(const std::string& path, const char* op);
// The file's bytes as stored (no gzip detection).
std::vector<uint8_t> read_raw_file_bytes(const std::string& path, const char* op);

// *bytes = unit * product(sizes); false (and *bytes unspecified) when that overflows
// 64 bits. A zero size gives 0 even when other sizes are huge.
bool checked_byte_count(const std::vector<int64_t>& sizes, uint64_t unit, uint64_t* bytes);

// True when a regular file exists at `path`.
bool file_exists(const std::string& path);

// The first of `candidates` (file names inside `folder`) that exists; throws naming
// the folder and every candidate when none does.
std::string find_file(const std::string& folder, const std::vector<std::string>& candidates, const char* op);

}  // namespace ember::data
