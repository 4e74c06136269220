#include "cli/interrupt.hpp"

#include <mutex>

namespace ridgeline::cli {

namespace {

std::mutex check_mutex;
std::function<bool()>& interrupt_check() {
    static std::function<bool()> check;
    return check;
}

}  // namespace

void set_interrupt_check(std::function<bool()> check) {
    const std::lock_guard<std::mutex> lock(check_mutex);
    interrupt_check() = std::move(check);
}

void stop_if_interrupted() {
    std::function<bool()> check;
    {
        const std::lock_guard<std::mutex> lock(check_mutex);
        check = interrupt_check();
    }
    if (check && check()) throw Interrupted();
}

}  // namespace ridgeline::cli
