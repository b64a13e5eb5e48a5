#include "server/http_listener.h"

#include <QHostAddress>
#include <chrono>
#include <csignal>
#include <httplib.h>

#include "server/api_service.h"

namespace llamadesk::server {

namespace {

using namespace std::chrono_literals;

// How long a connection's thread waits for its answer's next event before it looks again.
constexpr auto kPoll = 100ms;

void send_error(httplib::Response& res, const ApiError& error) {
    res.status = error.status;
    if (error.retry_after_s > 0) res.set_header("Retry-After", std::to_string(error.retry_after_s));
    res.set_content(error_body(error).toStdString(), "application/json");
}

// Compares every byte whatever the first difference, so timing tells nothing of the key.
bool same_secret(const std::string& given, const std::string& key) {
    unsigned char diff = given.size() == key.size() ? 0 : 1;
    for (size_t i = 0; i < given.size(); ++i) diff |= uint8_t(given[i] ^ key[i % std::max<size_t>(1, key.size())]);
    return diff == 0 && !key.empty();
}

QString status_words(int status) {
    switch (status) {
    case 400: return QStringLiteral("the request could not be read");
    case 404: return QStringLiteral("no such endpoint: this server answers /v1/chat/completions, /v1/completions, "
                                    "/v1/models, /health and /metrics");
    case 405: return QStringLiteral("this method is not allowed here");
    case 413: return QStringLiteral("the request body is too large");
    case 414: return QStringLiteral("the request URI is too long");
    default: return QStringLiteral("HTTP error %1").arg(status);
    }
}

std::string sse(const QByteArray& payload) { return "data: " + payload.toStdString() + "\n\n"; }

// What a streamed answer's connection holds between the provider's calls.
struct StreamState {
    std::shared_ptr<ApiStream> stream;
    std::optional<ApiEvent> first;  // taken before the headers went out
    bool started = false;           // a chunk went out: the next ones carry no role
    bool include_usage = false;
    std::shared_ptr<std::atomic<bool>> stopping;
};

// Waits for the answer's next event; false (the answer stopped) when the server is stopping.
bool next_event(ApiStream& stream, ApiEvent* out, const std::atomic<bool>& stopping) {
    while (!stream.next(out, kPoll))
        if (stopping) {
            stream.cancel();
            return false;
        }
    return true;
}

// The error an event ends its answer with: the answer refused or failed, or its request given up.
std::optional<ApiError> failure_of(const ApiEvent& e) {
    if (e.kind == ApiEvent::Kind::Failed) return e.error;
    if (e.kind == ApiEvent::Kind::Finished && !e.result.status.ok()) return error_of(e.result.status);
    return std::nullopt;
}

ApiError shutting_down() {
    return api_error(503, QStringLiteral("the server is stopping"));
}

}  // namespace

HttpListener::HttpListener(ApiService* service, Options options)
    : service_(service), options_(std::move(options)), http_(std::make_unique<httplib::Server>()) {}

HttpListener::~HttpListener() { stop(); }

bool HttpListener::is_loopback(const QString& host) {
    if (host == QLatin1String("localhost")) return true;
    const QHostAddress address(host);
    return !address.isNull() && address.isLoopback();
}

QString HttpListener::address() const {
    QString host = options_.host;
    if (host == QLatin1String("0.0.0.0") || host == QLatin1String("::")) host = QStringLiteral("127.0.0.1");
    if (host.contains(':')) host = '[' + host + ']';
    return QStringLiteral("http://%1:%2/v1").arg(host).arg(port_);
}

bool HttpListener::start(QString* error) {
    if (!is_loopback(options_.host) && options_.api_key.isEmpty()) {
        *error = QStringLiteral("listening on %1 lets other computers in, so it needs an API key (--api-key, or "
                                "the key in Settings)").arg(options_.host);
        return false;
    }
    // A client that goes away mid-answer must end a write with an error, not end the process.
    std::signal(SIGPIPE, SIG_IGN);

    httplib::Server& http = *http_;
    const int threads = options_.threads;
    http.new_task_queue = [threads] { return new httplib::ThreadPool(size_t(threads)); };
    http.set_payload_max_length(size_t(options_.max_body_bytes));
    http.set_read_timeout(options_.idle_timeout_s, 0);
    http.set_write_timeout(options_.idle_timeout_s, 0);
    // An idle kept-alive connection holds its thread this long, and so delays a stop.
    http.set_keep_alive_timeout(1);
    // Measured on loopback: with Nagle's algorithm on, every small response waited about 43 ms
    // for a delayed ACK (headers and body go out as two writes); and a client may keep its
    // connection for as many requests as it likes, not the library's 5.
    http.set_tcp_nodelay(true);
    http.set_keep_alive_max_count(100000);

    const std::string key = options_.api_key.toStdString();
    const int max_headers = options_.max_headers;
    std::vector<std::string> origins;
    for (const QString& o : options_.cors_origins) origins.push_back(o.toStdString());

    http.set_pre_routing_handler([=](const httplib::Request& req, httplib::Response& res) {
        if (int(req.headers.size()) > max_headers) {
            send_error(res, api_error(431, QStringLiteral("the request has %1 headers; at most %2 are read")
                                               .arg(req.headers.size()).arg(max_headers)));
            return httplib::Server::HandlerResponse::Handled;
        }
        const std::string origin = req.get_header_value("Origin");
        if (!origin.empty() && std::find(origins.begin(), origins.end(), origin) != origins.end()) {
            res.set_header("Access-Control-Allow-Origin", origin);
            res.set_header("Vary", "Origin");
            if (req.method == "OPTIONS") {
                res.set_header("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
                res.set_header("Access-Control-Allow-Headers", "Authorization, Content-Type");
                res.set_header("Access-Control-Max-Age", "600");
                res.status = 204;
                return httplib::Server::HandlerResponse::Handled;
            }
        }
        if (!key.empty() && req.path != "/health") {
            std::string given = req.get_header_value("Authorization");
            if (given.rfind("Bearer ", 0) == 0) given.erase(0, 7);
            if (!same_secret(given, key)) {
                res.set_header("WWW-Authenticate", "Bearer");
                send_error(res, api_error(401,
                                          given.empty() ? QStringLiteral("an API key is required: send it as "
                                                                         "'Authorization: Bearer KEY'")
                                                        : QStringLiteral("the API key is not this server's"),
                                          {}, "invalid_api_key"));
                return httplib::Server::HandlerResponse::Handled;
            }
        }
        return httplib::Server::HandlerResponse::Unhandled;
    });

    http.Get("/health", [this](const httplib::Request&, httplib::Response& res) {
        const ApiService::ModelState model = service_->model();
        const char* status = model.loading ? "loading model" : model.loaded ? "ok" : "no model";
        res.status = model.loaded && !model.loading ? 200 : 503;
        if (res.status == 503) res.set_header("Retry-After", "5");
        res.set_content(std::string("{\"status\":\"") + status + "\"}", "application/json");
    });
    const auto models = [this](const httplib::Request&, httplib::Response& res) {
        const ApiService::ModelState model = service_->model();
        res.set_content(models_body(model.loaded ? model.name : QString(), model.created).toStdString(),
                        "application/json");
    };
    http.Get("/v1/models", models);
    http.Get("/models", models);
    http.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
        res.set_content(service_->metrics().toStdString(), "text/plain; version=0.0.4");
    });

    const auto answer = [this](Endpoint endpoint) {
        return [this, endpoint, stopping_ = stopping_](const httplib::Request& req, httplib::Response& res) {
            std::variant<ApiRequest, ApiError> parsed =
                parse_request(endpoint, QByteArray::fromRawData(req.body.data(), qsizetype(req.body.size())),
                              service_->sampling_defaults());
            if (const ApiError* e = std::get_if<ApiError>(&parsed)) return send_error(res, *e);
            const bool stream_it = std::get<ApiRequest>(parsed).stream;
            const bool include_usage = std::get<ApiRequest>(parsed).include_usage;
            auto submitted = service_->submit(std::get<ApiRequest>(std::move(parsed)), QString::fromStdString(req.remote_addr));
            if (const ApiError* e = std::get_if<ApiError>(&submitted)) return send_error(res, *e);
            std::shared_ptr<ApiStream> stream = std::get<std::shared_ptr<ApiStream>>(std::move(submitted));

            // The status goes out with the first event: an answer refused before its first token
            // (a prompt over the context) is an error response, not a stream.
            ApiEvent first;
            if (!next_event(*stream, &first, *stopping_)) return send_error(res, shutting_down());
            if (const std::optional<ApiError> failed = failure_of(first)) return send_error(res, *failed);

            if (!stream_it) {
                std::string text;
                for (ApiEvent e = std::move(first);; ) {
                    if (const std::optional<ApiError> failed = failure_of(e)) return send_error(res, *failed);
                    if (e.kind == ApiEvent::Kind::Piece) text += e.text;
                    if (e.kind == ApiEvent::Kind::Finished) {
                        res.set_content(answer_body(stream->header(), text, finish_reason(e.result.stop_reason),
                                                    usage_of(e.result.stats)).toStdString(),
                                        "application/json");
                        return;
                    }
                    if (!next_event(*stream, &e, *stopping_)) return send_error(res, shutting_down());
                }
            }

            auto state = std::make_shared<StreamState>();
            state->stopping = stopping_;
            state->stream = stream;
            state->first = std::move(first);
            state->include_usage = include_usage;
            res.set_header("Cache-Control", "no-cache");
            res.set_header("X-Accel-Buffering", "no");
            res.set_chunked_content_provider(
                "text/event-stream",
                [state](size_t, httplib::DataSink& sink) {
                    ApiEvent e;
                    if (state->first) {
                        e = std::move(*state->first);
                        state->first.reset();
                    } else if (!state->stream->next(&e, kPoll)) {
                        return !*state->stopping;  // asked again while nothing came
                    }
                    const AnswerHeader& header = state->stream->header();
                    std::string out;
                    if (e.kind == ApiEvent::Kind::Piece) {
                        if (e.text.empty() && state->started) return true;
                        out = sse(chunk_body(header, e.text, QString(), !state->started));
                        state->started = true;
                    } else if (const std::optional<ApiError> failed = failure_of(e)) {
                        out = sse(error_body(*failed)) + "data: [DONE]\n\n";
                    } else {
                        const GenerationResult& r = e.result;
                        out = sse(chunk_body(header, std::string(), finish_reason(r.stop_reason), !state->started));
                        if (state->include_usage) out += sse(usage_chunk_body(header, usage_of(r.stats)));
                        out += "data: [DONE]\n\n";
                    }
                    if (!sink.write(out.data(), out.size())) return false;  // gone: the releaser stops it
                    if (e.kind != ApiEvent::Kind::Piece) sink.done();
                    return true;
                },
                [state](bool success) {
                    if (!success) state->stream->cancel();  // the client left: the answer stops
                });
        };
    };
    http.Post("/v1/chat/completions", answer(Endpoint::Chat));
    http.Post("/chat/completions", answer(Endpoint::Chat));
    http.Post("/v1/completions", answer(Endpoint::Completion));
    http.Post("/completions", answer(Endpoint::Completion));

    http.set_error_handler([](const httplib::Request&, httplib::Response& res) {
        if (res.body.empty())
            send_error(res, api_error(res.status, status_words(res.status)));
    });
    http.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
        send_error(res, api_error(500, QStringLiteral("the server failed on this request")));
    });
    const bool log = options_.log_requests;
    http.set_logger([this, log](const httplib::Request& req, const httplib::Response& res) {
        service_->count_response(res.status);
        if (log) qInfo("%s %s %s %d", req.remote_addr.c_str(), req.method.c_str(), req.path.c_str(), res.status);
    });

    const std::string host = options_.host.toStdString();
    if (options_.port == 0) {
        port_ = http.bind_to_any_port(host);
    } else {
        port_ = http.bind_to_port(host, options_.port) ? options_.port : -1;
    }
    if (port_ <= 0) {
        *error = QStringLiteral("could not listen on %1 port %2: %3")
                     .arg(options_.host)
                     .arg(options_.port)
                     .arg(options_.port ? QStringLiteral("the port is taken, or the address is not this computer's")
                                        : QStringLiteral("no free port"));
        return false;
    }
    auto ended = std::make_shared<std::atomic<bool>>(false);
    thread_ = std::thread([&http, ended] {
        http.listen_after_bind();
        *ended = true;
    });
    // cpp-httplib's stop() does nothing until the loop runs, and would leave it waiting in accept().
    while (!http.is_running() && !*ended) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return true;
}

void HttpListener::close() {
    *stopping_ = true;
    http_->stop();
}

void HttpListener::stop() {
    if (!thread_.joinable()) return;
    close();
    thread_.join();
}

}  // namespace llamadesk::server
