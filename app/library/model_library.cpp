#include "model_library.h"

#include <QDir>
#include <QFileInfo>
#include <QtConcurrent/QtConcurrentRun>

#include "settings/api_key_store.h"
#include "settings/app_settings.h"

using namespace llamadesk;
using namespace llamadesk::library;

namespace {

QString params_text(qint64 n) {
    if (n <= 0) return {};
    if (n >= 1000000000) return QString::number(double(n) / 1e9, 'f', 1) + "B parameters";
    if (n >= 1000000) return QString::number(double(n) / 1e6, 'f', 0) + "M parameters";
    return QString::number(double(n) / 1e3, 'f', 0) + "K parameters";
}

QVariantMap fit_of(const ModelShape& shape) {
    const FitEstimate fit = estimate_fit(shape);
    return {{"fits", fit.fits},
            {"fitText", fit.fits ? QObject::tr("Fits this computer: context %1").arg(fit.context_length)
                                 : QObject::tr("Too large for this computer")},
            {"fitReason", QString::fromStdString(fit.reason)}};
}

}  // namespace

ModelLibrary::ModelLibrary(const QString& data_dir, AppSettings* settings, ApiKeyStore* keys, QObject* parent)
    : QObject(parent),
      data_dir_(data_dir),
      settings_(settings),
      keys_(keys),
      hub_(&network_),
      downloads_(&network_, hugging_face_cache(), data_dir.isEmpty() ? QString() : data_dir + "/downloads.json"),
      catalogue_(recommended_files()) {
    // $HF_TOKEN (or huggingface-cli's token file) first, as huggingface_hub reads it; else the one
    // pasted here.
    if (hub_.token().isEmpty() && keys_) hub_.setToken(keys_->keyFor(hub_.endpoint()));
    downloads_.setToken(hub_.token());
    connect(&scan_, &QFutureWatcher<QList<LocalModel>>::finished, this, [this] {
        scanning_ = false;
        local_.clear();
        for (const LocalModel& m : scan_.result()) {
            QVariantMap row{{"name", m.name},
                            {"source", source_name(m.source) + (m.opened_before && m.source != ModelSource::Recent
                                                                    ? tr(", opened before") : QString())},
                            {"path", m.path},
                            {"size", m.size > 0 ? size_text(m.size) : QString()},
                            {"openable", m.openable},
                            {"reason", m.reason},
                            {"weightTypes", QString::fromStdString(m.summary.weight_types)},
                            {"params", params_text(m.summary.n_params)}};
            if (m.openable) row.insert(fit_of(m.summary.shape));
            local_.append(row);
        }
        emit localChanged();
        if (std::exchange(rescan_again_, false)) rescan();
    });
    connect(&downloads_, &DownloadQueue::downloaded, this, [this](const QString& file) {
        if (settings_) settings_->addRecent(file);
        rescan();
        refreshRecommended();
        refreshFiles();
    });
    // Downloads that were under way when the app last closed go on (the person started them).
    downloads_.restore();
}

ModelLibrary::~ModelLibrary() { scan_.waitForFinished(); }

QString ModelLibrary::ownFolder() const { return own_models_folder(data_dir_); }

void ModelLibrary::rescan() {
    if (scanning_) {
        rescan_again_ = true;
        return;
    }
    scanning_ = true;
    const QList<ModelFolder> folders = model_folders(ownFolder());
    const QStringList recent = settings_ ? settings_->recentCheckpoints() : QStringList();
    scan_.setFuture(QtConcurrent::run([folders, recent] { return scan_models(folders, recent); }));
    emit localChanged();
}

void ModelLibrary::setHubMessage(const QString& message, bool offline) {
    hub_message_ = message;
    offline_ = offline;
    emit hubMessageChanged();
}

void ModelLibrary::requestStarted() {
    if (pending_++ == 0) emit busyChanged();
}

void ModelLibrary::requestEnded() {
    if (--pending_ == 0) emit busyChanged();
}

void ModelLibrary::refreshRecommended() {
    recommended_.clear();
    for (const CatalogueFile& f : catalogue_) {
        QVariantMap row{{"model", f.model},
                        {"family", f.family},
                        {"licence", f.licence},
                        {"repo", f.repo},
                        {"file", f.file},
                        {"quant", f.quant},
                        {"size", (f.size_exact ? QString() : QString("about ")) + size_text(f.shape.weight_bytes)},
                        {"params", params_text(f.parameters)},
                        {"downloaded", cached_file(hugging_face_cache(), f.repo, f.file)},
                        {"unavailable", unavailable_.value(f.repo + "/" + f.file)}};
        row.insert(fit_of(f.shape));
        recommended_.append(row);
    }
    emit recommendedChanged();
}

void ModelLibrary::openCatalogue() {
    refreshRecommended();
    // The Hub's own sizes replace the catalogue's, and a file gone from the Hub is said so.
    QStringList repos;
    for (const CatalogueFile& f : catalogue_)
        if (!repos.contains(f.repo)) repos.append(f.repo);
    for (const QString& repo : repos) {
        requestStarted();
        hub_.files(repo, [this, repo](const QList<HubFile>& files, const QString& error, bool offline) {
            requestEnded();
            if (offline) {
                setHubMessage(error + tr(". The sizes shown are the catalogue's."), true);
                return;
            }
            for (CatalogueFile& f : catalogue_) {
                if (f.repo != repo) continue;
                // A repository or file gone from the Hub is said on its row.
                unavailable_.insert(f.repo + "/" + f.file, error.isEmpty() ? tr("no longer on the Hub") : error);
                for (const HubFile& h : files)
                    if (h.path == f.file) {
                        f.shape.weight_bytes = h.size;
                        f.size_exact = true;
                        unavailable_.remove(f.repo + "/" + f.file);
                    }
            }
            refreshRecommended();
        });
    }
}

void ModelLibrary::search(const QString& query) {
    requestStarted();
    hub_.search(query.trimmed(), 40, [this](const QList<HubRepo>& repos, const QString& error, bool offline) {
        requestEnded();
        setHubMessage(error, offline);
        results_.clear();
        for (const HubRepo& r : repos)
            results_.append(QVariantMap{{"id", r.id}, {"downloads", r.downloads}, {"likes", r.likes}, {"gated", r.gated}});
        emit resultsChanged();
    });
}

void ModelLibrary::refreshFiles() {
    files_.clear();
    for (const HubFile& f : repo_files_)
        files_.append(QVariantMap{{"path", f.path},
                                  {"size", f.size > 0 ? size_text(f.size) : QString()},
                                  {"quant", f.quant},
                                  {"readable", f.readable},
                                  {"reason", f.reason},
                                  {"downloaded", cached_file(hugging_face_cache(), repo_, f.path)}});
    emit filesChanged();
}

void ModelLibrary::showRepo(const QString& repo) {
    repo_ = repo;
    repo_files_.clear();
    refreshFiles();
    requestStarted();
    hub_.files(repo, [this, repo](const QList<HubFile>& files, const QString& error, bool offline) {
        requestEnded();
        if (repo != repo_) return;  // another was chosen meanwhile
        setHubMessage(error, offline);
        repo_files_ = files;
        refreshFiles();
    });
}

void ModelLibrary::download(const QString& repo, const QString& file) {
    setHubMessage({}, false);
    downloads_.add(repo, file);
}

QString ModelLibrary::setToken(const QString& token) {
    const QString trimmed = token.trimmed();
    const QString error = keys_ ? keys_->setKey(hub_.endpoint(), trimmed) : QString();
    if (!error.isEmpty()) return error;
    hub_.setToken(trimmed);
    downloads_.setToken(trimmed);
    emit tokenChanged();
    return {};
}
