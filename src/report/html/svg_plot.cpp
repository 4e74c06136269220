#include "report/html/svg_plot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace ridgeline::html {

namespace {

constexpr double kWidth = 640, kHeight = 400, kLeft = 78, kRight = 20, kTop = 34, kBottom = 52;

std::string num(double value) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.1f", value);
    return buffer;
}

// A tick label: 3 significant digits, SI suffixes for large and small values.
std::string tick_text(double value) {
    const double magnitude = std::fabs(value);
    const char* suffix = "";
    double scaled = value;
    if (magnitude >= 1e12) scaled = value / 1e12, suffix = "T";
    else if (magnitude >= 1e9) scaled = value / 1e9, suffix = "G";
    else if (magnitude >= 1e6) scaled = value / 1e6, suffix = "M";
    else if (magnitude >= 1e3) scaled = value / 1e3, suffix = "k";
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.3g%s", scaled, suffix);
    return buffer;
}

struct Scale {
    double low = 0, high = 1;
    bool log = false;
    double from = 0, to = 1;  // pixels
    [[nodiscard]] double operator()(double value) const {
        const double v = log ? std::log10(std::max(value, 1e-300)) : value;
        const double lo = log ? std::log10(low) : low, hi = log ? std::log10(high) : high;
        return from + (v - lo) / (hi - lo) * (to - from);
    }
    [[nodiscard]] std::vector<double> ticks() const {
        std::vector<double> out;
        if (log) {
            // Decades; 2 and 5 between them where the axis spans two decades or less.
            const bool fine = std::log10(high / low) <= 2.0;
            for (double p = std::floor(std::log10(low)); p <= std::ceil(std::log10(high)); ++p)
                for (const double m : fine ? std::vector<double>{1, 2, 5} : std::vector<double>{1}) {
                    const double t = m * std::pow(10.0, p);
                    if (t >= low * (1 - 1e-9) && t <= high * (1 + 1e-9)) out.push_back(t);
                }
            if (out.size() < 2) out = {low, high};
            return out;
        }
        const double span = high - low, raw = span / 5;
        const double step = std::pow(10.0, std::floor(std::log10(raw)));
        const double nice = raw / step < 2 ? step : raw / step < 5 ? 2 * step : 5 * step;
        for (double t = std::ceil(low / nice) * nice; t <= high + nice * 1e-9; t += nice) out.push_back(std::fabs(t) < nice * 1e-9 ? 0 : t);
        return out;
    }
};

Scale fit_scale(std::vector<double> values, bool log, double from, double to) {
    Scale s;
    s.log = log;
    s.from = from;
    s.to = to;
    if (log) values.erase(std::remove_if(values.begin(), values.end(), [](double v) { return !(v > 0); }), values.end());
    if (values.empty()) return s;
    const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
    s.low = *lo;
    s.high = *hi;
    if (log) {
        if (s.high <= s.low) s.low /= 2, s.high *= 2;
        s.low /= 1.15;
        s.high *= 1.15;
    } else {
        const double pad = s.high > s.low ? 0.06 * (s.high - s.low) : std::max(std::fabs(s.high) * 0.1, 1.0);
        s.low = s.low >= 0 && s.low - pad < 0 ? 0 : s.low - pad;
        s.high += pad;
    }
    return s;
}

std::string open_svg(const std::string& title, double height) {
    return "<svg class=\"chart\" viewBox=\"0 0 " + num(kWidth) + " " + num(height) + "\" role=\"img\" aria-label=\"" + escape(title) +
           "\" xmlns=\"http://www.w3.org/2000/svg\">\n<text class=\"title\" x=\"" + num(kWidth / 2) + "\" y=\"20\" text-anchor=\"middle\">" +
           escape(title) + "</text>\n";
}

}  // namespace

std::string escape(const std::string& text) {
    std::string out;
    for (char c : text) {
        if (c == '&') out += "&amp;";
        else if (c == '<') out += "&lt;";
        else if (c == '>') out += "&gt;";
        else if (c == '"') out += "&quot;";
        else out += c;
    }
    return out;
}

std::string svg_plot(const Plot& plot) {
    std::vector<double> xs, ys;
    for (const PlotSeries& s : plot.series)
        for (const auto& [x, y] : s.points) {
            if (!std::isfinite(x) || !std::isfinite(y)) continue;
            xs.push_back(x);
            ys.push_back(y);
        }
    if (plot.diagonal) {
        const std::vector<double> both = [&] { std::vector<double> v = xs; v.insert(v.end(), ys.begin(), ys.end()); return v; }();
        xs = both;
        ys = both;
    }
    const Scale sx = fit_scale(xs, plot.x.log, kLeft, kWidth - kRight), sy = fit_scale(ys, plot.y.log, kHeight - kBottom, kTop);
    std::string out = open_svg(plot.title, kHeight);
    // Axes, grid and ticks.
    out += "<g class=\"axes\">\n";
    for (const double t : sx.ticks()) {
        out += "<line class=\"grid\" x1=\"" + num(sx(t)) + "\" x2=\"" + num(sx(t)) + "\" y1=\"" + num(kTop) + "\" y2=\"" + num(kHeight - kBottom) + "\"/>";
        out += "<text x=\"" + num(sx(t)) + "\" y=\"" + num(kHeight - kBottom + 16) + "\" text-anchor=\"middle\">" + tick_text(t) + "</text>\n";
    }
    for (const double t : sy.ticks()) {
        out += "<line class=\"grid\" x1=\"" + num(kLeft) + "\" x2=\"" + num(kWidth - kRight) + "\" y1=\"" + num(sy(t)) + "\" y2=\"" + num(sy(t)) + "\"/>";
        out += "<text x=\"" + num(kLeft - 6) + "\" y=\"" + num(sy(t) + 4) + "\" text-anchor=\"end\">" + tick_text(t) + "</text>\n";
    }
    out += "<rect class=\"frame\" x=\"" + num(kLeft) + "\" y=\"" + num(kTop) + "\" width=\"" + num(kWidth - kLeft - kRight) + "\" height=\"" +
           num(kHeight - kTop - kBottom) + "\"/>\n";
    out += "<text class=\"label\" x=\"" + num((kLeft + kWidth - kRight) / 2) + "\" y=\"" + num(kHeight - 12) + "\" text-anchor=\"middle\">" +
           escape(plot.x.label) + (plot.x.log ? " (log)" : "") + "</text>\n";
    out += "<text class=\"label\" transform=\"rotate(-90)\" x=\"" + num(-(kTop + kHeight - kBottom) / 2) + "\" y=\"16\" text-anchor=\"middle\">" +
           escape(plot.y.label) + (plot.y.log ? " (log)" : "") + "</text>\n</g>\n";
    if (plot.diagonal && !xs.empty()) {
        const double lo = std::max(sx.low, sy.low), hi = std::min(sx.high, sy.high);
        out += "<line class=\"diagonal\" x1=\"" + num(sx(lo)) + "\" y1=\"" + num(sy(lo)) + "\" x2=\"" + num(sx(hi)) + "\" y2=\"" + num(sy(hi)) + "\"/>\n";
    }
    // The series (their legend is the page's: plot_legend).
    for (const PlotSeries& s : plot.series) {
        out += "<g class=\"series\" fill=\"" + s.color + "\" stroke=\"" + s.color + "\">";
        if (s.line && s.points.size() > 1) {
            out += "<polyline fill=\"none\" points=\"";
            for (const auto& [x, y] : s.points) out += num(sx(x)) + "," + num(sy(y)) + " ";
            out += "\"/>";
        }
        for (const auto& [x, y] : s.points) {
            if (!std::isfinite(x) || !std::isfinite(y)) continue;
            out += "<circle class=\"mark\" cx=\"" + num(sx(x)) + "\" cy=\"" + num(sy(y)) + "\" r=\"3.5\"" + (s.hollow ? " fill=\"none\"" : "") +
                   "><title>" + escape(s.label) + ": " + tick_text(x) + ", " + tick_text(y) + "</title></circle>";
        }
        out += "</g>\n";
    }
    if (plot.highlight) {
        const auto [x, y] = *plot.highlight;
        const bool right_half = sx(x) > kWidth / 2;  // the label on the side with room
        out += "<g class=\"highlight\"><circle cx=\"" + num(sx(x)) + "\" cy=\"" + num(sy(y)) + "\" r=\"9\"/><text x=\"" +
               num(sx(x) + (right_half ? -12 : 12)) + "\" y=\"" + num(sy(y) - 10) + "\" text-anchor=\"" + (right_half ? "end" : "start") + "\">" +
               escape(plot.highlight_label) + "</text></g>\n";
    }
    return out + "</svg>\n";
}

std::string plot_legend(const Plot& plot) {
    std::string out;
    for (const PlotSeries& s : plot.series)
        if (!s.label.empty())
            out += "<span class=\"key\"><span class=\"swatch\" style=\"background:" + s.color + "\"></span>" + escape(s.label) + "</span> ";
    return out.empty() ? out : "<p class=\"legend\">" + out + "</p>";
}

std::string svg_bars(const std::string& title, const std::string& unit, const std::vector<Bar>& bars, std::optional<double> limit,
                     const std::string& limit_label) {
    constexpr double kRow = 22, kLabel = 250;
    const double height = kTop + kRow * static_cast<double>(bars.size()) + 44;
    double high = limit.value_or(0);
    for (const Bar& b : bars) high = std::max(high, b.value);
    if (!(high > 0)) high = 1;
    const double left = kLabel, right = kWidth - 90;
    const auto x = [&](double v) { return left + v / high * (right - left); };
    std::string out = open_svg(title, height);
    double y = kTop;
    for (const Bar& b : bars) {
        out += "<text x=\"" + num(left - 6) + "\" y=\"" + num(y + 15) + "\" text-anchor=\"end\">" + escape(b.label) + "</text>";
        out += "<rect class=\"mark\" x=\"" + num(left) + "\" y=\"" + num(y + 3) + "\" width=\"" + num(std::max(0.0, x(b.value) - left)) +
               "\" height=\"" + num(kRow - 6) + "\" fill=\"" + b.color + "\"><title>" + escape(b.label) + ": " + tick_text(b.value) + " " + escape(unit) +
               "</title></rect>";
        out += "<text x=\"" + num(x(b.value) + 4) + "\" y=\"" + num(y + 15) + "\">" + tick_text(b.value) + "</text>\n";
        y += kRow;
    }
    out += "<line class=\"frame\" x1=\"" + num(left) + "\" x2=\"" + num(left) + "\" y1=\"" + num(kTop) + "\" y2=\"" + num(y) + "\"/>\n";
    out += "<text class=\"label\" x=\"" + num((left + right) / 2) + "\" y=\"" + num(y + 30) + "\" text-anchor=\"middle\">" + escape(unit) + "</text>\n";
    if (limit) {
        out += "<line class=\"limit\" x1=\"" + num(x(*limit)) + "\" x2=\"" + num(x(*limit)) + "\" y1=\"" + num(kTop - 4) + "\" y2=\"" + num(y + 4) +
               "\"/><text class=\"limit-label\" x=\"" + num(x(*limit)) + "\" y=\"" + num(y + 16) + "\" text-anchor=\"middle\">" + escape(limit_label) +
               "</text>\n";
    }
    return out + "</svg>\n";
}

}  // namespace ridgeline::html
