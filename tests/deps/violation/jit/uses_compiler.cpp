// A planted violation for the dependency-rule check's own test: jit/ must not include compiler/.
#include "compiler/plan.hpp"
