// CSE by global value numbering (Halide's idea): structurally equal nodes get the same number,
// and a number used by two or more distinct parent nodes is worth a Let. Counting uses per
// distinct parent (not per occurrence) means that when (a + b) * c is shared, a + b inside it
// is not shared again unless it also occurs elsewhere.
//
// Placement (the part Halide does not need, since its loads may be speculated): the tree is
// cut into guard regions at conditional edges (And / Or right operands, Select arms). Region S
// binds number X when X has >= 2 uses below S and either
//   - X is reached from S's root without crossing a conditional edge (it is evaluated whenever
//     S is, so computing it first is free and safe), or
//   - X contains no Load and occurs under two or more different guarded sub-regions (it is
//     pure and total, so computing it early is safe; no deeper region holds all its uses).
// Anything else is left to the sub-regions, which repeat the analysis.
#include "ir/cse.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "ir/inline_lets.hpp"
#include "ir/internal_error.hpp"
#include "ir/ir_visitor.hpp"

namespace flexjit::ir {
namespace {

bool is_trivial(const Expr& e) {
  switch (e.kind()) {
    case NodeKind::IntImm:
    case NodeKind::FloatImm:
    case NodeKind::BoolImm:
    case NodeKind::Var: return true;
    default: return false;
  }
}

class CollectNames : public OnceVisitor {
 public:
  std::set<std::string> names;

 protected:
  void visit(const Var* op, const Expr&) override { names.insert(op->name); }
};

// Hash-consing: number(e) is equal for structurally equal trees.
class Numbering {
 public:
  int number(const Expr& e) {
    if (auto it = memo_.find(e.get()); it != memo_.end()) return it->second;
    std::string key;
    auto put = [&key](const void* p, std::size_t n) { key.append(static_cast<const char*>(p), n); };
    auto put_int = [&put](std::int64_t v) { put(&v, sizeof v); };
    auto put_str = [&](const std::string& s) {
      put_int(static_cast<std::int64_t>(s.size()));
      key += s;
    };
    put_int(static_cast<int>(e.kind()));
    put_int(static_cast<int>(e.type()));
    bool load = false;
    switch (e.kind()) {
      case NodeKind::IntImm: put_int(e.as<IntImm>()->value); break;
      case NodeKind::FloatImm: {
        const float f = e.as<FloatImm>()->value;
        put(&f, sizeof f);  // by bit pattern, as equal() does
        break;
      }
      case NodeKind::BoolImm: put_int(e.as<BoolImm>()->value); break;
      case NodeKind::Var:
        put_str(e.as<Var>()->name);
        put_int(static_cast<int>(e.as<Var>()->var_kind));
        break;
      case NodeKind::Load:
        put_str(e.as<Load>()->tensor);
        put_int(static_cast<int>(e.as<Load>()->dtype));
        load = true;
        break;
      case NodeKind::Unary: put_int(static_cast<int>(e.as<Unary>()->op)); break;
      case NodeKind::Binary: put_int(static_cast<int>(e.as<Binary>()->op)); break;
      case NodeKind::Compare: put_int(static_cast<int>(e.as<Compare>()->op)); break;
      case NodeKind::Call: put_int(static_cast<int>(e.as<Call>()->fn)); break;
      case NodeKind::Let: put_str(e.as<Let>()->name); break;
      default: break;
    }
    for (const Expr& c : children(e)) {
      const int id = number(c);
      put_int(id);
      load = load || has_load_[id];
    }
    auto [it, inserted] = ids_.try_emplace(std::move(key), static_cast<int>(has_load_.size()));
    if (inserted) has_load_.push_back(load);
    memo_.emplace(e.get(), it->second);
    alive_.push_back(e);  // keeps memo_'s pointer keys from being reused
    return it->second;
  }

  bool has_load(int id) const { return has_load_[id]; }

 private:
  std::unordered_map<std::string, int> ids_;
  std::unordered_map<const Node*, int> memo_;
  std::vector<Expr> alive_;
  std::vector<bool> has_load_;
};

class Cse {
 public:
  Cse(std::string prefix, std::set<std::string> taken) : prefix_(std::move(prefix)), taken_(std::move(taken)) {}

  // Processes one guard region rooted at e; `bound` maps value numbers to the variables of
  // enclosing Lets.
  Expr region(const Expr& e, const std::map<int, Expr>& bound) {
    if (auto it = bound.find(numbering_.number(e)); it != bound.end()) return it->second;
    info_.clear();
    order_ = 0;
    count_uses(e, bound);
    std::vector<Expr> subregions;
    mark_unconditional(e, bound, subregions);
    for (const Expr& sub : subregions) {
      std::unordered_set<int> seen;
      ++region_counter_;
      mark_reach(sub, bound, seen);
    }

    std::vector<std::pair<int, int>> chosen;  // (post-order, number)
    for (const auto& [id, inf] : info_) {
      if (inf.uses < 2 || is_trivial(inf.rep)) continue;
      if (inf.unconditional || (!numbering_.has_load(id) && inf.regions >= 2)) chosen.emplace_back(inf.order, id);
    }
    std::sort(chosen.begin(), chosen.end());

    // info_ is per region and region() recurses below, so copy what is needed first.
    std::map<int, Expr> inner = bound;
    std::vector<std::pair<Expr, Expr>> lets;  // (var, representative)
    for (const auto& [order, id] : chosen) {
      const Expr& rep = info_.at(id).rep;
      Expr var = Var::make(fresh_name(), rep.type(), VarKind::Let, rep->pos);
      inner[id] = var;
      lets.emplace_back(var, rep);
    }
    Expr body = rebuild(e, inner, true);
    for (auto it = lets.rbegin(); it != lets.rend(); ++it) {
      Expr value = rebuild(it->second, inner, false);
      body = Let::make(it->first.as<Var>()->name, value, body, it->second->pos);
    }
    return body;
  }

 private:
  struct Info {
    Expr rep;  // the first occurrence
    int uses = 0;
    int order = -1;  // post-order index of the first visit
    bool unconditional = false;
    int regions = 0;  // how many guarded sub-regions reach it (capped at 2)
    int last_region = -1;
  };

  // Uses per distinct parent, and a post-order for deterministic, inner-first numbering.
  void count_uses(const Expr& e, const std::map<int, Expr>& bound) {
    const int id = numbering_.number(e);
    Info& inf = info_[id];
    if (inf.rep) return;  // already visited
    inf.rep = e;
    for (const Expr& c : children(e)) {
      const int cid = numbering_.number(c);
      if (bound.count(cid)) continue;
      info_[cid].uses++;
      count_uses(c, bound);
    }
    info_[id].order = order_++;
  }

  // Marks what is evaluated whenever the region root is, and collects the guarded children.
  void mark_unconditional(const Expr& e, const std::map<int, Expr>& bound, std::vector<Expr>& subregions) {
    const int id = numbering_.number(e);
    if (bound.count(id) || info_[id].unconditional) return;
    info_[id].unconditional = true;
    const std::vector<Expr> kids = children(e);
    for (std::size_t i = 0; i < kids.size(); ++i) {
      if (is_conditional_child(e, i)) subregions.push_back(kids[i]);
      else mark_unconditional(kids[i], bound, subregions);
    }
  }

  void mark_reach(const Expr& e, const std::map<int, Expr>& bound, std::unordered_set<int>& seen) {
    const int id = numbering_.number(e);
    if (bound.count(id) || !seen.insert(id).second) return;
    Info& inf = info_[id];
    if (inf.last_region != region_counter_) {
      inf.last_region = region_counter_;
      inf.regions = std::min(inf.regions + 1, 2);
    }
    for (const Expr& c : children(e)) mark_reach(c, bound, seen);
  }

  // e with bound subexpressions replaced by their variables; guarded children become regions.
  Expr rebuild(const Expr& e, const std::map<int, Expr>& bound, bool replace_self) {
    const int id = numbering_.number(e);
    if (replace_self)
      if (auto it = bound.find(id); it != bound.end()) return it->second;
    const std::vector<Expr> kids = children(e);
    std::vector<Expr> out;
    out.reserve(kids.size());
    for (std::size_t i = 0; i < kids.size(); ++i)
      out.push_back(is_conditional_child(e, i) ? region(kids[i], bound) : rebuild(kids[i], bound, true));
    return with_children(e, out);
  }

  std::string fresh_name() {
    for (;;) {
      std::string n = prefix_ + std::to_string(next_++);
      if (!taken_.count(n)) return n;
    }
  }

  std::string prefix_;
  std::set<std::string> taken_;
  int next_ = 0;
  Numbering numbering_;
  std::unordered_map<int, Info> info_;
  int order_ = 0;
  int region_counter_ = 0;
};

}  // namespace

Expr common_subexpressions(const Expr& e, const std::string& prefix) {
  internal_assert(e, "common_subexpressions: undefined expression");
  internal_assert(!prefix.empty(), "common_subexpressions: empty name prefix");
  Expr flat = inline_lets(e);
  CollectNames names;
  names.walk(flat);
  Cse cse(prefix, std::move(names.names));
  return cse.region(flat, {});
}

}  // namespace flexjit::ir
