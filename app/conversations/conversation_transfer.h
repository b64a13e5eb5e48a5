// The window's export and import: one conversation to Markdown or JSON, all of them to one JSON
// file, and a JSON export read back as new conversations with new ids (nothing already there is
// replaced); and a message's text to the clipboard.
// Rows are ConversationListModel rows. Every outcome is said: done() or failed() with the file.
#pragma once

#include <QObject>
#include <QUrl>
#include <QtQml/qqmlregistration.h>

#include "conversations/conversation_export.h"

class ConversationList;

class ConversationTransfer : public QObject {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("owned by AppContext")
public:
    explicit ConversationTransfer(ConversationList* list, QObject* parent = nullptr);

    Q_INVOKABLE bool exportMarkdown(int row, const QUrl& file);
    Q_INVOKABLE bool exportJson(int row, const QUrl& file);
    Q_INVOKABLE bool exportAll(const QUrl& file);
    // Returns how many conversations were added; 0 when the file was refused (failed() says why).
    Q_INVOKABLE int importFile(const QUrl& file);
    // A file name for a save dialog: the conversation's title without characters file systems refuse.
    Q_INVOKABLE QString suggestedName(int row, const QString& extension) const;
    // Where the export and import dialogs open: the documents folder, or the home folder where there
    // is none (a fresh account has no ~/Documents until something makes it).
    Q_INVOKABLE static QUrl startFolder();
    Q_INVOKABLE void copyText(const QString& text);

signals:
    void done(const QString& message);
    void failed(const QString& message);

private:
    ConversationExport exportOf(const ConversationRecord& c) const;
    bool write(const QUrl& file, const QByteArray& bytes, const QString& what);

    ConversationList* list_;
};
