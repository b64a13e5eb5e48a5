// llama.cpp's OpenAI-compatible server from PyPI (llama-cpp-python[server]) on a free loopback
// port, for the tests that need a real server: started, waited for (/v1/models), killed at the end.
#pragma once

#include <QProcess>
#include <QString>
#include <QUrl>

namespace llamadesk::test {

class LlamaServer {
public:
    ~LlamaServer();
    // Empty when the server answers; else why it cannot run here (the caller skips with it).
    // A server that is installed but fails to come up is a failure, reported in *failure.
    QString start(const QString& model_path, QString* failure);
    QUrl base_url() const { return base_url_; }

private:
    QProcess process_;
    QUrl base_url_;
};

}  // namespace llamadesk::test
