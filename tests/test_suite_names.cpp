// ctest runs each test case by name (doctest_discover_tests), and CMake splits names at ';' and
// at a ']' that closes no '[': such a name runs nothing and passes. Every name here must survive that.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "test_support.hpp"

TEST_CASE("test case names hold no semicolon and no unopened bracket, so that ctest runs each of them") {
    const std::regex name(R"re(TEST_CASE\("([^"]*)")re");
    int cases = 0;
    for (const auto& entry : std::filesystem::directory_iterator(ridgeline::test::source_dir() / "tests")) {
        if (entry.path().extension() != ".cpp") continue;
        std::ifstream in(entry.path());
        std::stringstream text;
        text << in.rdbuf();
        const std::string source = text.str();
        for (std::sregex_iterator it(source.begin(), source.end(), name), end; it != end; ++it) {
            ++cases;
            CAPTURE(entry.path().filename().string());
            const std::string text = (*it)[1].str();
            CHECK(text.find(';') == std::string::npos);
            int open = 0, fewest_open = 0;
            for (const char c : text) {
                open += c == '[' ? 1 : c == ']' ? -1 : 0;
                fewest_open = std::min(fewest_open, open);
            }
            CHECK(fewest_open == 0);
        }
    }
    CHECK(cases > 100);
}
