// Syntax errors: the whole formatted message (position, text, source line, caret).
#include <gtest/gtest.h>

#include "test_util.hpp"

namespace flexjit::dsl {
namespace {

struct Case {
  const char* source;
  const char* expected;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.source; }

class ErrorTest : public ::testing::TestWithParam<Case> {};

TEST_P(ErrorTest, Message) { EXPECT_EQ(test::error_of(GetParam().source), GetParam().expected); }

INSTANTIATE_TEST_SUITE_P(Brackets, ErrorTest, ::testing::Values(
    Case{"def f(b, h):\n    return and_masks(b,\n                     h g)\n",
         "t.py:3:24: error: invalid syntax: expected ')' to close '(' at 2:21\n"
         "                         h g)\n"
         "                           ^\n"},
    Case{"x = t[i j]\n",
         "t.py:1:9: error: invalid syntax: expected ']' to close '[' at 1:6\n"
         "    x = t[i j]\n"
         "            ^\n"},
    Case{"x = (a b)\n",
         "t.py:1:8: error: invalid syntax: expected ')' to close '(' at 1:5\n"
         "    x = (a b)\n"
         "           ^\n"},
    Case{"x = f(a,\n      b\n",
         "t.py:1:6: error: '(' was never closed\n"
         "    x = f(a,\n"
         "         ^\n"},
    Case{"x = f(a]\n",
         "t.py:1:8: error: closing parenthesis ']' does not match opening parenthesis '('\n"
         "    x = f(a]\n"
         "           ^\n"},
    Case{"x = a)\n",
         "t.py:1:6: error: unmatched ')'\n"
         "    x = a)\n"
         "         ^\n"}));

INSTANTIATE_TEST_SUITE_P(Expected, ErrorTest, ::testing::Values(
    Case{"x = \n",
         "t.py:1:5: error: expected an expression\n"
         "    x = \n"
         "        ^\n"},
    Case{"y = a * (b +)\n",
         "t.py:1:13: error: expected an expression\n"
         "    y = a * (b +)\n"
         "                ^\n"},
    Case{"def f(x)\n    return x\n",
         "t.py:1:9: error: expected ':'\n"
         "    def f(x)\n"
         "            ^\n"},
    Case{"if x == 1 return\n",
         "t.py:1:11: error: expected ':'\n"
         "    if x == 1 return\n"
         "              ^~~~~~\n"},
    Case{"x = a if b\n",
         "t.py:1:11: error: expected 'else'\n"
         "    x = a if b\n"
         "              ^\n"},
    Case{"f = lambda x x\n",
         "t.py:1:14: error: expected ':'\n"
         "    f = lambda x x\n"
         "                 ^\n"},
    Case{"def (x):\n    pass\n",
         "t.py:1:5: error: expected a function name\n"
         "    def (x):\n"
         "        ^\n"},
    Case{"x = torch.\n",
         "t.py:1:11: error: expected an attribute name\n"
         "    x = torch.\n"
         "              ^\n"},
    Case{"import\n",
         "t.py:1:7: error: expected a module name\n"
         "    import\n"
         "          ^\n"},
    Case{"x y\n",
         "t.py:1:3: error: invalid syntax\n"
         "    x y\n"
         "      ^\n"},
    Case{"return = 3\n",
         "t.py:1:8: error: invalid syntax\n"
         "    return = 3\n"
         "           ^\n"}));

INSTANTIATE_TEST_SUITE_P(Blocks, ErrorTest, ::testing::Values(
    Case{"x = 1\n\n\ndef f():\nreturn 1\n",
         "t.py:5:1: error: expected an indented block after 'def' on line 4\n"
         "    return 1\n"
         "    ^\n"},
    Case{"if c:\n",
         "t.py:1:6: error: expected an indented block after 'if' on line 1\n"
         "    if c:\n"
         "         ^\n"},
    Case{"x = 1\n    y = 2\n",
         "t.py:2:5: error: unexpected indent\n"
         "        y = 2\n"
         "        ^\n"},
    Case{"def f():\n        x = 1\n    y = 2\n",
         "t.py:3:5: error: unindent does not match any outer indentation level\n"
         "        y = 2\n"
         "        ^\n"},
    Case{"if a:\n        b = 1\n\tc = 2\n",
         "t.py:3:2: error: inconsistent use of tabs and spaces in indentation\n"
         "    \tc = 2\n"
         "    \t^\n"},
    Case{"else:\n    pass\n",
         "t.py:1:1: error: invalid syntax\n"
         "    else:\n"
         "    ^~~~\n"},
    Case{"if a: pass\n    x\n",
         "t.py:2:5: error: unexpected indent\n"
         "        x\n"
         "        ^\n"}));

INSTANTIATE_TEST_SUITE_P(Tokens, ErrorTest, ::testing::Values(
    Case{"s = 'abc\n",
         "t.py:1:5: error: unterminated string literal\n"
         "    s = 'abc\n"
         "        ^\n"},
    Case{"def f():\n    \"\"\"doc\n    return 1\n",
         "t.py:2:5: error: unterminated triple-quoted string literal\n"
         "        \"\"\"doc\n"
         "        ^\n"},
    Case{"x = $y\n",
         "t.py:1:5: error: invalid character '$'\n"
         "    x = $y\n"
         "        ^\n"},
    Case{"x = 9223372036854775808\n",
         "t.py:1:5: error: integer literal too large\n"
         "    x = 9223372036854775808\n"
         "        ^~~~~~~~~~~~~~~~~~~\n"},
    Case{"x = 0xFFFFFFFFFFFFFFFF\n",
         "t.py:1:5: error: integer literal too large\n"
         "    x = 0xFFFFFFFFFFFFFFFF\n"
         "        ^~~~~~~~~~~~~~~~~~\n"},
    Case{"x = 12abc\n",
         "t.py:1:5: error: invalid decimal literal\n"
         "    x = 12abc\n"
         "        ^~~~~\n"},
    Case{"x = 0b102\n",
         "t.py:1:5: error: invalid binary literal\n"
         "    x = 0b102\n"
         "        ^~~~~\n"},
    Case{"x = 007\n",
         "t.py:1:5: error: leading zeros in decimal integer literals are not permitted; use an 0o "
         "prefix for octal integers\n"
         "    x = 007\n"
         "        ^~~\n"},
    Case{"x = 1 \\ + 2\n",
         "t.py:1:7: error: unexpected character after line continuation character\n"
         "    x = 1 \\ + 2\n"
         "          ^\n"}));

INSTANTIATE_TEST_SUITE_P(Context, ErrorTest, ::testing::Values(
    Case{"f(k=1, x)\n",
         "t.py:1:8: error: positional argument follows keyword argument\n"
         "    f(k=1, x)\n"
         "           ^\n"},
    Case{"f(k=1, k=2)\n",
         "t.py:1:8: error: keyword argument repeated: k\n"
         "    f(k=1, k=2)\n"
         "           ^\n"},
    Case{"def f(q, q):\n    pass\n",
         "t.py:1:10: error: duplicate argument 'q' in function definition\n"
         "    def f(q, q):\n"
         "             ^\n"},
    Case{"def f(a=1, b):\n    pass\n",
         "t.py:1:12: error: parameter without a default follows parameter with a default\n"
         "    def f(a=1, b):\n"
         "               ^\n"},
    Case{"lambda *args: 0\n",
         "t.py:1:8: error: variadic parameters ('*args') are not supported\n"
         "    lambda *args: 0\n"
         "           ^\n"},
    Case{"f() = 1\n",
         "t.py:1:1: error: cannot assign to function call\n"
         "    f() = 1\n"
         "    ^~~\n"},
    Case{"1 = x\n",
         "t.py:1:1: error: cannot assign to literal\n"
         "    1 = x\n"
         "    ^\n"},
    Case{"a, b: int\n",
         "t.py:1:1: error: only single target (not tuple) can be annotated\n"
         "    a, b: int\n"
         "    ^~~~\n"},
    Case{"x = t[]\n",
         "t.py:1:7: error: expected an index\n"
         "    x = t[]\n"
         "          ^\n"}));

// The first error in the file wins, whichever layer finds it.
INSTANTIATE_TEST_SUITE_P(FirstErrorWins, ErrorTest, ::testing::Values(
    Case{"x = (1 +)\ny = 'unterminated\n",
         "t.py:1:9: error: expected an expression\n"
         "    x = (1 +)\n"
         "            ^\n"},
    Case{"x = 1\ny = 'unterminated\nz = (\n",
         "t.py:2:5: error: unterminated string literal\n"
         "    y = 'unterminated\n"
         "        ^\n"},
    Case{"def f():\n  x = 'a\n",
         "t.py:2:7: error: unterminated string literal\n"
         "      x = 'a\n"
         "          ^\n"}));

TEST(Errors, OneDiagnosticPerParse) {
  try {
    test::parse_text("x = (\ny = )\n");
    FAIL();
  } catch (const CompileError& e) {
    EXPECT_EQ(e.diagnostics().size(), 1u);
  }
}

}  // namespace
}  // namespace flexjit::dsl
