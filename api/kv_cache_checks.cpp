#include "api/kv_cache_checks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <string>

#include "api/host_tensor_copy.hpp"

namespace flexjit::api {
namespace {

constexpr int kMinPageSize = 16, kMaxPageSize = 256, kPageSizeMultiple = 16;
constexpr std::int64_t kMaxKeys = std::numeric_limits<int>::max();  // a sequence's length is an int32
constexpr int kValueProblemsShown = 8;  // per tensor; a broken table could otherwise fill a screen

// dtype, rank, placement and the batch dimension of kv_lens or page_table. True when its values
// can be read.
bool check_int_tensor(const char* name, const TensorView& t, const char* dims, int rank,
                      const std::optional<AttentionShape>& shape, Memory memory, Problems& problems) {
  const std::size_t problems_before = problems.list().size();
  if (t.dtype != DType::i32) problems.add(fmt::format("{}: dtype must be i32, got {}", name, dtype_name(t.dtype)));
  if (memory == Memory::cuda)
    check_placement(name, t, shape ? shape->device : t.device, 4, problems);
  else
    check_host_placement(name, t, 4, problems);
  if (t.rank() != rank) {
    problems.add(fmt::format("{}: expected {} dim{} {}, got {}", name, rank, rank == 1 ? "" : "s", dims,
                             format_dims(t.shape)));
  } else if (shape && t.shape[0] != shape->B) {
    problems.add(fmt::format("q and {}: batch size B {} vs {}", name, shape->B, t.shape[0]));
  }
  return problems.list().size() == problems_before;
}

// Collects the first few value problems of one tensor and counts the rest.
class ValueProblems {
 public:
  ValueProblems(const char* name, Problems& problems) : name_(name), problems_(problems) {}
  ~ValueProblems() {
    if (hidden_ > 0)
      problems_.add(fmt::format("{}: {} more problem{} like these", name_, hidden_, hidden_ == 1 ? "" : "s"));
  }
  void add(std::string message) {
    if (shown_ < kValueProblemsShown)
      ++shown_, problems_.add(std::move(message));
    else
      ++hidden_;
  }

 private:
  const char* name_;
  Problems& problems_;
  int shown_ = 0, hidden_ = 0;
};

}  // namespace

KvLayout kv_layout(const ForwardOptions& options) {
  return options.page_table ? KvLayout::paged : KvLayout::dense;
}

std::optional<KvCache> check_kv_cache(const ForwardOptions& options, std::optional<AttentionShape>& shape,
                                      Problems& problems, Memory memory) {
  if (!options.kv_lens && !options.page_table) return std::nullopt;
  const std::size_t problems_before = problems.list().size();
  bool readable = shape.has_value();
  if (!options.kv_lens) {
    problems.add("page_table: needs kv_lens, the number of keys of each sequence");
    readable = false;
  } else {
    readable = check_int_tensor("kv_lens", *options.kv_lens, "[B]", 1, shape, memory, problems) && readable;
  }
  const TensorView* table = options.page_table ? &*options.page_table : nullptr;
  if (table) {
    readable = check_int_tensor("page_table", *table, "[B, max_pages_per_seq]", 2, shape, memory, problems) && readable;
    if (table->rank() == 2 && table->shape[1] < 1) {
      problems.add(fmt::format("page_table: max_pages_per_seq must be >= 1, got {}", table->shape[1]));
      readable = false;
    } else if (table->rank() == 2 && shape && table->shape[1] > kMaxKeys / std::max(1, shape->page_size)) {
      problems.add(fmt::format("page_table: max_pages_per_seq {} of {} keys each is more than {} keys",
                               table->shape[1], shape->page_size, kMaxKeys));
      readable = false;
    }
    if (shape && (shape->page_size < kMinPageSize || shape->page_size > kMaxPageSize ||
                  shape->page_size % kPageSizeMultiple != 0)) {
      problems.add(fmt::format("k: page_size {} is not a multiple of {} in [{}, {}]", shape->page_size,
                               kPageSizeMultiple, kMinPageSize, kMaxPageSize));
      readable = false;
    }
  }
  if (!readable) return std::nullopt;

  KvCache cache;
  if (table) {
    cache.max_pages = static_cast<int>(table->shape[1]);
    shape->Tkv = cache.max_pages * shape->page_size;
  }
  if (memory == Memory::cuda) return cache;  // the kernel checks the values
  cache.lens = gather_int32(*options.kv_lens);
  if (table) cache.pages = gather_int32(*table);
  {
    ValueProblems lens("kv_lens", problems);
    for (int b = 0; b < shape->B; ++b) {
      const std::int32_t n = cache.lens[static_cast<std::size_t>(b)];
      if (n < 0)
        lens.add(fmt::format("kv_lens[{}] = {} is negative", b, n));
      else if (n > shape->Tkv && table)
        lens.add(fmt::format("kv_lens[{}] = {} is more than a page table row holds ({} pages of {} = {} keys)", b, n,
                             cache.max_pages, shape->page_size, shape->Tkv));
      else if (n > shape->Tkv)
        lens.add(fmt::format("kv_lens[{}] = {} is more than the Tkv={} keys of k and v", b, n, shape->Tkv));
    }
  }
  if (table) {
    ValueProblems pages("page_table", problems);
    for (int b = 0; b < shape->B; ++b) {
      const std::int32_t n = cache.lens[static_cast<std::size_t>(b)];
      if (n > shape->Tkv) continue;  // reported above
      for (int p = 0; p * shape->page_size < n; ++p) {  // the entries this sequence reads
        const std::int32_t page = cache.pages[static_cast<std::size_t>(b) * cache.max_pages + p];
        if (page < 0 || page >= shape->num_pages)
          pages.add(fmt::format("page_table[{}, {}] = {} is not a page of k and v (0..{})", b, p, page,
                                shape->num_pages - 1));
      }
    }
  }
  if (problems.list().size() != problems_before) return std::nullopt;
  return cache;
}

KvCacheRef kv_cache_ref(const ForwardOptions& options, const AttentionShape& shape, const KvCache& cache) {
  KvCacheRef r{};
  r.kv_lens = static_cast<const int*>(options.kv_lens->data);
  r.lens_stride = options.kv_lens->stride(0);
  if (options.page_table) {
    r.page_table = static_cast<const int*>(options.page_table->data);
    r.pt_b = options.page_table->stride(0);
    r.pt_p = options.page_table->stride(1);
  }
  r.page_size = shape.page_size;
  r.num_pages = shape.num_pages;
  r.max_pages = cache.max_pages;
  return r;
}

}  // namespace flexjit::api

