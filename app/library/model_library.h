// The window's Models page (Ctrl+M): the lists "On this computer", "Recommended" and the Hub's
// search, and the downloads, for QML. The work is llamadesk_library's (this folder); this class
// runs the scan off the window's thread, says what fits this machine, keeps the Hub's token in
// the API key store, and puts a finished download in Recent.
// No network request is made until the person opens Recommended or searches.
#pragma once

#include <QFutureWatcher>
#include <QHash>
#include <QNetworkAccessManager>
#include <QObject>
#include <QVariantList>
#include <QtQml/qqmlregistration.h>
#include <memory>

#include "catalogue.h"
#include "download_queue.h"
#include "hub_api.h"
#include "model_scan.h"

class ApiKeyStore;
class AppSettings;

class ModelLibrary : public QObject {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("made by AppContext")
    Q_PROPERTY(QVariantList local READ local NOTIFY localChanged)
    Q_PROPERTY(bool scanning READ scanning NOTIFY localChanged)
    Q_PROPERTY(QVariantList recommended READ recommended NOTIFY recommendedChanged)
    Q_PROPERTY(QVariantList results READ results NOTIFY resultsChanged)
    Q_PROPERTY(QString repo READ repo NOTIFY filesChanged)
    Q_PROPERTY(QVariantList files READ files NOTIFY filesChanged)
    Q_PROPERTY(bool busy READ busy NOTIFY busyChanged)
    // What the last request to the Hub said when it failed ("offline: …", a gated repository).
    Q_PROPERTY(QString hubMessage READ hubMessage NOTIFY hubMessageChanged)
    Q_PROPERTY(bool offline READ offline NOTIFY hubMessageChanged)
    Q_PROPERTY(bool hasToken READ hasToken NOTIFY tokenChanged)
    Q_PROPERTY(QString hubAddress READ hubAddress CONSTANT)
    // A list model of the downloads (download_queue.h: its roles, pause/resume/cancel/remove(row)).
    Q_PROPERTY(QAbstractListModel* downloads READ downloadList CONSTANT)

public:
    // data_dir: LlamaDesk's own models folder is <data_dir>/models, the unfinished downloads are
    // remembered in <data_dir>/downloads.json (empty: neither).
    ModelLibrary(const QString& data_dir, AppSettings* settings, ApiKeyStore* keys, QObject* parent = nullptr);
    ~ModelLibrary() override;

    QVariantList local() const { return local_; }
    bool scanning() const { return scanning_; }
    QVariantList recommended() const { return recommended_; }
    QVariantList results() const { return results_; }
    QString repo() const { return repo_; }
    QVariantList files() const { return files_; }
    bool busy() const { return pending_ > 0; }
    QString hubMessage() const { return hub_message_; }
    bool offline() const { return offline_; }
    bool hasToken() const { return !hub_.token().isEmpty(); }
    QString hubAddress() const { return hub_.endpoint().toString(); }
    llamadesk::library::DownloadQueue* downloads() { return &downloads_; }
    QAbstractListModel* downloadList() { return &downloads_; }

    // Reads the folders again (the page does it each time it opens).
    Q_INVOKABLE void rescan();
    // The catalogue, with what fits here; asks the Hub for the files' exact sizes.
    Q_INVOKABLE void openCatalogue();
    Q_INVOKABLE void search(const QString& query);
    // The GGUF files of one repository.
    Q_INVOKABLE void showRepo(const QString& repo);
    Q_INVOKABLE void download(const QString& repo, const QString& file);
    // An access token for gated repositories, kept in the system keyring (or the 0600 file); empty
    // forgets it. Empty, or what went wrong.
    Q_INVOKABLE QString setToken(const QString& token);
    // The folder LlamaDesk looks in for models of its own.
    Q_INVOKABLE QString ownFolder() const;

signals:
    void localChanged();
    void recommendedChanged();
    void resultsChanged();
    void filesChanged();
    void busyChanged();
    void hubMessageChanged();
    void tokenChanged();

private:
    void setHubMessage(const QString& message, bool offline);
    void requestStarted();
    void requestEnded();
    void refreshRecommended();
    void refreshFiles();

    QString data_dir_;
    AppSettings* settings_;
    ApiKeyStore* keys_;
    QNetworkAccessManager network_;
    llamadesk::library::HubClient hub_;
    llamadesk::library::DownloadQueue downloads_;
    QFutureWatcher<QList<llamadesk::library::LocalModel>> scan_;
    // Set by rescan() until its result is in: QFutureWatcher::isRunning() is false until the pool
    // has started the task.
    bool scanning_ = false;
    bool rescan_again_ = false;

    QVariantList local_, recommended_, results_, files_;
    QList<llamadesk::library::CatalogueFile> catalogue_;
    QHash<QString, QString> unavailable_;  // "repo/file" of the catalogue: why the Hub does not have it
    QList<llamadesk::library::HubFile> repo_files_;
    QString repo_;
    int pending_ = 0;
    QString hub_message_;
    bool offline_ = false;
};
