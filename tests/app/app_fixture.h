// A real AppContext (worker thread, engine, controllers) in temporary folders, and helpers to
// send a message and wait for the answer.
#pragma once

#include <QObject>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTimer>
#include <QEventLoop>
#include <functional>
#include <QTest>
#include <memory>

#include "app_context.h"

// Runs the event loop until done() holds or timeout_ms pass. Unlike QTest::qWaitFor, which
// sleeps 10 ms between checks, the GUI thread here never sleeps, so stalls measured meanwhile
// are the application's own.
inline bool wait_until(const std::function<bool()>& done, int timeout_ms) {
    QEventLoop loop;
    QTimer poll;
    poll.setInterval(1);
    QObject::connect(&poll, &QTimer::timeout, &loop, [&] {
        if (done())
            loop.quit();
    });
    QTimer::singleShot(timeout_ms, &loop, &QEventLoop::quit);
    poll.start();
    if (!done())
        loop.exec();
    return done();
}

class AppFixture : public QObject {
    Q_OBJECT
public:
    struct Finished {
        QString key;
        llamadesk::GenerationResult result;
        int n_turns = 0;
    };

    // root: where data and settings live; empty: a fresh temporary folder.
    explicit AppFixture(const QString& root = {}) {
        QStandardPaths::setTestModeEnabled(true);
        const QString base = root.isEmpty() ? dir.path() : root;
        app = std::make_unique<AppContext>(AppPaths{base + "/data", base + "/settings.ini"});
        connect(app->worker(), &InferenceWorker::generationFinished, this,
                [this](const QString& key, const llamadesk::GenerationResult& r, int n) {
                    finished.append({key, r, n});
                });
    }

    // Loads a model and waits until the worker has answered (loaded or failed).
    bool load(const QString& path, int timeout_ms = 120000) {
        app->model()->load(path, {});
        return wait_until([this] { return !app->model()->loading(); }, timeout_ms);
    }

    // Sends text in the current conversation and waits for its answer.
    const Finished* sendAndWait(const QString& text, int timeout_ms = 120000) {
        const qsizetype before = finished.size();
        app->composer()->send(text);
        return waitForAnswer(before, timeout_ms);
    }

    // Waits for the answer after the first `before` ones, and for the controller to have seen it.
    // The pointer is valid until the next answer arrives.
    const Finished* waitForAnswer(qsizetype before, int timeout_ms = 120000) {
        if (!wait_until([&] { return finished.size() > before && !app->generation()->generating(); }, timeout_ms))
            return nullptr;
        return &finished[before];
    }

    QTemporaryDir dir;
    std::unique_ptr<AppContext> app;
    QList<Finished> finished;
};
