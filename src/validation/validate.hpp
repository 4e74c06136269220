#pragma once
// Predicts each published run with its own model, hardware and plan and compares with what was
// measured. Records Ridgeline cannot model are kept, with the reason.
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "accuracy/like_runs.hpp"
#include "scenario/training_setup.hpp"
#include "model/model_spec.hpp"
#include "validation/run_record.hpp"

namespace ridgeline {

struct RecordResult {
    std::string id, kind, source;
    bool ok = false;
    std::string reason;  // why it was skipped
    double predicted_tokens_per_s = 0;
    double measured_tokens_per_s = 0;
    double error = 0;  // predicted / measured - 1
    double predicted_mfu = 0;
    Limit bound;
    // Serving records: output tokens/s of the whole record (error compares these).
    double predicted_output_tokens_per_s = 0;
    double measured_output_tokens_per_s = 0;
    double batch_seqs = 0;  // the batch predicted at (the best that fits when the record's concurrency is null)
    // At a stated concurrency the requests are simulated on an engine's scheduler (a closed loop of
    // that many clients); the static model's throughput and the simulated latencies are kept beside.
    std::string engine;  // empty: the static model (offline records, pipeline stages)
    double static_output_tokens_per_s = 0, predicted_ttft_s = 0, predicted_tpot_s = 0;
    // A latency the record measured under load, beside the simulator's of the same statistic.
    struct Latency {
        std::string statistic;  // mean, p50, p90 or p99
        double measured_s = 0, predicted_s = 0;
        [[nodiscard]] double error() const { return predicted_s / measured_s - 1.0; }
    };
    std::optional<Latency> ttft, itl;
    RunKind like;  // serving records: what makes runs alike, for intervals drawn from their errors
};

struct ErrorSummary {
    int count = 0;
    double median_abs_error = 0;
    double p90_abs_error = 0;
};

struct ValidationResult {
    std::vector<RecordResult> records;
    int skipped = 0;
    ErrorSummary overall;  // training records
    std::map<std::string, ErrorSummary> by_source;  // training records
    ErrorSummary serve;    // serving records, apart from training
    ErrorSummary serve_ttft, serve_itl;  // their measured latencies, where given
};

// The training job a record describes: its model, hardware, chips, batch and plan (InputError
// naming the record and field when it cannot be built).
[[nodiscard]] TrainingSetup record_training_setup(const RunRecord& record, const std::filesystem::path& data_dir);
// ... and the scenario it builds (errors name the record).
[[nodiscard]] TrainingScenario record_scenario(const RunRecord& record, const std::filesystem::path& data_dir);
// The model a record describes (MLA modelled as full attention of the same heads), and the
// hardware name of its accelerator (empty when Ridgeline has none).
[[nodiscard]] ModelSpec record_model(const RunRecord& record);
[[nodiscard]] std::string record_chip_name(const std::string& accelerator, const std::filesystem::path& data_dir);
// The stack file of the framework a record names (framework@version first); none when no stack
// describes it (the record then runs on the chip's default stack).
[[nodiscard]] std::optional<std::filesystem::path> record_stack_file(const RunRecord& record, const std::filesystem::path& data_dir);

// Serving records: offline (concurrency null) is the best output tokens/s over the batch sizes that
// fit; otherwise the record's concurrency is the batch.
// A record's result before it is predicted: its id, kind and source.
[[nodiscard]] RecordResult result_for(const RunRecord& record);
// Why a record of either kind cannot be predicted ("" when it can): no chip file for its
// accelerator, or MoE layers interleaved with dense ones.
[[nodiscard]] std::string unpredictable_reason(const RunRecord& record, const std::filesystem::path& data_dir);
[[nodiscard]] RecordResult predict_serve_record(const RunRecord& record, const std::filesystem::path& data_dir);

[[nodiscard]] RecordResult predict_record(const RunRecord& record, const std::filesystem::path& data_dir);
// `progress` hears how many records are done.
[[nodiscard]] ValidationResult validate_records(const std::vector<RunRecord>& records, const std::filesystem::path& data_dir,
                                                const std::function<void(std::size_t done, std::size_t total)>& progress = {});
// Median and 90th percentile (nearest rank) of |errors|.
[[nodiscard]] ErrorSummary summarize_errors(std::vector<double> errors);

}  // namespace ridgeline
