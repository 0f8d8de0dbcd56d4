// The string model (python_str.h) against CPython. Each row holds the
// Python expression and what /usr/bin/python3 (3.11, Debian 12) printed for
// it; rerun one with `python3 -c "print(repr(EXPR))"`.
#include "ggufguard/template/python_str.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

namespace ggufguard::jinja::analysis {
namespace {

constexpr size_t kNoLimit = 1 << 20;

struct Row {
  const char* python;  // the expression CPython evaluated
  std::string ours;
  const char* cpython;
};

void ExpectRows(const std::vector<Row>& rows) {
  for (const Row& r : rows) EXPECT_EQ(r.ours, r.cpython) << r.python;
}

TEST(TemplatePythonStrTest, PadIsCenterLjustRjustZfill) {
  ExpectRows({
      {"'globals'.center(11, '_')", Pad("globals", 11, '_', '^'), "__globals__"},
      {"'class'.center(10, '_')", Pad("class", 10, '_', '^'), "__class___"},
      {"'ab'.center(5, '*')", Pad("ab", 5, '*', '^'), "**ab*"},
      {"'abc'.center(6, '*')", Pad("abc", 6, '*', '^'), "*abc**"},
      {"'x'.ljust(4, '_')", Pad("x", 4, '_', '<'), "x___"},
      {"'x'.rjust(4, '_')", Pad("x", 4, '_', '>'), "___x"},
      {"'42'.zfill(5)", Pad("42", 5, '0', '>'), "00042"},
      {"'long'.center(2)", Pad("long", 2, ' ', '^'), "long"},
  });
}

TEST(TemplatePythonStrTest, CaseMethods) {
  ExpectRows({
      {"'hELLo wORLD'.lower()", ToLower("hELLo wORLD"), "hello world"},
      {"'hello_world'.upper()", ToUpper("hello_world"), "HELLO_WORLD"},
      {"'__class__ of x'.title()", Title("__class__ of x"), "__Class__ Of X"},
      {"\"they're bill's 2nd\".title()", Title("they're bill's 2nd"), "They'Re Bill'S 2Nd"},
      {"'hELLO wORLD'.capitalize()", Capitalize("hELLO wORLD"), "Hello world"},
      {"'__SSalc__'.swapcase()", SwapCase("__SSalc__"), "__ssALC__"},
  });
}

TEST(TemplatePythonStrTest, Strip) {
  ExpectRows({
      {"' \\t x \\n'.strip()", Strip(" \t x \n", "", true, true), "x"},
      {"'xx__class__xx'.strip('x')", Strip("xx__class__xx", "x", true, true), "__class__"},
      {"'xx__class__xx'.lstrip('x')", Strip("xx__class__xx", "x", true, false), "__class__xx"},
      {"'xx__class__xx'.rstrip('x')", Strip("xx__class__xx", "x", false, true), "xx__class__"},
  });
}

TEST(TemplatePythonStrTest, Replace) {
  ExpectRows({
      {"'XXclassXX'.replace('X', '_')", Replace("XXclassXX", "X", "_", -1, kNoLimit), "__class__"},
      {"'XXclassXX'.replace('X', '_', 2)", Replace("XXclassXX", "X", "_", 2, kNoLimit), "__classXX"},
      {"'abc'.replace('', '-')", Replace("abc", "", "-", -1, kNoLimit), "-a-b-c-"},
      {"'abc'.replace('', '-', 2)", Replace("abc", "", "-", 2, kNoLimit), "-a-bc"},
      {"'abc'.replace('', '-', 4)", Replace("abc", "", "-", 4, kNoLimit), "-a-b-c-"},
      {"'abc'.replace('', '-', 0)", Replace("abc", "", "-", 0, kNoLimit), "abc"},
      {"'aaa'.replace('a', 'b', 0)", Replace("aaa", "a", "b", 0, kNoLimit), "aaa"},
  });
}

TEST(TemplatePythonStrTest, ReplaceStopsPastItsLimit) {
  // The caller discards a result past the limit; what matters is that the
  // work stops there, not at the full 1 MiB Python would build.
  const std::string s(1024, 'a');
  EXPECT_LE(Replace(s, "a", std::string(1024, 'b'), -1, 1024).size(), 2048u + 1024u);
}

TEST(TemplatePythonStrTest, Slice) {
  const auto none = std::nullopt;
  ExpectRows({
      {"'x__globals__x'[1:-1]", Slice("x__globals__x", 1, -1, none), "__globals__"},
      {"'abcdef'[::2]", Slice("abcdef", none, none, 2), "ace"},
      {"'abcdef'[::-1]", Slice("abcdef", none, none, -1), "fedcba"},
      {"'abcdef'[4:1:-1]", Slice("abcdef", 4, 1, -1), "edc"},
      {"'abcdef'[-2:]", Slice("abcdef", -2, none, none), "ef"},
      {"'abcdef'[10:]", Slice("abcdef", 10, none, none), ""},
      {"'abcdef'[-100:2]", Slice("abcdef", -100, 2, none), "ab"},
      {"'abcdef'[-1:]", Slice("abcdef", -1, none, none), "f"},
  });
}

TEST(TemplatePythonStrTest, JoinAndReverse) {
  ExpectRows({
      {"'_'.join(['a','b','c'])", JoinItems({"a", "b", "c"}, "_", kNoLimit), "a_b_c"},
      {"'abcdef'[::-1]", Reverse("abcdef"), "fedcba"},
  });
}

}  // namespace
}  // namespace ggufguard::jinja::analysis
