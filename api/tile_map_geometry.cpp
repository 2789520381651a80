#include "api/tile_map_geometry.hpp"

namespace flexjit::api {

std::size_t TileMapGeometry::rows() const {
  return static_cast<std::size_t>(maps_b) * static_cast<std::size_t>(maps_h) * static_cast<std::size_t>(row_tiles());
}

TileMapRef TileMapGeometry::ref() const {
  TileMapRef r{};
  r.h_stride = maps_h > 1 ? row_tiles() : 0;
  r.b_stride = maps_b > 1 ? maps_h * row_tiles() : 0;
  r.row_entries = row_entries();
  return r;
}

TileMapRef TileMapGeometry::ref(const int* base) const {
  TileMapRef r = ref();
  r.counts = base;
  r.entries = base + rows();
  return r;
}

TileMapArgs TileMapGeometry::builder_args(int Tq, int Tkv) const {
  TileMapArgs m{};
  m.Tq = Tq;
  m.Tkv = Tkv;
  m.n_q_tiles = q_tiles;
  m.n_kv_tiles = kv_tiles;
  m.Hm = maps_h;
  return m;
}

TileMapArgs TileMapGeometry::builder_args(int* base, int Tq, int Tkv) const {
  TileMapArgs m = builder_args(Tq, Tkv);
  m.counts = base;
  m.entries = base + rows();
  return m;
}

std::array<unsigned, 3> TileMapGeometry::builder_grid() const {
  return {static_cast<unsigned>(row_tiles()), static_cast<unsigned>(maps_h), static_cast<unsigned>(maps_b)};
}

TileMapGeometry tile_map_geometry(const codegen::GeneratedKernel& kernel, TileMapRows rows_are, int B, int Hq, int Tq,
                                  int Tkv) {
  if (!kernel.has_entry(codegen::EntryRole::tile_map)) return {.rows_are = rows_are};
  const auto tiles = [](int n, int block) { return (n + block - 1) / block; };
  return {.rows_are = rows_are,
          .q_tiles = tiles(Tq, kernel.tile.block_m),
          .kv_tiles = tiles(Tkv, kernel.tile.block_n),
          .maps_b = kernel.tile_map_per_batch ? B : 1,
          .maps_h = kernel.tile_map_per_head ? Hq : 1};
}

}  // namespace flexjit::api
