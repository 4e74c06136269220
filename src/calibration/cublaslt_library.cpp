#include "calibration/cublaslt_library.hpp"

#include <dlfcn.h>

#include <mutex>
#include <string>

#include "core/error.hpp"

#ifndef RIDGELINE_CUBLASLT_PATH
#define RIDGELINE_CUBLASLT_PATH ""
#endif

namespace ridgeline::calibration {

namespace {

// The soname first (LD_LIBRARY_PATH, ldconfig), then the library CMake linked against at build time.
void* open_library() {
    const std::string soname = "libcublasLt.so." + std::to_string(CUBLAS_VER_MAJOR);
    void* handle = dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr && *RIDGELINE_CUBLASLT_PATH != '\0') handle = dlopen(RIDGELINE_CUBLASLT_PATH, RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
        const char* why = dlerror();
        throw InputError(kRequest, "backend", "cuda: cannot open " + soname + " (" + (why != nullptr ? why : "not found") + ")");
    }
    return handle;
}

CublasLtLibrary load() {
    void* handle = open_library();
    CublasLtLibrary library;
#define RIDGELINE_CUBLASLT_RESOLVE(name)                                                                               \
    library.name = reinterpret_cast<decltype(&::name)>(dlsym(handle, #name));                                          \
    if (library.name == nullptr) throw InputError(kRequest, "backend", "cuda: cuBLASLt lacks " #name);
    RIDGELINE_CUBLASLT_FUNCTIONS(RIDGELINE_CUBLASLT_RESOLVE)
#undef RIDGELINE_CUBLASLT_RESOLVE
    return library;  // the handle stays open for the life of the process
}

}  // namespace

const CublasLtLibrary& cublaslt() {
    static std::once_flag once;
    static CublasLtLibrary library;
    std::call_once(once, [] { library = load(); });
    return library;
}

}  // namespace ridgeline::calibration
