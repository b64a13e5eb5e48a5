// hub_test_server.py (the Hugging Face Hub's API, files and CDN on loopback, with faults) started
// for one test: its addresses, its faults and the log of what it was asked.
#pragma once

#include <QJsonArray>
#include <QJsonObject>
#include <QProcess>
#include <QString>
#include <QUrl>

class HubServer {
public:
    // repos: DIR/<org>/<name>/<files>. Fails the test (QFAIL-style, returns false) when it does not start.
    bool start(const QString& repos);
    ~HubServer();

    QUrl hub() const { return hub_; }
    QUrl cdn() const { return cdn_; }
    // POST /_test/faults (replacing the active ones) and /_test/reset.
    void setFaults(const QJsonObject& faults);
    void reset();
    // Every request so far: {"listener", "method", "path", "range", "if_range", "authorization", "status", "bytes_sent"}.
    QJsonArray log();

private:
    QByteArray request(const QByteArray& method, const QString& path, const QByteArray& body = {});
    QProcess process_;
    QUrl hub_, cdn_;
};
