#pragma once
// `ember compare`: two recorded runs side by side, so a student sees what a technique
// moved. Reads the files --memory-json writes; writes one self-contained HTML page (both
// timelines on one time and byte scale) and prints the table of peaks by category and
// time per step (or, with --json, the same as JSON).
//
//   ember bench-train --model convnet --batch 256 --memory-json fp32.json
//   ember bench-train --model convnet --batch 256 --precision fp16 --memory-json fp16.json
//   ember compare fp32.json fp16.json -o compare.html
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

namespace CLI {
class App;
}

namespace ember::apps {

struct CompareOptions {
  std::string a, b;                         // the two --memory-json files
  std::string output = "compare.html";      // -o
  bool json = false;
};

CLI::App* add_compare_command(CLI::App& app, CompareOptions& options);
// Writes the page, prints the table (or JSON) and returns the JSON.
nlohmann::ordered_json compare_command(const CompareOptions& options, std::ostream& out);

}  // namespace ember::apps
