#pragma once
// A map from names to values whose copies share their nodes: set() rebuilds only the O(log n)
// nodes on one path (a balanced AVL tree, never changed once built), so copying a map is one
// pointer and a copy never sees the original's later changes. Lowering keeps the names a scope
// binds in one: a closure keeps the bindings it saw for the price of that pointer
// (compiler/lower_values.hpp). The tree is height-balanced whatever the names, so no choice of
// names makes it deep.
#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace flexjit::compiler {

template <class V>
class PersistentMap {
 public:
  const V* find(const std::string& key) const {
    for (const Node* n = root_.get(); n;) {
      const int c = key.compare(n->key);
      if (c == 0) return &n->value;
      n = (c < 0 ? n->left : n->right).get();
    }
    return nullptr;
  }
  bool contains(const std::string& key) const { return find(key) != nullptr; }

  // Binds key in this map; copies made before keep the old binding.
  void set(const std::string& key, V value) { root_ = insert(root_, key, std::move(value)); }

  void clear() { root_.reset(); }

  // f(key, value) for every binding, in key order.
  template <class F>
  void for_each(F f) const {
    std::vector<const Node*> stack;
    for (const Node* n = root_.get(); n || !stack.empty();) {
      for (; n; n = n->left.get()) stack.push_back(n);
      n = stack.back();
      stack.pop_back();
      f(n->key, n->value);
      n = n->right.get();
    }
  }

 private:
  struct Node;
  using Ptr = std::shared_ptr<const Node>;
  struct Node {
    std::string key;
    V value;
    Ptr left, right;
    int height;
  };

  static int height(const Ptr& n) { return n ? n->height : 0; }

  static Ptr node(std::string key, V value, Ptr left, Ptr right) {
    const int h = 1 + std::max(height(left), height(right));
    return std::make_shared<const Node>(Node{std::move(key), std::move(value), std::move(left), std::move(right), h});
  }

  // The node (key, value) over left and right, rotated back into balance when an insertion made
  // one side two levels taller.
  static Ptr balance(const std::string& key, const V& value, const Ptr& left, const Ptr& right) {
    if (height(left) > height(right) + 1) {
      if (height(left->left) >= height(left->right))
        return node(left->key, left->value, left->left, node(key, value, left->right, right));
      const Node& m = *left->right;
      return node(m.key, m.value, node(left->key, left->value, left->left, m.left), node(key, value, m.right, right));
    }
    if (height(right) > height(left) + 1) {
      if (height(right->right) >= height(right->left))
        return node(right->key, right->value, node(key, value, left, right->left), right->right);
      const Node& m = *right->left;
      return node(m.key, m.value, node(key, value, left, m.left), node(right->key, right->value, m.right, right->right));
    }
    return node(key, value, left, right);
  }

  static Ptr insert(const Ptr& n, const std::string& key, V value) {
    if (!n) return node(key, std::move(value), nullptr, nullptr);
    const int c = key.compare(n->key);
    if (c == 0) return node(n->key, std::move(value), n->left, n->right);
    if (c < 0) return balance(n->key, n->value, insert(n->left, key, std::move(value)), n->right);
    return balance(n->key, n->value, n->left, insert(n->right, key, std::move(value)));
  }

  Ptr root_;
};

}  // namespace flexjit::compiler
