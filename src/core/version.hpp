#pragma once
// Ridgeline's version: project(VERSION) in CMakeLists.txt, the one place it is set.
namespace ridgeline {

[[nodiscard]] const char* ridgeline_version();

}  // namespace ridgeline
