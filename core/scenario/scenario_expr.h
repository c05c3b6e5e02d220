// core/scenario/scenario_expr.h: the small expression language of `(expr)`
// keys and values in `assert:` / `error:` (docs/SCENARIOS.md "Expressions").
// Not JMESPath (no C++ JMESPath library is packaged for Debian); a subset
// of its syntax, with this exact grammar:
//
//   expr     := operand [ cmp operand ]
//   cmp      := "==" | "!=" | "<" | "<=" | ">" | ">="
//   operand  := "length" "(" expr ")" | literal | path | "(" expr ")"
//   literal  := number | 'string' | true | false | null
//               number: -?[0-9]+(\.[0-9]+)?   string: single quotes, \' and \\ escaped
//   path     := ( "@" | ident ) { "." ident | "[" integer "]" | "[" 'string' "]" }
//   ident    := [A-Za-z_][A-Za-z0-9_]*        (not true, false, null)
//
// Blanks between tokens are ignored. `@` is the current value (see below);
// a path that does not start with `@` starts at it. A missing field or an
// index out of range is null. length(x): a string's characters, a list's
// items, a map's keys; an error for anything else (null included).
// == and != compare any two values (numbers by value: 2 == 2.0); < <= > >=
// compare two numbers, or two strings (byte-wise), and are an error for
// other pairs.
#pragma once

#include <boost/json/value.hpp>

#include <string>
#include <string_view>

namespace gpuops::core {

// Whether `text` is written as an expression: it starts with '(' and ends
// with ')' (the whole YAML key or string value).
bool is_expression(std::string_view text);

// Checks the syntax of `text` (with its outer parentheses). Throws
// std::invalid_argument "at character N: <what was expected>" (N 1-based,
// in `text`).
void check_expression(std::string_view text);

// Evaluates `text` (with its outer parentheses) with `@` = `at` (nullptr:
// null). Throws std::invalid_argument for a syntax error and
// std::runtime_error for an evaluation error (a length of null, an
// ordering of a number and a string).
boost::json::value evaluate_expression(std::string_view text, const boost::json::value* at);

}  // namespace gpuops::core
