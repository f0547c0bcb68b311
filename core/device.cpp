#include "core/device.h"

#include <climits>

#include "core/error.h"
#include "core/parse_integer.h"

namespace ember {

Device::Device(const char* spec) {
  const std::string s(spec);
  if (s == "cpu") {
    *this = Device(DeviceType::cpu, 0);
  } else if (s == "cuda") {
    *this = Device(DeviceType::cuda, 0);
  } else if (s.rfind("cuda:", 0) == 0) {
    int64_t index = 0;
    EMBER_CHECK(read_decimal(s.substr(5), &index) && index <= INT_MAX,
                "bad device '" << s << "' (expected cpu, cuda or cuda:N, N a device number in plain digits)");
    *this = Device(DeviceType::cuda, static_cast<int>(index));
  } else {
    EMBER_THROW("bad device '" << s << "' (expected cpu, cuda or cuda:N)");
  }
}

std::string Device::str() const {
  return is_cpu() ? "cpu" : "cuda:" + std::to_string(index);
}

}  // namespace ember
