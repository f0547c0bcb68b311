#include "apps/number_checks.h"

#include <cmath>
#include <string>

namespace ember::apps {

CLI::Validator finite_number() {
  return CLI::Validator(
      [](std::string& input) -> std::string {
        double value = 0.0;
        if (!CLI::detail::lexical_cast(input, value) || !std::isfinite(value))
          return "'" + input + "' is not a finite number";
        return {};
      },
      "FINITE", "finite");
}

}  // namespace ember::apps
