// Server-sent events, as OpenAI-compatible servers stream them: bytes in, the payload of each
// "data:" field out. Comments (":"), "event:", "id:" and "retry:" lines are not payloads.
#pragma once

#include <QByteArray>
#include <vector>

namespace llamadesk::remote {

class SseDecoder {
public:
    // A line longer than this is refused (a hostile or broken server must not grow memory forever).
    static constexpr qsizetype kMaxLineBytes = 4 * 1024 * 1024;

    // Appends bytes and returns every data payload completed by them. Once overflowed() is true
    // nothing more is returned.
    std::vector<QByteArray> feed(const QByteArray& bytes);
    bool overflowed() const { return overflowed_; }

private:
    QByteArray line_;  // the incomplete last line
    bool overflowed_ = false;
};

}  // namespace llamadesk::remote
