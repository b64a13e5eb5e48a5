#include "test_support.h"

#include <QFileInfo>

namespace llamadesk::test {

QString shared_dir() {
    const QByteArray env = qgetenv("LLAMADESK_SHARED_DIR");
    return env.isEmpty() ? QStringLiteral(LLAMADESK_DEFAULT_SHARED_DIR) : QString::fromLocal8Bit(env);
}

QString shared_path(const QString& relative) {
    const QString path = shared_dir() + QLatin1Char('/') + relative;
    return QFileInfo::exists(path) ? path : QString();
}

}  // namespace llamadesk::test
