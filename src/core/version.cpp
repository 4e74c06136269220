#include "core/version.hpp"

#ifndef RIDGELINE_VERSION
#error "RIDGELINE_VERSION comes from project(VERSION) in CMakeLists.txt"
#endif

namespace ridgeline {

const char* ridgeline_version() { return RIDGELINE_VERSION; }

}  // namespace ridgeline
