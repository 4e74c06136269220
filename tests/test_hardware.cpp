// Shipped hardware descriptions: complete, sourced, consistent, and resolvable by the names users type.
#include <doctest/doctest.h>

#include <fstream>
#include <functional>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "engine/cost.hpp"
#include "hardware/catalog.hpp"
#include "io/json_reader.hpp"
#include "test_support.hpp"

using namespace ridgeline;

namespace {
// Every number in a chip file must sit in an object that also says where it comes from (or inside
// a block that does, such as a chip's fitted "kernels"); in a system file, next to a "source" key.
void check_sourced(const nlohmann::json& value, const std::string& path, bool parent_has_source) {
    if (value.is_object()) {
        const bool has_source = value.contains("source") && value["source"].is_string() &&
                                !value["source"].get<std::string>().empty();
        for (const auto& item : value.items()) check_sourced(item.value(), path + "." + item.key(), has_source || parent_has_source);
    } else if (value.is_array()) {
        for (const auto& item : value) check_sourced(item, path, parent_has_source);
    } else if (value.is_number()) {
        CAPTURE(path);
        CHECK(parent_has_source);
    }
}
}  // namespace

TEST_CASE("every shipped chip and system loads, and every number carries its source") {
    const auto chips = list_chips(test::source_dir());
    const auto systems = list_systems(test::source_dir());
    CHECK(chips.size() >= 9);
    CHECK(systems.size() >= 8);
    for (const auto& entry : chips) {
        CAPTURE(entry.file.string());
        const ChipSpec chip = load_chip_file(entry.file);
        CHECK(chip.name == entry.file.stem().string());
        CHECK(chip.supports(Dtype::bf16));
        check_sourced(io::parse_json_file(entry.file), chip.name, false);
    }
    for (const auto& entry : systems) {
        CAPTURE(entry.file.string());
        const SystemSpec system = load_system_file(entry.file);
        CHECK(system.name == entry.file.stem().string());
        check_sourced(io::parse_json_file(entry.file), system.name, false);
        // Each system's chip exists, and the domain is made of whole hosts.
        const Hardware hardware = resolve_hardware(system.name, test::source_dir());
        CHECK(hardware.chip.name == system.chip_name);
        CHECK(system.scale_up.max_domain_chips() % system.chips_per_host == 0);
    }
}

TEST_CASE("the names users type resolve to the right chip and system") {
    const auto dir = test::source_dir();
    CHECK(resolve_hardware("tpu-v5p", dir).system->name == "tpu-v5p-pod");
    CHECK(resolve_hardware("h100-sxm", dir).system->name == "dgx-h100");
    CHECK(resolve_hardware("dgx-h100", dir).chip.name == "h100-sxm");
    CHECK(resolve_hardware("H100", dir).chip.name == "h100-sxm");
    CHECK(resolve_hardware("gb200-nvl72", dir).system->scale_up.domain_size == 72);
    CHECK(resolve_hardware("tpu-v5p-pod", dir).system->scale_up.max_domain_chips() == 16 * 20 * 28);
    CHECK(resolve_hardware("tpu-v5e-pod", dir).system->scale_up.max_domain_chips() == 256);
    CHECK(resolve_hardware("a100-40gb", dir).chip.hbm_bytes == doctest::Approx(40e9).scale(0).epsilon(0.08));
    for (const char* name : {"tpu-v4", "tpu-v5e", "tpu-v6e", "a100-80gb", "h200", "b200", "dgx-a100", "dgx-h200",
                             "dgx-b200", "tpu-v6e-pod"}) {
        CAPTURE(name);
        CHECK_NOTHROW((void)resolve_hardware(name, dir));
    }
}

TEST_CASE("fp8 only where the chip has it") {
    const auto dir = test::source_dir();
    CHECK(resolve_hardware("h100-sxm", dir).chip.supports(Dtype::fp8));
    CHECK(resolve_hardware("b200", dir).chip.supports(Dtype::fp8));
    CHECK_FALSE(resolve_hardware("a100-80gb", dir).chip.supports(Dtype::fp8));
    CHECK_FALSE(resolve_hardware("tpu-v5p", dir).chip.supports(Dtype::fp8));
}

TEST_CASE("an unknown hardware name lists the known ones") {
    try {
        (void)resolve_hardware("tpu-v9z", test::source_dir());
        FAIL("expected an InputError");
    } catch (const InputError& e) {
        const std::string message = e.what();
        CHECK(message.find("tpu-v9z") != std::string::npos);
        CHECK(message.find("dgx-h100") != std::string::npos);
        CHECK(message.find("tpu-v5e") != std::string::npos);
    }
}

TEST_CASE("cost: chips x hours x the chip file's hourly price, none where the file gives no price") {
    const nlohmann::json file = test::read_json(test::source_dir() / "hardware" / "chips" / "h100-sxm.json");
    const double price = file.at("price_usd_per_chip_hour").at("value").get<double>();
    const ChipSpec chip = resolve_hardware("h100", test::source_dir()).chip;
    CHECK(cost_usd(chip, 8, 2 * 3600.0).value() == doctest::Approx(16 * price));
    ChipSpec unpriced = chip;
    unpriced.price_usd_per_chip_hour.reset();
    CHECK_FALSE(cost_usd(unpriced, 8, 3600.0).has_value());
}

TEST_CASE("a link's collective share must be above 0 and at most 1: the chip file and field are named") {
    const auto source = test::source_dir() / "hardware" / "chips" / "h100-sxm.json";
    for (const double share : {1.2, 0.0, -0.5}) {
        CAPTURE(share);
        nlohmann::json chip = nlohmann::json::parse(std::ifstream(source));
        chip["interconnect"]["scale_out"]["collective_fraction"]["value"] = share;
        const auto path = test::scratch_dir("collective-share") / "chip.json";
        std::ofstream(path) << chip.dump();
        try {
            (void)load_chip_file(path);
            FAIL("accepted a collective share of " << share);
        } catch (const InputError& e) {
            const std::string what = e.what();
            CHECK(what.find("chip.json") != std::string::npos);
            CHECK(what.find("collective_fraction") != std::string::npos);
        }
    }
}
