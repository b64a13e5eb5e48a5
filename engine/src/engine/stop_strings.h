// Finds stop strings in streamed answer text. Text that could be the start of a stop string is
// held back until it is known not to be one, so the caller never shows part of a stop string.
#pragma once

#include <string>
#include <vector>

namespace llamadesk {

class StopStringFilter {
public:
    explicit StopStringFilter(std::vector<std::string> stop_strings);

    // Takes the next piece of text; returns what may be shown now.
    std::string push(const std::string& piece);
    // True once a stop string has appeared; nothing after it is ever returned.
    bool stopped() const { return stopped_; }
    // At the end of generation: the held-back text (empty when stopped).
    std::string flush();

private:
    std::vector<std::string> stops_;
    std::string held_;
    bool stopped_ = false;
};

}  // namespace llamadesk
