#include "model_scan.h"

#include <QDateTime>
#include <QDir>
#include <QDirIterator>
#include <QFileInfo>
#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMutex>
#include <QSet>

namespace llamadesk::library {

namespace {

struct Candidate {
    QString path;
    QString name;
    ModelSource source;
};

// Files and links (broken ones included: QDir::System) under dir whose names match the filter.
QStringList files_under(const QString& dir, const QStringList& name_filters) {
    QStringList found;
    QDirIterator it(dir, name_filters, QDir::Files | QDir::System | QDir::Hidden | QDir::NoDotAndDotDot,
                    QDirIterator::Subdirectories);
    while (it.hasNext()) found.append(it.next());
    return found;
}

// models--org--name/snapshots/<revision>/...: the GGUF files of each revision, and each revision
// that is a Hugging Face folder (config.json and safetensors) as one checkpoint.
void hugging_face(const QString& hub, QList<Candidate>* out) {
    const QDir root(hub);
    for (const QString& repo_dir : root.entryList({"models--*"}, QDir::Dirs | QDir::NoDotAndDotDot)) {
        const QString repo = repo_dir.mid(8).replace("--", "/");
        const QDir snapshots(root.filePath(repo_dir + "/snapshots"));
        for (const QString& revision : snapshots.entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
            const QString dir = snapshots.filePath(revision);
            for (const QString& file : files_under(dir, {"*.gguf"}))
                out->append({file, repo + " · " + QDir(dir).relativeFilePath(file), ModelSource::HuggingFace});
            const QDir d(dir);
            if (d.exists("config.json") && !d.entryList({"*.safetensors"}, QDir::Files).isEmpty())
                out->append({dir, repo, ModelSource::HuggingFace});
        }
    }
}

// Ollama keeps manifests/<registry>/<namespace>/<model>/<tag>, JSON naming its layers by digest;
// the weights are the layer of media type application/vnd.ollama.image.model, a GGUF file at
// blobs/sha256-<hex>.
void ollama(const QString& store, QList<Candidate>* out) {
    const QDir manifests(store + "/manifests");
    for (const QString& file : files_under(manifests.path(), {})) {
        QFile f(file);
        if (!f.open(QIODevice::ReadOnly) || f.size() > (1 << 20)) continue;
        const QJsonObject manifest = QJsonDocument::fromJson(f.readAll()).object();
        for (const QJsonValue& layer : manifest.value("layers").toArray()) {
            const QJsonObject l = layer.toObject();
            if (l.value("mediaType").toString() != "application/vnd.ollama.image.model") continue;
            const QString digest = l.value("digest").toString();  // "sha256:<hex>"
            if (!digest.startsWith("sha256:")) continue;
            const QStringList parts = manifests.relativeFilePath(file).split('/');
            if (parts.size() != 4) continue;
            QString name = parts[2] + ":" + parts[3];
            if (parts[1] != "library") name = parts[1] + "/" + name;
            if (parts[0] != "registry.ollama.ai") name = parts[0] + "/" + name;
            out->append({store + "/blobs/sha256-" + digest.mid(7), name, ModelSource::Ollama});
        }
    }
}

void gguf_files(const QString& dir, ModelSource source, QList<Candidate>* out) {
    for (const QString& file : files_under(dir, {"*.gguf"}))
        out->append({file, QDir(dir).relativeFilePath(file), source});
}

struct Inspected {
    qint64 size = 0;
    QDateTime modified;
    Status status;
    CheckpointSummary summary;
};

// Headers already read, by canonical path: a rescan reads only what changed.
QMutex inspected_mutex;
QHash<QString, Inspected> inspected;

LocalModel describe(const Candidate& c) {
    LocalModel m;
    m.path = c.path;
    m.name = c.name;
    m.source = c.source;
    const QFileInfo info(c.path);
    if (info.isSymLink() && !info.exists()) {
        m.reason = "the link points to " + info.symLinkTarget() + ", which is missing";
        return m;
    }
    if (!info.exists()) {
        m.reason = "no longer there";
        return m;
    }
    m.size = info.isDir() ? 0 : info.size();
    if (info.isDir())
        for (const QFileInfo& f : QDir(c.path).entryInfoList({"*.safetensors"}, QDir::Files)) m.size += f.size();
    const QString key = info.canonicalFilePath();
    {
        QMutexLocker lock(&inspected_mutex);
        const auto it = inspected.constFind(key);
        if (it != inspected.constEnd() && it->size == info.size() && it->modified == info.lastModified()) {
            m.openable = it->status.ok();
            m.reason = QString::fromStdString(it->status.message);
            m.summary = it->summary;
            return m;
        }
    }
    Inspected result;
    result.size = info.size();
    result.modified = info.lastModified();
    result.status = inspect_checkpoint(c.path.toStdString(), &result.summary);
    m.openable = result.status.ok();
    m.reason = QString::fromStdString(result.status.message);
    m.summary = result.summary;
    QMutexLocker lock(&inspected_mutex);
    inspected.insert(key, result);
    return m;
}

}  // namespace

QList<LocalModel> scan_models(const QList<ModelFolder>& folders, const QStringList& recent) {
    QList<Candidate> candidates;
    for (const ModelFolder& folder : folders) {
        if (!QFileInfo(folder.path).isDir()) continue;
        switch (folder.source) {
        case ModelSource::HuggingFace: hugging_face(folder.path, &candidates); break;
        case ModelSource::Ollama: ollama(folder.path, &candidates); break;
        default: gguf_files(folder.path, folder.source, &candidates); break;
        }
    }
    // One entry per file: a model two apps share (a link, a second revision of the same blob) is
    // listed under the first app that has it, and a recent one under its app.
    QSet<QString> seen;
    QList<LocalModel> models;
    auto add = [&](const Candidate& c) -> LocalModel* {
        const QString canonical = QFileInfo(c.path).canonicalFilePath();
        if (!canonical.isEmpty() && seen.contains(canonical)) return nullptr;
        if (!canonical.isEmpty()) seen.insert(canonical);
        models.append(describe(c));
        return &models.last();
    };
    QSet<QString> recent_canonical;
    for (const QString& path : recent) recent_canonical.insert(QFileInfo(path).canonicalFilePath());
    for (const Candidate& c : candidates) {
        if (LocalModel* m = add(c)) m->opened_before = recent_canonical.contains(QFileInfo(c.path).canonicalFilePath());
    }
    for (const QString& path : recent) {
        if (LocalModel* m = add({path, QFileInfo(path).fileName(), ModelSource::Recent})) m->opened_before = true;
    }
    std::stable_sort(models.begin(), models.end(), [](const LocalModel& a, const LocalModel& b) {
        if (a.source != b.source) return a.source < b.source;
        return a.source != ModelSource::Recent && a.name.compare(b.name, Qt::CaseInsensitive) < 0;
    });
    return models;
}

}  // namespace llamadesk::library
