// core/diagnose/hints.h: what to do about messages that GPU Operator users
// meet again and again, each with where the cause was established.
//
// A hint is attached to a finding that quotes its message (in the reason or
// in any evidence value): diagnose() runs add_hints on every finding it
// returns, so the table is the one place such knowledge lives. Table:
// core/diagnose/hints.cpp, listed in docs/DIAGNOSE.md "Hints".
#pragma once

#include <string_view>
#include <vector>

#include "core/diagnose/finding.h"

namespace gpuops::core {

struct MessageHint {
  // Matched as a substring of the quoted text, ASCII case-insensitively.
  std::string_view pattern;
  std::string_view hint;    // one line: the usual cause and what to do
  std::string_view source;  // the report or document the cause comes from
};

// The table, in the order hints are shown.
const std::vector<MessageHint>& message_hints();

// The hints whose pattern occurs in `text`, in table order.
std::vector<const MessageHint*> hints_for(std::string_view text);

// Appends one ("hint", "<hint> (<source>)") evidence entry to `f` per hint of
// the table whose pattern occurs in its reason or in one of its evidence
// values; a hint already present is not added again.
void add_hints(Finding& f);

}  // namespace gpuops::core
