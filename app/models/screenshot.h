// --screenshot: once the model is loaded, ask one question; when the answer is done, print the
// question and the answer on stdout, save the window as a PNG and quit. Used to keep the README's picture current (run it with
// QT_QPA_PLATFORM=offscreen).
#pragma once

#include <QString>

class AppContext;
class QQmlApplicationEngine;

void capture_screenshot_after_answer(QQmlApplicationEngine* engine, AppContext* app,
                                     const QString& prompt, const QString& path);
