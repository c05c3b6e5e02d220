// core/scenario/scenario_expr.cpp: the `(expr)` language of assert/error
// (core/scenario/scenario_expr.h): a recursive-descent parser that
// evaluates as it parses (an expression is a few dozen characters).
#include "core/scenario/scenario_expr.h"

#include <boost/json.hpp>

#include <cctype>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

namespace gpuops::core {

namespace json = boost::json;

namespace {

const char* type_name(const json::value& v) {
  if (v.is_null()) return "null";
  if (v.is_bool()) return "boolean";
  if (v.is_number()) return "number";
  if (v.is_string()) return "string";
  if (v.is_array()) return "list";
  return "map";
}

bool same(const json::value& a, const json::value& b) {
  if (a.is_number() && b.is_number()) return a.to_number<double>() == b.to_number<double>();
  return a == b;
}

class Parser {
 public:
  Parser(std::string_view text, const json::value* at, bool evaluate) : text_(text), at_(at), eval_(evaluate) {}

  json::value whole() {
    json::value v = expr();
    blanks();
    if (pos_ != text_.size()) fail("the end of the expression");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& expected) const {
    throw std::invalid_argument("at character " + std::to_string(pos_ + 1) + ": expected " + expected);
  }
  void blanks() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool take(std::string_view token) {
    blanks();
    if (text_.substr(pos_, token.size()) != token) return false;
    pos_ += token.size();
    return true;
  }
  static bool ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
  static bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
  std::string ident() {
    blanks();
    size_t start = pos_;
    if (pos_ >= text_.size() || !ident_start(text_[pos_])) fail("a field name");
    while (pos_ < text_.size() && ident_char(text_[pos_])) ++pos_;
    return std::string(text_.substr(start, pos_ - start));
  }
  std::string quoted() {  // after the opening quote
    std::string out;
    while (pos_ < text_.size() && text_[pos_] != '\'') {
      if (text_[pos_] == '\\' && pos_ + 1 < text_.size()) ++pos_;
      out.push_back(text_[pos_++]);
    }
    if (pos_ >= text_.size()) fail("' to end the string");
    ++pos_;
    return out;
  }
  std::optional<json::value> number() {
    blanks();
    size_t start = pos_;
    if (pos_ < text_.size() && text_[pos_] == '-') ++pos_;
    size_t digits = pos_;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    if (pos_ == digits) {
      pos_ = start;
      return std::nullopt;
    }
    bool fraction = false;
    if (pos_ + 1 < text_.size() && text_[pos_] == '.' && std::isdigit(static_cast<unsigned char>(text_[pos_ + 1]))) {
      fraction = true;
      ++pos_;
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    }
    const std::string n(text_.substr(start, pos_ - start));
    if (fraction) return json::value(std::stod(n));
    try {
      return json::value(static_cast<int64_t>(std::stoll(n)));
    } catch (const std::out_of_range&) {
      return json::value(std::stod(n));
    }
  }

  json::value expr() {
    json::value left = operand();
    static const char* const kOps[] = {"==", "!=", "<=", ">=", "<", ">"};
    for (const char* op : kOps) {
      if (!take(op)) continue;
      json::value right = operand();
      if (!eval_) return true;
      const std::string o = op;
      if (o == "==") return same(left, right);
      if (o == "!=") return !same(left, right);
      int order = 0;
      if (left.is_number() && right.is_number()) {
        double a = left.to_number<double>(), b = right.to_number<double>();
        order = a < b ? -1 : a > b ? 1 : 0;
      } else if (left.is_string() && right.is_string()) {
        int c = left.as_string().subview().compare(right.as_string().subview());
        order = c < 0 ? -1 : c > 0 ? 1 : 0;
      } else {
        throw std::runtime_error(std::string("cannot order a ") + type_name(left) + " and a " + type_name(right) +
                                 " with " + o);
      }
      if (o == "<") return order < 0;
      if (o == "<=") return order <= 0;
      if (o == ">") return order > 0;
      return order >= 0;
    }
    return left;
  }

  json::value operand() {
    blanks();
    if (take("(")) {
      json::value v = expr();
      if (!take(")")) fail(")");
      return v;
    }
    if (take("'")) return json::value(quoted());
    if (auto n = number()) return *n;
    if (take("@")) return path(eval_ && at_ ? *at_ : json::value());
    if (pos_ >= text_.size() || !ident_start(text_[pos_])) fail("a value, a field name, @ or length(...)");
    const size_t start = pos_;
    const std::string name = ident();
    if (name == "true") return true;
    if (name == "false") return false;
    if (name == "null") return nullptr;
    if (name == "length" && take("(")) {
      json::value v = expr();
      if (!take(")")) fail(")");
      if (!eval_) return 0;
      if (v.is_string()) return static_cast<int64_t>(v.as_string().size());
      if (v.is_array()) return static_cast<int64_t>(v.as_array().size());
      if (v.is_object()) return static_cast<int64_t>(v.as_object().size());
      throw std::runtime_error(std::string("length of a ") + type_name(v));
    }
    pos_ = start;  // a path from @: its first field again
    return path(eval_ && at_ ? *at_ : json::value(), true);
  }

  // The steps of a path from `v` (`first_field`: the path starts with a field name).
  json::value path(json::value v, bool first_field = false) {
    for (bool first = true;; first = false) {
      std::string key;
      bool is_key = false;
      if (first && first_field) {
        key = ident();
        is_key = true;
      } else if (take(".")) {
        key = ident();
        is_key = true;
      } else if (take("[")) {
        blanks();
        if (take("'")) {
          key = quoted();
          is_key = true;
        } else if (auto n = number(); n && n->is_int64() && n->as_int64() >= 0) {
          const auto i = static_cast<size_t>(n->as_int64());
          v = v.is_array() && i < v.as_array().size() ? v.as_array()[i] : json::value();
        } else {
          fail("an index (0, 1, ...) or a 'key'");
        }
        if (!take("]")) fail("]");
      } else {
        return v;
      }
      if (is_key) {
        const json::value* field = v.is_object() ? v.as_object().if_contains(key) : nullptr;
        v = field ? *field : json::value();
      }
    }
  }

  std::string_view text_;
  const json::value* at_;
  bool eval_;
  size_t pos_ = 0;
};

}  // namespace

bool is_expression(std::string_view text) { return text.size() >= 2 && text.front() == '(' && text.back() == ')'; }

void check_expression(std::string_view text) { Parser(text, nullptr, false).whole(); }

json::value evaluate_expression(std::string_view text, const json::value* at) { return Parser(text, at, true).whole(); }

}  // namespace gpuops::core
