#include "engine/stop_strings.h"

#include <algorithm>

namespace llamadesk {

StopStringFilter::StopStringFilter(std::vector<std::string> stop_strings) : stops_(std::move(stop_strings)) {
    std::erase_if(stops_, [](const std::string& s) { return s.empty(); });
}

std::string StopStringFilter::push(const std::string& piece) {
    if (stopped_) return {};
    held_ += piece;

    size_t first_stop = std::string::npos;
    for (const std::string& stop : stops_) first_stop = std::min(first_stop, held_.find(stop));
    if (first_stop != std::string::npos) {
        stopped_ = true;
        std::string out = held_.substr(0, first_stop);
        held_.clear();
        return out;
    }

    // Hold back the longest tail of held_ that begins some stop string.
    size_t hold = 0;
    for (const std::string& stop : stops_) {
        for (size_t n = std::min(stop.size() - 1, held_.size()); n > hold; --n) {
            if (held_.compare(held_.size() - n, n, stop, 0, n) == 0) {
                hold = n;
                break;
            }
        }
    }
    std::string out = held_.substr(0, held_.size() - hold);
    held_.erase(0, held_.size() - hold);
    return out;
}

std::string StopStringFilter::flush() {
    std::string out;
    out.swap(held_);
    return out;
}

}  // namespace llamadesk
