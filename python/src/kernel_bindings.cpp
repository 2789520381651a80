// flexjit.Engine and flexjit.Kernel. The GIL is released while NVRTC compiles and while a
// kernel runs (a cpu kernel computes before it returns), after the arguments are read.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <optional>
#include <string>

#include "flexjit/engine.hpp"
#include "flexjit/error.hpp"
#include "python/src/call_arguments.hpp"
#include "python/src/dlpack_view.hpp"
#include "python/src/python_module.hpp"

namespace py = pybind11;

namespace flexjit::python {
namespace {

CompileOptions compile_options(int head_dim, DType dtype, const std::string& device, const std::string& arch,
                               const std::string& family, const std::string& math, const std::string& cpu_backend) {
  CompileOptions o;
  o.head_dim = head_dim;
  o.dtype = dtype;
  o.arch = arch;
  o.family = family;
  o.device = device == "cpu" ? Device::cpu() : Device::cuda();
  o.math = math == "exact" ? Math::exact : Math::fast;
  o.cpu_backend = cpu_backend == "llvm"          ? CpuBackend::llvm
                  : cpu_backend == "interpreter" ? CpuBackend::interpreter
                                                 : CpuBackend::automatic;
  return o;
}

// A tile from FlexAttention-style overrides: the fields `fields` names ({"block_m": 64, ...}), the
// rest the table's first choice for these options.
std::optional<TileShape> tile_override(const Program& program, const CompileOptions& o, const py::object& fields) {
  if (fields.is_none()) return std::nullopt;
  TileShape t = default_tile(program, o);
  for (auto [key, value] : fields.cast<py::dict>()) {
    const std::string name = py::str(key);
    if (name == "block_m") t.block_m = value.cast<int>();
    else if (name == "block_n") t.block_n = value.cast<int>();
    else if (name == "warps") t.warps = value.cast<int>();
    else if (name == "stages") t.stages = value.cast<int>();
    else if (name == "q_in_registers") t.q_in_registers = value.cast<bool>();
    else if (name == "persistent") t.persistent = value.cast<bool>();
    else
      throw ArgumentError("tile: unknown field " + std::string(py::repr(key)) +
                          " (block_m, block_n, warps, stages, q_in_registers, persistent)");
  }
  return t;
}

py::dict tile_fields(const TileShape& t) {
  using namespace pybind11::literals;
  return py::dict("block_m"_a = t.block_m, "block_n"_a = t.block_n, "warps"_a = t.warps, "stages"_a = t.stages,
                  "q_in_registers"_a = t.q_in_registers, "persistent"_a = t.persistent);
}

// block_mask_storage (a CUDA buffer of Kernel.block_mask_bytes, or None): for a mask that reads
// tensors, the map is built there on the call's stream first, so that the forward visits only
// the tiles the mask keeps (one launch; the caller need not keep a BlockMask). q_descale,
// k_descale, v_descale: an fp8_e4m3 kernel's factors (capsules), or None.
void forward(const Kernel& kernel, py::handle q, py::handle k, py::handle v, py::handle out, py::handle lse,
             const py::dict& bind, std::optional<float> scale, std::uintptr_t stream, py::handle kv_lens,
             py::handle page_table, py::handle block_mask_storage, std::int64_t q_offset, std::int64_t kv_offset,
             py::handle q_descale, py::handle k_descale, py::handle v_descale) {
  const TensorView qv = view_of(q, "q"), kv = view_of(k, "k"), vv = view_of(v, "v"), ov = view_of(out, "out");
  ForwardOptions options;
  options.lse = optional_view(lse, "lse");
  options.bind = bindings_of(bind);
  options.scale = scale;
  options.stream = stream_of(stream);
  options.kv_lens = optional_view(kv_lens, "kv_lens");
  options.page_table = optional_view(page_table, "page_table");
  options.q_offset = q_offset, options.kv_offset = kv_offset;
  options.q_descale = optional_view(q_descale, "q_descale");
  options.k_descale = optional_view(k_descale, "k_descale");
  options.v_descale = optional_view(v_descale, "v_descale");
  const std::optional<TensorView> storage = optional_view(block_mask_storage, "block_mask_storage");
  py::gil_scoped_release unlocked;
  BlockMask mask;
  if (storage && qv.rank() == 4 && kv.rank() == 4) {
    mask = kernel.build_block_mask(*storage, static_cast<int>(qv.shape[0]), static_cast<int>(qv.shape[1]),
                                   static_cast<int>(qv.shape[2]), static_cast<int>(kv.shape[2]),
                                   {.stream = options.stream, .bind = options.bind, .q_offset = q_offset,
                                    .kv_offset = kv_offset});
    options.block_mask = &mask;
  }
  kernel.forward(qv, kv, vv, ov, options);
}

void backward(const Kernel& kernel, py::handle q, py::handle k, py::handle v, py::handle out, py::handle lse,
              py::handle dout, py::handle dq, py::handle dk, py::handle dv, const py::dict& bind,
              std::optional<float> scale, const py::dict& grads, std::uintptr_t stream, bool deterministic,
              std::int64_t q_offset, std::int64_t kv_offset) {
  const TensorView qv = view_of(q, "q"), kv = view_of(k, "k"), vv = view_of(v, "v"), ov = view_of(out, "out"),
                   lv = view_of(lse, "lse"), dov = view_of(dout, "dout"), dqv = view_of(dq, "dq"),
                   dkv = view_of(dk, "dk"), dvv = view_of(dv, "dv");
  BackwardOptions options;
  options.bind = bindings_of(bind);
  options.scale = scale;
  options.stream = stream_of(stream);
  options.deterministic = deterministic;
  options.q_offset = q_offset, options.kv_offset = kv_offset;
  for (auto [name, capsule] : grads) {
    const std::string n = name.cast<std::string>();
    options.grads.emplace(n, view_of(capsule, "grads"));
  }
  py::gil_scoped_release unlocked;
  kernel.backward(qv, kv, vv, ov, lv, dov, dqv, dkv, dvv, options);
}

// "forward", "decode", "backward" or "chunk": the pass that ptx(), cubin() and compile_report()
// speak of.
Kernel::Pass pass_named(const std::string& name) {
  if (name == "forward") return Kernel::Pass::forward;
  if (name == "decode") return Kernel::Pass::decode;
  if (name == "backward") return Kernel::Pass::backward;
  if (name == "chunk") return Kernel::Pass::chunk;
  throw py::value_error("pass: expected 'forward', 'decode', 'backward' or 'chunk', got " +
                        py::repr(py::str(name)).cast<std::string>());
}

py::dict compile_report(const Kernel& kernel, const std::string& pass) {
  const Kernel::Pass which = pass_named(pass);
  Kernel::CompileReport r;
  {
    py::gil_scoped_release unlocked;
    r = kernel.compile_report(which);
  }
  py::dict out;
  out["entry"] = r.entry;
  out["family"] = r.family;
  out["tile"] = tile_fields(r.tile);
  out["registers"] = r.registers;
  out["stack_bytes"] = r.stack_bytes;
  out["spill_bytes"] = r.spill_bytes;
  out["warnings"] = r.warnings;
  return out;
}

}  // namespace

void register_kernel(py::module_& m) {
  py::class_<Kernel>(m, "Kernel")
      .def_property_readonly("device", [](const Kernel& k) { return k.device().str(); })
      .def_property_readonly("entry_name", &Kernel::entry_name)
      .def_property_readonly("head_dim", &Kernel::head_dim)
      .def_property_readonly("head_dim_v", &Kernel::head_dim_v)
      .def_property_readonly("dtype", &Kernel::dtype)
      .def_property_readonly("arch", &Kernel::arch)
      .def_property_readonly("family", &Kernel::family)
      .def_property_readonly("tile", [](const Kernel& k) { return tile_fields(k.tile()); })
      .def_property_readonly("cpu_backend", [](const Kernel& k) { return std::string(cpu_backend_name(k.cpu_backend())); })
      .def_property_readonly("needs_block_mask", &Kernel::needs_block_mask)
      .def("cuda_source", &Kernel::cuda_source, py::arg("with_templates") = false)
      .def("ptx", [](const Kernel& k, const std::string& pass) {
        const Kernel::Pass which = pass_named(pass);
        py::gil_scoped_release unlocked;
        return k.ptx(which);
      }, py::arg("pass_") = "forward")
      .def("cubin", [](const Kernel& k, const std::string& pass) {
        const Kernel::Pass which = pass_named(pass);
        std::vector<char> image;
        {
          py::gil_scoped_release unlocked;
          image = k.cubin(which);
        }
        return py::bytes(image.data(), image.size());
      }, py::arg("pass_") = "forward")
      .def("compile_report", &compile_report, py::arg("pass_") = "forward")
      .def("compile_backward", [](const Kernel& k, const std::vector<std::string>& grads, bool deterministic) {
        // What a backward call asking for these gradients would run (only the names are read).
        BackwardOptions like{.deterministic = deterministic};
        for (const std::string& name : grads) like.grads.emplace(name, TensorView{});
        py::gil_scoped_release unlocked;
        k.compile_backward(like);
      }, py::arg("grads") = std::vector<std::string>{}, py::arg("deterministic") = false)
      .def("compile_decode", &Kernel::compile_decode, py::call_guard<py::gil_scoped_release>())
      .def("compile_chunk", &Kernel::compile_chunk, py::call_guard<py::gil_scoped_release>())
      .def("block_mask_bytes", &Kernel::block_mask_bytes, py::arg("B"), py::arg("Hq"), py::arg("Tq"), py::arg("Tkv"))
      .def("may_keep_any", [](const Kernel& k, int Tq, int Tkv, const py::dict& bind, std::int64_t q_offset,
                              std::int64_t kv_offset) {
        ForwardOptions o{.bind = bindings_of(bind)};
        o.q_offset = q_offset, o.kv_offset = kv_offset;
        return k.may_keep_any(Tq, Tkv, o);
      }, py::arg("Tq"), py::arg("Tkv"), py::arg("bind"), py::arg("q_offset") = 0, py::arg("kv_offset") = 0)
      .def("kept_pairs", [](const Kernel& k, const std::vector<std::int64_t>& bounds, int B, int H,
                            const py::dict& bind, std::int64_t budget) {
        const ForwardOptions o{.bind = bindings_of(bind)};
        py::gil_scoped_release unlocked;
        return k.kept_pairs(bounds, B, H, o, budget);
      }, py::arg("bounds"), py::arg("B"), py::arg("H"), py::arg("bind"), py::arg("budget"))
      .def("forward", &forward, py::arg("q"), py::arg("k"), py::arg("v"), py::arg("out"), py::arg("lse"),
           py::arg("bind"), py::arg("scale"), py::arg("stream"), py::arg("kv_lens"), py::arg("page_table"),
           py::arg("block_mask_storage"), py::arg("q_offset") = 0, py::arg("kv_offset") = 0,
           py::arg("q_descale") = py::none(), py::arg("k_descale") = py::none(), py::arg("v_descale") = py::none())
      .def("backward", &backward, py::arg("q"), py::arg("k"), py::arg("v"), py::arg("out"), py::arg("lse"),
           py::arg("dout"), py::arg("dq"), py::arg("dk"), py::arg("dv"), py::arg("bind"), py::arg("scale"),
           py::arg("grads"), py::arg("stream"), py::arg("deterministic") = false, py::arg("q_offset") = 0,
           py::arg("kv_offset") = 0);

  py::class_<Engine>(m, "Engine")
      .def(py::init([](std::optional<std::string> cache_dir, bool disk_cache) {
             return Engine(EngineOptions{.cache_dir = std::move(cache_dir), .disk_cache = disk_cache});
           }),
           py::arg("cache_dir") = py::none(), py::arg("disk_cache") = true)
      .def(
          "compile",
          [](Engine& engine, const Program& program, int head_dim, DType dtype, const std::string& device,
             const std::string& arch, const std::string& family, const std::string& math,
             const std::string& cpu_backend, const py::object& tile, int head_dim_v,
             const std::string& backward_family) {
            CompileOptions o = compile_options(head_dim, dtype, device, arch, family, math, cpu_backend);
            o.head_dim_v = head_dim_v;
            o.backward_family = backward_family;
            o.tile = tile_override(program, o, tile);
            py::gil_scoped_release unlocked;
            return engine.compile(program, o);
          },
          py::arg("program"), py::arg("head_dim"), py::arg("dtype"), py::arg("device"), py::arg("arch") = "",
          py::arg("family") = "", py::arg("math") = "fast", py::arg("cpu_backend") = "automatic",
          py::arg("tile") = py::none(), py::arg("head_dim_v") = 0, py::arg("backward_family") = "")
      .def("counters", [](const Engine& e) {
        const EngineCounters c = e.counters();
        py::dict out;
        out["compiles"] = c.compiles;
        out["memory_hits"] = c.memory_hits;
        out["disk_hits"] = c.disk_hits;
        return out;
      });

  m.def(
      "generate_cuda_source",
      [](const Program& program, int head_dim, DType dtype, const std::string& arch, const std::string& pass,
         bool with_templates) {
        const CompileOptions o = compile_options(head_dim, dtype, "cuda", arch, "", "fast", "automatic");
        if (pass == "backward") return generate_backward_cuda_source(program, o, with_templates);
        if (pass == "decode") return generate_decode_cuda_source(program, o, with_templates);
        return generate_cuda_source(program, o, with_templates);
      },
      py::arg("program"), py::arg("head_dim"), py::arg("dtype"), py::arg("arch") = "", py::arg("pass") = "forward",
      py::arg("with_templates") = false);
}

}  // namespace flexjit::python
