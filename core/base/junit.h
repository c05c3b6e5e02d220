// core/base/junit.h: a JUnit XML report (the format CI systems read: Jenkins,
// GitLab, GitHub's test reporters), one <testsuite> of <testcase>s, written
// with Boost.PropertyTree. Used by `gpuops run --junit` and
// `gpuops lab grade --junit`.
#pragma once

#include <string>
#include <vector>

namespace gpuops::core {

struct JUnitCase {
  std::string name;
  std::string classname;
  std::string file;     // "" : no file attribute
  double seconds = -1;  // < 0: no time attribute
  bool failed = false;
  std::string failure_message;  // one line, the <failure message=...>
  std::string failure_type;     // its type attribute
  std::string failure_body;     // the whole text (a diff)
  bool skipped = false;
  std::string skipped_message;
  std::string system_out;  // "" : no <system-out> (what the case printed: diagnostics)
  std::string system_err;  // "" : no <system-err> (its errors beside the result: clean-up failures)
};

// The document: <testsuite name tests failures errors(0) skipped [time]>,
// each case's <failure> or <skipped>, then its <system-out> and <system-err>
// when not empty. Characters XML cannot hold at all
// (control characters but tab, LF and CR) are written "\xNN"; the writer
// escapes & < > ". `seconds` < 0: no time attribute on the suite.
std::string render_junit_suite(const std::string& suite, const std::vector<JUnitCase>& cases, double seconds = -1);

}  // namespace gpuops::core
