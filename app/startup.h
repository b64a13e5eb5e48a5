// What the command line asks for, and which model to open at start.
#pragma once

#include <QString>
#include <QStringList>

class AppSettings;

struct StartupOptions {
    QString model;       // --model PATH
    QString tokenizer;   // --tokenizer PATH
    QString screenshot;  // --screenshot PATH: answer one prompt, save the window, quit
    QString prompt;      // --prompt TEXT: the screenshot's question
};

StartupOptions parse_startup_options(const QStringList& arguments);

// --model, else the last model used (a file that still exists, or a model on a server), else $LLAMADESK_MODEL, else ../shared/models/stories260K
// beside the source tree when present, else empty (the window shows its welcome screen).
QString startup_model(const StartupOptions& options, const AppSettings& settings);
