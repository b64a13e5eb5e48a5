// The window's Local server (Settings): it serves the model the window has loaded, from the
// window's own worker, while the window's conversation answers; it goes on across a model switch
// (each request answered by one model or told to retry, never dropped); other computers need the
// key; a port in use is said, not ignored.
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QTcpServer>
#include <QtTest>

#include "app_fixture.h"
#include "synthetic/synthetic_model.h"

using namespace llamadesk;

namespace {

struct HttpReply {
    int status = 0;
    QByteArray body;
    QByteArray retry_after;
    const QJsonObject json() const { return QJsonDocument::fromJson(body).object(); }
};

// One request on loopback, answered on this thread's event loop.
HttpReply http(const QString& url, const QByteArray& body = {}, const QByteArray& key = {}) {
    static QNetworkAccessManager manager;
    QNetworkRequest request{QUrl(url)};
    request.setHeader(QNetworkRequest::ContentTypeHeader, "application/json");
    if (!key.isEmpty()) request.setRawHeader("Authorization", "Bearer " + key);
    QNetworkReply* reply = body.isEmpty() ? manager.get(request) : manager.post(request, body);
    wait_until([reply] { return reply->isFinished(); }, 120000);
    HttpReply r{reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt(), reply->readAll(),
                reply->rawHeader("Retry-After")};
    reply->deleteLater();
    return r;
}

QByteArray question(const QString& text) {
    return QJsonDocument(QJsonObject{{"messages", QJsonArray{QJsonObject{{"role", "user"}, {"content", text}}}},
                                     {"temperature", 0},
                                     {"max_tokens", 24}})
        .toJson(QJsonDocument::Compact);
}

// The built-in model, which a test program does not have beside it.
QString builtin() { return QStringLiteral(LLAMADESK_BUILTIN_MODEL_FILE); }

// The window with the built-in model loaded, serving on a free port (network: other computers too).
bool serving(AppFixture& f, bool network = false) {
    f.app->start(QString());
    if (!f.load(builtin()) || f.app->model()->name().isEmpty()) return false;
    LocalServer* server = f.app->server();
    server->setPort(0);
    server->setAllowNetwork(network);
    server->setEnabled(true);
    if (!server->running()) qWarning("not serving: %s", qPrintable(server->status()));
    return server->running();
}

}  // namespace

class LocalServerTest : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;

private slots:
    void servesTheWindowsModelWhileTheWindowAnswers() {
        AppFixture f;
        QVERIFY(serving(f));
        LocalServer* server = f.app->server();
        QVERIFY(server->address().startsWith("http://127.0.0.1:"));

        // The window asks; the API asks while it answers; both get their answers.
        const qsizetype before = f.finished.size();
        f.app->conversations()->settings()->setMaxNewTokens(48);
        f.app->composer()->send("What is the KV cache?");
        const HttpReply reply = http(server->address() + "/chat/completions", question("What is LlamaDesk?"));
        QVERIFY2(reply.status == 200, reply.body.constData());
        QVERIFY(!reply.json()["choices"][0]["message"]["content"].toString().isEmpty());
        QCOMPARE(reply.json()["model"].toString(), QFileInfo(builtin()).completeBaseName());
        QVERIFY(f.waitForAnswer(before));
        QVERIFY(f.finished[before].result.status.ok());
        QVERIFY(!f.app->conversations()->current()->messages.isEmpty());

        // The request is listed with its figures.
        ServedRequestModel* requests = server->requests();
        QCOMPARE(requests->rowCount(), 1);
        const QModelIndex row = requests->index(0);
        QVERIFY(row.data(ServedRequestModel::Finished).toBool());
        QCOMPARE(row.data(ServedRequestModel::CompletionTokens).toInt(),
                 reply.json()["usage"]["completion_tokens"].toInt());
        QVERIFY(row.data(ServedRequestModel::PromptTokens).toInt() > 0);
        QCOMPARE(row.data(ServedRequestModel::Client).toString(), QStringLiteral("127.0.0.1"));

        server->setEnabled(false);
        QVERIFY(!server->running());
        QVERIFY(server->address().isEmpty());
    }

    void goesOnAcrossAModelSwitch() {
        const QString other = dir_.filePath("other.gguf");
        write_gguf(make_synthetic_checkpoint(synthetic_config("15M"), DType::F32, 5), other.toStdString());
        AppFixture f;
        QVERIFY(serving(f));
        LocalServer* server = f.app->server();

        // Requests go on while the other model loads: each is answered by one model, or told
        // when to try again.
        f.app->model()->load(other, {});
        QSet<QString> models;
        int retry = 0;
        for (int i = 0; i < 40 && (i < 3 || f.app->model()->loading()); ++i) {
            const HttpReply reply = http(server->address() + "/chat/completions", question("Hello"));
            if (reply.status == 503) {
                QCOMPARE(reply.retry_after, QByteArray("5"));
                ++retry;
                continue;
            }
            QCOMPARE(reply.status, 200);
            models.insert(reply.json()["model"].toString());
        }
        QVERIFY(wait_until([&] { return !f.app->model()->loading(); }, 60000));
        QCOMPARE(f.app->model()->name(), QStringLiteral("other"));
        const HttpReply after = http(server->address() + "/chat/completions", question("Hello"));
        QCOMPARE(after.status, 200);
        QCOMPARE(after.json()["model"].toString(), QStringLiteral("other"));
        const HttpReply list = http(server->address() + "/models");
        QCOMPARE(list.json()["data"][0]["id"].toString(), QStringLiteral("other"));
        qInfo("during the load: %lld answered (%s), %d told to retry", qlonglong(models.size()),
              qPrintable(QStringList(models.values()).join(", ")), retry);
    }

    void otherComputersNeedTheKey() {
        AppFixture f;
        QVERIFY(serving(f, true));
        LocalServer* server = f.app->server();
        const QByteArray key = server->apiKey().toUtf8();
        QVERIFY(key.size() >= 20);  // made for it, and kept
        QCOMPARE(http(server->address() + "/models").status, 401);
        QCOMPARE(http(server->address() + "/models", {}, "wrong").status, 401);
        QCOMPARE(http(server->address() + "/models", {}, key).status, 200);
        server->newKey();
        QVERIFY(server->apiKey().toUtf8() != key);
        QCOMPARE(http(server->address() + "/models", {}, key).status, 401);
        QCOMPARE(http(server->address() + "/models", {}, server->apiKey().toUtf8()).status, 200);

        // The same data folder later: the key was kept.
        const QString kept = server->apiKey();
        f.app.reset();
        f.app = std::make_unique<AppContext>(AppPaths{f.dir.path() + "/data", f.dir.path() + "/settings.ini"});
        f.app->start(QString());
        QVERIFY(f.app->server()->running());
        QCOMPARE(f.app->server()->apiKey(), kept);
    }

    void aPortInUseIsSaid() {
        QTcpServer taken;
        QVERIFY(taken.listen(QHostAddress::LocalHost));
        AppFixture f;
        f.app->start(QString());
        LocalServer* server = f.app->server();
        server->setPort(taken.serverPort());
        server->setEnabled(true);
        QVERIFY(!server->running());
        QVERIFY2(server->status().contains(QString::number(taken.serverPort())) && server->status().contains("taken"),
                 qPrintable(server->status()));
        taken.close();
        server->apply();
        QVERIFY(server->running());
        // No model yet: 503, with when to try again.
        const HttpReply reply = http(server->address() + "/chat/completions", question("Hi"));
        QCOMPARE(reply.status, 503);
        QCOMPARE(reply.retry_after, QByteArray("5"));
        QCOMPARE(reply.json()["error"]["code"].toString(), QStringLiteral("no_model"));
    }
};

QTEST_MAIN(LocalServerTest)
#include "test_local_server.moc"
