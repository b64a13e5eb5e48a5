// The local server's HTTP face, on cpp-httplib (Debian's libcpp-httplib, the library llama.cpp's
// own server is built on): routes, the API key, CORS, limits on body, headers and idle time, and
// answers streamed as server-sent events. Each connection is served by a thread of its own pool,
// which waits on its answer's ApiStream; the engine work is ApiService's.
#pragma once

#include <QString>
#include <QStringList>
#include <atomic>
#include <memory>
#include <thread>

namespace httplib {
class Server;
}

namespace llamadesk::server {

class ApiService;

class HttpListener {
public:
    struct Options {
        QString host = QStringLiteral("127.0.0.1");
        int port = 8080;  // 0: any free port
        // Required for any address but loopback; compared in constant time.
        QString api_key;
        QStringList cors_origins;  // none: no CORS headers, so browsers keep other sites out
        int max_body_bytes = 8 << 20;
        int max_headers = 100;
        int idle_timeout_s = 10;   // a connection silent (or sending nothing whole) this long is closed
        int threads = 64;          // connections served at once; answers are ApiService's limits
        bool log_requests = false; // method, path, status and time; never a prompt or an answer
    };

    HttpListener(ApiService* service, Options options);
    ~HttpListener();

    // Binds and serves on threads of its own; false with the reason (the port taken, another
    // address without an API key).
    bool start(QString* error);
    // Frees the port at once and tells connections to end; stop() also waits for them (at most
    // the idle time of one that is reading a request).
    void close();
    void stop();
    int port() const { return port_; }
    // The base URL clients are given: http://host:port/v1
    QString address() const;

    static bool is_loopback(const QString& host);

private:
    ApiService* service_;
    Options options_;
    std::unique_ptr<httplib::Server> http_;
    std::thread thread_;
    int port_ = 0;
    // Raised by stop(): connections waiting on an answer give up, so their threads can end.
    std::shared_ptr<std::atomic<bool>> stopping_ = std::make_shared<std::atomic<bool>>(false);
};

}  // namespace llamadesk::server
