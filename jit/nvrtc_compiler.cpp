#include "jit/nvrtc_compiler.hpp"

#include "dsl/quoted.hpp"
#include "jit/compile_diagnostics.hpp"
#include "jit/nvrtc_library.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <memory>

namespace flexjit::jit {
namespace {

// The loaded NVRTC; throws NvrtcError saying what is missing when it cannot be loaded.
const NvrtcApi& nvrtc() {
  std::string why;
  const NvrtcApi* api = nvrtc_api(&why);
  if (api == nullptr) throw NvrtcError("flexjit: " + why, "");
  return *api;
}

struct ArchName {
  int number = 0;           // 80 for sm_80
  std::string_view suffix;  // "", "a" (arch-specific) or "f" (family)
};

ArchName parse_arch(const std::string& arch) {
  std::string_view s = arch;
  ArchName out;
  if (s.starts_with("sm_")) {
    s.remove_prefix(3);
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out.number);
    std::string_view rest(end, s.data() + s.size() - end);
    if (ec == std::errc() && out.number > 0 && (rest.empty() || rest == "a" || rest == "f")) {
      out.suffix = rest;
      return out;
    }
  }
  throw NvrtcError(fmt::format("flexjit: invalid GPU architecture {} (expected e.g. sm_80 or sm_90a)", dsl::quoted(arch)), "");
}

void check_supported(const std::string& arch, const ArchName& parsed) {
  std::vector<int> archs = nvrtc_supported_archs();
  if (std::find(archs.begin(), archs.end(), parsed.number) != archs.end()) return;
  throw NvrtcError(fmt::format("flexjit: NVRTC {} cannot compile for {} (it supports sm_{})",
                                 nvrtc_version().str(), arch, fmt::join(archs, ", sm_")),
                     "");
}

bool is_std_option(const std::string& o) { return o.starts_with("-std") || o.starts_with("--std"); }

bool is_arch_option(const std::string& o) {
  return o.starts_with("-arch") || o.starts_with("--gpu-architecture") || o.starts_with("--gpu-name");
}

struct ProgramDeleter {
  void operator()(nvrtcProgram p) const { nvrtc().nvrtcDestroyProgram(&p); }
};
using Program = std::unique_ptr<std::remove_pointer_t<nvrtcProgram>, ProgramDeleter>;

std::string program_log(nvrtcProgram program) {
  std::size_t size = 0;
  if (nvrtc().nvrtcGetProgramLogSize(program, &size) != NVRTC_SUCCESS || size <= 1) return {};
  std::string log(size, '\0');
  if (nvrtc().nvrtcGetProgramLog(program, log.data()) != NVRTC_SUCCESS) return {};
  log.resize(size - 1);  // drop the terminating NUL
  return log;
}

[[noreturn]] void fail(const CompileRequest& request, nvrtcResult status, const std::string& what,
                       const std::string& log) {
  std::vector<NamedText> files{{request.source_name, request.source}};
  for (const Header& h : request.headers) files.push_back({h.name, h.content});
  std::string message = fmt::format("flexjit: NVRTC {} of {} for {} failed ({})", what,
                                    dsl::quoted(request.source_name), dsl::quoted(request.arch), nvrtc().nvrtcGetErrorString(status));
  if (!log.empty()) message += "\nNVRTC log:\n" + log;
  if (!message.empty() && message.back() != '\n') message += '\n';
  std::string excerpt = excerpt_error_lines(log, files);
  if (!excerpt.empty()) message += "Generated source:\n" + excerpt;
  throw NvrtcError(message, log);
}

void check(const CompileRequest& request, nvrtcResult status, const char* what,
           nvrtcProgram program = nullptr) {
  if (status != NVRTC_SUCCESS) fail(request, status, what, program ? program_log(program) : "");
}

}  // namespace

std::vector<int> nvrtc_supported_archs() {
  static const std::vector<int> archs = [] {
    int count = 0;
    std::vector<int> out;
    const NvrtcApi* api = nvrtc_api();
    if (api != nullptr && api->nvrtcGetNumSupportedArchs(&count) == NVRTC_SUCCESS && count > 0) {
      out.resize(static_cast<std::size_t>(count));
      if (api->nvrtcGetSupportedArchs(out.data()) != NVRTC_SUCCESS) out.clear();
    }
    return out;
  }();
  return archs;
}

std::vector<std::string> effective_options(const CompileRequest& request) {
  ArchName arch = parse_arch(request.arch);
  // PTX is requested by naming the virtual architecture; a real one (sm_XX) yields a cubin.
  const char* family = request.output == OutputKind::cubin ? "sm" : "compute";
  std::vector<std::string> options{
      fmt::format("--gpu-architecture={}_{}{}", family, arch.number, arch.suffix)};
  if (std::none_of(request.options.begin(), request.options.end(), is_std_option))
    options.emplace_back("-std=c++17");
  options.emplace_back("-default-device");
  for (const std::string& o : request.options) {
    if (is_arch_option(o))
      throw NvrtcError(fmt::format("flexjit: option {} is not allowed; set CompileRequest::arch instead", dsl::quoted(o)), "");
    options.push_back(o);
  }
  return options;
}

CompileResult compile(const CompileRequest& request) {
  std::vector<std::string> options = effective_options(request);
  const NvrtcApi& api = nvrtc();  // first, so a missing NVRTC is what gets reported
  check_supported(request.arch, parse_arch(request.arch));

  std::vector<const char*> header_sources, header_names;
  for (const Header& h : request.headers) {
    header_sources.push_back(h.content.c_str());
    header_names.push_back(h.name.c_str());
  }
  nvrtcProgram raw = nullptr;
  check(request,
        api.nvrtcCreateProgram(&raw, request.source.c_str(), request.source_name.c_str(),
                               static_cast<int>(header_sources.size()), header_sources.data(),
                               header_names.data()),
        "program creation");
  Program program(raw);
  for (const std::string& expr : request.name_expressions)
    check(request, api.nvrtcAddNameExpression(raw, expr.c_str()), "name expression registration");

  std::vector<const char*> option_ptrs;
  for (const std::string& o : options) option_ptrs.push_back(o.c_str());
  nvrtcResult status = api.nvrtcCompileProgram(raw, static_cast<int>(option_ptrs.size()), option_ptrs.data());
  CompileResult result;
  result.log = program_log(raw);
  if (status != NVRTC_SUCCESS) fail(request, status, "compilation", result.log);

  std::size_t size = 0;
  if (request.output == OutputKind::cubin) {
    check(request, api.nvrtcGetCUBINSize(raw, &size), "cubin size query", raw);
    result.image.resize(size);
    check(request, api.nvrtcGetCUBIN(raw, result.image.data()), "cubin retrieval", raw);
  } else {
    check(request, api.nvrtcGetPTXSize(raw, &size), "PTX size query", raw);
    result.image.resize(size);  // the size includes the terminating NUL, which we keep
    check(request, api.nvrtcGetPTX(raw, result.image.data()), "PTX retrieval", raw);
  }
  for (const std::string& expr : request.name_expressions) {
    const char* lowered = nullptr;
    check(request, api.nvrtcGetLoweredName(raw, expr.c_str(), &lowered), "lowered name lookup", raw);
    result.lowered_names.emplace_back(expr, lowered);
  }
  return result;
}

}  // namespace flexjit::jit
