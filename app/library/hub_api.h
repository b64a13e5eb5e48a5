// The Hugging Face Hub's public API as the Models page uses it: the address ($HF_ENDPOINT, as
// huggingface_hub reads it), the token, searching GGUF repositories and listing their files. The
// response shapes are huggingface_hub's (hf_api.py: ModelInfo, RepoFile) and the Hub's API docs.
#pragma once

#include <QJsonDocument>
#include <QList>
#include <QNetworkReply>
#include <QObject>
#include <QString>
#include <QStringList>
#include <QUrl>
#include <functional>

class QNetworkAccessManager;

namespace llamadesk::library {

// $HF_ENDPOINT, else https://huggingface.co.
QUrl hub_endpoint();
// $HF_TOKEN, else the file huggingface-cli login writes ($HF_TOKEN_PATH, else $HF_HOME/token, else
// ~/.cache/huggingface/token); empty when none.
QString hub_token_from_environment();

struct HubRepo {
    QString id;  // "org/name"
    qint64 downloads = 0;
    int likes = 0;
    bool gated = false;
    QStringList tags;
};

struct HubFile {
    QString path;    // in the repository
    qint64 size = 0;
    QString sha256;  // the LFS object id; empty when the Hub gave none
    QString quant;   // "Q4_K_M", from the name; empty when the name says none
    bool readable = false;
    QString reason;  // why LlamaDesk would not open it
};

QList<HubRepo> parse_search(const QJsonDocument& doc);
// The GGUF files of a tree listing, each judged by its name: its quantization, and whether it is a
// part of a split file (which the engine does not read).
QList<HubFile> parse_tree(const QJsonDocument& doc);
// "Q4_K_M", "Q8_0", "IQ4_XS", "F16", "BF16" from a file name; empty when none.
QString quant_of_file(const QString& name);
// Architectures the engine opens, as GGUF names them (general.architecture).
bool opens_architecture(const QString& architecture);

// A failed request in words a person can act on: the repository gated (accept its licence on its
// page, then give a token), not found, too many requests, the Hub unreachable (offline), ...
// reply: a finished request about repo (and file, when about one); body: what it sent.
QString hub_error_text(QNetworkReply* reply, const QByteArray& body, const QString& repo, const QString& file = {});
// True when the error means "no network" rather than an answer from the Hub.
bool is_offline_error(QNetworkReply::NetworkError error);

// Asks the Hub. Each call answers once through its callback, on the thread the client lives on,
// with an empty error or one from hub_error_text.
class HubClient : public QObject {
    Q_OBJECT
public:
    explicit HubClient(QNetworkAccessManager* network, QObject* parent = nullptr);

    void setEndpoint(const QUrl& endpoint) { endpoint_ = endpoint; }
    QUrl endpoint() const { return endpoint_; }
    void setToken(const QString& token) { token_ = token; }
    QString token() const { return token_; }

    // GET /api/models?search=…&filter=gguf&sort=downloads&direction=-1&limit=…
    void search(const QString& query, int limit,
                std::function<void(const QList<HubRepo>&, const QString& error, bool offline)> done);
    // GET /api/models/{repo} (its gguf.architecture, when the Hub knows it: another family is an
    // error), then GET /api/models/{repo}/tree/main?recursive=true for the files.
    void files(const QString& repo,
               std::function<void(const QList<HubFile>&, const QString& error, bool offline)> done);

private:
    void getJson(const QUrl& url, const QString& repo,
                 std::function<void(const QJsonDocument&, const QString& error, bool offline)> done);

    QNetworkAccessManager* network_;
    QUrl endpoint_;
    QString token_;
};

}  // namespace llamadesk::library
