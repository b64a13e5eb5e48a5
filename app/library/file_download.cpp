#include "file_download.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkRequest>
#include <QRegularExpression>
#include <QSaveFile>
#include <QStorageInfo>
#include <QThread>

#include "hub_api.h"

namespace llamadesk::library {

namespace {

constexpr int kMaxAttempts = 8;               // dropped connections in a row before giving up
constexpr qint64 kSpaceCheckBytes = 16 << 20; // how often the free space is checked while writing
constexpr int kMaxRedirects = 5;              // after the Hub's own

// "sha256" from an ETag: W/"abc" or "abc".
QString unquote(const QByteArray& etag) {
    QString s = QString::fromLatin1(etag).trimmed();
    if (s.startsWith("W/")) s = s.mid(2);
    if (s.size() >= 2 && s.startsWith('"') && s.endsWith('"')) s = s.mid(1, s.size() - 2);
    return s;
}

bool is_sha256(const QString& s) {
    static const QRegularExpression hex("^[0-9a-f]{64}$");
    return hex.match(s).hasMatch();
}

// Retry-After in seconds (the Hub sends seconds), else the fallback; at most a minute.
int retry_after(QNetworkReply* reply, int fallback) {
    bool ok = false;
    const int seconds = reply->rawHeader("Retry-After").trimmed().toInt(&ok);
    return std::clamp(ok ? seconds : fallback, 1, 60);
}

bool same_origin(const QUrl& a, const QUrl& b) {
    return a.scheme() == b.scheme() && a.host().compare(b.host(), Qt::CaseInsensitive) == 0 &&
           a.port(a.scheme() == "https" ? 443 : 80) == b.port(b.scheme() == "https" ? 443 : 80);
}

}  // namespace

QString size_text(qint64 bytes) {
    if (bytes >= 1000000000) return QString::number(double(bytes) / 1e9, 'f', 2) + " GB";
    if (bytes >= 1000000) return QString::number(double(bytes) / 1e6, 'f', 1) + " MB";
    return QString::number(double(bytes) / 1e3, 'f', 0) + " kB";
}

QString speed_text(double bytes_per_second) {
    if (bytes_per_second <= 0) return {};
    if (bytes_per_second >= 1e6) return QString::number(bytes_per_second / 1e6, 'f', 1) + " MB/s";
    return QString::number(bytes_per_second / 1e3, 'f', 1) + " kB/s";
}

QString time_left_text(int seconds) {
    if (seconds < 0) return {};
    if (seconds < 90) return QString::number(seconds) + " s left";
    if (seconds < 90 * 60) return QString::number((seconds + 30) / 60) + " min left";
    return QString::number(seconds / 3600) + " h " + QString::number(seconds % 3600 / 60) + " min left";
}

QString state_name(FileDownload::State state) {
    switch (state) {
    case FileDownload::State::Waiting: return "waiting";
    case FileDownload::State::Starting: return "starting";
    case FileDownload::State::Downloading: return "downloading";
    case FileDownload::State::Verifying: return "verifying";
    case FileDownload::State::Paused: return "paused";
    case FileDownload::State::Done: return "done";
    case FileDownload::State::Failed: return "failed";
    case FileDownload::State::Cancelled: return "cancelled";
    }
    return {};
}

FileDownload::FileDownload(QNetworkAccessManager* network, const QString& cache, const QString& repo,
                           const QString& path, QObject* parent)
    : QObject(parent), network_(network), cache_(cache), repo_(repo), path_(path), endpoint_(hub_endpoint()),
      token_(hub_token_from_environment()) {
    retry_timer_.setSingleShot(true);
    connect(&retry_timer_, &QTimer::timeout, this, &FileDownload::start);
    clock_.start();
}

FileDownload::~FileDownload() {
    stopReply();
    if (verify_thread_) {
        verify_abort_->store(true);
        verify_thread_->wait();
    }
}

int FileDownload::secondsLeft() const {
    if (speed_ <= 0 || total_ <= 0) return -1;
    return int(double(total_ - received_) / speed_ + 0.5);
}

void FileDownload::setState(State state, const QString& message, bool problem) {
    state_ = state;
    message_ = message;
    problem_ = problem || state == State::Failed;
    if (state != State::Downloading) speed_ = 0;
    emit changed();
    if (state == State::Done || state == State::Failed || state == State::Cancelled) emit finished();
}

void FileDownload::stopReply() {
    if (QNetworkReply* reply = reply_) {
        reply_ = nullptr;  // its finished() is then ignored
        reply->abort();
        reply->deleteLater();
    }
    if (part_) part_->close();
}

void FileDownload::start() {
    if (active()) return;
    if (!retry_timer_.isActive() && state_ != State::Waiting) attempts_ = 0;  // a person's resume starts a new count
    retry_timer_.stop();
    setState(State::Starting, "asking the Hub for " + path_);
    resolve();
}

void FileDownload::pause() {
    if (state_ != State::Starting && state_ != State::Downloading && state_ != State::Waiting) return;
    stopReply();
    retry_timer_.stop();
    setState(State::Paused, total_ > 0 ? "paused at " + size_text(received_) + " of " + size_text(total_) : "paused");
}

void FileDownload::cancel() {
    if (state_ == State::Done || state_ == State::Cancelled) return;
    stopReply();
    retry_timer_.stop();
    if (verify_abort_) verify_abort_->store(true);
    if (!entry_.part.isEmpty()) {
        QFile::remove(entry_.part);
        QFile::remove(entry_.part_info);
    }
    received_ = 0;
    setState(State::Cancelled, "cancelled; the partial file was deleted");
}

void FileDownload::retryLater(int seconds, const QString& why) {
    setState(State::Waiting, why + "; trying again in " + QString::number(seconds) + " s");
    retry_timer_.start(seconds * 1000);
}

// HEAD /{repo}/resolve/main/{path}, redirects not followed: its headers say which commit, which
// file (X-Linked-Etag: its sha256, X-Linked-Size) and where the bytes are (Location).
void FileDownload::resolve() {
    QUrl url = endpoint_;
    url.setPath(url.path() + "/" + repo_ + "/resolve/main/" + path_);
    QNetworkRequest request(url);
    request.setAttribute(QNetworkRequest::RedirectPolicyAttribute, QNetworkRequest::ManualRedirectPolicy);
    if (!token_.isEmpty()) request.setRawHeader("Authorization", "Bearer " + token_.toUtf8());
    request.setRawHeader("Accept-Encoding", "identity");
    request.setTransferTimeout(30000);
    reply_ = network_->head(request);
    QNetworkReply* reply = reply_;
    connect(reply, &QNetworkReply::finished, this, [this, reply] { onResolved(reply); });
}

void FileDownload::onResolved(QNetworkReply* reply) {
    reply->deleteLater();
    if (reply != reply_) return;  // paused or cancelled meanwhile
    reply_ = nullptr;
    const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    if (status == 429 || status >= 500) {
        if (++attempts_ > kMaxAttempts)
            return fail("the Hub answered " + QString::number(status) + " " + QString::number(kMaxAttempts) +
                        " times in a row; resume to try again");
        retryLater(retry_after(reply, 5), "the Hub answered " + QString::number(status));
        return;
    }
    if (status == 0 || status >= 400) {
        if (status == 0 && is_offline_error(reply->error()) && ++attempts_ <= kMaxAttempts) {
            retryLater(std::min(1 << attempts_, 30), hub_error_text(reply, {}, repo_, path_));
            return;
        }
        fail(hub_error_text(reply, {}, repo_, path_));
        return;
    }
    QString sha256 = unquote(reply->rawHeader("X-Linked-Etag"));
    if (sha256.isEmpty()) sha256 = unquote(reply->rawHeader("ETag"));
    const QString commit = QString::fromLatin1(reply->rawHeader("X-Repo-Commit")).trimmed();
    bool sized = false;
    const qint64 size = reply->rawHeader("X-Linked-Size").toLongLong(&sized);
    if (!is_sha256(sha256) || commit.isEmpty() || !sized) {
        fail("the Hub announced no sha256, commit or size for " + path_ +
             ": LlamaDesk keeps only files it can verify");
        return;
    }
    if (!sha256_.isEmpty() && sha256 != sha256_) {
        // The file changed on the Hub since the part was started: its bytes are of another file.
        QFile::remove(entry_.part);
        QFile::remove(entry_.part_info);
    }
    sha256_ = sha256;
    commit_ = commit;
    total_ = size;
    bytes_url_ = status >= 300 && status < 400 ? url_resolved(reply) : reply->url();
    redirects_ = 0;
    entry_ = hub_cache_entry(cache_, repo_, sha256_, commit_, path_);

    if (QFileInfo(entry_.blob).size() == total_) {  // the same file, stored before
        if (const QString error = link_snapshot(entry_, commit_); !error.isEmpty()) return fail(error);
        file_ = entry_.snapshot;
        received_ = total_;
        setState(State::Done, "already in the Hugging Face cache under its sha256");
        return;
    }
    const QString blobs = QFileInfo(entry_.blob).absolutePath();
    if (!QDir().mkpath(blobs)) return fail("could not create the folder " + blobs + " (is it read-only?)");
    // A part resumes only with the ETag its bytes came with; else it starts again.
    QFile info(entry_.part_info);
    etag_ = info.open(QIODevice::ReadOnly) ? QJsonDocument::fromJson(info.readAll()).object().value("etag").toString()
                                           : QString();
    received_ = etag_.isEmpty() ? 0 : QFileInfo(entry_.part).size();
    if (received_ > total_) received_ = 0;
    fetch();
}

QUrl FileDownload::url_resolved(QNetworkReply* reply) const {
    return reply->url().resolved(reply->header(QNetworkRequest::LocationHeader).toUrl());
}

bool FileDownload::diskHasRoomFor(qint64 bytes) {
    QStorageInfo disk(QFileInfo(entry_.blob).absolutePath());
    disk.refresh();
    const qint64 free = disk.bytesAvailable();
    checked_space_at_ = received_;
    if (free < 0 || free >= bytes) return true;
    stopReply();
    setState(State::Paused, "paused: " + size_text(bytes) + " more are needed on " + disk.rootPath() + ", which has " +
                                size_text(free) + " free. " + size_text(received_) +
                                " are kept for the resume; free some space, then resume",
             true);
    return false;
}

void FileDownload::fetch() {
    if (!diskHasRoomFor(total_ - received_)) return;
    part_ = std::make_unique<QFile>(entry_.part);
    // Unbuffered: a full disk shows at the write that meets it, so what is kept is what was written.
    if (!part_->open(QIODevice::ReadWrite | QIODevice::Unbuffered))
        return fail("could not write " + entry_.part + ": " + part_->errorString());
    if (received_ == 0) part_->resize(0);
    part_->seek(received_);

    QNetworkRequest request(bytes_url_);
    request.setAttribute(QNetworkRequest::RedirectPolicyAttribute, QNetworkRequest::ManualRedirectPolicy);
    // The token is the Hub's: the host it redirects to (a CDN) never sees it.
    if (!token_.isEmpty() && same_origin(bytes_url_, endpoint_))
        request.setRawHeader("Authorization", "Bearer " + token_.toUtf8());
    if (received_ > 0) {
        request.setRawHeader("Range", "bytes=" + QByteArray::number(received_) + "-");
        request.setRawHeader("If-Range", etag_.toUtf8());
    }
    request.setRawHeader("Accept-Encoding", "identity");
    request.setTransferTimeout(60000);  // a stalled transfer counts as a dropped one
    reply_ = network_->get(request);
    QNetworkReply* reply = reply_;
    reply->setReadBufferSize(4 << 20);
    connect(reply, &QNetworkReply::metaDataChanged, this, &FileDownload::onHeaders);
    connect(reply, &QNetworkReply::readyRead, this, &FileDownload::onData);
    connect(reply, &QNetworkReply::finished, this, &FileDownload::onFetchFinished);
    samples_.clear();
    setState(State::Downloading, (received_ > 0 ? "resuming at " + size_text(received_) + " of "
                                                : QString("downloading ")) + size_text(total_));
}

void FileDownload::writePartInfo() {
    QSaveFile info(entry_.part_info);
    const QJsonObject o{{"repo", repo_}, {"path", path_}, {"commit", commit_}, {"sha256", sha256_},
                        {"size", double(total_)}, {"etag", etag_}};
    if (info.open(QIODevice::WriteOnly)) {
        info.write(QJsonDocument(o).toJson(QJsonDocument::Compact));
        info.commit();
    }
}

void FileDownload::onHeaders() {
    QNetworkReply* reply = reply_;
    if (!reply || sender() != reply) return;
    const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    if (status != 200 && status != 206) return;  // the body is an error: onFetchFinished reads it
    if (status == 206) {
        static const QRegularExpression range(R"(bytes (\d+)-)");
        const auto m = range.match(QString::fromLatin1(reply->rawHeader("Content-Range")));
        if (!m.hasMatch() || m.captured(1).toLongLong() != received_) {
            restart_from_zero_ = true;
            reply->abort();
            return;
        }
    } else if (received_ > 0) {
        // The server ignored the Range, or If-Range found another file: the body is the whole
        // file, which must not be appended to the part.
        received_ = 0;
        part_->resize(0);
        part_->seek(0);
    }
    etag_ = QString::fromLatin1(reply->rawHeader("ETag"));
    writePartInfo();
}

void FileDownload::onData() {
    QNetworkReply* reply = reply_;
    if (!reply || sender() != reply || restart_from_zero_) return;
    const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    if (status != 200 && status != 206) return;
    const QByteArray chunk = reply->readAll();
    const qint64 wrote = part_->write(chunk);
    if (wrote != chunk.size()) {
        const QString error = part_->errorString();
        received_ += std::max<qint64>(0, wrote);
        part_->resize(received_);
        stopReply();
        setState(State::Paused, "paused: could not write to " + QFileInfo(entry_.part).absolutePath() + " (" + error +
                                    "). " + size_text(received_) + " are kept for the resume; free some space, then resume",
                 true);
        return;
    }
    received_ += wrote;
    attempts_ = 0;
    if (received_ - checked_space_at_ >= kSpaceCheckBytes && !diskHasRoomFor(total_ - received_)) return;
    const qint64 now = clock_.elapsed();
    samples_.append({now, received_});
    while (samples_.size() > 2 && now - samples_.first().first > 3000) samples_.removeFirst();
    const qint64 span = now - samples_.first().first;
    if (span >= 200) speed_ = double(received_ - samples_.first().second) * 1000.0 / double(span);
    if (now - last_signal_ms_ >= 100) {  // a view needs no more than 10 updates a second
        last_signal_ms_ = now;
        emit changed();
    }
}

void FileDownload::onFetchFinished() {
    QNetworkReply* reply = qobject_cast<QNetworkReply*>(sender());
    if (!reply) return;
    reply->deleteLater();
    if (reply != reply_) return;  // paused or cancelled
    reply_ = nullptr;
    part_->close();
    const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    if (restart_from_zero_) {
        restart_from_zero_ = false;
        received_ = 0;
        fetch();
        return;
    }
    if (status >= 300 && status < 400 && ++redirects_ <= kMaxRedirects) {
        // The CDN may send us on once more (signed URLs); the token stays with the Hub's origin.
        bytes_url_ = url_resolved(reply);
        fetch();
        return;
    }
    if (status >= 300 && status < 400) return fail("more than " + QString::number(kMaxRedirects) + " redirects for " + path_);
    if (status == 416 && received_ == total_) return verify();
    if (status == 416) {
        received_ = 0;
        fetch();
        return;
    }
    if (status == 429 || status >= 500) {
        if (++attempts_ > kMaxAttempts)
            return fail("the server answered " + QString::number(status) + " " + QString::number(kMaxAttempts) +
                        " times in a row; resume to try again");
        retryLater(retry_after(reply, 5), "the server answered " + QString::number(status));
        return;
    }
    if (status >= 400) return fail(hub_error_text(reply, reply->readAll(), repo_, path_));
    if (received_ < total_) {
        const QString lost = "the connection was lost at " + size_text(received_) + " of " + size_text(total_) +
                             (reply->error() != QNetworkReply::NoError ? " (" + reply->errorString() + ")" : QString());
        if (++attempts_ > kMaxAttempts) return fail(lost + ", " + QString::number(kMaxAttempts) + " times in a row; resume to try again");
        retryLater(std::min(1 << (attempts_ - 1), 30), lost);
        return;
    }
    if (received_ > total_) {
        QFile::remove(entry_.part);
        return fail("the server sent " + size_text(received_) + ", more than the " + size_text(total_) +
                    " announced; the partial file was deleted");
    }
    verify();
}

void FileDownload::verify() {
    setState(State::Verifying, "checking the sha256 of " + size_text(total_));
    verify_abort_ = std::make_shared<std::atomic<bool>>(false);
    auto abort = verify_abort_;
    auto result = std::make_shared<QString>();
    const QString part = entry_.part;
    QThread* thread = QThread::create([part, abort, result] {
        QFile f(part);
        if (!f.open(QIODevice::ReadOnly)) return;
        QCryptographicHash hash(QCryptographicHash::Sha256);
        QByteArray buffer(4 << 20, Qt::Uninitialized);
        for (qint64 n; !abort->load() && (n = f.read(buffer.data(), buffer.size())) > 0;)
            hash.addData(QByteArrayView(buffer.constData(), n));
        if (!abort->load() && f.error() == QFile::NoError) *result = QString::fromLatin1(hash.result().toHex());
    });
    verify_thread_ = thread;
    connect(thread, &QThread::finished, this, [this, result] {
        verified_sha256_ = *result;
        onVerified();
    });
    connect(thread, &QThread::finished, thread, &QObject::deleteLater);
    thread->start();
}

void FileDownload::onVerified() {
    if (state_ != State::Verifying) return;  // cancelled meanwhile
    if (verified_sha256_ != sha256_) {
        QFile::remove(entry_.part);
        QFile::remove(entry_.part_info);
        received_ = 0;
        return fail(verified_sha256_.isEmpty()
                        ? "could not read " + entry_.part + " back to check it; it was deleted"
                        : "the file's sha256 is " + verified_sha256_ + ", not the " + sha256_ +
                              " the Hub announced: it was deleted, and is not offered to load");
    }
    if (QFileInfo::exists(entry_.blob)) QFile::remove(entry_.blob);
    if (!QFile::rename(entry_.part, entry_.blob)) return fail("could not rename " + entry_.part + " to " + entry_.blob);
    QFile::remove(entry_.part_info);
    if (const QString error = link_snapshot(entry_, commit_); !error.isEmpty()) return fail(error);
    file_ = entry_.snapshot;
    setState(State::Done, "downloaded and verified (sha256 " + sha256_.left(12) + "…)");
}

}  // namespace llamadesk::library
