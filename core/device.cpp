#include "core/device.h"

#include <cstdlib>
#include <cstring>

#include "core/error.h"

namespace ember {

Device::Device(const char* spec) {
  const std::string s(spec);
  if (s == "cpu") {
    *this = Device(DeviceType::cpu, 0);
  } else if (s == "cuda") {
    *this = Device(DeviceType::cuda, 0);
  } else if (s.rfind("cuda:", 0) == 0 && s.size() > 5) {
    char* end = nullptr;
    const long index = std::strtol(s.c_str() + 5, &end, 10);
    EMBER_CHECK(*end == '\0' && index >= 0, "bad device '" << s << "' (expected cpu, cuda or cuda:N)");
    *this = Device(DeviceType::cuda, static_cast<int>(index));
  } else {
    EMBER_THROW("bad device '" << s << "' (expected cpu, cuda or cuda:N)");
  }
}

std::string Device::str() const {
  return is_cpu() ? "cpu" : "cuda:" + std::to_string(index);
}

}  // namespace ember
