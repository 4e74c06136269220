#pragma once
// Plausible ranges for the physical quantities description files give, so that a typo or a hostile
// value is refused by name instead of turning into NaN, inf or a confident nonsense answer. The
// ranges themselves are data: schemas/physical-ranges.json, generated into io::range::<name>.
namespace ridgeline::io {

struct PhysicalRange {
    double min = 0, max = 0;
    const char* unit = "";
};

}  // namespace ridgeline::io

#include "io/physical_ranges.generated.hpp"
