// The downloads the person started, as a list model: each row a FileDownload with its progress,
// speed and time left. The unfinished ones are remembered (downloads.json in the app's data
// folder) and go on after a restart from their .part files: a running one resumes by itself, a
// paused one waits for the person.
#pragma once

#include <QAbstractListModel>
#include <QList>
#include <QString>
#include <QUrl>

#include "file_download.h"

class QNetworkAccessManager;

namespace llamadesk::library {

class DownloadQueue : public QAbstractListModel {
    Q_OBJECT
    Q_PROPERTY(int count READ rowCount NOTIFY countChanged)
    Q_PROPERTY(int active READ activeCount NOTIFY countChanged)
public:
    enum Role { RepoRole = Qt::UserRole + 1, PathRole, StateRole, MessageRole, ReceivedRole, TotalRole,
                ProgressRole, SpeedRole, TimeLeftRole, FileRole, ProblemRole };

    // state_file: where the unfinished downloads are remembered (empty: nowhere).
    DownloadQueue(QNetworkAccessManager* network, const QString& cache, const QString& state_file,
                  QObject* parent = nullptr);

    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;
    int activeCount() const;

    void setEndpoint(const QUrl& endpoint);
    void setToken(const QString& token);
    // Starts (or, when the file is already in the list, resumes) a download; its row.
    int add(const QString& repo, const QString& path);
    FileDownload* at(int row) const { return row >= 0 && row < downloads_.size() ? downloads_[row] : nullptr; }
    Q_INVOKABLE void pause(int row);
    Q_INVOKABLE void resume(int row);
    Q_INVOKABLE void cancel(int row);
    // Takes a finished, failed or cancelled row off the list.
    Q_INVOKABLE void remove(int row);
    // Goes on with the downloads remembered from the last run.
    void restore();

signals:
    void countChanged();
    void downloaded(const QString& file);  // one finished and verified: its snapshot file

private:
    FileDownload* make(const QString& repo, const QString& path);
    void save() const;

    QNetworkAccessManager* network_;
    QString cache_, state_file_;
    QUrl endpoint_;
    QString token_;
    bool token_set_ = false;
    QList<FileDownload*> downloads_;
};

}  // namespace llamadesk::library
