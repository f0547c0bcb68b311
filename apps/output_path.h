#pragma once
// Checking an output path before the work that fills it starts, so that a typo in
// --save or --memory-report fails in the first second, not after an epoch.
//
//   ember::apps::check_writable(options.save, "--save");   // throws: "--save 'x/run.ckpt': the folder 'x' does not exist"
//
// The check creates and removes a scratch file next to the path (the folder must
// take new files: saves are written beside the target and renamed over it), and an
// existing target must be a file we may overwrite. An empty path is not checked.
#include <string>

namespace ember::apps {

void check_writable(const std::string& path, const char* flag);

}  // namespace ember::apps
