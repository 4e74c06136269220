#pragma once
// Numeric formats of weights, activations, KV caches and matmul arithmetic.
#include <array>
#include <optional>
#include <string_view>

namespace ridgeline {

enum class Dtype { fp32, tf32, bf16, fp16, fp8, int8, int4, fp4 };

inline constexpr std::array<Dtype, 8> kAllDtypes = {Dtype::fp32, Dtype::tf32, Dtype::bf16, Dtype::fp16,
                                                    Dtype::fp8,  Dtype::int8, Dtype::int4, Dtype::fp4};
inline constexpr std::size_t kDtypeCount = kAllDtypes.size();

[[nodiscard]] constexpr std::size_t index_of(Dtype dtype) { return static_cast<std::size_t>(dtype); }

[[nodiscard]] constexpr double bytes_per_element(Dtype dtype) {
    switch (dtype) {
        case Dtype::fp32:
        case Dtype::tf32: return 4.0;  // tf32 is stored as fp32
        case Dtype::bf16:
        case Dtype::fp16: return 2.0;
        case Dtype::fp8:
        case Dtype::int8: return 1.0;
        case Dtype::int4:
        case Dtype::fp4: return 0.5;
    }
    return 0.0;
}

[[nodiscard]] constexpr std::string_view dtype_name(Dtype dtype) {
    constexpr std::array<std::string_view, kDtypeCount> names = {"fp32", "tf32", "bf16", "fp16",
                                                                 "fp8",  "int8", "int4", "fp4"};
    return names[index_of(dtype)];
}

[[nodiscard]] constexpr std::optional<Dtype> parse_dtype(std::string_view text) {
    for (Dtype dtype : kAllDtypes)
        if (dtype_name(dtype) == text) return dtype;
    return std::nullopt;
}

}  // namespace ridgeline
