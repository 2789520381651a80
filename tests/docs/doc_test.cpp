// Documentation tests. The docs are read at run time, so editing a doc needs no rebuild.
//
//   ```python        a complete program: must compile (compiler::build_ir) as "example.py"
//   ```python-error  a program that must fail; the next fence (only blank lines between) must
//                    be a ```text block holding the exact diagnostic text (CompileError::what())
//   ```py-torch, ```text, ```sh, ...   not tested
//
// A fence with an info string this file does not know fails the test, so a typo such as
// ```pyhton cannot silently take an example out of testing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/pipeline.hpp"
#include "dsl/diagnostics.hpp"

namespace fs = std::filesystem;
using namespace flexjit;

namespace {

const fs::path kRoot = FLEXJIT_SOURCE_DIR;
const char* const kDocs[] = {"docs/language.md", "docs/porting-from-flexattention.md"};
const char* const kKnownInfo[] = {"python", "python-error", "text", "py-torch", "sh", "console", "cpp", ""};

struct Fence {
  std::string info;
  std::string body;  // every line followed by '\n'
  int line = 0;      // 1-based line of the opening fence
};

struct DocBlock {
  std::string doc;       // "docs/language.md"
  int line = 0;          // line of the ```python / ```python-error fence
  bool expect_error = false;
  std::string source;
  std::string expected;  // the diagnostic, for python-error blocks
  std::string problem;   // a malformed document around this block (reported by the test)
};

// How gtest names a block in failure messages (instead of a hex dump).
void PrintTo(const DocBlock& b, std::ostream* os) { *os << b.doc << ":" << b.line; }

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

bool is_fence(const std::string& line) { return trim(line).rfind("```", 0) == 0; }

// Splits a Markdown file into its fenced blocks; `gaps[i]` is true when only blank lines
// separate fence i from fence i + 1.
void split_fences(const std::string& text, std::vector<Fence>& fences, std::vector<bool>& gaps,
                  std::string& problem) {
  std::istringstream in(text);
  std::string line;
  int n = 0;
  bool inside = false, only_blank = false;
  Fence cur;
  while (std::getline(in, line)) {
    ++n;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (inside) {
      if (trim(line) == "```") {
        fences.push_back(cur);
        inside = false;
        only_blank = true;
      } else {
        cur.body += line + "\n";
      }
      continue;
    }
    if (is_fence(line)) {
      if (!fences.empty()) gaps.push_back(only_blank);
      cur = Fence{trim(trim(line).substr(3)), "", n};
      inside = true;
      continue;
    }
    if (!trim(line).empty()) only_blank = false;
  }
  if (inside) problem = "the fence on line " + std::to_string(cur.line) + " is never closed";
}

std::vector<DocBlock> collect() {
  std::vector<DocBlock> out;
  for (const char* doc : kDocs) {
    const fs::path path = kRoot / doc;
    if (!fs::exists(path)) {
      out.push_back({doc, 0, false, "", "", "the document does not exist"});
      continue;
    }
    std::vector<Fence> fences;
    std::vector<bool> adjacent;
    std::string problem;
    split_fences(read_file(path), fences, adjacent, problem);
    if (!problem.empty()) out.push_back({doc, 0, false, "", "", problem});
    for (std::size_t i = 0; i < fences.size(); ++i) {
      const Fence& f = fences[i];
      if (std::find(std::begin(kKnownInfo), std::end(kKnownInfo), f.info) == std::end(kKnownInfo)) {
        out.push_back({doc, f.line, false, "", "", "unknown fence info string '" + f.info + "'"});
        continue;
      }
      if (f.info == "python") {
        out.push_back({doc, f.line, false, f.body, "", ""});
      } else if (f.info == "python-error") {
        DocBlock b{doc, f.line, true, f.body, "", ""};
        if (i + 1 < fences.size() && fences[i + 1].info == "text" && adjacent[i]) {
          b.expected = fences[i + 1].body;
          ++i;
        } else {
          b.problem = "a ```python-error block must be followed directly by a ```text block";
        }
        out.push_back(b);
      }
    }
  }
  return out;
}

std::string test_name(const testing::TestParamInfo<DocBlock>& info) {
  std::string stem = fs::path(info.param.doc).stem().string();
  for (char& c : stem)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return stem + "_line" + std::to_string(info.param.line) + (info.param.expect_error ? "_error" : "");
}

class DocExample : public testing::TestWithParam<DocBlock> {};

TEST_P(DocExample, BehavesAsDocumented) {
  const DocBlock& b = GetParam();
  ASSERT_TRUE(b.problem.empty()) << b.doc << ":" << b.line << ": " << b.problem;
  dsl::SourceFile file("example.py", b.source);
  if (!b.expect_error) {
    try {
      compiler::build_ir(file);
    } catch (const dsl::CompileError& e) {
      FAIL() << b.doc << ":" << b.line << ": the example does not compile:\n" << e.what();
    }
    return;
  }
  try {
    compiler::build_ir(file);
  } catch (const dsl::CompileError& e) {
    EXPECT_EQ(b.expected, std::string(e.what())) << b.doc << ":" << b.line;
    return;
  }
  FAIL() << b.doc << ":" << b.line << ": expected a diagnostic, but the example compiled";
}

INSTANTIATE_TEST_SUITE_P(Docs, DocExample, testing::ValuesIn(collect()), test_name);

// The extractor itself: an empty harvest would pass every test above vacuously.
TEST(DocExtraction, FindsExamplesInBothDocuments) {
  const std::vector<DocBlock> blocks = collect();
  for (const char* doc : kDocs) {
    int ok = 0, errors = 0;
    for (const auto& b : blocks)
      if (b.doc == doc && b.problem.empty()) (b.expect_error ? errors : ok)++;
    EXPECT_GT(ok, 0) << doc << " has no ```python examples";
    if (std::string(doc) == "docs/language.md") {
      EXPECT_GT(errors, 0) << doc << " has no ```python-error examples";
    }
  }
}

TEST(DocExtraction, SplitsFencesAndPairsErrorsWithText) {
  std::vector<Fence> fences;
  std::vector<bool> adjacent;
  std::string problem;
  split_fences("intro\n```python\nx = 1\n\n```\n\n```text\nout\n```\nprose\n```sh\nls\n```\n", fences, adjacent,
               problem);
  ASSERT_EQ(fences.size(), 3u);
  EXPECT_TRUE(problem.empty());
  EXPECT_EQ(fences[0].info, "python");
  EXPECT_EQ(fences[0].body, "x = 1\n\n");
  EXPECT_EQ(fences[0].line, 2);
  EXPECT_EQ(fences[1].body, "out\n");
  ASSERT_EQ(adjacent.size(), 2u);
  EXPECT_TRUE(adjacent[0]);
  EXPECT_FALSE(adjacent[1]);
  split_fences("```python\nx\n", fences, adjacent, problem);
  EXPECT_FALSE(problem.empty());
}

}  // namespace
