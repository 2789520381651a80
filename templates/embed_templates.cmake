# Writes OUTPUT: a C++ file defining flexjit::templates::embedded_templates() with the text of
# each file in INPUTS, named by its path relative to ROOT. Raw string literals are split into chunks to stay under compilers'
# string-literal length limits.
string(REPLACE "|" ";" INPUTS "${INPUTS}")
set(body "")
foreach(path ${INPUTS})
  # The name #include uses: the path below templates/ ("common/interval.cuh").
  file(RELATIVE_PATH name ${ROOT} ${path})
  file(READ ${path} text)
  string(LENGTH "${text}" len)
  set(chunks "")
  set(offset 0)
  while(offset LESS len)
    string(SUBSTRING "${text}" ${offset} 8000 piece)
    string(APPEND chunks "R\"fjembed(${piece})fjembed\"\n")
    math(EXPR offset "${offset} + 8000")
  endwhile()
  string(APPEND body "    {\"${name}\",\n${chunks}},\n")
endforeach()
file(WRITE ${OUTPUT}.tmp "// Generated at build time from templates/**/*.cuh; do not edit.
#include \"templates/embedded_templates.hpp\"

namespace flexjit::templates {

const std::vector<EmbeddedFile>& embedded_templates() {
  static const std::vector<EmbeddedFile> files = {
${body}  };
  return files;
}

}  // namespace flexjit::templates
")
file(RENAME ${OUTPUT}.tmp ${OUTPUT})
