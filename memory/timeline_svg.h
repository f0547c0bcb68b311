#pragma once
// The memory timeline picture, drawn by hand as SVG so pages need nothing else: live bytes
// by category over time (stacked), training phases shaded, reserved bytes dashed, the peak
// marked. The memory report draws one; `ember compare` draws two on one scale.
//
//   const TimelineScale scale = timeline_scale(samples);          // or widened to cover two runs
//   page << timeline_svg(samples, peak, scale) << timeline_legend(peak);
#include <cstdint>
#include <string>
#include <vector>

#include "memory/recorder.h"

namespace ember {

struct TimelineScale {
  double t0 = 0.0, t1 = 1.0;  // ms, the x range
  int64_t y_max = 1;          // bytes at the top of the y axis
};

// The range of the samples: time from the first to the last, bytes up to the most reserved.
TimelineScale timeline_scale(const std::vector<MemoryRecorder::Sample>& samples);
// Both ranges covered: two runs drawn on one scale.
TimelineScale covering(const TimelineScale& a, const TimelineScale& b);
// Samples are thinned to about one per pixel column, keeping each column's maximum.
std::string timeline_svg(const std::vector<MemoryRecorder::Sample>& samples, const MemoryRecorder::Sample& peak,
                         const TimelineScale& scale);
// The categories' colours (with their bytes at the peak), reserved, and the phases.
std::string timeline_legend(const MemoryRecorder::Sample& peak);
// The page style the legend and the tables expect.
const char* timeline_page_css();
// &, <, >, ' and " escaped: safe in HTML text and in quoted attribute values.
std::string html_escape(const std::string& text);

}  // namespace ember
