// The statement layer: walks the logical lines (lines.hpp), parses each with the X3 grammar
// (line_parser.hpp), folds it (fold.hpp) and assembles blocks from indentation levels,
// Python's way: a compound header needs an indented block or a one-line body, elif/else
// attach to the if before them, and any other deeper line is an "unexpected indent".
#include "dsl/parser.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <initializer_list>
#include <string_view>

#include "dsl/fold.hpp"
#include "dsl/line_parser.hpp"
#include "dsl/lines.hpp"
#include "dsl/scan.hpp"

namespace flexjit::dsl {
namespace {

// An if/elif chain becomes nested Ifs; every later pass recurses through them.
constexpr std::size_t kMaxElifs = 1000;

template <typename Set>
bool contains(const Set& set, std::string_view w) {
  return std::find(set.begin(), set.end(), w) != set.end();
}
bool one_of(std::string_view w, std::initializer_list<std::string_view> set) { return contains(set, w); }

// Unsupported statements that own an indented block (and the clauses that may follow it).
bool is_compound_keyword(std::string_view kw) {
  return one_of(kw, {"while", "for", "with", "class", "try", "except", "finally", "async", "match"});
}

class Parser {
 public:
  explicit Parser(const SourceFile& file)
      : file_(file), text_(file.text()), split_(split_lines(file)), folder_(file) {}

  ast::Module run() {
    ast::Module module;
    module.body = block(0);
    return module;
  }

 private:
  // Whether another logical line follows. At the end, a lexical error the splitter stopped
  // at is thrown: everything before it has been parsed, so it is the first error.
  bool more() {
    if (i_ < split_.lines.size()) return true;
    if (split_.error) throw CompileError(file_, {*split_.error});
    return false;
  }
  const LogicalLine& peek() const { return split_.lines[i_]; }

  std::string_view first_word(const LogicalLine& l) const {
    const char* p = text_.data() + l.begin;
    return {p, scan::word_length(p, text_.data() + l.end)};
  }
  int line_of(const LogicalLine& l) const { return file_.pos_at(l.begin).line; }

  [[noreturn]] void error_at(std::size_t offset, std::size_t length, const std::string& message) {
    user_error(file_, file_.pos_at(offset, static_cast<int>(std::max<std::size_t>(length, 1))),
               message);
  }

  ast::StmtPtr stmt(SourcePos pos, decltype(ast::Stmt::node) node) {
    return std::make_shared<const ast::Stmt>(ast::Stmt{pos, std::move(node)});
  }

  ast::Block block(int level) {
    ast::Block out;
    while (more() && peek().level >= level) {
      if (peek().level > level) error_at(peek().begin, 1, "unexpected indent");
      statement(level, out);
    }
    return out;
  }

  void statement(int level, ast::Block& out) {
    const LogicalLine line = peek();
    pt::Line parsed;
    try {
      parsed = parse(line, first_word(line) == "def");
    } catch (const UnsupportedDef& u) {
      ++i_;
      skip_clause(line, "def", level);
      out.push_back(stmt(file_.pos_at(u.offset, static_cast<int>(u.length)),
                         ast::UnsupportedStmt{"def", u.message, def_name(line)}));
      return;
    }
    ++i_;
    if (!parsed.header) {
      for (const auto& s : parsed.simple) folder_.simple(s, out);
      skip_unsupported_block(line, parsed, level);
      return;
    }
    const pt::Header& header = *parsed.header;
    if (const auto* d = boost::get<pt::DefX>(&header.get())) {
      ast::FunctionDef f = folder_.def_header(*d);
      f.body = body(parsed, line, "def", level);
      out.push_back(stmt(folder_.pos(d->kw), std::move(f)));
    } else if (const auto* c = boost::get<pt::CondX>(&header.get()); c && c->kw.text == "if") {
      out.push_back(if_chain(*c, parsed, line, level));
    } else {  // elif or else with no if before it
      const pt::OpTok& kw = c ? c->kw : boost::get<pt::OpTok>(header.get());
      error_at(kw.begin, kw.end - kw.begin, "invalid syntax");
    }
  }

  // The body of a compound statement: its one-line form or the indented block below it.
  ast::Block body(const pt::Line& parsed, const LogicalLine& line, std::string_view kw, int level) {
    if (!parsed.simple.empty()) {
      ast::Block out;
      for (const auto& s : parsed.simple) folder_.simple(s, out);
      return out;
    }
    expect_block(line, kw, level);
    return block(level + 1);
  }

  void expect_block(const LogicalLine& line, std::string_view kw, int level) {
    if (more() && peek().level > level) return;
    const std::size_t at = i_ < split_.lines.size() ? peek().begin : line.end;
    error_at(at, 1, fmt::format("expected an indented block after '{}' on line {}", kw, line_of(line)));
  }

  // if / elif... / else, built bottom-up so a long elif chain needs no recursion here.
  ast::StmtPtr if_chain(const pt::CondX& first, const pt::Line& parsed, const LogicalLine& line,
                        int level) {
    struct Branch {
      SourcePos pos;
      ast::ExprPtr cond;
      ast::Block body;
    };
    std::vector<Branch> branches;
    branches.push_back({folder_.pos(first.kw), folder_.condition(first), body(parsed, line, "if", level)});
    ast::Block orelse;
    while (more() && peek().level == level && one_of(first_word(peek()), {"elif", "else"})) {
      const LogicalLine next = peek();
      pt::Line clause = parse(next);
      ++i_;
      const pt::Header* header = clause.header.get_ptr();
      const auto* c = header ? boost::get<pt::CondX>(&header->get()) : nullptr;
      if (c && c->kw.text == "elif") {
        if (branches.size() > kMaxElifs)
          error_at(c->kw.begin, 4, fmt::format("too many 'elif' branches (at most {})", kMaxElifs));
        branches.push_back({folder_.pos(c->kw), folder_.condition(*c), body(clause, next, "elif", level)});
        continue;
      }
      orelse = body(clause, next, "else", level);
      break;
    }
    ast::StmtPtr result;
    for (auto it = branches.rbegin(); it != branches.rend(); ++it) {
      result = stmt(it->pos, ast::If{it->cond, std::move(it->body), std::move(orelse)});
      orelse = {result};
    }
    return result;
  }

  // After an unsupported compound statement ("while x:"), skip its block and the clauses
  // that belong to it (for/while ... else, try ... except ... finally).
  void skip_unsupported_block(const LogicalLine& line, const pt::Line& parsed, int level) {
    if (parsed.simple.empty()) return;
    const auto* kw = boost::get<pt::OpTok>(&parsed.simple.back().get());
    if (!kw || !is_compound_keyword(kw->text)) return;
    std::vector<std::string_view> clauses;
    if (kw->text == "for" || kw->text == "while") clauses = {"else"};
    if (kw->text == "try" || kw->text == "except") clauses = {"except", "else", "finally"};
    skip_clause(line, kw->text, level);
    while (more() && peek().level == level && contains(clauses, first_word(peek()))) {
      const LogicalLine next = peek();
      ++i_;
      skip_clause(next, first_word(next), level);
    }
  }

  void skip_clause(const LogicalLine& line, std::string_view kw, int level) {
    if (text_[line.last] != ':') return;  // one-line form: "for x in y: pass"
    expect_block(line, kw, level);
    while (more() && peek().level > level) ++i_;
  }

  // A def header Python accepts and flexjit does not (`*args`): thrown by parse() to statement().
  struct UnsupportedDef {
    std::size_t offset, length;
    std::string message;
  };

  std::string def_name(const LogicalLine& line) const {
    const char* last = text_.data() + line.end;
    const char* name = scan::skip_blanks(text_.data() + line.begin + 3, last);  // after "def"
    return std::string(name, scan::word_length(name, last));
  }

  // Runs the grammar over one logical line; any failure becomes a CompileError (with
  // def_header_may_defer, a def that Python accepts becomes an UnsupportedDef).
  pt::Line parse(const LogicalLine& line, bool def_header_may_defer = false) {
    grammar::ParseState state;
    state.buffer = text_.data();
    state.line_last = text_.data() + line.last;
    const char* first = text_.data() + line.begin;
    const char* last = text_.data() + line.end;
    pt::Line out;
    bool ok = false;
    try {
      ok = grammar::parse_line(first, last, state, out);
    } catch (const grammar::SyntaxError& e) {
      if (def_header_may_defer && e.python_accepts)
        throw UnsupportedDef{static_cast<std::size_t>(e.where - text_.data()), e.length, e.message};
      error_at(static_cast<std::size_t>(e.where - text_.data()), e.length, e.message);
    }
    if (ok) return out;
    if (!state.error_where) error_at(line.begin, 1, "invalid syntax");
    const char* where = scan::skip_blanks(state.error_where, last);
    error_at(static_cast<std::size_t>(where - text_.data()), scan::token_length(where, last),
             expectation_message(line, where, state.error_which));
  }

  std::string expectation_message(const LogicalLine& line, const char* where, const std::string& which) {
    if (which == "end of line") return "invalid syntax";
    if (which == "')'" || which == "']'" || which == "'}'") {
      if (const char* open = innermost_open(line, where)) {
        const SourcePos at = file_.pos_at(static_cast<std::size_t>(open - text_.data()));
        return fmt::format("invalid syntax: expected {} to close '{}' at {}:{}", which, *open,
                           at.line, at.col);
      }
    }
    return "expected " + which;
  }

  // The innermost bracket still open at `where` (strings and comments skipped).
  const char* innermost_open(const LogicalLine& line, const char* where) const {
    const char* const last = text_.data() + line.end;
    std::vector<const char*> open;
    const char* p = text_.data() + line.begin;
    while (p < where) {
      p = scan::skip_blanks(p, where);
      if (p >= where) break;
      if (scan::string_start(p, last) >= 0) {
        std::string ignored;
        bool f = false;
        p = scan::scan_string(p, last, ignored, f);
      } else if (is_ident_start(*p)) {
        p += scan::word_length(p, last);
      } else {
        if (*p == '(' || *p == '[' || *p == '{') open.push_back(p);
        if ((*p == ')' || *p == ']' || *p == '}') && !open.empty()) open.pop_back();
        ++p;
      }
    }
    return open.empty() ? nullptr : open.back();
  }

  const SourceFile& file_;
  const std::string& text_;
  LineSplit split_;
  Folder folder_;
  std::size_t i_ = 0;
};

}  // namespace

ast::Module parse(const SourceFile& file) { return Parser(file).run(); }

}  // namespace flexjit::dsl
