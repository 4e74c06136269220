#pragma once
// cuBLASLt, opened when the cuda backend starts rather than when ridgeline starts: linking it
// costs every command ~70 ms and ~210 MB resident (its static initialisers), though only
// `calibrate --backend cuda` calls it. The entries keep cuBLASLt's own signatures.
#include <cublasLt.h>

namespace ridgeline::calibration {

#define RIDGELINE_CUBLASLT_FUNCTIONS(X)                                                                                \
    X(cublasLtCreate)                                                                                                  \
    X(cublasLtDestroy)                                                                                                 \
    X(cublasLtGetVersion)                                                                                              \
    X(cublasLtMatmul)                                                                                                  \
    X(cublasLtMatmulAlgoGetHeuristic)                                                                                  \
    X(cublasLtMatmulDescCreate)                                                                                        \
    X(cublasLtMatmulDescDestroy)                                                                                       \
    X(cublasLtMatmulDescSetAttribute)                                                                                  \
    X(cublasLtMatmulPreferenceCreate)                                                                                  \
    X(cublasLtMatmulPreferenceDestroy)                                                                                 \
    X(cublasLtMatmulPreferenceSetAttribute)                                                                            \
    X(cublasLtMatrixLayoutCreate)                                                                                      \
    X(cublasLtMatrixLayoutDestroy)

struct CublasLtLibrary {
#define RIDGELINE_CUBLASLT_ENTRY(name) decltype(&::name) name = nullptr;
    RIDGELINE_CUBLASLT_FUNCTIONS(RIDGELINE_CUBLASLT_ENTRY)
#undef RIDGELINE_CUBLASLT_ENTRY
};

// Opened once per process; InputError naming `backend` when the library or a symbol is missing.
[[nodiscard]] const CublasLtLibrary& cublaslt();

}  // namespace ridgeline::calibration
