#include "cli/served_flags.hpp"

#include "model/plausible_sizes.hpp"
#include "scenario/serving_setup.hpp"

namespace ridgeline::cli {

void add_served_flags(CLI::App& c, ServedFlags& f) {
    c.add_option("--model", f.model, "model name, model file or HF config.json")->required();
    c.add_option("--hardware", f.hardware, "system or chip")->required();
    c.add_option("--input-len", f.input_len, "prompt tokens per request")->required()->check(CLI::Range(1.0, kMaxSequenceTokens));
    c.add_option("--output-len", f.output_len, "generated tokens per request")->required()->check(CLI::Range(1.0, kMaxSequenceTokens));
    c.add_option("--stack", f.stack, "serving stack (stacks/*.json; default: vllm on GPUs, maxtext on TPUs)");
    add_what_if_flags(c, f.what_if);
    add_memory_margin_flag(c, f.what_if);
}

std::vector<AppliedSetting> load_served(ServedModel& served, const ServedFlags& f, const std::filesystem::path& data_dir) {
    served = load_served_model(f.model, f.hardware, data_dir, f.stack);
    return apply_what_if(served.hardware, f.what_if);
}

}  // namespace ridgeline::cli
