// llamadesk-server: the engine served over the OpenAI-compatible API, without a window. The same
// worker, service and listener the window's Local server uses; with no --model, the built-in one.
#include <QCommandLineParser>
#include <QCoreApplication>
#include <QThread>
#include <QTimer>
#include <csignal>
#include <cstdio>

#include <llamadesk/builtin_model.h>

#include "server/api_service.h"
#include "server/http_listener.h"
#include "worker/cancel_flags.h"
#include "worker/inference_worker.h"

using namespace llamadesk;

namespace {

[[noreturn]] void usage_error(const QString& message) {
    std::fprintf(stderr, "llamadesk-server: %s (see --help)\n", qPrintable(message));
    std::exit(2);
}

int whole_number(const QCommandLineParser& args, const QString& name, int fallback, int min, int max) {
    if (!args.isSet(name)) return fallback;
    bool ok = false;
    const int value = args.value(name).toInt(&ok);
    if (!ok || value < min || value > max)
        usage_error(QStringLiteral("--%1 must be a whole number from %2 to %3, not '%4'")
                        .arg(name).arg(min).arg(max).arg(args.value(name)));
    return value;
}

// Only a flag is safe to set in a signal handler; the event loop looks at it.
volatile std::sig_atomic_t g_signalled = 0;
void note_signal(int) { g_signalled = 1; }

}  // namespace

int main(int argc, char** argv) {
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName("llamadesk-server");

    QCommandLineParser args;
    args.setApplicationDescription(
        "Serves a model over the OpenAI-compatible API: /v1/chat/completions, /v1/completions, /v1/models, "
        "/health and /metrics. Without --model it serves the built-in model, LlamaDesk Guide.");
    args.addHelpOption();
    args.addOptions({
        {"model", "The checkpoint to serve (GGUF, a Hugging Face or Meta folder, llama2.c).", "PATH"},
        {"tokenizer", "A tokenizer.model for a checkpoint without its own vocabulary.", "PATH"},
        {"host", "The address to listen on (default 127.0.0.1; any other needs --api-key).", "HOST", "127.0.0.1"},
        {"port", "The port (default 8080; 0: any free one).", "N", "8080"},
        {"api-key", "Clients must send 'Authorization: Bearer KEY' (also read from $LLAMADESK_API_KEY).", "KEY"},
        {"ctx-size", "At most this many positions per conversation (default: the model's, within memory).", "N"},
        {"parallel", "Answers decoded together in one batch (default 4).", "N"},
        {"queue", "Requests that may wait beyond those; more get 429 (default 64).", "N"},
        {"kv-type", "The KV cache's element type: f16 (default), f32 or q8_0.", "T", "f16"},
        {"kv-bytes", "The KV pool's memory budget in MiB (default: four contexts, at most 1 GiB).", "MIB"},
        {"threads", "CPU threads (default: one per physical core).", "N"},
        {"cors", "Allow browser pages from this origin (repeatable); none by default.", "ORIGIN"},
        {"log-requests", "Log each request's method, path and status (never its text)."},
    });
    args.process(app);
    if (!args.positionalArguments().isEmpty())
        usage_error(QStringLiteral("unexpected argument '%1'").arg(args.positionalArguments().first()));

    QString model = args.value("model");
    if (model.isEmpty()) model = QString::fromStdString(builtin_model_path());
    if (model.isEmpty()) usage_error("no --model given and the built-in model is not installed");
    KvCacheType kv_type;
    if (!parse_kv_cache_type(args.value("kv-type").toStdString(), &kv_type))
        usage_error(QStringLiteral("--kv-type must be f16, f32 or q8_0, not '%1'").arg(args.value("kv-type")));

    server::HttpListener::Options options;
    options.host = args.value("host");
    options.port = whole_number(args, "port", 8080, 0, 65535);
    options.api_key = args.isSet("api-key") ? args.value("api-key") : qEnvironmentVariable("LLAMADESK_API_KEY");
    options.cors_origins = args.values("cors");
    options.log_requests = args.isSet("log-requests");
    server::ApiService::Limits limits;
    limits.parallel = whole_number(args, "parallel", limits.parallel, 1, 256);
    limits.queue = whole_number(args, "queue", limits.queue, 0, 100000);
    const int context = whole_number(args, "ctx-size", 0, 16, 1 << 24);
    const int threads = whole_number(args, "threads", 0, 1, 4096);
    const qint64 kv_bytes = qint64(whole_number(args, "kv-bytes", 0, 1, 1 << 30)) << 20;

    CancelFlags cancel;
    QThread worker_thread;
    worker_thread.setObjectName("inference");
    auto* worker = new InferenceWorker(&cancel);
    worker->moveToThread(&worker_thread);
    QObject::connect(&worker_thread, &QThread::finished, worker, &QObject::deleteLater);
    server::ApiService service(worker, &cancel, limits);

    QObject::connect(worker, &InferenceWorker::modelLoaded, &app,
                     [](const QString&, const QString&, const ModelInfo& info) {
                         std::fprintf(stderr, "llamadesk-server: serving %s (%s, %s, context %d)\n", info.name.c_str(),
                                      info.weight_types.c_str(), info.device.c_str(), info.context_length);
                     });
    QObject::connect(worker, &InferenceWorker::loadFailed, &app, [&app](const QString& path, int, const QString& message) {
        std::fprintf(stderr, "llamadesk-server: cannot serve %s: %s\n", qPrintable(path), qPrintable(message));
        app.exit(1);
    });

    server::HttpListener listener(&service, options);
    QString error;
    if (!listener.start(&error)) {
        std::fprintf(stderr, "llamadesk-server: %s\n", qPrintable(error));
        return 1;
    }
    // The address first, on its own line, so scripts can read it; /health says 503 until loaded.
    std::printf("listening on %s\n", qPrintable(listener.address()));
    std::fflush(stdout);

    worker_thread.start();
    QMetaObject::invokeMethod(worker, [=, tokenizer = args.value("tokenizer")] {
        worker->loadModel(model, tokenizer, threads, kv_bytes, kv_type, context, 0, QString());
    });
    std::signal(SIGINT, note_signal);
    std::signal(SIGTERM, note_signal);
    QTimer signal_check;
    QObject::connect(&signal_check, &QTimer::timeout, &app, [] {
        if (g_signalled) QCoreApplication::quit();
    });
    signal_check.start(100);
    const int code = app.exec();

    listener.stop();
    cancel.raiseAll();
    worker_thread.quit();
    worker_thread.wait();
    return code;
}
