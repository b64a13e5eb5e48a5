#include "hub_cache.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSaveFile>

namespace llamadesk::library {

namespace {

QString repo_folder(const QString& cache, const QString& repo) {
    return cache + "/models--" + QString(repo).replace('/', "--");
}

}  // namespace

HubCacheEntry hub_cache_entry(const QString& cache, const QString& repo, const QString& sha256,
                              const QString& commit, const QString& path) {
    HubCacheEntry e;
    e.repo_dir = repo_folder(cache, repo);
    e.blob = e.repo_dir + "/blobs/" + sha256;
    e.part = e.blob + ".part";
    e.part_info = e.part + ".json";
    e.snapshot = e.repo_dir + "/snapshots/" + commit + "/" + path;
    return e;
}

QString link_snapshot(const HubCacheEntry& entry, const QString& commit) {
    const QFileInfo snapshot(entry.snapshot);
    if (!QDir().mkpath(snapshot.absolutePath())) return "could not create the folder " + snapshot.absolutePath();
    QFile::remove(entry.snapshot);
    // Relative, as huggingface_hub links them, so the cache can move as a whole.
    const QString target = snapshot.absoluteDir().relativeFilePath(entry.blob);
    if (!QFile::link(target, entry.snapshot)) return "could not link " + entry.snapshot + " to " + entry.blob;
    if (!QDir().mkpath(entry.repo_dir + "/refs")) return "could not create the folder " + entry.repo_dir + "/refs";
    QSaveFile ref(entry.repo_dir + "/refs/main");
    if (!ref.open(QIODevice::WriteOnly) || ref.write(commit.toUtf8()) < 0 || !ref.commit())
        return "could not write " + ref.fileName() + ": " + ref.errorString();
    return {};
}

QString cached_file(const QString& cache, const QString& repo, const QString& path) {
    const QString dir = repo_folder(cache, repo);
    QFile ref(dir + "/refs/main");
    if (!ref.open(QIODevice::ReadOnly)) return {};
    const QString commit = QString::fromUtf8(ref.readAll()).trimmed();
    const QString file = dir + "/snapshots/" + commit + "/" + path;
    return QFileInfo(file).exists() ? file : QString();  // exists() follows the link to the blob
}

}  // namespace llamadesk::library
