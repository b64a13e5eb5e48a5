#include "download_queue.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QFile>
#include <QSaveFile>

#include "hub_api.h"

namespace llamadesk::library {

DownloadQueue::DownloadQueue(QNetworkAccessManager* network, const QString& cache, const QString& state_file,
                             QObject* parent)
    : QAbstractListModel(parent), network_(network), cache_(cache), state_file_(state_file), endpoint_(hub_endpoint()) {}

int DownloadQueue::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(downloads_.size()); }

int DownloadQueue::activeCount() const {
    return int(std::count_if(downloads_.begin(), downloads_.end(), [](FileDownload* d) { return d->active(); }));
}

QHash<int, QByteArray> DownloadQueue::roleNames() const {
    return {{RepoRole, "repo"},         {PathRole, "path"},         {StateRole, "state"},
            {MessageRole, "message"},   {ReceivedRole, "received"}, {TotalRole, "total"},
            {ProgressRole, "progress"}, {SpeedRole, "speed"},       {TimeLeftRole, "timeLeft"},
            {FileRole, "file"},         {ProblemRole, "problem"}};
}

QVariant DownloadQueue::data(const QModelIndex& index, int role) const {
    const FileDownload* d = at(index.row());
    if (!d) return {};
    switch (role) {
    case RepoRole: return d->repo();
    case PathRole: return d->path();
    case StateRole: return state_name(d->state());
    case MessageRole: return d->message();
    case ReceivedRole: return double(d->received());
    case TotalRole: return double(d->total());
    case ProgressRole: return d->total() > 0 ? double(d->received()) / double(d->total()) : 0.0;
    case SpeedRole: return d->state() == FileDownload::State::Downloading ? speed_text(d->bytesPerSecond()) : QString();
    case TimeLeftRole:
        return d->state() == FileDownload::State::Downloading ? time_left_text(d->secondsLeft()) : QString();
    case FileRole: return d->file();
    case ProblemRole: return d->problem();
    default: return {};
    }
}

void DownloadQueue::setEndpoint(const QUrl& endpoint) {
    endpoint_ = endpoint;
    for (FileDownload* d : downloads_) d->setEndpoint(endpoint);
}

void DownloadQueue::setToken(const QString& token) {
    token_ = token;
    token_set_ = true;
    for (FileDownload* d : downloads_) d->setToken(token);
}

FileDownload* DownloadQueue::make(const QString& repo, const QString& path) {
    auto* d = new FileDownload(network_, cache_, repo, path, this);
    d->setEndpoint(endpoint_);
    if (token_set_) d->setToken(token_);
    FileDownload::State last = d->state();
    connect(d, &FileDownload::changed, this, [this, d, last]() mutable {
        const int row = int(downloads_.indexOf(d));
        if (row < 0) return;
        emit dataChanged(index(row), index(row));
        if (d->state() != last) {  // progress alone is not worth a write
            last = d->state();
            save();
            emit countChanged();
            if (last == FileDownload::State::Done) emit downloaded(d->file());
        }
    });
    beginInsertRows({}, int(downloads_.size()), int(downloads_.size()));
    downloads_.append(d);
    endInsertRows();
    emit countChanged();
    return d;
}

int DownloadQueue::add(const QString& repo, const QString& path) {
    for (int row = 0; row < downloads_.size(); ++row) {
        FileDownload* d = downloads_[row];
        if (d->repo() == repo && d->path() == path && d->state() != FileDownload::State::Cancelled) {
            if (!d->active() && d->state() != FileDownload::State::Done) d->start();
            return row;
        }
    }
    FileDownload* d = make(repo, path);
    d->start();
    save();
    return int(downloads_.size()) - 1;
}

void DownloadQueue::pause(int row) {
    if (FileDownload* d = at(row)) d->pause();
}

void DownloadQueue::resume(int row) {
    if (FileDownload* d = at(row)) d->start();
}

void DownloadQueue::cancel(int row) {
    if (FileDownload* d = at(row)) d->cancel();
}

void DownloadQueue::remove(int row) {
    FileDownload* d = at(row);
    if (!d || d->active()) return;
    beginRemoveRows({}, row, row);
    downloads_.removeAt(row);
    endRemoveRows();
    d->deleteLater();
    save();
    emit countChanged();
}

void DownloadQueue::save() const {
    if (state_file_.isEmpty()) return;
    QJsonArray list;
    for (const FileDownload* d : downloads_) {
        using S = FileDownload::State;
        if (d->state() == S::Done || d->state() == S::Cancelled || d->state() == S::Failed) continue;
        list.append(QJsonObject{{"repo", d->repo()}, {"path", d->path()}, {"paused", d->state() == S::Paused}});
    }
    QSaveFile f(state_file_);
    if (f.open(QIODevice::WriteOnly)) {
        f.write(QJsonDocument(list).toJson());
        f.commit();
    }
}

void DownloadQueue::restore() {
    QFile f(state_file_);
    if (state_file_.isEmpty() || !f.open(QIODevice::ReadOnly)) return;
    for (const QJsonValue& v : QJsonDocument::fromJson(f.readAll()).array()) {
        const QJsonObject o = v.toObject();
        const QString repo = o.value("repo").toString(), path = o.value("path").toString();
        if (repo.isEmpty() || path.isEmpty()) continue;
        FileDownload* d = make(repo, path);
        if (o.value("paused").toBool())
            d->pause();
        else
            d->start();
    }
}

}  // namespace llamadesk::library
