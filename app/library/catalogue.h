// The list Recommended: a few well-known GGUF files on the Hugging Face Hub, shipped with the app
// (resources/catalogue/recommended.json), each with the shape that says whether it fits here.
#pragma once

#include <QList>
#include <QString>

#include "llamadesk/engine.h"

namespace llamadesk::library {

struct CatalogueFile {
    QString model;    // "Llama 3.2 1B Instruct"
    QString family;   // "Llama 3.2"
    QString licence;  // the Hub's licence id: "llama3.2", "apache-2.0"
    QString repo;     // "bartowski/Llama-3.2-1B-Instruct-GGUF"
    QString file;     // "Llama-3.2-1B-Instruct-Q4_K_M.gguf"
    QString quant;    // "Q4_K_M"
    qint64 parameters = 0;
    bool size_exact = false;  // false: the model card's rounded figure, until the Hub says
    ModelShape shape;         // weight_bytes: the file's size
};

// The catalogue's files, in its order; an empty list and *error when the JSON is not one.
QList<CatalogueFile> read_catalogue(const QByteArray& json, QString* error);
// The catalogue shipped with the app.
QList<CatalogueFile> recommended_files();

}  // namespace llamadesk::library
