#include "server_metrics.h"

#include <QList>
#include <algorithm>

namespace llamadesk::remote {

std::optional<double> kv_cache_usage(const QByteArray& prometheus_text) {
    std::optional<double> usage;
    for (const char* name : {"vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"}) {
        for (const QByteArray& line : prometheus_text.split('\n')) {
            // A sample line: NAME{labels} VALUE [timestamp]; a longer name sharing the prefix is another metric.
            if (!line.startsWith(name)) continue;
            const QByteArray rest = line.mid(qsizetype(qstrlen(name)));
            if (!rest.startsWith('{') && !rest.startsWith(' ')) continue;
            const qsizetype value_at = rest.startsWith('{') ? rest.indexOf('}') + 1 : 0;
            const QList<QByteArray> fields = rest.mid(value_at).simplified().split(' ');
            bool ok = false;
            const double value = fields.value(0).toDouble(&ok);
            if (ok && value >= 0 && value <= 1) usage = std::max(usage.value_or(0.0), value);
        }
        if (usage) return usage;
    }
    return usage;
}

}  // namespace llamadesk::remote
