#include "sse_decoder.h"

namespace llamadesk::remote {

std::vector<QByteArray> SseDecoder::feed(const QByteArray& bytes) {
    std::vector<QByteArray> payloads;
    if (overflowed_) return payloads;
    line_ += bytes;
    qsizetype start = 0;
    for (qsizetype end; (end = line_.indexOf('\n', start)) >= 0; start = end + 1) {
        QByteArray line = line_.mid(start, end - start);
        if (line.endsWith('\r')) line.chop(1);
        if (!line.startsWith("data:")) continue;
        line.remove(0, 5);
        if (line.startsWith(' ')) line.remove(0, 1);
        payloads.push_back(line);
    }
    line_.remove(0, start);
    if (line_.size() > kMaxLineBytes) {
        overflowed_ = true;
        line_.clear();
    }
    return payloads;
}

}  // namespace llamadesk::remote
