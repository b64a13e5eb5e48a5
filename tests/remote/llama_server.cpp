#include "llama_server.h"

#include <QElapsedTimer>
#include <QStandardPaths>
#include <QTcpServer>
#include <QThread>

#include "remote_session.h"

namespace llamadesk::test {

namespace {

constexpr int kStartTimeoutMs = 60000;

quint16 free_loopback_port() {
    QTcpServer probe;
    probe.listen(QHostAddress::LocalHost, 0);
    return probe.serverPort();
}

}  // namespace

LlamaServer::~LlamaServer() {
    if (process_.state() == QProcess::NotRunning) return;
    process_.kill();
    process_.waitForFinished(5000);
}

QString LlamaServer::start(const QString& model_path, QString* failure) {
    // installer/test-server-python.sh names a python that has the server; else python3 on PATH.
    const QString python = qEnvironmentVariableIsEmpty("LLAMADESK_TEST_PYTHON")
                               ? QStandardPaths::findExecutable("python3")
                               : qEnvironmentVariable("LLAMADESK_TEST_PYTHON");
    if (python.isEmpty()) return QStringLiteral("python3 is not installed");
    if (QProcess::execute(python, {"-c", "import llama_cpp.server.app"}) != 0)
        return QStringLiteral("llama.cpp's server is not installed (pip install 'llama-cpp-python[server]')");
    const quint16 port = free_loopback_port();
    base_url_ = QUrl(QStringLiteral("http://127.0.0.1:%1/v1").arg(port));
    process_.setProcessChannelMode(QProcess::MergedChannels);
    process_.start(python, {"-m", "llama_cpp.server", "--model", model_path, "--host", "127.0.0.1", "--port",
                            QString::number(port)});
    remote::RemoteSession session({base_url_, {}, {}}, 2000);
    QElapsedTimer clock;
    clock.start();
    QString error;
    while (!session.models(&error)) {
        if (process_.state() == QProcess::NotRunning || clock.elapsed() > kStartTimeoutMs) {
            process_.kill();
            process_.waitForFinished(5000);
            *failure = QStringLiteral("llama_cpp.server did not come up on port %1 (%2); it said: %3")
                           .arg(port).arg(error, QString::fromLocal8Bit(process_.readAll().right(2000)));
            return QString();
        }
        QThread::msleep(200);
    }
    return QString();
}

}  // namespace llamadesk::test
