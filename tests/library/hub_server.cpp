#include "hub_server.h"

#include <QEventLoop>
#include <QJsonDocument>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>

bool HubServer::start(const QString& repos) {
    process_.setProgram("python3");
    process_.setArguments({QStringLiteral(LLAMADESK_HUB_TEST_SERVER), "--repos", repos});
    process_.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    process_.start();
    if (!process_.waitForStarted(10000)) return false;
    // Its first line, once both listeners are up.
    while (!process_.canReadLine())
        if (!process_.waitForReadyRead(15000)) return false;
    const QJsonObject urls = QJsonDocument::fromJson(process_.readLine()).object();
    hub_ = QUrl(urls.value("hub").toString());
    cdn_ = QUrl(urls.value("cdn").toString());
    return hub_.isValid() && cdn_.isValid();
}

HubServer::~HubServer() {
    process_.closeWriteChannel();  // stdin's end stops it
    if (!process_.waitForFinished(3000)) process_.kill();
    process_.waitForFinished(3000);
}

QByteArray HubServer::request(const QByteArray& method, const QString& path, const QByteArray& body) {
    QNetworkAccessManager network;
    QUrl url = hub_;
    url.setPath(path);
    QNetworkRequest r(url);
    r.setHeader(QNetworkRequest::ContentTypeHeader, "application/json");
    QNetworkReply* reply = network.sendCustomRequest(r, method, body);
    QEventLoop loop;
    QObject::connect(reply, &QNetworkReply::finished, &loop, &QEventLoop::quit);
    loop.exec();
    const QByteArray answer = reply->readAll();
    delete reply;
    return answer;
}

void HubServer::setFaults(const QJsonObject& faults) {
    request("POST", "/_test/faults", QJsonDocument(faults).toJson(QJsonDocument::Compact));
}

void HubServer::reset() { request("POST", "/_test/reset"); }

QJsonArray HubServer::log() { return QJsonDocument::fromJson(request("GET", "/_test/log")).array(); }
