#include "models/process_memory.h"

#include <QFile>
#include <QList>

#include <unistd.h>

qint64 process_resident_bytes() {
    QFile statm(QStringLiteral("/proc/self/statm"));
    if (!statm.open(QIODevice::ReadOnly)) return -1;
    // "size resident shared ..." in pages
    const QList<QByteArray> fields = statm.readAll().split(' ');
    bool ok = false;
    const qint64 pages = fields.size() > 1 ? fields[1].toLongLong(&ok) : 0;
    return ok ? pages * qint64(sysconf(_SC_PAGESIZE)) : -1;
}
