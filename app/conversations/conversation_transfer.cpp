#include "conversations/conversation_transfer.h"

#include <QClipboard>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QGuiApplication>
#include <QRegularExpression>
#include <QSaveFile>
#include <QStandardPaths>
#include <QUuid>

#include "conversations/conversation_list.h"

namespace {

QString conversations(qsizetype n) {
    return n == 1 ? ConversationTransfer::tr("1 conversation") : ConversationTransfer::tr("%1 conversations").arg(n);
}

}  // namespace

ConversationTransfer::ConversationTransfer(ConversationList* list, QObject* parent) : QObject(parent), list_(list) {}

ConversationExport ConversationTransfer::exportOf(const ConversationRecord& c) const {
    return {c, list_->settings()->systemPromptOf(c.id), list_->settings()->samplingOf(c.id)};
}

QUrl ConversationTransfer::startFolder() {
    const QString documents = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
    return QUrl::fromLocalFile(!documents.isEmpty() && QFileInfo(documents).isDir() ? documents : QDir::homePath());
}

bool ConversationTransfer::write(const QUrl& file, const QByteArray& bytes, const QString& what) {
    const QString path = file.isLocalFile() ? file.toLocalFile() : file.toString();
    QDir().mkpath(QFileInfo(path).absolutePath());  // a typed folder that is not there yet
    QSaveFile out(path);
    // flush() first: see ConversationStore::save (Qt 6.4's commit() hides a full disk).
    if (!out.open(QIODevice::WriteOnly) || out.write(bytes) != bytes.size() || !out.flush() || !out.commit()) {
        emit failed(tr("Could not export %1 to %2: %3. Nothing was changed.").arg(what, path, out.errorString()));
        return false;
    }
    emit done(tr("Exported %1 to %2").arg(what, path));
    return true;
}

bool ConversationTransfer::exportMarkdown(int row, const QUrl& file) {
    const ConversationItem* c = list_->model()->at(row);
    return c && write(file, export_markdown(exportOf(*c)).toUtf8(), "“" + c->title + "”");
}

bool ConversationTransfer::exportJson(int row, const QUrl& file) {
    const ConversationItem* c = list_->model()->at(row);
    return c && write(file, export_json({exportOf(*c)}), "“" + c->title + "”");
}

bool ConversationTransfer::exportAll(const QUrl& file) {
    QList<ConversationExport> all;
    for (int row = 0; row < list_->model()->rowCount(); ++row)
        all.append(exportOf(*list_->model()->at(row)));
    return write(file, export_json(all, list_->presets()->all()), conversations(all.size()));
}

int ConversationTransfer::importFile(const QUrl& file) {
    const QString path = file.isLocalFile() ? file.toLocalFile() : file.toString();
    QFile in(path);
    QString error;
    std::optional<QList<ConversationExport>> imported;
    QList<Preset> presets;
    if (in.open(QIODevice::ReadOnly))
        imported = import_json(in.readAll(), &error, &presets);
    else
        error = in.errorString();
    for (int i = 0; imported && i < presets.size(); ++i)
        if (QString why = ConversationSettings::samplingError(presets[i].sampling); !why.isEmpty()) {
            error = tr("preset “%1”: %2").arg(presets[i].name, why);
            imported.reset();
        }
    // Checked as a whole first, so a bad file adds nothing.
    for (int i = 0; imported && i < imported->size(); ++i)
        if (QString why = ConversationSettings::samplingError((*imported)[i].sampling); !why.isEmpty()) {
            error = tr("conversation %1: %2").arg(i + 1).arg(why);
            imported.reset();
        }
    if (!imported) {
        emit failed(tr("Could not import %1: %2. Nothing was added.").arg(path, error));
        return 0;
    }
    // The file's order is the list's (newest first); prepending from the end keeps it.
    for (auto it = imported->rbegin(); it != imported->rend(); ++it) {
        ConversationRecord c = std::move(it->conversation);
        // Always a new id: importing a file twice, or beside its own original, replaces nothing.
        c.id = QUuid::createUuid().toString(QUuid::WithoutBraces);
        list_->settings()->assign(c.id, it->system_prompt, it->sampling);
        list_->addConversation(std::move(c));
    }
    // Presets of a name not kept yet come in too; one kept already stays as it is.
    for (const Preset& p : presets)
        if (!list_->presets()->find(p.name))
            list_->presets()->put(p);
    list_->selectConversation(0);  // the first of them, so the person sees what came in
    emit done(tr("Imported %1 from %2").arg(conversations(imported->size()), path));
    return int(imported->size());
}

QString ConversationTransfer::suggestedName(int row, const QString& extension) const {
    const ConversationItem* c = row >= 0 ? list_->model()->at(row) : nullptr;
    QString name = row < 0 ? tr("LlamaDesk conversations") : c ? c->title : QStringLiteral("conversation");
    name.remove(QRegularExpression(QStringLiteral(R"([*?"<>|\x00-\x1f])")));
    name.replace(QRegularExpression(QStringLiteral(R"([/\\:])")), QStringLiteral("-"));
    return name.left(80).trimmed() + "." + extension;
}

QString ConversationTransfer::suggestedPath(int row, const QString& extension) const {
    return QDir(startFolder().toLocalFile()).filePath(suggestedName(row, extension));
}

QUrl ConversationTransfer::targetOf(const QString& typed, int row, const QString& extension) const {
    QString path = typed.trimmed();
    if (path == "~" || path.startsWith("~/"))
        path = QDir::homePath() + path.mid(1);
    path = QDir(startFolder().toLocalFile()).absoluteFilePath(path);
    if (path.isEmpty() || typed.trimmed().endsWith('/') || QFileInfo(path).isDir())
        path = QDir(path).filePath(suggestedName(row, extension));
    else if (QFileInfo(path).suffix().isEmpty())
        path += "." + extension;
    return QUrl::fromLocalFile(QDir::cleanPath(path));
}

QString ConversationTransfer::inFolder(const QString& typed, const QUrl& folder) {
    return QDir(folder.toLocalFile()).filePath(QFileInfo(typed.trimmed()).fileName());
}

bool ConversationTransfer::exists(const QUrl& file) { return QFileInfo::exists(file.toLocalFile()); }

void ConversationTransfer::copyText(const QString& text) { QGuiApplication::clipboard()->setText(text); }
