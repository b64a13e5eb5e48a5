#include "settings/app_settings.h"

#include <QDir>
#include <QFileInfo>

namespace {
constexpr int kMaxRecent = 8;
constexpr int kDefaultServerTimeoutSeconds = 60;
}

AppSettings::AppSettings(const QString& settingsFile, QObject* parent)
    : QObject(parent),
      settings_(settingsFile.isEmpty() ? std::make_unique<QSettings>()
                                       : std::make_unique<QSettings>(settingsFile, QSettings::IniFormat)) {}

int AppSettings::threads() const { return settings_->value("app/threads", 0).toInt(); }

void AppSettings::setThreads(int threads) {
    settings_->setValue("app/threads", qMax(0, threads));
    emit changed();
}

int AppSettings::serverTimeoutSeconds() const {
    return qMax(1, settings_->value("remote/timeoutSeconds", kDefaultServerTimeoutSeconds).toInt());
}

void AppSettings::setServerTimeoutSeconds(int seconds) {
    settings_->setValue("remote/timeoutSeconds", qMax(1, seconds));
    emit changed();
}

bool AppSettings::dropOldestWhenFull() const { return settings_->value("chat/dropOldestWhenFull", false).toBool(); }

void AppSettings::setDropOldestWhenFull(bool on) {
    settings_->setValue("chat/dropOldestWhenFull", on);
    emit changed();
}

int AppSettings::kvCacheMiB() const { return settings_->value("app/kvCacheMiB", 0).toInt(); }

void AppSettings::setKvCacheMiB(int mib) {
    settings_->setValue("app/kvCacheMiB", qMax(0, mib));
    emit changed();
}

int AppSettings::contextLimit() const { return settings_->value("app/contextLimit", 0).toInt(); }

void AppSettings::setContextLimit(int tokens) {
    settings_->setValue("app/contextLimit", qMax(0, tokens));
    emit changed();
}

int AppSettings::kvSnapshotMiB() const { return settings_->value("app/kvSnapshotMiB", 2048).toInt(); }

void AppSettings::setKvSnapshotMiB(int mib) {
    settings_->setValue("app/kvSnapshotMiB", qMax(0, mib));
    emit changed();
}

llamadesk::KvCacheType AppSettings::kvCache() const {
    llamadesk::KvCacheType type = llamadesk::KvCacheType::F16;
    llamadesk::parse_kv_cache_type(settings_->value("app/kvCacheType").toString().toStdString(), &type);
    return type;
}

QString AppSettings::kvCacheType() const { return QString::fromLatin1(llamadesk::kv_cache_type_name(kvCache())); }

void AppSettings::setKvCacheType(const QString& name) {
    llamadesk::KvCacheType type;
    if (!llamadesk::parse_kv_cache_type(name.toStdString(), &type))
        return;
    settings_->setValue("app/kvCacheType", name);
    emit changed();
}

QStringList AppSettings::kvCacheTypes() {
    QStringList names;
    for (llamadesk::KvCacheType type : llamadesk::kv_cache_types())
        names << QString::fromLatin1(llamadesk::kv_cache_type_name(type));
    return names;
}

QString AppSettings::lastModel() const { return settings_->value("app/lastModel").toString(); }

QString AppSettings::lastTokenizer() const { return tokenizerFor(lastModel()); }

QStringList AppSettings::recentCheckpoints() const {
    return settings_->value("app/recentCheckpoints").toStringList();
}

QString AppSettings::tokenizerFor(const QString& modelPath) const {
    const QStringList models = settings_->value("app/tokenizerModels").toStringList();
    const QStringList tokenizers = settings_->value("app/tokenizerFiles").toStringList();
    const qsizetype i = models.indexOf(modelPath);
    return i >= 0 && i < tokenizers.size() ? tokenizers[i] : QString();
}

void AppSettings::prependRecent(const QString& path) {
    QStringList recent = recentCheckpoints();
    recent.removeAll(path);
    recent.prepend(path);
    settings_->setValue("app/recentCheckpoints", recent.mid(0, kMaxRecent));
}

void AppSettings::addRecent(const QString& path) {
    prependRecent(path);
    emit changed();
}

void AppSettings::rememberModel(const QString& path, const QString& tokenizer) {
    settings_->setValue("app/lastModel", path);
    prependRecent(path);

    // Two parallel lists: paths are not valid QSettings keys.
    QStringList models = settings_->value("app/tokenizerModels").toStringList();
    QStringList tokenizers = settings_->value("app/tokenizerFiles").toStringList();
    const qsizetype i = models.indexOf(path);
    if (i >= 0 && i < tokenizers.size()) {
        models.removeAt(i);
        tokenizers.removeAt(i);
    }
    if (!tokenizer.isEmpty()) {
        models.prepend(path);
        tokenizers.prepend(tokenizer);
    }
    settings_->setValue("app/tokenizerModels", models.mid(0, kMaxRecent));
    settings_->setValue("app/tokenizerFiles", tokenizers.mid(0, kMaxRecent));
    emit changed();
}

QUrl AppSettings::lastFolder() const {
    const QString folder = settings_->value("app/lastFolder").toString();
    return QUrl::fromLocalFile(!folder.isEmpty() && QFileInfo(folder).isDir() ? folder : QDir::homePath());
}

void AppSettings::rememberFolderOf(const QString& pathOrUrl) {
    const QUrl url(pathOrUrl);
    const QString path = QDir::cleanPath(url.isLocalFile() ? url.toLocalFile() : pathOrUrl);
    if (path.isEmpty())
        return;
    // A folder picked as a checkpoint counts as a file: the next dialog shows it among its siblings.
    settings_->setValue("app/lastFolder", QFileInfo(path).absolutePath());
    emit changed();
}

QRect AppSettings::windowGeometry() const { return settings_->value("window/geometry").toRect(); }

void AppSettings::setWindowGeometry(const QRect& geometry) {
    settings_->setValue("window/geometry", geometry);
    emit changed();
}
