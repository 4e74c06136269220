#pragma once
// The largest sizes Ridgeline takes, about 100x the largest published model in each dimension
// (layers 126 in LLaMA 3 405B, width 25,600 and experts 384 in Kimi K2, FFN 73,728 in PaLM 540B,
// vocabulary 262,144 in Gemma 3): past them a value is a typo or a hostile file, and its products
// would overflow the FLOP and byte counts downstream. One home for every reader and flag.
#include <cstdint>

namespace ridgeline {

inline constexpr std::int64_t kMaxLayers = 20'000;
inline constexpr std::int64_t kMaxWidth = 4'000'000;       // d_model
inline constexpr std::int64_t kMaxFfnWidth = 16'000'000;   // d_ff, an expert's d_ff
inline constexpr std::int64_t kMaxVocabulary = 64'000'000;
inline constexpr std::int64_t kMaxHeads = 100'000;         // heads, and a head's width
inline constexpr std::int64_t kMaxExperts = 100'000;
inline constexpr std::int64_t kMaxMtpDepth = 16;
inline constexpr double kMaxSequenceTokens = 1e8;          // a sequence, a prompt or an output
inline constexpr double kMaxBatchSequences = 1e12;         // sequences in one optimizer step
inline constexpr double kMaxBatchTokens = 1e13;            // tokens in one optimizer step
inline constexpr std::int64_t kMaxChips = 10'000'000;      // chips in a job, a range or a topology

}  // namespace ridgeline
