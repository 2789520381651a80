// Table-driven statement parsing: each program and its dump.
#include <gtest/gtest.h>

#include "test_util.hpp"

namespace flexjit::dsl {
namespace {

struct Case {
  const char* source;
  const char* expected;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.source; }

class StmtTest : public ::testing::TestWithParam<Case> {};

TEST_P(StmtTest, Dump) {
  std::string got;
  try {
    got = test::dump_text(GetParam().source);
  } catch (const CompileError& e) {
    got = e.what();
  }
  EXPECT_EQ(got, GetParam().expected);
}

INSTANTIATE_TEST_SUITE_P(Assignments, StmtTest, ::testing::Values(
    Case{"x = 1\n", "(assign x (int 1))\n"},
    Case{"x: int\n", "(annassign x (name int))\n"},
    Case{"CAP: float = 50.0\n", "(annassign CAP (name float) (float 50.0))\n"},
    Case{"t: Tensor[float32, 1]\n", "(annassign t (index (name Tensor) (name float32) (int 1)))\n"},
    Case{"x += 1\nx -= 2\nx *= 3\nx /= 4\nx //= 5\nx %= 6\nx **= 7\nx @= 8\nx &= 9\nx |= 1\nx ^= 2\nx <<= 3\nx >>= 4\n",
         "(augassign x += (int 1))\n(augassign x -= (int 2))\n(augassign x *= (int 3))\n"
         "(augassign x /= (int 4))\n(augassign x //= (int 5))\n(augassign x %= (int 6))\n"
         "(augassign x **= (int 7))\n(augassign x @= (int 8))\n(augassign x &= (int 9))\n"
         "(augassign x |= (int 1))\n(augassign x ^= (int 2))\n(augassign x <<= (int 3))\n"
         "(augassign x >>= (int 4))\n"},
    Case{"(x) = 1\n", "(assign x (int 1))\n"},
    Case{"f = lambda x: x\n", "(assign f (lambda (x) (name x)))\n"},
    Case{"a, b = 1, 2\n", "(tupleassign a b (tuple (int 1) (int 2)))\n"},
    Case{"(a, b) = c\n", "(tupleassign a b (name c))\n"},
    Case{"[a, b] = c\n", "(unsupported \"assignment to a list\")\n"},
    Case{"a, *b = c\n", "(unsupported \"unpacking into a starred target\")\n"},
    Case{"(a, b), c = d\n", "(unsupported \"nested tuple unpacking\")\n"},
    Case{"a, x[0], *b = c\n", "(unsupported \"unpacking into a subscript\")\n"},
    Case{"x[i] = 3\n", "(unsupported \"assignment to a subscript\")\n"},
    Case{"x.y = 4\n", "(attrassign (name x) y (int 4))\n"},
    Case{"a = b = 3\n", "(unsupported \"chained assignment\")\n"},
    Case{"x.y += 1\n", "(unsupported \"augmented assignment to an attribute\")\n"},
    Case{"x[0] += 1\n", "(unsupported \"augmented assignment to a subscript\")\n"},
    Case{"x.y: int = 1\n", "(unsupported \"annotated assignment to an attribute\")\n"},
    Case{"x = 1, 2\n", "(assign x (tuple (int 1) (int 2)))\n"},
    Case{"x = 1; y = 2;\n", "(assign x (int 1))\n(assign y (int 2))\n"}));

INSTANTIATE_TEST_SUITE_P(Functions, StmtTest, ::testing::Values(
    Case{"def f(b, h, q_idx, kv_idx):\n    return q_idx >= kv_idx\n",
         "(def f (b h q_idx kv_idx) (return (cmp (name q_idx) >= (name kv_idx))))\n"},
    Case{"def f(x: int, y: float = 1.0) -> bool:\n    pass\n",
         "(def f ((x : (name int)) (y : (name float) = (float 1.0))) -> (name bool) (pass))\n"},
    Case{"def f(x=1,):\n    return\n", "(def f ((x = (int 1))) (return))\n"},
    Case{"def f(): return 1\n", "(def f () (return (int 1)))\n"},
    Case{"def f(x): y = x; return y\n", "(def f (x) (assign y (name x)) (return (name y)))\n"},
    Case{"def f(\n    a,\n    b,\n):\n    return a\n", "(def f (a b) (return (name a)))\n"},
    Case{"def outer(w):\n"
         "    def inner(q, k):\n"
         "        def innermost():\n"
         "            return w\n"
         "        return q - k < innermost()\n"
         "    return inner\n",
         "(def outer (w) (def inner (q k) (def innermost () (return (name w))) (return (cmp (bin (name q) - "
         "(name k)) < (call (name innermost))))) (return (name inner)))\n"},
    Case{"def f():\n    \"\"\"Doc\n    string.\"\"\"\n    return 0\n",
         "(def f () (expr (str \"Doc\\n    string.\")) (return (int 0)))\n"},
    Case{"def f():\n    'one-line doc'\n    return 0\n",
         "(def f () (expr (str \"one-line doc\")) (return (int 0)))\n"}));

INSTANTIATE_TEST_SUITE_P(Conditionals, StmtTest, ::testing::Values(
    Case{"if a:\n    x\n", "(if (name a) (then (expr (name x))))\n"},
    Case{"if a:\n    x\nelse:\n    y\n", "(if (name a) (then (expr (name x))) (else (expr (name y))))\n"},
    Case{"if a:\n    x\nelif b:\n    y\nelif c:\n    z\nelse:\n    w\n",
         "(if (name a) (then (expr (name x))) (else (if (name b) (then (expr (name y))) (else (if (name c) "
         "(then (expr (name z))) (else (expr (name w))))))))\n"},
    Case{"if a:\n    x\nelif b:\n    y\n",
         "(if (name a) (then (expr (name x))) (else (if (name b) (then (expr (name y))))))\n"},
    Case{"if c: return x\n", "(if (name c) (then (return (name x))))\n"},
    Case{"if c: return x\nelse: return y\n",
         "(if (name c) (then (return (name x))) (else (return (name y))))\n"},
    Case{"if a:\n    if b:\n        x\n    else:\n        y\nelse:\n    z\n",
         "(if (name a) (then (if (name b) (then (expr (name x))) (else (expr (name y))))) (else (expr (name z))))\n"},
    Case{"if a:\n    x\nif b:\n    y\n", "(if (name a) (then (expr (name x))))\n(if (name b) (then (expr (name y))))\n"},
    Case{"if (n := 3) > 2:\n    pass\n",
         "(if (cmp (unsupported \"assignment expressions\") > (int 2)) (then (pass)))\n"},
    Case{"if x := 3:\n    pass\n", "(if (unsupported \"assignment expressions\") (then (pass)))\n"}));

INSTANTIATE_TEST_SUITE_P(Imports, StmtTest, ::testing::Values(
    Case{"import torch\n", "(import torch)\n"},
    Case{"import math\n", "(import math)\n"},
    Case{"import torch as T\n", "(import torch as T)\n"},
    Case{"import torch.nn.functional as F\n", "(import torch.nn.functional as F)\n"},
    Case{"import math, torch as T\n", "(import math)\n(import torch as T)\n"},
    Case{"from math import pi\n", "(from math pi)\n"},
    Case{"from torch.nn import (a, b as c,)\n", "(from torch.nn a b as c)\n"},
    Case{"from . import x\n", "(from . x)\n"},
    Case{"from ..pkg import *\n", "(from ..pkg *)\n"}));

INSTANTIATE_TEST_SUITE_P(UnsupportedStatements, StmtTest, ::testing::Values(
    Case{"while x:\n    y = 1\n    z = 2\nw = 3\n", "(unsupported \"while\")\n(assign w (int 3))\n"},
    Case{"for i in range(3):\n    pass\nelse:\n    pass\nx = 1\n", "(unsupported \"for\")\n(assign x (int 1))\n"},
    Case{"for i in r: pass\n", "(unsupported \"for\")\n"},
    Case{"try:\n  a\nexcept E as e:\n  b\nexcept:\n  c\nelse:\n  d\nfinally:\n  e\n",
         "(unsupported \"try\")\n"},
    Case{"class A(B):\n    def f(self): pass\n", "(unsupported \"class\")\n"},
    Case{"with open(f) as g:\n    pass\n", "(unsupported \"with\")\n"},
    Case{"async def f():\n    pass\n", "(unsupported \"async\")\n"},
    Case{"match x:\n    case 1:\n        pass\n", "(unsupported \"match\")\n"},
    Case{"match = 1\nmatch.x = 2\nmatch(x)\n",
         "(assign match (int 1))\n(attrassign (name match) x (int 2))\n(expr (call (name match) (name x)))\n"},
    Case{"raise ValueError(x)\n", "(unsupported \"raise\")\n"},
    Case{"global g\nnonlocal n\ndel x\nassert x, 'm'\nyield x\nbreak\ncontinue\n",
         "(unsupported \"global\")\n(unsupported \"nonlocal\")\n(unsupported \"del\")\n"
         "(assert (name x) (str \"m\"))\n(unsupported \"yield\")\n(unsupported \"break\")\n"
         "(unsupported \"continue\")\n"},
    Case{"@decorator\ndef f(): pass\n", "(decorator (name decorator))\n(def f () (pass))\n"},
    Case{"if c: break\n", "(if (name c) (then (unsupported \"break\")))\n"},
    Case{"def f():\n    while True:\n        x = = 1\n    return 1\n",
         "(def f () (unsupported \"while\") (return (int 1)))\n"}));

INSTANTIATE_TEST_SUITE_P(Layout, StmtTest, ::testing::Values(
    Case{"# comment\n\n   # indented comment\nx = 1  # trailing\n\n\n# end", "(assign x (int 1))\n"},
    Case{"def f(a,  # the first\n      b):  # header\n    # body comment\n    return a  # done\n",
         "(def f (a b) (return (name a)))\n"},
    Case{"x = 1 + \\\n    2\n", "(assign x (bin (int 1) + (int 2)))\n"},
    Case{"if a and \\\n   b:\n    pass\n", "(if (and (name a) (name b)) (then (pass)))\n"},
    Case{"x = (1 +\n     2)\n", "(assign x (bin (int 1) + (int 2)))\n"},
    Case{"x = f(a,\n\n      b)\n", "(assign x (call (name f) (name a) (name b)))\n"},
    Case{"def f():\n\treturn 1\n", "(def f () (return (int 1)))\n"},
    Case{"if a:\r\n    x = 1\r\n", "(if (name a) (then (assign x (int 1))))\n"},
    Case{"s = r'a\\\r\nb'\r\n", "(assign s (str \"a\\\\\\nb\"))\n"},
    Case{"x = 1", "(assign x (int 1))\n"},
    Case{"", ""},
    Case{"\n\n# only comments\n", ""},
    Case{"pass\n", "(pass)\n"},
    Case{"x = '# not a comment'\n", "(assign x (str \"# not a comment\"))\n"},
    Case{"s = \"\"\"\ndef f(:\n\"\"\"\n", "(assign s (str \"\\ndef f(:\\n\"))\n"}));

}  // namespace
}  // namespace flexjit::dsl
