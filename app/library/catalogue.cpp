#include "catalogue.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace llamadesk::library {

QList<CatalogueFile> read_catalogue(const QByteArray& json, QString* error) {
    QJsonParseError parse;
    const QJsonDocument doc = QJsonDocument::fromJson(json, &parse);
    if (parse.error != QJsonParseError::NoError || !doc.object().value("models").isArray()) {
        *error = "the catalogue is not JSON with a list \"models\": " + parse.errorString();
        return {};
    }
    QList<CatalogueFile> files;
    for (const QJsonValue& m : doc.object().value("models").toArray()) {
        const QJsonObject model = m.toObject();
        CatalogueFile base;
        base.model = model.value("name").toString();
        base.family = model.value("family").toString();
        base.licence = model.value("licence").toString();
        base.parameters = qint64(model.value("parameters").toDouble());
        base.shape.n_layers = model.value("layers").toInt();
        base.shape.n_kv_heads = model.value("kv_heads").toInt();
        base.shape.head_dim = model.value("head_dim").toInt();
        base.shape.context_length = model.value("context").toInt();
        for (const QJsonValue& f : model.value("files").toArray()) {
            const QJsonObject file = f.toObject();
            CatalogueFile entry = base;
            entry.repo = file.value("repo").toString();
            entry.file = file.value("file").toString();
            entry.quant = file.value("quant").toString();
            entry.shape.weight_bytes = qint64(file.value("size").toDouble());
            entry.size_exact = file.value("size_exact").toBool();
            if (entry.repo.isEmpty() || entry.file.isEmpty() || entry.shape.weight_bytes <= 0 ||
                entry.shape.n_layers <= 0) {
                *error = "catalogue entry \"" + base.model + "\" lacks a repo, a file, a size or a shape";
                return {};
            }
            files.append(entry);
        }
    }
    return files;
}

QList<CatalogueFile> recommended_files() {
    QFile f(":/catalogue/recommended.json");
    QString error;
    if (!f.open(QIODevice::ReadOnly)) return {};
    return read_catalogue(f.readAll(), &error);
}

}  // namespace llamadesk::library
