#include "jit/cache_key.hpp"
#include "tests/jit/test_support.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <set>

namespace flexjit::jit {
namespace {

// Owns the storage a KeyInputs points into, so each test case can mutate one field.
struct Inputs {
  std::string name = "flash_fwd";
  std::string source = "extern \"C\" __global__ void k() {}";
  std::string source_name = "variant.cu";
  std::vector<Header> headers{{"mods.cuh", "struct Mods {};"}, {"tile.cuh", "// tiles"}};
  std::vector<std::string> options{"--gpu-architecture=sm_90a", "-std=c++17", "-default-device"};
  std::string arch = "sm_90a";
  OutputKind output = OutputKind::cubin;
  std::vector<std::string> names;
  NvrtcVersion nvrtc{13, 0};
  std::uint32_t format = kCacheFormatVersion;

  CacheKey key() const {
    KeyInputs in;
    in.name = name;
    in.source = source;
    in.source_name = source_name;
    in.headers = headers;
    in.options = options;
    in.arch = arch;
    in.output = output;
    in.name_expressions = names;
    in.nvrtc = nvrtc;
    in.format_version = format;
    return compute_key(in);
  }
};

TEST(CacheKey, FormatIsPrefixDashFullDigest) {
  CacheKey k = Inputs{}.key();
  EXPECT_EQ(k.prefix(), "flash_fwd");
  EXPECT_EQ(k.hex_digest().size(), 64u);
  EXPECT_EQ(k.str(), std::string(k.prefix()) + "-" + std::string(k.hex_digest()));
  EXPECT_EQ(CacheKey::parse(k.str()), k);
  EXPECT_EQ(CacheKey::parse(k.str()).hash(), k.hash());
  EXPECT_EQ(Inputs{}.key(), k);  // deterministic
}

TEST(CacheKey, PrefixIsSanitized) {
  EXPECT_EQ(sanitize_key_prefix("flash fwd<Mods, 128>/x"), "flash_fwd_Mods__128__x");
  EXPECT_EQ(sanitize_key_prefix(""), "kernel");
  EXPECT_EQ(sanitize_key_prefix(".hidden"), "_hidden");
  EXPECT_EQ(sanitize_key_prefix(std::string(300, 'a')).size(), 48u);
  Inputs in;
  in.name = "../../etc/passwd";
  CacheKey k = in.key();
  EXPECT_EQ(k.str().find('/'), std::string::npos);
  EXPECT_EQ(CacheKey::parse(k.str()), k);
}

TEST(CacheKey, ParseRejectsOtherStrings) {
  std::string hex(64, 'a');
  EXPECT_THROW(CacheKey::parse(""), std::invalid_argument);
  EXPECT_THROW(CacheKey::parse("name"), std::invalid_argument);
  EXPECT_THROW(CacheKey::parse("-" + hex), std::invalid_argument);
  EXPECT_THROW(CacheKey::parse("a b-" + hex), std::invalid_argument);
  EXPECT_THROW(CacheKey::parse("k-" + hex.substr(1)), std::invalid_argument);
  EXPECT_THROW(CacheKey::parse("k-" + std::string(64, 'A')), std::invalid_argument);
  EXPECT_NO_THROW(CacheKey::parse("k-" + hex));
}

TEST(CacheKey, NameIsALabelNotPartOfTheDigest) {
  Inputs a, b;
  b.name = "other";
  EXPECT_EQ(a.key().hex_digest(), b.key().hex_digest());
  EXPECT_NE(a.key(), b.key());
}

TEST(CacheKey, EveryInputChangesTheKey) {
  const std::vector<std::pair<const char*, std::function<void(Inputs&)>>> mutations = {
      {"source", [](Inputs& i) { i.source += " "; }},
      {"source name", [](Inputs& i) { i.source_name = "other.cu"; }},
      {"header content", [](Inputs& i) { i.headers[0].content += "x"; }},
      {"header name", [](Inputs& i) { i.headers[1].name = "tiles.cuh"; }},
      {"header added", [](Inputs& i) { i.headers.push_back({"extra.cuh", ""}); }},
      {"header order", [](Inputs& i) { std::swap(i.headers[0], i.headers[1]); }},
      {"option changed", [](Inputs& i) { i.options[1] = "-std=c++20"; }},
      {"option added", [](Inputs& i) { i.options.push_back("--use_fast_math"); }},
      {"option order", [](Inputs& i) { std::swap(i.options[1], i.options[2]); }},
      {"arch", [](Inputs& i) { i.arch = "sm_90"; }},
      {"output kind", [](Inputs& i) { i.output = OutputKind::ptx; }},
      {"name expression", [](Inputs& i) { i.names.push_back("k<1>"); }},
      {"nvrtc minor", [](Inputs& i) { i.nvrtc.minor = 1; }},
      {"nvrtc major", [](Inputs& i) { i.nvrtc.major = 12; }},
      {"format version", [](Inputs& i) { i.format += 1; }},
      // Length prefixes: bytes moved across a field boundary must not collide.
      {"source/header boundary", [](Inputs& i) { i.headers[1].content += "}"; i.source.pop_back(); }},
      {"option boundary", [](Inputs& i) { i.options[1] += i.options[2]; i.options[2].clear(); }},
      {"header into source", [](Inputs& i) { i.source = i.headers[1].content + i.source; i.headers[1].content.clear(); }},
  };
  const CacheKey base = Inputs{}.key();
  std::set<std::string> seen{base.str()};
  for (const auto& [what, mutate] : mutations) {
    Inputs in;
    mutate(in);
    CacheKey k = in.key();
    EXPECT_NE(k, base) << what;
    EXPECT_TRUE(seen.insert(k.str()).second) << what << " collided with another mutation";
  }
}

TEST(CacheKey, RequestKeyCoversDefaultsAndArch) {
  CompileRequest r;
  r.source = test::kSaxpySource;
  CacheKey base = compute_key(r, "saxpy");
  EXPECT_EQ(compute_key(r, "saxpy"), base);
  CompileRequest other = r;
  other.arch = "sm_90a";
  EXPECT_NE(compute_key(other, "saxpy"), base);
  other = r;
  other.options = {"-lineinfo"};
  EXPECT_NE(compute_key(other, "saxpy"), base);
  other = r;
  other.output = OutputKind::ptx;
  EXPECT_NE(compute_key(other, "saxpy"), base);
  other = r;
  other.source_name = "renamed.cu";  // visible to the code through __FILE__
  EXPECT_NE(compute_key(other, "saxpy"), base);
}

}  // namespace
}  // namespace flexjit::jit
