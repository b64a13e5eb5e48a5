// One file from the Hugging Face Hub into its cache (hub_cache.h), resumable and verified:
// - it asks /resolve/main/<path> (HEAD, redirects not followed) for the commit, the file's sha256
//   (X-Linked-Etag) and size, and where the bytes are (the CDN the Hub redirects to);
// - it writes blobs/<sha256>.part and resumes it with Range, guarded by If-Range on the ETag the
//   bytes came with; a server that ignores either answers 200, and the file starts again from zero,
//   never appended to;
// - a dropped connection or a stalled one resumes by itself (backing off); 429 and 5xx wait as
//   Retry-After says;
// - the free space is checked before it starts and while it writes: a full disk pauses it with
//   the figures, keeping what was written;
// - when whole, the .part's sha256 must be the one the Hub announced: then it is renamed to the
//   blob and linked into the snapshot, else deleted. Nothing unverified is ever under a .gguf name.
// The Hub's token goes to the Hub only, never to the host it redirects to.
#pragma once

#include <QElapsedTimer>
#include <QList>
#include <QNetworkReply>
#include <QObject>
#include <QPointer>
#include <QString>
#include <QTimer>
#include <QUrl>
#include <atomic>
#include <memory>

#include "hub_cache.h"

class QNetworkAccessManager;
class QFile;
class QThread;

namespace llamadesk::library {

class FileDownload : public QObject {
    Q_OBJECT
public:
    enum class State { Waiting, Starting, Downloading, Verifying, Paused, Done, Failed, Cancelled };
    Q_ENUM(State)

    FileDownload(QNetworkAccessManager* network, const QString& cache, const QString& repo, const QString& path,
                 QObject* parent = nullptr);
    ~FileDownload() override;

    void setEndpoint(const QUrl& endpoint) { endpoint_ = endpoint; }
    void setToken(const QString& token) { token_ = token; }

    QString repo() const { return repo_; }
    QString path() const { return path_; }
    State state() const { return state_; }
    // What is happening or went wrong, in words with figures ("paused: the disk is full…").
    QString message() const { return message_; }
    // Failed, or paused by a full disk: what the person must act on (a plain pause is not).
    bool problem() const { return problem_; }
    qint64 received() const { return received_; }
    qint64 total() const { return total_; }
    double bytesPerSecond() const { return speed_; }
    // Seconds left at the current speed; -1 when unknown.
    int secondsLeft() const;
    // The snapshot file, once Done: what loading opens.
    QString file() const { return file_; }
    bool active() const { return state_ == State::Starting || state_ == State::Downloading || state_ == State::Verifying; }

    void start();   // also resumes a paused or failed download
    void pause();   // keeps the .part
    void cancel();  // deletes the .part

signals:
    void changed();
    void finished();  // Done, Failed or Cancelled

private:
    void resolve();
    void onResolved(QNetworkReply* reply);
    void fetch();
    void onHeaders();
    void onData();
    void onFetchFinished();
    void verify();
    void onVerified();
    void retryLater(int seconds, const QString& why);
    QUrl url_resolved(QNetworkReply* reply) const;
    void setState(State state, const QString& message, bool problem = false);
    void fail(const QString& message) { setState(State::Failed, message); }
    void stopReply();
    bool diskHasRoomFor(qint64 bytes);
    void writePartInfo();
    void sample();

    QNetworkAccessManager* network_;
    QString cache_, repo_, path_;
    QUrl endpoint_;
    QString token_;

    State state_ = State::Waiting;
    QString message_;
    bool problem_ = false;
    QString sha256_, commit_, etag_;
    QUrl bytes_url_;  // where the Hub sent us
    HubCacheEntry entry_;
    qint64 received_ = 0, total_ = 0;
    QString file_;
    int attempts_ = 0;  // retries since bytes last arrived (or the person resumed)
    int redirects_ = 0; // since the Hub's answer

    QPointer<QNetworkReply> reply_;
    std::unique_ptr<QFile> part_;
    bool restart_from_zero_ = false;
    QTimer retry_timer_;
    std::shared_ptr<std::atomic<bool>> verify_abort_;
    QString verified_sha256_;

    // Speed over the last few seconds: (ms, bytes) samples.
    QElapsedTimer clock_;
    QList<QPair<qint64, qint64>> samples_;
    double speed_ = 0;
    qint64 last_signal_ms_ = -1000;
    qint64 checked_space_at_ = 0;  // received_ when the free space was last checked
    QPointer<QThread> verify_thread_;
};

QString state_name(FileDownload::State state);

// A download's figures in words: "4.92 GB", "807.7 MB", "350 kB"; "1.2 MB/s"; "3 min left".
QString size_text(qint64 bytes);
QString speed_text(double bytes_per_second);
QString time_left_text(int seconds);

}  // namespace llamadesk::library
