#pragma once
// A few recently JIT-compiled units of native code, so that repeated runs of one program (training
// steps, test sweeps, benchmarks) pay the JIT once: the forward's mods (row_mods.cpp) and the
// backward's derivatives (mod_gradient.cpp) each keep one. Keys compare structurally: the
// declarations in order and the mod bodies.
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>

#include "ir/ir.hpp"

namespace flexjit::cpu {

// Same scalars and captures in the same order, with the same types: what the layout of a
// binding (cpu/args.hpp) and so the compiled code depend on.
inline bool same_declarations(const ir::Program& a, const ir::Program& b) {
  if (a.captures.size() != b.captures.size() || a.scalars.size() != b.scalars.size()) return false;
  for (std::size_t k = 0; k < a.captures.size(); ++k)
    if (a.captures[k].name != b.captures[k].name || a.captures[k].dtype != b.captures[k].dtype ||
        a.captures[k].rank != b.captures[k].rank)
      return false;
  for (std::size_t k = 0; k < a.scalars.size(); ++k)
    if (a.scalars[k].name != b.scalars[k].name || a.scalars[k].type != b.scalars[k].type) return false;
  return true;
}

inline bool same_mod(const std::optional<ir::Mod>& a, const std::optional<ir::Mod>& b) {
  if (a.has_value() != b.has_value()) return false;
  return !a || ir::equal(a->body, b->body);
}

// The most recent kCapacity entries, most recent first. Thread-safe; compiles run outside the
// lock, so two threads may compile the same key at once (both results are correct).
template <class Key, class Code> class CompileCache {
 public:
  // The code of the entry `same(entry_key, key)` holds for, else make()'s, kept under key.
  template <class Same, class Make> std::shared_ptr<const Code> get(const Key& key, Same same, Make make) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (auto it = entries_.begin(); it != entries_.end(); ++it)
        if (same(it->key, key)) {
          Entry e = *it;
          entries_.erase(it);
          entries_.push_front(e);
          return e.code;
        }
    }
    std::shared_ptr<const Code> code = make();
    std::lock_guard<std::mutex> lock(mu_);
    entries_.push_front({key, code});
    if (entries_.size() > kCapacity) entries_.pop_back();
    return code;
  }

 private:
  static constexpr std::size_t kCapacity = 32;
  struct Entry {
    Key key;
    std::shared_ptr<const Code> code;
  };
  std::mutex mu_;
  std::deque<Entry> entries_;
};

}  // namespace flexjit::cpu
