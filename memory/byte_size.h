#pragma once
// parse_byte_size: the one reader of byte sizes written by people, such as
// EMBER_CPU_MEMORY_LIMIT=512MiB and `ember train --memory-limit 2GiB`.
//
//   parse_byte_size("1.5GiB", "--memory-limit")  // 1610612736
//
// Accepted: a whole or decimal number in plain digits (`512`, `1.5`; at most 18
// decimals) followed directly by an optional unit, case-sensitive:
//   B (or none) = 1, KiB = 2^10, MiB = 2^20, GiB = 2^30, KB = 1e3, MB = 1e6, GB = 1e9,
//   and the short forms K (or k), M, G for KiB, MiB, GiB.
// A fraction of a byte is dropped (`0.1MiB` is 104857 bytes). `0` (with any unit)
// is 0, which the memory limit reads as "no limit".
// Rejected, with an error naming `what`, the text and what is allowed: empty text,
// spaces, signs, exponents (`1e9`), `inf`, `nan`, other units or trailing text, a
// nonzero size below one byte, and sizes above 2^63 - 1 bytes (or SIZE_MAX).
#include <cstddef>
#include <string>

namespace ember {

size_t parse_byte_size(const std::string& text, const char* what);

}  // namespace ember
