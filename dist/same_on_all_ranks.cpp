#include "dist/same_on_all_ranks.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <sstream>

#include "core/error.h"
#include "memory/empty.h"

namespace ember::dist {

namespace {

// (name, value) pairs as bytes: each string is its length (8 bytes) then its characters.
std::string encode(const NamedValues& options) {
  std::string bytes;
  auto put = [&](const std::string& s) {
    const int64_t length = static_cast<int64_t>(s.size());
    bytes.append(reinterpret_cast<const char*>(&length), sizeof(length));
    bytes += s;
  };
  for (const auto& [name, value] : options) {
    put(name);
    put(value);
  }
  return bytes;
}

NamedValues decode(const char* bytes, int64_t size) {
  NamedValues options;
  int64_t at = 0;
  auto get = [&]() {
    int64_t length = 0;
    std::memcpy(&length, bytes + at, sizeof(length));
    at += sizeof(length);
    std::string s(bytes + at, static_cast<size_t>(length));
    at += length;
    return s;
  };
  while (at < size) {
    std::string name = get();
    options.emplace_back(std::move(name), get());
  }
  return options;
}

// Every rank's options, through two all_gathers (lengths, then bytes padded to the longest).
std::vector<NamedValues> gather(const NamedValues& options, ProcessGroup& group) {
  const std::string mine = encode(options);
  const int size = group.size();
  Tensor length = empty({1}, TensorOptions().dtype(DType::i64));
  length.data<int64_t>()[0] = static_cast<int64_t>(mine.size());
  Tensor lengths = empty({size}, TensorOptions().dtype(DType::i64));
  group.all_gather(length, lengths);
  const int64_t* each = lengths.data<int64_t>();
  const int64_t longest = *std::max_element(each, each + size);
  if (longest == 0) return std::vector<NamedValues>(static_cast<size_t>(size));  // no rank has options
  Tensor padded = empty({longest}, TensorOptions().dtype(DType::u8));
  std::memset(padded.data_ptr(), 0, static_cast<size_t>(longest));
  std::memcpy(padded.data_ptr(), mine.data(), mine.size());
  Tensor all = empty({size * longest}, TensorOptions().dtype(DType::u8));
  group.all_gather(padded, all);
  std::vector<NamedValues> ranks;
  for (int r = 0; r < size; ++r) ranks.push_back(decode(static_cast<const char*>(all.data_ptr()) + r * longest, each[r]));
  return ranks;
}

std::optional<std::string> find(const NamedValues& options, const std::string& name) {
  for (const auto& [n, v] : options)
    if (n == name) return v;
  return std::nullopt;
}

// "a", "a and b", "a, b and c".
std::string join(const std::vector<std::string>& parts) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i == 0 ? "" : i + 1 == parts.size() ? " and " : ", ") + parts[i];
  return out;
}

// "--batch is 64 on ranks 0 and 2 and 32 on rank 1", or "" when every rank has the same value.
std::string describe_difference(const std::string& name, const std::vector<NamedValues>& ranks) {
  std::vector<std::optional<std::string>> values;   // one per distinct value, in order of first rank
  std::vector<std::vector<std::string>> holders;    // the ranks with each
  for (size_t r = 0; r < ranks.size(); ++r) {
    const std::optional<std::string> value = find(ranks[r], name);
    auto at = std::find(values.begin(), values.end(), value);
    if (at == values.end()) {
      values.push_back(value);
      holders.emplace_back();
      at = values.end() - 1;
    }
    holders[static_cast<size_t>(at - values.begin())].push_back(std::to_string(r));
  }
  if (values.size() == 1) return "";
  std::vector<std::string> parts;
  for (size_t i = 0; i < values.size(); ++i) {
    const std::string value = !values[i] ? "not given" : values[i]->empty() ? "empty" : *values[i];
    parts.push_back(value + " on rank" + (holders[i].size() > 1 ? "s " : " ") + join(holders[i]));
  }
  return name + " is " + join(parts);
}

}  // namespace

void check_same_on_all_ranks(const NamedValues& options, ProcessGroup& group) {
  if (group.size() == 1) return;
  const std::vector<NamedValues> ranks = gather(options, group);
  std::vector<std::string> names;  // every name any rank gave, in order of first appearance
  for (const NamedValues& rank_options : ranks)
    for (const auto& [name, value] : rank_options)
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  std::vector<std::string> differences;
  for (const std::string& name : names)
    if (std::string d = describe_difference(name, ranks); !d.empty()) differences.push_back(d);
  if (differences.empty()) return;
  std::ostringstream message;
  message << "dist: the ranks were not given the same options: ";
  for (size_t i = 0; i < differences.size(); ++i) message << (i == 0 ? "" : "; ") << differences[i];
  message << " (every rank must be started with the same options)";
  EMBER_THROW(message.str());
}

void check_same_on_all_ranks(const std::string& name, const std::string& value, ProcessGroup& group) {
  check_same_on_all_ranks(NamedValues{{name, value}}, group);
}

}  // namespace ember::dist
