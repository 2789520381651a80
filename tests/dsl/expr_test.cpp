// Table-driven expression parsing: each source expression and the dump of its AST.
#include <gtest/gtest.h>

#include "test_util.hpp"

namespace flexjit::dsl {
namespace {

struct Case {
  const char* source;
  const char* expected;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.source; }

class ExprTest : public ::testing::TestWithParam<Case> {};

TEST_P(ExprTest, Dump) { EXPECT_EQ(test::dump_expr(GetParam().source), GetParam().expected); }

// One case per pair of adjacent precedence levels, loosest first.
INSTANTIATE_TEST_SUITE_P(Precedence, ExprTest, ::testing::Values(
    Case{"lambda x: x or y", "(lambda (x) (or (name x) (name y)))"},
    Case{"a or b if c else d", "(ternary (or (name a) (name b)) if (name c) else (name d))"},
    Case{"a if b or c else d", "(ternary (name a) if (or (name b) (name c)) else (name d))"},
    Case{"a or b and c", "(or (name a) (and (name b) (name c)))"},
    Case{"a and b or c", "(or (and (name a) (name b)) (name c))"},
    Case{"not a and b", "(and (unary not (name a)) (name b))"},
    Case{"not a < b", "(unary not (cmp (name a) < (name b)))"},
    Case{"a | b < c | d", "(cmp (bin (name a) | (name b)) < (bin (name c) | (name d)))"},
    Case{"a ^ b | c", "(bin (bin (name a) ^ (name b)) | (name c))"},
    Case{"a | b ^ c", "(bin (name a) | (bin (name b) ^ (name c)))"},
    Case{"a & b ^ c", "(bin (bin (name a) & (name b)) ^ (name c))"},
    Case{"a << b & c", "(bin (bin (name a) << (name b)) & (name c))"},
    Case{"a + b >> c", "(bin (bin (name a) + (name b)) >> (name c))"},
    Case{"a * b + c", "(bin (bin (name a) * (name b)) + (name c))"},
    Case{"a + b * c", "(bin (name a) + (bin (name b) * (name c)))"},
    Case{"a - b % c // d", "(bin (name a) - (bin (bin (name b) % (name c)) // (name d)))"},
    Case{"a @ b / c", "(bin (bin (name a) @ (name b)) / (name c))"},
    Case{"-a * b", "(bin (unary - (name a)) * (name b))"},
    Case{"-a ** b", "(unary - (bin (name a) ** (name b)))"},
    Case{"-2**2", "(unary - (bin (int 2) ** (int 2)))"},
    Case{"2**-1", "(bin (int 2) ** (unary - (int 1)))"},
    Case{"~a + +b", "(bin (unary ~ (name a)) + (unary + (name b)))"},
    Case{"a.b ** c[d]", "(bin (attr (name a) b) ** (index (name c) (name d)))"},
    Case{"f(x) ** 2", "(bin (call (name f) (name x)) ** (int 2))"},
    Case{"(a + b) * c", "(bin (bin (name a) + (name b)) * (name c))"},
    Case{"not not a", "(unary not (unary not (name a)))"},
    Case{"- - a", "(unary - (unary - (name a)))"},
    Case{"a < b == c", "(cmp (name a) < (name b) == (name c))"}));

INSTANTIATE_TEST_SUITE_P(Associativity, ExprTest, ::testing::Values(
    Case{"a - b - c", "(bin (bin (name a) - (name b)) - (name c))"},
    Case{"a / b / c", "(bin (bin (name a) / (name b)) / (name c))"},
    Case{"a << b >> c", "(bin (bin (name a) << (name b)) >> (name c))"},
    Case{"a ** b ** c", "(bin (name a) ** (bin (name b) ** (name c)))"},
    Case{"a or b or c", "(or (name a) (name b) (name c))"},
    Case{"a and b and c", "(and (name a) (name b) (name c))"},
    Case{"a or b and c or d", "(or (name a) (and (name b) (name c)) (name d))"}));

INSTANTIATE_TEST_SUITE_P(ChainedComparisons, ExprTest, ::testing::Values(
    Case{"0 <= q - k < w", "(cmp (int 0) <= (bin (name q) - (name k)) < (name w))"},
    Case{"a == b != c >= d > e", "(cmp (name a) == (name b) != (name c) >= (name d) > (name e))"},
    Case{"a is b", "(cmp (name a) is (name b))"},
    Case{"a is not b", "(cmp (name a) is not (name b))"},
    Case{"a in b", "(cmp (name a) in (name b))"},
    Case{"a not in b", "(cmp (name a) not in (name b))"},
    Case{"a not  in b is  not c", "(cmp (name a) not in (name b) is not (name c))"},
    Case{"a<b", "(cmp (name a) < (name b))"}));

INSTANTIATE_TEST_SUITE_P(Ternaries, ExprTest, ::testing::Values(
    Case{"a if b else c", "(ternary (name a) if (name b) else (name c))"},
    Case{"a if b else c if d else e",
         "(ternary (name a) if (name b) else (ternary (name c) if (name d) else (name e)))"},
    Case{"(a if b else c) if d else e",
         "(ternary (ternary (name a) if (name b) else (name c)) if (name d) else (name e))"},
    Case{"a if (b if c else d) else e",
         "(ternary (name a) if (ternary (name b) if (name c) else (name d)) else (name e))"},
    Case{"x if c else lambda: y", "(ternary (name x) if (name c) else (lambda () (name y)))"}));

INSTANTIATE_TEST_SUITE_P(Lambdas, ExprTest, ::testing::Values(
    Case{"lambda: 0", "(lambda () (int 0))"},
    Case{"lambda b, h, q, k: k < 4", "(lambda (b h q k) (cmp (name k) < (int 4)))"},
    Case{"lambda x, y=2: x + y", "(lambda (x (y = (int 2))) (bin (name x) + (name y)))"},
    Case{"lambda x,: x", "(lambda (x) (name x))"},
    Case{"lambda x: lambda y: x * y", "(lambda (x) (lambda (y) (bin (name x) * (name y))))"},
    Case{"lambda x: a if x else b", "(lambda (x) (ternary (name a) if (name x) else (name b)))"}));

INSTANTIATE_TEST_SUITE_P(Calls, ExprTest, ::testing::Values(
    Case{"f()", "(call (name f))"},
    Case{"f(a, b)", "(call (name f) (name a) (name b))"},
    Case{"f(a, b,)", "(call (name f) (name a) (name b))"},
    Case{"f(a, k=v, scale=1.5)", "(call (name f) (name a) (kw k (name v)) (kw scale (float 1.5)))"},
    Case{"f(k=a == b)", "(call (name f) (kw k (cmp (name a) == (name b))))"},
    Case{"f(a)(b)", "(call (call (name f) (name a)) (name b))"},
    Case{"torch.tanh(s / CAP)", "(call (attr (name torch) tanh) (bin (name s) / (name CAP)))"},
    Case{"torch.where(c, x, y)", "(call (attr (name torch) where) (name c) (name x) (name y))"},
    Case{"f(\n  a,  # first\n  b,\n)", "(call (name f) (name a) (name b))"},
    Case{"f(*a)", "(call (name f) (unsupported \"starred expressions\"))"},
    Case{"f(x for x in y)", "(call (name f) (unsupported \"generator expressions\"))"}));

INSTANTIATE_TEST_SUITE_P(Subscripts, ExprTest, ::testing::Values(
    Case{"t[i]", "(index (name t) (name i))"},
    Case{"t[i, j]", "(index (name t) (name i) (name j))"},
    Case{"t[i, j,]", "(index (name t) (name i) (name j))"},
    Case{"t[i][j]", "(index (index (name t) (name i)) (name j))"},
    Case{"t[b, h, q_idx // 64]", "(index (name t) (name b) (name h) (bin (name q_idx) // (int 64)))"},
    Case{"t[f(x)].y", "(attr (index (name t) (call (name f) (name x))) y)"},
    Case{"t[1:2]", "(index (name t) (unsupported \"slices\"))"},
    Case{"t[:, 0]", "(index (name t) (unsupported \"slices\") (int 0))"},
    Case{"t[::2]", "(index (name t) (unsupported \"slices\"))"},
    Case{"a.b.c", "(attr (attr (name a) b) c)"}));

INSTANTIATE_TEST_SUITE_P(Atoms, ExprTest, ::testing::Values(
    Case{"42", "(int 42)"},
    Case{"0x1F", "(int 31)"},
    Case{"0o17", "(int 15)"},
    Case{"0b101", "(int 5)"},
    Case{"1_000_000", "(int 1000000)"},
    Case{"0x_ff", "(int 255)"},
    Case{"0", "(int 0)"},
    Case{"00", "(int 0)"},
    Case{"9223372036854775807", "(int 9223372036854775807)"},
    Case{"1.0", "(float 1.0)"},
    Case{"1e-3", "(float 0.001)"},
    Case{"2.5E2", "(float 250.0)"},
    Case{".5", "(float 0.5)"},
    Case{"5.", "(float 5.0)"},
    Case{"1_000.0", "(float 1000.0)"},
    Case{"1e999", "(float inf)"},
    Case{"True", "(bool True)"},
    Case{"False", "(bool False)"},
    Case{"None", "(none)"},
    Case{"inf", "(name inf)"},
    Case{"'a'", "(str \"a\")"},
    Case{"\"a\\tb\\n\"", "(str \"a\\tb\\n\")"},
    Case{"r'a\\n'", "(str \"a\\\\n\")"},
    Case{"'a' \"b\"", "(str \"ab\")"},
    Case{"'''x\ny'''", "(str \"x\\ny\")"},
    Case{"b'x'", "(str \"x\")"},
    Case{"'\\x41\\u00e9'", "(str \"A\xC3\xA9\")"},
    Case{"f'{x}'", "(unsupported \"f-strings\")"},
    Case{"'a' f'{x}'", "(unsupported \"f-strings\")"},
    Case{"1j", "(unsupported \"complex literals\")"},
    Case{"...", "(unsupported \"ellipsis literals\")"},
    Case{"_private2", "(name _private2)"}));

INSTANTIATE_TEST_SUITE_P(Unsupported, ExprTest, ::testing::Values(
    Case{"[1, 2]", "(unsupported \"list literals\")"},
    Case{"[]", "(unsupported \"list literals\")"},
    Case{"[x for x in y if x]", "(unsupported \"list comprehensions\")"},
    Case{"[[x for x in y]]", "(unsupported \"list literals\")"},
    Case{"{1: 2}", "(unsupported \"dict or set literals\")"},
    Case{"{a, b}", "(unsupported \"dict or set literals\")"},
    Case{"{k: v for k in y}", "(unsupported \"dict or set comprehensions\")"},
    Case{"(1, 2)", "(tuple (int 1) (int 2))"},
    Case{"(1,)", "(tuple (int 1))"},
    Case{"()", "(tuple)"},
    Case{"a, b", "(tuple (name a) (name b))"},
    Case{"(x for x in y)", "(unsupported \"generator expressions\")"},
    Case{"(y := f(x))", "(unsupported \"assignment expressions\")"},
    Case{"(*a, b)", "(tuple (unsupported \"starred expressions\") (name b))"},
    Case{"f(*a)[0]", "(index (call (name f) (unsupported \"starred expressions\")) (int 0))"}));

}  // namespace
}  // namespace flexjit::dsl
