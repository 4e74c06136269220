#pragma once
// --html FILE: one self-contained page (inline CSS and SVG, nothing fetched, no scripts) drawn
// from the JSON document the command prints with --json, so the page and the JSON never differ.
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace ridgeline::html {

// The page for a ridgeline.train/1, serve/1, search-train/1, search-scaling/1, serve-search/1 or
// validation/1 document. InputError (origin --html) for a document with no page.
[[nodiscard]] std::string html_report(const nlohmann::json& document);

}  // namespace ridgeline::html
