#include "remote_mode.h"

#include <QCoreApplication>
#include <QFile>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "core/error.h"
#include "endpoint.h"
#include "interrupt.h"
#include "remote_session.h"

namespace llamadesk::cli {

namespace {

using namespace llamadesk::remote;

QString read_key(const std::string& path) {
    if (path.empty()) return QString();
    QFile file(QString::fromStdString(path));
    if (!file.open(QIODevice::ReadOnly))
        fail(ErrorCode::FileNotFound, "cannot read the API key file '" + path + "': " + file.errorString().toStdString());
    return QString::fromUtf8(file.readAll()).trimmed();
}

// The model asked for, else the server's only one.
QString choose_model(RemoteSession& session, const std::string& asked) {
    if (!asked.empty()) return QString::fromStdString(asked);
    QString error;
    const std::optional<QStringList> models = session.models(&error);
    if (!models) fail(ErrorCode::BackendUnavailable, error.toStdString());
    if (models->size() != 1)
        fail(ErrorCode::InvalidArgument, "the server serves " + std::to_string(models->size()) +
                                             " models; choose one with --model: " + models->join(", ").toStdString());
    return models->first();
}

std::string reported(const std::optional<int>& count) {
    return count ? std::to_string(*count) : std::string("not reported by the server");
}

void print_stats(RemoteSession& session, const StreamResult& r) {
    const StreamFigures& f = r.figures;
    const double pieces_per_s = f.pieces >= 2 && f.streaming_ms > 0 ? (f.pieces - 1) / (f.streaming_ms / 1000.0) : 0;
    const std::optional<double> tokens_per_s = f.tokens_per_second();
    const std::optional<double> kv = session.kv_cache_usage();
    const std::optional<Usage>& u = f.usage;
    std::fprintf(stderr,
                 "\n[stats] server %s, finish: %s | measured here: first text after %.1f ms, %d text pieces in "
                 "%.1f ms (%.1f pieces/s)\n"
                 "[stats] from the server: prompt tokens: %s | completion tokens: %s | prompt tokens its cache "
                 "held: %s | tokens/s: %s | its KV cache in use: %s\n",
                 host_and_port(session.endpoint().base_url).toUtf8().constData(),
                 r.cancelled ? "stopped" : r.finish_reason.isEmpty() ? "none" : r.finish_reason.toUtf8().constData(),
                 f.time_to_first_piece_ms, f.pieces, f.streaming_ms, pieces_per_s,
                 reported(u ? std::optional<int>(u->prompt_tokens) : std::nullopt).c_str(),
                 reported(u ? std::optional<int>(u->completion_tokens) : std::nullopt).c_str(),
                 reported(u ? u->cached_tokens : std::nullopt).c_str(),
                 tokens_per_s ? QString::number(*tokens_per_s, 'f', 1).toStdString().c_str() : "not reported by the server",
                 kv ? QString::number(*kv * 100, 'f', 1).append(" %").toStdString().c_str() : "not reported by the server");
}

void print_piece(const QString& piece, const StreamFigures&) {
    const QByteArray bytes = piece.toUtf8();
    std::fwrite(bytes.data(), 1, size_t(bytes.size()), stdout);
    std::fflush(stdout);
}

int run_prompt(RemoteSession& session, const Options& o) {
    std::fwrite(o.text.data(), 1, o.text.size(), stdout);
    StreamResult r;
    {
        InterruptGuard guard;
        r = session.complete(QString::fromStdString(o.text), o.generate, print_piece, InterruptGuard::flag());
    }
    std::fputc('\n', stderr);  // stdout stays exactly prompt + text
    if (o.stats) print_stats(session, r);
    if (!r.error.isEmpty()) {
        std::fprintf(stderr, "llamadesk-cli: error: %s\n", r.error.toUtf8().constData());
        return 1;
    }
    return 0;
}

int run_chat(RemoteSession& session, const Options& o) {
    std::vector<Message> history;
    if (!o.generate.system_prompt.empty()) history.push_back({"system", QString::fromStdString(o.generate.system_prompt)});
    const size_t start = history.size();
    std::fprintf(stderr, "[llamadesk] chat with %s on %s: type a message; /new starts over, /quit ends\n",
                 session.endpoint().model.toUtf8().constData(),
                 host_and_port(session.endpoint().base_url).toUtf8().constData());
    std::string line;
    for (;;) {
        std::fprintf(stderr, "> ");
        if (!std::getline(std::cin, line) || line == "/quit") break;
        if (line == "/new") {
            history.resize(start);
            std::fprintf(stderr, "[llamadesk] new conversation\n");
            continue;
        }
        if (line.empty()) continue;
        history.push_back({"user", QString::fromStdString(line)});
        StreamResult r;
        {
            InterruptGuard guard;
            r = session.chat(history, o.generate, print_piece, InterruptGuard::flag());
        }
        std::printf("\n");
        std::fflush(stdout);
        // What came back stays in the history, cut or not; a message that got nothing is taken back.
        if (r.text.isEmpty() && !r.error.isEmpty())
            history.pop_back();
        else
            history.push_back({"assistant", r.text});
        if (!r.error.isEmpty()) std::fprintf(stderr, "llamadesk-cli: error: %s\n", r.error.toUtf8().constData());
        if (o.stats) print_stats(session, r);
    }
    return 0;
}

}  // namespace

int run_remote(const Options& o, int argc, char** argv) {
    QCoreApplication app(argc, argv);  // Qt Network needs one; the client runs on its own thread
    Endpoint endpoint{QUrl::fromUserInput(QString::fromStdString(o.remote.url)), read_key(o.remote.api_key_file), {}};
    if (const QString bad = check_base_url(endpoint.base_url); !bad.isEmpty())
        fail(ErrorCode::InvalidArgument, bad.toStdString());
    if (const QString warning = plain_http_warning(endpoint.base_url); !warning.isEmpty())
        std::fprintf(stderr, "[llamadesk] warning: %s\n", warning.toUtf8().constData());
    const int timeout_ms = o.remote.timeout_s * 1000;
    RemoteSession probe(endpoint, timeout_ms);
    endpoint.model = choose_model(probe, o.remote.model);
    RemoteSession session(endpoint, timeout_ms);
    return o.mode == Mode::Prompt ? run_prompt(session, o) : run_chat(session, o);
}

}  // namespace llamadesk::cli
