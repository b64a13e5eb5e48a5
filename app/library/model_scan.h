// The list "On this computer": every checkpoint in the folders other apps keep models in, and the
// ones opened before, each as its header describes it (or why it would not open). Opened where it
// lies: nothing is copied.
#pragma once

#include <QList>
#include <QString>
#include <QStringList>

#include "llamadesk/engine.h"
#include "model_folders.h"

namespace llamadesk::library {

struct LocalModel {
    QString path;  // what loading opens: a .gguf (or an Ollama blob), or a Hugging Face folder
    QString name;  // as the person knows it: "org/repo · file.gguf", "llama3.2:1b", a file name
    ModelSource source = ModelSource::Recent;
    bool opened_before = false;  // also in the recent list
    qint64 size = 0;             // bytes on disk
    bool openable = false;
    QString reason;              // why it would not open, when it would not
    CheckpointSummary summary;   // when openable
};

// Reads the folders and inspects each checkpoint's header (a few milliseconds each; headers seen
// before, unchanged, are not read again). Blocks: run it off the window's thread. Missing and
// unreadable folders are skipped; a broken link is listed with its target.
QList<LocalModel> scan_models(const QList<ModelFolder>& folders, const QStringList& recent);

}  // namespace llamadesk::library
