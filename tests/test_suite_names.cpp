// ctest runs each test case by name (doctest_discover_tests), and CMake splits names at ';': a
// name with one runs nothing and passes. Every name here must survive that.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "test_support.hpp"

TEST_CASE("test case names hold no semicolon, so that ctest runs each of them") {
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
            CHECK((*it)[1].str().find(';') == std::string::npos);
        }
    }
    CHECK(cases > 100);
}
