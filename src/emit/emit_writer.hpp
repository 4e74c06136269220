#pragma once
// Collects a configuration's settings under the framework's names (an EmitterSpec) and writes it:
// a header comment, then one setting a line in the framework's syntax. A Ridgeline value the file
// maps nothing to, or a knob the framework cannot express, is an InputError naming --emit and the
// knob: nothing is dropped silently.
#include <cstdint>
#include <string>
#include <vector>

#include "emit/emitter_spec.hpp"

namespace ridgeline {

class EmitWriter {
public:
    explicit EmitWriter(const EmitterSpec& spec) : spec_(spec) {}

    void set(const std::string& id, std::int64_t value);
    void set_number(const std::string& id, double value);  // a whole number is written without a fraction
    void set_switch(const std::string& id, bool on);
    void set_text(const std::string& id, const std::string& value);
    // The settings the file maps `value` of setting `id` to. `knob` names the plan's knob in errors.
    // `instead` given: that key of the choice with another value (Megatron's module list beside its
    // selective granularity).
    void choose(const std::string& id, const std::string& value, const std::string& knob, const EmitEntry* instead = nullptr);
    // Whether the file maps `value` of choice setting `id` (where a framework's list is open-ended).
    [[nodiscard]] bool maps(const std::string& id, const std::string& value) const { return setting(id).choices.count(value) != 0; }
    [[noreturn]] void refuse(const std::string& knob, const std::string& why) const;
    // A comment line under the header: what the framework decides itself.
    void note(const std::string& text) { notes_.push_back(text); }

    [[nodiscard]] const std::vector<EmitEntry>& entries() const { return entries_; }
    // Writes the header comment (`header` lines, Ridgeline's version, the documentation the names
    // were checked against, the notes) and the settings.
    [[nodiscard]] std::string render(const std::vector<std::string>& header) const;

private:
    const EmitSetting& setting(const std::string& id) const;
    void add(const EmitEntry& entry);

    const EmitterSpec& spec_;
    std::vector<EmitEntry> entries_;
    std::vector<std::string> notes_;
};

}  // namespace ridgeline
