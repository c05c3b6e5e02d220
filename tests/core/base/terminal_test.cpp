// Text from a cluster printed safely: kubectl's EscapeTerminal (ESC, CR) and,
// since a finding is one line, LF and the other controls.
#include <gtest/gtest.h>

#include "core/base/terminal.h"
#include "core/diagnose/diagnose.h"

using namespace gpuops;

TEST(EscapeTerminal, AsKubectlAndOneLine) {
  EXPECT_EQ(core::escape_terminal("lab-node-0"), "lab-node-0");
  EXPECT_EQ(core::escape_terminal("a\x1b[31mb"), "a^[[31mb");  // cli-runtime terminal.go: ESC -> ^[
  EXPECT_EQ(core::escape_terminal("a\rb"), "a\\rb");           // CR -> \r
  EXPECT_EQ(core::escape_terminal("a\nb"), "a\\nb");
  EXPECT_EQ(core::escape_terminal("a\nb", true), "a\nb");
  EXPECT_EQ(core::escape_terminal(std::string("a\0b\x07\x7f\tc", 7)), "a\\x00b\\x07\\x7f\tc");
  EXPECT_EQ(core::escape_terminal("caf\xc3\xa9"), "caf\xc3\xa9");  // UTF-8 kept
}

// A pod's message or a waiting reason with a newline used to print a line of
// its own ("lab-node-2 OK") in diagnose's text.
TEST(EscapeTerminal, DiagnoseTextCannotBeForged) {
  core::Finding f;
  f.node = "lab-node-1";
  f.operand = "driver";
  f.severity = core::Severity::kError;
  f.name = "crash-loop";
  f.reason = "back-off\nlab-node-2 OK";
  f.evidence.emplace_back("message", "\x1b]0;title\x07");
  EXPECT_EQ(core::render_text(std::vector<core::Finding>{f}),
            "lab-node-1 driver error crash-loop: back-off\\nlab-node-2 OK\n"
            "    message: ^[]0;title\\x07\n");
}
