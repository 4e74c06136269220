#pragma once
// The pipeline schedules a plan can ask for, and the names files, flags, reports and launch
// configurations spell them by, listed once.
#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace ridgeline {

// zero_bubble: ZB1P (Qi et al. 2024, Zero Bubble Pipeline Parallelism, ICLR), weight gradients
// deferred into the bubble; dualpipe: DeepSeek-V3's bidirectional pipeline (arXiv 2412.19437 Sec. 3.2.1).
enum class PipelineSchedule { gpipe, one_f_one_b, interleaved, zero_bubble, dualpipe };
inline constexpr std::array<const char*, 5> kScheduleNames = {"gpipe", "1f1b", "interleaved", "zb1p", "dualpipe"};  // in enum order

[[nodiscard]] constexpr const char* schedule_name(PipelineSchedule schedule) { return kScheduleNames[static_cast<std::size_t>(schedule)]; }

[[nodiscard]] inline std::optional<PipelineSchedule> parse_schedule(std::string_view text) {
    for (std::size_t i = 0; i < kScheduleNames.size(); ++i)
        if (text == kScheduleNames[i]) return static_cast<PipelineSchedule>(i);
    return std::nullopt;
}

// "gpipe, 1f1b, interleaved, zb1p or dualpipe", as error messages list the choices.
[[nodiscard]] inline std::string schedule_choices() {
    std::string text;
    for (std::size_t i = 0; i < kScheduleNames.size(); ++i)
        text += std::string(i == 0 ? "" : i + 1 == kScheduleNames.size() ? " or " : ", ") + kScheduleNames[i];
    return text;
}

}  // namespace ridgeline
