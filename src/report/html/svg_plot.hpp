#pragma once
// Inline SVG charts for the HTML reports: scatter/line plots with labelled axes (linear or log)
// and horizontal bar charts. Every data point or bar is one element of class "mark" (the tests
// count them); sizes come from the viewBox, so a chart scales to a phone's width and to paper.
#include <optional>
#include <string>
#include <vector>

namespace ridgeline::html {

struct PlotSeries {
    std::string label;
    std::string color;
    std::vector<std::pair<double, double>> points;
    bool line = false;       // join the points in order
    bool hollow = false;     // rings instead of dots
};

struct PlotAxis {
    std::string label;  // with its unit, e.g. "memory per chip (GB)"
    bool log = false;
};

struct Plot {
    std::string title;
    PlotAxis x, y;
    std::vector<PlotSeries> series;
    // A point to ring and name (the chosen plan, the critical batch).
    std::optional<std::pair<double, double>> highlight;
    std::string highlight_label;
    bool diagonal = false;  // y = x (predicted against measured)
};

[[nodiscard]] std::string svg_plot(const Plot& plot);
// The series' colours and labels, as an HTML paragraph to set under the chart.
[[nodiscard]] std::string plot_legend(const Plot& plot);

struct Bar {
    std::string label;
    double value = 0;
    std::string color;
};

// Horizontal bars of `unit` values; `limit` draws a dashed line (a capacity) at that value.
[[nodiscard]] std::string svg_bars(const std::string& title, const std::string& unit, const std::vector<Bar>& bars,
                                   std::optional<double> limit = std::nullopt, const std::string& limit_label = "");

// Text for HTML: &, <, >, " escaped.
[[nodiscard]] std::string escape(const std::string& text);

}  // namespace ridgeline::html
