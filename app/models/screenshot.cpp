#include "models/screenshot.h"

#include <QGuiApplication>
#include <QImage>
#include <QQmlApplicationEngine>
#include <QQuickWindow>
#include <QTimer>
#include <cstdio>

#include "app_context.h"

namespace {

void save_and_quit(QQmlApplicationEngine* engine, const QString& path) {
    auto* window = engine->rootObjects().isEmpty() ? nullptr
                                                   : qobject_cast<QQuickWindow*>(engine->rootObjects().first());
    const bool saved = window && window->grabWindow().save(path);
    if (!saved)
        qWarning("could not save the screenshot to %s", qPrintable(path));
    QCoreApplication::exit(saved ? 0 : 1);
}

}  // namespace

void capture_screenshot_after_answer(QQmlApplicationEngine* engine, AppContext* app,
                                     const QString& prompt, const QString& path) {
    QObject::connect(app->model(), &ModelController::modelChanged, app, [app, prompt] {
        app->composer()->send(prompt);
    });
    // The answer's end, not generatingChanged, which also fires when the new conversation is shown
    // before the question is sent (a slow answer was then cut off, empty). A refused question ends too.
    auto answered = [engine, app, prompt, path] {
        // The exchange goes to stdout too, so scripts can check what the model answered.
        MessageListModel* messages = app->conversations()->messages();
        const QString answer =
            messages->data(messages->index(messages->rowCount() - 1), MessageListModel::TextRole).toString();
        std::printf("%s\n%s\n", qPrintable(prompt), qPrintable(answer));
        std::fflush(stdout);
        // let the last frame of the answer render first
        QTimer::singleShot(400, engine, [engine, path] { save_and_quit(engine, path); });
    };
    QObject::connect(app->generation(), &Generation::answerEnded, engine, answered);
    QObject::connect(app->generation(), &Generation::refused, engine, answered);
    QObject::connect(app->model(), &ModelController::loadingChanged, engine, [engine, app, path] {
        if (!app->model()->loading() && !app->model()->hasModel())
            QTimer::singleShot(400, engine, [engine, path] { save_and_quit(engine, path); });
    });
}
