// The JUnit XML writer; see junit.h.
#include "core/base/junit.h"

#include <boost/property_tree/ptree.hpp>
#include <boost/property_tree/xml_parser.hpp>

#include <sstream>

namespace gpuops::core {

namespace {

// Text for an XML 1.0 document: the characters XML cannot hold at all, even
// as references (control characters but tab, line feed and carriage return),
// written as "\xNN". property_tree's writer escapes the rest (& < > ").
std::string xml_text(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    unsigned char ch = static_cast<unsigned char>(c);
    if (ch < 0x20 && ch != '\t' && ch != '\n' && ch != '\r') {
      static const char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[ch >> 4];
      out += kHex[ch & 0xf];
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string render_junit_suite(const std::string& suite_name, const std::vector<JUnitCase>& cases, double seconds) {
  namespace pt = boost::property_tree;
  pt::ptree suite;
  int failures = 0, skipped = 0;
  for (const auto& c : cases) {
    failures += c.failed;
    skipped += !c.failed && c.skipped;
  }
  suite.put("<xmlattr>.name", xml_text(suite_name));
  suite.put("<xmlattr>.tests", cases.size());
  suite.put("<xmlattr>.failures", failures);
  suite.put("<xmlattr>.errors", 0);
  suite.put("<xmlattr>.skipped", skipped);
  if (seconds >= 0) suite.put("<xmlattr>.time", seconds);
  for (const auto& c : cases) {
    pt::ptree test_case;
    test_case.put("<xmlattr>.name", xml_text(c.name));
    test_case.put("<xmlattr>.classname", xml_text(c.classname));
    if (!c.file.empty()) test_case.put("<xmlattr>.file", xml_text(c.file));
    if (c.seconds >= 0) test_case.put("<xmlattr>.time", c.seconds);
    if (c.failed) {
      pt::ptree failure;
      failure.put("<xmlattr>.message", xml_text(c.failure_message));
      failure.put("<xmlattr>.type", xml_text(c.failure_type));
      failure.put_value(xml_text(c.failure_body));
      test_case.add_child("failure", failure);
    } else if (c.skipped) {
      pt::ptree skip;
      skip.put("<xmlattr>.message", xml_text(c.skipped_message));
      test_case.add_child("skipped", skip);
    }
    if (!c.system_out.empty()) test_case.add("system-out", xml_text(c.system_out));
    if (!c.system_err.empty()) test_case.add("system-err", xml_text(c.system_err));
    suite.add_child("testcase", test_case);
  }
  pt::ptree root;
  root.add_child("testsuite", suite);
  std::ostringstream os;
  pt::write_xml(os, root, pt::xml_writer_make_settings<std::string>(' ', 2));
  return os.str();
}

}  // namespace gpuops::core
