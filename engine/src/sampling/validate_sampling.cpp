// The valid ranges of SamplingParams, in one place: the engine, the CLI and the window all ask here.
#include <charconv>
#include <cmath>
#include <string>

#include "sampling/sampling_params.h"

namespace llamadesk {

namespace {

// The shortest text that reads back as the same float: "7", "0.95", "-1", "nan".
std::string number(float v) {
    char buf[32];
    return std::string(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
}

Status out_of_range(const std::string& rule, const std::string& given) {
    return Status::error(ErrorCode::InvalidArgument, rule + ", not " + given);
}

}  // namespace

// Each test is written so that NaN fails it.
Status validate_sampling(const SamplingParams& p) {
    if (!(std::isfinite(p.temperature) && p.temperature >= 0.0f))
        return out_of_range("temperature must be 0 or more (0 is greedy)", number(p.temperature));
    if (p.top_k < 0) return out_of_range("top-k must be 0 or more (0 turns it off)", std::to_string(p.top_k));
    if (!(p.top_p > 0.0f && p.top_p <= 1.0f))
        return out_of_range("top-p must be in (0, 1] (1 turns it off)", number(p.top_p));
    if (!(p.min_p >= 0.0f && p.min_p <= 1.0f))
        return out_of_range("min-p must be in [0, 1] (0 turns it off)", number(p.min_p));
    if (!(std::isfinite(p.repeat_penalty) && p.repeat_penalty > 0.0f))
        return out_of_range("repeat penalty must be more than 0 (1 turns it off)", number(p.repeat_penalty));
    if (p.repeat_last_n < 0)
        return out_of_range("repeat-last-n must be 0 or more", std::to_string(p.repeat_last_n));
    return Status::success();
}

}  // namespace llamadesk
