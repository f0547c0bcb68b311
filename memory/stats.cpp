#include "memory/stats.h"

#include <cstdio>
#include <sstream>

namespace ember {

void MemoryStats::reset_peaks() {
  for (Stat* s : {&allocated_bytes, &reserved_bytes, &active_bytes, &inactive_split_bytes, &requested_bytes,
                  &allocation_count, &active_count, &inactive_split_count, &segment_count})
    s->reset_peak();
  for (Stat& s : by_category) s.reset_peak();
  for (Stat& s : allocated_by_pool) s.reset_peak();
  for (Stat& s : reserved_by_pool) s.reset_peak();
}

void MemoryStats::add_segment(int64_t bytes, int pool) {
  ++backend_allocations;
  reserved_bytes.increase(bytes);
  reserved_by_pool[static_cast<size_t>(pool)].increase(bytes);
  segment_count.increase(1);
}

void MemoryStats::remove_segment(int64_t bytes, int pool) {
  ++backend_frees;
  reserved_bytes.decrease(bytes);
  reserved_by_pool[static_cast<size_t>(pool)].decrease(bytes);
  segment_count.decrease(1);
}

void MemoryStats::add_block(int64_t bytes, int64_t requested, MemoryCategory category, int pool) {
  allocated_bytes.increase(bytes);
  active_bytes.increase(bytes);
  requested_bytes.increase(requested);
  allocation_count.increase(1);
  active_count.increase(1);
  by_category[static_cast<size_t>(category)].increase(bytes);
  allocated_by_pool[static_cast<size_t>(pool)].increase(bytes);
}

void MemoryStats::remove_block(int64_t bytes, int64_t requested, MemoryCategory category, int pool) {
  allocated_bytes.decrease(bytes);
  requested_bytes.decrease(requested);
  allocation_count.decrease(1);
  by_category[static_cast<size_t>(category)].decrease(bytes);
  allocated_by_pool[static_cast<size_t>(pool)].decrease(bytes);
}

void MemoryStats::remove_active(int64_t bytes) {
  active_bytes.decrease(bytes);
  active_count.decrease(1);
}

void MemoryStats::move_category(int64_t bytes, MemoryCategory from, MemoryCategory to) {
  by_category[static_cast<size_t>(from)].decrease(bytes);
  by_category[static_cast<size_t>(to)].increase(bytes);
}

std::string format_bytes(int64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while ((value >= 1024.0 || value <= -1024.0) && unit < 4) {
    value /= 1024.0;
    ++unit;
  }
  char text[32];
  if (unit == 0)
    std::snprintf(text, sizeof text, "%lld B", static_cast<long long>(bytes));
  else
    std::snprintf(text, sizeof text, "%.2f %s", value, units[unit]);
  return text;
}

std::string format_memory_stats(const MemoryStats& stats, const std::string& title) {
  std::ostringstream os;
  char line[160];
  std::snprintf(line, sizeof line, "%-22s %14s %14s %14s %14s\n", title.c_str(), "current", "peak",
                "allocated", "freed");
  os << line << std::string(82, '-') << "\n";
  auto row = [&](const char* name, const Stat& s, bool bytes) {
    auto fmt = [&](int64_t v) { return bytes ? format_bytes(v) : std::to_string(v); };
    std::snprintf(line, sizeof line, "%-22s %14s %14s %14s %14s\n", name, fmt(s.current).c_str(),
                  fmt(s.peak).c_str(), fmt(s.allocated).c_str(), fmt(s.freed).c_str());
    os << line;
  };
  row("allocated", stats.allocated_bytes, true);
  row("reserved", stats.reserved_bytes, true);
  row("active", stats.active_bytes, true);
  row("inactive split", stats.inactive_split_bytes, true);
  row("requested", stats.requested_bytes, true);
  row("  small pool allocated", stats.allocated_by_pool[0], true);
  row("  large pool allocated", stats.allocated_by_pool[1], true);
  row("  small pool reserved", stats.reserved_by_pool[0], true);
  row("  large pool reserved", stats.reserved_by_pool[1], true);
  row("allocations", stats.allocation_count, false);
  row("active blocks", stats.active_count, false);
  row("inactive split blocks", stats.inactive_split_count, false);
  row("segments", stats.segment_count, false);
  for (int c = 0; c < kNumMemoryCategories; ++c) {
    const std::string name = std::string("  ") + category_name(static_cast<MemoryCategory>(c));
    row(name.c_str(), stats.by_category[static_cast<size_t>(c)], true);
  }
  std::snprintf(line, sizeof line,
                "backend allocs %lld, backend frees %lld, cache hits %lld, retries %lld, OOMs %lld\n",
                static_cast<long long>(stats.backend_allocations), static_cast<long long>(stats.backend_frees),
                static_cast<long long>(stats.cache_hits), static_cast<long long>(stats.retries),
                static_cast<long long>(stats.ooms));
  os << line;
  return os.str();
}

}  // namespace ember
