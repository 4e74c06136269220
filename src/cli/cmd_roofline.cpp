#include <algorithm>
#include <iostream>
#include <sstream>

#include "model/plausible_sizes.hpp"
#include "cli/commands.hpp"
#include "cli/what_if.hpp"
#include "stack/stack_file.hpp"
#include "core/error.hpp"
#include "engine/roofline.hpp"
#include "engine/layer_ops.hpp"
#include "hardware/catalog.hpp"
#include "hardware/measured_range.hpp"
#include "io/quantity_text.hpp"
#include "model/model_catalog.hpp"
#include "report/reports.hpp"
#include "report/software_text.hpp"

namespace ridgeline::cli {

namespace {

Dtype dtype_flag(const std::string& text, const std::string& flag) {
    const auto dtype = parse_dtype(text);
    if (!dtype) throw InputError(flag, "", "unknown dtype \"" + text + "\" (known: fp32, tf32, bf16, fp16, fp8, int8, int4, fp4)");
    return *dtype;
}

// "B,D,F" with three positive whole numbers.
MatmulShape parse_matmul(const std::string& text) {
    std::stringstream stream(text);
    std::string part;
    std::vector<double> dims;
    while (std::getline(stream, part, ',')) {
        const auto value = io::parse_positive_whole(part, 1'000'000'000'000);
        if (!value || dims.size() == 3)
            throw InputError("--matmul", "", "expected B,D,F as three positive whole numbers, found \"" + text + "\"");
        dims.push_back(static_cast<double>(*value));
    }
    if (dims.size() != 3)
        throw InputError("--matmul", "", "expected B,D,F as three positive whole numbers, found \"" + text + "\"");
    return {dims[0], dims[1], dims[2]};
}

}  // namespace

void add_roofline_command(CLI::App& app, const GlobalOptions& options) {
    struct Flags {
        WhatIfFlags what_if;
        std::string hardware;
        std::string matmul;
        std::string dtype = "bf16";
        std::string weights_dtype;
        std::string kv_dtype = "bf16";
        std::string model;
        std::string phase = "training";
        double batch = 1;
        double seq_len = 8192;
        bool json = false;
        std::string stack;
    };
    auto flags = std::make_shared<Flags>();
    CLI::App* command = app.add_subcommand(
        "roofline", "ridge points of a chip, or the roofline of one matmul [B,D] x [D,F] on it");
    command->add_option("--hardware", flags->hardware, "chip or system name (see `ridgeline hardware`) or file")
        ->required();
    command->add_option("--matmul", flags->matmul, "B,D,F: tokens, contracting and output dims");
    command->add_option("--dtype", flags->dtype, "activation and arithmetic dtype (bf16, fp8, int8, ...)");
    command->add_option("--weights-dtype", flags->weights_dtype, "weight storage dtype (default: --dtype)");
    command->add_option("--model", flags->model, "place one layer of this model's forward pass on the roofline");
    command->add_option("--phase", flags->phase, "with --model: training, prefill or decode")
        ->check(CLI::IsMember({"training", "prefill", "decode"}));
    command->add_option("--batch", flags->batch, "with --model: sequences in the batch")->check(CLI::Range(1.0, 1e9));
    command->add_option("--seq-len", flags->seq_len, "with --model: tokens per sequence (decode: context length)")
        ->check(CLI::Range(1.0, kMaxSequenceTokens));
    command->add_option("--kv-dtype", flags->kv_dtype, "with --model --phase decode: KV cache dtype");
    command->add_option("--stack", flags->stack, "software stack for --model's predicted times (default: the chip's, for the phase)");
    command->add_flag("--json", flags->json, "print one JSON document (schema ridgeline.roofline/1)");
    add_what_if_flags(*command, flags->what_if);

    command->callback([flags, &options] {
        Hardware hardware = resolve_hardware(flags->hardware, options.data_dir);
        const auto applied = apply_what_if(hardware, flags->what_if);
        if (!flags->model.empty() && !flags->matmul.empty())
            throw InputError("--model", "", "give either --model or --matmul, not both");
        if (!flags->model.empty()) {
            report::LayerQuery query;
            const ModelSpec model = resolve_model(flags->model, options.data_dir);
            query.model_name = model.name;
            query.workload.phase = flags->phase == "decode" ? Phase::decode
                                   : flags->phase == "prefill" ? Phase::prefill : Phase::training;
            query.workload.sequences = flags->batch;
            query.workload.seq_len = flags->seq_len;
            query.workload.activations = dtype_flag(flags->dtype, "--dtype");
            query.workload.weights = flags->weights_dtype.empty() ? query.workload.activations
                                                                  : dtype_flag(flags->weights_dtype, "--weights-dtype");
            query.workload.kv_cache = dtype_flag(flags->kv_dtype, "--kv-dtype");
            query.compute = query.workload.activations;
            if (!hardware.chip.supports(query.compute))
                throw InputError("--dtype", "", hardware.chip.name + " has no " + std::string(dtype_name(query.compute)) +
                                                    " arithmetic");
            const Stack stack = flags->stack.empty() ? default_stack(hardware.chip, query.workload.phase != Phase::training, options.data_dir)
                                                     : resolve_stack(flags->stack, options.data_dir);
            const KernelPricing pricing{hardware.chip, stack};
            query.layer = place_on_roofline(hardware.chip, layer_ops(model, query.workload, &pricing), query.compute);
            query.stack = stack.name;
            query.kernels_note = "kernels: " + report::kernels_source(hardware.chip);
            std::cout << with_settings(applied, flags->json, flags->json ? report::layer_json(hardware, query) : report::layer_table(hardware, query))
                      << "\n";
            return;
        }
        if (flags->matmul.empty()) {
            const auto points = ridge_points(hardware);
            std::cout << with_settings(applied, flags->json, flags->json ? report::ridge_json(hardware, points) : report::ridge_table(hardware, points))
                      << "\n";
            return;
        }
        report::MatmulQuery query;
        query.shape = parse_matmul(flags->matmul);
        query.dtypes.activations = dtype_flag(flags->dtype, "--dtype");
        query.dtypes.weights =
            flags->weights_dtype.empty() ? query.dtypes.activations : dtype_flag(flags->weights_dtype, "--weights-dtype");
        query.dtypes.compute = query.dtypes.activations;  // narrower weights are widened to the activations' dtype
        if (!hardware.chip.supports(query.dtypes.compute))
            throw InputError("--dtype", "", hardware.chip.name + " has no " +
                                                std::string(dtype_name(query.dtypes.compute)) + " arithmetic");
        query.time = matmul_roofline(hardware.chip, query.shape, query.dtypes);
        {
            // A calibrated chip was fitted on a range of GEMM shapes: say when this one leaves it.
            const double smallest = std::min({query.shape.rows, query.shape.contract, query.shape.cols});
            const double largest = std::max({query.shape.rows, query.shape.contract, query.shape.cols});
            for (const std::string& warning : measured_range_warnings(hardware.chip, smallest, largest, 0, 0))
                std::cerr << "warning: " << warning << "\n";
        }
        query.critical_batch_tokens = critical_batch_tokens(hardware.chip, query.dtypes);
        if (!hardware.chip.kernels) {
            query.predicted_note = hardware.chip.name + ": no measured kernel model for this chip";
        } else {
            try {
                const MatmulShape& m = query.shape;
                query.predicted = gemm_time(hardware.chip, {m.rows, m.contract, m.cols, 1, m.contract * m.cols}, query.dtypes);
                query.predicted_note = hardware.chip.kernels->source;
            } catch (const InputError& e) {
                query.predicted_note = e.what();
            }
        }
        std::cout << with_settings(applied, flags->json, flags->json ? report::matmul_json(hardware, query) : report::matmul_table(hardware, query))
                  << "\n";
    });
}

}  // namespace ridgeline::cli
