// cli/cmd_lab_grade_html.h: `gpuops lab grade --html FILE` (docs/LAB.md),
// the grade as one self-contained HTML page for a learner or a teacher.
#pragma once

#include <string>
#include <vector>

#include "core/analysis/placement_view.h"
#include "core/lab/lab.h"

namespace gpuops::cli {

// What to do when step `step` (1..8) fails: LAB.md's rule for it, in a
// sentence. "" for another number.
std::string grade_fix_hint(int step);

// The page (core::html_document: no script, CSS inline, a CSP that forbids
// any fetch): a heading with `dir` and how many steps passed, a checklist
// linking to each step, then per step its number, title and PASS/FAIL
// (class "step pass" / "step fail", the word in <span class="result">), the
// grader's reason (the diff, for a failed file) in <pre class="reason">,
// for a failure the fix hint (<p class="hint">), and every file the step
// read (core::GradeFile): the learner's text beside the expected one (out/
// files) or gpuops' reference (manifests, scripts), open when the step
// failed; then, when `grid` is given, the placement view the grade judged
// (core::render_view_table). Every string from the directory or the
// cluster is escaped (core::html_escape).
std::string render_grade_html(const std::vector<core::GradeLine>& lines, const std::string& dir,
                              const core::PlacementView* grid);

}  // namespace gpuops::cli
