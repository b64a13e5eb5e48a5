#include "app_settings.h"

namespace {
constexpr int kMaxRecent = 8;
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

int AppSettings::kvCacheMiB() const { return settings_->value("app/kvCacheMiB", 0).toInt(); }

void AppSettings::setKvCacheMiB(int mib) {
    settings_->setValue("app/kvCacheMiB", qMax(0, mib));
    emit changed();
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

void AppSettings::rememberModel(const QString& path, const QString& tokenizer) {
    settings_->setValue("app/lastModel", path);
    QStringList recent = recentCheckpoints();
    recent.removeAll(path);
    recent.prepend(path);
    settings_->setValue("app/recentCheckpoints", recent.mid(0, kMaxRecent));

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
